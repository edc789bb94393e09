/**
 * Emptying the WAL under sustained writes (./checkpointer.ts, "Restarting the WAL"; the thread's
 * part: ./checkpoint-thread.ts; the realm actors' part: actors/realm.machine.ts, `commitHold`).
 */

/** WAL size (pages) from which the thread empties it, with the realm actors' batches held. */
export const RESTART_PAGES = 8_000;

/** Uncopied pages small enough to copy while batches are held (about 2 MB). */
export const TAIL_PAGES = 500;

/** Most catch-up checkpoints (without a hold) before the held one. */
export const CATCH_UP_PASSES = 4;

/**
 * The longest a hold lasts (ms), whatever the thread does: past it the actors commit again (the
 * thread then tries again at a later checkpoint; the writer's backstop stays the last resort).
 */
export const MAX_HOLD_MS = 50;

/**
 * The longest the hold lasts while the thread itself starts the WAL afresh (ms): it then holds the
 * database's write lock for one small commit whose WAL header SQLite syncs, an fsync that takes
 * well under a millisecond on a quiet disk and, on this VM, up to a few hundred while other writes
 * reach it. The bound only matters if the thread stops in the middle.
 */
export const RESTART_HOLD_MS = 1_000;

/** How long (ms) the realm actors should still hold their batches, given the hold's deadline. */
export function holdRemaining(deadline: number, now: number): number {
  return deadline > now ? Math.min(MAX_HOLD_MS, deadline - now) : 0;
}
