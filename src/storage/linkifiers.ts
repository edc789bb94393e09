/** SQL for linkifiers. */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type LinkifierRow = {
  id: number;
  realm_id: number;
  pattern: string;
  url_template: string;
  sort_order: number;
};

export function linkifierStatements(db: DB, ids: IdSource) {
  const byRealm = db.prepare<[number], LinkifierRow>(
    'SELECT * FROM linkifiers WHERE realm_id = ? ORDER BY sort_order, id',
  );
  const byId = db.prepare<[number, number], LinkifierRow>(
    'SELECT * FROM linkifiers WHERE realm_id = ? AND id = ?',
  );
  const byPattern = db.prepare<[number, string], LinkifierRow>(
    'SELECT * FROM linkifiers WHERE realm_id = ? AND pattern = ?',
  );
  const maxOrder = db
    .prepare<[number], number | null>('SELECT MAX(sort_order) FROM linkifiers WHERE realm_id = ?')
    .pluck();
  const insert = db.prepare<[number | null, number, string, string, number], void>(
    'INSERT INTO linkifiers (id, realm_id, pattern, url_template, sort_order) VALUES (?, ?, ?, ?, ?)',
  );
  const update = db.prepare<[string, string, number, number], void>(
    'UPDATE linkifiers SET pattern = ?, url_template = ? WHERE realm_id = ? AND id = ?',
  );
  const setOrder = db.prepare<[number, number, number], void>(
    'UPDATE linkifiers SET sort_order = ? WHERE realm_id = ? AND id = ?',
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM linkifiers WHERE realm_id = ? AND id = ?',
  );
  return {
    byRealm: (realmId: number): LinkifierRow[] => byRealm.all(realmId),
    byId: (realmId: number, id: number): LinkifierRow | undefined => byId.get(realmId, id),
    byPattern: (realmId: number, pattern: string): LinkifierRow | undefined =>
      byPattern.get(realmId, pattern),
    /** The order a new linkifier gets: after every existing one. */
    nextOrder: (realmId: number): number => {
      const m = maxOrder.get(realmId);
      return m === null || m === undefined ? 0 : m + 1;
    },
    insert: (realmId: number, pattern: string, urlTemplate: string, order: number): number =>
      Number(
        insert.run(ids.nextId('linkifiers'), realmId, pattern, urlTemplate, order).lastInsertRowid,
      ),
    update: (realmId: number, id: number, pattern: string, urlTemplate: string): void =>
      void update.run(pattern, urlTemplate, realmId, id),
    setOrder: (realmId: number, id: number, order: number): void =>
      void setOrder.run(order, realmId, id),
    remove: (realmId: number, id: number): void => void remove.run(realmId, id),
  };
}
export type LinkifierStatements = ReturnType<typeof linkifierStatements>;
