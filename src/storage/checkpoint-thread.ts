/**
 * The background checkpointer's thread (see ./checkpointer.ts): its own connection to the
 * database, copying committed WAL frames back into the database file with PASSIVE checkpoints
 * (which never block the writer), so the writer's commits do not pay for copying and syncing.
 *
 * Emptying the WAL (./checkpointer.ts, "Restarting the WAL"): once the WAL holds RESTART_PAGES,
 * the thread catches up with what was written during its last checkpoint, then asks the realm
 * actors to hold their batches (`hold`: a deadline, epoch ms, at most MAX_HOLD_MS away) while one
 * more checkpoint copies the few frames left, so that it copies the whole WAL; then, still holding
 * them, it starts the WAL afresh itself with one small commit (`startAfresh`), so that the sync of
 * the new WAL's header is this thread's and not a commit's on the main thread; then it clears the
 * hold.
 */
import Database from './sqlite.js';
import type BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { checkpointDue } from './checkpoint-spacing.js';
import { WalIndex } from './wal-index.js';
import {
  CATCH_UP_PASSES,
  MAX_HOLD_MS,
  RESTART_HOLD_MS,
  RESTART_PAGES,
  TAIL_PAGES,
} from './wal-restart.js';

const { file, intervalMs, maxIntervalMs, counters, hold } = workerData as {
  file: string;
  /** The shortest interval between checkpoints (under heavy writes). */
  intervalMs: number;
  /** The longest (with anything to copy). */
  maxIntervalMs: number;
  /**
   * [checkpoints run, pages copied, WAL pages at the last run, WAL emptied under a hold, holds,
   * WAL started afresh by this thread, µs held in all, longest hold in µs] (read by the main
   * thread).
   */
  counters: BigInt64Array;
  /** [until when (epoch ms) the realm actors hold their batches; 0: no hold]. */
  hold: BigInt64Array;
};

let db: BetterSqlite3.Database;
try {
  db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  // Only this thread's own commit (startAfresh, which changes nothing) depends on it; checkpoints
  // sync the WAL and the database file alike under NORMAL and FULL.
  db.pragma('synchronous = NORMAL');
} catch (err) {
  // The store may have been closed (and its directory removed) before this thread got going:
  // then there is nothing left to checkpoint. Anything else is a real failure.
  if (fs.existsSync(file)) throw err;
  process.exit(0);
}

/** What is waiting in the WAL, looked at every `intervalMs` (./wal-index.ts). */
const walIndex = new WalIndex(`${file}-shm`);

/** What `wal_checkpoint` answers: the WAL's frames (`log`) and those copied so far. */
type Pragma = { busy: number; log: number; checkpointed: number };

/** A checkpoint's result, and how many frames it copied that no earlier one had. */
type Result = Pragma & { copied: number };

/** The last checkpoint's result. */
let last: Pragma = { busy: 0, log: 0, checkpointed: 0 };

/**
 * One PASSIVE checkpoint, counted. It copies the frames the WAL held when it began (`log`, since
 * the WAL's last restart: a smaller `log` than the last one's means it restarted meanwhile).
 */
function checkpoint(): Result {
  const [r] = db.pragma('wal_checkpoint(PASSIVE)') as Pragma[];
  const result = r ?? { busy: 0, log: -1, checkpointed: -1 };
  // A checkpoint that could not run (busy: the writer's own was running) answers -1 for both.
  if (result.busy !== 0 || result.log < 0) return { ...result, copied: 0 };
  const before = result.log >= last.log ? Math.max(0, last.checkpointed) : 0;
  const copied = Math.max(0, result.checkpointed - before);
  last = result;
  if (result.log > 0) {
    Atomics.add(counters, 0, 1n);
    Atomics.add(counters, 1, BigInt(copied));
  }
  Atomics.store(counters, 2, BigInt(Math.max(0, result.log)));
  return { ...result, copied };
}

/**
 * Empties the WAL (see the top of this file). A checkpoint copies the frames there were when it
 * began, so what the writer added meanwhile is copied only by the next one: catch-up passes
 * without a hold run until one copied at most TAIL_PAGES new frames, then passes while the realm
 * actors hold their batches run until one finds nothing new to copy (a commit already under way
 * when the hold began, or a command that is not a batch, may add a little); the WAL, wholly
 * copied, is then started afresh (startAfresh). Clears the hold in any case; true if the WAL was
 * found wholly copied.
 */
function emptyWal(): boolean {
  for (let i = 0; i < CATCH_UP_PASSES; i++) {
    if (checkpoint().copied <= TAIL_PAGES) break;
  }
  const heldFrom = Date.now();
  const heldFromPrecise = performance.now();
  Atomics.store(hold, 0, BigInt(heldFrom + MAX_HOLD_MS));
  Atomics.add(counters, 4, 1n);
  try {
    for (let i = 0; i < 3; i++) {
      const r = checkpoint();
      if (r.busy === 0 && r.copied === 0 && r.log >= 0 && r.log === r.checkpointed) {
        Atomics.add(counters, 3, 1n);
        if (Atomics.load(hold, 0) > BigInt(Date.now()) && startAfresh())
          Atomics.add(counters, 5, 1n);
        return true;
      }
    }
    return false;
  } finally {
    // Held until now, or until the deadline if it passed first (the actors then went on).
    const deadline = Number(Atomics.load(hold, 0));
    Atomics.store(hold, 0, 0n);
    const us = Math.round(
      1000 * Math.min(performance.now() - heldFromPrecise, Math.max(0, deadline - heldFrom)),
    );
    Atomics.add(counters, 6, BigInt(us));
    if (BigInt(us) > Atomics.load(counters, 7)) Atomics.store(counters, 7, BigInt(us));
  }
}

/**
 * Starts the wholly copied WAL afresh from this thread, while the realm actors' batches are held:
 * one commit that rewrites the database's user_version with its own value (it changes nothing,
 * but writes a page, and the first frame written to a wholly copied WAL restarts it). SQLite
 * syncs the new WAL's header in that commit; without this, the writer's next commit would, on the
 * main thread, where every request and delivery waits behind it (0.2 ms on a quiet disk, up to
 * 200 ms seen on this VM while other writes reached the disk). The hold is extended while the
 * thread holds the write lock (RESTART_HOLD_MS at most), so that no batch waits for that lock on
 * the main thread; the server's transactions take the lock at BEGIN (BEGIN IMMEDIATE,
 * ./store.ts), so one that began before this commit is never left with a stale snapshot. Gives up
 * at once (true: restarted here; false: the writer's next commit will) when another writer has
 * the lock, or a reader still uses the old WAL (SQLite then appends the frame instead).
 */
function startAfresh(): boolean {
  Atomics.store(hold, 0, BigInt(Date.now() + RESTART_HOLD_MS));
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch {
    return false; // busy: the main thread is writing
  }
  try {
    const version = db.pragma('user_version', { simple: true }) as number;
    db.pragma(`user_version = ${version}`);
    db.exec('COMMIT');
  } catch {
    if (db.inTransaction) db.exec('ROLLBACK');
    return false;
  }
  const frames = walIndex.frames();
  return frames !== null && frames <= 1;
}

let failures = 0;
/** The next look: ./checkpoint-spacing.ts says whether it checkpoints. */
let timer: NodeJS.Timeout | null = null;
let lastRun = performance.now();
function look(): void {
  const now = performance.now();
  if (checkpointDue(walIndex.waiting(), now - lastRun, maxIntervalMs)) {
    lastRun = now;
    try {
      const r = checkpoint();
      failures = 0;
      // Under way writes (something new was copied) into a WAL this large: empty it. (A WAL left
      // large but wholly copied restarts at the next commit by itself.)
      if (r.log >= RESTART_PAGES && r.copied > 0) emptyWal();
    } catch (err) {
      // A busy database is normal under load; anything persistent is reported once.
      if (++failures === 100) {
        parentPort?.postMessage({ failing: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  timer = setTimeout(look, intervalMs);
}
timer = setTimeout(look, intervalMs);

parentPort?.on('message', (m: unknown) => {
  if (m === 'stop') {
    if (timer !== null) clearTimeout(timer);
    walIndex.close();
    db.close();
    parentPort?.close();
  }
});
