/** SQL for uploaded images and their thumbnails (image_attachments). */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type ImageAttachmentRow = {
  id: number;
  realm_id: number;
  path_id: string;
  original_width_px: number;
  original_height_px: number;
  frames: number;
  content_type: string;
  /** JSON: StoredThumbnail[] (src/media/thumbnail-formats.ts). */
  thumbnail_metadata: string;
};

export function imageAttachmentStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<Omit<ImageAttachmentRow, 'id' | 'thumbnail_metadata'> & WithId, void>(
    `INSERT OR IGNORE INTO image_attachments
       (id, realm_id, path_id, original_width_px, original_height_px, frames, content_type)
     VALUES (@id, @realm_id, @path_id, @original_width_px, @original_height_px, @frames, @content_type)`,
  );
  const byId = db.prepare<[number], ImageAttachmentRow>(
    'SELECT * FROM image_attachments WHERE id = ?',
  );
  const byPathId = db.prepare<[string], ImageAttachmentRow>(
    'SELECT * FROM image_attachments WHERE path_id = ?',
  );
  const byPathIds = db.prepare<[number, string], ImageAttachmentRow>(
    `SELECT * FROM image_attachments
     WHERE realm_id = ? AND path_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  const setThumbnails = db.prepare<[string, number], void>(
    'UPDATE image_attachments SET thumbnail_metadata = ? WHERE id = ?',
  );
  const remove = db.prepare<[number], void>('DELETE FROM image_attachments WHERE id = ?');
  const removeByPathId = db.prepare<[string], void>(
    'DELETE FROM image_attachments WHERE path_id = ?',
  );
  const pending = db
    .prepare<[number], number>(
      `SELECT id FROM image_attachments WHERE thumbnail_metadata = '[]' ORDER BY id LIMIT ?`,
    )
    .pluck();
  const messagesWith = db
    .prepare<[string], number>(
      `SELECT am.message_id FROM attachments a
       JOIN attachment_messages am ON am.attachment_id = a.id
       WHERE a.path_id = ? ORDER BY am.message_id`,
    )
    .pluck();
  return {
    insert: (row: Omit<ImageAttachmentRow, 'id' | 'thumbnail_metadata'>): void => {
      insert.run({ ...row, id: ids.nextId('image_attachments') });
    },
    byId: (id: number): ImageAttachmentRow | undefined => byId.get(id),
    byPathId: (pathId: string): ImageAttachmentRow | undefined => byPathId.get(pathId),
    byPathIds: (realmId: number, pathIds: readonly string[]): ImageAttachmentRow[] =>
      pathIds.length === 0 ? [] : byPathIds.all(realmId, JSON.stringify(pathIds)),
    setThumbnails: (id: number, metadataJson: string): void => {
      setThumbnails.run(metadataJson, id);
    },
    remove: (id: number): void => {
      remove.run(id);
    },
    removeByPathId: (pathId: string): void => {
      removeByPathId.run(pathId);
    },
    /** Rows with no thumbnail yet (to queue again at start), oldest first. */
    pending: (limit: number): number[] => pending.all(limit),
    /** Messages that link the upload `pathId`. */
    messagesWith: (pathId: string): number[] => messagesWith.all(pathId),
  };
}
