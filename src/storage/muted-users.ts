/** SQL for muted users (see migration 0011). */
import type { DB } from './db.js';

export type MutedUserEntry = { id: number; timestamp: number };

export function mutedUserStatements(db: DB) {
  const insert = db.prepare<[number, number, number], void>(
    'INSERT INTO muted_users (user_id, muted_user_id, date_muted) VALUES (?, ?, ?)',
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM muted_users WHERE user_id = ? AND muted_user_id = ?',
  );
  const exists = db
    .prepare<[number, number], number>(
      'SELECT EXISTS (SELECT 1 FROM muted_users WHERE user_id = ? AND muted_user_id = ?)',
    )
    .pluck();
  const byUser = db.prepare<[number], MutedUserEntry>(
    `SELECT muted_user_id AS id, date_muted AS timestamp FROM muted_users
     WHERE user_id = ? ORDER BY date_muted, muted_user_id`,
  );
  const muters = db
    .prepare<[number], number>('SELECT user_id FROM muted_users WHERE muted_user_id = ?')
    .pluck();
  const mutedIds = db
    .prepare<[number], number>('SELECT muted_user_id FROM muted_users WHERE user_id = ?')
    .pluck();
  return {
    add: (userId: number, mutedUserId: number, when: number): void =>
      void insert.run(userId, mutedUserId, when),
    /** Returns whether a mute was removed. */
    remove: (userId: number, mutedUserId: number): boolean =>
      remove.run(userId, mutedUserId).changes > 0,
    isMuted: (userId: number, mutedUserId: number): boolean =>
      exists.get(userId, mutedUserId) === 1,
    /** The users `userId` muted, with when (the `muted_users` register field and event). */
    byUser: (userId: number): MutedUserEntry[] => byUser.all(userId),
    /** Ids of the users `userId` muted. */
    mutedIdsOf: (userId: number): number[] => mutedIds.all(userId),
    /** Ids of the users who muted `userId`. */
    mutersOf: (userId: number): number[] => muters.all(userId),
  };
}
export type MutedUserStatements = ReturnType<typeof mutedUserStatements>;
