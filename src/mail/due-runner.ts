/**
 * Runs work kept in the store with due times (the mail outbox, missed-message batches): one timer,
 * armed at the earliest due time the store holds; wakes coalesce and runs never overlap. Work
 * still due after a run (another node's realm, a realm that was closing) is looked at again after
 * RECHECK_MS rather than at once, so that it never spins.
 */
import { log } from '../observability/log.js';

/** Longest delay setTimeout takes (2^31 − 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;
/** How soon work left due after a run is looked at again (ms). */
export const RECHECK_MS = 5_000;

export class DueRunner {
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  /** A run is queued behind the current one (wakes coalesce). */
  private pending = false;
  private stopped = false;

  constructor(
    private readonly opts: {
      /** The server's clock (ms). */
      clock: () => number;
      /** When the next work is due (UNIX seconds), or null. */
      nextDue: () => number | null;
      /** Does what is due now. */
      run: () => Promise<void>;
      /** For the log line of a failed run. */
      name: string;
    },
  ) {}

  get closed(): boolean {
    return this.stopped;
  }

  /** Something was written: a run soon. */
  wake(): void {
    if (this.stopped || this.pending) return;
    this.pending = true;
    void this.runDue();
  }

  /** Does what is due now, then arms the timer for the next. Tests await it. */
  runDue(): Promise<void> {
    const run = this.chain.then(async () => {
      this.pending = false;
      if (this.stopped) return;
      await this.opts.run();
      this.arm();
    });
    this.chain = run.catch((err: unknown) => log.error({ err }, `${this.opts.name} failed`));
    return run;
  }

  private arm(): void {
    if (this.stopped) return;
    const next = this.opts.nextDue();
    if (next === null) {
      this.disarm();
      return;
    }
    if (this.armedFor === next && this.timer !== null) return;
    this.disarm();
    this.armedFor = next;
    const wait = next * 1000 - this.opts.clock();
    const delay = Math.min(MAX_TIMER_MS, wait > 0 ? wait : RECHECK_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedFor = null;
      this.wake();
    }, delay);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
  }

  /** Stops arming; `drained` waits for the run under way. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  async drained(): Promise<void> {
    await this.chain;
  }
}
