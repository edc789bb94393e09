/**
 * What the server holds, for /metrics: realms, users and messages, the database's and the
 * uploads' bytes on disk. Measured on a thread of its own (./data-stats-thread.ts), at most once
 * every REFRESH_MS and only when scraped: a scrape gets the last figures at once, and waits (up
 * to FIRST_WAIT_MS) only for the very first.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { log } from './log.js';

export type DataFigures = {
  realms: number;
  realmsDeactivated: number;
  humans: number;
  bots: number;
  usersDeactivated: number;
  messages: number;
  databaseBytes: number;
  uploadBytes: number;
  emojiBytes: number;
};

/** Figures older than this are measured again at the next scrape. */
const REFRESH_MS = 60_000;
/** How long the first scrape waits for the first figures. */
const FIRST_WAIT_MS = 5_000;

export class DataStats {
  private worker: Worker | null = null;
  private figures: DataFigures | null = null;
  private measuredAt = -Infinity;
  private pending: Promise<DataFigures | null> | null = null;
  private stopped = false;

  constructor(private readonly dataDir: string) {}

  private start(): Worker {
    const worker = new Worker(new URL('./data-stats-thread.js', import.meta.url), {
      workerData: { file: path.join(this.dataDir, 'confab.sqlite3'), dataDir: this.dataDir },
      execArgv: [],
    });
    worker.unref();
    worker.on('error', (err) => {
      log.error({ err }, 'data statistics thread failed');
      this.worker = null;
    });
    return worker;
  }

  private measure(): Promise<DataFigures | null> {
    if (this.stopped) return Promise.resolve(this.figures);
    this.pending ??= new Promise<DataFigures | null>((resolve) => {
      const worker = (this.worker ??= this.start());
      const done = (figures: DataFigures | null) => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        this.pending = null;
        resolve(figures);
      };
      const onMessage = (m: { figures?: DataFigures; error?: string }) => {
        if (m.figures) {
          this.figures = m.figures;
          this.measuredAt = performance.now();
        } else log.error({ error: m.error }, 'measuring the data failed');
        done(this.figures);
      };
      const onError = () => done(this.figures);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage('measure');
    });
    return this.pending;
  }

  /**
   * The figures for a scrape: the last ones (measured again in the background when stale), or
   * the first, waited for up to FIRST_WAIT_MS; null if there are none yet.
   */
  async current(): Promise<DataFigures | null> {
    const stale = performance.now() - this.measuredAt > REFRESH_MS;
    if (this.figures !== null) {
      if (stale) void this.measure();
      return this.figures;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), FIRST_WAIT_MS);
    });
    try {
      return await Promise.race([this.measure(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  stop(): void {
    this.stopped = true;
    this.worker?.postMessage('stop');
    this.worker = null;
  }
}
