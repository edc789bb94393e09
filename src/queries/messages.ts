/**
 * Messages as the API shows them (GET /messages, GET /messages/{id}, `message` events), who may
 * read a message, and who hears about changes to one. Reference: lib/message_cache.py
 * MessageDict, lib/message.py has_message_access, access_message,
 * event_recipient_ids_for_action_on_messages.
 */
import { EMPTY_TOPIC_DISPLAY_NAME } from '../lib/channel-rules.js';
import { InvalidMessagesError, JsonableError } from '../lib/errors.js';
import { topicLinks, type TopicLink } from '../lib/markdown/index.js';
import { isMeMessage, recipientIdOf } from '../lib/message-content.js';
import { Role } from '../lib/roles.js';
import type { MessageRow, ShownMessageRow } from '../storage/messages.js';
import type { ReactionRow } from '../storage/reactions.js';
import type { SubmessageRow } from '../storage/submessages.js';
import type { JsonWriter } from '../lib/json-bytes.js';
import { withReactionTypes, type Dialect } from '../lib/wire-names.js';
import type { ReadStore } from '../storage/store.js';
import type { Channel } from './channels-view.js';
import { linkifierStamp, linkifiersOf } from './linkifiers.js';
import type { RealmView } from './realm-view.js';
import { cacheSlot } from './realm-caches.js';
import { avatarUrl } from './users.js';

export type ApiReaction = {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
};

/** A submessage as message objects and GET /messages carry it (SubMessage.get_raw_db_rows). */
export type ApiSubmessage = SubmessageRow;

export type DisplayRecipientUser = {
  id: number;
  email: string;
  full_name: string;
  is_mirror_dummy: boolean;
};

export type ApiMessage = {
  id: number;
  sender_id: number;
  content: string;
  recipient_id: number;
  timestamp: number;
  client: string;
  subject: string;
  topic_links: TopicLink[];
  is_me_message: boolean;
  reactions: readonly ApiReaction[];
  submessages: readonly ApiSubmessage[];
  sender_full_name: string;
  sender_email: string;
  sender_realm_str: string;
  display_recipient: string | DisplayRecipientUser[];
  type: 'stream' | 'private';
  stream_id?: number;
  avatar_url: string | null;
  content_type: 'text/html' | 'text/x-markdown';
  edit_history?: Record<string, unknown>[];
  last_edit_timestamp?: number;
  last_moved_timestamp?: number;
  flags?: readonly string[];
  match_content?: string;
  match_subject?: string;
};

export type MessageFormat = {
  /** Rendered HTML (true) or the markdown source (false). */
  applyMarkdown: boolean;
  /** The client computes external-host avatar URLs itself: null for those. */
  clientExtAvatar: boolean;
  /** Show the empty topic as '' (true) or as its display name. */
  allowEmptyTopicName: boolean;
  /** How reaction types are spelled (src/lib/wire-names.ts); `spec` when absent. */
  dialect?: Dialect;
};

/** How `message` events carry a message (see MessageDelivery in src/lib/events.ts). */
export const EVENT_FORMAT: MessageFormat = {
  applyMarkdown: true,
  clientExtAvatar: false,
  allowEmptyTopicName: true,
};

// ---- direct conversations --------------------------------------------------------------------

/** Members of a direct conversation (cached by the store: they never change). */
export function dmGroupMembers(store: ReadStore, groupId: number): readonly number[] {
  return store.messages.dmGroupMembers(groupId);
}

export function displayRecipientUsers(
  view: RealmView,
  memberIds: readonly number[],
): DisplayRecipientUser[] {
  return memberIds.map((id) => {
    const u = view.user(id);
    return {
      id,
      email: u?.email ?? '',
      full_name: u?.full_name ?? '',
      is_mirror_dummy: false,
    };
  });
}

// ---- topic links -----------------------------------------------------------------------------

type TopicLinkCache = { stamp: number; links: Map<string, TopicLink[]> };
const TOPIC_LINKS = cacheSlot<TopicLinkCache>('topic links');

/** `topic_links` of a topic, cached per realm until its linkifiers change. */
export function cachedTopicLinks(store: ReadStore, view: RealmView, topic: string): TopicLink[] {
  if (topic === '') return [];
  const stamp = linkifierStamp(view);
  let cache = view.caches.get(TOPIC_LINKS);
  if (!cache || cache.stamp !== stamp) {
    cache = { stamp, links: new Map() };
    view.caches.set(TOPIC_LINKS, cache);
  }
  let links = cache.links.get(topic);
  if (!links) {
    links = topicLinks(topic, linkifiersOf(store, view));
    if (cache.links.size >= 5000) cache.links.clear();
    cache.links.set(topic, links);
  }
  return links;
}

// ---- formatting ------------------------------------------------------------------------------

function editHistoryOf(json: string): Record<string, unknown>[] {
  const list = JSON.parse(json) as Record<string, unknown>[];
  return list.map((e) => {
    const { prev_rendered_content_version: _v, ...rest } = e;
    return rest;
  });
}

/**
 * One message object. `reactions` and `submessages` are the message's (oldest first); `flags`
 * the viewer's, for GET /messages (events carry flags beside the message, not inside).
 */
export function formatMessage(
  store: ReadStore,
  view: RealmView,
  row: ShownMessageRow,
  format: MessageFormat,
  reactions: ApiReaction[],
  submessages: readonly ApiSubmessage[],
  flags?: readonly string[],
): ApiMessage {
  const sender = view.user(row.sender_id);
  const isChannel = row.stream_id !== null;
  const topic =
    isChannel && row.topic === '' && !format.allowEmptyTopicName
      ? EMPTY_TOPIC_DISPLAY_NAME
      : row.topic;
  const msg: ApiMessage = {
    id: row.id,
    sender_id: row.sender_id,
    content: format.applyMarkdown ? row.rendered_content : row.content,
    recipient_id: recipientIdOf(row.stream_id, row.dm_group_id),
    timestamp: row.date_sent,
    client: row.sending_client,
    subject: topic,
    topic_links: isChannel ? cachedTopicLinks(store, view, row.topic) : [],
    is_me_message: isMeMessage(row.content),
    reactions: format.dialect ? withReactionTypes(reactions, format.dialect) : reactions,
    submessages,
    sender_full_name: sender?.full_name ?? '',
    sender_email: sender?.email ?? '',
    sender_realm_str: view.row.string_id,
    display_recipient: isChannel
      ? (view.channels.byId(row.stream_id!)?.name ?? '')
      : displayRecipientUsers(view, dmGroupMembers(store, row.dm_group_id!)),
    type: isChannel ? 'stream' : 'private',
    avatar_url: sender ? avatarUrl(view, sender, format.clientExtAvatar) : null,
    content_type: format.applyMarkdown ? 'text/html' : 'text/x-markdown',
  };
  if (isChannel) msg.stream_id = row.stream_id!;
  if (
    row.edit_history !== null &&
    view.settings.message_edit_history_visibility_policy !== 'none'
  ) {
    msg.edit_history = editHistoryOf(row.edit_history);
  }
  if (row.last_edit_time !== null) msg.last_edit_timestamp = row.last_edit_time;
  if (row.last_moved_time !== null) msg.last_moved_timestamp = row.last_moved_time;
  if (flags) msg.flags = flags;
  return msg;
}

/** What a message shows of its sender (looked up once per answer). */
export type SenderFields = {
  full_name: string;
  email: string;
  avatar_url: string | null;
};

export function senderFields(
  view: RealmView,
  senderId: number,
  format: MessageFormat,
): SenderFields {
  const sender = view.user(senderId);
  return {
    full_name: sender?.full_name ?? '',
    email: sender?.email ?? '',
    avatar_url: sender ? avatarUrl(view, sender, format.clientExtAvatar) : null,
  };
}

const NO_TOPIC_LINKS: readonly TopicLink[] = Object.freeze([]);

/** How many sender-and-conversation parts WrittenParts remembers in one answer. */
const MAX_WRITTEN_PARTS = 32;

/**
 * What writeMessage wrote of each sender's messages in each conversation, within one answer: its
 * keys from `sender_full_name` to `stream_id` depend on nothing else (the format is the answer's), so
 * a later message of the same sender in the same conversation has those bytes copied.
 */
export class WrittenParts {
  /** sender id, recipient id, start, end; for up to MAX_WRITTEN_PARTS pairs. */
  private readonly entries: number[] = [];

  /** The entry of a sender in a conversation, or -1. */
  find(senderId: number, recipientId: number): number {
    const e = this.entries;
    for (let i = 0; i < e.length; i += 4) {
      if (e[i] === senderId && e[i + 1] === recipientId) return i;
    }
    return -1;
  }

  writeAgain(w: JsonWriter, entry: number): void {
    w.writeAgain(this.entries[entry + 2]!, this.entries[entry + 3]!);
  }

  note(senderId: number, recipientId: number, start: number, end: number): void {
    if (this.entries.length < 4 * MAX_WRITTEN_PARTS)
      this.entries.push(senderId, recipientId, start, end);
  }
}

/**
 * formatMessage's object as JSON, written by `w` straight from the row, with no object made for
 * it: the same keys in the same order and the same values (`sender` is the row's sender's
 * senderFields; `match` the search highlights formatFetched adds; `written` what the answer wrote
 * of messages before it, whose sender-and-conversation part is reused). GET /messages writes its
 * answer this way (src/queries/message-fetch.ts FetchedMessages); test/api/message-bytes.test.ts
 * holds the two to the same bytes. A change to one is a change to the other.
 */
export function writeMessage(
  w: JsonWriter,
  store: ReadStore,
  view: RealmView,
  row: ShownMessageRow,
  format: MessageFormat,
  reactions: readonly ApiReaction[],
  submessages: readonly ApiSubmessage[],
  flags: readonly string[] | undefined,
  sender: SenderFields,
  match: { content: string; subject: string } | null,
  written: WrittenParts,
): void {
  const isChannel = row.stream_id !== null;
  const recipientId = recipientIdOf(row.stream_id, row.dm_group_id);
  w.writeAscii('{"id":');
  w.writeValue(row.id);
  w.writeAscii(',"sender_id":');
  w.writeValue(row.sender_id);
  w.writeAscii(',"content":');
  w.writeValue(format.applyMarkdown ? row.rendered_content : row.content);
  w.writeAscii(',"recipient_id":');
  w.writeValue(recipientId);
  w.writeAscii(',"timestamp":');
  w.writeValue(row.date_sent);
  w.writeAscii(',"client":');
  w.writeValue(row.sending_client);
  w.writeAscii(',"subject":');
  w.writeValue(
    isChannel && row.topic === '' && !format.allowEmptyTopicName
      ? EMPTY_TOPIC_DISPLAY_NAME
      : row.topic,
  );
  w.writeAscii(',"topic_links":');
  w.writeValue(isChannel ? cachedTopicLinks(store, view, row.topic) : NO_TOPIC_LINKS);
  w.writeAscii(isMeMessage(row.content) ? ',"is_me_message":true' : ',"is_me_message":false');
  w.writeAscii(',"reactions":');
  w.writeValue(format.dialect ? withReactionTypes(reactions, format.dialect) : reactions);
  if (submessages.length === 0) {
    w.writeAscii(',"submessages":[]');
  } else {
    w.writeAscii(',"submessages":');
    w.writeValue(submessages);
  }
  const entry = written.find(row.sender_id, recipientId);
  if (entry >= 0) {
    written.writeAgain(w, entry);
  } else {
    // From here to stream_id: the sender's, the conversation's and the format's only.
    const start = w.pos;
    w.writeAscii(',"sender_full_name":');
    w.writeValue(sender.full_name);
    w.writeAscii(',"sender_email":');
    w.writeValue(sender.email);
    w.writeAscii(',"sender_realm_str":');
    w.writeValue(view.row.string_id);
    w.writeAscii(',"display_recipient":');
    w.writeValue(
      isChannel
        ? (view.channels.byId(row.stream_id!)?.name ?? '')
        : displayRecipientUsers(view, dmGroupMembers(store, row.dm_group_id!)),
    );
    w.writeAscii(isChannel ? ',"type":"stream","avatar_url":' : ',"type":"private","avatar_url":');
    w.writeValue(sender.avatar_url);
    w.writeAscii(
      format.applyMarkdown ? ',"content_type":"text/html"' : ',"content_type":"text/x-markdown"',
    );
    if (isChannel) {
      w.writeAscii(',"stream_id":');
      w.writeValue(row.stream_id);
    }
    written.note(row.sender_id, recipientId, start, w.pos);
  }
  if (
    row.edit_history !== null &&
    view.settings.message_edit_history_visibility_policy !== 'none'
  ) {
    w.writeAscii(',"edit_history":');
    w.writeValue(editHistoryOf(row.edit_history));
  }
  if (row.last_edit_time !== null) {
    w.writeAscii(',"last_edit_timestamp":');
    w.writeValue(row.last_edit_time);
  }
  if (row.last_moved_time !== null) {
    w.writeAscii(',"last_moved_timestamp":');
    w.writeValue(row.last_moved_time);
  }
  if (flags) {
    w.writeAscii(',"flags":');
    w.writeValue(flags);
  }
  if (match) {
    w.writeAscii(',"match_content":');
    w.writeValue(match.content);
    w.writeAscii(',"match_subject":');
    w.writeValue(match.subject);
  }
  w.writeAscii('}');
}

/** The reactions of several messages, grouped by message id. */
export function reactionsByMessage(
  store: ReadStore,
  ids: readonly number[],
): Map<number, ApiReaction[]> {
  const out = new Map<number, ApiReaction[]>();
  for (const r of store.reactions.ofMessages(ids)) {
    let list = out.get(r.message_id);
    if (!list) out.set(r.message_id, (list = []));
    list.push(apiReaction(r));
  }
  return out;
}

/** The submessages of several messages, grouped by message id (each message's oldest first). */
export function submessagesByMessage(
  store: ReadStore,
  ids: readonly number[],
): Map<number, ApiSubmessage[]> {
  const out = new Map<number, ApiSubmessage[]>();
  for (const r of store.submessages.ofMessages(ids)) {
    let list = out.get(r.message_id);
    if (!list) out.set(r.message_id, (list = []));
    list.push(r);
  }
  return out;
}

export function apiReaction(r: ReactionRow): ApiReaction {
  return {
    emoji_name: r.emoji_name,
    emoji_code: r.emoji_code,
    reaction_type: r.reaction_type,
    user_id: r.user_id,
  };
}

// ---- access ----------------------------------------------------------------------------------

/**
 * Content access to a channel through subscription or a group that grants it (not through the
 * channel being public): what private channels require, as the reference's
 * has_channel_content_access_helper.
 */
function subscribedOrGranted(view: RealmView, userId: number, ch: Channel): boolean {
  if (view.channels.isSubscribed(userId, ch.id)) return true;
  const u = view.user(userId);
  if (!u || u.role === Role.GUEST) return false;
  const facts = view.channels.facts(userId, ch);
  return facts.inChannel.can_subscribe_group || facts.inChannel.can_add_subscribers_group;
}

/**
 * Whether a user may read a message: a direct message they received; a channel message of their
 * realm in a public channel (not for guests), or in a channel they can access — with protected
 * history, only if they received it. `modifying`: reacting, deleting (not in archived channels).
 */
export function hasMessageAccess(
  view: RealmView,
  userId: number,
  row: MessageRow,
  hasUserMessage: () => boolean,
  modifying: boolean,
): boolean {
  if (row.realm_id !== view.id) return false;
  if (row.stream_id === null) return hasUserMessage();
  const ch = view.channels.byId(row.stream_id);
  if (!ch) return false;
  if (modifying && ch.deactivated) return false;
  const u = view.user(userId);
  if (!u || !u.is_active) return false;
  if (!ch.invite_only && u.role !== Role.GUEST) return true;
  if (!ch.history_public_to_subscribers) {
    return hasUserMessage() && subscribedOrGranted(view, userId, ch);
  }
  return subscribedOrGranted(view, userId, ch);
}

export type AccessedMessage = { row: MessageRow; flags: number | undefined };

/** The message if the user may read it; "Invalid message(s)" otherwise (never more detail). */
export function accessMessage(
  store: ReadStore,
  view: RealmView,
  userId: number,
  messageId: number,
  modifying: boolean,
): AccessedMessage {
  const row = store.messages.byIdWithFlags(userId, messageId);
  if (!row) throw new InvalidMessagesError();
  const flags = row.flags ?? undefined;
  if (!hasMessageAccess(view, userId, row, () => flags !== undefined, modifying)) {
    throw new InvalidMessagesError();
  }
  return { row, flags };
}

/**
 * Who hears about a change to a message (a reaction, a deletion), as the reference's
 * event_recipient_ids_for_action_on_messages: for a direct message, those who received it; for
 * a channel message, the channel's subscribers — with protected history only those who also
 * received it — plus, in a public channel, non-guests who have a row for it (they starred or
 * reacted to it, or received it before unsubscribing).
 */
export function messageEventAudience(store: ReadStore, view: RealmView, row: MessageRow): number[] {
  const received = store.messages.recipients(row.id);
  const active = (id: number) => view.user(id)?.is_active === 1;
  if (row.stream_id === null) return received.filter(active).sort((a, b) => a - b);
  const ch = view.channels.byId(row.stream_id);
  if (!ch) return [];
  const subscribers = view.channels.subscriberIds(ch.id);
  if (!ch.history_public_to_subscribers) {
    const got = new Set(received);
    return subscribers.filter((id) => got.has(id));
  }
  if (ch.invite_only) return subscribers;
  const out = new Set(subscribers);
  for (const id of received) {
    const u = view.user(id);
    if (u && u.is_active && u.role !== Role.GUEST) out.add(id);
  }
  return [...out].sort((a, b) => a - b);
}

/**
 * Whether `userId` may edit the message's content now (validate_user_can_edit_message): the realm
 * allows editing, the user sent it, and it is within the edit time limit (plus `buffer` seconds:
 * an edit gets EDIT_LIMIT_BUFFER, the edit-typing notification none).
 */
export function checkMayEditContent(
  view: RealmView,
  userId: number,
  message: { sender_id: number; date_sent: number },
  now: number,
  buffer: number,
): void {
  const settings = view.settings;
  if (!settings.allow_message_editing) {
    throw new JsonableError('Your organization has turned off message editing');
  }
  if (message.sender_id !== userId) {
    throw new JsonableError("You don't have permission to edit this message");
  }
  const limit = settings.message_content_edit_limit_seconds;
  if (limit !== null && now - message.date_sent > limit + buffer) {
    throw new JsonableError('The time limit for editing this message has passed');
  }
}
