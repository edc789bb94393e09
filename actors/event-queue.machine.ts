/**
 * The event-queue actor: one xstate machine per registered queue, governing its consumer side —
 * who is attached, when to answer, heartbeats, expiry.
 *
 *   idle       nobody attached; events accumulate in the buffer (actors/event-queue.ts)
 *   waiting    a long-poll (GET /events) is held; the next event or a heartbeat answers it
 *   streaming  a WebSocket is attached; every event is sent as it is appended
 *   expired    final: deleted by the client or collected after the idle lifetime
 *
 * Appending to the buffer is a plain data operation done by the fan-out (actors/event-queues.ts),
 * which then sends FLUSH only to queues with a consumer, in a setImmediate after the committing
 * handler returned. One consumer at a time: a new poll finishes a held one (with whatever is
 * pending, as the reference's finish_current_handler) and replaces an attached socket; a new
 * socket replaces either. A consumer that goes away (ABORT, DETACH) costs nothing and loses
 * nothing: events leave the buffer only when acknowledged.
 *
 * Discipline: actions never throw (an xstate action that throws stops the actor for good); answers
 * to a held poll made from inside another request's handler are deferred (hooks.defer).
 */
import { setup, createActor, type Actor } from 'xstate';
import { SharedEvent, type QueuedEvent } from '../src/lib/event-wire.js';
import type { QueueFilter, QueueSettings } from '../src/lib/event-filter.js';
import type { EventQueue } from './event-queue.js';

/** A held GET /events: answered once, with the pending events. */
export type Waiter = { respond(events: QueuedEvent[]): void; answered?: boolean };

/** An attached WebSocket, as the queue sees it. */
export type SocketSink = {
  /** Sends one frame carrying these events. */
  send(events: readonly QueuedEvent[]): void;
  close(code: number, reason: string): void;
};

export type QueueHooks = {
  /** The next heartbeat delay, jitter included (ms). */
  heartbeatDelay(): number;
  /** Runs `fn` after the current handler has returned (setImmediate). */
  defer(fn: () => void): void;
  now(): number;
  log(msg: string, err: unknown): void;
};

/** WebSocket close codes (documented in docs/events.md). */
export const CLOSE = {
  GOING_AWAY: 1001,
  REPLACED: 4000,
  QUEUE_GONE: 4001,
  BACKPRESSURE: 4002,
} as const;

const HEARTBEAT = SharedEvent.of({ type: 'heartbeat' });

export class QueueRuntime {
  waiter: Waiter | null = null;
  socket: SocketSink | null = null;
  /** Highest event id sent on the current socket. */
  sentThrough = -1;
  /** When a consumer last attached or left (ms); the idle lifetime counts from here. */
  lastActivity: number;
  /** When the attached socket was last sent a frame (ms). */
  lastSend = 0;
  timer: NodeJS.Timeout | null = null;
  actor!: Actor<typeof queueMachine>;

  constructor(
    readonly id: string,
    readonly settings: QueueSettings,
    readonly filter: QueueFilter,
    readonly queue: EventQueue,
    readonly hooks: QueueHooks,
  ) {
    this.lastActivity = hooks.now();
  }

  get userId(): number {
    return this.settings.userId;
  }

  get realmId(): number {
    return this.settings.realmId;
  }

  get state(): 'idle' | 'waiting' | 'streaming' | 'expired' {
    return this.actor.getSnapshot().value;
  }

  send(event: QueueEvent): void {
    this.actor.send(event);
  }

  /**
   * Schedules a heartbeat `total` ms from now (a held poll), or once a socket has been quiet that
   * long: a busy socket does not re-arm on every frame, the timer re-checks when it fires.
   */
  arm(total = this.hooks.heartbeatDelay(), wait = total): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.onTimer(total), wait);
    this.timer.unref();
  }

  private onTimer(total: number): void {
    this.timer = null;
    if (this.socket) {
      const quiet = this.hooks.now() - this.lastSend;
      if (quiet < total) {
        this.arm(total, total - quiet);
        return;
      }
    }
    this.actor.send({ type: 'HEARTBEAT' });
  }

  disarm(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  touch(): void {
    this.lastActivity = this.hooks.now();
  }

  /** Answers a waiter now (its own request's handler, a timer, or the flush), at most once. */
  respond(w: Waiter): void {
    if (w.answered) return;
    w.answered = true;
    try {
      w.respond(this.queue.contents());
    } catch (err) {
      this.hooks.log(`queue ${this.id}: answering a poll failed`, err);
    }
  }

  /** Answers the held poll after the current handler returns; it is no longer held. */
  finishWaiterLater(): void {
    const w = this.waiter;
    this.waiter = null;
    if (w) this.hooks.defer(() => this.respond(w));
  }

  closeSocket(code: number, reason: string): void {
    const s = this.socket;
    this.socket = null;
    if (!s) return;
    try {
      s.close(code, reason);
    } catch (err) {
      this.hooks.log(`queue ${this.id}: closing a socket failed`, err);
    }
  }

  sendPending(): void {
    const s = this.socket;
    if (!s) return;
    const events = this.queue.after(this.sentThrough);
    if (events.length > 0) {
      this.sentThrough = events[events.length - 1]!.id;
      this.lastSend = this.hooks.now();
      try {
        s.send(events);
      } catch (err) {
        this.hooks.log(`queue ${this.id}: sending on a socket failed`, err);
      }
    }
    // The send may have closed it (backpressure).
    if (this.socket === s && this.timer === null) this.arm();
  }
}

export type QueueEvent =
  | { type: 'POLL'; waiter: Waiter; dontBlock: boolean }
  | { type: 'ABORT'; waiter: Waiter }
  | { type: 'FLUSH' }
  | { type: 'HEARTBEAT' }
  | { type: 'ATTACH'; socket: SocketSink }
  | { type: 'DETACH'; socket: SocketSink }
  | { type: 'EXPIRE' }
  | { type: 'SHUTDOWN' };

export const queueMachine = setup({
  types: {
    context: {} as { rt: QueueRuntime },
    events: {} as QueueEvent,
    input: {} as { rt: QueueRuntime },
  },
  guards: {
    answerNow: ({ context, event }) =>
      event.type === 'POLL' && (event.dontBlock || !context.rt.queue.empty),
    isCurrentWaiter: ({ context, event }) =>
      event.type === 'ABORT' && context.rt.waiter === event.waiter,
    isCurrentSocket: ({ context, event }) =>
      event.type === 'DETACH' && context.rt.socket === event.socket,
    hasPending: ({ context }) => !context.rt.queue.empty,
  },
  actions: {
    answer: ({ context, event }) => {
      if (event.type !== 'POLL') return;
      context.rt.respond(event.waiter);
      context.rt.touch();
    },
    park: ({ context, event }) => {
      if (event.type !== 'POLL') return;
      context.rt.waiter = event.waiter;
      context.rt.touch();
    },
    finishWaiterLater: ({ context }) => context.rt.finishWaiterLater(),
    flushWaiter: ({ context }) => {
      const rt = context.rt;
      const w = rt.waiter;
      rt.waiter = null;
      if (w) rt.respond(w);
      rt.touch();
    },
    dropWaiter: ({ context }) => {
      context.rt.waiter = null;
      context.rt.touch();
    },
    pushHeartbeat: ({ context }) => void context.rt.queue.push(HEARTBEAT),
    arm: ({ context }) => context.rt.arm(),
    disarm: ({ context }) => context.rt.disarm(),
    attach: ({ context, event }) => {
      if (event.type !== 'ATTACH') return;
      const rt = context.rt;
      rt.socket = event.socket;
      rt.sentThrough = rt.queue.newestPrunedId;
      rt.lastSend = rt.hooks.now();
      rt.touch();
      rt.disarm();
      rt.sendPending();
    },
    sendPending: ({ context }) => context.rt.sendPending(),
    replaceSocket: ({ context }) => context.rt.closeSocket(CLOSE.REPLACED, 'replaced'),
    goneSocket: ({ context }) => context.rt.closeSocket(CLOSE.QUEUE_GONE, 'queue deleted'),
    shutdownSocket: ({ context }) => context.rt.closeSocket(CLOSE.GOING_AWAY, 'server restarting'),
    detach: ({ context }) => {
      context.rt.socket = null;
      context.rt.touch();
    },
  },
}).createMachine({
  id: 'eventQueue',
  context: ({ input }) => ({ rt: input.rt }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        POLL: [
          { guard: 'answerNow', actions: 'answer' },
          { target: 'waiting', actions: 'park' },
        ],
        ATTACH: { target: 'streaming', actions: 'attach' },
        EXPIRE: { target: 'expired' },
      },
    },
    waiting: {
      entry: 'arm',
      exit: 'disarm',
      on: {
        POLL: [
          { guard: 'answerNow', target: 'idle', actions: ['finishWaiterLater', 'answer'] },
          { target: 'waiting', reenter: true, actions: ['finishWaiterLater', 'park'] },
        ],
        ABORT: { guard: 'isCurrentWaiter', target: 'idle', actions: 'dropWaiter' },
        FLUSH: { guard: 'hasPending', target: 'idle', actions: 'flushWaiter' },
        HEARTBEAT: { target: 'idle', actions: ['pushHeartbeat', 'flushWaiter'] },
        ATTACH: { target: 'streaming', actions: ['finishWaiterLater', 'attach'] },
        EXPIRE: { target: 'expired', actions: 'finishWaiterLater' },
        SHUTDOWN: { target: 'idle', actions: 'flushWaiter' },
      },
    },
    streaming: {
      exit: 'disarm',
      on: {
        FLUSH: { actions: 'sendPending' },
        HEARTBEAT: { actions: ['pushHeartbeat', 'sendPending'] },
        POLL: [
          { guard: 'answerNow', target: 'idle', actions: ['replaceSocket', 'answer'] },
          { target: 'waiting', actions: ['replaceSocket', 'park'] },
        ],
        ATTACH: { target: 'streaming', reenter: true, actions: ['replaceSocket', 'attach'] },
        DETACH: { guard: 'isCurrentSocket', target: 'idle', actions: 'detach' },
        EXPIRE: { target: 'expired', actions: 'goneSocket' },
        SHUTDOWN: { target: 'idle', actions: 'shutdownSocket' },
      },
    },
    expired: { type: 'final' },
  },
});

export function startQueueActor(rt: QueueRuntime): void {
  rt.actor = createActor(queueMachine, { input: { rt } });
  rt.actor.start();
}
