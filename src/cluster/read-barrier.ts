/**
 * The read barrier of a cluster node (docs/cluster.md "Guarantees"; ClusterNode.readBarrier):
 * before a request on a node that does not own its realm, learn the log's last position and wait
 * until the node has applied it, within a time budget (CLUSTER_READ_BARRIER_MS); past it, the
 * request is answered 503 and the client asks again.
 */
import { trace } from './trace.js';
import { JsonableError } from '../lib/errors.js';

/** A read on a node that could not catch up with the log in time (the read barrier). */
export class CatchingUpError extends JsonableError {
  constructor() {
    super('This server is catching up with the cluster; try again', {
      code: 'BAD_REQUEST',
      status: 503,
      headers: { 'Retry-After': '1' },
    });
  }
}

/** The barrier's time budget (ms) unless CLUSTER_READ_BARRIER_MS says otherwise. */
export const DEFAULT_READ_BARRIER_MS = 5000;

/** The first pause before the position is asked again after a failed question; it doubles. */
export const POSITION_RETRY_MS = 100;

/** The longest pause between two questions. */
const POSITION_RETRY_MAX_MS = 1000;

export type BarrierSide = {
  /** The log's last position (ClusterNode.lastPosition: JetStream's stream info). */
  position: () => Promise<number>;
  /** Resolves once this node has applied the log up to `seq`. */
  applied: (seq: number) => Promise<void>;
  /** True once the node is stopping: a failed question is not asked again. */
  stopped: () => boolean;
  /**
   * Calls its argument once the node's copy is seen not catching up (its log consumer hands on
   * nothing while the log holds more: LogApplier.onStuck), at once if it is now; returns what
   * stops listening.
   */
  stuck?: (f: () => void) => () => void;
};

/**
 * Resolves once `side.applied` says the node holds what the log held when this was called;
 * rejects with CatchingUpError once `budgetMs` has passed without that. A question for the
 * position that fails (JetStream answers "temporarily unavailable" while its cluster elects a
 * leader, say, or a request to it fails on the way) is asked again after a pause (POSITION_RETRY_MS,
 * doubling up to 1 s) while the budget lasts, instead of failing the request at once; an answer
 * that takes longer than the budget, or a node that lags that far, is answered 503 at its end. A
 * node whose copy is seen not catching up (`side.stuck`) answers 503 then, not at the budget's
 * end: its requests would all wait out the budget (seen as 5 s of every request on a node whose
 * new log consumer JetStream had placed on a dead server), while the client's retry (Retry-After)
 * can go to another node through the proxy.
 */
export function passReadBarrier(
  side: BarrierSide,
  budgetMs: number,
  retryMs = POSITION_RETRY_MS,
): Promise<void> {
  let over = false;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => void) | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      over = true;
      trace('read barrier: over its budget: 503');
      reject(new CatchingUpError());
    }, budgetMs);
    unlisten = side.stuck?.(() => {
      over = true;
      trace('read barrier: this copy is not catching up: 503');
      reject(new CatchingUpError());
    });
  });
  const ready = (async () => {
    for (let pause = retryMs; ; pause = Math.min(2 * pause, POSITION_RETRY_MAX_MS)) {
      // Answered already (stuck): nothing more to ask, nor to wait for.
      if (over) throw new CatchingUpError();
      let seq: number;
      try {
        seq = await side.position();
      } catch (err) {
        trace(`read barrier: no position (${String(err)})`);
        if (over || side.stopped()) throw new CatchingUpError();
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
        if (over) throw new CatchingUpError();
        continue;
      }
      if (over) throw new CatchingUpError();
      return side.applied(seq);
    }
  })();
  return Promise.race([ready, late]).finally(() => {
    over = true;
    clearTimeout(timer);
    unlisten?.();
  });
}
