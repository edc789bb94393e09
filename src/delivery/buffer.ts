/**
 * The buffer of one event queue: pure data, no timers, no I/O (the queue's consumer side is
 * ./queue.ts). Event ids start at 0 and only increase, with no gaps; an event stays until the
 * client acknowledges an id at or past it (`prune`), so a dropped poll or socket loses nothing.
 *
 * Memory: an entry is two array slots — the shared serialization (SharedEvent, held once for every
 * queue that has it) and the per-queue tail (Tail, shared too; null for most events). Its id is
 * implied by its position. Every queue of a server reports to one QueueMemory, which counts each
 * distinct SharedEvent and Tail once (when the first entry pointing at it appears) plus a fixed
 * cost per entry: the figure the server-wide budget is checked against (./publisher.ts).
 * `bytes` is the queue's own size as it would be sent (shared parts counted for every queue),
 * which the per-queue bound is checked against.
 */
import { hot } from '../observability/metrics.js';
import { JsonableError } from '../lib/errors.js';
import type { QueuedEvent, SharedEvent, Tail } from './wire.js';

/** What every queue of a server holds, counted once per distinct event (see the module comment). */
export class QueueMemory {
  /** Estimated bytes held by queued events: distinct events and tails, plus entries. */
  bytes = 0;
  /** Queue entries (one per event per queue). */
  entries = 0;
}

/** The estimated cost of one queue entry: two array slots and their share of the array's slack. */
export const ENTRY_BYTES = 24;
/** The JSON a response adds per event besides the shared part and the tail (`,"id":N}`). */
const ID_JSON_BYTES = 16;

export class EventBuffer {
  private shared: SharedEvent[] = [];
  private tails: (Tail | null)[] = [];
  private head = 0;
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
    m.bytes += ENTRY_BYTES;
    m.entries++;
    this.shared.push(shared);
    this.tails.push(tail);
    this.bytes += bytes;
    hot.eventsQueued++;
    return this.nextEventId++;
  }

  get size(): number {
    return this.shared.length - this.head;
  }

  get empty(): boolean {
    return this.head === this.shared.length;
  }

  /** The id of the oldest pending event (nextEventId when none is pending). */
  private get firstId(): number {
    return this.nextEventId - this.size;
  }

  /** Drops every event with id ≤ throughId. */
  prune(throughId: number): void {
    const drop = Math.min(throughId - this.firstId + 1, this.size);
    if (drop <= 0) return;
    const end = this.head + drop;
    for (let i = this.head; i < end; i++) this.release(i);
    this.newestPrunedId = this.firstId + drop - 1;
    if (end === this.shared.length) {
      this.shared = [];
      this.tails = [];
      this.head = 0;
    } else if (end > 64 && end * 2 > this.shared.length) {
      this.shared = this.shared.slice(end);
      this.tails = this.tails.slice(end);
      this.head = 0;
    } else {
      this.head = end;
    }
  }

  /** Drops everything still pending (the queue is going away); ids are kept. */
  clear(): void {
    for (let i = this.head; i < this.shared.length; i++) this.release(i);
    if (!this.empty) this.newestPrunedId = this.nextEventId - 1;
    this.shared = [];
    this.tails = [];
    this.head = 0;
  }

  private release(i: number): void {
    const m = this.memory;
    const shared = this.shared[i]!;
    const tail = this.tails[i]!;
    if (--shared.refs === 0) m.bytes -= shared.size;
    let bytes = shared.open.length + ID_JSON_BYTES;
    if (tail !== null) {
      if (--tail.refs === 0) m.bytes -= tail.size;
      bytes += tail.json.length;
    }
    m.bytes -= ENTRY_BYTES;
    m.entries--;
    this.bytes -= bytes;
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
    const start = this.head + Math.max(0, afterId - first + 1);
    const out: QueuedEvent[] = [];
    for (let i = start, id = first + (start - this.head); i < this.shared.length; i++, id++) {
      const tail = this.tails[i]!;
      out.push({
        id,
        shared: this.shared[i]!,
        tail: tail === null ? '' : tail.json,
        extra: tail === null ? null : tail.extra,
      });
    }
    return out;
  }

  get lastId(): number {
    return this.nextEventId - 1;
  }

  /** Each pending entry, oldest first (saving). */
  forEachPending(fn: (shared: SharedEvent, tail: Tail | null) => void): void {
    for (let i = this.head; i < this.shared.length; i++) fn(this.shared[i]!, this.tails[i]!);
  }
}
