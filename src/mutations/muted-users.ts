/**
 * Muting users (POST/DELETE /users/me/muted_users/{id}). Reference: views/muted_users.py,
 * actions/muted_users.py. Muting is personal: only the muting user's clients hear of it
 * (`muted_users` with the whole list). Muting marks the muted user's messages as read for the
 * muting user — the first batch here, in the same transaction; the endpoint finishes the rest in
 * further batches (see ./reading.ts) — and from then on their new messages arrive already read
 * (see checkSendMessage).
 */
import { JsonableError, NoSuchUserError } from '../lib/errors.js';
import type { UserRow } from '../storage/users.js';
import { actingUser } from './context.js';
import type { MutationContext } from './context.js';
import { markReadBatch, READ_BATCH, type BatchResult } from './reading.js';

export type MuteUserCommand = { user_id: number; muted_user_id: number; limit?: number };

function target(ctx: MutationContext, id: number): UserRow {
  const u = ctx.realm.user(id);
  if (!u || u.realm_id !== ctx.realm.id) throw new NoSuchUserError();
  return u;
}

function emitMutedUsers(ctx: MutationContext, userId: number): void {
  ctx.emit({ type: 'muted_users', muted_users: ctx.store.mutedUsers.byUser(userId) }, [userId]);
}

/** Mutes a user (bots and deactivated users too); `done` is false when unread messages remain. */
type Muting = { user: UserRow; muted: UserRow; limit?: number | undefined };

export function checkMuteUser(ctx: MutationContext, cmd: MuteUserCommand): Muting {
  const user = actingUser(ctx.realm, cmd.user_id);
  if (cmd.muted_user_id === user.id) throw new JsonableError('Cannot mute self');
  const muted = target(ctx, cmd.muted_user_id);
  if (ctx.store.mutedUsers.isMuted(user.id, muted.id)) {
    throw new JsonableError('User already muted');
  }
  return { user, muted, limit: cmd.limit };
}

export function doMuteUser(ctx: MutationContext, cmd: Muting): BatchResult {
  const { user, muted } = cmd;
  ctx.store.mutedUsers.add(user.id, muted.id, ctx.now);
  const r = markReadBatch(
    ctx,
    user.id,
    { kind: 'sender', sender_id: muted.id },
    Math.max(1, cmd.limit ?? READ_BATCH),
  );
  emitMutedUsers(ctx, user.id);
  return r;
}

export type UnmuteUserCommand = { user_id: number; muted_user_id: number };

export function checkUnmuteUser(ctx: MutationContext, cmd: UnmuteUserCommand): Muting {
  const user = actingUser(ctx.realm, cmd.user_id);
  const muted = target(ctx, cmd.muted_user_id);
  if (!ctx.store.mutedUsers.isMuted(user.id, muted.id))
    throw new JsonableError('User is not muted');
  return { user, muted };
}

export function doUnmuteUser(ctx: MutationContext, cmd: Muting): Record<string, never> {
  const { user, muted } = cmd;
  ctx.store.mutedUsers.remove(user.id, muted.id);
  emitMutedUsers(ctx, user.id);
  return {};
}
