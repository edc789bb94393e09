/**
 * Rules about what a message says and where it goes that do not depend on the realm's data:
 * content normalization and truncation, topics, the `to` parameter's forms, the sending client's
 * name, and recipient ids. Messages are the reference's (lib/message.py normalize_body,
 * truncate_topic; actions/message_send.py extract_stream_indicator, extract_private_recipients;
 * lib/addressee.py; lib/request.py get_client_name, models/clients.py default_read_by_sender).
 */
import { canonicalTopic, EMPTY_TOPIC_DISPLAY_NAME, firstUnprintable } from './channel-rules.js';
import { JsonableError } from './errors.js';
import { MAX_MESSAGE_LENGTH, MAX_RENDERED_LENGTH, MAX_TOPIC_LENGTH } from './limits.js';
import type { RenderResult } from './markdown/context.js';
import { htmlToText } from './search.js';
import { codePointLength, sliceCodePoints } from './strings.js';

/** Where a message goes, as POST /messages gives it (resolved against the realm when sending). */
export type MessageDestination =
  | { kind: 'channel'; channel: string | number; topic: string }
  | { kind: 'direct'; emails: string[] }
  | { kind: 'direct'; ids: number[] };

const CONTENT_TRUNCATION = '\n[message truncated]';
const TOPIC_TRUNCATION = '...';

/** Cuts `s` to `max` code points, ending with `marker`, as the reference truncates. */
export function truncateCodePoints(s: string, max: number, marker: string): string {
  if (s.length <= max) return s; // UTF-16 length ≥ code points: nothing to cut
  if (codePointLength(s) <= max) return s;
  return sliceCodePoints(s, max - codePointLength(marker)) + marker;
}

/**
 * Content as stored: trailing whitespace and leading newlines removed; empty content and null
 * bytes refused; content longer than MAX_MESSAGE_LENGTH code points cut with a marker.
 */
export function normalizeContent(raw: string): string {
  const body = raw.replace(/\s+$/u, '').replace(/^\n+/, '');
  if (body.length === 0) throw new JsonableError('Message must not be empty');
  if (body.includes('\0')) throw new JsonableError('Message must not contain null bytes');
  return truncateCodePoints(body, MAX_MESSAGE_LENGTH, CONTENT_TRUNCATION);
}

/**
 * Refuses a rendering longer than MAX_RENDERED_LENGTH code points with the reference's error
 * (its MarkdownRenderingError, answered "Unable to render message"), for sends, edits, scheduled
 * messages and previews alike (workers/pool.ts checks every rendering).
 */
export function checkRenderedLength(html: string): void {
  if (html.length <= MAX_RENDERED_LENGTH) return; // UTF-16 length ≥ code points
  if (codePointLength(html) <= MAX_RENDERED_LENGTH) return;
  throw new JsonableError('Unable to render message');
}

/** Topics clients send for "the empty topic". */
const EMPTY_TOPIC_ALIASES = new Set(['(no topic)']);

/**
 * A channel message's topic as stored: trimmed, the empty topic's display names mapped to '',
 * unprintable characters refused, cut to MAX_TOPIC_LENGTH code points.
 */
export function normalizeTopic(raw: string): string {
  let topic = canonicalTopic(raw);
  if (EMPTY_TOPIC_ALIASES.has(topic)) topic = '';
  const pos = firstUnprintable(topic);
  if (pos !== null) throw new JsonableError(`Invalid character in topic, at position ${pos}!`);
  return truncateCodePoints(topic, MAX_TOPIC_LENGTH, TOPIC_TRUNCATION);
}

/** A narrow's topic operand: the empty topic's display name means ''. */
export function topicOperand(operand: string): string {
  return operand === EMPTY_TOPIC_DISPLAY_NAME ? '' : operand;
}

/**
 * The `to` of a channel message: a channel name or id, plain or JSON-encoded, or a JSON list
 * of exactly one of those.
 */
export function parseChannelTo(raw: string): string | number {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (Array.isArray(data)) {
    if (data.length !== 1) throw new JsonableError('Expected exactly one channel');
    data = data[0];
  }
  if (typeof data === 'string') return data;
  if (isWholeInteger(data, raw)) return data;
  throw new JsonableError('Invalid data type for channel');
}

/**
 * Whether a number decoded from `raw` (JSON holding numbers and no strings) is an integer as the
 * client wrote it: `1.0`, `1e3` and integers past 2^53 are not (JSON.parse would make them look
 * like one), as the reference's JSON decoder would not.
 */
function isWholeInteger(n: unknown, raw: string): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && !/[.eE]/.test(raw);
}

/**
 * The `to` of a direct message: a JSON list of user ids or of e-mail addresses, or
 * comma-separated addresses. Duplicates are dropped; blank addresses ignored.
 */
export function parseDirectTo(raw: string): { ids: number[] } | { emails: string[] } {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    data = raw;
  }
  if (typeof data === 'string') data = data.split(',');
  if (!Array.isArray(data)) throw new JsonableError('Invalid data type for recipients');
  if (data.length === 0) return { emails: [] };
  const mixed = () =>
    new JsonableError('Recipient lists may contain emails or user IDs, but not both.');
  if (typeof data[0] === 'string') {
    const emails = new Set<string>();
    for (const e of data) {
      if (typeof e !== 'string') throw mixed();
      const t = e.trim();
      if (t !== '') emails.add(t);
    }
    return { emails: [...emails] };
  }
  // Only a list of numbers alone can be checked as written; a string in it refuses the list anyway.
  const text = data.every((x) => typeof x === 'number') ? raw : '';
  if (!isWholeInteger(data[0], text)) throw new JsonableError('Invalid data type for recipients');
  const ids = new Set<number>();
  for (const id of data) {
    if (!isWholeInteger(id, text)) throw mixed();
    ids.add(id);
  }
  return { ids: [...ids] };
}

/** Longest client name kept, in code points (the reference's Client.name column). */
const MAX_CLIENT_NAME_LENGTH = 30;
const USER_AGENT_NAME = /^([^/ ]*[^0-9/(]*)(\/([^/ ]*))?([ /].*)?$/s;

/**
 * The sending client's name, as messages show it (`client`): the product name at the start of
 * the User-Agent ("ZulipMobile/27.1 (Android)" → "ZulipMobile"), "Unspecified" without one.
 */
export function clientNameFromUserAgent(userAgent: string): string {
  if (userAgent === '') return 'Unspecified';
  const m = USER_AGENT_NAME.exec(userAgent);
  const name = (m?.[1] ?? userAgent).trim();
  return sliceCodePoints(name === '' ? 'Unspecified' : name, MAX_CLIENT_NAME_LENGTH);
}

const HUMAN_CLIENTS = new Set([
  'zulipandroid',
  'zulipios',
  'zulipdesktop',
  'zulipmobile',
  'zulipelectron',
  'zulipterminal',
  'snipe',
  'website',
  'ios',
  'android',
]);

/**
 * Whether a message sent without `read_by_sender` starts out read for its sender: yes for the
 * interactive apps (a person typed it), no for other API clients (bots), as the reference guesses.
 */
export function defaultReadBySender(clientName: string): boolean {
  const c = clientName.toLowerCase();
  return HUMAN_CLIENTS.has(c) || c.includes('desktop app');
}

/**
 * `recipient_id`: one id per conversation, the same for everyone in it (a channel, or a direct
 * conversation of a set of users). Channels and direct conversations live in different tables,
 * so their ids are interleaved: 2·channel id for a channel, 2·group id + 1 for a direct
 * conversation.
 */
export function recipientIdOf(streamId: number | null, dmGroupId: number | null): number {
  return streamId !== null ? streamId * 2 : dmGroupId! * 2 + 1;
}

/** The conversation key of a direct message: its participants' ids, sorted, comma-separated. */
export function dmGroupKey(userIds: Iterable<number>): string {
  return [...new Set(userIds)].sort((a, b) => a - b).join(',');
}

/** Whether the content is a `/me` status message. */
export function isMeMessage(content: string): boolean {
  return content.startsWith('/me ');
}

/** The parts of a RenderResult a sent message keeps. */
export type RenderedMessage = Pick<
  RenderResult,
  | 'rendered_content'
  | 'mentions_user_ids'
  | 'mentions_user_group_ids'
  | 'mentions_stream_wildcard'
  | 'mentions_topic_wildcard'
  | 'has_link'
  | 'has_image'
  | 'has_attachment'
  | 'potential_attachment_path_ids'
  | 'user_ids_with_alert_words'
>;

/** The parts of a rendering a message keeps (what callers pass to the realm actor). */
export function renderedMessage(r: RenderedMessage): RenderedMessage {
  return {
    rendered_content: r.rendered_content,
    mentions_user_ids: r.mentions_user_ids,
    mentions_user_group_ids: r.mentions_user_group_ids,
    mentions_stream_wildcard: r.mentions_stream_wildcard,
    mentions_topic_wildcard: r.mentions_topic_wildcard,
    has_link: r.has_link,
    has_image: r.has_image,
    has_attachment: r.has_attachment,
    potential_attachment_path_ids: r.potential_attachment_path_ids,
    user_ids_with_alert_words: r.user_ids_with_alert_words,
  };
}

/** A rendering with nothing in it to act on: no mention, link, image, attachment or alert word. */
export function inertRendering(rendered_content: string): RenderedMessage {
  return {
    rendered_content,
    mentions_user_ids: [],
    mentions_user_group_ids: [],
    mentions_stream_wildcard: false,
    mentions_topic_wildcard: false,
    has_link: false,
    has_image: false,
    has_attachment: false,
    potential_attachment_path_ids: [],
    user_ids_with_alert_words: [],
  };
}

/**
 * A message's content ready for the realm actor: the normalized markdown, its rendering (made
 * before the actor runs, never inside it), and the rendering's text for the full-text index.
 */
export type PreparedContent = { content: string; rendered: RenderedMessage; search_text: string };

export function preparedContent(content: string, r: RenderedMessage): PreparedContent {
  return { content, rendered: renderedMessage(r), search_text: htmlToText(r.rendered_content) };
}
