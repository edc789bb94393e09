/**
 * The notification bot and what it says. Reference: actions/message_edit.py
 * (maybe_send_resolve_topic_notifications, maybe_delete_previous_resolve_topic_notification,
 * send_message_moved_breadcrumbs), lib/mention.py (silent_mention_syntax_for_user),
 * lib/url_encoding.py (encode_hash_component, stream_message_url),
 * actions/scheduled_messages.py (send_failed_scheduled_message_notification).
 *
 * Notices are messages like any other: their markdown is rendered before the realm actor runs the
 * change that sends them. A move notice's wording depends on what only the move itself settles
 * (how many messages moved, whether the whole topic did, whether the target topic had messages),
 * so the endpoint renders every wording the move may pick (`noticeKindsFor`) and the move picks
 * one. The number of a "N messages were moved" notice is plain text at its very start: it is
 * rendered with a placeholder and the move writes the real number in (`withCount`).
 */
import { StaleNoticesError } from './errors.js';
import type { PreparedContent } from './message-content.js';
import { htmlToText } from './search.js';

/** The sender of notices (the reference's NOTIFICATION_BOT); every realm has one from creation. */
export const NOTIFICATION_BOT_EMAIL = 'notification-bot@zulip.com';
export const NOTIFICATION_BOT_NAME = 'Notification Bot';

/**
 * Seconds within which resolving or unresolving a topic again deletes the previous notice instead
 * of sending another (the reference's RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS).
 */
export const RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS = 60;

/** Message types (the reference's Message.MessageType). */
export const MessageType = { NORMAL: 1, RESOLVE_TOPIC_NOTIFICATION: 2 } as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

export const MOVE_NOTICE_KINDS = [
  'resolved',
  'unresolved',
  'moved_here_all',
  'moved_here_one',
  'moved_here_many',
  'moved_away_all',
  'moved_away_one',
  'moved_away_many',
] as const;
export type MoveNoticeKind = (typeof MOVE_NOTICE_KINDS)[number];

type Location = { stream_id: number; stream_name: string; topic: string };

/** Everything a move notice names: who moved which message from where to where. */
export type MoveFacts = {
  user: { id: number; full_name: string };
  message_id: number;
  orig: Location;
  target: Location;
};

/** The shape of an edit, as far as notices go. */
export type EditShape = {
  topicEdited: boolean;
  streamEdited: boolean;
  contentEdited: boolean;
  resolved: boolean;
  unresolved: boolean;
  /** send_notification_to_new_thread / send_notification_to_old_thread */
  toNewThread: boolean;
  toOldThread: boolean;
};

/** The notices of a move, rendered before the realm actor runs it, for the facts they name. */
export type PreparedNotices = {
  facts_key: string;
  notices: Partial<Record<MoveNoticeKind, PreparedContent>>;
};

/** The count "N messages were moved" notices are rendered with (see withCount). */
const COUNT_PLACEHOLDER = 2;

/** The resolve notice an edit sends, if any: a pure rename that (un)resolves the topic. */
export function resolveNoticeKind(e: EditShape): 'resolved' | 'unresolved' | null {
  if (!e.topicEdited || e.contentEdited || e.streamEdited) return null;
  return e.resolved ? 'resolved' : e.unresolved ? 'unresolved' : null;
}

/** Whether a move tells the new location (a channel change, or a rename that is no resolve). */
export function tellsNewThread(e: EditShape): boolean {
  return e.toNewThread && (e.streamEdited || (e.topicEdited && !e.resolved && !e.unresolved));
}

/** Every notice kind an edit of this shape may send. */
export function noticeKindsFor(e: EditShape): MoveNoticeKind[] {
  const kinds: MoveNoticeKind[] = [];
  const resolve = resolveNoticeKind(e);
  if (resolve) kinds.push(resolve);
  if (!e.topicEdited && !e.streamEdited) return kinds;
  if (tellsNewThread(e)) kinds.push('moved_here_all', 'moved_here_one', 'moved_here_many');
  if (e.toOldThread) kinds.push('moved_away_all', 'moved_away_one', 'moved_away_many');
  return kinds;
}

/** The hash-URL encoding of the reference (url_encoding.encode_hash_component). */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, '%2E')
    .replace(/%/g, '.');
}

function topicLinkSyntax(l: Location): string {
  return `#**${l.stream_name}>${l.topic}**`;
}

function silentMention(user: { id: number; full_name: string }): string {
  return `@_**${user.full_name}|${user.id}**`;
}

/** The link to one message in its (new) topic (stream_message_url). */
function messageLink(realmUrl: string, f: MoveFacts): string {
  const channel = encodeHashComponent(
    `${f.target.stream_id}-${f.target.stream_name.replace(/ /g, '-')}`,
  );
  const topic = encodeHashComponent(f.target.topic);
  return `${realmUrl}/#narrow/channel/${channel}/topic/${topic}/near/${f.message_id}`;
}

/** A notice's markdown, worded as the reference's. */
export function moveNoticeText(realmUrl: string, kind: MoveNoticeKind, f: MoveFacts): string {
  const count = COUNT_PLACEHOLDER;
  const user = silentMention(f.user);
  const from = topicLinkSyntax(f.orig);
  const to = topicLinkSyntax(f.target);
  switch (kind) {
    case 'resolved':
      return `${user} has marked this topic as resolved.`;
    case 'unresolved':
      return `${user} has marked this topic as unresolved.`;
    case 'moved_here_all':
      return `This topic was moved here from ${from} by ${user}.`;
    case 'moved_here_one':
      return `[A message](${messageLink(realmUrl, f)}) was moved here from ${from} by ${user}.`;
    case 'moved_here_many':
      return `${count} messages were moved here from ${from} by ${user}.`;
    case 'moved_away_all':
      return `This topic was moved to ${to} by ${user}.`;
    case 'moved_away_one':
      return `A message was moved from this topic to ${to} by ${user}.`;
    case 'moved_away_many':
      return `${count} messages were moved from this topic to ${to} by ${user}.`;
  }
}

/** What prepared notices must still agree with when the move runs. */
export function moveFactsKey(f: MoveFacts): string {
  return JSON.stringify([f.user, f.message_id, f.orig, f.target]);
}

/**
 * The prepared notice of `kind`, checked against the facts the move runs with. Refuses
 * (StaleNoticesError) when the endpoint prepared other facts or not this kind: something moved or
 * was renamed in between; the endpoint prepares again.
 */
export function preparedNotice(
  prepared: PreparedNotices | undefined,
  kind: MoveNoticeKind,
  facts: MoveFacts,
  count: number,
): PreparedContent {
  const notice = prepared?.notices[kind];
  if (!prepared || !notice || prepared.facts_key !== moveFactsKey(facts)) {
    throw new StaleNoticesError();
  }
  return kind.endsWith('_many') ? withCount(notice, count) : notice;
}

/** A "N messages" notice rendered with the placeholder, with the real count written in. */
export function withCount(p: PreparedContent, count: number): PreparedContent {
  const n = String(count);
  const swap = (s: string, prefix: string): string => {
    const from = `${prefix}${COUNT_PLACEHOLDER} `;
    if (!s.startsWith(from)) throw new Error(`not a counted notice: ${s.slice(0, 40)}`);
    return `${prefix}${n} ${s.slice(from.length)}`;
  };
  const rendered = swap(p.rendered.rendered_content, '<p>');
  return {
    content: swap(p.content, ''),
    rendered: { ...p.rendered, rendered_content: rendered },
    search_text: htmlToText(rendered),
  };
}

/**
 * The direct message telling a user their scheduled message was not sent
 * (send_failed_scheduled_message_notification).
 */
export function scheduledFailureText(scheduledTimestamp: number, failureMessage: string): string {
  const when = new Date(scheduledTimestamp * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
  return (
    `The message you scheduled for <time:${when}> was not sent because of the following ` +
    `error:\n\n> ${failureMessage}\n\n[View scheduled messages](#scheduled)`
  );
}
