/**
 * Timers and a clock the test moves by hand, for the web client's state modules (typing,
 * drafts): `advance(ms)` runs every timer due by then, in order.
 */
export class FakeTimers {
  ms = 1_700_000_000_000;
  private seq = 0;
  private readonly due = new Map<number, { at: number; fn: () => void }>();

  readonly now = (): number => this.ms;

  readonly timers = {
    setTimeout: (fn: () => void, ms: number): unknown => {
      const id = ++this.seq;
      this.due.set(id, { at: this.ms + ms, fn });
      return id;
    },
    clearTimeout: (h: unknown): void => {
      this.due.delete(h as number);
    },
  };

  /** How many timers are pending. */
  get pending(): number {
    return this.due.size;
  }

  advance(ms: number): void {
    const until = this.ms + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.due) if (e[1].at <= until && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.due.delete(next[0]);
      this.ms = next[1].at;
      next[1].fn();
    }
    this.ms = until;
  }
}
