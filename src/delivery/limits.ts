/**
 * The bounds on what event queues hold, and whom they cost (docs/robustness.md "Event queues"):
 * a user holds at most `maxQueuesPerUser` queues; a queue holding more than `queueMaxEvents`
 * unacknowledged events, or more than QUEUE_MIN_EVENTS whose size passes `queueMaxBytes`, is
 * discarded (its client gets BAD_EVENT_QUEUE_ID and registers again); when everything queued
 * passes `queueMemoryBudgetBytes`, queues are discarded in budgetOrder until it is back under 90%.
 * A queue's idle lifetime is at most a week (checkLifespan).
 */
import { JsonableError } from '../lib/errors.js';
import type { EventBuffer } from './buffer.js';
import type { QueueHandle } from './queue.js';

export type QueueLimits = {
  /** Queues one user may hold at once (POST /register beyond: 400). */
  maxQueuesPerUser: number;
  /** Unacknowledged events beyond which a queue is discarded. */
  queueMaxEvents: number;
  /** Unacknowledged bytes (as sent) beyond which a queue over QUEUE_MIN_EVENTS is discarded. */
  queueMaxBytes: number;
  /** Estimated bytes of every queued event of the server, each distinct event counted once. */
  queueMemoryBudgetBytes: number;
};

export const DEFAULT_QUEUE_LIMITS: QueueLimits = {
  maxQueuesPerUser: 100,
  queueMaxEvents: 10_000,
  queueMaxBytes: 64 * 1024 * 1024,
  queueMemoryBudgetBytes: 1024 * 1024 * 1024,
};

/** No queue holding fewer unacknowledged events than this is discarded for its size. */
export const QUEUE_MIN_EVENTS = 5_000;

export class TooManyQueuesError extends JsonableError {
  constructor(limit: number) {
    super(
      `Too many event queues: a user may have at most ${limit} at once; ` +
        'delete unused ones (DELETE /api/v1/events) or let them expire',
    );
  }
}

/** The limits a configuration asks for (defaults for what it leaves out; never under the floor). */
export function resolveLimits(config: Partial<QueueLimits>): QueueLimits {
  return {
    maxQueuesPerUser: config.maxQueuesPerUser ?? DEFAULT_QUEUE_LIMITS.maxQueuesPerUser,
    queueMaxEvents: Math.max(
      QUEUE_MIN_EVENTS,
      config.queueMaxEvents ?? DEFAULT_QUEUE_LIMITS.queueMaxEvents,
    ),
    queueMaxBytes: config.queueMaxBytes ?? DEFAULT_QUEUE_LIMITS.queueMaxBytes,
    queueMemoryBudgetBytes:
      config.queueMemoryBudgetBytes ?? DEFAULT_QUEUE_LIMITS.queueMemoryBudgetBytes,
  };
}

/** Whether a queue is past its bounds (it is then discarded). */
export function isOverfull(q: EventBuffer, l: QueueLimits): boolean {
  return q.size > l.queueMaxEvents || (q.bytes > l.queueMaxBytes && q.size > QUEUE_MIN_EVENTS);
}

/**
 * At the per-user limit, the queue that gives way for a new one: the user's least recently used
 * queue without a consumer, if nothing has consumed it for `idleMs` (a client that crashed and
 * registered again); null if none may.
 */
export function givesWay(
  mine: readonly QueueHandle[],
  now: number,
  idleMs: number,
): QueueHandle | null {
  let oldest: QueueHandle | null = null;
  for (const rt of mine) {
    if (!rt.hasConsumer && (oldest === null || rt.lastActivity < oldest.lastActivity)) {
      oldest = rt;
    }
  }
  return oldest && now - oldest.lastActivity >= idleMs ? oldest : null;
}

/**
 * The order queues are discarded in when everything queued is over the budget: those holding
 * events and without a consumer first, then the least recently consumed, then the longest.
 */
export function budgetOrder(queues: Iterable<QueueHandle>): QueueHandle[] {
  const rank = [...queues]
    .filter((rt) => !rt.queue.empty)
    .map((rt) => ({ rt, busy: rt.hasConsumer, last: rt.lastActivity, bytes: rt.queue.bytes }));
  rank.sort((a, b) => Number(a.busy) - Number(b.busy) || a.last - b.last || b.bytes - a.bytes);
  return rank.map((r) => r.rt);
}

/** The longest idle lifetime a client may ask for (queue_lifespan_secs), as the reference. */
export const MAX_QUEUE_LIFESPAN_MS = 7 * 24 * 3600 * 1000;

/** Validation shared by POST /register and GET /events (registering through dont_block). */
export function checkLifespan(secs: number): number | null {
  if (secs < 0) throw new JsonableError('queue_lifespan_secs is too small');
  if (secs === 0) return null;
  return Math.min(secs * 1000, MAX_QUEUE_LIFESPAN_MS);
}
