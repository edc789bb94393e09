/**
 * The missed-message mail (docs/mail.md "Missed messages"): one mail per conversation — a direct
 * conversation, or a channel's topic — with the messages the user missed, as the server rendered
 * them, each under its sender, and a link to the conversation in the web app. Pure: the mailer
 * (src/mail/missed-messages.ts) gathers the messages and names.
 *
 * What it says follows the reference's missed_message e-mail (subject per conversation, the
 * reason, content hidden when the user or the realm says so, the realm named in the subject when
 * the policy asks); the wording is Confab's. The rendered HTML is made fit for a mail client the
 * way the reference does it (lib/email_notifications.py): links made absolute, inline image
 * previews dropped (a mail client cannot load them without the user's session), spoilers closed,
 * TeX shown as its source; emoji are shown as the characters themselves.
 */
import type { ChildNode, Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import { escapeHtml } from './html.js';
import { htmlDocument, type ComposedMail } from './mail.js';
import { encodeChannel, hashUtilEncode } from './markdown/urls.js';
import { EmailTrigger, MENTION_TRIGGERS } from './missed-messages.js';

/** Messages one mail shows at most (the newest; the mail says how many more there are). */
export const MAX_MESSAGES_PER_MAIL = 50;
/** Messages before a mention shown for context: at most this many, this recent before it. */
export const CONTEXT_MESSAGES = 10;
export const CONTEXT_SECONDS = 15 * 60;

/** What a resolved topic's name starts with. */
const RESOLVED_PREFIX = '✔ ';

export type MailedMessage = {
  id: number;
  sender_id: number;
  sender_name: string;
  content: string;
  rendered_content: string;
  /** Why it is mailed; null for a message shown only for context. */
  trigger: string | null;
};

export type MailedConversation =
  | {
      kind: 'direct';
      /** The other members (one for a one-to-one conversation), by id and name. */
      others: { id: number; name: string }[];
    }
  | { kind: 'channel'; channel_id: number; channel_name: string; topic: string };

export type MissedMessageMailInput = {
  realm: { name: string; url: string };
  conversation: MailedConversation;
  /** Oldest first; context messages included. */
  messages: MailedMessage[];
  /** Whether the subject names the realm (realm_name_in_email_notifications_policy). */
  realmInSubject: boolean;
  /** null: content shown; else who hid it (the user's setting, or the realm's). */
  contentHiddenBy: 'user' | 'realm' | null;
  /** The name of the group a mention reached the user through, if that was the only mention. */
  mentionedGroupName: string | null;
};

/** `A and B`, `A, B, and C`, `A, B, and 3 others` (the reference's group names). */
function groupName(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  if (names.length === 2) return `${names[0]} and ${names[1]}`;
  if (names.length === 3) return `${names[0]}, ${names[1]}, and ${names[2]}`;
  return `${names[0]}, ${names[1]}, and ${names.length - 2} others`;
}

function slug(name: string): string {
  return hashUtilEncode(name.replace(/ /g, '-'));
}

/** The conversation's address in the web app (at the first missed message). */
export function conversationUrl(
  realmUrl: string,
  c: MailedConversation,
  nearId: number | null,
): string {
  let hash: string;
  if (c.kind === 'direct') {
    const ids = c.others.map((o) => o.id).join(',');
    const tail = c.others.length === 1 ? slug(c.others[0]!.name) : 'group';
    hash = `#narrow/dm/${ids}-${tail}`;
  } else {
    hash = `#narrow/channel/${encodeChannel(c.channel_id, c.channel_name)}/topic/${hashUtilEncode(c.topic)}`;
  }
  return `${realmUrl}/${hash}${nearId === null ? '' : `/near/${nearId}`}`;
}

function channelUrl(realmUrl: string, id: number, name: string): string {
  return `${realmUrl}/#narrow/channel/${encodeChannel(id, name)}`;
}

function topicLabel(topic: string): string {
  return topic === '' ? 'general chat' : topic;
}

/** Why this mail was sent, in one sentence (null for direct messages, which need none). */
function reason(input: MissedMessageMailInput, triggers: ReadonlySet<string>): string | null {
  const c = input.conversation;
  if (c.kind === 'direct') return null;
  const channel = `#${c.channel_name}`;
  if (triggers.has(EmailTrigger.MENTION)) {
    return input.mentionedGroupName !== null
      ? `You are receiving this because @${input.mentionedGroupName} was mentioned.`
      : 'You are receiving this because you were personally mentioned.';
  }
  if (
    triggers.has(EmailTrigger.TOPIC_WILDCARD_MENTION) ||
    triggers.has(EmailTrigger.TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC)
  )
    return 'You are receiving this because all topic participants were mentioned (@topic).';
  if (
    triggers.has(EmailTrigger.STREAM_WILDCARD_MENTION) ||
    triggers.has(EmailTrigger.STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC)
  )
    return `You are receiving this because everyone was mentioned in ${channel}.`;
  if (triggers.has(EmailTrigger.FOLLOWED_TOPIC_EMAIL))
    return 'You are receiving this because you have email notifications enabled for topics you follow.';
  return `You are receiving this because you have email notifications enabled for ${channel}.`;
}

/** The mail for one conversation's missed messages. */
export function missedMessageMail(input: MissedMessageMailInput): ComposedMail {
  const { realm, conversation: c } = input;
  const missed = input.messages.filter((m) => m.trigger !== null);
  const triggers = new Set(missed.map((m) => m.trigger!));
  const mention = [...triggers].some((t) => MENTION_TRIGGERS.has(t));
  // The senders named in the subject: in a channel, those who mentioned the user, if any did.
  const named =
    c.kind === 'channel' && mention
      ? missed.filter((m) => m.trigger !== null && MENTION_TRIGGERS.has(m.trigger))
      : missed;
  const senders = [...new Set(named.map((m) => m.sender_name))];

  let subject: string;
  if (input.contentHiddenBy !== null) subject = 'New messages';
  else if (c.kind === 'direct' && c.others.length > 1)
    subject = `Group DMs with ${groupName(c.others.map((o) => o.name))}`;
  else if (c.kind === 'direct') subject = `DMs with ${senders.join(', ')}`;
  else if (c.topic.startsWith(RESOLVED_PREFIX))
    subject = `[resolved] #${c.channel_name} > ${c.topic.slice(RESOLVED_PREFIX.length)}`;
  else subject = `#${c.channel_name} > ${topicLabel(c.topic)}`;
  if (input.realmInSubject) subject += ` [${realm.name}]`;

  const link = conversationUrl(realm.url, c, missed[0]?.id ?? null);
  const text: string[] = [];
  const html: string[] = [];

  // The conversation's header.
  if (c.kind === 'direct') {
    const header = `You and ${c.others.map((o) => o.name).join(', ')}`;
    text.push(header);
    html.push(`<p><a href="${escapeHtml(link)}"><b>${escapeHtml(header)}</b></a></p>`);
  } else {
    text.push(`#${c.channel_name} > ${topicLabel(c.topic)}`);
    html.push(
      `<p><b><a href="${escapeHtml(channelUrl(realm.url, c.channel_id, c.channel_name))}">#${escapeHtml(c.channel_name)}</a>` +
        ` &gt; <a href="${escapeHtml(link)}">${escapeHtml(topicLabel(c.topic))}</a></b></p>`,
    );
  }

  if (input.contentHiddenBy === null) {
    let shown = input.messages;
    if (shown.length > MAX_MESSAGES_PER_MAIL) {
      const more = shown.length - MAX_MESSAGES_PER_MAIL;
      shown = shown.slice(-MAX_MESSAGES_PER_MAIL);
      text.push(`(${more} earlier ${more === 1 ? 'message' : 'messages'} not shown)`);
      html.push(
        `<p style="color:#666">(${more} earlier ${more === 1 ? 'message' : 'messages'} not shown)</p>`,
      );
    }
    // Messages under their sender, a sender's consecutive messages together (one-to-one
    // conversations name nobody: the header does).
    const nameSenders = !(c.kind === 'direct' && c.others.length === 1);
    let previous: number | null = null;
    for (const m of shown) {
      const newSender = m.sender_id !== previous;
      previous = m.sender_id;
      const plain = plainContent(m.content, realm.url);
      text.push(nameSenders && newSender ? `${m.sender_name}:\n${plain}` : plain);
      const body = mailHtml(m.rendered_content, realm.url);
      html.push(
        (nameSenders && newSender
          ? `<p style="margin-bottom:0"><b>${escapeHtml(m.sender_name)}</b>:</p>`
          : '') +
          `<div style="margin:0 0 .6em 0;padding-left:.6em;border-left:3px solid #ddd">${body}</div>`,
      );
    }
  } else {
    const why =
      input.contentHiddenBy === 'realm'
        ? 'This email does not include message content because your organization hides message content in email notifications.'
        : 'This email does not include message content because you have turned off message content in email notifications.';
    const count = missed.length;
    const what = `You have ${count} new ${count === 1 ? 'message' : 'messages'} in ${realm.name}.`;
    text.push(what, why);
    html.push(`<p>${escapeHtml(what)}</p>`, `<p>${escapeHtml(why)}</p>`);
  }

  text.push(`Reply in the app:\n${link}`);
  html.push(
    `<p><a href="${escapeHtml(link)}" style="font-weight:bold">Reply in the app</a><br>` +
      `<span style="color:#666;font-size:90%">${escapeHtml(link)}</span></p>`,
  );
  const why = reason(input, triggers);
  const settings = `${realm.url}/#settings/notifications`;
  const foot = [
    ...(why === null ? [] : [why]),
    `Do not reply to this mail. Choose which mail you get in your notification settings: ${settings}`,
  ];
  text.push(...foot);
  if (why !== null) html.push(`<p style="color:#666;font-size:90%">${escapeHtml(why)}</p>`);
  html.push(
    `<p style="color:#666;font-size:90%">Do not reply to this mail. Choose which mail you get in your ` +
      `<a href="${escapeHtml(settings)}">notification settings</a>.</p>`,
  );
  const realmFoot = `${realm.name} — ${realm.url}`;
  return {
    subject,
    text: `${text.join('\n\n')}\n\n-- \n${realmFoot}\n`,
    html: htmlDocument(subject, html.join('\n'), realmFoot),
  };
}

// ---- the message content in a mail ---------------------------------------------------------

/** A fenced block's opening or closing line (```, ~~~, with an optional language). */
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*(\S*)/;

/**
 * The plain-text body of a message: its markdown, `[name](url)` links as their URL, uploads with
 * the realm's address, spoilers' hidden part left out, every line quoted (`> `).
 */
export function plainContent(content: string, realmUrl: string): string {
  const out: string[] = [];
  let openSpoiler: string | null = null;
  for (const line of content.split('\n')) {
    const m = FENCE.exec(line);
    if (m) {
      if (openSpoiler === null && m[2] === 'spoiler') {
        openSpoiler = m[1]!;
        out.push(line, '(Open the app to see the spoiler content)');
        continue;
      }
      if (openSpoiler !== null && m[1] === openSpoiler && m[2] === '') {
        openSpoiler = null;
        out.push(line);
        continue;
      }
    }
    if (openSpoiler === null) out.push(line);
  }
  return out
    .join('\n')
    .replace(/\[([^\]\s]*)\]\((\S*)\)/g, '$2')
    .replace(/(^|[\s(])\/user_uploads\//g, `$1${realmUrl}/user_uploads/`)
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');
}

function classes(el: Element): string[] {
  return (el.attribs.class ?? '').split(/\s+/).filter((c) => c !== '');
}

function hasClass(el: Element, name: string): boolean {
  return classes(el).includes(name);
}

/** Nodes parsed from a snippet of HTML (to put into a tree). */
function nodes(html: string): ChildNode[] {
  return parseDocument(html).children;
}

function replaceWith(el: Element, html: string): void {
  const replacement = nodes(html);
  if (replacement.length === 0) {
    DomUtils.removeElement(el);
    return;
  }
  for (const n of replacement) DomUtils.prepend(el, n);
  DomUtils.removeElement(el);
}

/** A link as a mail client needs it: relative ones made absolute (narrow links included). */
function absolute(url: string, realmUrl: string): string {
  if (/^\/?#narrow\//.test(url)) return `${realmUrl}/${url.replace(/^\//, '')}`;
  if (url.startsWith('/') && !url.startsWith('//')) return `${realmUrl}${url}`;
  return url;
}

/** An emoji's character from its code (`1f604`, `1f468-200d-1f469`); null if not one. */
function emojiChar(code: string): string | null {
  const points = code.split('-').map((p) => Number.parseInt(p, 16));
  if (points.some((p) => !Number.isInteger(p) || p < 0 || p > 0x10ffff)) return null;
  return String.fromCodePoint(...points);
}

/**
 * The server's rendered HTML of a message, made fit for a mail (see the module comment). The
 * input is the server's sanitized rendering; what comes out is serialized by the parser, so text
 * stays escaped.
 */
export function mailHtml(rendered: string, realmUrl: string): string {
  const doc = parseDocument(rendered);
  const top = doc.children.filter((n) => DomUtils.isTag(n) || DomUtils.textContent(n).trim());
  // A message that is only an image preview becomes a link to the image.
  const only = top.length === 1 ? top[0]! : null;
  if (only !== null && DomUtils.isTag(only) && hasClass(only, 'message_inline_image')) {
    const a = DomUtils.findOne((e) => e.name === 'a', only.children);
    const href = a?.attribs.href;
    if (href) {
      const url = escapeHtml(absolute(href, realmUrl));
      return `<p><a href="${url}" target="_blank">${url}</a></p>`;
    }
  }
  for (const el of DomUtils.findAll((e) => hasClass(e, 'message_inline_image'), doc.children))
    DomUtils.removeElement(el);
  for (const el of DomUtils.findAll((e) => hasClass(e, 'spoiler-block'), doc.children)) {
    const header = DomUtils.findOne((e) => hasClass(e, 'spoiler-header'), el.children);
    const inner = header ? DomUtils.getInnerHTML(header, { encodeEntities: 'utf8' }) : '';
    replaceWith(el, `<div>${inner}<p><i>(Open the app to see the spoiler content)</i></p></div>`);
  }
  for (const el of DomUtils.findAll((e) => hasClass(e, 'katex'), doc.children)) {
    const tex = DomUtils.findOne(
      (e) => e.name === 'annotation' && e.attribs.encoding === 'application/x-tex',
      el.children,
    );
    replaceWith(el, `<code>${escapeHtml(`$$${tex ? DomUtils.textContent(tex) : ''}$$`)}</code>`);
  }
  for (const el of DomUtils.findAll(
    (e) => e.name === 'span' && hasClass(e, 'emoji'),
    doc.children,
  )) {
    const code = classes(el)
      .find((c) => c.startsWith('emoji-'))
      ?.slice('emoji-'.length);
    const char = code === undefined ? null : emojiChar(code);
    replaceWith(el, escapeHtml(char ?? DomUtils.textContent(el)));
  }
  for (const el of DomUtils.findAll(() => true, doc.children)) {
    if (el.name === 'img' && hasClass(el, 'emoji')) {
      el.attribs.style = 'height: 20px;';
      delete el.attribs.class;
    }
    for (const attr of ['href', 'src'] as const) {
      const v = el.attribs[attr];
      if (v !== undefined) el.attribs[attr] = absolute(v, realmUrl);
    }
  }
  return DomUtils.getOuterHTML(doc.children, { encodeEntities: 'utf8' });
}
