/** SQL for a realm's custom emoji. */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type RealmEmojiRow = {
  id: number;
  realm_id: number;
  name: string;
  author_id: number | null;
  file_name: string;
  is_animated: number;
  deactivated: number;
};

export function realmEmojiStatements(db: DB, ids: IdSource) {
  const byRealm = db.prepare<[number], RealmEmojiRow>(
    'SELECT * FROM realm_emoji WHERE realm_id = ? ORDER BY id',
  );
  const activeByName = db.prepare<[number, string], RealmEmojiRow>(
    'SELECT * FROM realm_emoji WHERE realm_id = ? AND name = ? AND deactivated = 0',
  );
  const insert = db.prepare<[number | null, number, string, number | null, string, number], void>(
    `INSERT INTO realm_emoji (id, realm_id, name, author_id, file_name, is_animated)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const setFileName = db.prepare<[string, number], void>(
    'UPDATE realm_emoji SET file_name = ? WHERE id = ?',
  );
  const deactivate = db.prepare<[number], void>(
    'UPDATE realm_emoji SET deactivated = 1 WHERE id = ?',
  );
  return {
    /** Every custom emoji of the realm, deactivated ones included, by id. */
    byRealm: (realmId: number): RealmEmojiRow[] => byRealm.all(realmId),
    activeByName: (realmId: number, name: string): RealmEmojiRow | undefined =>
      activeByName.get(realmId, name),
    /** Inserts an emoji (its file name is set once the id is known); returns its id. */
    insert(realmId: number, name: string, authorId: number | null, isAnimated: boolean): number {
      const id = ids.nextId('realm_emoji');
      return Number(
        insert.run(id, realmId, name, authorId, '', isAnimated ? 1 : 0).lastInsertRowid,
      );
    },
    setFileName: (id: number, fileName: string): void => void setFileName.run(fileName, id),
    deactivate: (id: number): void => void deactivate.run(id),
  };
}
export type RealmEmojiStatements = ReturnType<typeof realmEmojiStatements>;
