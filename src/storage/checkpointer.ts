/**
 * Background WAL checkpoints. In WAL mode every commit appends the pages it changed to the WAL;
 * a checkpoint copies them back into the database file and syncs it. SQLite's automatic
 * checkpoint runs inside the commit that crosses the threshold (1000 pages by default), on the
 * writing thread: with messages to many recipients (each adds a row in every recipient's part
 * of user_messages and its indexes, ~120 pages per 50-recipient message), that is a stall of
 * tens of milliseconds every few commits, in the realm actor. Here a worker thread with its own
 * connection runs PASSIVE checkpoints (they never block the writer) once a second, more often
 * (down to every `intervalMs`) when the WAL grows fast (./checkpoint-thread.ts), and the
 * writer's automatic checkpoint is kept only as a backstop (BACKSTOP_PAGES) for when the WAL
 * cannot be reset under sustained writes. Numbers: docs/benchmarks.md, `messages`.
 */
import { log } from '../observability/log.js';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DB } from './db.js';

/** The writer's own automatic checkpoint, as a backstop (pages, ~40 MB of WAL). */
export const BACKSTOP_PAGES = 10_000;

export class Checkpointer {
  private readonly worker: Worker;
  /** Written by the thread: checkpoints run, pages copied, WAL pages (for /metrics). */
  private readonly counters = new BigInt64Array(new SharedArrayBuffer(3 * 8));
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

  /** Checkpoints that copied something, pages copied, and the WAL's size at the last run. */
  get stats(): { runs: number; pages: number; walPages: number } {
    return {
      runs: Number(Atomics.load(this.counters, 0)),
      pages: Number(Atomics.load(this.counters, 1)),
      walPages: Number(Atomics.load(this.counters, 2)),
    };
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
