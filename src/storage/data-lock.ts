/**
 * The data directory's exclusive lock: one process at a time may write a data directory (the
 * server, or the admin tool when no server runs). Two servers on one directory would each keep
 * their own view of the realms and split the data; an admin tool writing beside a server would
 * do the same (its users unknown to the server's caches).
 *
 * The lock is an SQLite database of its own (`confab.lock`) held in EXCLUSIVE locking mode: SQLite
 * takes an OS file lock (fcntl) on its first write and keeps it until the connection closes, and
 * the kernel drops it when the process dies, however it dies — no stale lock files. A second
 * process (or a second open in the same process) gets SQLITE_BUSY at once. Who holds it is written
 * beside it (`confab.pid`) for the error message.
 */
import Database from './sqlite.js';
import type BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'confab.lock';
export const HOLDER_FILE = 'confab.pid';

export type LockHolder = { pid: number; kind: string; since: string };

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | null,
  ) {
    super(
      `the data directory ${dataDir} is in use by another process` +
        (holder ? ` (${holder.kind}, pid ${holder.pid}, since ${holder.since})` : '') +
        '; stop it first (a running server is administered through `npm run manage`, which talks to it)',
    );
    this.name = 'DataDirLockedError';
  }
}

export class DataDirLock {
  private constructor(
    readonly dataDir: string,
    private db: BetterSqlite3.Database | null,
  ) {}

  /** Takes the lock or throws DataDirLockedError. `kind` names the holder in messages. */
  static acquire(dataDir: string, kind: string): DataDirLock {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const db = new Database(path.join(dataDir, LOCK_FILE));
    try {
      db.pragma('busy_timeout = 0');
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('CREATE TABLE IF NOT EXISTS holder (k INTEGER PRIMARY KEY, pid INTEGER, kind TEXT)');
      db.prepare('INSERT OR REPLACE INTO holder (k, pid, kind) VALUES (1, ?, ?)').run(
        process.pid,
        kind,
      );
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code === 'SQLITE_BUSY') {
        throw new DataDirLockedError(dataDir, readHolder(dataDir));
      }
      throw err;
    }
    const holder: LockHolder = { pid: process.pid, kind, since: new Date().toISOString() };
    fs.writeFileSync(path.join(dataDir, HOLDER_FILE), JSON.stringify(holder) + '\n');
    return new DataDirLock(dataDir, db);
  }

  /**
   * Throws DataDirLockedError when a process holds the lock, without taking it: nothing is
   * written (the holder's EXCLUSIVE lock refuses even a read). For a command that refuses before
   * it changes anything, the lock file included (`npm run cluster -- detach`); it takes the lock
   * once it is to act.
   */
  static assertFree(dataDir: string): void {
    const file = path.join(dataDir, LOCK_FILE);
    if (!fs.existsSync(file)) return;
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 0');
      db.prepare('SELECT count(*) FROM sqlite_schema').get();
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') {
        throw new DataDirLockedError(dataDir, readHolder(dataDir));
      }
      throw err;
    } finally {
      db.close();
    }
  }

  get held(): boolean {
    return this.db !== null;
  }

  release(): void {
    if (this.db === null) return;
    try {
      fs.rmSync(path.join(this.dataDir, HOLDER_FILE), { force: true });
    } catch {
      // the directory may be gone (tests remove it)
    }
    this.db.close();
    this.db = null;
  }
}

function readHolder(dataDir: string): LockHolder | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, HOLDER_FILE), 'utf8')) as LockHolder;
  } catch {
    return null;
  }
}
