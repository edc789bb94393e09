/**
 * Grafana alerts (/api/v1/external/grafana): Grafana 8+'s unified alerting (one message per
 * alert, the topic its alert name) and the legacy alerts of Grafana 7. Reference:
 * zerver/webhooks/grafana/view.py.
 */
import { z } from 'zod';
import { globalTime, parsePayload, type Integration, type WebhookMessage } from './common.js';

const NAME = 'Grafana';
const strings = z.record(z.string(), z.string());

const unified = z.object({
  alerts: z.array(
    z.object({
      status: z.enum(['firing', 'resolved']),
      labels: strings,
      annotations: strings.optional(),
      startsAt: z.string(),
      endsAt: z.string(),
      fingerprint: z.string().optional(),
      generatorURL: z.string().optional(),
      silenceURL: z.string().optional(),
      imageURL: z.string().optional(),
      values: z.record(z.string(), z.unknown()).nullable().optional(),
      valueString: z.string().optional(),
    }),
  ),
});

const legacy = z.object({
  title: z.string(),
  ruleName: z.string(),
  ruleUrl: z.string(),
  state: z.enum(['no_data', 'paused', 'alerting', 'ok', 'pending', 'unknown']),
  message: z.string().optional(),
  imageUrl: z.string().optional(),
  evalMatches: z
    .array(z.object({ metric: z.string(), value: z.number().nullable() }))
    .nullable()
    .optional(),
});

const status = (icon: string, state: string) => `${icon} **${state.toUpperCase()}**\n\n`;

function unifiedAlerts(payload: unknown): WebhookMessage[] {
  const p = parsePayload(NAME, unified, payload);
  return p.alerts.map((a) => {
    let body = status(a.status === 'firing' ? ':alert:' : ':checkbox:', a.status);
    const name = a.labels.alertname;
    let topic: string;
    if (name) {
      topic = `[${name}]`;
      body += `**${name}**\n\n`;
    } else {
      topic = `[${a.fingerprint ?? 'alert'}]`;
    }
    body += `This alert was fired at ${globalTime(a.startsAt)}.`;
    if (a.endsAt !== '0001-01-01T00:00:00Z')
      body += `\n\nThis alert was resolved at ${globalTime(a.endsAt)}.`;
    const labels = Object.entries(a.labels);
    if (labels.length > 0)
      body += `\n\nLabels:\n${labels.map(([k, v]) => `- ${k}: ${v}\n`).join('')}\n`;
    if (a.values && Object.keys(a.values).length > 0) {
      body += `Values:\n${Object.entries(a.values)
        .map(([k, v]) => `- ${k}: ${String(v)}\n`)
        .join('')}\n`;
    } else if (a.valueString) {
      body += `Values:\n${a.valueString}\n\n`;
    }
    const annotations = Object.entries(a.annotations ?? {});
    if (annotations.length > 0)
      body += `Annotations:\n${annotations.map(([k, v]) => `- ${k}: ${v}\n`).join('')}`;
    if (a.generatorURL) body += `\n[Generator](${a.generatorURL})`;
    if (a.silenceURL) body += `\n[Silence](${a.silenceURL})`;
    if (a.imageURL) body += `\n[Image](${a.imageURL})`;
    return { topic, content: `${body}\n` };
  });
}

function legacyAlert(payload: unknown): WebhookMessage[] {
  const p = parsePayload(NAME, legacy, payload);
  let matches = '';
  for (const m of p.evalMatches ?? []) matches += `**${m.metric}:** ${String(m.value)}\n`;
  const icon = p.state === 'alerting' ? ':alert:' : p.state === 'ok' ? ':squared_ok:' : ':info:';
  const message = p.message === undefined ? '' : `${p.message}\n\n`;
  let body = `${status(icon, p.state)}[${p.ruleName}](${p.ruleUrl})\n\n${message}${matches}`;
  if (p.imageUrl) body += `\n[Click to view visualization](${p.imageUrl})`;
  return [{ topic: p.title, content: body.trim() }];
}

export const grafana: Integration = {
  name: 'grafana',
  displayName: NAME,
  handle({ payload }) {
    if (payload !== null && typeof payload === 'object' && 'alerts' in payload)
      return unifiedAlerts(payload);
    return legacyAlert(payload);
  },
};
