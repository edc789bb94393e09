/**
 * Background WAL checkpoints. In WAL mode every commit appends the pages it changed to the WAL;
 * a checkpoint copies them back into the database file and syncs it. SQLite's automatic
 * checkpoint runs inside the commit that crosses the threshold (1000 pages by default), on the
 * writing thread: with messages to many recipients (each adds a row in every recipient's part
 * of user_messages, ~70 pages per 50-recipient message, ~125 with the unread index it had before
 * migration 0030), that is a stall of tens of milliseconds every few commits, in the realm actor. Here a worker thread with its own
 * connection runs PASSIVE checkpoints (they never block the writer) once a second, sooner when
 * TARGET_PAGES wait to be copied (it looks every `intervalMs`: ./checkpoint-spacing.ts), and the
 * writer's automatic checkpoint is kept only as a backstop (BACKSTOP_PAGES) for when the WAL
 * cannot be reset under sustained writes. Numbers: docs/benchmarks.md, `messages`.
 *
 * Restarting the WAL: the writer starts the WAL afresh only at a commit that finds every frame
 * copied, and a PASSIVE checkpoint never copies frames committed while it runs. Under steady
 * writes (a realm committing every few milliseconds) no checkpoint of the thread ever copies the
 * whole WAL, so it grew until the writer's backstop checkpoint ran inside a commit, on the main
 * thread: syncing the WAL and the database file there, a stall of tens of milliseconds (up to
 * 120 ms seen) every half second, for every send and delivery behind it. So once the WAL holds
 * RESTART_PAGES (./wal-restart.ts) the thread first copies what is new, then asks the realm actors
 * to hold their batches (`commitHoldMs`, a deadline in shared memory, bounded by MAX_HOLD_MS) while
 * it copies the last few frames, and then starts the WAL afresh itself with one commit that changes
 * nothing: the fsync of the new WAL's header that SQLite makes in the first commit of a fresh WAL
 * is the thread's, not the main thread's (where it took up to 200 ms while other writes reached
 * the disk, with every request and delivery waiting behind it). The event loop is never blocked:
 * only batches of sends wait, for about one small checkpoint and that sync.
 */
import { log } from '../observability/log.js';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DB } from './db.js';
import { holdRemaining } from './wal-restart.js';

/** The writer's own automatic checkpoint, as a backstop (pages, ~80 MB of WAL). */
export const BACKSTOP_PAGES = 20_000;

/** The background checkpointer's counts (Checkpointer.stats). */
export type CheckpointStats = {
  runs: number;
  pages: number;
  walPages: number;
  holds: number;
  restarts: number;
  afresh: number;
  /**
   * How long the realm actors' batches were held in all (ms) and the longest hold: from the
   * thread asking for it until it cleared it or its deadline passed, whichever came first.
   */
  heldMs: number;
  longestHoldMs: number;
};

export class Checkpointer {
  private readonly worker: Worker;
  /**
   * Written by the thread: checkpoints run, pages copied, WAL pages (for /metrics), WAL emptied
   * under a hold, holds asked for, WAL started afresh by the thread, µs held in all, longest hold.
   */
  private readonly counters = new BigInt64Array(new SharedArrayBuffer(8 * 8));
  /** Written by the thread: until when (epoch ms) batches are held; 0: not held. */
  private readonly hold = new BigInt64Array(new SharedArrayBuffer(8));
  /** Resolves once the thread has exited. */
  private readonly exited: Promise<void>;

  constructor(db: DB, intervalMs = 50, maxIntervalMs = 1000) {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    this.worker = new Worker(new URL('./checkpoint-thread.js', import.meta.url), {
      workerData: {
        file: path.resolve(db.name),
        intervalMs,
        maxIntervalMs,
        counters: this.counters,
        hold: this.hold,
      },
      // None of the main thread's flags (loaders, instrumentation: under the test runner they cost
      // each thread a second or more of CPU to start, once per store).
      execArgv: [],
    });
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('error', (err) => log.error({ err }, 'background checkpointer failed'));
    this.worker.on('message', (m: { failing?: string }) => {
      if (m.failing !== undefined)
        log.error({ error: m.failing }, 'background checkpoint keeps failing');
    });
  }

  /**
   * Checkpoints that copied something, pages copied, the WAL's size at the last run, how often the
   * thread held batches to empty the WAL (`holds`), emptied it so (`restarts`) and then started it
   * afresh itself (`afresh`; otherwise the writer's next commit does), and how long the holds
   * lasted (`heldMs`, `longestHoldMs`).
   */
  get stats(): CheckpointStats {
    return {
      runs: Number(Atomics.load(this.counters, 0)),
      pages: Number(Atomics.load(this.counters, 1)),
      walPages: Number(Atomics.load(this.counters, 2)),
      restarts: Number(Atomics.load(this.counters, 3)),
      holds: Number(Atomics.load(this.counters, 4)),
      afresh: Number(Atomics.load(this.counters, 5)),
      heldMs: Number(Atomics.load(this.counters, 6)) / 1000,
      longestHoldMs: Number(Atomics.load(this.counters, 7)) / 1000,
    };
  }

  /** How long (ms) the realm actors should still hold their batches: 0 unless the thread asks. */
  get commitHoldMs(): number {
    const deadline = Atomics.load(this.hold, 0);
    return deadline === 0n ? 0 : holdRemaining(Number(deadline), Date.now());
  }

  /** Stops the thread (it closes its connection); the writer checkpoints when it closes. */
  stop(): void {
    this.worker.postMessage('stop');
  }

  /**
   * Resolves once the thread has exited (after `stop`), or after `timeoutMs`. A process that exits
   * at once may end the thread while it is still starting (loading the SQLite binding into it: a
   * second or more on a loaded machine); a server waits for it first (src/server.ts close).
   */
  stopped(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    // (Not unref'd: the thread is, and nothing else may keep the process waiting for it.)
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    return Promise.race([this.exited, late]).finally(() => clearTimeout(timer));
  }
}
