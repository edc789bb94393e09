/**
 * When the background checkpointer (./checkpoint-thread.ts) runs next. Every checkpoint that
 * copies the whole WAL lets the writer's next commit start the WAL afresh, and SQLite syncs a fresh
 * WAL's header in that commit, on the main thread (an fsync: on the project's VM up to half a
 * second while other writes reach the disk). So checkpoints are spaced by the rate the WAL grew at
 * since the last one: one a second (`maxIntervalMs`) while it takes little, sooner (down to
 * `intervalMs`) when it grows fast, so that it holds about TARGET_PAGES between checkpoints under
 * heavy writes. (Under steady writes no PASSIVE checkpoint copies the whole WAL: the thread then
 * empties it with the realm actors' commits held, ./checkpointer.ts "Restarting the WAL".)
 */
export const TARGET_PAGES = 2_000;

/**
 * The delay before the next checkpoint, given the WAL's frames at this one (`walPages`, since its
 * last restart: about those written since the last run) and the time since the last run.
 */
export function checkpointDelay(
  walPages: number,
  elapsedMs: number,
  intervalMs: number,
  maxIntervalMs: number,
): number {
  const perMs = walPages / Math.max(1, elapsedMs);
  if (!(perMs > 0)) return maxIntervalMs;
  return Math.min(maxIntervalMs, Math.max(intervalMs, TARGET_PAGES / perMs));
}
