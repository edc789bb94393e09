/**
 * Prometheus Alertmanager (/api/v1/external/alertmanager): alerts grouped by the label (or
 * annotation) `name` names (default `instance`), one message per group and status, each alert
 * described by `desc` (default `alertname`) with a link to its graph. Reference:
 * zerver/webhooks/alertmanager/view.py.
 */
import { z } from 'zod';
import { parsePayload, type Integration, type WebhookMessage } from './common.js';

const NAME = 'Alertmanager';
const strings = z.record(z.string(), z.string());
const schema = z.object({
  alerts: z.array(
    z.object({
      status: z.enum(['firing', 'resolved']),
      labels: strings.optional(),
      annotations: strings.optional(),
      generatorURL: z.string(),
    }),
  ),
});

export const alertmanager: Integration = {
  name: 'alertmanager',
  displayName: NAME,
  handle({ payload, query }) {
    const p = parsePayload(NAME, schema, payload);
    const nameField = query.name ?? 'instance';
    const descField = query.desc ?? 'alertname';
    const topics = new Map<string, { firing: string[]; resolved: string[] }>();
    for (const a of p.alerts) {
      const labels = a.labels ?? {};
      const annotations = a.annotations ?? {};
      const name = labels[nameField] ?? annotations[nameField] ?? '(unknown)';
      const desc = labels[descField] ?? annotations[descField] ?? `<missing field: ${descField}>`;
      const url = a.generatorURL.replace('tab=1', 'tab=0');
      let t = topics.get(name);
      if (!t) topics.set(name, (t = { firing: [], resolved: [] }));
      t[a.status].push(`${desc} ([graph](${url}))`);
    }
    const out: WebhookMessage[] = [];
    for (const [topic, statuses] of topics) {
      for (const status of ['firing', 'resolved'] as const) {
        const messages = statuses[status];
        if (messages.length === 0) continue;
        const [icon, title] =
          status === 'firing' ? [':alert:', 'FIRING'] : [':squared_ok:', 'Resolved'];
        const content =
          messages.length === 1
            ? `${icon} **${title}** ${messages[0]!}`
            : `${icon} **${title}**\n${messages.map((m) => `* ${m}`).join('\n')}`;
        out.push({ topic, content });
      }
    }
    return out;
  },
};
