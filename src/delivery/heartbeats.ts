/**
 * The heartbeat deadlines of every attached consumer (./queue.ts: a held poll is answered with a
 * heartbeat event when nothing came in time; a socket is sent one after a quiet spell), on one
 * timer for the whole server. A queue arms a deadline when a consumer attaches and disarms it when
 * the consumer leaves; when a deadline passes, its callback runs.
 *
 * Why one timer: a server cycles a held poll per delivered event, and a timer per poll (an xstate
 * delayed transition, when the queues were xstate actors) was a fifth to a third of that cycle's
 * cost, its garbage a scavenge of about 3 ms per cycle between a commit and its fan-out (measured
 * 2026-11-28 on the 2-core VM; the `fanout` bench prints the cycle).
 *
 * Deadlines are kept in a binary min-heap by time. Disarming marks an entry dead and drops what it
 * holds (the callback and, through it, the consumer) at once; dead entries are removed when they
 * reach the top, or all at once when they are more than half of the heap.
 */

/**
 * The timers deadlines and the queues' sweep run on: Node's (nodeTimers), or in tests xstate's
 * SimulatedClock, moved by hand.
 */
export type Timers = {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

/** Node's timers, which do not keep the process alive (unref). */
export const nodeTimers: Timers = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

type Entry = { due: number; fire: (() => void) | null };

/** What disarms one deadline (idempotent). */
export type Disarm = () => void;

export class Heartbeats {
  private heap: Entry[] = [];
  private dead = 0;
  /** The timer's handle; null: none. */
  private timer: unknown = null;
  /** The deadline the timer is set for (Infinity: no timer). */
  private armedFor = Infinity;

  constructor(
    private readonly timers: Timers,
    /** "Now" on the clock the deadlines are in (ms). */
    private readonly now: () => number,
  ) {}

  /** Calls `fire` once `delayMs` have passed, unless disarmed before. */
  arm(delayMs: number, fire: () => void): Disarm {
    const entry: Entry = { due: this.now() + delayMs, fire };
    this.push(entry);
    if (entry.due < this.armedFor) this.setTimer(entry.due);
    return () => {
      if (entry.fire === null) return;
      entry.fire = null;
      if (++this.dead > 64 && this.dead * 2 > this.heap.length) this.compact();
    };
  }

  /** Deadlines armed and not yet passed or disarmed. */
  get size(): number {
    return this.heap.length - this.dead;
  }

  /** Drops every deadline and the timer (the server is closing). */
  clear(): void {
    for (const e of this.heap) e.fire = null;
    this.heap = [];
    this.dead = 0;
    this.stopTimer();
  }

  private run(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.now();
    const due: (() => void)[] = [];
    while (this.heap.length > 0 && this.heap[0]!.due <= now) {
      const e = this.pop();
      if (e.fire === null) this.dead--;
      else {
        due.push(e.fire);
        e.fire = null;
      }
    }
    this.skipDead();
    if (this.heap.length > 0) this.setTimer(this.heap[0]!.due);
    // After the heap is settled: a callback may arm again (a heartbeat's answer, then a poll).
    for (const fire of due) fire();
  }

  private setTimer(due: number): void {
    this.stopTimer();
    this.armedFor = due;
    this.timer = this.timers.setTimeout(() => this.run(), Math.max(1, due - this.now()));
  }

  private stopTimer(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
  }

  /** Pops dead entries off the top. */
  private skipDead(): void {
    while (this.heap.length > 0 && this.heap[0]!.fire === null) {
      this.pop();
      this.dead--;
    }
  }

  /** Keeps the live entries only (rebuilt as a heap). */
  private compact(): void {
    const live = this.heap.filter((e) => e.fire !== null);
    this.heap = live;
    this.dead = 0;
    for (let i = (live.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private push(e: Entry): void {
    const h = this.heap;
    let i = h.push(e) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.due <= e.due) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = e;
  }

  private pop(): Entry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      this.down(0);
    }
    return top;
  }

  private down(i: number): void {
    const h = this.heap;
    const e = h[i]!;
    const n = h.length;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && h[c + 1]!.due < h[c]!.due) c++;
      if (h[c]!.due >= e.due) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = e;
  }
}
