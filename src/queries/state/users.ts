/**
 * Register snapshot, `realm_user` type: the realm's users (active and not) and the caller's own
 * account and abilities; for spectators, an anonymous guest. Reference: fetch_initial_state_data
 * `if want("realm_user")` and post_process_state (which splits by is_active and drops it).
 */
import crypto from 'node:crypto';
import { Role } from '../../lib/roles.js';
import type { RealmGroupSettingName } from '../../lib/realm-settings.js';
import type { UserRow } from '../../storage/users.js';
import type { StateContributor, StateRequest } from '../initial-state.js';
import type { RealmView } from '../realm-view.js';
import { avatarUrl, formatUser } from '../users.js';

/** Who a spectator is, as the reference's stand-in account. */
const SPECTATOR = {
  user_id: 0,
  email: 'username@example.com',
  full_name: 'Anonymous User',
};

function mediumAvatarUrl(view: RealmView, u: UserRow): string {
  const url = avatarUrl(view, u, false)!;
  if (u.avatar_source === 'U') return url.replace(/\.png\?/, '-medium.png?');
  return `${url}&s=500`;
}

function gravatar(email: string, size?: number): string {
  const hash = crypto.createHash('md5').update(email.trim().toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=1${size ? `&s=${size}` : ''}`;
}

function can(view: RealmView, user: UserRow | null, setting: RealmGroupSettingName): boolean {
  return user !== null && view.hasRealmPermission(user.id, setting);
}

function fillUsers(req: StateRequest, state: Record<string, unknown>): void {
  const view = req.realm;
  const me = req.user;
  const active: Record<string, unknown>[] = [];
  const inactive: Record<string, unknown>[] = [];
  const ids = [...view.usersById.keys()].sort((a, b) => a - b);
  for (const id of ids) {
    const u = view.usersById.get(id)!;
    const api: Record<string, unknown> = formatUser(view, u, {
      viewerId: me?.id ?? null,
      clientExtAvatar: req.clientExtAvatar,
      // Spectators see no custom profile field values.
      ...(me !== null && !u.is_bot ? { profileData: view.profileData(u.id) } : {}),
    });
    delete api.is_active;
    (u.is_active ? active : inactive).push(api);
  }
  state.realm_users = active;
  state.realm_non_active_users = inactive;
  // No cross-realm (system) bots exist on this server.
  state.cross_realm_bots = [];

  // The caller's own avatar is always a full URL (client_extavatar does not apply).
  if (me) {
    state.avatar_source = me.avatar_source;
    state.avatar_url_medium = mediumAvatarUrl(view, me);
    state.avatar_url = avatarUrl(view, me, false);
  } else {
    state.avatar_source = 'G';
    state.avatar_url_medium = gravatar(SPECTATOR.email, 500);
    state.avatar_url = gravatar(SPECTATOR.email);
  }

  const pub = can(view, me, 'can_create_public_channel_group');
  const priv = can(view, me, 'can_create_private_channel_group');
  const web = can(view, me, 'can_create_web_public_channel_group');
  state.can_create_private_streams = priv;
  state.can_create_public_streams = pub;
  state.can_create_web_public_streams = web;
  state.can_create_streams = pub || priv || web;
  state.can_subscribe_other_users = can(view, me, 'can_add_subscribers_group');
  state.can_invite_others_to_realm = can(view, me, 'can_invite_users_group');

  const role = me ? me.role : Role.GUEST;
  state.is_admin = role <= Role.ADMINISTRATOR;
  state.is_owner = role === Role.OWNER;
  state.is_moderator = role === Role.MODERATOR;
  state.is_guest = role === Role.GUEST;
  state.user_id = me ? me.id : SPECTATOR.user_id;
  state.email = me ? me.email : SPECTATOR.email;
  state.delivery_email = me ? me.delivery_email : SPECTATOR.email;
  state.full_name = me ? me.full_name : SPECTATOR.full_name;
}

export const usersState: StateContributor = { types: ['realm_user'], fill: fillUsers };
