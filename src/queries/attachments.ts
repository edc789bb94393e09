/**
 * Reading uploads: the API's attachment details, a user's uploads, a realm's upload space, and
 * who may open a file. Reference: models Attachment.to_dict, lib/attachments.py
 * (user_attachments, validate_attachment_request, validate_attachment_request_for_spectator_access).
 */
import type { AttachmentMessageRow, AttachmentRow } from '../storage/attachments.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

/** The spec's Attachment detail (also the element of `detached_uploads`). Times in milliseconds. */
export type AttachmentDetail = {
  id: number;
  name: string;
  path_id: string;
  size: number;
  create_time: number;
  messages: { date_sent: number; id: number }[];
};

export function attachmentDetail(
  row: AttachmentRow,
  messages: readonly Pick<AttachmentMessageRow, 'id' | 'date_sent'>[],
): AttachmentDetail {
  return {
    id: row.id,
    name: row.file_name,
    path_id: row.path_id,
    size: row.size,
    create_time: row.create_time * 1000,
    messages: messages.map((m) => ({ date_sent: m.date_sent * 1000, id: m.id })),
  };
}

/** One attachment's detail, its messages read from the store. */
export function readAttachmentDetail(store: ReadStore, row: AttachmentRow): AttachmentDetail {
  return attachmentDetail(row, store.attachments.messagesOf(row.id));
}

/** Every upload of a user with the messages referencing it, oldest first (two queries). */
export function userAttachments(store: ReadStore, ownerId: number): AttachmentDetail[] {
  const rows = store.attachments.byOwner(ownerId);
  const byAttachment = new Map<number, AttachmentMessageRow[]>();
  for (const m of store.attachments.messagesOfOwner(ownerId)) {
    let list = byAttachment.get(m.attachment_id);
    if (!list) byAttachment.set(m.attachment_id, (list = []));
    list.push(m);
  }
  return rows.map((r) => attachmentDetail(r, byAttachment.get(r.id) ?? []));
}

/** Bytes used by every upload of the realm (the API's `upload_space_used`). */
export function uploadSpaceUsed(store: ReadStore, realmId: number): number {
  return store.attachments.spaceUsed(realmId);
}

/**
 * Who may open an upload (the reference's validate_attachment_request):
 * - `null`: no upload of this realm has that path id (answered like a path that never existed);
 * - otherwise the attachment and whether `userId` may read it: its owner; anyone who received a
 *   message referencing it (a user_messages row: direct messages, protected-history channels);
 *   anyone who may read the history of a channel where a message referencing it was sent (public
 *   channels for members, shared-history private channels for subscribers and those the channel's
 *   settings let in, web-public channels).
 * - `userId` null is a spectator (no credentials): only uploads referenced in a web-public channel
 *   of a realm that allows spectators.
 */
export function validateAttachmentRequest(
  store: ReadStore,
  realm: RealmView,
  userId: number | null,
  pathId: string,
): { attachment: AttachmentRow; allowed: boolean } | null {
  const attachment = store.attachments.byPathId(pathId);
  if (!attachment || attachment.realm_id !== realm.id) return null;
  return { attachment, allowed: mayRead(store, realm, userId, attachment) };
}

function mayRead(
  store: ReadStore,
  realm: RealmView,
  userId: number | null,
  attachment: AttachmentRow,
): boolean {
  if (userId === null) {
    if (!realm.settings.enable_spectator_access || realm.deactivated) return false;
    return store.attachments.referencingStreamIds(attachment.id).some((id) => {
      const ch = realm.channels.byId(id);
      return ch !== undefined && ch.is_web_public === 1 && ch.invite_only === 0;
    });
  }
  const user = realm.user(userId);
  if (!user || !user.is_active) return false;
  if (attachment.owner_id === userId) return true;
  if (store.attachments.receivedByUser(attachment.id, userId)) return true;
  return store.attachments.referencingStreamIds(attachment.id).some((id) => {
    const ch = realm.channels.byId(id);
    return ch !== undefined && realm.channels.may(userId, ch, 'history');
  });
}
