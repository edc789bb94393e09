/**
 * When the background checkpointer (./checkpoint-thread.ts) checkpoints. Every checkpoint that
 * copies the whole WAL lets the writer's next commit start the WAL afresh, and SQLite syncs a fresh
 * WAL's header in that commit, on the main thread (an fsync: on the project's VM up to half a
 * second while other writes reach the disk). So while the WAL takes little, a checkpoint comes
 * once a second (`maxIntervalMs`); under heavy writes, as soon as TARGET_PAGES are waiting to be
 * copied. The thread looks every `intervalMs` at how many are waiting, in the wal-index header
 * (./wal-index.ts: two reads of the -shm file, no checkpoint), so a burst of writes after a quiet
 * spell is seen within that interval, not at the next checkpoint a second later. (Under steady
 * writes no PASSIVE checkpoint copies the whole WAL: the thread then empties it with the realm
 * actors' commits held, ./checkpointer.ts "Restarting the WAL".)
 */
export const TARGET_PAGES = 2_000;

/**
 * Whether to checkpoint now, given the WAL frames not yet copied (`waiting`; null: the wal-index
 * header could not be read) and the time since the last checkpoint.
 */
export function checkpointDue(
  waiting: number | null,
  sinceLastMs: number,
  maxIntervalMs: number,
): boolean {
  if (waiting === null) return true;
  if (waiting >= TARGET_PAGES) return true;
  return waiting > 0 && sinceLastMs >= maxIntervalMs;
}
