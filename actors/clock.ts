/**
 * The timers the realm actor's machine runs on (xstate's `Clock`): Node's, with two differences —
 * a delay of 0 means "after the current turn of the event loop" (setImmediate, not setTimeout's
 * 1 ms minimum), and timers do not keep the process alive (unref). Tests give the machine
 * xstate's SimulatedClock instead and move time by hand.
 */
import type { ActorOptions, AnyActorLogic } from 'xstate';

/** xstate's Clock (not exported by name). */
export type Clock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

type Handle = { immediate: NodeJS.Immediate } | NodeJS.Timeout;

export const nodeClock: Clock = {
  setTimeout(fn: (...args: unknown[]) => void, ms: number): Handle {
    if (ms <= 0) return { immediate: setImmediate(fn) };
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout(handle: Handle): void {
    if ('immediate' in handle) clearImmediate(handle.immediate);
    else clearTimeout(handle);
  },
};
