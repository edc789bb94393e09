/**
 * Browser login sessions (src/http/sessions.ts): made by POST /json/login and ended by logout,
 * through the realm actor like every other write (on a cluster they reach every node's copy).
 * The other ends of a session — a new password or API key, a deactivated user or realm — are
 * written by those mutations themselves (`endLoginSessions` below), in the same transaction.
 * Reference: Django's session store, as the reference uses it (SESSION_COOKIE_AGE two weeks,
 * delete_user_sessions / delete_realm_user_sessions on deactivation).
 */
import { RealmDeactivatedError, UserDeactivatedError } from '../lib/errors.js';
import type { MutationContext } from './context.js';

/**
 * Sessions one user may hold at once: a login beyond ends the oldest. Every browser a person uses
 * holds one for two weeks; this many is far more than anyone needs, and bounds what logins can
 * make the server store.
 */
export const MAX_SESSIONS_PER_USER = 64;

export type CreateSessionCommand = {
  user_id: number;
  /** SHA-256 of the session's token (hex); the token itself never reaches the actor. */
  token_hash: string;
  lifetime_seconds: number;
};

export function doCreateSession(
  ctx: MutationContext,
  cmd: CreateSessionCommand,
): { expires_at: number } {
  const { store, realm, now } = ctx;
  // The password was checked before the command; the account may have changed since.
  const user = realm.user(cmd.user_id);
  if (!user || !user.is_active) throw new UserDeactivatedError();
  if (realm.deactivated) throw new RealmDeactivatedError();
  store.sessions.removeExpiredOfUser(user.id, now);
  const over = store.sessions.countOfUser(user.id) - (MAX_SESSIONS_PER_USER - 1);
  if (over > 0) store.sessions.removeOldestOfUser(user.id, over);
  const expiresAt = now + cmd.lifetime_seconds;
  store.sessions.insert({
    token_hash: cmd.token_hash,
    realm_id: realm.id,
    user_id: user.id,
    created_at: now,
    expires_at: expiresAt,
  });
  return { expires_at: expiresAt };
}

/** Logout: the session is gone (whether or not it still existed). */
export function doDeleteSession(
  ctx: MutationContext,
  cmd: { token_hash: string },
): Record<string, never> {
  const row = ctx.store.sessions.byTokenHash(cmd.token_hash);
  if (row && row.realm_id === ctx.realm.id) ctx.store.sessions.remove(cmd.token_hash);
  return {};
}

/**
 * Ends the login sessions of `users` (every user of the realm: 'realm'), but `keep` (the session
 * that set a new password stays logged in, as the reference's update_session_auth_hash does).
 */
export function endLoginSessions(
  ctx: MutationContext,
  users: readonly number[] | 'realm',
  keep: string | null = null,
): void {
  if (users === 'realm') ctx.store.sessions.removeForRealm(ctx.realm.id);
  else for (const id of users) ctx.store.sessions.removeForUser(id, keep);
}
