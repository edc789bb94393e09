/** SQL for `realm_exports` (exports requested through the API). */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type RealmExportRow = {
  id: number;
  realm_id: number;
  acting_user_id: number | null;
  export_type: number;
  status: number;
  date_requested: number;
  date_started: number | null;
  date_succeeded: number | null;
  date_failed: number | null;
  date_deleted: number | null;
  export_path: string | null;
  size: number | null;
};

export { ExportStatus } from '../lib/realm-exports.js';

export function realmExportStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<[number | null, number, number | null, number, number], void>(
    'INSERT INTO realm_exports (id, realm_id, acting_user_id, export_type, status, date_requested) VALUES (?, ?, ?, ?, 1, ?)',
  );
  const byId = db.prepare<[number], RealmExportRow>('SELECT * FROM realm_exports WHERE id = ?');
  const byRealm = db.prepare<[number], RealmExportRow>(
    'SELECT * FROM realm_exports WHERE realm_id = ? ORDER BY id',
  );
  const countSince = db.prepare<[number, number], { n: number }>(
    'SELECT count(*) AS n FROM realm_exports WHERE realm_id = ? AND date_requested >= ?',
  );
  const setStarted = db.prepare<[number, number], void>(
    'UPDATE realm_exports SET status = 2, date_started = ? WHERE id = ?',
  );
  const setSucceeded = db.prepare<[number, string, number, number], void>(
    'UPDATE realm_exports SET status = 3, date_succeeded = ?, export_path = ?, size = ? WHERE id = ?',
  );
  const setFailed = db.prepare<[number, number], void>(
    'UPDATE realm_exports SET status = 4, date_failed = ? WHERE id = ?',
  );
  const setDeleted = db.prepare<[number, number], void>(
    'UPDATE realm_exports SET status = 5, date_deleted = ? WHERE id = ?',
  );
  const failUnfinished = db.prepare<[number], void>(
    'UPDATE realm_exports SET status = 4, date_failed = ? WHERE status IN (1, 2)',
  );
  const unfinished = db.prepare<[], { id: number; realm_id: number }>(
    'SELECT id, realm_id FROM realm_exports WHERE status IN (1, 2) ORDER BY id',
  );
  const messageCount = db.prepare<[number], { n: number }>(
    'SELECT count(*) AS n FROM messages WHERE realm_id = ?',
  );
  return {
    insert: (realmId: number, actingUserId: number | null, type: number, at: number): number =>
      Number(
        insert.run(ids.nextId('realm_exports'), realmId, actingUserId, type, at).lastInsertRowid,
      ),
    byId: (id: number): RealmExportRow | undefined => byId.get(id),
    byRealm: (realmId: number): RealmExportRow[] => byRealm.all(realmId),
    countSince: (realmId: number, since: number): number => countSince.get(realmId, since)!.n,
    setStarted: (id: number, at: number): void => void setStarted.run(at, id),
    setSucceeded: (id: number, at: number, exportPath: string, size: number): void =>
      void setSucceeded.run(at, exportPath, size, id),
    setFailed: (id: number, at: number): void => void setFailed.run(at, id),
    setDeleted: (id: number, at: number): void => void setDeleted.run(at, id),
    /** At start: exports the previous process left unfinished failed with it. */
    failUnfinished: (at: number): void => void failUnfinished.run(at),
    /** Every realm's exports requested or started, not yet finished (few: cluster nodes' check). */
    unfinished: (): { id: number; realm_id: number }[] => unfinished.all(),
    messageCount: (realmId: number): number => messageCount.get(realmId)!.n,
  };
}
