/**
 * The generic JSON webhook (/api/v1/external/json): any JSON payload, posted as a JSON code
 * block under the topic "JSON" (unless the URL names one). Reference:
 * zerver/webhooks/json/view.py.
 */
import type { Integration } from './common.js';

export const json: Integration = {
  name: 'json',
  displayName: 'JSON',
  handle({ payload }) {
    return [{ topic: 'JSON', content: `\`\`\`json\n${JSON.stringify(payload, null, 2)}\n\`\`\`` }];
  },
};
