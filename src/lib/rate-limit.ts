/**
 * Rate limiting in memory, O(1) per request, with no timer per key.
 *
 * Each rule "at most N requests per W seconds" is a generic cell rate algorithm (a token bucket of
 * N tokens refilled at N/W per second), the scheme of the reference's in-process backend
 * (zerver/lib/rate_limiter.py, TornadoInMemoryRateLimiterBackend): per key, one number, the
 * "theoretical arrival time" `tat` at which the key's bucket is full again. A request at `now`
 * moves it to max(tat, now) + W/N and is refused when that passes now + W. A key may therefore
 * send N requests at once and then one every W/N seconds; a refused request costs nothing (it is
 * not counted), so a client that keeps knocking while limited does not extend its wait.
 *
 * Memory: keys live in two generations of Maps rotated every W seconds, lazily, on the first
 * request after the period; a key untouched for a whole period has tat ≤ now (its bucket is full
 * again, the same as no entry), so the older generation is dropped whole. Nothing iterates over
 * keys and no timer runs.
 */

/** `[window in seconds, requests]`: at most `requests` per `window` (the reference's tuples). */
export type RateRule = readonly [windowSeconds: number, maxRequests: number];

/** How a key stands after a request (the X-RateLimit-* response headers). */
export type RateStatus = {
  /** Requests allowed per window (the rule's N). */
  limit: number;
  /** Requests the key may still send at once. */
  remaining: number;
  /** Seconds until the key's budget is whole again. */
  resetSeconds: number;
};

class RuleBucket<K> {
  readonly interval: number;
  private current = new Map<K, number>();
  private previous = new Map<K, number>();
  private rotateAt: number;

  constructor(
    readonly windowSeconds: number,
    readonly maxRequests: number,
    now: number,
  ) {
    if (!(windowSeconds > 0) || !(maxRequests >= 1) || !Number.isInteger(maxRequests)) {
      throw new Error(`bad rate limit rule: ${maxRequests} per ${windowSeconds} s`);
    }
    this.interval = windowSeconds / maxRequests;
    this.rotateAt = now + windowSeconds;
  }

  /** The key's tat (≤ now when it has its whole budget), keeping it in the current generation. */
  tat(key: K, now: number): number {
    if (now >= this.rotateAt) this.rotate(now);
    const tat = this.current.get(key);
    if (tat !== undefined) return tat;
    const old = this.previous.get(key);
    if (old === undefined) return now;
    this.previous.delete(key);
    this.current.set(key, old);
    return old;
  }

  /** 0 when one more request fits now; otherwise the seconds until it would. */
  wait(tat: number, now: number): number {
    const next = (tat > now ? tat : now) + this.interval;
    const over = next - this.windowSeconds - now;
    return over > 1e-9 ? over : 0;
  }

  charge(key: K, tat: number, now: number): number {
    const next = (tat > now ? tat : now) + this.interval;
    this.current.set(key, next);
    return next;
  }

  forget(key: K): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  /**
   * Writes the key's standing into `into`; with `merge`, keeps the fewest remaining (with that
   * rule's limit) and the latest reset of what is there.
   */
  status(into: RateStatus, tat: number, now: number, merge: boolean): void {
    const debt = tat > now ? tat - now : 0;
    const remaining = Math.max(0, Math.floor((this.windowSeconds - debt) / this.interval + 1e-9));
    if (!merge || remaining < into.remaining) {
      into.limit = this.maxRequests;
      into.remaining = remaining;
    }
    into.resetSeconds = merge ? Math.max(into.resetSeconds, debt) : debt;
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }

  private rotate(now: number): void {
    // Untouched since the previous rotation (at least a whole window ago): their budgets are
    // whole again, so they are dropped. After a long silence both generations are.
    if (now >= this.rotateAt + this.windowSeconds) this.previous = new Map();
    else this.previous = this.current;
    this.current = new Map();
    this.rotateAt = now + this.windowSeconds;
  }
}

/**
 * Told of what a limiter counts, to share it (a cluster's nodes: src/cluster/rate-share.ts): each
 * request counted against a key, and each key forgotten.
 */
export type RateWatch<K> = {
  counted(key: K): void;
  cleared(key: K): void;
};

/**
 * The rules of one domain (e.g. "requests by user"): a request passes only if every rule lets it
 * through, and then counts against all of them. `clock` returns milliseconds (monotonic).
 */
export class RateLimiter<K> {
  private readonly buckets: RuleBucket<K>[];
  private readonly single: RuleBucket<K> | null;

  constructor(
    rules: readonly RateRule[],
    private readonly clock: () => number,
    /** Told of every request counted and key forgotten here (not of those `counted` elsewhere). */
    private readonly watch?: RateWatch<K>,
  ) {
    const now = clock() / 1000;
    this.buckets = [...rules]
      .sort((a, b) => a[0] - b[0])
      .map(([w, n]) => new RuleBucket<K>(w, n, now));
    this.single = this.buckets.length === 1 ? this.buckets[0]! : null;
  }

  get empty(): boolean {
    return this.buckets.length === 0;
  }

  /**
   * One request by `key`: returns 0 and counts it when every rule allows it; otherwise returns the
   * seconds until it would be allowed, counting nothing. `into`, when given, receives the key's
   * standing afterwards (the tightest rule's).
   */
  attempt(key: K, into?: RateStatus): number {
    const now = this.clock() / 1000;
    const single = this.single;
    if (single !== null) {
      // The usual case (one rule), without the arrays.
      const tat = single.tat(key, now);
      const wait = single.wait(tat, now);
      if (wait > 0) {
        if (into) single.status(into, tat, now, false);
        return wait;
      }
      const next = single.charge(key, tat, now);
      if (into) single.status(into, next, now, false);
      this.watch?.counted(key);
      return 0;
    }
    if (this.buckets.length === 0) return 0;
    const tats = this.buckets.map((b) => b.tat(key, now));
    let wait = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      wait = Math.max(wait, this.buckets[i]!.wait(tats[i]!, now));
    }
    if (wait === 0) {
      for (let i = 0; i < this.buckets.length; i++) {
        tats[i] = this.buckets[i]!.charge(key, tats[i]!, now);
      }
      this.watch?.counted(key);
    }
    if (into) {
      for (let i = 0; i < this.buckets.length; i++) {
        this.buckets[i]!.status(into, tats[i]!, now, i > 0);
      }
    }
    return wait;
  }

  /**
   * Seconds until one more request by `key` would be allowed (0: now), counting nothing; `into`,
   * when given, receives the key's standing.
   */
  peek(key: K, into?: RateStatus): number {
    const now = this.clock() / 1000;
    let wait = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      const b = this.buckets[i]!;
      const tat = b.tat(key, now);
      wait = Math.max(wait, b.wait(tat, now));
      if (into) b.status(into, tat, now, i > 0);
    }
    return wait;
  }

  /** Counts one request by `key` whatever its standing (failed attempts after the fact). */
  charge(key: K): void {
    this.countElsewhere(key, 1);
    this.watch?.counted(key);
  }

  /** Forgets `key`'s history (a successful login clears its failed attempts). */
  clear(key: K): void {
    this.forgetElsewhere(key);
    this.watch?.cleared(key);
  }

  /**
   * Counts `n` requests by `key` that another process let through (a cluster's other nodes),
   * whatever its standing here; the watch is not told.
   */
  countElsewhere(key: K, n: number): void {
    const now = this.clock() / 1000;
    for (const b of this.buckets) for (let i = 0; i < n; i++) b.charge(key, b.tat(key, now), now);
  }

  /** Forgets `key`'s history as another process did; the watch is not told. */
  forgetElsewhere(key: K): void {
    for (const b of this.buckets) b.forget(key);
  }

  /** Keys held in memory (both generations, every rule); diagnostic. */
  get size(): number {
    let n = 0;
    for (const b of this.buckets) n += b.size;
    return n;
  }
}
