/**
 * Invitations as GET /invites shows them, and who may see them. Reference:
 * actions/invites.py (do_get_invites_controlled_by_user), lib/invites.py (notify_invites_changed).
 *
 * Administrators manage every invitation of the realm; anyone else only those they created. So
 * `invites_changed` goes to the realm's administrators (bots with that role included) and the
 * creator of the changed invitation.
 */
import { InvitationLinkError, invitationPath } from '../lib/invitations.js';
import { Role } from '../lib/roles.js';
import { InvitationStatus, type InvitationRow } from '../storage/invitations.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

export type ApiInvite =
  | {
      email: string;
      invited_by_user_id: number;
      invited: number;
      expiry_date: number | null;
      id: number;
      invited_as: number;
      is_multiuse: false;
      notify_referrer_on_join: boolean;
    }
  | {
      invited_by_user_id: number;
      invited: number;
      expiry_date: number | null;
      id: number;
      link_url: string;
      invited_as: number;
      is_multiuse: true;
    };

export function formatInvite(row: InvitationRow, realmUrl: string): ApiInvite {
  if (row.multiuse) {
    return {
      invited_by_user_id: row.referred_by,
      invited: row.invited_at,
      expiry_date: row.expiry_date,
      id: row.id,
      link_url: realmUrl + invitationPath(true, row.confirmation_key),
      invited_as: row.invited_as,
      is_multiuse: true,
    };
  }
  return {
    email: row.email!,
    invited_by_user_id: row.referred_by,
    invited: row.invited_at,
    expiry_date: row.expiry_date,
    id: row.id,
    invited_as: row.invited_as,
    is_multiuse: false,
    notify_referrer_on_join: row.notify_referrer_on_join === 1,
  };
}

/** The pending, unexpired invitations `userId` may manage: e-mail invitations, then links. */
export function invitesControlledBy(
  store: ReadStore,
  view: RealmView,
  userId: number,
  now: number,
  realmUrl: string,
): ApiInvite[] {
  const u = view.user(userId);
  const rows =
    u && u.role <= Role.ADMINISTRATOR
      ? store.invitations.validByRealm(view.id, now)
      : store.invitations.validByReferrer(userId, now);
  return rows.map((r) => formatInvite(r, realmUrl));
}

/** Who receives `invites_changed`: active administrators, and the invitation's creator. */
export function invitesAudience(view: RealmView, referrerId: number | null): number[] {
  const out = new Set<number>();
  for (const u of view.usersById.values())
    if (u.is_active && u.role <= Role.ADMINISTRATOR) out.add(u.id);
  if (referrerId !== null && view.user(referrerId)?.is_active) out.add(referrerId);
  return [...out].sort((a, b) => a - b);
}

/** The invitation behind a link of this realm, if it can still be used at `now`. */
export function usableInvitation(
  ctx: { store: ReadStore; realm: RealmView },
  key: string,
  now: number,
): InvitationRow {
  const inv = ctx.store.invitations.byKey(key);
  if (!inv || inv.realm_id !== ctx.realm.id) throw new InvitationLinkError('not_found');
  if (
    inv.status !== InvitationStatus.PENDING ||
    (inv.expiry_date !== null && inv.expiry_date < now)
  )
    throw new InvitationLinkError('expired');
  return inv;
}
