/** SQL for drafts. */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type DraftType = '' | 'stream' | 'private';

export type DraftRow = {
  id: number;
  user_id: number;
  type: DraftType;
  stream_id: number | null;
  /** Direct-message recipients as `to` lists them, comma-separated ('' otherwise). */
  user_ids: string;
  topic: string;
  content: string;
  last_edit_time: number;
};

export type DraftValues = Omit<DraftRow, 'id' | 'user_id'>;

export function draftStatements(db: DB, ids: IdSource) {
  const byUserOldestFirst = db.prepare<[number], DraftRow>(
    'SELECT * FROM drafts WHERE user_id = ? ORDER BY last_edit_time, id',
  );
  const byUserNewestFirst = db.prepare<[number, number], DraftRow>(
    'SELECT * FROM drafts WHERE user_id = ? ORDER BY last_edit_time DESC, id DESC LIMIT ?',
  );
  const byId = db.prepare<[number, number], DraftRow>(
    'SELECT * FROM drafts WHERE user_id = ? AND id = ?',
  );
  const insert = db.prepare<
    [number | null, number, string, number | null, string, string, string, number],
    void
  >(
    `INSERT INTO drafts (id, user_id, type, stream_id, user_ids, topic, content, last_edit_time)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare<[string, number | null, string, string, string, number, number], void>(
    `UPDATE drafts SET type = ?, stream_id = ?, user_ids = ?, topic = ?, content = ?,
       last_edit_time = ? WHERE id = ?`,
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM drafts WHERE user_id = ? AND id = ?',
  );
  const removeAll = db.prepare<[number], void>('DELETE FROM drafts WHERE user_id = ?');
  return {
    /** A user's drafts, least recently edited first (GET /drafts). */
    byUser: (userId: number): DraftRow[] => byUserOldestFirst.all(userId),
    /** A user's `limit` most recently edited drafts, newest first (register). */
    recentByUser: (userId: number, limit: number): DraftRow[] =>
      byUserNewestFirst.all(userId, limit),
    byId: (userId: number, id: number): DraftRow | undefined => byId.get(userId, id),
    insert: (userId: number, d: DraftValues): number =>
      Number(
        insert.run(
          ids.nextId('drafts'),
          userId,
          d.type,
          d.stream_id,
          d.user_ids,
          d.topic,
          d.content,
          d.last_edit_time,
        ).lastInsertRowid,
      ),
    update: (id: number, d: DraftValues): void =>
      void update.run(d.type, d.stream_id, d.user_ids, d.topic, d.content, d.last_edit_time, id),
    remove: (userId: number, id: number): boolean => remove.run(userId, id).changes > 0,
    /** Every draft of a user; how many there were. */
    removeAll: (userId: number): number => removeAll.run(userId).changes,
  };
}
export type DraftStatements = ReturnType<typeof draftStatements>;
