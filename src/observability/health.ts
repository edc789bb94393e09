/**
 * What GET /health reports: whether the database answers, whether the data directory can be
 * written, and whether the event loop is responsive. A timer measures how late it fires (the event
 * loop's lag); a lag above the limit within the last few seconds makes the server unhealthy, as
 * does a database that does not answer, a data directory the server cannot write (a read-only
 * disk, or directories left owned by another user: uploads would fail), or a shutdown under way
 * (so a load balancer stops sending before the process exits), or a start-up not yet finished (the
 * server listens before it makes the first realm: an operator who waits for /health then reads
 * first-owner.txt, and a client that logs in, must find them).
 */
import fs from 'node:fs';
import path from 'node:path';

export type HealthReport = {
  status: 'ok' | 'unavailable';
  database: 'ok' | 'unavailable';
  data_dir: 'ok' | 'not_writable';
  event_loop_lag_ms: number;
  shutting_down: boolean;
  /** Start-up not yet finished (the first realm and its owner still being made). */
  starting: boolean;
  uptime_s: number;
};

const TICK_MS = 500;
/** How long a high lag keeps the server unhealthy after it was seen. */
const WINDOW_MS = 5000;

export class HealthMonitor {
  private timer: NodeJS.Timeout | null = null;
  private last = performance.now();
  /** The highest lag seen in the current and the previous window. */
  private windowMax = 0;
  private previousMax = 0;
  private windowStart = performance.now();
  private readonly startedAt = Date.now();
  shuttingDown = false;
  /** Set by whoever starts the server while it finishes starting (src/main.ts). */
  starting = false;

  constructor(
    private readonly databaseAnswers: () => boolean,
    /** Lag (ms) above which the event loop counts as unresponsive. */
    readonly maxLagMs = 1000,
    /** Whether the data directory can be written (dataDirWritable); absent: not checked. */
    private readonly dataDirWritable: () => boolean = () => true,
  ) {}

  start(): void {
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    const lag = Math.max(0, now - this.last - TICK_MS);
    this.last = now;
    if (now - this.windowStart > WINDOW_MS) {
      this.previousMax = this.windowMax;
      this.windowMax = 0;
      this.windowStart = now;
    }
    if (lag > this.windowMax) this.windowMax = lag;
  }

  /** The lag recently seen, including the delay of the tick now overdue (a blocked loop). */
  get lagMs(): number {
    const overdue = Math.max(0, performance.now() - this.last - TICK_MS);
    return Math.max(this.windowMax, this.previousMax, this.timer === null ? 0 : overdue);
  }

  report(): HealthReport {
    const database = this.databaseAnswers() ? 'ok' : 'unavailable';
    const dataDir = this.dataDirWritable() ? 'ok' : 'not_writable';
    const lag = this.lagMs;
    const ok =
      database === 'ok' &&
      dataDir === 'ok' &&
      lag <= this.maxLagMs &&
      !this.shuttingDown &&
      !this.starting;
    return {
      status: ok ? 'ok' : 'unavailable',
      database,
      data_dir: dataDir,
      event_loop_lag_ms: Math.round(lag * 10) / 10,
      shutting_down: this.shuttingDown,
      starting: this.starting,
      uptime_s: Math.floor((Date.now() - this.startedAt) / 1000),
    };
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

/** How long a look at the data directory is trusted (health checks come every few seconds). */
const WRITABLE_CHECK_MS = 5000;

/**
 * Whether this process may write the data directory and the directories it writes into
 * (`uploads/`, `tmp/`, `emoji/`, `exports/` where they exist): access(2) for writing, which a
 * read-only file system refuses too. Looked at no more than once every WRITABLE_CHECK_MS.
 */
export function dataDirWritable(dataDir: string): () => boolean {
  let checkedAt = -Infinity;
  let writable = true;
  return () => {
    const now = performance.now();
    if (now - checkedAt < WRITABLE_CHECK_MS) return writable;
    checkedAt = now;
    writable = [
      dataDir,
      ...['uploads', 'tmp', 'emoji', 'exports'].map((d) => path.join(dataDir, d)),
    ]
      .filter((d, i) => i === 0 || fs.existsSync(d))
      .every((d) => {
        try {
          fs.accessSync(d, fs.constants.W_OK);
          return true;
        } catch {
          return false;
        }
      });
    return writable;
  };
}
