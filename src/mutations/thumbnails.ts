/**
 * Thumbnails of uploaded images as stored state (the reference's ImageAttachment rows and
 * ensure_thumbnails' bookkeeping). The images themselves are made off the event loop by
 * src/media/thumbnailer.ts; these mutations record the result and re-render what depends on it:
 *
 *   thumbnail.done    the thumbnails of an image were made: recorded; every message that links
 *                     the upload and still shows the loading placeholder gets the thumbnail, and
 *                     its readers an `update_message` event with `rendering_only: true`
 *   thumbnail.failed  the upload did not decode after all: the row goes, and so do the previews
 *
 * finishThumbnails() is for the message area: a message rendered while a thumbnail was being made
 * gets it when it is stored (inside the same transaction, so it cannot miss it).
 */
import type { WireEvent } from '../lib/events.js';
import { apiFlagNames } from '../lib/message-flags.js';
import {
  imageFacts,
  rewriteThumbnails,
  uploadPreviewOf,
  type StoredThumbnail,
} from '../lib/thumbnail-formats.js';
import type { ImageAttachmentRow } from '../storage/image-attachments.js';
import type { Store } from '../storage/store.js';
import type { MutationContext } from './context.js';

/** `html` with every placeholder whose thumbnail is ready by now replaced. */
export function finishThumbnails(store: Store, realmId: number, html: string): string {
  if (!html.includes('image-loading-placeholder')) return html;
  const ids = [
    ...html.matchAll(
      /<a href="\/user_uploads\/([^"]+)"[^>]*><img class="image-loading-placeholder"/g,
    ),
  ].map((m) => m[1]!.replace(/&amp;/g, '&'));
  let out = html;
  for (const row of store.imageAttachments.byPathIds(realmId, ids)) {
    const facts = imageFacts(row);
    if (facts.thumbnails.length === 0) continue;
    out = rewriteThumbnails(out, row.path_id, uploadPreviewOf(row.path_id, facts)) ?? out;
  }
  return out;
}

/** Re-renders the messages that link `pathId` and tells their readers. */
function rerenderMessages(ctx: MutationContext, row: ImageAttachmentRow, remove: boolean): number {
  const preview = remove ? null : uploadPreviewOf(row.path_id, imageFacts(row));
  let changed = 0;
  for (const messageId of ctx.store.imageAttachments.messagesWith(row.path_id)) {
    const message = ctx.store.messages.byId(messageId);
    if (!message || message.realm_id !== ctx.realm.id) continue;
    const html = rewriteThumbnails(message.rendered_content, row.path_id, preview);
    if (html === null) continue;
    ctx.store.messageEdits.setRenderedContent(messageId, html);
    changed++;
    const event: WireEvent = {
      type: 'update_message',
      user_id: null,
      edit_timestamp: ctx.now,
      message_id: messageId,
      message_ids: [messageId],
      content: message.content,
      rendered_content: html,
      rendering_only: true,
    };
    const flags: Record<number, readonly string[]> = {};
    const users: number[] = [];
    for (const um of ctx.store.messageEdits.userMessageFlags(messageId)) {
      if (ctx.realm.user(um.user_id)?.is_active !== 1) continue;
      flags[um.user_id] = apiFlagNames(um.flags);
      users.push(um.user_id);
    }
    ctx.emit(event, users, { flags });
  }
  return changed;
}

export function doThumbnailDone(
  ctx: MutationContext,
  cmd: { image_id: number; thumbnails: readonly StoredThumbnail[] },
): { messages: number } {
  const row = ctx.store.imageAttachments.byId(cmd.image_id);
  if (!row || row.realm_id !== ctx.realm.id) return { messages: 0 };
  const json = JSON.stringify(cmd.thumbnails);
  ctx.store.imageAttachments.setThumbnails(row.id, json);
  return { messages: rerenderMessages(ctx, { ...row, thumbnail_metadata: json }, false) };
}

export function doThumbnailFailed(
  ctx: MutationContext,
  cmd: { image_id: number },
): { messages: number } {
  const row = ctx.store.imageAttachments.byId(cmd.image_id);
  if (!row || row.realm_id !== ctx.realm.id) return { messages: 0 };
  ctx.store.imageAttachments.remove(row.id);
  return { messages: rerenderMessages(ctx, row, true) };
}
