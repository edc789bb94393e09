/**
 * Uploads as stored state: recording a new upload, deleting one, and the links between uploads
 * and the messages that reference them. Reference: lib/upload/base.py (create_attachment),
 * lib/attachments.py (access_attachment_by_id, remove_attachment), actions/uploads.py
 * (notify_attachment_update, do_claim_attachments), actions/message_edit.py
 * (check_attachment_reference_change).
 *
 * Every change emits an `attachment` event (`add`, `update`, `remove`) to the upload's owner only,
 * with the realm's `upload_space_used` after the change.
 *
 * For the message area (these run inside its mutations, in the same transaction; sending and
 * deleting call them):
 *   claimAttachments(ctx, { senderId, messageId, pathIds })        after inserting a sent message
 *   updateMessageAttachments(ctx, { senderId, messageId, pathIds }) when an edit changes content
 *   releaseMessageAttachments(ctx, { messageIds })                  before deleting messages
 * `pathIds` are the rendered content's `potential_attachment_path_ids` (src/lib/markdown).
 */
import { InvalidMessagesError, JsonableError } from '../lib/errors.js';
import {
  attachmentDetail,
  readAttachmentDetail,
  uploadSpaceUsed,
  validateAttachmentRequest,
  type AttachmentDetail,
} from '../queries/attachments.js';
import type { AttachmentRow } from '../storage/attachments.js';
import { actingUser, type MutationContext } from './context.js';

export class InvalidAttachmentError extends JsonableError {
  constructor() {
    super('Invalid attachment');
  }
}

function notify(
  ctx: MutationContext,
  ownerId: number,
  op: 'add' | 'update' | 'remove',
  attachment: AttachmentDetail | { id: number },
): void {
  ctx.emit(
    {
      type: 'attachment',
      op,
      attachment,
      upload_space_used: uploadSpaceUsed(ctx.store, ctx.realm.id),
    },
    [ownerId],
  );
}

export type CreateAttachmentCommand = {
  owner_id: number;
  path_id: string;
  /** The name the client gave, unquoted (shown in the API; the path id has the sanitized one). */
  file_name: string;
  content_type: string;
  size: number;
  /** What the upload holds when it decoded as an image (it gets thumbnails). */
  image?: { width: number; height: number; frames: number };
};

/** Records an upload whose file is already in place under DATA_DIR/uploads/<path_id>. */
export function checkCreateAttachment(
  ctx: MutationContext,
  cmd: CreateAttachmentCommand,
): CreateAttachmentCommand {
  actingUser(ctx.realm, cmd.owner_id);
  return cmd;
}

export function doCreateAttachment(
  ctx: MutationContext,
  cmd: CreateAttachmentCommand,
): { id: number; image_id: number | null } {
  const row: Omit<AttachmentRow, 'id'> = {
    realm_id: ctx.realm.id,
    owner_id: cmd.owner_id,
    path_id: cmd.path_id,
    file_name: cmd.file_name,
    content_type: cmd.content_type,
    size: cmd.size,
    create_time: ctx.now,
  };
  const id = ctx.store.attachments.insert(row);
  let imageId: number | null = null;
  if (cmd.image) {
    ctx.store.imageAttachments.insert({
      realm_id: ctx.realm.id,
      path_id: cmd.path_id,
      original_width_px: cmd.image.width,
      original_height_px: cmd.image.height,
      frames: cmd.image.frames,
      content_type: cmd.content_type,
    });
    imageId = ctx.store.imageAttachments.byPathId(cmd.path_id)?.id ?? null;
  }
  notify(ctx, cmd.owner_id, 'add', attachmentDetail({ id, ...row }, []));
  return { id, image_id: imageId };
}

/**
 * DELETE /attachments/{id}: only the owner may delete; anything else (unknown id, another user's,
 * another realm's) is "Invalid attachment". Returns the path id: the caller removes the file
 * after COMMIT (a crash in between leaves an unreferenced file, never a row without its file
 * being served).
 */
export function checkRemoveAttachment(
  ctx: MutationContext,
  cmd: { user_id: number; attachment_id: number },
): AttachmentRow {
  const row = ctx.store.attachments.byId(cmd.attachment_id);
  if (!row || row.realm_id !== ctx.realm.id || row.owner_id !== cmd.user_id) {
    throw new InvalidAttachmentError();
  }
  return row;
}

export function doRemoveAttachment(ctx: MutationContext, row: AttachmentRow): { path_id: string } {
  ctx.store.attachments.remove(row.id);
  ctx.store.imageAttachments.removeByPathId(row.path_id);
  notify(ctx, row.owner_id, 'remove', { id: row.id });
  return { path_id: row.path_id };
}

/**
 * The attachment a path id from message content names, if the sender may share it: their own
 * upload, or one they can already see through another message (the reference lets users re-share
 * what they can read). Links may carry the path percent-encoded; both forms are tried.
 */
function shareable(ctx: MutationContext, senderId: number, pathId: string): AttachmentRow | null {
  const forms = [pathId];
  try {
    const decoded = decodeURIComponent(pathId);
    if (decoded !== pathId) forms.push(decoded);
  } catch {
    // not percent-encoded
  }
  for (const form of forms) {
    const access = validateAttachmentRequest(ctx.store, ctx.realm, senderId, form);
    if (access) return access.allowed ? access.attachment : null;
  }
  return null;
}

/**
 * Links the uploads a new message references to it (the reference's do_claim_attachments). Path
 * ids that name no upload of this realm, or one the sender may not see, are skipped. Each newly
 * linked upload's owner gets an `attachment` `update` event. Returns the path ids linked: the
 * message's `has_attachment` is whether there is any.
 */
export function claimAttachments(
  ctx: MutationContext,
  msg: { senderId: number; messageId: number; pathIds: readonly string[] },
): { claimed: string[] } {
  const claimed: string[] = [];
  for (const pathId of new Set(msg.pathIds)) {
    const row = shareable(ctx, msg.senderId, pathId);
    if (!row || claimed.includes(row.path_id)) continue;
    ctx.store.attachments.link(row.id, msg.messageId);
    claimed.push(row.path_id);
    notify(ctx, row.owner_id, 'update', readAttachmentDetail(ctx.store, row));
  }
  return { claimed };
}

/**
 * After an edit changed a message's content (the reference's check_attachment_reference_change):
 * uploads no longer linked lose the message, newly linked ones are claimed. `detachedUploads` are
 * the sender's uploads that this edit left referenced by no message at all (the edit response's
 * `detached_uploads`, so the client can offer to delete them); `hasAttachment` is the message's
 * new `has_attachment`.
 */
export function updateMessageAttachments(
  ctx: MutationContext,
  msg: { senderId: number; messageId: number; pathIds: readonly string[] },
): { hasAttachment: boolean; detachedUploads: AttachmentDetail[] } {
  const previous = ctx.store.attachments.ofMessage(msg.messageId);
  const wanted = new Set<string>();
  for (const p of msg.pathIds) {
    wanted.add(p);
    try {
      wanted.add(decodeURIComponent(p));
    } catch {
      // not percent-encoded
    }
  }
  const detachedUploads: AttachmentDetail[] = [];
  for (const row of previous) {
    if (wanted.has(row.path_id)) continue;
    ctx.store.attachments.unlink(row.id, msg.messageId);
    const detail = readAttachmentDetail(ctx.store, row);
    notify(ctx, row.owner_id, 'update', detail);
    if (detail.messages.length === 0 && row.owner_id === msg.senderId) detachedUploads.push(detail);
  }
  const kept = new Set(previous.map((r) => r.path_id));
  claimAttachments(ctx, {
    senderId: msg.senderId,
    messageId: msg.messageId,
    pathIds: msg.pathIds.filter((p) => !kept.has(p)),
  });
  return {
    hasAttachment: ctx.store.attachments.ofMessage(msg.messageId).length > 0,
    detachedUploads,
  };
}

/**
 * Before messages are deleted: removes their links to uploads and tells each affected owner
 * (`update`). The uploads themselves stay (their owners can still list and delete them);
 * `detachedUploads` are those now referenced by no message.
 */
export function releaseMessageAttachments(
  ctx: MutationContext,
  msg: { messageIds: readonly number[] },
): { detachedUploads: AttachmentDetail[] } {
  const affected = new Map<number, AttachmentRow>();
  for (const messageId of msg.messageIds) {
    for (const row of ctx.store.attachments.ofMessage(messageId)) {
      ctx.store.attachments.unlink(row.id, messageId);
      affected.set(row.id, row);
    }
  }
  const detachedUploads: AttachmentDetail[] = [];
  for (const row of [...affected.values()].sort((a, b) => a.id - b.id)) {
    const detail = readAttachmentDetail(ctx.store, row);
    notify(ctx, row.owner_id, 'update', detail);
    if (detail.messages.length === 0) detachedUploads.push(detail);
  }
  return { detachedUploads };
}

// ---- realm command (internal, for tests of relinking until message editing calls the function
// above inside its own mutations) ----------------------------------------------------------------

function checkMessages(ctx: MutationContext, ids: readonly number[]): void {
  for (const id of ids) {
    if (ctx.store.attachments.messageRealm(id) !== ctx.realm.id) {
      throw new InvalidMessagesError();
    }
  }
}

export function doUpdateMessageAttachments(
  ctx: MutationContext,
  cmd: { sender_id: number; message_id: number; path_ids: readonly string[] },
): { has_attachment: boolean; detached_uploads: AttachmentDetail[] } {
  checkMessages(ctx, [cmd.message_id]);
  const r = updateMessageAttachments(ctx, {
    senderId: cmd.sender_id,
    messageId: cmd.message_id,
    pathIds: cmd.path_ids,
  });
  return { has_attachment: r.hasAttachment, detached_uploads: r.detachedUploads };
}
