/**
 * Administration of users: PATCH /users/{user_id} (name, role, custom profile values) and
 * POST /users/{user_id}/reactivate; and keeping the full-members system group right when a role
 * or the realm's waiting period changes. Reference: views/users.py (update_user_backend,
 * reactivate_user_backend, check_last_owner), actions/users.py (do_change_user_role,
 * send_stream_events_for_role_update), actions/create_user.py (do_reactivate_user),
 * actions/user_groups.py (update_users_in_full_members_system_group).
 */
import {
  InsufficientPermissionError,
  JsonableError,
  NoSuchUserError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from '../lib/errors.js';
import { hasMetadataAccess } from '../lib/channel-permissions.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { Role, type Role as RoleValue, type SystemGroupName } from '../lib/roles.js';
import { formatChannel } from '../queries/channels.js';
import type { Channel } from '../queries/channels-view.js';
import type { RealmView } from '../queries/realm-view.js';
import type { CustomProfileFieldRow, UserRow } from '../storage/users.js';
import { streamDeleteEvent } from './channel-events.js';
import { checkFullName } from '../lib/user-rules.js';
import { actingUser, type MutationContext } from './context.js';
import { presenceReactivated } from './presence.js';
import {
  checkProfileDataRemovals,
  checkProfileDataUpdates,
  doRemoveProfileValues,
  doUpdateProfileValues,
  type CheckedValue,
  type ProfileDataUpdate,
} from './profile-fields.js';
import { announceChannelAccessAfterGroupChange } from './user-groups.js';
import { checkUniqueName, doChangeFullName } from './users.js';
import { checkReactivateBot, emitBotActive } from './bot-rules.js';
import { isSystemBot } from '../queries/bots.js';

/** The system group a role puts its users in directly (full members aside). */
const ROLE_GROUP: Readonly<Record<RoleValue, SystemGroupName>> = {
  100: 'role:owners',
  200: 'role:administrators',
  300: 'role:moderators',
  400: 'role:members',
  600: 'role:everyone',
};

const DAY = 86_400;

/** A member who joined less than the waiting period ago is not yet a full member. */
export function isProvisionalMember(
  u: Pick<UserRow, 'date_joined'>,
  waitingPeriodDays: number,
  now: number,
): boolean {
  return Math.floor((now - u.date_joined) / DAY) < waitingPeriodDays;
}

function activeIds(ctx: MutationContext): number[] {
  return ctx.realm.activeUsers().map((u) => u.id);
}

/**
 * update_users_in_full_members_system_group: members (role member) past the waiting period are
 * direct members of `role:fullmembers`, the others are not. `onlyUserIds` limits the check.
 * Returns who was added and who removed (written, events emitted, read model refreshed after
 * commit).
 */
export function syncFullMembers(
  ctx: MutationContext,
  waitingPeriodDays: number,
  onlyUserIds?: readonly number[],
): { added: number[]; removed: number[] } {
  const { store, realm } = ctx;
  const fullId = realm.systemGroupId('role:fullmembers');
  const current = new Set(realm.directMembers.get(fullId) ?? []);
  const candidates = onlyUserIds
    ? onlyUserIds.map((id) => store.users.byId(id)).filter((u): u is UserRow => u !== undefined)
    : store.users.byRealm(realm.id);
  const added: number[] = [];
  const removed: number[] = [];
  for (const u of candidates) {
    const should =
      u.role === Role.MEMBER && !u.is_bot && !isProvisionalMember(u, waitingPeriodDays, ctx.now);
    if (should && !current.has(u.id)) added.push(u.id);
    if (!should && current.has(u.id)) removed.push(u.id);
  }
  const everyone = activeIds(ctx);
  if (removed.length > 0) {
    for (const id of removed) store.groups.removeMember(fullId, id);
    ctx.emit(
      { type: 'user_group', op: 'remove_members', group_id: fullId, user_ids: removed },
      everyone,
    );
  }
  if (added.length > 0) {
    for (const id of added) store.groups.addMember(fullId, id);
    ctx.emit(
      { type: 'user_group', op: 'add_members', group_id: fullId, user_ids: added },
      everyone,
    );
  }
  ctx.afterCommit(() => {
    realm.removeGroupMembers(fullId, removed);
    realm.addGroupMembers(fullId, added);
  });
  return { added, removed };
}

/** After the waiting period changed: full members, and the private channels they reach. */
export function onWaitingPeriodChanged(ctx: MutationContext, waitingPeriodDays: number): void {
  const { added, removed } = syncFullMembers(ctx, waitingPeriodDays);
  if (added.length + removed.length > 0)
    announceChannelAccessAfterGroupChange(ctx, ctx.realm.systemGroupId('role:fullmembers'));
}

/** Every group a user belongs to (directly or through subgroups) once `removed`/`added` apply. */
function groupsOfUserAfter(
  realm: RealmView,
  userId: number,
  removed: readonly number[],
  added: readonly number[],
): Set<number> {
  const direct = new Set<number>();
  for (const [groupId, members] of realm.directMembers)
    if (members.has(userId)) direct.add(groupId);
  for (const g of removed) direct.delete(g);
  for (const g of added) direct.add(g);
  const supergroups = new Map<number, number[]>();
  for (const [groupId, subs] of realm.directSubgroups) {
    for (const sub of subs) {
      let list = supergroups.get(sub);
      if (!list) supergroups.set(sub, (list = []));
      list.push(groupId);
    }
  }
  const out = new Set<number>();
  const stack = [...direct];
  while (stack.length > 0) {
    const g = stack.pop()!;
    if (out.has(g)) continue;
    out.add(g);
    for (const sup of supergroups.get(g) ?? []) stack.push(sup);
  }
  return out;
}

/**
 * send_stream_events_for_role_update: the channels the user may know exist (metadata access,
 * the rules of src/lib/channel-permissions.ts), before (the committed read model) and after (the
 * new role and the group memberships it brings). Those gained arrive as one `stream create` and a
 * `peer_add` per channel with its subscribers, those lost as one `stream delete`. Archived
 * channels do not count, as the reference's.
 */
function announceRoleChannelAccess(
  ctx: MutationContext,
  user: UserRow,
  role: number,
  groupsAfter: ReadonlySet<number>,
): void {
  const view = ctx.realm.channels;
  const inSetting = (value: GroupSettingValue) =>
    typeof value === 'number'
      ? groupsAfter.has(value)
      : value.direct_members.includes(user.id) ||
        value.direct_subgroups.some((g) => groupsAfter.has(g));
  const gained: Channel[] = [];
  const lost: number[] = [];
  for (const ch of view.all()) {
    if (ch.deactivated) continue;
    const had = view.may(user.id, ch, 'metadata');
    const s = ch.settings;
    const has = hasMetadataAccess({
      user: { role, is_active: true },
      channel: {
        invite_only: ch.invite_only === 1,
        is_web_public: ch.is_web_public === 1,
        history_public_to_subscribers: ch.history_public_to_subscribers === 1,
        deactivated: false,
      },
      subscribed: view.isSubscribed(user.id, ch.id),
      inChannel: {
        can_add_subscribers_group: inSetting(s.can_add_subscribers_group),
        can_remove_subscribers_group: inSetting(s.can_remove_subscribers_group),
        can_administer_channel_group: inSetting(s.can_administer_channel_group),
        can_send_message_group: inSetting(s.can_send_message_group),
        can_subscribe_group: inSetting(s.can_subscribe_group),
        can_delete_any_message_group: inSetting(s.can_delete_any_message_group),
        can_delete_own_message_group: inSetting(s.can_delete_own_message_group),
      },
      // Metadata access does not depend on realm-level permissions.
      inRealm: view.realmMembership(user.id),
    });
    if (has && !had) gained.push(ch);
    if (had && !has) lost.push(ch.id);
  }
  if (gained.length > 0) {
    ctx.emit(
      {
        type: 'stream',
        op: 'create',
        streams: gained.map((ch) => formatChannel(ctx.realm, ch, ctx.now)),
      },
      [user.id],
    );
    for (const ch of gained) {
      const subscribers = view.subscriberIds(ch.id);
      if (subscribers.length > 0)
        ctx.emit(
          { type: 'subscription', op: 'peer_add', stream_ids: [ch.id], user_ids: subscribers },
          [user.id],
        );
    }
  }
  if (lost.length > 0) ctx.emit(streamDeleteEvent(lost), [user.id]);
}

/**
 * do_change_user_role: the role, the system groups that mirror it (and full membership), and the
 * channels the user may now know or no longer know. Everyone learns the role
 * (`realm_user` `update`) and the group changes (`user_group` remove/add_members).
 */
export function doChangeUserRole(ctx: MutationContext, target: UserRow, role: RoleValue): void {
  const { store, realm } = ctx;
  const old = target.role as RoleValue;
  if (old === role) return;
  store.users.setRole(target.id, role);
  const everyone = activeIds(ctx);
  ctx.emit({ type: 'realm_user', op: 'update', person: { user_id: target.id, role } }, everyone);
  const oldGroup = realm.systemGroupId(ROLE_GROUP[old]);
  const newGroup = realm.systemGroupId(ROLE_GROUP[role]);
  store.groups.removeMember(oldGroup, target.id);
  store.groups.addMember(newGroup, target.id);
  ctx.emit(
    { type: 'user_group', op: 'remove_members', group_id: oldGroup, user_ids: [target.id] },
    everyone,
  );
  ctx.emit(
    { type: 'user_group', op: 'add_members', group_id: newGroup, user_ids: [target.id] },
    everyone,
  );
  ctx.afterCommit(() => {
    realm.reloadUser(target.id);
    realm.removeGroupMembers(oldGroup, [target.id]);
    realm.addGroupMembers(newGroup, [target.id]);
  });
  let full = { added: [] as number[], removed: [] as number[] };
  if (old === Role.MEMBER || role === Role.MEMBER) {
    full = syncFullMembers(ctx, realm.settings.waiting_period_threshold, [target.id]);
  }
  if (target.is_active) {
    const fullId = realm.systemGroupId('role:fullmembers');
    const groupsAfter = groupsOfUserAfter(
      realm,
      target.id,
      [oldGroup, ...(full.removed.length > 0 ? [fullId] : [])],
      [newGroup, ...(full.added.length > 0 ? [fullId] : [])],
    );
    announceRoleChannelAccess(ctx, target, role, groupsAfter);
  }
}

/** access_user_by_id(for_admin=True): administrators, or the owner of a bot. */
function targetForAdmin(ctx: MutationContext, actor: UserRow, userId: number): UserRow {
  const target = ctx.store.users.byId(userId);
  // The system bots keep their role and state: nobody administers them.
  if (!target || target.realm_id !== ctx.realm.id || isSystemBot(target))
    throw new NoSuchUserError();
  const isAdmin = actor.role <= Role.ADMINISTRATOR;
  if (!isAdmin && target.bot_owner_id !== actor.id) throw new InsufficientPermissionError();
  return target;
}

export type UpdateUserCommand = {
  acting_user_id: number;
  user_id: number;
  full_name?: string;
  role?: RoleValue;
  /** Entries with a null or empty value remove the user's value for that field. */
  profile_data?: ProfileDataUpdate[];
};

/** What a checked PATCH /users/{user_id} changes; absent parts stay as they are. */
export type UserUpdate = {
  target: UserRow;
  role?: RoleValue;
  full_name?: string;
  /** The custom profile values to clear, then those to set (when profile_data was given). */
  profile?: { removals: CustomProfileFieldRow[]; updates: CheckedValue[] };
};

/**
 * PATCH /users/{user_id}: role, then name, then custom profile values, as the reference. Every
 * part is checked before any is changed (none of the later checks depends on the earlier
 * changes).
 */
export function checkUpdateUser(ctx: MutationContext, cmd: UpdateUserCommand): UserUpdate {
  const { realm } = ctx;
  const actor = actingUser(ctx.realm, cmd.acting_user_id);
  const target = targetForAdmin(ctx, actor, cmd.user_id);
  const plan: UserUpdate = { target };

  if (cmd.role !== undefined && cmd.role !== target.role) {
    if ((cmd.role === Role.OWNER || target.role === Role.OWNER) && actor.role !== Role.OWNER)
      throw new OrganizationOwnerRequiredError();
    if (actor.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
    if (target.role === Role.OWNER && !target.is_bot) {
      const otherOwners = realm
        .activeUsers()
        .filter((u) => u.role === Role.OWNER && !u.is_bot && u.id !== target.id);
      if (otherOwners.length === 0)
        throw new JsonableError(
          'The owner permission cannot be removed from the only organization owner.',
        );
    }
    plan.role = cmd.role;
  }

  if (
    cmd.full_name !== undefined &&
    cmd.full_name !== target.full_name &&
    cmd.full_name.trim() !== ''
  ) {
    // An administrator's change: name_changes_disabled does not apply.
    const name = checkFullName(cmd.full_name);
    checkUniqueName(realm, name, target.id);
    if (name !== target.full_name) plan.full_name = name;
  }

  if (cmd.profile_data !== undefined) {
    const isEmpty = (v: unknown) => v === null || v === '' || (Array.isArray(v) && v.length === 0);
    const removals = checkProfileDataRemovals(
      ctx,
      actor,
      cmd.profile_data.filter((d) => isEmpty(d.value)).map((d) => d.id),
    );
    const updates = checkProfileDataUpdates(
      ctx,
      actor,
      cmd.profile_data.filter((d) => !isEmpty(d.value)),
    );
    plan.profile = { removals, updates };
  }
  return plan;
}

export function doUpdateUser(ctx: MutationContext, plan: UserUpdate): Record<string, never> {
  let target = plan.target;
  if (plan.role !== undefined) {
    doChangeUserRole(ctx, target, plan.role);
    target = ctx.store.users.byId(target.id)!;
  }
  if (plan.full_name !== undefined) doChangeFullName(ctx, target, plan.full_name);
  if (plan.profile !== undefined) {
    doRemoveProfileValues(ctx, target.id, plan.profile.removals);
    doUpdateProfileValues(ctx, target.id, plan.profile.updates);
  }
  return {};
}

/** POST /users/{user_id}/reactivate: the account to reactivate, or null when already active. */
export function checkReactivateUser(
  ctx: MutationContext,
  cmd: { acting_user_id: number; user_id: number },
): UserRow | null {
  const actor = actingUser(ctx.realm, cmd.acting_user_id);
  const target = targetForAdmin(ctx, actor, cmd.user_id);
  if (target.is_active) return null;
  if (target.is_bot) checkReactivateBot(ctx, actor, target);
  return target;
}

/**
 * do_reactivate_user: everyone learns the account is active again, then those who may see the
 * subscribers of its (unarchived) channels learn it is back in them. Reactivating an active
 * account changes nothing.
 */
export function doReactivateUser(
  ctx: MutationContext,
  target: UserRow | null,
): Record<string, never> {
  const { store, realm } = ctx;
  if (target === null) return {};
  store.users.setActive(target.id, true);
  ctx.emit({ type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: true } }, [
    ...activeIds(ctx),
    target.id,
  ]);
  const view = realm.channels;
  for (const [channelId, sub] of view.subscriptionsOf(target.id)) {
    const ch = view.byId(channelId);
    if (!sub.active || !ch || ch.deactivated) continue;
    // The committed model still has the user inactive: the audience is everyone else.
    const peers = view.metadataAudience(ch);
    if (peers.length > 0)
      ctx.emit(
        { type: 'subscription', op: 'peer_add', stream_ids: [ch.id], user_ids: [target.id] },
        peers,
      );
  }
  emitBotActive(ctx, target, true);
  presenceReactivated(ctx, target);
  ctx.afterCommit(() => realm.reloadUser(target.id));
  return {};
}
