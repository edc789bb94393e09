/**
 * Rate control for the capacity benches (pure, unit-tested in test/unit/bench-rate.test.ts).
 *
 * Open-loop arrivals: each simulated activity is a Poisson process, so its requests are scheduled
 * at times fixed in advance whatever the server does. A request's latency is measured from its
 * scheduled time, not from when the client got round to sending it: a slow server (or a busy
 * client) shows up as latency instead of quietly lowering the offered rate (no coordinated
 * omission). How late the client itself was is kept apart, to tell a saturated client.
 *
 * Stepping: the number of users grows by a factor until a step misses an objective, then the
 * interval between the last good and the first bad step is halved a few times.
 */

/** A deterministic generator (mulberry32): runs with one seed make the same choices. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An exponentially distributed gap with the given mean (ms). */
export function exponentialGap(meanMs: number, random: () => number): number {
  return -Math.log(1 - random()) * meanMs;
}

/**
 * A Poisson arrival schedule of `ratePerSecond` starting at `start` (ms): `due(now)` answers the
 * scheduled times of every arrival at or before `now`, each exactly once, in order.
 */
export class ArrivalSchedule {
  private nextAt: number;
  private readonly meanMs: number;

  constructor(
    ratePerSecond: number,
    start: number,
    private readonly random: () => number,
  ) {
    this.meanMs = ratePerSecond > 0 ? 1000 / ratePerSecond : Infinity;
    this.nextAt = start + exponentialGap(this.meanMs, random);
  }

  /** The scheduled time of the next arrival. */
  get next(): number {
    return this.nextAt;
  }

  due(now: number): number[] {
    const out: number[] = [];
    while (this.nextAt <= now) {
      out.push(this.nextAt);
      this.nextAt += exponentialGap(this.meanMs, this.random);
    }
    return out;
  }
}

/** The service objectives a step must meet (issue #14). */
export type Objectives = {
  /** p99 of send → a recipient's client reading the event (ms). */
  deliveryP99Ms: number;
  /** p99 of every request's latency (ms), heartbeat-held polls excluded. */
  requestP99Ms: number;
  /** Errors allowed (5xx, dropped connections, unexpected 4xx). */
  maxErrors: number;
  /** The server's event-loop delay p99 (ms). */
  loopLagP99Ms: number;
};

export const DEFAULT_OBJECTIVES: Objectives = {
  deliveryP99Ms: 100,
  requestP99Ms: 200,
  maxErrors: 0,
  loopLagP99Ms: 50,
};

export type StepFigures = {
  deliveryP99: number;
  requestP99: number;
  errors: number;
  loopLagP99: number;
};

/** The objectives a step missed, as readable reasons ([] = met). NaN figures (no samples) pass. */
export function missedObjectives(f: StepFigures, o: Objectives): string[] {
  const out: string[] = [];
  if (f.deliveryP99 > o.deliveryP99Ms)
    out.push(`delivery p99 ${f.deliveryP99.toFixed(1)} ms > ${o.deliveryP99Ms} ms`);
  if (f.requestP99 > o.requestP99Ms)
    out.push(`request p99 ${f.requestP99.toFixed(1)} ms > ${o.requestP99Ms} ms`);
  if (f.errors > o.maxErrors) out.push(`${f.errors} errors > ${o.maxErrors}`);
  if (f.loopLagP99 > o.loopLagP99Ms)
    out.push(`event-loop lag p99 ${f.loopLagP99.toFixed(1)} ms > ${o.loopLagP99Ms} ms`);
  return out;
}

export type StepPlan = {
  start: number;
  /** Multiplier while every step passes. */
  factor: number;
  max: number;
  /** Halvings of the pass/fail interval once a step fails. */
  refinements: number;
  /** Users are rounded to a multiple of this. */
  granularity: number;
};

/**
 * The next number of users to try, given the steps so far (users and whether they passed), or
 * null when done: grow by `factor` until a failure (or `max`), then bisect between the largest
 * passing and the smallest failing step `refinements` times.
 */
export function nextStep(
  plan: StepPlan,
  history: readonly { users: number; passed: boolean }[],
): number | null {
  const round = (n: number) =>
    Math.max(plan.granularity, Math.round(n / plan.granularity) * plan.granularity);
  if (history.length === 0) return round(Math.min(plan.start, plan.max));
  const passed = history.filter((h) => h.passed).map((h) => h.users);
  const failed = history.filter((h) => !h.passed).map((h) => h.users);
  const good = passed.length ? Math.max(...passed) : 0;
  if (failed.length === 0) {
    if (good >= plan.max) return null;
    return round(Math.min(plan.max, good * plan.factor));
  }
  const bad = Math.min(...failed);
  const bisections = history.filter(
    (h, i) => i > 0 && history.slice(0, i).some((x) => !x.passed),
  ).length;
  if (bisections >= plan.refinements) return null;
  const mid = round((good + bad) / 2);
  if (mid <= good || mid >= bad) return null;
  return mid;
}

/** The capacity found: the largest passing step below every failing one (0 if none passed). */
export function capacityOf(history: readonly { users: number; passed: boolean }[]): number {
  const failed = history.filter((h) => !h.passed).map((h) => h.users);
  const bad = failed.length ? Math.min(...failed) : Infinity;
  const ok = history.filter((h) => h.passed && h.users < bad).map((h) => h.users);
  return ok.length ? Math.max(...ok) : 0;
}
