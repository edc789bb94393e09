/** SQL for saved snippets (saved_snippets). */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type SavedSnippetRow = {
  id: number;
  user_id: number;
  title: string;
  content: string;
  date_created: number;
};

export function savedSnippetStatements(db: DB, ids: IdSource) {
  const byUser = db.prepare<[number], SavedSnippetRow>(
    'SELECT id, user_id, title, content, date_created FROM saved_snippets WHERE user_id = ? ORDER BY id',
  );
  const byId = db.prepare<[number, number], SavedSnippetRow>(
    'SELECT id, user_id, title, content, date_created FROM saved_snippets WHERE user_id = ? AND id = ?',
  );
  const insert = db.prepare<[number | null, number, number, string, string, number], void>(
    'INSERT INTO saved_snippets (id, realm_id, user_id, title, content, date_created) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const update = db.prepare<[string, string, number], void>(
    'UPDATE saved_snippets SET title = ?, content = ? WHERE id = ?',
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM saved_snippets WHERE user_id = ? AND id = ?',
  );
  return {
    /** A user's snippets, oldest first. */
    byUser: (userId: number): SavedSnippetRow[] => byUser.all(userId),
    byId: (userId: number, id: number): SavedSnippetRow | undefined => byId.get(userId, id),
    insert: (realmId: number, userId: number, title: string, content: string, now: number) =>
      Number(
        insert.run(ids.nextId('saved_snippets'), realmId, userId, title, content, now)
          .lastInsertRowid,
      ),
    update: (id: number, title: string, content: string): void =>
      void update.run(title, content, id),
    remove: (userId: number, id: number): boolean => remove.run(userId, id).changes > 0,
  };
}
