/** The incoming webhook integrations, by the name in their URL (docs/integrations.md). */
import { alertmanager } from './alertmanager.js';
import type { Integration } from './common.js';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { grafana } from './grafana.js';
import { json } from './json.js';
import { sentry } from './sentry.js';
import { slackIncoming } from './slack.js';

export const INTEGRATIONS: ReadonlyMap<string, Integration> = new Map(
  [json, slackIncoming, github, gitlab, grafana, alertmanager, sentry].map((i) => [i.name, i]),
);
