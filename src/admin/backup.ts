/**
 * Backups of a data directory, and restoring one (docs/operations.md "Backups").
 *
 * A backup is a directory:
 *   confab.sqlite3    the database, copied with SQLite's online backup on the server's own
 *                     connection (consistent; every commit before the copy's last step is in it)
 *   uploads/, emoji/  the uploaded files and custom emoji (every other file of the data
 *                     directory, less what a restart rebuilds: see SKIPPED)
 *   manifest.json     written last: format, versions, and every file's size and SHA-256
 *
 * The database is copied first, then the files: a file a client uploads meanwhile is either in
 * both or (uploaded after the database copy) in neither as far as the restored server is concerned.
 * A restore checks every file against the manifest, copies them into an empty data directory, and
 * runs SQLite's integrity check on the database.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { CONFAB_VERSION } from '../version.js';
import { HOLDER_FILE, LOCK_FILE } from '../storage/data-lock.js';
import {
  backupDatabase,
  checkDatabaseFile,
  DATABASE_FILE,
  schemaVersion,
} from '../storage/maintenance.js';
import type { Store } from '../storage/store.js';
import { ADMIN_SOCKET } from './socket-client.js';
import { makeOutputDir } from './data-dir.js';
import { UsageError } from './errors.js';

export const MANIFEST = 'manifest.json';
const FORMAT = 'confab-backup';

/**
 * What a backup leaves out: the live database files (copied through SQLite instead), the lock,
 * the admin socket, request temporaries, saved event queues (clients register again after a
 * restore), realm export archives (made again on request) and a cluster node's set-aside copies
 * (`discarded`: databases it no longer uses, kept for diagnosis: src/cluster/main.ts). The saved queues' other names
 * (src/delivery/persistence.ts) are skipped too: `.tmp` is a save being written, and `.last` the
 * file already read at the last start, kept for nobody (no code reads it).
 */
const SKIPPED = new Set([
  DATABASE_FILE,
  `${DATABASE_FILE}-wal`,
  `${DATABASE_FILE}-shm`,
  `${DATABASE_FILE}-journal`,
  LOCK_FILE,
  `${LOCK_FILE}-journal`,
  HOLDER_FILE,
  ADMIN_SOCKET,
  'tmp',
  'exports',
  'discarded',
  'event-queues.msgpack',
  'event-queues.msgpack.tmp',
  'event-queues.msgpack.last',
]);

export type ManifestFile = { path: string; size: number; sha256: string };
export type BackupManifest = {
  format: typeof FORMAT;
  version: 1;
  created_at: string;
  confab_version: string;
  schema_version: number;
  files: ManifestFile[];
};

async function sha256Of(file: string): Promise<{ size: number; sha256: string }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest('hex') };
}

/** Copies `from` to `to`, hashing on the way. */
async function copyHashed(from: string, to: string): Promise<{ size: number; sha256: string }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  await fs.promises.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  await pipeline(
    fs.createReadStream(from),
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        hash.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    },
    fs.createWriteStream(to, { flags: 'wx', mode: 0o600 }),
  );
  return { size, sha256: hash.digest('hex') };
}

/** Regular files under `dir` (relative paths, `/`-separated), skipping SKIPPED at the top. */
async function filesUnder(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(path.join(dir, rel), { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  for (const e of entries) {
    if (rel === '' && SKIPPED.has(e.name)) continue;
    const r = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...(await filesUnder(dir, r)));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}

/** An empty directory to write into: created, or existing and empty. */
function ensureEmptyDir(dir: string, what: string, ignore: ReadonlySet<string> = new Set()) {
  makeOutputDir(dir, what);
  const left = fs.readdirSync(dir).filter((n) => !ignore.has(n));
  if (left.length > 0) throw new UsageError(`${what} ${dir} is not empty`);
}

export async function backupDataDir(
  store: Store,
  dataDir: string,
  toDir: string,
): Promise<{ directory: string; files: number; bytes: number; schema_version: number }> {
  const target = path.resolve(toDir);
  const source = path.resolve(dataDir);
  if (target === source || target.startsWith(source + path.sep))
    throw new UsageError('the backup directory must be outside the data directory');
  ensureEmptyDir(target, 'the backup directory');
  const files: ManifestFile[] = [];
  const dbFile = path.join(target, DATABASE_FILE);
  await backupDatabase(store.db, dbFile);
  files.push({ path: DATABASE_FILE, ...(await sha256Of(dbFile)) });
  for (const rel of await filesUnder(source)) {
    try {
      files.push({
        path: rel,
        ...(await copyHashed(path.join(source, rel), path.join(target, rel))),
      });
    } catch (err) {
      // Deleted between the listing and the copy (an upload removed meanwhile): not in the backup.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  const manifest: BackupManifest = {
    format: FORMAT,
    version: 1,
    created_at: new Date().toISOString(),
    confab_version: CONFAB_VERSION,
    schema_version: schemaVersion(store.db),
    files,
  };
  fs.writeFileSync(path.join(target, MANIFEST), JSON.stringify(manifest, null, 1) + '\n', {
    mode: 0o600,
  });
  return {
    directory: target,
    files: files.length,
    bytes: files.reduce((n, f) => n + f.size, 0),
    schema_version: manifest.schema_version,
  };
}

function readManifest(fromDir: string): BackupManifest {
  let m: Partial<BackupManifest>;
  try {
    m = JSON.parse(fs.readFileSync(path.join(fromDir, MANIFEST), 'utf8')) as BackupManifest;
  } catch {
    throw new UsageError(`${fromDir} has no readable ${MANIFEST}: not a complete backup`);
  }
  if (m.format !== FORMAT || m.version !== 1 || !Array.isArray(m.files))
    throw new UsageError(`${fromDir}/${MANIFEST} is not a Confab backup manifest`);
  for (const f of m.files) {
    const parts = String(f.path).split('/');
    if (parts.some((p) => p === '' || p === '.' || p === '..'))
      throw new UsageError(`the manifest names a bad path: ${f.path}`);
  }
  if (!m.files.some((f) => f.path === DATABASE_FILE))
    throw new UsageError(`the backup has no ${DATABASE_FILE}`);
  return m as BackupManifest;
}

/**
 * Fills `dataDir` (empty apart from the caller's lock) from a backup. Every file must match the
 * manifest; on any mismatch nothing stays behind.
 */
export async function restoreDataDir(
  fromDir: string,
  dataDir: string,
): Promise<{ files: number; bytes: number; schema_version: number; integrity: 'ok' }> {
  const source = path.resolve(fromDir);
  const manifest = readManifest(source);
  const lockFiles = new Set([LOCK_FILE, `${LOCK_FILE}-journal`, HOLDER_FILE]);
  ensureEmptyDir(dataDir, 'the data directory', lockFiles);
  const written: string[] = [];
  try {
    for (const f of manifest.files) {
      const to = path.join(dataDir, ...f.path.split('/'));
      const got = await copyHashed(path.join(source, ...f.path.split('/')), to);
      written.push(to);
      if (got.size !== f.size || got.sha256 !== f.sha256)
        throw new UsageError(`${f.path} does not match the manifest (damaged backup)`);
    }
    const report = checkDatabaseFile(path.join(dataDir, DATABASE_FILE));
    if (!report.ok)
      throw new UsageError(`the restored database failed its check: ${report.problems.join('; ')}`);
    return {
      files: manifest.files.length,
      bytes: manifest.files.reduce((n, f) => n + f.size, 0),
      schema_version: report.schema_version,
      integrity: 'ok',
    };
  } catch (err) {
    for (const w of written) fs.rmSync(w, { force: true });
    for (const name of fs.readdirSync(dataDir)) {
      if (!lockFiles.has(name))
        fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    }
    throw err;
  }
}
