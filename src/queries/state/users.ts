/**
 * Register snapshot, `realm_user` type: the realm's users (active and not) and the caller's own
 * account and abilities; for spectators, an anonymous guest. Reference: fetch_initial_state_data
 * `if want("realm_user")` and post_process_state (which splits by is_active and drops it).
 */
import { markShared } from '../../lib/shared-parts.js';
import crypto from 'node:crypto';
import { Role } from '../../lib/roles.js';
import type { RealmGroupSettingName } from '../../lib/realm-settings.js';
import type { UserRow } from '../../storage/users.js';
import type { StateContributor, StateRequest } from '../initial-state.js';
import type { RealmView } from '../realm-view.js';
import { avatarUrl, formatUser } from '../users.js';
import { isSystemBot } from '../bots.js';
import { NOTIFICATION_BOT_EMAIL } from '../../lib/notices.js';
import { WELCOME_BOT } from '../../lib/welcome.js';
import { canAccessDeliveryEmail } from '../../lib/user-settings.js';
import { putPreserialized } from '../../lib/preserialized.js';
import { defaultAvatarUrl, externalAvatarUrl } from '../../lib/avatars.js';

/** The system bots a realm may have (the reference's cross-realm bots Confab has). */
const SYSTEM_BOT_EMAILS = [NOTIFICATION_BOT_EMAIL, WELCOME_BOT.email];

/** Who a spectator is, as the reference's stand-in account. */
const SPECTATOR = {
  user_id: 0,
  email: 'username@example.com',
  full_name: 'Anonymous User',
};

function spectatorAvatarUrl(view: RealmView, medium: boolean): string {
  if (!view.settings.external_avatars) return defaultAvatarUrl(1);
  const hash = crypto.createHash('md5').update(SPECTATOR.email).digest('hex');
  return externalAvatarUrl(hash, 1, medium);
}

function can(view: RealmView, user: UserRow | null, setting: RealmGroupSettingName): boolean {
  return user !== null && view.hasRealmPermission(user.id, setting);
}

/**
 * What a user's entry in the lists depends on besides the user: whether the viewer may see their
 * delivery_email, whether the client computes external avatar URLs, and whether profile data is
 * shown (not to spectators, never for bots). One of 8 variants, so each user is serialized at most
 * 8 ways until they change (RealmView.userJson).
 */
function entryJson(
  view: RealmView,
  u: UserRow,
  email: boolean,
  extAvatar: boolean,
  profile: boolean,
): string {
  const variant = (email ? 1 : 0) | (extAvatar ? 2 : 0) | (profile ? 4 : 0);
  return view.userJson(u, variant, () => {
    const api: Record<string, unknown> = formatUser(view, u, {
      viewerId: null,
      clientExtAvatar: extAvatar,
      ...(profile ? { profileData: view.profileData(u.id) } : {}),
    });
    if (email) api.delivery_email = u.delivery_email;
    delete api.is_active;
    return JSON.stringify(api);
  });
}

/** The serialized user lists as a viewer of one role sees them, and where each entry lies. */
type UserLists = {
  active: Buffer;
  inactive: Buffer;
  /** user id → [byte offset, end] of its entry in its list */
  at: Map<number, [number, number]>;
};

/** `role`: the viewer's, or null for a spectator (no delivery e-mail, no profile data). */
function buildLists(view: RealmView, role: number | null, extAvatar: boolean): UserLists {
  const out = { active: [] as string[], inactive: [] as string[] };
  const bytes = { active: 1, inactive: 1 };
  const at = new Map<number, [number, number]>();
  for (const id of view.userIdsAscending()) {
    const u = view.usersById.get(id)!;
    const email =
      role !== null &&
      canAccessDeliveryEmail(role, view.userSettings(u.id).email_address_visibility);
    const json = entryJson(view, u, email, extAvatar, role !== null && !u.is_bot);
    const list = u.is_active ? 'active' : 'inactive';
    if (out[list].length > 0) bytes[list]++;
    const length = Buffer.byteLength(json);
    at.set(id, [bytes[list], bytes[list] + length]);
    bytes[list] += length;
    out[list].push(json);
  }
  return {
    // Kept between registers: compressed once for the clients that take gzip (src/http/gzip.ts).
    active: markShared(Buffer.from(`[${out.active.join(',')}]`)),
    inactive: markShared(Buffer.from(`[${out.inactive.join(',')}]`)),
    at,
  };
}

/**
 * `cross_realm_bots`: the realm's system bots (Notification Bot, Welcome Bot), as the reference's
 * get_cross_realm_dicts shows its cross-realm bots: sorted by name, each as the bot itself would
 * see it (its delivery e-mail, a full avatar URL), `bot_owner_id` null and `is_system_bot` true.
 * Here they are accounts of the realm, so they are in `realm_users` too (docs/api.md).
 */
function crossRealmBots(view: RealmView): Record<string, unknown>[] {
  const bots: Record<string, unknown>[] = [];
  for (const email of SYSTEM_BOT_EMAILS) {
    const u = view.userByEmail(email);
    if (!u || !u.is_active || !isSystemBot(u)) continue;
    const { is_billing_admin: _b, ...api } = formatUser(view, u, { viewerId: null });
    bots.push({
      ...api,
      delivery_email: u.delivery_email,
      bot_owner_id: null,
      is_system_bot: true,
    });
  }
  return bots.sort((a, b) => String(a.full_name).localeCompare(String(b.full_name)));
}

function fillUsers(req: StateRequest, state: Record<string, unknown>): void {
  const view = req.realm;
  const me = req.user;
  const role = me?.role ?? null;
  const ext = req.clientExtAvatar;
  // The lists are kept serialized per viewer role until a user changes; a large realm's are
  // megabytes, copied once into the response.
  const lists = view.overAllUsers(`users:${role}:${ext}`, () => buildLists(view, role, ext));
  let active: Buffer[] = [lists.active];
  let inactive: Buffer[] = [lists.inactive];
  // The viewer always sees their own delivery_email, whatever their setting says for their role.
  const own = me ? lists.at.get(me.id) : undefined;
  if (
    me &&
    own &&
    !canAccessDeliveryEmail(me.role, view.userSettings(me.id).email_address_visibility)
  ) {
    const list = me.is_active ? lists.active : lists.inactive;
    const spliced = [
      list.subarray(0, own[0]),
      Buffer.from(entryJson(view, me, true, ext, !me.is_bot)),
      list.subarray(own[1]),
    ];
    if (me.is_active) active = spliced;
    else inactive = spliced;
  }
  putPreserialized(state, 'realm_users', active);
  putPreserialized(state, 'realm_non_active_users', inactive);
  state.cross_realm_bots = crossRealmBots(view);

  // The caller's own avatar is always a full URL (client_extavatar does not apply).
  if (me) {
    state.avatar_source = me.avatar_source;
    state.avatar_url_medium = avatarUrl(view, me, false, true);
    state.avatar_url = avatarUrl(view, me, false);
  } else {
    state.avatar_source = 'G';
    state.avatar_url_medium = spectatorAvatarUrl(view, true);
    state.avatar_url = spectatorAvatarUrl(view, false);
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

  const myRole = me ? me.role : Role.GUEST;
  state.is_admin = myRole <= Role.ADMINISTRATOR;
  state.is_owner = myRole === Role.OWNER;
  state.is_moderator = myRole === Role.MODERATOR;
  state.is_guest = myRole === Role.GUEST;
  state.user_id = me ? me.id : SPECTATOR.user_id;
  state.email = me ? me.email : SPECTATOR.email;
  state.delivery_email = me ? me.delivery_email : SPECTATOR.email;
  state.full_name = me ? me.full_name : SPECTATOR.full_name;
}

export const usersState: StateContributor = { types: ['realm_user'], fill: fillUsers };
