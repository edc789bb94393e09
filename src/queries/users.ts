/**
 * User objects as the API shows them (GET /users, GET /users/{id}, GET /users/me, realm_user
 * events, register's realm_users). Reference: lib/users.py format_user_row.
 */
import { Role } from '../lib/roles.js';
import { canAccessDeliveryEmail } from '../lib/user-settings.js';
import type { UserRow } from '../storage/users.js';
import type { ProfileData, RealmView } from './realm-view.js';
import { defaultAvatarUrl, externalAvatarUrl } from '../lib/avatars.js';

export type ApiUser = {
  user_id: number;
  email: string;
  delivery_email: string | null;
  full_name: string;
  date_joined: string;
  is_active: boolean;
  is_owner: boolean;
  is_admin: boolean;
  is_guest: boolean;
  is_billing_admin: boolean;
  is_bot: boolean;
  bot_type: number | null;
  bot_owner_id?: number | null;
  role: number;
  timezone: string;
  avatar_url: string | null;
  avatar_version: number;
  profile_data?: ProfileData;
};

export type FormatUserOpts = {
  /** The user asking; null when formatting for everyone (events), which hides delivery_email. */
  viewerId: number | null;
  /** Client computes external-host avatar URLs itself: send null for those. Default false. */
  clientExtAvatar?: boolean;
  profileData?: ProfileData;
};

/**
 * The URL of a user's avatar; null when the client computes external-host URLs itself. `medium`:
 * the larger size (GET /avatar/{id}/medium).
 */
export function avatarUrl(
  realm: RealmView,
  u: UserRow,
  clientExtAvatar: boolean,
  medium = false,
): string | null {
  if (u.avatar_source === 'U') {
    return `/user_avatars/${u.realm_id}/${u.id}${medium ? '-medium' : ''}.png?version=${u.avatar_version}`;
  }
  // Unless the realm opted into external avatars, none is computed from the address: not even by
  // a client that could (client_extavatar), as the reference without ENABLE_GRAVATAR.
  if (!realm.settings.external_avatars) return defaultAvatarUrl(u.avatar_version);
  if (clientExtAvatar) return null;
  return externalAvatarUrl(realm.derived(u).emailHash, u.avatar_version, medium);
}

/**
 * The user an address names for `viewerId` (GET /users/{email}, /avatar/{email}): their real
 * address if the viewer may see it, or the dummy `user{id}@{realm host}` of any user.
 */
export function userByAddress(
  realm: RealmView,
  viewerId: number,
  address: string,
  host: string,
): UserRow | undefined {
  const byAddress = realm.userByEmail(address);
  if (byAddress && canSeeDeliveryEmail(realm, viewerId, byAddress)) return byAddress;
  const dummy = /^user([0-9]{1,15})@(.+)$/i.exec(address);
  if (dummy && dummy[2]!.toLowerCase() === host.replace(/:\d+$/, '').toLowerCase()) {
    return realm.user(Number(dummy[1]));
  }
  return undefined;
}

/**
 * Whether `viewerId` may see `target`'s real e-mail address: always their own; otherwise as the
 * target's email_address_visibility allows the viewer's role.
 */
export function canSeeDeliveryEmail(
  realm: RealmView,
  viewerId: number | null,
  target: UserRow,
): boolean {
  if (viewerId === null) return false;
  if (viewerId === target.id) return true;
  const viewer = realm.user(viewerId);
  if (!viewer) return false;
  return canAccessDeliveryEmail(
    viewer.role,
    realm.userSettings(target.id).email_address_visibility,
  );
}

export function formatUser(realm: RealmView, u: UserRow, opts: FormatUserOpts): ApiUser {
  const out: ApiUser = {
    user_id: u.id,
    email: u.email,
    delivery_email: canSeeDeliveryEmail(realm, opts.viewerId, u) ? u.delivery_email : null,
    full_name: u.full_name,
    date_joined: realm.derived(u).dateJoinedIso,
    is_active: u.is_active === 1,
    is_owner: u.role === Role.OWNER,
    is_admin: u.role <= Role.ADMINISTRATOR,
    is_guest: u.role === Role.GUEST,
    is_billing_admin: u.is_billing_admin === 1,
    is_bot: u.is_bot === 1,
    bot_type: u.bot_type,
    role: u.role,
    timezone: u.timezone,
    avatar_url: avatarUrl(realm, u, opts.clientExtAvatar ?? false),
    avatar_version: u.avatar_version,
  };
  if (u.is_bot) out.bot_owner_id = u.bot_owner_id;
  if (opts.profileData) out.profile_data = opts.profileData;
  return out;
}
