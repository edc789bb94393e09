/**
 * Memory for what the HTTP guard relays from uWS to clients (./guard.ts). Every read from uWS
 * lands in the thread's one read buffer and must be copied out before the next read, since the
 * client's socket may keep it queued. A fresh buffer per copy was most of the guard thread's
 * garbage collection at 10,000 users (a CPU profile of its thread: presence snapshots and message
 * fetches of tens of kilobytes, megabytes a second). Here each copy goes into a slab, and a slab
 * whose every write is done (its callback called) is filled again, so a warm relay allocates no
 * buffers at all.
 *
 * Bound: a slab is as large as one read (64 KiB), so a slow client's queued bytes pin at most
 * what a copy of their own would have held; a client that already has bytes queued gets plain
 * copies (./guard.ts), so it pins at most one slab. At most `keep` free slabs are kept.
 */

export type Slab = {
  readonly buf: Buffer;
  /** Bytes handed out of it. */
  used: number;
  /** Copies handed out and not yet released. */
  refs: number;
  /** Full: no more copies come from it; it is free again once its copies are released. */
  sealed: boolean;
};

export class WriteSlabs {
  private current: Slab | null = null;
  private readonly free: Slab[] = [];
  /** Slabs allocated so far (for tests and figures). */
  allocated = 0;

  constructor(
    readonly slabSize = 64 * 1024,
    readonly keep = 16,
  ) {}

  /**
   * `data` copied into a slab: `slab` must be released once the write of `bytes` is over, or
   * failed (null: a plain copy, larger than a slab, released by the garbage collector).
   */
  copy(data: Uint8Array): { bytes: Buffer; slab: Slab | null } {
    const n = data.length;
    if (n > this.slabSize) return { bytes: Buffer.from(data), slab: null };
    let slab = this.current;
    if (slab === null || slab.used + n > this.slabSize) {
      if (slab !== null) this.seal(slab);
      slab = this.current = this.free.pop() ?? this.fresh();
    }
    const bytes = slab.buf.subarray(slab.used, slab.used + n);
    bytes.set(data);
    slab.used += n;
    slab.refs++;
    return { bytes, slab };
  }

  /** A copy's write is over: its slab is free again once all of its copies are. */
  release(slab: Slab): void {
    if (--slab.refs === 0 && slab.sealed) this.recycle(slab);
  }

  /** Free slabs kept for reuse. */
  get spare(): number {
    return this.free.length;
  }

  private seal(slab: Slab): void {
    slab.sealed = true;
    if (slab.refs === 0) this.recycle(slab);
  }

  private recycle(slab: Slab): void {
    slab.used = 0;
    slab.sealed = false;
    if (this.free.length < this.keep) this.free.push(slab);
  }

  private fresh(): Slab {
    this.allocated++;
    return { buf: Buffer.allocUnsafeSlow(this.slabSize), used: 0, refs: 0, sealed: false };
  }
}
