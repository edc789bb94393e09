/** SQL for alert words. */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type AlertWordRow = { id: number; realm_id: number; user_id: number; word: string };

export function alertWordStatements(db: DB, ids: IdSource) {
  const byUser = db
    .prepare<[number], string>('SELECT word FROM alert_words WHERE user_id = ? ORDER BY id')
    .pluck();
  const byUserRows = db.prepare<[number], AlertWordRow>(
    'SELECT * FROM alert_words WHERE user_id = ? ORDER BY id',
  );
  const byRealm = db.prepare<[number], AlertWordRow>(
    'SELECT * FROM alert_words WHERE realm_id = ? ORDER BY id',
  );
  const insert = db.prepare<[number | null, number, number, string], void>(
    'INSERT INTO alert_words (id, realm_id, user_id, word) VALUES (?, ?, ?, ?)',
  );
  const remove = db.prepare<[number], void>('DELETE FROM alert_words WHERE id = ?');
  return {
    /** A user's words, in the order added. */
    byUser: (userId: number): string[] => byUser.all(userId),
    rowsByUser: (userId: number): AlertWordRow[] => byUserRows.all(userId),
    /** Every word of a realm (the renderer's alert-word context). */
    byRealm: (realmId: number): AlertWordRow[] => byRealm.all(realmId),
    insert: (realmId: number, userId: number, word: string): void =>
      void insert.run(ids.nextId('alert_words'), realmId, userId, word),
    remove: (id: number): void => void remove.run(id),
  };
}
export type AlertWordStatements = ReturnType<typeof alertWordStatements>;
