/**
 * One event queue: its id, registration and filter, its buffer (./buffer.ts), and its consumer
 * side — a state machine with one slot for the consumer attached (./consumer.ts: a held poll or a
 * WebSocket). The state and the slot are the one record of who reads the queue.
 *
 *   idle       nobody attached; events accumulate in the buffer.
 *              sweep() once idle for the queue's lifetime → expired
 *   waiting    a poll is held. flush() (events were appended) answers it → idle; its heartbeat
 *              deadline passing answers it with a heartbeat event → idle
 *   streaming  a socket is attached. flush() sends it what it has not been sent; a heartbeat event
 *              when it has been sent nothing for the heartbeat delay
 *   expired    final: deleted, discarded, its user deactivated (end()) or collected (sweep())
 *
 * From idle, waiting or streaming: attach(c) lets go of the consumer attached, if any (a poll is
 * answered after the current handler, hooks.defer; a socket closed, 4000), then answers a poll at
 * once when events are pending or it does not block (→ idle) or holds it (→ waiting), or sends a
 * socket what is pending (→ streaming). detach(c), when c is the consumer attached (its request
 * aborted, its socket closed) → idle. end(reason) → expired, the consumer answered or closed as
 * ./consumer.ts says; shutdown() → idle, likewise. A consumer goes in and out of the slot only
 * through these, and a poll leaves the slot before it is answered: it is answered once.
 *
 * Heartbeats: a consumer attached has one deadline in hooks.heartbeats (./heartbeats.ts: one timer
 * for every queue of the server), armed when it attaches and disarmed when it leaves; a socket's
 * is armed again each time it passes, for the heartbeat delay after the last frame sent.
 *
 * This is a plain class, not an xstate actor (it was one until 2026-12): a delivered event moved a
 * long-poll's queue through two transitions (answered, polled again), and an xstate transition
 * cost about 10 µs and 8 KB of garbage, more than the rest of the delivery; what had been built
 * around it to win that back — the flush writing every answer before moving the machines, socket
 * frames and heartbeat deadlines kept outside the machine — is gone with it (docs/architecture.md,
 * docs/benchmarks.md `fanout`). The machine is tested on its own with xstate's SimulatedClock as
 * its timers (test/delivery/queue.test.ts).
 *
 * Discipline: nothing here throws (a consumer that throws is logged and the queue goes on); time
 * is the server clock (hooks.now).
 */
import type { QueueFilter, QueueSettings } from './filter.js';
import type { EventBuffer } from './buffer.js';
import { SOCKET_CLOSE, type Consumer, type EndReason, type LetGo } from './consumer.js';
import type { Disarm, Heartbeats } from './heartbeats.js';
import { SharedEvent, type QueuedEvent } from './wire.js';

export type QueueHooks = {
  /** The next heartbeat delay, jitter included (ms). */
  heartbeatDelay(): number;
  /** The shortest heartbeat delay (ms): a socket sent nothing this long is due one. */
  heartbeatMinMs: number;
  /** Runs `fn` after the current handler has returned (the publisher's next flush). */
  defer(fn: () => void): void;
  /** "Now" on the server clock (ms). */
  now(): number;
  log(msg: string, err: unknown): void;
  /** The heartbeat deadlines of every queue (one timer: ./heartbeats.ts). */
  heartbeats: Heartbeats;
};

export type QueueState = 'idle' | 'waiting' | 'streaming' | 'expired';

/** The consumer in the slot and what the queue keeps about it. */
type Attached = {
  readonly consumer: Consumer;
  /** The newest id sent to a socket (the next flush sends what is after it). */
  sentThrough: number;
  /** When a socket was last sent a frame (ms): a heartbeat is due after a quiet spell. */
  lastSend: number;
  /** Disarms its heartbeat deadline. */
  disarm: Disarm;
};

const HEARTBEAT = SharedEvent.of({ type: 'heartbeat' });
/** The one-event list sendPending fills in place (never kept by a consumer: ./consumer.ts). */
const ONE_EVENT: [QueuedEvent] = [{ id: 0, shared: HEARTBEAT, tail: '', extra: null }];

export class QueueHandle {
  private current: QueueState = 'idle';
  private slot: Attached | null = null;
  /** When a consumer last attached, was answered or left (ms); the idle lifetime counts from here. */
  private lastUsed: number;
  /** In the publisher's list of queues to flush (./publisher.ts `dirty`). */
  awaitingFlush = false;

  constructor(
    readonly id: string,
    readonly settings: QueueSettings,
    readonly filter: QueueFilter,
    readonly queue: EventBuffer,
    private readonly hooks: QueueHooks,
    /** How long the queue may go without a consumer before sweep() collects it (ms). */
    readonly lifespanMs: number,
  ) {
    this.lastUsed = hooks.now();
  }

  get userId(): number {
    return this.settings.userId;
  }

  get realmId(): number {
    return this.settings.realmId;
  }

  get state(): QueueState {
    return this.current;
  }

  /** Whether the queue has reached its final state (expired). */
  get ended(): boolean {
    return this.current === 'expired';
  }

  /** The consumer attached (a held poll or a socket), if any. */
  get consumer(): Consumer | null {
    return this.slot?.consumer ?? null;
  }

  get hasConsumer(): boolean {
    return this.slot !== null;
  }

  get lastActivity(): number {
    return this.lastUsed;
  }

  // ---- transitions ------------------------------------------------------------------------------

  /** A consumer attaches, in place of the one attached (see the module comment). */
  attach(c: Consumer): void {
    if (this.current === 'expired') return;
    const prev = this.slot;
    if (prev !== null) {
      this.release(prev);
      this.letGo(prev.consumer, 'replaced');
    }
    if (c.kind === 'poll' && (c.dontBlock || !this.queue.empty)) {
      this.lastUsed = this.hooks.now();
      this.answer(c, this.queue.contents());
      return;
    }
    const now = this.hooks.now();
    const a: Attached = {
      consumer: c,
      sentThrough: this.queue.newestPrunedId,
      lastSend: now,
      disarm: noop,
    };
    this.slot = a;
    this.lastUsed = now;
    if (c.kind === 'poll') {
      this.current = 'waiting';
      a.disarm = this.hooks.heartbeats.arm(this.hooks.heartbeatDelay(), () => this.pollDue(a));
    } else {
      this.current = 'streaming';
      a.disarm = this.hooks.heartbeats.arm(this.hooks.heartbeatDelay(), () => this.socketDue(a));
      this.sendPending(a);
    }
  }

  /** The consumer went away by itself (its request aborted, its socket closed). */
  detach(c: Consumer): void {
    const a = this.slot;
    if (a !== null && a.consumer === c) this.release(a);
  }

  /**
   * Events were appended: a held poll is answered with everything pending (→ idle), a socket sent
   * what it has not been sent. Whether anything was written.
   */
  flush(): boolean {
    const a = this.slot;
    if (a === null) return false;
    if (a.consumer.kind === 'socket') return this.sendPending(a);
    if (this.queue.empty) return false;
    this.release(a);
    this.answer(a.consumer, this.queue.contents());
    return true;
  }

  /** The garbage-collection sweep: an idle queue unused for its lifetime expires. Whether it did. */
  sweep(): boolean {
    if (this.current !== 'idle') return false;
    if (this.hooks.now() - this.lastUsed < this.lifespanMs) return false;
    this.current = 'expired';
    return true;
  }

  /** The queue ends (deleted, discarded, its user deactivated): its consumer is let go of. */
  end(reason: EndReason): void {
    if (this.current === 'expired') return;
    const a = this.slot;
    if (a !== null) {
      a.disarm();
      this.slot = null;
      this.letGo(a.consumer, reason);
    }
    this.current = 'expired';
  }

  /** The server is closing: a held poll is answered now, a socket closed (1001); the queue stays. */
  shutdown(): void {
    const a = this.slot;
    if (a === null) return;
    this.release(a);
    this.letGo(a.consumer, 'shutdown');
  }

  // ---- effects ----------------------------------------------------------------------------------

  /** Empties the slot (→ idle) and disarms the consumer's heartbeat. */
  private release(a: Attached): void {
    a.disarm();
    this.slot = null;
    this.current = 'idle';
    this.lastUsed = this.hooks.now();
  }

  /** A consumer the queue lets go of: a poll answered (see ./consumer.ts), a socket closed. */
  private letGo(c: Consumer, why: LetGo): void {
    if (c.kind === 'socket') {
      try {
        c.close(...SOCKET_CLOSE[why]);
      } catch (err) {
        this.hooks.log(`queue ${this.id}: closing a socket failed`, err);
      }
    } else if (why === 'shutdown') {
      this.answer(c, this.queue.contents());
    } else if (why === 'replaced') {
      // Inside the handler of the request that replaced it: answered after it, with what is
      // pending then.
      this.hooks.defer(() => this.answer(c, this.queue.contents()));
    } else {
      // The queue ends, and its buffer is cleared: what it has now.
      const events = why === 'discarded' ? [] : this.queue.contents();
      this.hooks.defer(() => this.answer(c, events));
    }
  }

  /** Answers a poll; a failing response is logged, never thrown. */
  private answer(c: Consumer, events: readonly QueuedEvent[]): void {
    try {
      c.deliver(events);
    } catch (err) {
      this.hooks.log(`queue ${this.id}: answering a poll failed`, err);
    }
  }

  /** Sends a socket every pending event it has not been sent; false when there was none. */
  private sendPending(a: Attached): boolean {
    // One event since the last frame (a fan-out's flush): handed over in a reused array, so that
    // feeding thousands of sockets allocates nothing per socket (no garbage collection in the
    // burst; docs/benchmarks.md `fanout`). A socket consumer reads it before it returns.
    const events = this.queue.newestOnlyAfter(a.sentThrough, ONE_EVENT[0])
      ? ONE_EVENT
      : this.queue.after(a.sentThrough);
    if (events.length === 0) return false;
    a.sentThrough = events[events.length - 1]!.id;
    a.lastSend = this.hooks.now();
    try {
      a.consumer.deliver(events);
    } catch (err) {
      this.hooks.log(`queue ${this.id}: sending on a socket failed`, err);
    }
    if (events === ONE_EVENT) ONE_EVENT[0].shared = HEARTBEAT; // keeps no event alive
    return true;
  }

  /** A held poll's heartbeat deadline passed: answered with a heartbeat event (→ idle). */
  private pollDue(a: Attached): void {
    if (this.slot !== a) return;
    this.queue.push(HEARTBEAT);
    this.release(a);
    this.answer(a.consumer, this.queue.contents());
  }

  /** A socket's heartbeat deadline passed: a heartbeat event if it was quiet; the next deadline. */
  private socketDue(a: Attached): void {
    if (this.slot !== a) return;
    const now = this.hooks.now();
    if (now - a.lastSend >= this.hooks.heartbeatMinMs) {
      this.queue.push(HEARTBEAT);
      this.sendPending(a);
    }
    const due = a.lastSend + this.hooks.heartbeatDelay();
    a.disarm = this.hooks.heartbeats.arm(Math.max(0, due - now), () => this.socketDue(a));
  }
}

const noop: Disarm = () => {};
