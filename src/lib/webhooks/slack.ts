/**
 * Slack-compatible incoming webhooks (/api/v1/external/slack_incoming): what tools made for
 * Slack's incoming webhooks send — `text`, `blocks` (section, header, context, divider, image),
 * `attachments` (pretext, title, text, fields, image, footer) — with Slack's mrkdwn turned into
 * Zulip markdown (`*bold*`, `_italic_`, `~strike~`, `<url|label>`, `<!here>`). The body is JSON,
 * or a form with the JSON in `payload`. Reference: zerver/webhooks/slack_incoming/view.py.
 */
import { z } from 'zod';
import { parsePayload, type Integration } from './common.js';

const NAME = 'SlackIncoming';
const textObject = z.object({ type: z.string().optional(), text: z.string() });

const block = z
  .object({
    type: z.string(),
    text: textObject.optional(),
    fields: z.array(textObject).optional(),
    elements: z.array(z.object({ type: z.string(), text: z.string().optional() })).optional(),
    image_url: z.string().optional(),
    alt_text: z.string().optional(),
  })
  .loose();

const attachment = z
  .object({
    pretext: z.string().optional(),
    title: z.string().optional(),
    title_link: z.string().optional(),
    author_name: z.string().optional(),
    text: z.string().optional(),
    fields: z
      .array(z.object({ title: z.string().optional(), value: z.string().optional() }))
      .optional(),
    image_url: z.string().optional(),
    footer: z.string().optional(),
    fallback: z.string().optional(),
  })
  .loose();

const schema = z
  .object({
    text: z.string().optional(),
    blocks: z.array(block).optional(),
    attachments: z.array(attachment).optional(),
  })
  .loose();

/** Slack mrkdwn → Zulip markdown. */
export function slackToMarkdown(text: string): string {
  return (
    text
      // <!here>, <!channel>, <!everyone> → wildcard mentions
      .replace(/<!(here|channel|everyone)(\|[^>]*)?>/g, (_m, w: string) =>
        w === 'here' ? '@**all**' : `@**${w === 'channel' ? 'channel' : 'everyone'}**`,
      )
      // <url|label> and <url>
      .replace(/<((?:https?|mailto):[^|>\s]+)\|([^>]+)>/g, '[$2]($1)')
      .replace(/<((?:https?|mailto):[^|>\s]+)>/g, '$1')
      // *bold* → **bold**, _italic_ → *italic*, ~strike~ → ~~strike~~
      .replace(/(^|[\s(])\*(\S(?:[^*\n]*\S)?)\*(?=$|[\s).,!?:;])/gm, '$1**$2**')
      .replace(/(^|[\s(])_(\S(?:[^_\n]*\S)?)_(?=$|[\s).,!?:;])/gm, '$1*$2*')
      .replace(/(^|[\s(])~(\S(?:[^~\n]*\S)?)~(?=$|[\s).,!?:;])/gm, '$1~~$2~~')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  );
}

function renderBlock(b: z.output<typeof block>): string {
  switch (b.type) {
    case 'section': {
      const parts: string[] = [];
      if (b.text) parts.push(slackToMarkdown(b.text.text));
      if (b.fields) parts.push(b.fields.map((f) => slackToMarkdown(f.text)).join('\n'));
      return parts.join('\n\n');
    }
    case 'header':
      return b.text ? `## ${b.text.text}` : '';
    case 'context':
      return (b.elements ?? [])
        .filter((e) => e.text !== undefined)
        .map((e) => slackToMarkdown(e.text!))
        .join(' ');
    case 'divider':
      return '----';
    case 'image':
      return b.image_url ? `[${b.alt_text ?? 'image'}](${b.image_url})` : '';
    default:
      return b.text ? slackToMarkdown(b.text.text) : '';
  }
}

function renderAttachment(a: z.output<typeof attachment>): string {
  const parts: string[] = [];
  if (a.pretext) parts.push(slackToMarkdown(a.pretext));
  if (a.author_name) parts.push(`**${a.author_name}**`);
  if (a.title) parts.push(a.title_link ? `## [${a.title}](${a.title_link})` : `## ${a.title}`);
  if (a.text) parts.push(slackToMarkdown(a.text));
  for (const f of a.fields ?? [])
    parts.push(`**${f.title ?? ''}**${f.title ? '\n' : ''}${slackToMarkdown(f.value ?? '')}`);
  if (a.image_url) parts.push(`[image](${a.image_url})`);
  if (a.footer) parts.push(`*${a.footer}*`);
  if (parts.length === 0 && a.fallback) parts.push(slackToMarkdown(a.fallback));
  return parts.join('\n');
}

export const slackIncoming: Integration = {
  name: 'slack_incoming',
  displayName: NAME,
  handle({ payload }) {
    const p = parsePayload(NAME, schema, payload);
    const parts: string[] = [];
    if (p.blocks && p.blocks.length > 0) {
      for (const b of p.blocks) {
        const s = renderBlock(b);
        if (s !== '') parts.push(s);
      }
    } else if (p.text) {
      parts.push(slackToMarkdown(p.text));
    }
    for (const a of p.attachments ?? []) {
      const s = renderAttachment(a);
      if (s !== '') parts.push(s);
    }
    const content = parts.join('\n\n').trim();
    // Nothing to post (an empty message): acknowledged, as Slack does.
    if (content === '') return [];
    return [{ topic: '(no topic)', content }];
  },
};
