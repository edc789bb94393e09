/**
 * The realm export itself, on a worker thread (src/admin/realm-export.ts starts it), so a large
 * export never stalls the server: its own read-only connection reads the realm's tables in one
 * read transaction (a consistent snapshot while the server goes on writing), then the archive is
 * written: export.json, tables/<table>.json, uploads/<path_id>, emoji/<file_name> and
 * realm_icon/<file_name> (an uploaded organization icon), as a .tar.gz.
 */
import Database from '../storage/sqlite.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import * as tar from 'tar';
import { uploadedIconFileIn } from '../lib/realm-icons.js';
import { readRealmTables } from '../storage/realm-dump.js';
import { DATABASE_FILE } from '../storage/maintenance.js';
import { emojiFile, realmIconFile, type ExportFiles } from '../storage/upload-files.js';
import { CONFAB_VERSION } from '../version.js';
import { filterExport, type ExportMode, type Tables } from './export-filter.js';
import {
  ARCHIVE_FORMAT,
  type ExportJob,
  type ExportManifest,
  type ExportSummary,
  type ExportWorkerMessage,
  type GatherAnswer,
} from './archive.js';

function send(m: ExportWorkerMessage): void {
  parentPort?.postMessage(m);
}

/** Names the files about to be copied and waits until the starting thread has gathered them. */
function gather(files: ExportFiles): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!parentPort) {
      resolve();
      return;
    }
    parentPort.once('message', (a: GatherAnswer) => {
      if (a.ok) resolve();
      else reject(new Error(a.error));
    });
    send({ type: 'gather', ...files });
  });
}

async function sha256Of(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function copyInto(from: string, to: string): boolean {
  // Gone already: no empty directory for it in the archive either.
  if (!fs.existsSync(from)) return false;
  try {
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    return true;
  } catch (err) {
    // A file removed since its row was read: the archive goes without it.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

async function run(job: ExportJob): Promise<ExportSummary> {
  const db = new Database(path.join(job.dataDir, DATABASE_FILE), {
    readonly: true,
    fileMustExist: true,
  });
  const all: Tables = {};
  let schemaVersion: number;
  try {
    db.pragma('busy_timeout = 5000');
    schemaVersion = db.pragma('user_version', { simple: true }) as number;
    readRealmTables(db, job.realmId, (table, rows) => (all[table] = rows));
  } finally {
    db.close();
  }
  const realm = all.realms?.[0];
  if (!realm) throw new Error(`no realm ${job.realmId}`);
  const credentials = job.credentials === true;
  const tables = filterExport(all, job.mode as ExportMode, { credentials });
  // The uploaded icon, public to every member: in every kind of export.
  const icon = uploadedIconFileIn(realm.settings);
  if (job.gather === true) {
    await gather({
      uploads: (tables.attachments ?? []).map((a) => String(a.path_id)),
      emoji: (tables.realm_emoji ?? []).map((e) => String(e.file_name)),
      realm_icons: icon === null ? [] : [icon],
    });
  }

  const work = `${job.file}.parts`;
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(path.join(work, 'tables'), { recursive: true, mode: 0o700 });
  try {
    const counts: Record<string, number> = {};
    for (const [table, rows] of Object.entries(tables)) {
      counts[table] = rows.length;
      fs.writeFileSync(path.join(work, 'tables', `${table}.json`), JSON.stringify(rows));
    }
    const missing: string[] = [];
    const uploads = path.join(job.dataDir, 'uploads');
    for (const a of tables.attachments ?? []) {
      const pathId = String(a.path_id);
      if (!copyInto(path.join(uploads, pathId), path.join(work, 'uploads', pathId))) {
        missing.push(`uploads/${pathId}`);
      }
    }
    for (const e of tables.realm_emoji ?? []) {
      const name = String(e.file_name);
      const from = emojiFile(job.dataDir, job.realmId, name);
      if (!copyInto(from, path.join(work, 'emoji', name))) {
        missing.push(`emoji/${name}`);
      }
    }
    if (icon !== null) {
      const from = realmIconFile(job.dataDir, job.realmId, icon);
      if (!copyInto(from, path.join(work, 'realm_icon', icon))) missing.push(`realm_icon/${icon}`);
    }
    const manifest: ExportManifest = {
      format: ARCHIVE_FORMAT,
      version: 1,
      exported_at: new Date().toISOString(),
      confab_version: CONFAB_VERSION,
      schema_version: schemaVersion,
      mode: job.mode as ExportMode,
      credentials,
      realm: { id: Number(realm.id), string_id: String(realm.string_id), name: String(realm.name) },
      counts,
      missing_files: missing,
    };
    fs.writeFileSync(path.join(work, 'export.json'), JSON.stringify(manifest, null, 1) + '\n');
    const entries = ['export.json', 'tables'];
    if (fs.existsSync(path.join(work, 'uploads'))) entries.push('uploads');
    if (fs.existsSync(path.join(work, 'emoji'))) entries.push('emoji');
    if (fs.existsSync(path.join(work, 'realm_icon'))) entries.push('realm_icon');
    const partial = `${job.file}.partial`;
    // Only its owner reads an archive (it may hold password hashes and API keys): the file is
    // made 0600 before the first byte goes in.
    fs.rmSync(partial, { force: true });
    fs.writeFileSync(partial, '', { mode: 0o600, flag: 'wx' });
    await tar.c({ gzip: true, cwd: work, file: partial, portable: true }, entries);
    fs.renameSync(partial, job.file);
    const size = fs.statSync(job.file).size;
    return {
      file: job.file,
      size,
      sha256: await sha256Of(job.file),
      mode: manifest.mode,
      credentials,
      counts,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

run(workerData as ExportJob).then(
  (summary) => send({ type: 'done', summary }),
  (err: unknown) =>
    send({ type: 'failed', error: err instanceof Error ? err.message : String(err) }),
);
