/**
 * Moving messages to another topic and/or channel (the move half of PATCH /messages/{message_id}).
 * Reference: actions/message_edit.py (do_update_message), lib/topic.py
 * (update_messages_for_topic_edit), the user_topic migration of a moved topic.
 *
 * A move of `change_later`/`change_all` touches every message of the topic the acting user may
 * see in one transaction, as the reference does (one UPDATE for the rows, one for the history):
 * see docs/api.md "Editing and moves" for the bound and the figures.
 */
import { MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import { Role } from '../lib/roles.js';
import type { Channel } from '../queries/channels-view.js';
import type { MutationContext } from './context.js';
import type { HistoryEntry } from './message-content-edit.js';
import type { ChannelEditPlan } from './message-edit-plan.js';
import { emitMutedTopics } from './user-topics.js';

/** What a move changed, for the event's audience and the notices. */
export type MoveOutcome = {
  /** The moved messages, ascending. */
  changedIds: number[];
  /** Whether the topic's other messages all moved too (visibility policies follow). */
  movedAll: boolean;
  targetTopicHasMessages: boolean;
  /** Users whose rows for the messages were removed (a move to a channel they are not in). */
  losingRows: ReadonlySet<number>;
  /** Those of them who can no longer see the messages at all. */
  losingAccess: ReadonlySet<number>;
};

/**
 * Moves the plan's messages: the rows (with their history entry; `withEntry` false when a
 * content edit writes the entry of the edited message), the per-user rows that follow a channel
 * change (and `delete_message` to users who lose the messages).
 */
export function doMoveMessages(
  ctx: MutationContext,
  plan: ChannelEditPlan,
  entry: HistoryEntry,
  withEntry: boolean,
): MoveOutcome {
  const { store, realm: view } = ctx;
  const { message, origStream, origTopic, targetStream, targetTopic } = plan;

  // Which messages move.
  let changedIds = [message.id];
  if (plan.propagateMode !== 'change_one') {
    const fromId = plan.propagateMode === 'change_later' ? message.id : 0;
    const ids = new Set(plan.visibleInTopic(fromId).map((m) => m.id));
    ids.add(message.id);
    changedIds = [...ids].sort((a, b) => a - b);
  }
  const targetTopicHasMessages = store.messageEdits.topicHasOtherMessages(
    targetStream.id,
    targetTopic,
    changedIds,
  );

  // Who loses and gains access on a channel move.
  let losingRows: number[] = [];
  let losingAccess: number[] = [];
  let newStreamSubs: number[] = [];
  if (plan.streamEdited) {
    const oldAll = store.channels.allSubscriberIds(origStream.id);
    newStreamSubs = view.channels.subscriberIds(targetStream.id);
    const inNew = new Set(newStreamSubs);
    losingRows = oldAll.filter((id) => !inNew.has(id));
    losingAccess = targetStream.invite_only
      ? losingRows
      : losingRows.filter((id) => view.user(id)?.role === Role.GUEST);
  }

  // The rows. Resolving a topic is not a move (last_moved_time stays).
  const isResolveOnly = plan.resolved || plan.unresolved;
  const movedTime = plan.streamEdited || (plan.topicEdited && !isResolveOnly) ? ctx.now : null;
  store.messageEdits.move(
    [message.id],
    targetStream.id,
    targetTopic,
    movedTime,
    withEntry ? JSON.stringify(entry) : null,
  );
  const others = changedIds.filter((id) => id !== message.id);
  if (others.length > 0) {
    const topicOnly: HistoryEntry = { user_id: plan.user.id, timestamp: ctx.now };
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
  if (plan.streamEdited) {
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
  const movedAll =
    plan.propagateMode === 'change_all' ||
    !plan.visibleInTopic(0).some((m) => !changedIds.includes(m.id));
  return {
    changedIds,
    movedAll,
    targetTopicHasMessages,
    losingRows: new Set(losingRows),
    losingAccess: new Set(losingAccess),
  };
}

/**
 * Who, besides the users with a row for the message, hears about a move out of a channel with
 * public history: the subscribers of the target channel (and, on a channel move, of the old one),
 * except guests who only see the new channel. They get the message as read.
 */
export function moveAudienceWithoutRows(
  ctx: MutationContext,
  plan: ChannelEditPlan,
  hasRow: (uid: number) => boolean,
  losingAccess: ReadonlySet<number>,
): number[] {
  const view = ctx.realm;
  const { origStream, targetStream } = plan;
  if (!origStream.history_public_to_subscribers) return [];
  const extra = new Set<number>();
  const targetSubs = view.channels.subscriberIds(targetStream.id);
  const oldSubs = new Set(view.channels.subscriberIds(origStream.id));
  for (const uid of targetSubs) {
    if (hasRow(uid) || losingAccess.has(uid)) continue;
    // Guests who only see the new channel would not know the message.
    if (plan.streamEdited && view.user(uid)?.role === Role.GUEST && !oldSubs.has(uid)) continue;
    extra.add(uid);
  }
  if (plan.streamEdited) {
    const inTarget = new Set(targetSubs);
    for (const uid of oldSubs) {
      if (hasRow(uid) || losingAccess.has(uid) || inTarget.has(uid)) continue;
      extra.add(uid);
    }
  }
  return [...extra].sort((a, b) => a - b);
}

/** Visibility policies: the more visible one wins (get_visibility_policy_after_merge). */
function mergedPolicy(orig: number, target: number): number {
  if (orig === target) return orig;
  if (orig === 2 || target === 2) return 2;
  return 0;
}

/**
 * Moves users' visibility policies with a whole topic (the reference's user_topic migration):
 * users losing access to the messages lose the policy; others' policy moves to the target topic,
 * merged with one they had there when the target already has messages. Returns the users who
 * followed the original topic.
 */
export function doMoveVisibilityPolicies(
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
