/**
 * Presence writes that go through the realm actor: the periodic batch write of the in-memory
 * presence (src/queries/presence.ts), and the effect of a user turning `presence_enabled` off or
 * on (called by PATCH /settings' mutation and by POST /users/me/status `away`).
 * Reference: actions/presence.py, actions/user_settings.py (do_change_user_setting).
 */
import { presenceEvent, realmPresence } from '../queries/presence.js';
import type { UserRow } from '../storage/users.js';
import type { MutationContext } from './context.js';

/** Writes every presence changed since the last flush, in this command's one transaction. */
export function doFlushPresence(
  ctx: MutationContext,
  _cmd: Record<string, never>,
): { written: number } {
  const presence = realmPresence(ctx.store, ctx.realm);
  if (presence.dirtyCount === 0) return { written: 0 };
  const rows = presence.takeDirty();
  try {
    ctx.store.presence.upsertMany(rows);
  } catch (err) {
    presence.restoreDirty(rows);
    throw err;
  }
  return { written: rows.length };
}

/**
 * A user turned presence sharing off (invisible: shown offline to everyone from now on) or on
 * (active now). Everyone is told at once, even in large realms and realms with presence disabled
 * (the reference's force_send_update). Applied to the in-memory presence after COMMIT.
 */
export function presenceSettingChanged(
  ctx: MutationContext,
  user: UserRow,
  enabled: boolean,
): void {
  const presence = realmPresence(ctx.store, ctx.realm);
  const rec = presence.visibilityRecord(user.id, enabled, ctx.now);
  ctx.emit(
    presenceEvent(user, rec, ctx.now),
    ctx.realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => presence.put(user.id, rec));
}
