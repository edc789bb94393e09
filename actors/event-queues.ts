/**
 * The event queues of this process, and the fan-out: the EventPublisher the realm actors publish
 * committed events into.
 *
 * publish() runs synchronously right after a commit (inside the realm actor's command): each
 * OutboundEvent is adapted and serialized once per client variant (src/lib/event-filter.ts,
 * src/lib/event-wire.ts) and appended to every accepting queue of every user it names. Because the
 * append is synchronous and a register builds its snapshot and creates its queue in one
 * synchronous block, an event is either in a snapshot or in the queue after it, never both and
 * never lost. Answering held polls and pushing to sockets happens afterwards, in one setImmediate
 * per batch, outside any request handler (the uWS trap in STYLE.md §4), each response corked.
 *
 * Also here: the periodic garbage-collection sweep (one timer for all queues), deletion, and the
 * graceful shutdown (saving and restoring queues: event-queue-persistence.ts).
 */
import { log } from '../src/observability/log.js';
import crypto from 'node:crypto';
import { BadEventQueueIdError, JsonableError } from '../src/lib/errors.js';
import {
  adaptEvent,
  messageVariant,
  QueueFilter,
  VARIANT_MASK,
  type QueueSettings,
} from '../src/lib/event-filter.js';
import { SharedEvent, type QueueExtra, type QueuedEvent } from '../src/lib/event-wire.js';
import type { EventPublisher, OutboundEvent, WireEvent } from '../src/lib/events.js';
import { EventQueue } from './event-queue.js';
import {
  QueueRuntime,
  startQueueActor,
  type QueueHooks,
  type SocketSink,
  type Waiter,
} from './event-queue.machine.js';

export type EventQueuesConfig = {
  heartbeatMs: number;
  heartbeatJitterMs: number;
  queueIdleLifetimeMs: number;
  queueSweepMs: number;
};

export type EventTap = (realmId: number, events: readonly OutboundEvent[]) => void;

/** The longest idle lifetime a client may ask for (queue_lifespan_secs), as the reference. */
export const MAX_QUEUE_LIFESPAN_MS = 7 * 24 * 3600 * 1000;

export class EventQueues implements EventPublisher {
  private readonly queues = new Map<string, QueueRuntime>();
  private readonly byUser = new Map<number, QueueRuntime[]>();
  /** realm id → queues registered with all_public_streams */
  private readonly allPublic = new Map<number, Set<QueueRuntime>>();
  private readonly dirty = new Set<QueueRuntime>();
  private readonly outbox: (() => void)[] = [];
  private flushScheduled = false;
  private readonly sweepTimer: NodeJS.Timeout;
  private closing = false;
  readonly hooks: QueueHooks;
  /** Seconds since the epoch when this process started (`server_generation`). */
  readonly serverGeneration = Math.floor(Date.now() / 1000);

  constructor(
    private readonly config: EventQueuesConfig,
    private readonly tap?: EventTap,
    private readonly clock: () => number = Date.now,
  ) {
    this.hooks = {
      heartbeatDelay: () =>
        config.heartbeatMs + Math.floor(Math.random() * config.heartbeatJitterMs),
      defer: (fn) => {
        this.outbox.push(fn);
        this.scheduleFlush();
      },
      now: () => this.clock(),
      log: (msg, err) => log.error({ err }, msg),
    };
    this.sweepTimer = setInterval(() => this.sweep(), config.queueSweepMs);
    this.sweepTimer.unref();
  }

  // ---- registration and access --------------------------------------------------------------

  register(settings: QueueSettings): QueueRuntime {
    return this.adopt(crypto.randomUUID(), settings, new EventQueue());
  }

  /** Adds a queue with a known id and buffer (a restored one; see event-queue-persistence.ts). */
  adopt(id: string, settings: QueueSettings, queue: EventQueue): QueueRuntime {
    const rt = new QueueRuntime(id, settings, new QueueFilter(settings), queue, this.hooks);
    startQueueActor(rt);
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
  access(userId: number, queueId: string): QueueRuntime {
    const rt = this.queues.get(queueId);
    if (!rt || rt.userId !== userId) throw new BadEventQueueIdError(queueId);
    return rt;
  }

  get(queueId: string): QueueRuntime | undefined {
    return this.queues.get(queueId);
  }

  get size(): number {
    return this.queues.size;
  }

  /** Every queue (benches, admin tools). */
  list(): QueueRuntime[] {
    return [...this.queues.values()];
  }

  forUser(userId: number): readonly QueueRuntime[] {
    return this.byUser.get(userId) ?? [];
  }

  /** How many queues have a consumer attached (held polls, sockets); for benches and tests. */
  consumers(): { waiting: number; streaming: number } {
    let waiting = 0;
    let streaming = 0;
    for (const rt of this.queues.values()) {
      if (rt.waiter) waiting++;
      else if (rt.socket) streaming++;
    }
    return { waiting, streaming };
  }

  /** DELETE /events, and expiry: finishes any consumer and forgets the queue. */
  remove(rt: QueueRuntime): void {
    if (this.queues.get(rt.id) !== rt) return;
    rt.send({ type: 'EXPIRE' });
    rt.disarm();
    this.queues.delete(rt.id);
    this.dirty.delete(rt);
    const list = this.byUser.get(rt.userId);
    if (list) {
      const rest = list.filter((q) => q !== rt);
      if (rest.length === 0) this.byUser.delete(rt.userId);
      else this.byUser.set(rt.userId, rest);
    }
    this.allPublic.get(rt.realmId)?.delete(rt);
  }

  // ---- consumers ----------------------------------------------------------------------------

  /**
   * GET /events: acknowledges `lastEventId` (refusing ids the queue cannot honour: throws), then
   * answers through `respond` at once when events are pending or `dontBlock`, or holds the request
   * until an event or a heartbeat. A request that goes away (`onAbort`) stops being held; nothing
   * is lost. `respond` is called exactly once unless the client went away.
   */
  poll(
    rt: QueueRuntime,
    lastEventId: number,
    dontBlock: boolean,
    respond: (events: QueuedEvent[]) => void,
    onAbort?: (fn: () => void) => void,
  ): void {
    rt.queue.acknowledge(lastEventId);
    const waiter: Waiter = { respond };
    if (this.closing) {
      respond(rt.queue.contents());
      return;
    }
    rt.send({ type: 'POLL', waiter, dontBlock });
    if (onAbort && rt.waiter === waiter) {
      onAbort(() => {
        if (rt.waiter === waiter) rt.send({ type: 'ABORT', waiter });
      });
    }
  }

  /**
   * A WebSocket attaches (after its upgrade request acknowledged): it gets every pending event,
   * then each new one as it is appended.
   */
  attachSocket(rt: QueueRuntime, socket: SocketSink): void {
    if (this.closing || this.queues.get(rt.id) !== rt) {
      socket.close(
        this.closing ? 1001 : 4001,
        this.closing ? 'server restarting' : 'queue deleted',
      );
      return;
    }
    rt.send({ type: 'ATTACH', socket });
  }

  /** An acknowledgement: the upgrade's `last_event_id`, or a frame on a socket. */
  acknowledge(rt: QueueRuntime, lastEventId: number): void {
    rt.queue.acknowledge(lastEventId);
  }

  detachSocket(rt: QueueRuntime, socket: SocketSink): void {
    rt.send({ type: 'DETACH', socket });
  }

  // ---- fan-out ------------------------------------------------------------------------------

  publish(realmId: number, events: readonly OutboundEvent[]): void {
    try {
      this.tap?.(realmId, events);
    } catch (err) {
      log.error({ err }, 'event tap failed');
    }
    for (const ev of events) {
      try {
        if (ev.event.type === 'message' && ev.message) this.deliverMessage(realmId, ev);
        else this.deliver(realmId, ev);
      } catch (err) {
        log.error({ err, realmId, eventType: ev.event.type }, 'delivering an event failed');
      }
    }
    this.scheduleFlush();
  }

  private deliver(realmId: number, ev: OutboundEvent): void {
    const event = ev.event;
    const mask = VARIANT_MASK[event.type] ?? 0;
    const variants = new Map<number, SharedEvent[]>();
    const flags = event.type === 'update_message' ? ev.flags : undefined;
    for (const userId of ev.users) {
      const list = this.byUser.get(userId);
      if (!list) continue;
      for (const rt of list) {
        if (rt.realmId !== realmId || !rt.filter.accepts(event)) continue;
        const key = rt.filter.bits & mask;
        let shared = variants.get(key);
        if (!shared) {
          shared = adaptEvent(event, key).map((e) => SharedEvent.of(e));
          variants.set(key, shared);
        }
        if (flags) {
          const f = flags[userId] ?? [];
          for (const s of shared) {
            rt.queue.push(s, ',"flags":' + JSON.stringify(f), { top: { flags: f } });
          }
        } else {
          for (const s of shared) rt.queue.push(s);
        }
        this.markDirty(rt);
      }
    }
  }

  private deliverMessage(realmId: number, ev: OutboundEvent): void {
    const d = ev.message!;
    const message = ev.event.message as Record<string, unknown>;
    const recipientId = message.recipient_id;
    const variants = new Map<number, { shared: SharedEvent; view: Record<string, unknown> }>();
    const flagsJson = new Map<string, string>();
    const reached = new Set<QueueRuntime>();
    const mask = VARIANT_MASK.message!;

    const offer = (rt: QueueRuntime, userId: number, flags: readonly string[]) => {
      if (reached.has(rt) || rt.realmId !== realmId || !rt.filter.wantsMessages) return;
      const key = rt.filter.bits & mask;
      let v = variants.get(key);
      if (!v) {
        const view = messageVariant(message, key, d.rawContent, d.senderAvatarIsExternal);
        v = { shared: SharedEvent.openMessage(view), view };
        variants.set(key, v);
      }
      if (!rt.filter.narrowAccepts(v.view, flags)) return;
      reached.add(rt);
      const rid = d.recipientIdFor?.[userId] ?? recipientId;
      const fkey = flags.join('\0');
      let fjson = flagsJson.get(fkey);
      if (fjson === undefined) flagsJson.set(fkey, (fjson = JSON.stringify(flags)));
      let tail = ',"recipient_id":' + JSON.stringify(rid) + '},"flags":' + fjson;
      const extra: QueueExtra = { message: { recipient_id: rid }, top: { flags } };
      if (d.senderQueueId !== undefined && d.localId !== undefined && rt.id === d.senderQueueId) {
        tail += ',"local_message_id":' + JSON.stringify(d.localId);
        extra.top.local_message_id = d.localId;
      }
      rt.queue.push(v.shared, tail, extra);
      this.markDirty(rt);
    };

    for (const userId of ev.users) {
      const list = this.byUser.get(userId);
      if (!list) continue;
      const flags = ev.flags?.[userId] ?? [];
      for (const rt of list) offer(rt, userId, flags);
    }
    if (d.publicChannel) {
      for (const rt of this.allPublic.get(realmId) ?? []) offer(rt, rt.userId, []);
    }
  }

  /** Appends an event to one queue (restart events; tests). */
  pushTo(rt: QueueRuntime, event: WireEvent): void {
    rt.queue.push(SharedEvent.of(event));
    this.markDirty(rt);
    this.scheduleFlush();
  }

  private markDirty(rt: QueueRuntime): void {
    if (rt.waiter !== null || rt.socket !== null) this.dirty.add(rt);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || (this.dirty.size === 0 && this.outbox.length === 0)) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Answers held polls and feeds sockets; runs outside any request handler. */
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
    if (this.dirty.size === 0) return;
    const dirty = [...this.dirty];
    this.dirty.clear();
    // Writes first, state second: every held poll is answered and every socket fed in one pass
    // (data operations, like the append), then each answered queue's machine takes its
    // waiting → idle transition — in the same synchronous block, so no request or event can
    // observe the gap, and the last client is not kept waiting behind the others' transitions.
    const answered: QueueRuntime[] = [];
    for (const rt of dirty) {
      if (rt.socket) {
        rt.sendPending();
      } else if (rt.waiter && !rt.queue.empty) {
        rt.respond(rt.waiter);
        answered.push(rt);
      }
    }
    for (const rt of answered) rt.send({ type: 'FLUSH' });
  }

  // ---- garbage collection -------------------------------------------------------------------

  /** Removes every queue nobody has polled or streamed for its idle lifetime. */
  sweep(): number {
    const now = this.clock();
    const expired: QueueRuntime[] = [];
    for (const rt of this.queues.values()) {
      if (rt.waiter || rt.socket) continue;
      const lifetime = rt.settings.lifespanMs ?? this.config.queueIdleLifetimeMs;
      if (now - rt.lastActivity >= lifetime) expired.push(rt);
    }
    for (const rt of expired) this.remove(rt);
    return expired.length;
  }

  // ---- shutdown and restart -----------------------------------------------------------------

  /**
   * Graceful shutdown, first step: stop the sweep, answer every held poll with what it has, close
   * every socket (1001, the client reconnects), and answer later polls at once.
   */
  beginShutdown(): void {
    this.closing = true;
    clearInterval(this.sweepTimer);
    for (const rt of this.queues.values()) {
      if (rt.waiter || rt.socket) rt.send({ type: 'SHUTDOWN' });
      rt.disarm();
    }
    const deferred = this.outbox.splice(0);
    for (const fn of deferred) fn();
  }

  /** Whether the registry already has a queue with this id. */
  has(queueId: string): boolean {
    return this.queues.has(queueId);
  }

  /** Stops timers (the queues themselves are kept for saving). */
  close(): void {
    clearInterval(this.sweepTimer);
    for (const rt of this.queues.values()) rt.disarm();
  }
}

/** Validation shared by POST /register and GET /events (registering through dont_block). */
export function checkLifespan(secs: number): number | null {
  if (secs < 0) throw new JsonableError('queue_lifespan_secs is too small');
  if (secs === 0) return null;
  return Math.min(secs * 1000, MAX_QUEUE_LIFESPAN_MS);
}
