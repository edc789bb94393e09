/**
 * What other mutations do to invitations (kept apart from invites.ts so the user mutations can call
 * it without a cycle). Reference: actions/create_user.py (process_new_human_user revokes the other
 * invitations of a new account's address), lib/invites.py (revoke_invites_generated_by_user, run
 * when a user is deactivated).
 */
import { invitesAudience } from '../queries/invites.js';
import { InvitationStatus } from '../storage/invitations.js';
import type { MutationContext } from './context.js';

/** `invites_changed` to whoever may see the invitations of these creators (null: admins only). */
export function notifyInvitesChanged(ctx: MutationContext, referrers: readonly (number | null)[]) {
  const users = new Set<number>();
  for (const r of referrers.length > 0 ? referrers : [null])
    for (const id of invitesAudience(ctx.realm, r)) users.add(id);
  ctx.emit(
    { type: 'invites_changed' },
    [...users].sort((a, b) => a - b),
  );
}

/**
 * An account now exists for `email`: its pending e-mail invitations can no longer be used and
 * are revoked (an invitation being accepted is marked used before the account is created).
 */
export function revokeEmailInvitationsFor(ctx: MutationContext, email: string): void {
  const pending = ctx.store.invitations.pendingEmailFor(ctx.realm.id, email);
  if (pending.length === 0) return;
  for (const inv of pending) ctx.store.invitations.setStatus(inv.id, InvitationStatus.REVOKED);
  notifyInvitesChanged(
    ctx,
    pending.map((inv) => inv.referred_by),
  );
}

/**
 * A deactivated user's invitations stop working: every pending, unexpired one they created expires
 * now (as the reference sets the confirmations' expiry), and administrators are told.
 */
export function revokeInvitationsCreatedBy(ctx: MutationContext, userId: number): void {
  const valid = ctx.store.invitations.validByReferrer(userId, ctx.now);
  if (valid.length === 0) return;
  // One second back: listing keeps invitations whose expiry is `now` itself.
  for (const inv of valid) ctx.store.invitations.expire(inv.id, ctx.now - 1);
  notifyInvitesChanged(ctx, []);
}
