/** SQL for the realm's new-user defaults (realm_user_defaults). */
import type { DB } from './db.js';

export function realmUserDefaultsStatements(db: DB) {
  const get = db
    .prepare<[number], string>('SELECT settings FROM realm_user_defaults WHERE realm_id = ?')
    .pluck();
  const put = db.prepare<[number, string], void>(
    `INSERT INTO realm_user_defaults (realm_id, settings) VALUES (?, ?)
     ON CONFLICT (realm_id) DO UPDATE SET settings = excluded.settings`,
  );
  return {
    /** The realm's stored defaults (only those that differ from the server's), as JSON text. */
    get: (realmId: number): string => get.get(realmId) ?? '{}',
    put: (realmId: number, settingsJson: string): void => void put.run(realmId, settingsJson),
  };
}
