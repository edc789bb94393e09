/**
 * The data statistics thread (see ./data-stats.ts): on each request from the main thread, counts
 * the realms, users and messages on a connection of its own and measures the database and the
 * uploaded files on disk, so that a scrape of /metrics never blocks the event loop on a count of
 * millions of rows or a walk of a large upload directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import Database from '../storage/sqlite.js';
import type { DataFigures } from './data-stats.js';

const { file, dataDir } = workerData as { file: string; dataDir: string };
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 1000');

const count = (sql: string): number => (db.prepare(sql).pluck().get() as number | null) ?? 0;

/** Bytes of the regular files under `dir` (0 when it does not exist). */
function bytesUnder(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += bytesUnder(p);
    else if (e.isFile()) {
      try {
        total += fs.statSync(p).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}

function fileSize(p: string): number {
  try {
    return fs.statSync(p).size;
  } catch {
    return 0;
  }
}

function measure(): DataFigures {
  return {
    realms: count('SELECT count(*) FROM realms WHERE deactivated = 0'),
    realmsDeactivated: count('SELECT count(*) FROM realms WHERE deactivated != 0'),
    humans: count('SELECT count(*) FROM users WHERE is_active = 1 AND is_bot = 0'),
    bots: count('SELECT count(*) FROM users WHERE is_active = 1 AND is_bot = 1'),
    usersDeactivated: count('SELECT count(*) FROM users WHERE is_active = 0'),
    messages: count('SELECT count(*) FROM messages'),
    databaseBytes: fileSize(file) + fileSize(`${file}-wal`),
    uploadBytes: bytesUnder(path.join(dataDir, 'uploads')),
    emojiBytes: bytesUnder(path.join(dataDir, 'emoji')),
  };
}

parentPort!.on('message', (m: string) => {
  if (m === 'stop') {
    db.close();
    parentPort!.close();
    return;
  }
  try {
    parentPort!.postMessage({ figures: measure() });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
