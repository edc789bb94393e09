/**
 * The background checkpointer's thread (see ./checkpointer.ts): its own connection to the
 * database, copying committed WAL frames back into the database file with PASSIVE checkpoints
 * (which never block the writer), so the writer's commits do not pay for copying and syncing.
 */
import Database from './sqlite.js';
import type BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { file, intervalMs, maxIntervalMs, counters } = workerData as {
  file: string;
  /** The shortest interval between checkpoints (under heavy writes). */
  intervalMs: number;
  /** The longest (with anything to copy). */
  maxIntervalMs: number;
  /** [checkpoints run, pages copied, WAL pages at the last run] (read by the main thread). */
  counters: BigInt64Array;
};
let db: BetterSqlite3.Database;
try {
  db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
} catch (err) {
  // The store may have been closed (and its directory removed) before this thread got going:
  // then there is nothing left to checkpoint. Anything else is a real failure.
  if (fs.existsSync(file)) throw err;
  process.exit(0);
}

let failures = 0;
/**
 * When the next checkpoint runs. Every checkpoint that copies the whole WAL lets the writer's next
 * commit start the WAL afresh, and SQLite syncs a fresh WAL's header in that commit, on the main
 * thread (an fsync: on the project's VM up to half a second while other writes reach the disk).
 * So checkpoints are spaced by the rate the WAL grew at since the last one: one a second
 * (`maxIntervalMs`) while it takes little, sooner (down to `intervalMs`) when it grows fast, so
 * that it holds about TARGET_PAGES between checkpoints under heavy writes, far from the writer's
 * own backstop.
 */
const TARGET_PAGES = 2_000;
let timer: NodeJS.Timeout | null = null;
function next(delay: number): void {
  timer = setTimeout(run, delay);
}
let lastRun = performance.now();
function run(): void {
  let delay = maxIntervalMs;
  const now = performance.now();
  const elapsed = Math.max(1, now - lastRun);
  lastRun = now;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as {
      busy: number;
      log: number;
      checkpointed: number;
    }[];
    failures = 0;
    if (r !== undefined && r.log > 0) {
      Atomics.add(counters, 0, 1n);
      Atomics.add(counters, 1, BigInt(Math.max(0, r.checkpointed)));
    }
    Atomics.store(counters, 2, BigInt(Math.max(0, r?.log ?? 0)));
    // (The frames in the WAL: since its last restart, about those since the last run.)
    const perMs = (r?.log ?? 0) / elapsed;
    if (perMs > 0) delay = Math.min(maxIntervalMs, Math.max(intervalMs, TARGET_PAGES / perMs));
  } catch (err) {
    // A busy database is normal under load; anything persistent is reported once.
    delay = intervalMs;
    if (++failures === 100) {
      parentPort?.postMessage({ failing: err instanceof Error ? err.message : String(err) });
    }
  }
  next(delay);
}
next(intervalMs);

parentPort?.on('message', (m: unknown) => {
  if (m === 'stop') {
    if (timer !== null) clearTimeout(timer);
    db.close();
    parentPort?.close();
  }
});
