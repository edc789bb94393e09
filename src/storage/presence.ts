/** SQL for presence (user_presence). */
import type { DB } from './db.js';

export type PresenceRow = {
  user_id: number;
  realm_id: number;
  last_active_time: number | null;
  last_connected_time: number;
  last_update_id: number;
};

export function presenceStatements(db: DB) {
  const byRealm = db.prepare<[number], PresenceRow>(
    'SELECT * FROM user_presence WHERE realm_id = ?',
  );
  const upsert = db.prepare<[number, number, number | null, number, number], void>(
    `INSERT INTO user_presence (user_id, realm_id, last_active_time, last_connected_time, last_update_id)
     VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET last_active_time = excluded.last_active_time,
       last_connected_time = excluded.last_connected_time, last_update_id = excluded.last_update_id`,
  );
  return {
    /** Every stored presence of a realm (read once, when the realm's presence is first used). */
    byRealm: (realmId: number): PresenceRow[] => byRealm.all(realmId),
    /** Writes rows (caller holds the transaction). */
    upsertMany(rows: readonly PresenceRow[]): void {
      for (const r of rows)
        upsert.run(
          r.user_id,
          r.realm_id,
          r.last_active_time,
          r.last_connected_time,
          r.last_update_id,
        );
    },
  };
}
