/** SQL for code playgrounds (realm_playgrounds). */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type PlaygroundRow = {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
};

export function playgroundStatements(db: DB, ids: IdSource) {
  const byRealm = db.prepare<[number], PlaygroundRow>(
    'SELECT id, name, pygments_language, url_template FROM realm_playgrounds WHERE realm_id = ? ORDER BY id',
  );
  const exists = db
    .prepare<[number, string, string], number>(
      'SELECT 1 FROM realm_playgrounds WHERE realm_id = ? AND pygments_language = ? AND name = ?',
    )
    .pluck();
  const insert = db.prepare<[number | null, number, string, string, string], void>(
    'INSERT INTO realm_playgrounds (id, realm_id, name, pygments_language, url_template) VALUES (?, ?, ?, ?, ?)',
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM realm_playgrounds WHERE realm_id = ? AND id = ?',
  );
  return {
    byRealm: (realmId: number): PlaygroundRow[] => byRealm.all(realmId),
    exists: (realmId: number, language: string, name: string): boolean =>
      exists.get(realmId, language, name) !== undefined,
    insert: (realmId: number, p: Omit<PlaygroundRow, 'id'>): number =>
      Number(
        insert.run(
          ids.nextId('realm_playgrounds'),
          realmId,
          p.name,
          p.pygments_language,
          p.url_template,
        ).lastInsertRowid,
      ),
    remove: (realmId: number, id: number): boolean => remove.run(realmId, id).changes > 0,
  };
}
