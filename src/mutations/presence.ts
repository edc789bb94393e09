/**
 * Presence writes that go through the realm actor: the periodic batch write of the in-memory
 * presence (src/queries/presence.ts), and the effect of a user turning `presence_enabled` off or
 * on (called by PATCH /settings' mutation and by POST /users/me/status `away`).
 * Reference: actions/presence.py, actions/user_settings.py (do_change_user_setting).
 */
import { invisibleRecord } from '../lib/presence.js';
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

/**
 * A user's sessions and event queues ended (their deactivation): they are offline from now on,
 * whatever their last report said, so their record's times are pushed back past the offline
 * threshold (as for invisible mode; older times stay). Without this, an account reactivated
 * within the threshold came back "Active now" from the session the deactivation ended. No event:
 * the deactivation's `realm_user` event tells clients (the web app shows them offline from it),
 * and while deactivated the record is in no answer.
 */
export function presenceSessionsEnded(ctx: MutationContext, user: UserRow): void {
  if (user.is_bot) return;
  const presence = realmPresence(ctx.store, ctx.realm);
  const prev = presence.get(user.id);
  if (!prev) return;
  const rec = invisibleRecord(prev, ctx.now, presence.lastUpdateId + 1);
  if (
    rec.last_active_time === prev.last_active_time &&
    rec.last_connected_time === prev.last_connected_time
  )
    return;
  ctx.afterCommit(() => presence.put(user.id, rec));
}

/**
 * A reactivated user's record is given a new `last_update_id`: clients that fetched presence
 * while the user was deactivated have moved past its old one (the record was in no answer then),
 * and their next fetch is to bring it, with the times its deactivation left.
 */
export function presenceReactivated(ctx: MutationContext, user: UserRow): void {
  if (user.is_bot) return;
  const presence = realmPresence(ctx.store, ctx.realm);
  const prev = presence.get(user.id);
  if (!prev) return;
  ctx.afterCommit(() => presence.put(user.id, { ...prev, last_update_id: 0 }));
}
