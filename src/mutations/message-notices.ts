/**
 * The notification bot's notices of an edit: "marked this topic as resolved/unresolved" for a
 * pure resolve, and the breadcrumbs of a move (new topic first, then old), worded as the
 * reference's (src/lib/notices.ts) and sent through the one internal send. Reference:
 * actions/message_edit.py (maybe_send_resolve_topic_notifications,
 * maybe_delete_previous_resolve_topic_notification, send_message_moved_breadcrumbs).
 *
 * The notices were rendered by the endpoint, before the realm actor ran the edit, for the facts it
 * read then; here the edit picks the wording its outcome calls for and checks the facts still hold
 * (preparedNotice).
 */
import {
  MessageType,
  preparedNotice,
  resolveNoticeKind,
  RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS,
  tellsNewThread,
  type EditShape,
  type MoveFacts,
  type MoveNoticeKind,
} from '../lib/notices.js';
import type { Channel } from '../queries/channels-view.js';
import type { MutationContext } from './context.js';
import type { ChannelEditPlan, UpdateMessageCommand } from './message-edit-plan.js';
import type { MoveOutcome } from './message-move.js';
import { doDeleteMessage } from './messages.js';
import { sendInternalMessage } from './internal-send.js';

export function editShape(cmd: UpdateMessageCommand, plan: ChannelEditPlan): EditShape {
  return {
    topicEdited: plan.topicEdited,
    streamEdited: plan.streamEdited,
    contentEdited: plan.content !== undefined,
    resolved: plan.resolved,
    unresolved: plan.unresolved,
    toNewThread: cmd.send_notification_to_new_thread,
    toOldThread: cmd.send_notification_to_old_thread,
  };
}

/** Sends (or, for an undone resolve, deletes) the notices of a move. */
export function doSendMoveNotices(
  ctx: MutationContext,
  cmd: UpdateMessageCommand,
  plan: ChannelEditPlan,
  move: MoveOutcome,
  followersOfOrig: ReadonlySet<number>,
): void {
  const { user, origStream, origTopic, targetStream, targetTopic } = plan;
  const shape = editShape(cmd, plan);
  const facts: MoveFacts = {
    user: { id: user.id, full_name: user.full_name },
    message_id: plan.message.id,
    orig: { stream_id: origStream.id, stream_name: origStream.name, topic: origTopic },
    target: { stream_id: targetStream.id, stream_name: targetStream.name, topic: targetTopic },
  };
  const count = move.changedIds.length;
  const send = (kind: MoveNoticeKind, ch: Channel, topic: string, extra = {}) =>
    sendInternalMessage(ctx, {
      ...preparedNotice(cmd.notices, kind, facts, count),
      to: { kind: 'channel', channel: ch.id, topic },
      readFor: user.id,
      ...extra,
    }).id;

  let resolveNoticeId: number | null = null;
  const resolveKind = resolveNoticeKind(shape);
  if (resolveKind !== null && !doDeleteRecentResolveNotice(ctx, origStream, targetTopic)) {
    resolveNoticeId = send(resolveKind, origStream, targetTopic, {
      unreadOnlyFor: followersOfOrig,
      type: MessageType.RESOLVE_TOPIC_NOTIFICATION,
    });
  }
  if (tellsNewThread(shape)) {
    const except = new Set<number>(move.changedIds);
    if (resolveNoticeId !== null) except.add(resolveNoticeId);
    const store = ctx.store;
    const preexisting = (
      ctx.realm.channels.may(user.id, targetStream, 'history')
        ? store.messageEdits.topicMessages(targetStream.id, targetTopic)
        : store.messageEdits.receivedTopicMessages(user.id, targetStream.id, targetTopic)
    ).some((m) => !except.has(m.id));
    const kind =
      !preexisting && move.movedAll
        ? 'moved_here_all'
        : count === 1
          ? 'moved_here_one'
          : 'moved_here_many';
    send(kind, targetStream, targetTopic);
  }
  if (shape.toOldThread) {
    const kind = move.movedAll
      ? 'moved_away_all'
      : count === 1
        ? 'moved_away_one'
        : 'moved_away_many';
    send(kind, origStream, origTopic);
  }
}

/**
 * Undoing a resolve (or an unresolve) soon after: when the topic's newest message is a resolve
 * notice younger than the grace period, it is deleted and no new notice is sent, so that a topic
 * resolved by mistake and unresolved at once does not collect a pair of notices.
 */
function doDeleteRecentResolveNotice(ctx: MutationContext, ch: Channel, topic: string): boolean {
  const last = ctx.store.messageEdits.lastTopicMessage(ch.id, topic);
  if (!last || last.type !== MessageType.RESOLVE_TOPIC_NOTIFICATION) return false;
  if (ctx.now - last.date_sent > RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS) return false;
  doDeleteMessage(ctx, ctx.store.messages.byId(last.id)!);
  return true;
}
