/**
 * Background WAL checkpoints. In WAL mode every commit appends the pages it changed to the WAL;
 * a checkpoint copies them back into the database file and syncs it. SQLite's automatic
 * checkpoint runs inside the commit that crosses the threshold (1000 pages by default), on the
 * writing thread: with messages to many recipients (each adds a row in every recipient's part
 * of user_messages and its indexes, ~120 pages per 50-recipient message), that is a stall of
 * tens of milliseconds every few commits, in the realm actor. Here a worker thread with its own
 * connection runs PASSIVE checkpoints every `intervalMs` (they never block the writer), and the
 * writer's automatic checkpoint is kept only as a backstop (BACKSTOP_PAGES) for when the WAL
 * cannot be reset under sustained writes. Numbers: docs/benchmarks.md, `messages`.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DB } from './db.js';

/** The writer's own automatic checkpoint, as a backstop (pages, ~40 MB of WAL). */
export const BACKSTOP_PAGES = 10_000;

export class Checkpointer {
  private readonly worker: Worker;

  constructor(db: DB, intervalMs = 50) {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    this.worker = new Worker(new URL('./checkpoint-thread.js', import.meta.url), {
      workerData: { file: path.resolve(db.name), intervalMs },
    });
    this.worker.unref();
    this.worker.on('error', (err) => console.error('background checkpointer failed', err));
  }

  /** Stops the thread (it closes its connection); the writer checkpoints when it closes. */
  stop(): void {
    this.worker.postMessage('stop');
  }
}
