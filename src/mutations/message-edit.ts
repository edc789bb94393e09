/**
 * Editing and moving messages: PATCH /messages/{message_id}. Reference: actions/message_edit.py
 * (check_update_message, do_update_message).
 *
 * The endpoint normalized and rendered the new content (and the notices a move may send) before
 * asking; here, inside the transaction, the edit is validated into a plan against the state it
 * commits against (./message-edit-plan.ts), then applied: new content (./message-content-edit.ts),
 * the move (./message-move.ts), one `update_message` event to exactly the users who may see the
 * message(s), and the notification bot's notices (./message-notices.ts).
 */
import type { WireEvent } from '../lib/events.js';
import { apiFlagNames } from '../lib/message-flags.js';
import { htmlToText } from '../lib/search.js';
import type { AttachmentDetail } from '../queries/attachments.js';
import { cachedTopicLinks } from '../queries/messages.js';
import type { MutationContext } from './context.js';
import {
  doEditContent,
  doEditDirectMessage,
  doWriteContent,
  type HistoryEntry,
  type UpdateMessageResult,
} from './message-content-edit.js';
import {
  checkMessageEdit,
  type ChannelEditPlan,
  type EditPlan,
  type UpdateMessageCommand,
} from './message-edit-plan.js';
import {
  doMoveMessages,
  doMoveVisibilityPolicies,
  moveAudienceWithoutRows,
  type MoveOutcome,
} from './message-move.js';
import { doSendMoveNotices } from './message-notices.js';

export type { UpdateMessageCommand } from './message-edit-plan.js';
export type { UpdateMessageResult } from './message-content-edit.js';

/** A checked PATCH /messages/{message_id}: the command (its notices) and the edit plan. */
export type CheckedMessageUpdate = { cmd: UpdateMessageCommand; plan: EditPlan };

/** PATCH /messages/{message_id}: check_update_message (see checkMessageEdit). */
export function checkUpdateMessage(
  ctx: MutationContext,
  cmd: UpdateMessageCommand,
): CheckedMessageUpdate {
  return { cmd, plan: checkMessageEdit(ctx, cmd) };
}

/** do_update_message: applies a checked edit of a direct or a channel message. */
export function doUpdateMessage(
  ctx: MutationContext,
  { cmd, plan }: CheckedMessageUpdate,
): UpdateMessageResult {
  if (plan.kind === 'direct') return doEditDirectMessage(ctx, plan);
  return doUpdateChannelMessage(ctx, cmd, plan);
}

function doUpdateChannelMessage(
  ctx: MutationContext,
  cmd: UpdateMessageCommand,
  plan: ChannelEditPlan,
): UpdateMessageResult {
  const { store, realm: view, now } = ctx;
  const { user, message, content, origStream, origTopic, targetStream, targetTopic } = plan;
  const event: WireEvent = {
    type: 'update_message',
    user_id: user.id,
    edit_timestamp: now,
    message_id: message.id,
    rendering_only: false,
    stream_name: origStream.name,
    stream_id: origStream.id,
  };
  const entry: HistoryEntry = { user_id: user.id, timestamp: now };
  let detachedUploads: AttachmentDetail[] = [];
  let hasAttachment = false;
  const flagsOf = new Map(
    store.messageEdits.userMessageFlags(message.id).map((u) => [u.user_id, u.flags]),
  );

  if (content !== undefined) {
    const r = doEditContent(ctx, message, content, targetTopic, flagsOf, event, entry);
    detachedUploads = r.detachedUploads;
    hasAttachment = r.hasAttachment;
  }
  if (plan.moved) event.propagate_mode = plan.propagateMode;
  if (plan.streamEdited) {
    entry.prev_stream = origStream.id;
    entry.stream = targetStream.id;
    event.orig_subject = origTopic;
    event.new_stream_id = targetStream.id;
  }
  if (plan.topicEdited) {
    event.orig_subject = origTopic;
    event.subject = targetTopic;
    event.topic_links = cachedTopicLinks(store, view, targetTopic);
    entry.prev_topic = origTopic;
    entry.topic = targetTopic;
  }

  const move: MoveOutcome | null = plan.moved
    ? doMoveMessages(ctx, plan, entry, content === undefined)
    : null;
  if (content !== undefined) doWriteContent(ctx, message.id, content, hasAttachment, entry);
  const changedIds = move?.changedIds ?? [message.id];
  // The search index follows topic and content.
  for (const r of store.messageEdits.searchRows(changedIds)) {
    store.messageEdits.reindex(r.id, r.topic, htmlToText(r.rendered_content));
  }
  event.message_ids = changedIds;

  // Who hears about it.
  const losingRows = move?.losingRows ?? new Set<number>();
  const losingAccess = move?.losingAccess ?? new Set<number>();
  const flagsByUser: Record<number, readonly string[]> = {};
  const notified: number[] = [];
  for (const [uid, f] of flagsOf) {
    if (losingRows.has(uid)) continue;
    if (view.user(uid)?.is_active !== 1) continue;
    flagsByUser[uid] = apiFlagNames(f);
    notified.push(uid);
  }
  for (const uid of moveAudienceWithoutRows(ctx, plan, (id) => flagsOf.has(id), losingAccess)) {
    flagsByUser[uid] = ['read'];
    notified.push(uid);
  }

  // Visibility policies follow a whole-topic move.
  let followersOfOrig = new Set<number>();
  if (move?.movedAll) {
    followersOfOrig = doMoveVisibilityPolicies(ctx, {
      origStream,
      origTopic,
      targetStream,
      targetTopic,
      targetTopicHasMessages: move.targetTopicHasMessages,
      losingAccess,
    });
  }
  ctx.emit(event, notified, { flags: flagsByUser });

  if (move) doSendMoveNotices(ctx, cmd, plan, move, followersOfOrig);
  return { detached_uploads: detachedUploads, changed: changedIds.length };
}
