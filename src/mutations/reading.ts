/**
 * Reading operations that touch many messages at once: marking everything, a channel, a topic or
 * one sender's messages as read, and deleting a topic. Reference: actions/message_flags.py
 * (do_mark_all_as_read, do_mark_stream_messages_as_read, do_mark_muted_user_messages_as_read),
 * views/streams.py delete_in_topic, actions/message_delete.py.
 *
 * Each command handles one bounded batch (newest messages first) in its own transaction and says
 * whether anything is left; the endpoint asks again until done. A huge backlog therefore never
 * holds the realm's write queue for long, and every batch that committed is progress a repeated
 * request builds on.
 */
import { InvalidChannelIdError, OrganizationAdministratorRequiredError } from '../lib/errors.js';
import type { WireEvent } from '../lib/events.js';
import { MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import { Role } from '../lib/roles.js';
import { hasMessageAccess, messageEventAudience } from '../queries/messages.js';
import { releaseMessageAttachments } from './attachments.js';
import { actingUser } from './context.js';
import type { MutationContext } from './context.js';
import { emitMutedTopics } from './user-topics.js';
import type { Channel } from '../queries/channels-view.js';
import type { MessageRow } from '../storage/messages.js';

/** Most messages one read batch marks (the reference's batch size). */
export const READ_BATCH = 2000;
/** Most messages one delete-topic batch deletes. */
export const DELETE_TOPIC_BATCH = 1000;

export type ReadScope =
  | { kind: 'all' }
  | { kind: 'channel'; stream_id: number }
  | { kind: 'topic'; stream_id: number; topic: string }
  | { kind: 'sender'; sender_id: number };

export type BatchResult = { count: number; done: boolean };

/**
 * Marks up to `limit` of the user's unread messages in `scope` as read (newest first) and tells
 * the user's clients with one `update_message_flags` event listing them.
 */
export function markReadBatch(
  ctx: MutationContext,
  userId: number,
  scope: ReadScope,
  limit: number,
): BatchResult {
  const r = ctx.store.reading;
  let ids: number[];
  switch (scope.kind) {
    case 'all':
      ids = r.unreadAll(userId, limit);
      break;
    case 'channel':
      ids = r.unreadInChannel(userId, scope.stream_id, limit);
      break;
    case 'topic':
      ids = r.unreadInTopic(userId, scope.stream_id, scope.topic, limit);
      break;
    case 'sender':
      ids = r.unreadFromSender(userId, scope.sender_id, limit);
      break;
  }
  if (ids.length === 0) return { count: 0, done: true };
  ctx.store.messages.setFlag(userId, ids, MESSAGE_FLAG_BITS.read);
  ids.sort((a, b) => a - b);
  ctx.emit(
    {
      type: 'update_message_flags',
      op: 'add',
      operation: 'add',
      flag: 'read',
      messages: ids,
      all: false,
    },
    [userId],
  );
  return { count: ids.length, done: ids.length < limit };
}

export type MarkReadCommand = { user_id: number; scope: ReadScope; limit?: number };

/** One batch of POST /mark_all_as_read, /mark_stream_as_read, /mark_topic_as_read. */
export function checkMarkAsRead(ctx: MutationContext, cmd: MarkReadCommand): MarkReadCommand {
  actingUser(ctx.realm, cmd.user_id);
  return cmd;
}

export function doMarkAsRead(ctx: MutationContext, cmd: MarkReadCommand): BatchResult {
  return markReadBatch(ctx, cmd.user_id, cmd.scope, Math.max(1, cmd.limit ?? READ_BATCH));
}

export type DeleteTopicCommand = {
  acting_user_id: number;
  stream_id: number;
  /** Canonical topic name ('' for the empty topic). */
  topic: string;
  limit?: number;
};

/**
 * One batch of POST /streams/{stream_id}/delete_topic: organization administrators and the
 * channel's administrators (can_administer_channel_group) delete the topic's messages they can
 * see, newest first. Each batch releases the messages' uploads and tells everyone who could see
 * each message (delete_message, one event per audience). When the topic is gone, personal topic
 * preferences for it are cleared, except for users who still see messages of it (protected
 * history: messages the deleting user never received stay).
 */
/** One checked batch of a topic's deletion: the messages to delete, and whether it is the last. */
export type TopicBatch = { channel: Channel; topic: string; rows: MessageRow[]; done: boolean };

export function checkDeleteTopicBatch(ctx: MutationContext, cmd: DeleteTopicCommand): TopicBatch {
  const { store, realm: view } = ctx;
  const user = actingUser(view, cmd.acting_user_id);
  const ch = view.channels.byId(cmd.stream_id);
  const channelAdmin =
    ch !== undefined && view.channels.facts(user.id, ch).inChannel.can_administer_channel_group;
  if (user.role > Role.ADMINISTRATOR && !channelAdmin) {
    throw new OrganizationAdministratorRequiredError();
  }
  if (!ch || !view.channels.may(user.id, ch, 'content')) {
    throw new InvalidChannelIdError();
  }
  const limit = Math.max(1, cmd.limit ?? DELETE_TOPIC_BATCH);
  const candidates = ch.history_public_to_subscribers
    ? store.reading.topicMessageIds(ch.id, cmd.topic, limit)
    : store.reading.topicMessageIdsReceived(user.id, ch.id, cmd.topic, limit);
  const rows = store.messages
    .byIds(candidates)
    .filter((row) =>
      hasMessageAccess(
        view,
        user.id,
        row,
        () => store.messages.userFlags(user.id, row.id) !== undefined,
        false,
      ),
    );
  return { channel: ch, topic: cmd.topic, rows, done: candidates.length < limit };
}

export function doDeleteTopicBatch(ctx: MutationContext, batch: TopicBatch): BatchResult {
  const { store, realm: view } = ctx;
  const { channel: ch, rows, done } = batch;
  // Who sees which of the messages: one event per distinct set of messages.
  const seenBy = new Map<number, number[]>();
  const topicOf = new Map<number, string>();
  for (const row of rows) {
    topicOf.set(row.id, row.topic);
    for (const u of messageEventAudience(store, view, row)) {
      let list = seenBy.get(u);
      if (!list) seenBy.set(u, (list = []));
      list.push(row.id);
    }
  }
  const ids = rows.map((r) => r.id);
  if (ids.length > 0) {
    releaseMessageAttachments(ctx, { messageIds: ids });
    for (const id of ids) store.messages.delete(id);
  }
  const audiences = new Map<string, { ids: number[]; users: number[] }>();
  for (const [u, list] of seenBy) {
    list.sort((a, b) => a - b);
    const key = list.join(',');
    let a = audiences.get(key);
    if (!a) audiences.set(key, (a = { ids: list, users: [] }));
    a.users.push(u);
  }
  for (const a of audiences.values()) {
    const event: WireEvent = {
      type: 'delete_message',
      message_ids: a.ids,
      message_type: 'stream',
      stream_id: ch.id,
      topic: topicOf.get(a.ids[0]!)!,
    };
    ctx.emit(
      event,
      a.users.sort((x, y) => x - y),
    );
  }

  if (done) clearStaleUserTopics(ctx, ch.id, batch.topic, ch.history_public_to_subscribers === 1);
  return { count: ids.length, done };
}

/** Clears visibility policies for a deleted topic (user_topic events with policy 0). */
function clearStaleUserTopics(
  ctx: MutationContext,
  streamId: number,
  topic: string,
  publicHistory: boolean,
): void {
  const { store } = ctx;
  const remaining = store.reading.topicMessageIds(streamId, topic, 1).length > 0;
  for (const h of store.reading.userTopicHolders(streamId, topic)) {
    if (
      remaining &&
      (publicHistory || store.reading.userHasMessageInTopic(h.user_id, streamId, topic))
    )
      continue;
    store.topics.clearUserTopic(h.user_id, streamId, h.topic);
    emitMutedTopics(ctx, h.user_id);
    ctx.emit(
      {
        type: 'user_topic',
        stream_id: streamId,
        topic_name: h.topic,
        last_updated: ctx.now,
        visibility_policy: 0,
      },
      [h.user_id],
    );
  }
}
