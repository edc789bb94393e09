/**
 * The buffer of one event queue: pure data, no timers, no I/O (the queue's actor owns the timers
 * and the attached consumer; actors/event-queue.machine.ts). Event ids start at 0 and only
 * increase; an event stays until the client acknowledges an id at or past it (`prune`), so a
 * dropped poll or socket loses nothing.
 */
import { hot } from '../src/observability/metrics.js';
import { JsonableError } from '../src/lib/errors.js';
import {
  SharedEvent,
  storedEventJson,
  type QueueExtra,
  type QueuedEvent,
} from '../src/lib/event-wire.js';

export type SavedEvents = {
  nextEventId: number;
  newestPrunedId: number;
  /** [id, event JSON without id] */
  events: [number, string][];
};

export class EventQueue {
  private items: QueuedEvent[] = [];
  private head = 0;
  /** The id the next pushed event gets. */
  nextEventId = 0;
  /** The highest id acknowledged and dropped so far (-1: none). */
  newestPrunedId = -1;

  push(shared: SharedEvent, tail = '', extra: QueueExtra | null = null): number {
    const id = this.nextEventId++;
    this.items.push({ id, shared, tail, extra });
    hot.eventsQueued++;
    return id;
  }

  get size(): number {
    return this.items.length - this.head;
  }

  get empty(): boolean {
    return this.head === this.items.length;
  }

  /** Drops every event with id ≤ throughId. */
  prune(throughId: number): void {
    const items = this.items;
    let h = this.head;
    while (h < items.length && items[h]!.id <= throughId) {
      this.newestPrunedId = items[h]!.id;
      h++;
    }
    if (h === items.length) {
      this.items = [];
      this.head = 0;
    } else if (h > 64 && h * 2 > items.length) {
      this.items = items.slice(h);
      this.head = 0;
    } else {
      this.head = h;
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
    return this.head === 0 ? this.items.slice() : this.items.slice(this.head);
  }

  /** Pending events with id > afterId. */
  after(afterId: number): QueuedEvent[] {
    const items = this.items;
    let i = this.head;
    while (i < items.length && items[i]!.id <= afterId) i++;
    return items.slice(i);
  }

  get lastId(): number {
    return this.nextEventId - 1;
  }

  save(): SavedEvents {
    const events: [number, string][] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const e = this.items[i]!;
      events.push([e.id, storedEventJson(e)]);
    }
    return { nextEventId: this.nextEventId, newestPrunedId: this.newestPrunedId, events };
  }

  static restore(saved: SavedEvents): EventQueue {
    const q = new EventQueue();
    q.nextEventId = saved.nextEventId;
    q.newestPrunedId = saved.newestPrunedId;
    for (const [id, json] of saved.events) {
      q.items.push({ id, shared: SharedEvent.fromJson(json), tail: '', extra: null });
    }
    return q;
  }
}
