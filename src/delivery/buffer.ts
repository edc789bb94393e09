/**
 * The buffer of one event queue: pure data, no timers, no I/O (the queue's consumer side is
 * ./queue.ts). Event ids start at 0 and only increase, with no gaps; an event stays until the
 * client acknowledges an id at or past it (`prune`), so a dropped poll or socket loses nothing.
 *
 * Memory: an entry is two array slots — the shared serialization (SharedEvent, held once for every
 * queue that has it) and the per-queue tail (Tail, shared too; null for most events) — in one of
 * the queue's chunks (below). Its id is implied by its position. Every queue of a server reports
 * to one QueueMemory, which counts each distinct SharedEvent and Tail once (when the first entry
 * pointing at it appears) and each chunk while it lives: the figure the server-wide budget is
 * checked against (./publisher.ts).
 * `bytes` is the queue's own size as it would be sent (shared parts counted for every queue),
 * which the per-queue bound is checked against.
 */
import { hot } from '../observability/metrics.js';
import { JsonableError } from '../lib/errors.js';
import type { QueuedEvent, SharedEvent, Tail } from './wire.js';

/** What every queue of a server holds, counted once per distinct event (see the module comment). */
export class QueueMemory {
  /** Estimated bytes held by queued events: distinct events and tails, plus the queues' chunks. */
  bytes = 0;
  /** Queue entries (one per event per queue). */
  entries = 0;
}

/**
 * A queue's entries are kept in chunks: arrays of a fixed capacity holding each entry's shared
 * event and tail side by side. The first chunk holds FIRST_CHUNK entries, each next one twice the
 * last, up to MAX_CHUNK. A flat array grows by copying itself into one half as large again, and
 * every queue of a fan-out reaches that point on the same event: with 6,000 queues at 6,184
 * entries each, 900 MB of new arrays were made at once while the 600 MB they replaced were still
 * held (the memory bench, docs/robustness.md "Memory": a peak of 1.8 GB under a 1 GiB budget).
 * Chunks are made one at a time, never copied, and dropped whole once acknowledged.
 */
const FIRST_CHUNK = 8;
const MAX_CHUNK = 256;
/** Bytes of an array slot (no pointer compression in Node's builds) and of an array's header. */
const SLOT_BYTES = 8;
const ARRAY_BYTES = 32;

/** What a chunk of `capacity` entries holds of the heap: counted in QueueMemory while it lives. */
export function chunkBytes(capacity: number): number {
  return ARRAY_BYTES + 2 * capacity * SLOT_BYTES;
}

/** The JSON a response adds per event besides the shared part and the tail (`,"id":N}`). */
const ID_JSON_BYTES = 16;

type Chunk = (SharedEvent | Tail | null)[];

export class EventBuffer {
  /** Pending entries, oldest first: entry k of a chunk at slots 2k (event) and 2k + 1 (tail). */
  private chunks: Chunk[] = [];
  /** The oldest pending entry's position in the first chunk. */
  private head = 0;
  /** Entries written in the last chunk. */
  private fill = 0;
  private count = 0;
  /** The id the next pushed event gets. */
  nextEventId = 0;
  /** The highest id acknowledged and dropped so far (-1: none). */
  newestPrunedId = -1;
  /** The pending events' size as sent (shared parts counted in full), in bytes. */
  bytes = 0;

  constructor(private readonly memory: QueueMemory = new QueueMemory()) {}

  push(shared: SharedEvent, tail: Tail | null = null): number {
    const m = this.memory;
    if (shared.refs++ === 0) m.bytes += shared.size;
    let bytes = shared.open.length + ID_JSON_BYTES;
    if (tail !== null) {
      if (tail.refs++ === 0) m.bytes += tail.size;
      bytes += tail.json.length;
    }
    let last = this.chunks[this.chunks.length - 1];
    if (last === undefined || 2 * this.fill === last.length) {
      const capacity = last === undefined ? FIRST_CHUNK : Math.min(MAX_CHUNK, last.length);
      last = new Array<SharedEvent | Tail | null>(2 * capacity).fill(null);
      this.chunks.push(last);
      this.fill = 0;
      m.bytes += chunkBytes(capacity);
    }
    last[2 * this.fill] = shared;
    last[2 * this.fill + 1] = tail;
    this.fill++;
    this.count++;
    m.entries++;
    this.bytes += bytes;
    hot.eventsQueued++;
    return this.nextEventId++;
  }

  get size(): number {
    return this.count;
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** The id of the oldest pending event (nextEventId when none is pending). */
  private get firstId(): number {
    return this.nextEventId - this.count;
  }

  /** Drops every event with id ≤ throughId. */
  prune(throughId: number): void {
    const drop = Math.min(throughId - this.firstId + 1, this.count);
    if (drop <= 0) return;
    for (let i = 0; i < drop; i++) {
      const chunk = this.chunks[0]!;
      this.release(chunk, this.head);
      this.head++;
      this.count--;
      // A chunk read to its end (or the last one, emptied) goes.
      if (2 * this.head === chunk.length || this.count === 0) this.dropFirstChunk();
    }
    this.newestPrunedId = this.firstId - 1;
  }

  /** Drops everything still pending (the queue is going away); ids are kept. */
  clear(): void {
    if (this.count > 0) this.prune(this.nextEventId - 1);
  }

  private dropFirstChunk(): void {
    const chunk = this.chunks.shift()!;
    this.memory.bytes -= chunkBytes(chunk.length / 2);
    this.head = 0;
    if (this.chunks.length === 0) this.fill = 0;
  }

  /** Lets go of entry k of `chunk` (its slots emptied: nothing keeps its event alive). */
  private release(chunk: Chunk, k: number): void {
    const m = this.memory;
    const shared = chunk[2 * k] as SharedEvent;
    const tail = chunk[2 * k + 1] as Tail | null;
    chunk[2 * k] = null;
    chunk[2 * k + 1] = null;
    if (--shared.refs === 0) m.bytes -= shared.size;
    let bytes = shared.open.length + ID_JSON_BYTES;
    if (tail !== null) {
      if (--tail.refs === 0) m.bytes -= tail.size;
      bytes += tail.json.length;
    }
    m.entries--;
    this.bytes -= bytes;
  }

  /** Calls `fn` for each pending entry from the `from`-th (0: the oldest), in order. */
  private forEachFrom(from: number, fn: (shared: SharedEvent, tail: Tail | null) => void): void {
    let skip = this.head + from;
    for (const chunk of this.chunks) {
      const entries = chunk === this.chunks[this.chunks.length - 1] ? this.fill : chunk.length / 2;
      for (let k = skip; k < entries; k++)
        fn(chunk[2 * k] as SharedEvent, chunk[2 * k + 1] as Tail | null);
      skip = Math.max(0, skip - entries);
    }
  }

  /**
   * The acknowledgement a client sends (GET /events `last_event_id`, a WebSocket ack): refuses an
   * id older than what was already dropped or one this queue never had, as the reference does,
   * and drops everything up to it.
   */
  acknowledge(lastEventId: number): void {
    if (lastEventId < this.newestPrunedId) {
      throw new JsonableError(`An event newer than ${lastEventId} has already been pruned!`);
    }
    this.prune(lastEventId);
    if (lastEventId !== this.newestPrunedId) {
      throw new JsonableError(`Event ${lastEventId} was not in this queue`);
    }
  }

  /** Every pending event (not yet acknowledged), oldest first. */
  contents(): QueuedEvent[] {
    return this.after(this.firstId - 1);
  }

  /** Pending events with id > afterId. */
  after(afterId: number): QueuedEvent[] {
    const first = this.firstId;
    const from = Math.max(0, afterId - first + 1);
    const out: QueuedEvent[] = [];
    let id = first + from;
    this.forEachFrom(from, (shared, tail) => {
      out.push({
        id: id++,
        shared,
        tail: tail === null ? '' : tail.json,
        extra: tail === null ? null : tail.extra,
      });
    });
    return out;
  }

  /**
   * When the only pending event after `afterId` is the newest one (a socket's usual flush: one
   * event appended since its last frame), writes it into `into` and says so; else false, and
   * `into` is left alone. Allocates nothing.
   */
  newestOnlyAfter(afterId: number, into: QueuedEvent): boolean {
    if (this.count === 0 || afterId !== this.nextEventId - 2) return false;
    const last = this.chunks[this.chunks.length - 1]!;
    const tail = last[2 * this.fill - 1] as Tail | null;
    into.id = this.nextEventId - 1;
    into.shared = last[2 * this.fill - 2] as SharedEvent;
    into.tail = tail === null ? '' : tail.json;
    into.extra = tail === null ? null : tail.extra;
    return true;
  }

  get lastId(): number {
    return this.nextEventId - 1;
  }

  /** Each pending entry, oldest first (saving). */
  forEachPending(fn: (shared: SharedEvent, tail: Tail | null) => void): void {
    this.forEachFrom(0, fn);
  }
}
