/**
 * The event queues of this process: the EventPublisher the realm actors publish committed events
 * into (src/lib/events.ts), and the door the HTTP layer's consumers come in by.
 *
 * publish() is the one way in for events: it runs synchronously right after a commit (inside the
 * realm actor's command, or where a cluster node delivers what its log acknowledged) and hands each
 * event to the fan-out (./fanout.ts), which appends it to every accepting queue of every user it
 * names. Because the append is synchronous and a register builds its snapshot and creates its
 * queue in one synchronous block, an event is either in a snapshot or in the queue after it, never
 * both and never lost. Consumers are written to afterwards, in one setImmediate per batch (the
 * flush), outside any request handler (the uWS trap in STYLE.md §4): each queue that was appended
 * to and has a consumer is flushed (./queue.ts answers its held poll or feeds its socket).
 *
 * Consumers (./consumer.ts) attach, acknowledge and detach here: GET /events and the event
 * WebSocket use nothing else of the queues.
 *
 * Bounds (./limits.ts, docs/robustness.md "Event queues"): queues per user, events and bytes
 * per queue (a queue past them is discarded at the end of the publish, its client told
 * BAD_EVENT_QUEUE_ID), and a budget for everything queued (enforced then too).
 *
 * Also here: the periodic garbage-collection sweep (one timer for all queues), deletion, ending a
 * deactivated user's or realm's queues, and the graceful shutdown (saving and restoring queues:
 * ./persistence.ts).
 */
import { log } from '../observability/log.js';
import { observeDelivery } from '../observability/metrics.js';
import crypto from 'node:crypto';
import { BadEventQueueIdError } from '../lib/errors.js';
import { QueueFilter, type QueueSettings } from './filter.js';
import { SharedEvent } from './wire.js';
import type { EventPublisher, OutboundEvent, WireEvent } from '../lib/events.js';
import { EventBuffer, QueueMemory } from './buffer.js';
import { Heartbeats, nodeTimers, type Timers } from './heartbeats.js';
import { deliver, deliverMessage, type FanoutTargets } from './fanout.js';
import {
  budgetOrder,
  givesWay,
  isOverfull,
  QUEUE_MIN_EVENTS,
  resolveLimits,
  TooManyQueuesError,
  type QueueLimits,
} from './limits.js';
import { CLOSE, type Consumer, type EndReason } from './consumer.js';
import { QueueHandle, type QueueHooks } from './queue.js';

export type EventQueuesConfig = {
  /** The server clock (ServerConfig.clock), milliseconds: "now" for expiry, heartbeats, saving. */
  clock: () => number;
  heartbeatMs: number;
  heartbeatJitterMs: number;
  queueIdleLifetimeMs: number;
  queueSweepMs: number;
  /** Cluster deployment: queue ids start with the node's name (the proxy routes by it). */
  queueIdPrefix?: string;
} & Partial<QueueLimits>;

export type EventTap = (realmId: number, events: readonly OutboundEvent[]) => void;

/** What the queues hold (tests, benches, metrics). */
export type QueueStats = {
  queues: number;
  /** Queue entries (one per event per queue). */
  entries: number;
  /** Estimated bytes of queued events (QueueMemory), against `budget`. */
  bytes: number;
  budget: number;
  /** Queues discarded so far for their size or the budget. */
  discarded: number;
};

export class EventQueues implements EventPublisher {
  private readonly queues = new Map<string, QueueHandle>();
  private readonly byUser = new Map<number, QueueHandle[]>();
  /** realm id → queues registered with all_public_streams */
  private readonly allPublic = new Map<number, Set<QueueHandle>>();
  /**
   * The queues appended to since the last flush, each once (QueueHandle.awaitingFlush), in
   * `dirty[0..dirtyCount)`; the flush swaps it with `spareDirty`, so neither is made anew. A Set
   * cleared at every flush did this before, and it made its hash table anew as it filled again
   * each time: once the Set was in V8's old generation, those tables were made there (~0.4 KB per
   * send to 50 sockets; docs/benchmarks.md "What a send leaves in the old generation"). Each
   * array keeps the length of the most queues appended to between two flushes.
   */
  private dirty: (QueueHandle | null)[] = [];
  private spareDirty: (QueueHandle | null)[] = [];
  private dirtyCount = 0;
  /** Told of each queue registered (registerd, not restored): a cluster owner's writer. */
  private readonly registrationWatchers: ((rt: QueueHandle) => void)[] = [];
  /** Queues past their bound during the current publish (discarded at its end). */
  private readonly overfull = new Set<QueueHandle>();
  private readonly outbox: (() => void)[] = [];
  private flushScheduled = false;
  /** When each consumer of a flush was written to (performance.now()), reused by every flush. */
  private writeTimes = new Float64Array(0);
  /** When the oldest event not yet flushed reached a consumed queue (performance.now(); 0: none). */
  private unflushedSince = 0;
  private readonly timers: Timers;
  private sweepTimer: unknown = null;
  private closing = false;
  private discardedCount = 0;
  readonly memory = new QueueMemory();
  private readonly targets: FanoutTargets = {
    byUser: this.byUser,
    allPublic: this.allPublic,
    appended: (rt) => this.appended(rt),
  };
  readonly limits: QueueLimits;
  readonly hooks: QueueHooks;
  /** Seconds since the epoch when this process started (`server_generation`). */
  readonly serverGeneration: number;
  /**
   * Called when a user's last queue that took messages (in a realm) ends by being collected or
   * deleted, with when its client last fetched (ms): missed-message mail looks at what came after
   * (src/mutations/missed-messages.ts doNoteQueueGone).
   */
  onLastMessageQueueGone:
    ((realmId: number, userId: number, lastActivityMs: number) => void) | null = null;

  constructor(
    private readonly config: EventQueuesConfig,
    private readonly tap?: EventTap,
    /** The timers of the heartbeats and the sweep (tests: xstate's SimulatedClock). */
    timers: Timers = nodeTimers,
  ) {
    this.serverGeneration = Math.floor(config.clock() / 1000);
    this.timers = timers;
    this.limits = resolveLimits(config);
    this.hooks = {
      heartbeatDelay: () =>
        config.heartbeatMs + Math.floor(Math.random() * config.heartbeatJitterMs),
      heartbeatMinMs: config.heartbeatMs,
      defer: (fn) => {
        this.outbox.push(fn);
        this.scheduleFlush();
      },
      now: () => this.config.clock(),
      log: (msg, err) => log.error({ err }, msg),
      heartbeats: new Heartbeats(timers, () => this.config.clock()),
    };
    this.armSweep();
  }

  /** "Now" on the server clock, milliseconds. */
  now(): number {
    return this.config.clock();
  }

  /** The next garbage-collection sweep, on the queues' timers (unref'd on Node's). */
  private armSweep(): void {
    this.sweepTimer = this.timers.setTimeout(() => {
      this.sweep();
      this.armSweep();
    }, this.config.queueSweepMs);
  }

  private stopSweep(): void {
    if (this.sweepTimer !== null) this.timers.clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
  }

  // ---- registration and access --------------------------------------------------------------

  /**
   * A new queue for the settings' user. At the per-user limit, the user's least recently used
   * queue gives way if nothing has consumed it for the server's idle lifetime (a client that
   * crashed and registered again); otherwise the registration is refused (TooManyQueuesError).
   */
  register(settings: QueueSettings): QueueHandle {
    const mine = this.byUser.get(settings.userId);
    if (mine && mine.length >= this.limits.maxQueuesPerUser) this.makeRoom(mine);
    const id = `${this.config.queueIdPrefix ?? ''}${crypto.randomUUID()}`;
    const rt = this.adopt(id, settings, this.newBuffer());
    for (const watch of this.registrationWatchers) watch(rt);
    return rt;
  }

  /**
   * Calls `watch` with each queue registered from now on, right as it is made (before its
   * snapshot is read). The cluster's log writer (src/cluster/log-writer.ts) keeps the events of
   * batches its node has committed but the log not yet acknowledged from queues registered in
   * between: their snapshots hold those batches already.
   */
  watchRegistrations(watch: (rt: QueueHandle) => void): void {
    this.registrationWatchers.push(watch);
  }

  private makeRoom(mine: readonly QueueHandle[]): void {
    const gone = givesWay(mine, this.config.clock(), this.config.queueIdleLifetimeMs);
    if (!gone) throw new TooManyQueuesError(this.limits.maxQueuesPerUser);
    this.end(gone, 'discarded');
  }

  /** An empty buffer counted in this server's memory (restored queues fill it). */
  newBuffer(): EventBuffer {
    return new EventBuffer(this.memory);
  }

  /** Adds a queue with a known id and buffer (a restored one; see ./persistence.ts). */
  adopt(id: string, settings: QueueSettings, queue: EventBuffer): QueueHandle {
    const lifespan = settings.lifespanMs ?? this.config.queueIdleLifetimeMs;
    const rt = new QueueHandle(
      id,
      settings,
      new QueueFilter(settings),
      queue,
      this.hooks,
      lifespan,
    );
    this.queues.set(id, rt);
    let list = this.byUser.get(settings.userId);
    if (!list) this.byUser.set(settings.userId, (list = []));
    list.push(rt);
    if (settings.allPublicStreams) {
      let set = this.allPublic.get(settings.realmId);
      if (!set) this.allPublic.set(settings.realmId, (set = new Set()));
      set.add(rt);
    }
    return rt;
  }

  /** The queue, if it exists and belongs to `userId`; BAD_EVENT_QUEUE_ID otherwise (both cases). */
  access(userId: number, queueId: string): QueueHandle {
    const rt = this.queues.get(queueId);
    if (!rt || rt.userId !== userId) throw new BadEventQueueIdError(queueId);
    return rt;
  }

  get(queueId: string): QueueHandle | undefined {
    return this.queues.get(queueId);
  }

  /** Whether the registry already has a queue with this id. */
  has(queueId: string): boolean {
    return this.queues.has(queueId);
  }

  get size(): number {
    return this.queues.size;
  }

  /** Every queue (saving, benches, admin tools). */
  list(): QueueHandle[] {
    return [...this.queues.values()];
  }

  forUser(userId: number): readonly QueueHandle[] {
    return this.byUser.get(userId) ?? [];
  }

  /** How many queues have a consumer attached (held polls, sockets); for benches and tests. */
  consumers(): { waiting: number; streaming: number } {
    let waiting = 0;
    let streaming = 0;
    for (const rt of this.queues.values()) {
      if (rt.state === 'waiting') waiting++;
      else if (rt.state === 'streaming') streaming++;
    }
    return { waiting, streaming };
  }

  stats(): QueueStats {
    return {
      queues: this.queues.size,
      entries: this.memory.entries,
      bytes: this.memory.bytes,
      budget: this.limits.queueMemoryBudgetBytes,
      discarded: this.discardedCount,
    };
  }

  /** DELETE /events: finishes any consumer and forgets the queue. */
  remove(rt: QueueHandle): void {
    const lastActivity = rt.lastActivity;
    this.end(rt, 'deleted');
    this.noteGone(rt, lastActivity);
  }

  /** After a queue was collected or deleted: was it its user's last one taking messages? */
  private noteGone(rt: QueueHandle, lastActivityMs: number): void {
    const hook = this.onLastMessageQueueGone;
    if (hook === null || !rt.filter.wantsMessages || this.queues.has(rt.id)) return;
    const others = this.forUser(rt.userId);
    if (others.some((q) => q.realmId === rt.realmId && q.filter.wantsMessages)) return;
    try {
      hook(rt.realmId, rt.userId, lastActivityMs);
    } catch (err) {
      log.error({ err }, 'the queue-gone hook failed');
    }
  }

  /**
   * Ends the queues of deactivated users (`userIds`) or of a deactivated realm (null): held polls
   * are answered with what they have, sockets closed (4003), queues deleted — the clients' next
   * request is refused by authentication.
   */
  endSessions(realmId: number, userIds: readonly number[] | null): void {
    const ending =
      userIds === null
        ? [...this.queues.values()].filter((rt) => rt.realmId === realmId)
        : userIds.flatMap((id) => this.forUser(id).filter((rt) => rt.realmId === realmId));
    for (const rt of ending) this.end(rt, 'deactivated');
  }

  private end(rt: QueueHandle, reason: EndReason): void {
    if (this.queues.get(rt.id) !== rt) return;
    rt.end(reason);
    this.forget(rt);
    if (reason === 'discarded') this.discardedCount++;
  }

  /** Drops a queue that has ended from every index and releases what it held. */
  private forget(rt: QueueHandle): void {
    this.queues.delete(rt.id);
    rt.awaitingFlush = false; // left in `dirty` if there: the flush skips it
    this.overfull.delete(rt);
    const list = this.byUser.get(rt.userId);
    if (list) {
      const rest = list.filter((q) => q !== rt);
      if (rest.length === 0) this.byUser.delete(rt.userId);
      else this.byUser.set(rt.userId, rest);
    }
    this.allPublic.get(rt.realmId)?.delete(rt);
    rt.queue.clear();
  }

  // ---- consumers ----------------------------------------------------------------------------

  /**
   * A consumer attaches to the queue (./consumer.ts): a poll is answered at once when events are
   * pending or it does not block, else held until an event or a heartbeat; a socket gets every
   * pending event, then each new one as it is appended. Whoever was attached is let go of. Returns
   * whether the consumer stays attached (a held poll, a socket): it then detaches when it goes
   * away. While the server is closing a poll is answered at once and a socket closed (1001); a
   * socket for a queue that has gone since its upgrade is closed (4001).
   */
  attach(rt: QueueHandle, consumer: Consumer): boolean {
    if (this.closing || this.queues.get(rt.id) !== rt) {
      if (consumer.kind === 'poll') consumer.deliver(rt.queue.contents());
      else if (this.closing) consumer.close(CLOSE.GOING_AWAY, 'server restarting');
      else consumer.close(CLOSE.QUEUE_GONE, 'queue deleted');
      return false;
    }
    rt.attach(consumer);
    return rt.consumer === consumer;
  }

  /**
   * An acknowledgement (a poll's or a socket upgrade's `last_event_id`, a socket's frame): drops
   * the events up to it; throws (JsonableError) for an id the queue cannot honour.
   */
  acknowledge(rt: QueueHandle, lastEventId: number): void {
    rt.queue.acknowledge(lastEventId);
  }

  /** A consumer went away (its request aborted, its socket closed): nothing is lost. */
  detach(rt: QueueHandle, consumer: Consumer): void {
    rt.detach(consumer);
  }

  // ---- fan-out ------------------------------------------------------------------------------

  /**
   * Delivers committed events to every queue that takes them; `except` (cluster owners: queues
   * registered after the events' COMMIT, whose snapshots hold them) are left out.
   */
  publish(
    realmId: number,
    events: readonly OutboundEvent[],
    except?: ReadonlySet<QueueHandle>,
  ): void {
    try {
      this.tap?.(realmId, events);
    } catch (err) {
      log.error({ err }, 'event tap failed');
    }
    const targets = except && except.size > 0 ? this.targetsExcept(except) : this.targets;
    for (const ev of events) {
      try {
        if (ev.event.type === 'message' && ev.message) deliverMessage(targets, realmId, ev);
        else deliver(targets, realmId, ev);
      } catch (err) {
        log.error({ err }, `realm ${realmId}: delivering a ${ev.event.type} event failed`);
      }
    }
    this.settle();
    this.scheduleFlush();
  }

  /** The fan-out's targets without `except` (rare: built only when a publish leaves some out). */
  private targetsExcept(except: ReadonlySet<QueueHandle>): FanoutTargets {
    const keep = (rt: QueueHandle) => !except.has(rt);
    return {
      byUser: { get: (userId) => this.byUser.get(userId)?.filter(keep) },
      allPublic: {
        get: (realmId) => {
          const set = this.allPublic.get(realmId);
          return set === undefined ? undefined : [...set].filter(keep);
        },
      },
      appended: (rt) => this.appended(rt),
    };
  }

  /** Appends an event to one queue (restart events; tests). */
  pushTo(rt: QueueHandle, event: WireEvent): void {
    rt.queue.push(SharedEvent.of(event));
    this.appended(rt);
    this.settle();
    this.scheduleFlush();
  }

  /** After an append: a queue past its bound is discarded at the end of the publish. */
  private appended(rt: QueueHandle): void {
    if (isOverfull(rt.queue, this.limits)) this.overfull.add(rt);
    else if (rt.hasConsumer) {
      if (!rt.awaitingFlush) {
        rt.awaitingFlush = true;
        this.dirty[this.dirtyCount++] = rt;
      }
      if (this.unflushedSince === 0) this.unflushedSince = performance.now();
    }
  }

  /** Discards the queues past their bound, then enforces the server-wide budget. */
  private settle(): void {
    if (this.overfull.size > 0) {
      const over = [...this.overfull];
      this.overfull.clear();
      for (const rt of over) {
        console.warn(
          `event queue ${rt.id} of user ${rt.userId} discarded: ${rt.queue.size} unacknowledged ` +
            `events, ${rt.queue.bytes} bytes (bounds: ${this.limits.queueMaxEvents} events; ` +
            `${this.limits.queueMaxBytes} bytes beyond ${QUEUE_MIN_EVENTS} events)`,
        );
        this.end(rt, 'discarded');
      }
    }
    if (this.memory.bytes > this.limits.queueMemoryBudgetBytes) this.enforceBudget();
  }

  /**
   * Everything queued is over the budget: discards queues until it is under 90% of it — those
   * without a consumer first, then the least recently consumed, then the longest.
   */
  private enforceBudget(): void {
    const budget = this.limits.queueMemoryBudgetBytes;
    const before = this.memory.bytes;
    let n = 0;
    for (const rt of budgetOrder(this.queues.values())) {
      if (this.memory.bytes <= budget * 0.9) break;
      this.end(rt, 'discarded');
      n++;
    }
    console.warn(
      `event queues over their memory budget (${before} of ${budget} bytes): ` +
        `discarded ${n}, ${this.memory.bytes} bytes left`,
    );
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || (this.dirtyCount === 0 && this.outbox.length === 0)) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes to the consumers of the queues appended to; runs outside any request handler. */
  private flush(): void {
    this.flushScheduled = false;
    const deferred = this.outbox.splice(0);
    for (const fn of deferred) {
      try {
        fn();
      } catch (err) {
        log.error({ err }, 'deferred queue answer failed');
      }
    }
    const since = this.unflushedSince;
    this.unflushedSince = 0;
    const n = this.dirtyCount;
    if (n === 0) return;
    // The list is swapped out first, as flushing may append (a heartbeat: into the other list) or
    // forget queues (skipped below). Indexed loops, as in ./fanout.ts.
    const dirty = this.dirty;
    this.dirty = this.spareDirty;
    this.spareDirty = dirty;
    this.dirtyCount = 0;
    // Each write's time is noted in the pass and observed after it: a histogram observation (about
    // 0.5 µs) costs five times a note and would delay the later writes. Noted in a reused array of
    // doubles: a plain array boxed each time while this ran unoptimized.
    if (this.writeTimes.length < n) this.writeTimes = new Float64Array(n);
    const written = this.writeTimes;
    let w = 0;
    for (let i = 0; i < n; i++) {
      const rt = dirty[i]!;
      dirty[i] = null;
      if (!rt.awaitingFlush) continue; // forgotten, or flushed already in this pass
      rt.awaitingFlush = false;
      // A queue's fault stays its own: the pass's later queues are still flushed (they are marked
      // as awaiting, so would not be listed again), and this one is listed at its next event.
      try {
        if (rt.flush()) written[w++] = performance.now();
      } catch (err) {
        log.error({ err }, `flushing an event queue failed (${rt.id})`);
      }
    }
    for (let i = 0; i < w; i++) observeDelivery(written[i]! - since);
  }

  // ---- garbage collection -------------------------------------------------------------------

  /** Removes every queue nobody has polled or streamed for its idle lifetime. */
  sweep(): number {
    let n = 0;
    for (const rt of [...this.queues.values()]) {
      const lastActivity = rt.lastActivity;
      if (rt.sweep()) {
        this.forget(rt);
        this.noteGone(rt, lastActivity);
        n++;
      }
    }
    return n;
  }

  // ---- shutdown and restart -----------------------------------------------------------------

  /**
   * Graceful shutdown, first step: stop the sweep, answer every held poll with what it has, close
   * every socket (1001, the client reconnects), and answer later polls at once.
   */
  beginShutdown(): void {
    this.closing = true;
    this.stopSweep();
    for (const rt of this.queues.values()) rt.shutdown();
    const deferred = this.outbox.splice(0);
    for (const fn of deferred) fn();
  }

  /** Stops the timers (the queues themselves are kept for saving). */
  close(): void {
    this.stopSweep();
    this.hooks.heartbeats.clear();
  }
}
