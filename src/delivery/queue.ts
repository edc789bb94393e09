/**
 * The event-queue actor: one xstate machine per registered queue, governing its consumer side —
 * who is attached, when to answer, heartbeats, expiry. The machine's context is the one place
 * that says which poll is held and which socket is attached.
 *
 *   idle       nobody attached; events accumulate in the buffer (actors/event-queue.ts)
 *              SWEEP past the idle lifetime → expired
 *   waiting    a long-poll (GET /events) is held; FLUSH (events appended) answers it → idle;
 *              HEARTBEAT (its deadline, armed on entry, passed) answers it with a heartbeat
 *              event → idle
 *   streaming  a WebSocket is attached; appended events are sent as they come; after
 *              `socketHeartbeat` of quiet, a heartbeat event is sent
 *   expired    final: deleted, discarded, its user deactivated (END) or collected (SWEEP)
 *
 * One consumer at a time: a new poll finishes a held one (with whatever is pending, as the
 * reference's finish_current_handler) and replaces an attached socket; a new socket replaces
 * either. A consumer that goes away (ABORT, DETACH) costs nothing and loses nothing: events leave
 * the buffer only when acknowledged.
 *
 * Appending to the buffer, and sending what is pending on an attached socket, are data operations
 * done by the fan-out (actors/event-queues.ts) on what the context names — no transition per
 * event. The fan-out runs after the committing handler returned (setImmediate); it answers the
 * held polls itself (the writes first, for latency) and then sends each answered queue FLUSH,
 * whose answer is then a no-op.
 *
 * Discipline: actions never throw (an xstate action that throws stops the actor for good), assign
 * only computes context, side effects are named actions; answers made from inside another
 * request's handler are deferred (hooks.defer). Timers come from the actor's clock (actors/clock.ts;
 * tests use xstate's SimulatedClock), "now" from hooks.now; a held poll's heartbeat deadline is
 * kept by hooks.heartbeats, one timer for every queue (actors/poll-heartbeats.ts says why).
 */
import { assign, createActor, setup, type Actor } from 'xstate';
import { SharedEvent, type QueuedEvent } from './wire.js';
import type { QueueFilter, QueueSettings } from './filter.js';
import { nodeClock, type Clock } from '../../actors/clock.js';
import type { EventQueue } from './buffer.js';
import type { Disarm, PollHeartbeats } from './heartbeats.js';

/** A held GET /events: answered once, with the pending events. */
export type Waiter = {
  respond(events: QueuedEvent[]): void;
  answered?: boolean;
  /** Disarms its heartbeat deadline while it is held (set by the machine). */
  disarm?: Disarm;
};

/** An attached WebSocket, as the queue sees it. */
export type SocketSink = {
  /** Sends one frame carrying these events. */
  send(events: readonly QueuedEvent[]): void;
  close(code: number, reason: string): void;
};

/** An attachment: the socket and how far it has been sent (the fan-out moves the cursor). */
export type Attachment = { readonly sink: SocketSink; sentThrough: number; lastSend: number };

export type QueueHooks = {
  /** The next heartbeat delay, jitter included (ms). */
  heartbeatDelay(): number;
  /** The shortest heartbeat delay (ms): a socket quiet this long is due one. */
  heartbeatMinMs: number;
  /** Runs `fn` after the current handler has returned (setImmediate). */
  defer(fn: () => void): void;
  now(): number;
  log(msg: string, err: unknown): void;
  /** The machines' timers (nodeClock by default). */
  clock?: Clock;
  /** The held polls' heartbeat deadlines (one timer for every queue: actors/poll-heartbeats.ts). */
  heartbeats: PollHeartbeats;
};

/** WebSocket close codes (documented in docs/events.md). */
export const CLOSE = {
  GOING_AWAY: 1001,
  REPLACED: 4000,
  QUEUE_GONE: 4001,
  BACKPRESSURE: 4002,
  DEACTIVATED: 4003,
} as const;

/** Why a queue ends before its idle lifetime. */
export type EndReason = 'deleted' | 'discarded' | 'deactivated';

const END_CLOSE: Record<EndReason, [number, string]> = {
  deleted: [CLOSE.QUEUE_GONE, 'queue deleted'],
  discarded: [CLOSE.QUEUE_GONE, 'queue discarded (too many unacknowledged events)'],
  deactivated: [CLOSE.DEACTIVATED, 'deactivated'],
};

const HEARTBEAT = SharedEvent.of({ type: 'heartbeat' });

export type QueueEvent =
  | { type: 'POLL'; waiter: Waiter; dontBlock: boolean }
  | { type: 'ABORT'; waiter: Waiter }
  | { type: 'FLUSH' }
  | { type: 'HEARTBEAT'; waiter: Waiter }
  | { type: 'ATTACH'; sink: SocketSink }
  | { type: 'DETACH'; sink: SocketSink }
  | { type: 'SWEEP' }
  | { type: 'END'; reason: EndReason }
  | { type: 'SHUTDOWN' };

export type QueueContext = {
  readonly id: string;
  readonly queue: EventQueue;
  readonly hooks: QueueHooks;
  /** How long the queue may go without a consumer before SWEEP collects it (ms). */
  readonly lifespanMs: number;
  waiter: Waiter | null;
  socket: Attachment | null;
  /** When a consumer last attached, polled or left (ms); the idle lifetime counts from here. */
  lastActivity: number;
};

export type QueueInput = Pick<QueueContext, 'id' | 'queue' | 'hooks' | 'lifespanMs'>;

/** Answers a waiter at most once; a failing response is logged, never thrown. */
export function answerWaiter(ctx: QueueContext, w: Waiter, events: QueuedEvent[]): void {
  if (w.answered) return;
  w.answered = true;
  try {
    w.respond(events);
  } catch (err) {
    ctx.hooks.log(`queue ${ctx.id}: answering a poll failed`, err);
  }
}

/**
 * Sends an attached socket every pending event it has not been sent (a data operation); false
 * when there was nothing to send.
 */
export function sendPending(ctx: QueueContext, a: Attachment): boolean {
  const events = ctx.queue.after(a.sentThrough);
  if (events.length === 0) return false;
  a.sentThrough = events[events.length - 1]!.id;
  a.lastSend = ctx.hooks.now();
  try {
    a.sink.send(events);
  } catch (err) {
    ctx.hooks.log(`queue ${ctx.id}: sending on a socket failed`, err);
  }
  return true;
}

function closeSink(ctx: QueueContext, code: number, reason: string): void {
  try {
    ctx.socket?.sink.close(code, reason);
  } catch (err) {
    ctx.hooks.log(`queue ${ctx.id}: closing a socket failed`, err);
  }
}

export const queueMachine = setup({
  types: {
    context: {} as QueueContext,
    events: {} as QueueEvent,
    input: {} as QueueInput,
  },
  delays: {
    socketHeartbeat: ({ context }) => {
      const s = context.socket;
      const due = (s ? s.lastSend : context.hooks.now()) + context.hooks.heartbeatDelay();
      return Math.max(0, due - context.hooks.now());
    },
  },
  guards: {
    answerNow: ({ context, event }) =>
      event.type === 'POLL' && (event.dontBlock || !context.queue.empty),
    isCurrentWaiter: ({ context, event }) =>
      (event.type === 'ABORT' || event.type === 'HEARTBEAT') && context.waiter === event.waiter,
    isCurrentSocket: ({ context, event }) =>
      event.type === 'DETACH' && context.socket?.sink === event.sink,
    hasPending: ({ context }) => !context.queue.empty,
    idleTooLong: ({ context }) => context.hooks.now() - context.lastActivity >= context.lifespanMs,
    socketQuiet: ({ context }) =>
      context.socket !== null &&
      context.hooks.now() - context.socket.lastSend >= context.hooks.heartbeatMinMs,
  },
  actions: {
    // ---- context ----
    holdPoll: assign(({ context, event }) => ({
      waiter: event.type === 'POLL' ? event.waiter : null,
      lastActivity: context.hooks.now(),
    })),
    releaseWaiter: assign(({ context }) => ({ waiter: null, lastActivity: context.hooks.now() })),
    touch: assign(({ context }) => ({ lastActivity: context.hooks.now() })),
    attachSocket: assign(({ context, event }) => ({
      socket:
        event.type === 'ATTACH'
          ? {
              sink: event.sink,
              sentThrough: context.queue.newestPrunedId,
              lastSend: context.hooks.now(),
            }
          : null,
      lastActivity: context.hooks.now(),
    })),
    releaseSocket: assign(({ context }) => ({ socket: null, lastActivity: context.hooks.now() })),
    // ---- effects ----
    /** The held poll's heartbeat deadline: HEARTBEAT once it passes, unless disarmed. */
    armHeartbeat: ({ context, self }) => {
      const w = context.waiter;
      if (w)
        w.disarm = context.hooks.heartbeats.arm(context.hooks.heartbeatDelay(), () =>
          self.send({ type: 'HEARTBEAT', waiter: w }),
        );
    },
    disarmHeartbeat: ({ context }) => {
      const w = context.waiter;
      if (w?.disarm) {
        w.disarm();
        w.disarm = undefined;
      }
    },
    answerPoll: ({ context, event }) => {
      if (event.type === 'POLL') answerWaiter(context, event.waiter, context.queue.contents());
    },
    answerWaiter: ({ context }) => {
      if (context.waiter) answerWaiter(context, context.waiter, context.queue.contents());
    },
    /** Finishes the held poll after the current handler returns, with what is pending then. */
    finishWaiterLater: ({ context }) => {
      const w = context.waiter;
      if (w) context.hooks.defer(() => answerWaiter(context, w, context.queue.contents()));
    },
    /** The queue ends: its held poll is answered later with what is pending now. */
    finishWaiterForEnd: ({ context, event }) => {
      const w = context.waiter;
      if (!w) return;
      const events =
        event.type === 'END' && event.reason === 'discarded' ? [] : context.queue.contents();
      context.hooks.defer(() => answerWaiter(context, w, events));
    },
    pushHeartbeat: ({ context }) => void context.queue.push(HEARTBEAT),
    sendPending: ({ context }) => {
      if (context.socket) sendPending(context, context.socket);
    },
    replaceSocket: ({ context }) => closeSink(context, CLOSE.REPLACED, 'replaced'),
    endSocket: ({ context, event }) => {
      if (event.type === 'END') closeSink(context, ...END_CLOSE[event.reason]);
    },
    shutdownSocket: ({ context }) => closeSink(context, CLOSE.GOING_AWAY, 'server restarting'),
  },
}).createMachine({
  id: 'eventQueue',
  context: ({ input }) => ({
    ...input,
    waiter: null,
    socket: null,
    lastActivity: input.hooks.now(),
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        POLL: [
          { guard: 'answerNow', actions: ['answerPoll', 'touch'] },
          { target: 'waiting', actions: 'holdPoll' },
        ],
        ATTACH: { target: 'streaming', actions: ['attachSocket', 'sendPending'] },
        SWEEP: { guard: 'idleTooLong', target: 'expired' },
        END: { target: 'expired' },
      },
    },
    waiting: {
      entry: 'armHeartbeat',
      exit: 'disarmHeartbeat',
      on: {
        HEARTBEAT: {
          guard: 'isCurrentWaiter',
          target: 'idle',
          actions: ['pushHeartbeat', 'answerWaiter', 'releaseWaiter'],
        },
        POLL: [
          {
            guard: 'answerNow',
            target: 'idle',
            actions: ['finishWaiterLater', 'answerPoll', 'releaseWaiter'],
          },
          { target: 'waiting', reenter: true, actions: ['finishWaiterLater', 'holdPoll'] },
        ],
        ABORT: { guard: 'isCurrentWaiter', target: 'idle', actions: 'releaseWaiter' },
        FLUSH: { guard: 'hasPending', target: 'idle', actions: ['answerWaiter', 'releaseWaiter'] },
        ATTACH: {
          target: 'streaming',
          actions: ['finishWaiterLater', 'releaseWaiter', 'attachSocket', 'sendPending'],
        },
        END: { target: 'expired', actions: 'finishWaiterForEnd' },
        SHUTDOWN: { target: 'idle', actions: ['answerWaiter', 'releaseWaiter'] },
      },
    },
    streaming: {
      after: {
        socketHeartbeat: [
          {
            guard: 'socketQuiet',
            target: 'streaming',
            reenter: true,
            actions: ['pushHeartbeat', 'sendPending'],
          },
          { target: 'streaming', reenter: true },
        ],
      },
      on: {
        FLUSH: { actions: 'sendPending' },
        POLL: [
          {
            guard: 'answerNow',
            target: 'idle',
            actions: ['replaceSocket', 'releaseSocket', 'answerPoll'],
          },
          { target: 'waiting', actions: ['replaceSocket', 'releaseSocket', 'holdPoll'] },
        ],
        ATTACH: {
          target: 'streaming',
          reenter: true,
          actions: ['replaceSocket', 'attachSocket', 'sendPending'],
        },
        DETACH: { guard: 'isCurrentSocket', target: 'idle', actions: 'releaseSocket' },
        END: { target: 'expired', actions: 'endSocket' },
        SHUTDOWN: { target: 'idle', actions: ['shutdownSocket', 'releaseSocket'] },
      },
    },
    expired: { type: 'final' },
  },
});

export type QueueState = 'idle' | 'waiting' | 'streaming' | 'expired';

/**
 * A registered queue: its id, registration and filter, its buffer, and the actor that governs who
 * consumes it. Everything about the consumer is read from the actor's snapshot.
 */
export class QueueHandle {
  readonly actor: Actor<typeof queueMachine>;

  constructor(
    readonly id: string,
    readonly settings: QueueSettings,
    readonly filter: QueueFilter,
    readonly queue: EventQueue,
    hooks: QueueHooks,
    lifespanMs: number,
  ) {
    this.actor = createActor(queueMachine, {
      input: { id, queue, hooks, lifespanMs },
      clock: hooks.clock ?? nodeClock,
    });
    this.actor.start();
  }

  get userId(): number {
    return this.settings.userId;
  }

  get realmId(): number {
    return this.settings.realmId;
  }

  get context(): QueueContext {
    return this.actor.getSnapshot().context;
  }

  get state(): QueueState {
    return this.actor.getSnapshot().value;
  }

  /** Whether the machine has reached its final state (expired). */
  get ended(): boolean {
    return this.actor.getSnapshot().status === 'done';
  }

  get waiter(): Waiter | null {
    return this.actor.getSnapshot().context.waiter;
  }

  get socket(): Attachment | null {
    return this.actor.getSnapshot().context.socket;
  }

  get hasConsumer(): boolean {
    const c = this.actor.getSnapshot().context;
    return c.waiter !== null || c.socket !== null;
  }

  get lastActivity(): number {
    return this.actor.getSnapshot().context.lastActivity;
  }

  /** Sends the machine an event (nothing once it has ended). */
  send(event: QueueEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }
}
