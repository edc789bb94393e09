/**
 * Editing and moving messages: PATCH /messages/{message_id}. Reference: actions/message_edit.py
 * (check_update_message, validate_message_edit_payload, validate_user_can_edit_message,
 * build_message_edit_request, do_update_message, check_time_limit_for_change_all_propagate_mode,
 * maybe_send_resolve_topic_notifications, send_message_moved_breadcrumbs), lib/topic.py
 * (update_messages_for_topic_edit).
 *
 * The endpoint normalized and rendered the new content (and the topic) before asking; here,
 * inside the transaction, every permission is checked against the state the edit commits
 * against, the rows change, and the events go to exactly the users who may see the message(s).
 *
 * A move of `change_later`/`change_all` touches every message of the topic the acting user may
 * see in one transaction, as the reference does (one UPDATE for the rows, one for the history):
 * see docs/api.md "Editing and moves" for the bound and the figures.
 */
import { createHash } from 'node:crypto';
import { EMPTY_TOPIC_DISPLAY_NAME, type TopicsPolicy } from '../lib/channel-rules.js';
import { JsonableError } from '../lib/errors.js';
import type { WireEvent } from '../lib/events.js';
import { renderMarkdown, type RenderContext } from '../lib/markdown/index.js';
import { isMeMessage } from '../lib/message-content.js';
import { apiFlagNames, MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import { Role } from '../lib/roles.js';
import { htmlToText } from '../lib/search.js';
import type { AttachmentDetail } from '../queries/attachments.js';
import type { Channel } from '../queries/channels-view.js';
import {
  accessMessage,
  cachedTopicLinks,
  checkMayEditContent,
  EVENT_FORMAT,
  formatMessage,
} from '../queries/messages.js';
import type { MessageRow } from '../storage/messages.js';
import { updateMessageAttachments } from './attachments.js';
import type { MutationContext } from './context.js';
import { ensureSystemBot } from './operations.js';
import { emitMutedTopics } from './user-topics.js';
import { checkMentionPermissions, type RenderedMessage } from './messages.js';

export const PROPAGATE_MODES = ['change_one', 'change_later', 'change_all'] as const;
export type PropagateMode = (typeof PROPAGATE_MODES)[number];

export const RESOLVED_TOPIC_PREFIX = '✔ ';
/** Seconds of grace on every edit and move time limit (the reference's edit_limit_buffer). */
const EDIT_LIMIT_BUFFER = 20;
/** Rendered-content version stored with history entries (the reference's markdown version). */
const RENDERED_CONTENT_VERSION = 1;

export type UpdateMessageCommand = {
  acting_user_id: number;
  message_id: number;
  /** The new topic, normalized (trimmed, '' for the empty topic, truncated). */
  topic?: string | undefined;
  /** The new topic before truncation (resolving compares the whole name). */
  topic_untruncated?: string | undefined;
  stream_id?: number | undefined;
  propagate_mode: PropagateMode;
  send_notification_to_old_thread: boolean;
  send_notification_to_new_thread: boolean;
  content?: { content: string; rendered: RenderedMessage; search_text: string } | undefined;
  prev_content_sha256?: string | undefined;
  /** The realm's render context, for the notification-bot messages a move sends. */
  render_context: RenderContext;
};

export type UpdateMessageResult = { detached_uploads: AttachmentDetail[]; changed: number };

export class MessageMoveError extends JsonableError {
  constructor(first: number | null, total: number, allowed: number) {
    super(
      `You only have permission to move the ${allowed}/${total} most recent messages in this topic.`,
      {
        code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
        extra: {
          first_message_id_allowed_to_move: first,
          total_messages_in_topic: total,
          total_messages_allowed_to_move: allowed,
        },
      },
    );
  }
}

// ---- the notification bot ------------------------------------------------------------------

/** The sender of move and resolve notices (the reference's NOTIFICATION_BOT). */
export const NOTIFICATION_BOT_EMAIL = 'notification-bot@zulip.com';
export const NOTIFICATION_BOT_NAME = 'Notification Bot';

/**
 * Thrown by an allowed move or resolve that must send a notice while the realm has no notification
 * bot yet: the edit rolls back, the caller asks `message.notification_bot.ensure` and the edit
 * again. (Creating the bot before the edit was checked let refused edits create it.)
 */
export class NotificationBotNeeded extends Error {
  constructor() {
    super('the notification bot does not exist yet');
  }
}

/**
 * Creates the realm's notification bot if it does not exist yet (a bot account of the realm,
 * announced like any new user). Asked by the edit endpoint when an edit answers
 * NotificationBotNeeded, in its own transaction, so the retried edit finds the bot in the read
 * model.
 */
export function ensureNotificationBot(
  ctx: MutationContext,
  _payload: Record<string, never>,
): { user_id: number } {
  return ensureSystemBot(ctx, { email: NOTIFICATION_BOT_EMAIL, full_name: NOTIFICATION_BOT_NAME });
}

// ---- helpers -----------------------------------------------------------------------------------

function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/** Python's str.lstrip(chars): removes any of `chars` from the start. */
function lstripChars(s: string, chars: string): string {
  let i = 0;
  while (i < s.length && chars.includes(s[i]!)) i++;
  return s.slice(i);
}

function topicsPolicyOf(ctx: MutationContext, ch: Channel): TopicsPolicy {
  const own = ch.topics_policy as TopicsPolicy;
  return own !== 'inherit' ? own : ctx.realm.settings.topics_policy;
}

const isModerator = (role: number) => role <= Role.MODERATOR;

/** The hash-URL encoding of the reference (url_encoding.encode_hash_component). */
function encodeHashComponent(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, '%2E')
    .replace(/%/g, '.');
}

function topicLinkSyntax(ch: Channel, topic: string): string {
  return `#**${ch.name}>${topic}**`;
}

/** Visibility policies: the more visible one wins (get_visibility_policy_after_merge). */
function mergedPolicy(orig: number, target: number): number {
  if (orig === target) return orig;
  if (orig === 2 || target === 2) return 2;
  return 0;
}

// ---- the edit ------------------------------------------------------------------------------------

export function checkUpdateMessage(
  ctx: MutationContext,
  cmd: UpdateMessageCommand,
): UpdateMessageResult {
  const { store, realm: view } = ctx;
  const user = view.user(cmd.acting_user_id);
  if (!user || !user.is_active) throw new JsonableError('Account is deactivated');
  const { row: message } = accessMessage(store, view, user.id, cmd.message_id, true);
  const settings = view.settings;

  const content = cmd.content;
  if (content !== undefined) {
    checkMayEditContent(view, user.id, message, ctx.now, EDIT_LIMIT_BUFFER);
  }

  const isChannel = message.stream_id !== null;
  let topic = cmd.topic;
  if (topic !== undefined && topic === message.topic) topic = undefined;
  let streamId = cmd.stream_id;
  if (streamId !== undefined && streamId === message.stream_id) streamId = undefined;

  // validate_message_edit_payload
  if (topic === undefined && content === undefined && streamId === undefined) {
    throw new JsonableError('Nothing to change');
  }
  if (!isChannel) {
    if (streamId !== undefined)
      throw new JsonableError('Direct messages cannot be moved to channels.');
    if (topic !== undefined) throw new JsonableError('Direct messages cannot have topics.');
  }
  if (cmd.propagate_mode !== 'change_one' && topic === undefined && streamId === undefined) {
    throw new JsonableError('Invalid propagate_mode without topic edit');
  }
  if (
    topic !== undefined &&
    (topic === RESOLVED_TOPIC_PREFIX.trim() ||
      topic === `${RESOLVED_TOPIC_PREFIX}${EMPTY_TOPIC_DISPLAY_NAME}` ||
      topic === `${RESOLVED_TOPIC_PREFIX}(no topic)`)
  ) {
    throw new JsonableError('General chat cannot be marked as resolved');
  }
  if (streamId !== undefined && content !== undefined) {
    throw new JsonableError('Cannot change message content while changing channel');
  }
  if (
    cmd.prev_content_sha256 !== undefined &&
    cmd.prev_content_sha256 !== sha256Hex(message.content)
  ) {
    throw new JsonableError("'prev_content_sha256' value does not match the expected value.", {
      code: 'EXPECTATION_MISMATCH',
    });
  }

  if (!isChannel) {
    return editDirectMessage(ctx, message, content!);
  }

  // build_message_edit_request
  const origStream = view.channels.byId(message.stream_id!)!;
  const origTopic = message.topic;
  const targetTopic = topic ?? origTopic;
  let topicResolved = false;
  let topicUnresolved = false;
  if (topic !== undefined) {
    const untruncated = cmd.topic_untruncated ?? topic;
    topicResolved =
      topic.startsWith(RESOLVED_TOPIC_PREFIX) &&
      !origTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
      untruncated.slice(RESOLVED_TOPIC_PREFIX.length) === origTopic;
    topicUnresolved =
      origTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
      !topic.startsWith(RESOLVED_TOPIC_PREFIX) &&
      lstripChars(origTopic, RESOLVED_TOPIC_PREFIX) === topic;
  }
  let targetStream = origStream;
  if (streamId !== undefined) {
    const ch = view.channels.byId(streamId);
    if (!ch || ch.deactivated || !view.channels.may(user.id, ch, 'content')) {
      throw new JsonableError('Invalid channel ID');
    }
    targetStream = ch;
  }
  const policy = topicsPolicyOf(ctx, targetStream);
  const targetEmpty = targetTopic === '';
  if (targetEmpty && (topic !== undefined || streamId !== undefined)) {
    if (policy === 'disable_empty_topic') {
      throw new JsonableError(
        'Sending messages to the general chat is not allowed in this channel.',
      );
    }
  }
  if (policy === 'empty_topic_only' && !targetEmpty) {
    throw new JsonableError('Only the general chat topic is allowed in this channel.');
  }
  const isResolveOnly = topicResolved || topicUnresolved;

  // Topic permissions.
  if (topic !== undefined) {
    if (isResolveOnly) {
      if (!view.hasRealmPermission(user.id, 'can_resolve_topics_group')) {
        throw new JsonableError("You don't have permission to resolve topics in this channel.");
      }
    } else {
      if (!view.hasRealmPermission(user.id, 'can_move_messages_between_topics_group')) {
        throw new JsonableError("You don't have permission to edit this message");
      }
      const limit = settings.move_messages_within_stream_limit_seconds;
      if (
        limit !== null &&
        !isModerator(user.role) &&
        ctx.now - message.date_sent > limit + EDIT_LIMIT_BUFFER
      ) {
        throw new JsonableError("The time limit for editing this message's topic has passed.");
      }
    }
  }

  // Content: mention permissions, as when sending.
  if (content !== undefined) {
    const participants = content.rendered.mentions_topic_wildcard
      ? store.messages.topicParticipants(origStream.id, message.topic)
      : null;
    checkMentionPermissions(ctx, user, content.rendered, origStream, participants);
  }

  // Channel permissions.
  if (streamId !== undefined) {
    if (!view.hasRealmPermission(user.id, 'can_move_messages_between_channels_group')) {
      throw new JsonableError("You don't have permission to move this message");
    }
    if (view.channels.sendMessageDecision(user.id, targetStream) === 'not_allowed') {
      throw new JsonableError('You do not have permission to post in this channel.');
    }
    const limit = settings.move_messages_between_streams_limit_seconds;
    if (
      limit !== null &&
      !isModerator(user.role) &&
      ctx.now - message.date_sent > limit + EDIT_LIMIT_BUFFER
    ) {
      throw new JsonableError("The time limit for editing this message's channel has passed");
    }
  }

  const moved = topic !== undefined || streamId !== undefined;
  const historyAccess = view.channels.may(user.id, origStream, 'history');
  const visibleInTopic = (fromId: number) =>
    historyAccess
      ? store.messageEdits.topicMessages(origStream.id, origTopic, fromId)
      : store.messageEdits.receivedTopicMessages(user.id, origStream.id, origTopic, fromId);

  if (cmd.propagate_mode === 'change_all' && moved && !isModerator(user.role) && !isResolveOnly) {
    checkChangeAllTimeLimit(ctx, topic !== undefined, streamId !== undefined, visibleInTopic(0));
  }

  // ---- do_update_message ----------------------------------------------------------------------
  const now = ctx.now;
  const event: WireEvent = {
    type: 'update_message',
    user_id: user.id,
    edit_timestamp: now,
    message_id: message.id,
    rendering_only: false,
    stream_name: origStream.name,
    stream_id: origStream.id,
  };
  const entry: Record<string, unknown> = { user_id: user.id, timestamp: now };
  let detachedUploads: AttachmentDetail[] = [];
  let hasAttachment = false;
  const ums = store.messageEdits.userMessageFlags(message.id);
  const flagsOf = new Map(ums.map((u) => [u.user_id, u.flags]));

  if (content !== undefined) {
    const r = applyContentEdit(ctx, message, content, targetTopic, flagsOf, event, entry);
    detachedUploads = r.detachedUploads;
    hasAttachment = r.hasAttachment;
  }
  if (moved) event.propagate_mode = cmd.propagate_mode;
  if (streamId !== undefined) {
    entry.prev_stream = origStream.id;
    entry.stream = targetStream.id;
    event.orig_subject = origTopic;
    event.new_stream_id = targetStream.id;
  }
  if (topic !== undefined) {
    event.orig_subject = origTopic;
    event.subject = targetTopic;
    event.topic_links = cachedTopicLinks(store, view, targetTopic);
    entry.prev_topic = origTopic;
    entry.topic = targetTopic;
  }

  // Which messages move.
  let changedIds = [message.id];
  if (moved && cmd.propagate_mode !== 'change_one') {
    const fromId = cmd.propagate_mode === 'change_later' ? message.id : 0;
    const ids = new Set(visibleInTopic(fromId).map((m) => m.id));
    ids.add(message.id);
    changedIds = [...ids].sort((a, b) => a - b);
  }
  const targetTopicHasMessages =
    moved && store.messageEdits.topicHasOtherMessages(targetStream.id, targetTopic, changedIds);

  // Who loses and gains access on a channel move.
  let losingRows: number[] = [];
  let losingAccess: number[] = [];
  let newStreamSubs: number[] = [];
  if (streamId !== undefined) {
    const oldAll = store.messageEdits.allSubscriberIds(origStream.id);
    newStreamSubs = view.channels.subscriberIds(targetStream.id);
    const inNew = new Set(newStreamSubs);
    losingRows = oldAll.filter((id) => !inNew.has(id));
    losingAccess = targetStream.invite_only
      ? losingRows
      : losingRows.filter((id) => view.user(id)?.role === Role.GUEST);
  }

  // The rows.
  const movedTime = streamId !== undefined || (topic !== undefined && !isResolveOnly) ? now : null;
  if (moved) {
    const entryJson = JSON.stringify(entry);
    store.messageEdits.move(
      [message.id],
      targetStream.id,
      targetTopic,
      movedTime,
      content !== undefined ? null : entryJson,
    );
    const others = changedIds.filter((id) => id !== message.id);
    if (others.length > 0) {
      const topicOnly: Record<string, unknown> = { user_id: user.id, timestamp: now };
      for (const k of ['prev_topic', 'topic', 'prev_stream', 'stream'] as const) {
        if (entry[k] !== undefined) topicOnly[k] = entry[k];
      }
      store.messageEdits.move(
        others,
        targetStream.id,
        targetTopic,
        movedTime,
        JSON.stringify(topicOnly),
      );
    }
  }
  if (content !== undefined) {
    store.messageEdits.updateContent(message.id, {
      content: content.content,
      rendered_content: content.rendered.rendered_content,
      has_attachment: hasAttachment,
      has_image: content.rendered.has_image,
      has_link: content.rendered.has_link,
      last_edit_time: now,
      entry: JSON.stringify(entry),
    });
  }
  if (streamId !== undefined) {
    if (!targetStream.history_public_to_subscribers) {
      store.messageEdits.insertMissingUserMessages(
        newStreamSubs,
        changedIds,
        MESSAGE_FLAG_BITS.read,
      );
    }
    store.messageEdits.deleteUserMessages(losingRows, changedIds);
    const activeLosing = losingAccess.filter((id) => view.user(id)?.is_active === 1);
    if (activeLosing.length > 0) {
      ctx.emit(
        {
          type: 'delete_message',
          message_ids: changedIds,
          message_type: 'stream',
          stream_id: origStream.id,
          topic: origTopic,
        },
        activeLosing,
      );
    }
  }
  // The search index follows topic and content.
  if (moved || content !== undefined) {
    const reindexIds = moved ? changedIds : [message.id];
    for (const r of store.messageEdits.searchRows(reindexIds)) {
      store.messageEdits.reindex(r.id, r.topic, htmlToText(r.rendered_content));
    }
  }
  event.message_ids = changedIds;

  // Who hears about it.
  const losingRowSet = new Set(losingRows);
  const losingAccessSet = new Set(losingAccess);
  const flagsByUser: Record<number, readonly string[]> = {};
  const notified: number[] = [];
  for (const [uid, f] of flagsOf) {
    if (losingRowSet.has(uid)) continue;
    if (view.user(uid)?.is_active !== 1) continue;
    flagsByUser[uid] = apiFlagNames(f);
    notified.push(uid);
  }
  if (origStream.history_public_to_subscribers) {
    const extra = new Set<number>();
    const targetSubs = view.channels.subscriberIds(targetStream.id);
    const oldSubs = new Set(view.channels.subscriberIds(origStream.id));
    for (const uid of targetSubs) {
      if (flagsOf.has(uid) || losingAccessSet.has(uid)) continue;
      // Guests who only see the new channel would not know the message.
      if (streamId !== undefined && view.user(uid)?.role === Role.GUEST && !oldSubs.has(uid))
        continue;
      extra.add(uid);
    }
    if (streamId !== undefined) {
      const inTarget = new Set(targetSubs);
      for (const uid of oldSubs) {
        if (flagsOf.has(uid) || losingAccessSet.has(uid) || inTarget.has(uid)) continue;
        extra.add(uid);
      }
    }
    for (const uid of [...extra].sort((a, b) => a - b)) {
      flagsByUser[uid] = ['read'];
      notified.push(uid);
    }
  }

  // Visibility policies follow a whole-topic move.
  let movedAll = false;
  if (moved) {
    movedAll =
      cmd.propagate_mode === 'change_all' ||
      !visibleInTopic(0).some((m) => !changedIds.includes(m.id));
  }
  let followersOfOrig = new Set<number>();
  if (moved && movedAll) {
    followersOfOrig = moveVisibilityPolicies(ctx, {
      origStream,
      origTopic,
      targetStream,
      targetTopic,
      targetTopicHasMessages,
      losingAccess: streamId !== undefined ? losingAccessSet : new Set(),
    });
  }
  ctx.emit(event, notified, { flags: flagsByUser });

  // Notices from the notification bot.
  if (moved) {
    sendMoveNotices(ctx, cmd, {
      user,
      message,
      origStream,
      origTopic,
      targetStream,
      targetTopic,
      topicEdited: topic !== undefined,
      streamEdited: streamId !== undefined,
      contentEdited: content !== undefined,
      topicResolved,
      topicUnresolved,
      changedIds,
      movedAll,
      followersOfOrig,
      historyAccessTarget: view.channels.may(user.id, targetStream, 'history'),
    });
  }
  return { detached_uploads: detachedUploads, changed: changedIds.length };
}

/**
 * New content of one message: recomputes every recipient's mention and alert-word flags
 * (update_user_message_flags), updates the upload links, and fills the event and history entry.
 * The row itself is written by the caller (with the history entry complete).
 */
function applyContentEdit(
  ctx: MutationContext,
  message: MessageRow,
  content: NonNullable<UpdateMessageCommand['content']>,
  topic: string,
  flagsOf: Map<number, number>,
  event: WireEvent,
  entry: Record<string, unknown>,
): { detachedUploads: AttachmentDetail[]; hasAttachment: boolean } {
  const { store, realm: view } = ctx;
  const r = content.rendered;
  event.orig_content = message.content;
  event.orig_rendered_content = message.rendered_content;
  event.content = content.content;
  event.rendered_content = r.rendered_content;
  event.is_me_message = isMeMessage(content.content);
  entry.prev_content = message.content;
  entry.prev_rendered_content = message.rendered_content;
  entry.prev_rendered_content_version = RENDERED_CONTENT_VERSION;

  const mentioned = new Set(r.mentions_user_ids);
  for (const g of r.mentions_user_group_ids)
    for (const id of view.recursiveMembers(g)) mentioned.add(id);
  const alerted = new Set(r.user_ids_with_alert_words);
  let participants: Set<number> | null = null;
  if (r.mentions_topic_wildcard && message.stream_id !== null) {
    participants = store.messages.topicParticipants(message.stream_id, topic);
    participants.add(message.sender_id);
  }
  const B = MESSAGE_FLAG_BITS;
  for (const [uid, old] of flagsOf) {
    let f =
      old &
      ~(B.mentioned | B.has_alert_word | B.stream_wildcard_mentioned | B.topic_wildcard_mentioned);
    if (mentioned.has(uid)) f |= B.mentioned;
    if (alerted.has(uid)) f |= B.has_alert_word;
    if (r.mentions_stream_wildcard && message.stream_id !== null) f |= B.stream_wildcard_mentioned;
    if (participants?.has(uid)) f |= B.topic_wildcard_mentioned;
    if (f !== old) {
      store.messageEdits.setUserFlags(uid, message.id, f);
      flagsOf.set(uid, f);
    }
  }
  const attachments = updateMessageAttachments(ctx, {
    senderId: message.sender_id,
    messageId: message.id,
    pathIds: r.potential_attachment_path_ids,
  });
  return { detachedUploads: attachments.detachedUploads, hasAttachment: attachments.hasAttachment };
}

/** A content edit of a direct message: only its recipients hear about it. */
function editDirectMessage(
  ctx: MutationContext,
  message: MessageRow,
  content: NonNullable<UpdateMessageCommand['content']>,
): UpdateMessageResult {
  const { store, realm: view } = ctx;
  const event: WireEvent = {
    type: 'update_message',
    user_id: message.sender_id,
    edit_timestamp: ctx.now,
    message_id: message.id,
    rendering_only: false,
  };
  const entry: Record<string, unknown> = { user_id: message.sender_id, timestamp: ctx.now };
  const flagsOf = new Map(
    store.messageEdits.userMessageFlags(message.id).map((u) => [u.user_id, u.flags]),
  );
  const { detachedUploads, hasAttachment } = applyContentEdit(
    ctx,
    message,
    content,
    '',
    flagsOf,
    event,
    entry,
  );
  store.messageEdits.updateContent(message.id, {
    content: content.content,
    rendered_content: content.rendered.rendered_content,
    has_attachment: hasAttachment,
    has_image: content.rendered.has_image,
    has_link: content.rendered.has_link,
    last_edit_time: ctx.now,
    entry: JSON.stringify(entry),
  });
  store.messageEdits.reindex(message.id, '', content.search_text);
  event.message_ids = [message.id];
  const flagsByUser: Record<number, readonly string[]> = {};
  const users: number[] = [];
  for (const [uid, f] of flagsOf) {
    if (view.user(uid)?.is_active !== 1) continue;
    flagsByUser[uid] = apiFlagNames(f);
    users.push(uid);
  }
  ctx.emit(event, users, { flags: flagsByUser });
  return { detached_uploads: detachedUploads, changed: 1 };
}

/**
 * check_time_limit_for_change_all_propagate_mode: a non-moderator moving a whole topic must be
 * within the time limit for every message of it they can see.
 */
function checkChangeAllTimeLimit(
  ctx: MutationContext,
  topicEdited: boolean,
  streamEdited: boolean,
  visible: readonly { id: number; date_sent: number }[],
): void {
  const s = ctx.realm.settings;
  const limits: number[] = [];
  if (topicEdited && s.move_messages_within_stream_limit_seconds !== null)
    limits.push(s.move_messages_within_stream_limit_seconds + EDIT_LIMIT_BUFFER);
  if (streamEdited && s.move_messages_between_streams_limit_seconds !== null)
    limits.push(s.move_messages_between_streams_limit_seconds + EDIT_LIMIT_BUFFER);
  if (limits.length === 0) return;
  const oldest = ctx.now - Math.min(...limits);
  const allowed = visible.filter((m) => m.date_sent > oldest);
  if (allowed.length === visible.length) return;
  throw new MessageMoveError(allowed[0]?.id ?? null, visible.length, allowed.length);
}

/**
 * Moves users' visibility policies with a whole topic (the reference's user_topic migration):
 * users losing access to the messages lose the policy; others' policy moves to the target topic,
 * merged with one they had there when the target already has messages. Returns the users who
 * followed the original topic.
 */
function moveVisibilityPolicies(
  ctx: MutationContext,
  m: {
    origStream: Channel;
    origTopic: string;
    targetStream: Channel;
    targetTopic: string;
    targetTopicHasMessages: boolean;
    losingAccess: ReadonlySet<number>;
  },
): Set<number> {
  const { store } = ctx;
  const set = (uid: number, stream: Channel, topic: string, policy: number) => {
    if (policy === 0) store.topics.clearUserTopic(uid, stream.id, topic);
    else
      store.topics.setUserTopic({
        user_id: uid,
        stream_id: stream.id,
        topic,
        visibility_policy: policy,
        last_updated: ctx.now,
      });
    emitMutedTopics(ctx, uid);
    ctx.emit(
      {
        type: 'user_topic',
        stream_id: stream.id,
        topic_name: topic,
        last_updated: ctx.now,
        visibility_policy: policy,
      },
      [uid],
    );
  };
  const orig = new Map<number, number>();
  const followers = new Set<number>();
  for (const row of store.messageEdits.topicUserPolicies(m.origStream.id, m.origTopic)) {
    if (row.visibility_policy === 3) followers.add(row.user_id);
    if (m.losingAccess.has(row.user_id)) set(row.user_id, m.origStream, m.origTopic, 0);
    else orig.set(row.user_id, row.visibility_policy);
  }
  const sameTopic =
    m.origStream.id === m.targetStream.id &&
    m.origTopic.toLowerCase() === m.targetTopic.toLowerCase();
  const target = new Map<number, number>();
  for (const row of store.messageEdits.topicUserPolicies(m.targetStream.id, m.targetTopic)) {
    target.set(row.user_id, row.visibility_policy);
  }
  const users = [...new Set([...orig.keys(), ...target.keys()])].sort((a, b) => a - b);
  for (const uid of users) {
    const o = orig.get(uid) ?? 0;
    const t = sameTopic ? 0 : (target.get(uid) ?? 0);
    if (o !== 0 && !sameTopic) set(uid, m.origStream, m.origTopic, 0);
    const next = m.targetTopicHasMessages ? mergedPolicy(o, t) : o;
    if (next === t && !sameTopic) continue;
    if (sameTopic && next === 0) continue;
    set(uid, m.targetStream, m.targetTopic, next);
  }
  return followers;
}

type MoveFacts = {
  user: { id: number; full_name: string };
  message: MessageRow;
  origStream: Channel;
  origTopic: string;
  targetStream: Channel;
  targetTopic: string;
  topicEdited: boolean;
  streamEdited: boolean;
  contentEdited: boolean;
  topicResolved: boolean;
  topicUnresolved: boolean;
  changedIds: readonly number[];
  movedAll: boolean;
  followersOfOrig: ReadonlySet<number>;
  historyAccessTarget: boolean;
};

/**
 * The notification bot's notices: "marked this topic as resolved/unresolved" for a pure resolve,
 * and the breadcrumbs of a move (new topic first, then old), worded as the reference's.
 */
function sendMoveNotices(ctx: MutationContext, cmd: UpdateMessageCommand, f: MoveFacts): void {
  const bot = ctx.realm.userByEmail(NOTIFICATION_BOT_EMAIL);
  // Everything is checked by now: the edit is allowed. Without the bot, it is rolled back and the
  // endpoint creates the bot and asks again (a refused edit never creates it).
  if (!bot) throw new NotificationBotNeeded();
  const mention = `@_**${f.user.full_name}|${f.user.id}**`;
  let resolveNoticeId: number | null = null;
  if (
    f.topicEdited &&
    !f.contentEdited &&
    !f.streamEdited &&
    (f.topicResolved || f.topicUnresolved)
  ) {
    const text = f.topicResolved
      ? `${mention} has marked this topic as resolved.`
      : `${mention} has marked this topic as unresolved.`;
    resolveNoticeId = sendNotice(
      ctx,
      cmd,
      bot.id,
      f.user.id,
      f.origStream,
      f.targetTopic,
      text,
      f.followersOfOrig,
    );
  }
  const count = f.changedIds.length;
  const oldLocation = topicLinkSyntax(f.origStream, f.origTopic);
  const newLocation = topicLinkSyntax(f.targetStream, f.targetTopic);
  if (
    cmd.send_notification_to_new_thread &&
    (f.streamEdited || (f.topicEdited && !f.topicResolved && !f.topicUnresolved))
  ) {
    const except = new Set<number>(f.changedIds);
    if (resolveNoticeId !== null) except.add(resolveNoticeId);
    const preexisting = (
      f.historyAccessTarget
        ? ctx.store.messageEdits.topicMessages(f.targetStream.id, f.targetTopic)
        : ctx.store.messageEdits.receivedTopicMessages(f.user.id, f.targetStream.id, f.targetTopic)
    ).some((m) => !except.has(m.id));
    let text: string;
    if (!preexisting && f.movedAll) {
      text = `This topic was moved here from ${oldLocation} by ${mention}.`;
    } else if (count === 1) {
      const realmUrl = cmd.render_context.realm_url;
      const link = `${realmUrl}/#narrow/channel/${encodeHashComponent(`${f.targetStream.id}-${f.targetStream.name.replace(/ /g, '-')}`)}/topic/${encodeHashComponent(f.targetTopic === '' ? '' : f.targetTopic)}/near/${f.message.id}`;
      text = `[A message](${link}) was moved here from ${oldLocation} by ${mention}.`;
    } else {
      text = `${count} messages were moved here from ${oldLocation} by ${mention}.`;
    }
    sendNotice(ctx, cmd, bot.id, f.user.id, f.targetStream, f.targetTopic, text, null);
  }
  if (cmd.send_notification_to_old_thread) {
    let text: string;
    if (f.movedAll) text = `This topic was moved to ${newLocation} by ${mention}.`;
    else if (count === 1)
      text = `A message was moved from this topic to ${newLocation} by ${mention}.`;
    else text = `${count} messages were moved from this topic to ${newLocation} by ${mention}.`;
    sendNotice(ctx, cmd, bot.id, f.user.id, f.origStream, f.origTopic, text, null);
  }
}

/**
 * Sends a notification-bot message to a channel's subscribers (internal_send_stream_message):
 * no permission checks; read for the acting user, and (`unreadFor` given) read for everyone not
 * in it. The notice is short, so it is rendered here, inline, with the context the endpoint
 * passed.
 */
function sendNotice(
  ctx: MutationContext,
  cmd: UpdateMessageCommand,
  botId: number,
  actingUserId: number,
  ch: Channel,
  topic: string,
  text: string,
  unreadFor: ReadonlySet<number> | null,
): number {
  const { store, realm: view } = ctx;
  const r = renderMarkdown(text, cmd.render_context, {
    linkable_channel_ids: [...view.channels.all()].map((c) => c.id),
  });
  const recipients = view.channels.subscriberIds(ch.id);
  const mentioned = new Set(r.mentions_user_ids);
  const flags = recipients.map((id) => {
    let fl = 0;
    if (id === actingUserId || (unreadFor !== null && !unreadFor.has(id)))
      fl |= MESSAGE_FLAG_BITS.read;
    if (mentioned.has(id)) fl |= MESSAGE_FLAG_BITS.mentioned;
    return fl;
  });
  const row = {
    realm_id: view.id,
    sender_id: botId,
    stream_id: ch.id,
    dm_group_id: null,
    topic,
    content: text,
    rendered_content: r.rendered_content,
    date_sent: ctx.now,
    has_attachment: 0,
    has_image: r.has_image ? 1 : 0,
    has_link: r.has_link ? 1 : 0,
    sending_client: 'Internal',
  };
  const id = store.messages.insert(row);
  store.messages.insertUserMessages(id, recipients, flags);
  store.messages.index(id, topic, htmlToText(r.rendered_content));
  const message = formatMessage(
    store,
    view,
    { ...row, id, last_edit_time: null, last_moved_time: null, edit_history: null },
    EVENT_FORMAT,
    [],
  );
  const flagsByUser: Record<number, readonly string[]> = {};
  recipients.forEach((uid, i) => (flagsByUser[uid] = apiFlagNames(flags[i]!)));
  ctx.emit({ type: 'message', message }, recipients, {
    flags: flagsByUser,
    message: {
      rawContent: text,
      senderAvatarIsExternal: true,
      publicChannel: ch.invite_only === 0,
    },
  });
  return id;
}
