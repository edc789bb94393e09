/**
 * Opening the database: one better-sqlite3 connection on the main thread (better-sqlite3 is
 * synchronous and fast enough there; every write to a realm is already serialized by its actor).
 * WAL with synchronous=NORMAL: a commit survives a process crash; the last few commits may be lost
 * only on power loss, the trade every single-node chat server makes for ~5x the commit rate.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS } from './migrations/index.js';

export type DB = Database.Database;

export function openDatabase(dataDir: string, opts: { verbose?: (sql: unknown) => void } = {}): DB {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, 'confab.sqlite3'), {
    ...(opts.verbose ? { verbose: opts.verbose } : {}),
  });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('temp_store = MEMORY');
  db.pragma('cache_size = -65536'); // 64 MiB page cache
  migrate(db);
  return db;
}

/**
 * Applies every migration newer than `PRAGMA user_version`, each in its own transaction together
 * with the version bump, so a crash mid-migration leaves the previous version intact.
 * Shipped migrations are never edited; a change is a new migration.
 */
export function migrate(db: DB): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = MIGRATIONS.length;
  if (current > latest) {
    throw new Error(
      `database schema version ${current} is newer than this build knows (${latest}); refusing to start`,
    );
  }
  for (let v = current; v < latest; v++) {
    const migration = MIGRATIONS[v]!;
    // PRAGMA foreign_keys is a no-op inside a transaction: switched around it.
    if (migration.foreignKeysOff) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        if (migration.sql !== '') db.exec(migration.sql);
        migration.run?.(db);
        if (migration.foreignKeysOff) {
          const broken = db.pragma('foreign_key_check') as unknown[];
          if (broken.length > 0) {
            throw new Error(
              `migration ${migration.name} would break ${broken.length} foreign keys; not applied`,
            );
          }
        }
        db.pragma(`user_version = ${v + 1}`);
      })();
    } finally {
      if (migration.foreignKeysOff) db.pragma('foreign_keys = ON');
    }
  }
}

export function closeDatabase(db: DB): void {
  if (!db.open) return;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
