/**
 * Sentry (/api/v1/external/sentry): its internal integration's webhooks — error and message
 * events (`data.event`) and issue changes (`data.issue`, by `action`) — and the legacy webhook
 * plugin's payload. Reference: zerver/webhooks/sentry/view.py.
 */
import { z } from 'zod';
import {
  parsePayload,
  UnsupportedWebhookEventTypeError,
  type Integration,
  type WebhookMessage,
} from './common.js';

const NAME = 'Sentry';

const LEXERS: Record<string, string> = {
  go: 'go',
  java: 'java',
  javascript: 'javascript',
  node: 'javascript',
  python: 'python3',
};

const frame = z.object({
  filename: z.string().nullable().optional(),
  context_line: z.string().nullable().optional(),
  pre_context: z.array(z.string()).nullable().optional(),
  post_context: z.array(z.string()).nullable().optional(),
});

const event = z.object({
  title: z.string(),
  level: z.string(),
  web_url: z.string(),
  datetime: z.string(),
  platform: z.string().optional(),
  metadata: z.object({ filename: z.string().optional() }).optional(),
  exception: z
    .object({
      values: z.array(
        z.object({
          stacktrace: z
            .object({ frames: z.array(frame) })
            .nullable()
            .optional(),
        }),
      ),
    })
    .optional(),
  logentry: z.unknown().optional(),
});

const issue = z.object({
  title: z.string(),
  level: z.string().optional(),
  lastSeen: z.string(),
  assignedTo: z.object({ type: z.string(), name: z.string() }).nullable().optional(),
});

const when = (iso: string) => iso.split('.')[0]!.replace('T', ' ');

function lines(ls: readonly string[] | null | undefined): string {
  let out = '';
  for (const l of ls ?? []) out += l === '' ? '\n' : `     ${l}\n`;
  return out;
}

function eventMessage(e: z.output<typeof event>): WebhookMessage {
  const head = (kind: string) =>
    `**New ${kind}:** [${e.title}](${e.web_url})\n\`\`\`quote\n**level:** ${e.level}\n**timestamp:** ${when(e.datetime)}\n`;
  if (e.exception) {
    const filename = e.metadata?.filename ?? '';
    const stack = e.exception.values.find((v) => v.stacktrace)?.stacktrace;
    const f = stack?.frames.find((fr) => fr.filename === filename);
    let body = `${head('exception')}**filename:** ${filename}\n\`\`\``;
    if (f) {
      const lexer = LEXERS[e.platform ?? ''] ?? '';
      body +=
        `\n\nTraceback:\n\`\`\`${lexer}\n${lines(f.pre_context)}---> ${f.context_line ?? ''}\n` +
        `${lines(f.post_context)}\`\`\``;
    }
    return { topic: e.title, content: body };
  }
  if (e.logentry !== undefined)
    return { topic: e.title, content: `${head('message event')}\`\`\`` };
  throw new UnsupportedWebhookEventTypeError(NAME, 'unknown-event type');
}

function issueMessage(action: string, i: z.output<typeof issue>, actor: string): WebhookMessage {
  const assignee = i.assignedTo
    ? i.assignedTo.type === 'team'
      ? `team ${i.assignedTo.name}`
      : i.assignedTo.name
    : 'No one';
  let content: string;
  switch (action) {
    case 'created':
      content =
        `**New issue created:** ${i.title}\n\`\`\`quote\n**level:** ${i.level ?? 'error'}\n` +
        `**timestamp:** ${when(i.lastSeen)}\n**assignee:** ${assignee}\n\`\`\``;
      break;
    case 'resolved':
      content = `Issue **${i.title}** was marked as resolved by **${actor}**.`;
      break;
    case 'assigned':
      content = `Issue **${i.title}** has now been assigned to **${assignee}** by **${actor}**.`;
      break;
    case 'ignored':
      content = `Issue **${i.title}** was ignored by **${actor}**.`;
      break;
    default:
      throw new UnsupportedWebhookEventTypeError(NAME, `issue:${action}`);
  }
  return { topic: i.title, content };
}

const modern = z.object({
  action: z.string().optional(),
  actor: z.object({ name: z.string() }).optional(),
  data: z.object({ event: event.optional(), issue: issue.optional() }),
});

const legacyPayload = z.object({
  project_name: z.string(),
  level: z.string(),
  url: z.string(),
  message: z.string(),
});

export const sentry: Integration = {
  name: 'sentry',
  displayName: NAME,
  handle({ payload }) {
    if (payload !== null && typeof payload === 'object' && 'data' in payload) {
      const p = parsePayload(NAME, modern, payload);
      if (p.data.event) return [eventMessage(p.data.event)];
      if (p.data.issue)
        return [issueMessage(p.action ?? '', p.data.issue, p.actor?.name ?? 'Sentry')];
      throw new UnsupportedWebhookEventTypeError(NAME, Object.keys(p.data).join(','));
    }
    const p = parsePayload(NAME, legacyPayload, payload);
    return [
      {
        topic: p.project_name,
        content: `New [issue](${p.url}) (level: ${p.level.toUpperCase()}):\n\n\`\`\` quote\n${p.message}\n\`\`\``,
      },
    ];
  },
};
