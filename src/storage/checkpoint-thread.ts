/**
 * The background checkpointer's thread (see ./checkpointer.ts): its own connection to the
 * database, copying committed WAL frames back into the database file with PASSIVE checkpoints
 * (which never block the writer), so the writer's commits do not pay for copying and syncing.
 */
import Database from './sqlite.js';
import type BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { checkpointDelay } from './checkpoint-spacing.js';

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
/** When the next checkpoint runs: ./checkpoint-spacing.ts. */
let timer: NodeJS.Timeout | null = null;
function next(delay: number): void {
  timer = setTimeout(run, delay);
}
let lastRun = performance.now();
function run(): void {
  let delay: number;
  const now = performance.now();
  const elapsed = now - lastRun;
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
    delay = checkpointDelay(r?.log ?? 0, elapsed, intervalMs, maxIntervalMs);
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
