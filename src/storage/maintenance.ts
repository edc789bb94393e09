/**
 * Whole-database operations for backups and restores (src/admin/backup.ts): SQLite's online backup
 * and its integrity check. SQL stays in src/storage.
 */
import Database from './sqlite.js';
import type { DB } from './db.js';
import { MIGRATIONS } from './migrations/index.js';

/** The database file's name in a data directory (and in a backup). */
export const DATABASE_FILE = 'confab.sqlite3';

/**
 * Copies the live database into `file` with SQLite's online backup, a few thousand pages per
 * step so the event loop keeps turning. The copy runs on the server's own connection: writes made
 * meanwhile (by this connection) go into the copy too, so it ends consistent and complete as of
 * its last step, without restarting under load.
 */
export async function backupDatabase(db: DB, file: string): Promise<void> {
  await db.backup(file, { progress: () => 4096 });
}

export type IntegrityReport = { ok: boolean; problems: string[]; schema_version: number };

/** PRAGMA integrity_check on a database file (opened read-only), and its schema version. */
export function checkDatabaseFile(file: string): IntegrityReport {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    const problems = rows.map((r) => r.integrity_check).filter((r) => r !== 'ok');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length)
      problems.push(
        `schema version ${version} is newer than this build knows (${MIGRATIONS.length})`,
      );
    return { ok: problems.length === 0, problems, schema_version: version };
  } finally {
    db.close();
  }
}

/** The schema version of an open database. */
export function schemaVersion(db: DB): number {
  return db.pragma('user_version', { simple: true }) as number;
}
