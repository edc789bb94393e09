/**
 * New content for a message (the content half of PATCH /messages/{message_id}). Reference:
 * actions/message_edit.py (update_message_content, update_user_message_flags).
 */
import type { WireEvent } from '../lib/events.js';
import { isMeMessage, type PreparedContent } from '../lib/message-content.js';
import { apiFlagNames, MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import type { AttachmentDetail } from '../queries/attachments.js';
import type { MessageRow } from '../storage/messages.js';
import { updateMessageAttachments } from './attachments.js';
import type { MutationContext } from './context.js';
import type { DirectEditPlan } from './message-edit-plan.js';
import { finishThumbnails } from './thumbnails.js';
import { planMissedMessageMailForEdit, scheduleMissedMessageMail } from './missed-messages.js';

/** Rendered-content version stored with history entries (the reference's markdown version). */
const RENDERED_CONTENT_VERSION = 1;

export type UpdateMessageResult = { detached_uploads: AttachmentDetail[]; changed: number };

/** A history entry of an edit, as stored (newest first) in messages.edit_history. */
export type HistoryEntry = Record<string, unknown>;

/**
 * New content of one message: recomputes every recipient's mention and alert-word flags
 * (update_user_message_flags), updates the upload links, and fills the event and history entry.
 * The row itself is written by the caller (with the history entry complete).
 */
export function doEditContent(
  ctx: MutationContext,
  message: MessageRow,
  content: PreparedContent,
  topic: string,
  flagsOf: Map<number, number>,
  event: WireEvent,
  entry: HistoryEntry,
): { detachedUploads: AttachmentDetail[]; hasAttachment: boolean } {
  const { store, realm: view } = ctx;
  const r = content.rendered;
  // A thumbnail made since the rendering shows at once (the rendering saw a placeholder).
  r.rendered_content = finishThumbnails(store, view.id, r.rendered_content);
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
  const before = new Map(flagsOf);
  for (const [uid, old] of before) {
    let f =
      old &
      ~(B.mentioned | B.has_alert_word | B.stream_wildcard_mentioned | B.topic_wildcard_mentioned);
    if (mentioned.has(uid)) f |= B.mentioned;
    if (alerted.has(uid)) f |= B.has_alert_word;
    if (r.mentions_stream_wildcard && message.stream_id !== null) f |= B.stream_wildcard_mentioned;
    if (participants?.has(uid)) f |= B.topic_wildcard_mentioned;
    flagsOf.set(uid, f);
  }
  // Users the edit newly mentions who are away are mailed about it (docs/mail.md).
  const missed = planMissedMessageMailForEdit(
    ctx,
    message,
    typeof entry.user_id === 'number' ? entry.user_id : message.sender_id,
    {
      senderId: message.sender_id,
      channel: message.stream_id === null ? null : { id: message.stream_id, topic },
      mentionedUserIds: new Set(r.mentions_user_ids),
      mentionedGroupIds: r.mentions_user_group_ids,
    },
    before,
    flagsOf,
  );
  for (const [uid, f] of flagsOf) {
    if (f !== before.get(uid)) store.messageEdits.setUserFlags(uid, message.id, f);
  }
  scheduleMissedMessageMail(ctx, message.id, missed);
  const attachments = updateMessageAttachments(ctx, {
    senderId: message.sender_id,
    messageId: message.id,
    pathIds: r.potential_attachment_path_ids,
  });
  return { detachedUploads: attachments.detachedUploads, hasAttachment: attachments.hasAttachment };
}

/** Writes a message's new content with its history entry prepended. */
export function doWriteContent(
  ctx: MutationContext,
  messageId: number,
  content: PreparedContent,
  hasAttachment: boolean,
  entry: HistoryEntry,
): void {
  ctx.store.messageEdits.updateContent(messageId, {
    content: content.content,
    rendered_content: content.rendered.rendered_content,
    has_attachment: hasAttachment,
    has_image: content.rendered.has_image,
    has_link: content.rendered.has_link,
    last_edit_time: ctx.now,
    entry: JSON.stringify(entry),
  });
}

/** A content edit of a direct message: only its recipients hear about it. */
export function doEditDirectMessage(
  ctx: MutationContext,
  plan: DirectEditPlan,
): UpdateMessageResult {
  const { store, realm: view } = ctx;
  const { message, content } = plan;
  const event: WireEvent = {
    type: 'update_message',
    user_id: message.sender_id,
    edit_timestamp: ctx.now,
    message_id: message.id,
    rendering_only: false,
  };
  const entry: HistoryEntry = { user_id: message.sender_id, timestamp: ctx.now };
  const flagsOf = new Map(
    store.messageEdits.userMessageFlags(message.id).map((u) => [u.user_id, u.flags]),
  );
  const { detachedUploads, hasAttachment } = doEditContent(
    ctx,
    message,
    content,
    '',
    flagsOf,
    event,
    entry,
  );
  doWriteContent(ctx, message.id, content, hasAttachment, entry);
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
