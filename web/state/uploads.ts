/**
 * The user's uploads as the chat state keeps them from `attachment` events: a module of its own,
 * part of the first load, while the Uploaded files panel's parts (settings-more.ts) load with the
 * settings.
 */

/** The API's Attachment: times in milliseconds. */
export type Attachment = {
  id: number;
  name: string;
  path_id: string;
  size: number;
  create_time: number;
  messages: { id: number; date_sent: number }[];
};

export type AttachmentEvent = {
  op: 'add' | 'update' | 'remove';
  attachment: Attachment | { id: number };
  upload_space_used?: number;
};

/** The user's uploads once fetched (GET /attachments), kept by `attachment` events. */
export type Uploads = { list: Attachment[]; spaceUsed: number | null };

/** An `attachment` event applied: a new list (the same when nothing changed). */
export function applyAttachmentEvent(u: Uploads, e: AttachmentEvent): Uploads {
  const id = e.attachment.id;
  const spaceUsed = e.upload_space_used ?? u.spaceUsed;
  if (e.op === 'remove') return { list: u.list.filter((a) => a.id !== id), spaceUsed };
  if (!('path_id' in e.attachment)) return { list: u.list, spaceUsed };
  const a = e.attachment;
  const at = u.list.findIndex((x) => x.id === id);
  const list = at < 0 ? [...u.list, a] : u.list.map((x) => (x.id === id ? a : x));
  return { list, spaceUsed };
}
