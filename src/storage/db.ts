/**
 * Opening the database: one better-sqlite3 connection on the main thread (better-sqlite3 is
 * synchronous and fast enough there; every write to a realm is already serialized by its actor).
 * WAL with synchronous=NORMAL by default: a commit survives a process crash; the last few commits
 * may be lost only on power loss or an operating-system crash, the trade most single-node chat
 * servers make for several times the commit rate. `durability: 'full'` (DURABILITY=full) syncs the
 * WAL at every commit (synchronous=FULL): a commit answered is on disk. Measured by `npm run bench
 * -- messages` (both modes); see docs/operations.md "Durability".
 */
import Database from './sqlite.js';
import type BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS } from './migrations/index.js';

export type DB = BetterSqlite3.Database;

/** How commits reach the disk: 'normal' (WAL synced at checkpoints) or 'full' (every commit). */
export type Durability = 'normal' | 'full';

export function openDatabase(
  dataDir: string,
  opts: { verbose?: (sql: unknown) => void; durability?: Durability } = {},
): DB {
  const file = path.join(dataDir, 'confab.sqlite3');
  makePrivate(dataDir, file);
  const db = new Database(file, {
    ...(opts.verbose ? { verbose: opts.verbose } : {}),
  });
  db.pragma('journal_mode = WAL');
  db.pragma(opts.durability === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('temp_store = MEMORY');
  db.pragma('cache_size = -65536'); // 64 MiB page cache
  migrate(db);
  return db;
}

/**
 * The data directory holds every message, password hash and API key: it is made private to the
 * server's user (0700, also when it already existed with wider rights), and the database file is
 * created 0600 before SQLite opens it (SQLite gives its -wal and -shm files the database file's
 * mode). Files created inside later are private too (uploads: src/http/body.ts; npm start also
 * sets the umask to 077, src/main.ts).
 */
function makePrivate(dataDir: string, file: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dataDir, 0o700);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    if (fs.existsSync(f)) fs.chmodSync(f, 0o600);
  }
  if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, 'a', 0o600));
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
