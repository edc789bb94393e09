/** SQL for browser login sessions (migration 0019; src/http/sessions.ts says what they are). */
import type { DB } from './db.js';

export type SessionRow = {
  token_hash: string;
  realm_id: number;
  user_id: number;
  created_at: number;
  expires_at: number;
};

export function sessionStatements(db: DB) {
  const insert = db.prepare<SessionRow, void>(
    `INSERT INTO sessions (token_hash, realm_id, user_id, created_at, expires_at)
     VALUES (@token_hash, @realm_id, @user_id, @created_at, @expires_at)`,
  );
  const byTokenHash = db.prepare<[string], SessionRow>(
    'SELECT * FROM sessions WHERE token_hash = ?',
  );
  const remove = db.prepare<[string], void>('DELETE FROM sessions WHERE token_hash = ?');
  const removeForUser = db.prepare<[number], void>('DELETE FROM sessions WHERE user_id = ?');
  const removeForUserExcept = db.prepare<[number, string], void>(
    'DELETE FROM sessions WHERE user_id = ? AND token_hash <> ?',
  );
  const removeForRealm = db.prepare<[number], void>('DELETE FROM sessions WHERE realm_id = ?');
  const removeExpiredOfUser = db.prepare<[number, number], void>(
    'DELETE FROM sessions WHERE user_id = ? AND expires_at <= ?',
  );
  const countOfUser = db
    .prepare<[number], number>('SELECT count(*) FROM sessions WHERE user_id = ?')
    .pluck();
  const removeOldestOfUser = db.prepare<[number, number], void>(
    `DELETE FROM sessions WHERE token_hash IN (
       SELECT token_hash FROM sessions WHERE user_id = ? ORDER BY created_at, token_hash LIMIT ?)`,
  );
  return {
    insert: (row: SessionRow): void => void insert.run(row),
    byTokenHash: (hash: string): SessionRow | undefined => byTokenHash.get(hash),
    countOfUser: (userId: number): number => countOfUser.get(userId) ?? 0,
    remove: (hash: string): void => void remove.run(hash),
    /** Every session of the user, or every one but `keep` (the one that changed the password). */
    removeForUser: (userId: number, keep: string | null = null): void =>
      void (keep === null ? removeForUser.run(userId) : removeForUserExcept.run(userId, keep)),
    removeForRealm: (realmId: number): void => void removeForRealm.run(realmId),
    removeExpiredOfUser: (userId: number, now: number): void =>
      void removeExpiredOfUser.run(userId, now),
    removeOldestOfUser: (userId: number, count: number): void =>
      void removeOldestOfUser.run(userId, count),
  };
}
