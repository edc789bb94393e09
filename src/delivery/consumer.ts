/**
 * A consumer attached to a queue: what a queue knows of the client reading it. There are two,
 * and a queue has one slot for them (./queue.ts):
 *
 *   poll    a held GET /events (src/endpoints/events.ts). Answered once, with every pending event:
 *           at once when some are pending or it does not block, else as soon as one is appended,
 *           or with a heartbeat event when none came in time. Answering it detaches it. Replaced
 *           by another consumer, or at shutdown, it is answered with what is pending; when its
 *           queue ends, with what is pending (nothing when the queue was discarded: the client's
 *           next poll learns why).
 *   socket  an event WebSocket (src/http/socket.ts). Sent every pending event on attaching, then
 *           what is appended, one frame per flush, and a heartbeat event after a quiet spell.
 *           Replaced, at shutdown or when its queue ends, it is closed with a CLOSE code.
 *
 * The HTTP layer makes a consumer for its transport and goes through the queues (./publisher.ts:
 * `attach`, `acknowledge`, `detach`) and nothing else: it never sees a queue's state or timers.
 * A consumer that goes away (the request aborted, the socket closed) is detached and costs
 * nothing; nothing is lost, as events leave a queue only when acknowledged.
 */
import type { QueuedEvent } from './wire.js';

export type PollConsumer = {
  readonly kind: 'poll';
  /** GET /events `dont_block`: answered at once, with nothing if nothing is pending. */
  readonly dontBlock: boolean;
  /** Answers the poll; called once. */
  deliver(events: readonly QueuedEvent[]): void;
};

export type SocketConsumer = {
  readonly kind: 'socket';
  /**
   * Sends one frame carrying these events. `events` is the queue's to reuse once this returns
   * (./queue.ts sendPending): build the frame from it here, do not keep it.
   */
  deliver(events: readonly QueuedEvent[]): void;
  /** Closes the socket with one of the CLOSE codes. */
  close(code: number, reason: string): void;
};

export type Consumer = PollConsumer | SocketConsumer;

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

/** Why a consumer is let go of by its queue (it did not go away by itself). */
export type LetGo = EndReason | 'replaced' | 'shutdown';

/** The close code and reason a socket gets when its queue lets go of it. */
export const SOCKET_CLOSE: Record<LetGo, readonly [number, string]> = {
  replaced: [CLOSE.REPLACED, 'replaced'],
  shutdown: [CLOSE.GOING_AWAY, 'server restarting'],
  deleted: [CLOSE.QUEUE_GONE, 'queue deleted'],
  discarded: [CLOSE.QUEUE_GONE, 'queue discarded (too many unacknowledged events)'],
  deactivated: [CLOSE.DEACTIVATED, 'deactivated'],
};
