/**
 * User groups: create, rename/describe/re-permission, members and subgroups, deactivate.
 * Reference: views/user_groups.py, lib/user_groups.py (access_user_group_for_update,
 * check_user_group_name, lock_subgroups_with_respect_to_supergroup,
 * access_user_group_for_deactivation), actions/user_groups.py.
 *
 * Group membership decides channel access through the channels' group settings, so a membership
 * change also announces `stream create` / `stream delete` to users who gain or lose the right to
 * know a private channel.
 */
import { MAX_USER_GROUP_NAME_LENGTH } from '../lib/channel-rules.js';
import { codePointLength } from '../lib/strings.js';
import {
  InsufficientPermissionError,
  InvalidUserGroupError,
  JsonableError,
  UserGroupDeactivatedError,
} from '../lib/errors.js';
import {
  CHANNEL_GROUP_SETTING_NAMES,
  USER_GROUP_SETTING_CONFIG,
  USER_GROUP_SETTING_NAMES,
  checkGroupSettingChange,
  normalizeGroupSettingValue,
  validateGroupSettingValue,
  type UserGroupSettingName,
} from '../lib/group-settings.js';
import {
  REALM_GROUP_SETTING_DEFAULTS,
  isRealmGroupSettingName,
  type GroupSettingValue,
} from '../lib/realm-settings.js';
import { Role } from '../lib/roles.js';
import { RealmView } from '../queries/realm-view.js';
import {
  formatUserGroup,
  userGroupSetting,
  type StoredGroupSettings,
} from '../queries/user-groups.js';
import type { UserGroupRow } from '../storage/groups.js';
import { groupSettingForApi } from '../queries/channels.js';
import { announceAccessChange } from './channel-events.js';
import { actingUser } from './context.js';
import type { MutationContext } from './context.js';

const INVALID_NAME_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

export function checkUserGroupName(name: string): string {
  if (name.trim() === '') throw new JsonableError("User group name can't be empty!");
  if (codePointLength(name) > MAX_USER_GROUP_NAME_LENGTH)
    throw new JsonableError(
      `User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`,
    );
  for (const prefix of INVALID_NAME_PREFIXES) {
    if (name.startsWith(prefix))
      throw new JsonableError(`User group name cannot start with '${prefix}'.`);
  }
  return name;
}

/** Whether a user counts as a member of one of a group's settings (guests as the setting says). */
function inGroupSetting(
  realm: RealmView,
  userId: number,
  g: UserGroupRow,
  name: UserGroupSettingName,
): boolean {
  const u = realm.user(userId);
  if (!u) return false;
  if (u.role === Role.GUEST && !USER_GROUP_SETTING_CONFIG[name].allowEveryone) return false;
  return realm.isUserInGroupSetting(userId, userGroupSetting(realm, g, name));
}

/**
 * The group a change targets: managers of the group (or of all groups) may do anything;
 * otherwise the given setting must include the user. System groups are never changed here.
 */
export function accessUserGroupForUpdate(
  realm: RealmView,
  userId: number,
  groupId: number,
  setting: UserGroupSettingName,
  opts: { allowDeactivated?: boolean } = {},
): UserGroupRow {
  const g = realm.group(groupId);
  if (!g) throw new InvalidUserGroupError();
  if (g.deactivated && !opts.allowDeactivated) throw new UserGroupDeactivatedError();
  if (g.is_system_group) throw new InsufficientPermissionError();
  const u = realm.user(userId);
  if (u && u.role !== Role.GUEST && realm.hasRealmPermission(userId, 'can_manage_all_groups'))
    return g;
  if (inGroupSetting(realm, userId, g, 'can_manage_group')) return g;
  if (setting !== 'can_manage_group' && inGroupSetting(realm, userId, g, setting)) return g;
  throw new InsufficientPermissionError();
}

function checkMembers(realm: RealmView, ids: readonly number[]): void {
  for (const id of ids) {
    const u = realm.user(id);
    if (!u || !u.is_active) throw new JsonableError(`Invalid user ID: ${id}`);
  }
}

function allUsers(realm: RealmView): number[] {
  return realm.activeUsers().map((u) => u.id);
}

/**
 * After the memberships of `changedGroupId` changed (written, not yet committed): announce the
 * private channels whose audience changed. Only channels whose access-granting settings involve
 * that group or a group containing it can change; for those, the committed read model is compared
 * with a fresh one read inside the transaction.
 */
export function announceChannelAccessAfterGroupChange(
  ctx: MutationContext,
  changedGroupId: number,
): void {
  const { realm, store } = ctx;
  // The changed group and every group it is (recursively) a subgroup of.
  const affected = new Set<number>([changedGroupId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [gid, subs] of realm.directSubgroups) {
      if (affected.has(gid)) continue;
      for (const s of subs) {
        if (affected.has(s)) {
          affected.add(gid);
          grew = true;
          break;
        }
      }
    }
  }
  const involves = (v: GroupSettingValue) =>
    typeof v === 'number' ? affected.has(v) : v.direct_subgroups.some((g) => affected.has(g));
  const candidates = [...realm.channels.all()].filter(
    (ch) =>
      ch.invite_only &&
      !ch.is_web_public &&
      (involves(ch.settings.can_administer_channel_group) ||
        involves(ch.settings.can_add_subscribers_group) ||
        involves(ch.settings.can_subscribe_group)),
  );
  if (candidates.length === 0) return;
  const after = new RealmView(store, realm.id);
  for (const ch of candidates) {
    const before = realm.channels.metadataAudience(ch);
    const afterAudience = after.channels.metadataAudience(after.channels.byId(ch.id)!);
    announceAccessChange(ctx, ch, before, afterAudience, realm.channels.subscriberIds(ch.id));
  }
}

// ---- create ---------------------------------------------------------------------------------

export type CreateUserGroupCommand = {
  acting_user_id: number;
  name: string;
  description: string;
  members: number[];
  subgroups: number[];
  settings: Partial<Record<UserGroupSettingName, GroupSettingValue>>;
};

/** A checked new user group: its name, creator and the settings given (validated). */
export type NewUserGroup = {
  cmd: CreateUserGroupCommand;
  name: string;
  creator_id: number;
  settings: StoredGroupSettings;
};

export function checkCreateUserGroup(
  ctx: MutationContext,
  cmd: CreateUserGroupCommand,
): NewUserGroup {
  const { realm, store } = ctx;
  const user = actingUser(realm, cmd.acting_user_id);
  if (user.role === Role.GUEST || !realm.hasRealmPermission(user.id, 'can_create_groups'))
    throw new InsufficientPermissionError();
  const name = checkUserGroupName(cmd.name);
  if (store.groups.byName(realm.id, name))
    throw new JsonableError(`User group '${name}' already exists.`);
  checkMembers(realm, cmd.members);
  for (const id of cmd.subgroups) {
    const g = realm.group(id);
    if (!g) throw new JsonableError(`Invalid user group ID: ${id}`);
    if (g.deactivated) throw new UserGroupDeactivatedError();
  }
  const settings: StoredGroupSettings = {};
  for (const s of USER_GROUP_SETTING_NAMES) {
    const raw = cmd.settings[s];
    if (raw !== undefined)
      settings[s] = validateGroupSettingValue(realm, s, USER_GROUP_SETTING_CONFIG[s], raw);
  }
  return { cmd, name, creator_id: user.id, settings };
}

export function doCreateUserGroup(ctx: MutationContext, plan: NewUserGroup): { group_id: number } {
  const { realm, store } = ctx;
  const { cmd, name } = plan;
  const settings: StoredGroupSettings = { ...plan.settings };
  const groupId = store.groups.insert({
    realm_id: realm.id,
    name,
    description: cmd.description,
    is_system_group: 0,
    creator_id: plan.creator_id,
    date_created: ctx.now,
    settings: '{}',
  });
  const row = store.groups.byId(groupId)!;
  // Store every setting explicitly, defaults included, so later changes elsewhere cannot move them.
  for (const s of USER_GROUP_SETTING_NAMES) settings[s] ??= userGroupSetting(realm, row, s);
  store.groups.updateSettings(groupId, JSON.stringify(settings));
  for (const id of new Set(cmd.members)) store.groups.addMember(groupId, id);
  for (const id of new Set(cmd.subgroups)) store.groups.addSubgroup(groupId, id);

  const group = formatUserGroup(realm, store.groups.byId(groupId)!, {
    members: new Set(cmd.members),
    subgroups: new Set(cmd.subgroups),
  });
  // A new group is in no setting yet, so no channel's audience changes.
  ctx.emit({ type: 'user_group', op: 'add', group }, allUsers(realm));
  ctx.afterCommit(() => {
    realm.reloadGroup(groupId);
    realm.addGroupMembers(groupId, cmd.members);
    realm.addSubgroups(groupId, cmd.subgroups);
  });
  return { group_id: groupId };
}

// ---- update name, description, settings ------------------------------------------------------

export type UpdateUserGroupCommand = {
  acting_user_id: number;
  group_id: number;
  name?: string;
  description?: string;
  settings: Partial<
    Record<UserGroupSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>
  >;
};

/** A checked update of a user group: what changes, as the event's `data` and as stored. */
export type UserGroupUpdate = {
  group: UserGroupRow;
  data: Record<string, unknown>;
  /** The group's stored settings after the change; null when no setting changes. */
  settings: StoredGroupSettings | null;
};

export function checkUpdateUserGroup(
  ctx: MutationContext,
  cmd: UpdateUserGroupCommand,
): UserGroupUpdate {
  const { realm, store } = ctx;
  actingUser(realm, cmd.acting_user_id);
  if (
    cmd.name === undefined &&
    cmd.description === undefined &&
    Object.keys(cmd.settings).length === 0
  )
    throw new JsonableError('No new data supplied');
  const g = accessUserGroupForUpdate(realm, cmd.acting_user_id, cmd.group_id, 'can_manage_group', {
    allowDeactivated: true,
  });
  const data: Record<string, unknown> = {};
  if (cmd.name !== undefined && cmd.name !== g.name) {
    const name = checkUserGroupName(cmd.name);
    if (store.groups.byName(realm.id, name))
      throw new JsonableError(`User group '${name}' already exists.`);
    data.name = name;
  }
  if (cmd.description !== undefined && cmd.description !== g.description)
    data.description = cmd.description;
  const stored = JSON.parse(g.settings) as StoredGroupSettings;
  const nobody = realm.systemGroupId('role:nobody');
  let settingsChanged = false;
  for (const s of USER_GROUP_SETTING_NAMES) {
    const change = cmd.settings[s];
    if (!change) continue;
    const current = userGroupSetting(realm, g, s);
    const next = normalizeGroupSettingValue(change.new, nobody);
    if (!checkGroupSettingChange(current, next, change.old, nobody)) continue;
    const value = validateGroupSettingValue(realm, s, USER_GROUP_SETTING_CONFIG[s], next);
    stored[s] = value;
    settingsChanged = true;
    data[s] = groupSettingForApi(realm, value);
  }
  return { group: g, data, settings: settingsChanged ? stored : null };
}

export function doUpdateUserGroup(
  ctx: MutationContext,
  { group: g, data, settings }: UserGroupUpdate,
): Record<string, never> {
  const { realm, store } = ctx;
  if (typeof data.name === 'string') store.groups.updateName(g.id, data.name);
  if (typeof data.description === 'string') store.groups.updateDescription(g.id, data.description);
  if (settings !== null) store.groups.updateSettings(g.id, JSON.stringify(settings));
  if (Object.keys(data).length > 0) {
    // A deactivated group exists only for clients with include_deactivated_groups: the marker
    // keeps the update (a rename) from the others (the event queues strip it).
    ctx.emit(
      {
        type: 'user_group',
        op: 'update',
        group_id: g.id,
        data,
        ...(g.deactivated ? { deactivated: true } : {}),
      },
      allUsers(realm),
    );
  }
  ctx.afterCommit(() => realm.reloadGroup(g.id));
  return {};
}

// ---- members and subgroups ------------------------------------------------------------------

export type UserGroupMembersCommand = {
  acting_user_id: number;
  group_id: number;
  add: number[];
  delete: number[];
  add_subgroups: number[];
  delete_subgroups: number[];
};

/** A checked change of a group's members and subgroups. */
export type UserGroupMembersChange = { group_id: number; cmd: UserGroupMembersCommand };

export function checkUpdateUserGroupMembers(
  ctx: MutationContext,
  cmd: UserGroupMembersCommand,
): UserGroupMembersChange {
  const { realm } = ctx;
  const me = cmd.acting_user_id;
  actingUser(realm, me);
  if (
    cmd.add.length === 0 &&
    cmd.delete.length === 0 &&
    cmd.add_subgroups.length === 0 &&
    cmd.delete_subgroups.length === 0
  )
    throw new JsonableError(
      'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    );

  const access = (setting: UserGroupSettingName, selfSetting?: UserGroupSettingName) => {
    if (selfSetting) {
      try {
        return accessUserGroupForUpdate(realm, me, cmd.group_id, selfSetting);
      } catch (err) {
        if (!(err instanceof InsufficientPermissionError)) throw err;
      }
    }
    return accessUserGroupForUpdate(realm, me, cmd.group_id, setting);
  };
  const selfOnly = (ids: number[]) => ids.length === 1 && ids[0] === me;
  const g = realm.group(cmd.group_id);
  if (!g) throw new InvalidUserGroupError();
  const members = new Set(realm.directMembers.get(g.id) ?? []);
  const subgroups = new Set(realm.directSubgroups.get(g.id) ?? []);

  if (cmd.add.length > 0) {
    access('can_add_members_group', selfOnly(cmd.add) ? 'can_join_group' : undefined);
    checkMembers(realm, cmd.add);
    for (const id of cmd.add)
      if (members.has(id)) throw new JsonableError(`User ${id} is already a member of this group`);
  }
  if (cmd.delete.length > 0) {
    access('can_remove_members_group', selfOnly(cmd.delete) ? 'can_leave_group' : undefined);
    checkMembers(realm, cmd.delete);
    for (const id of cmd.delete)
      if (!members.has(id))
        throw new JsonableError(`There is no member '${id}' in this user group`);
  }
  if (cmd.add_subgroups.length > 0) {
    access('can_add_members_group');
    for (const id of cmd.add_subgroups) {
      const sub = realm.group(id);
      if (!sub) throw new JsonableError(`Invalid user group ID: ${id}`);
      if (sub.deactivated) throw new UserGroupDeactivatedError();
      if (subgroups.has(id))
        throw new JsonableError(`User group ${id} is already a subgroup of this group.`);
    }
    // No cycles: the group must not be (a subgroup of) any group it is given as a subgroup.
    const reachable = new Set<number>();
    const stack = [...cmd.add_subgroups];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (reachable.has(id)) continue;
      reachable.add(id);
      for (const s of realm.directSubgroups.get(id) ?? []) stack.push(s);
    }
    if (reachable.has(g.id))
      throw new JsonableError(
        `User group ${g.id} is already a subgroup of one of the passed subgroups.`,
      );
  }
  if (cmd.delete_subgroups.length > 0) {
    access('can_remove_members_group');
    for (const id of cmd.delete_subgroups) {
      if (!realm.group(id)) throw new JsonableError(`Invalid user group ID: ${id}`);
      if (!subgroups.has(id))
        throw new JsonableError(`User group ${id} is not a subgroup of this group.`);
    }
  }
  return { group_id: g.id, cmd };
}

export function doUpdateUserGroupMembers(
  ctx: MutationContext,
  change: UserGroupMembersChange,
): Record<string, never> {
  const { realm, store } = ctx;
  const { cmd } = change;
  const g = { id: change.group_id };
  const everyone = allUsers(realm);
  const uniq = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);
  if (cmd.add.length > 0) {
    for (const id of uniq(cmd.add)) store.groups.addMember(g.id, id);
    ctx.emit(
      { type: 'user_group', op: 'add_members', group_id: g.id, user_ids: uniq(cmd.add) },
      everyone,
    );
  }
  if (cmd.delete.length > 0) {
    for (const id of uniq(cmd.delete)) store.groups.removeMember(g.id, id);
    ctx.emit(
      { type: 'user_group', op: 'remove_members', group_id: g.id, user_ids: uniq(cmd.delete) },
      everyone,
    );
  }
  if (cmd.add_subgroups.length > 0) {
    for (const id of uniq(cmd.add_subgroups)) store.groups.addSubgroup(g.id, id);
    ctx.emit(
      {
        type: 'user_group',
        op: 'add_subgroups',
        group_id: g.id,
        direct_subgroup_ids: uniq(cmd.add_subgroups),
      },
      everyone,
    );
  }
  if (cmd.delete_subgroups.length > 0) {
    for (const id of uniq(cmd.delete_subgroups)) store.groups.removeSubgroup(g.id, id);
    ctx.emit(
      {
        type: 'user_group',
        op: 'remove_subgroups',
        group_id: g.id,
        direct_subgroup_ids: uniq(cmd.delete_subgroups),
      },
      everyone,
    );
  }
  announceChannelAccessAfterGroupChange(ctx, g.id);
  ctx.afterCommit(() => {
    realm.addGroupMembers(g.id, cmd.add);
    realm.removeGroupMembers(g.id, cmd.delete);
    realm.addSubgroups(g.id, cmd.add_subgroups);
    realm.removeSubgroups(g.id, cmd.delete_subgroups);
  });
  return {};
}

// ---- deactivate -----------------------------------------------------------------------------

export function checkDeactivateUserGroup(
  ctx: MutationContext,
  cmd: { acting_user_id: number; group_id: number },
): UserGroupRow {
  const { realm } = ctx;
  actingUser(realm, cmd.acting_user_id);
  const g = accessUserGroupForUpdate(realm, cmd.acting_user_id, cmd.group_id, 'can_manage_group');
  const uses = (v: GroupSettingValue) =>
    v === g.id || (typeof v !== 'number' && v.direct_subgroups.includes(g.id));
  const objections: Record<string, unknown>[] = [];
  const supergroups = [...realm.groupsById.values()]
    .filter((o) => !o.deactivated && (realm.directSubgroups.get(o.id)?.has(g.id) ?? false))
    .map((o) => o.id);
  if (supergroups.length > 0) objections.push({ type: 'subgroup', supergroup_ids: supergroups });
  for (const ch of realm.channels.all()) {
    if (ch.deactivated) continue;
    const settings = CHANNEL_GROUP_SETTING_NAMES.filter((n) => uses(ch.settings[n]));
    if (settings.length > 0) objections.push({ type: 'channel', channel_id: ch.id, settings });
  }
  for (const o of realm.groupsById.values()) {
    if (o.deactivated || o.id === g.id) continue;
    const settings = USER_GROUP_SETTING_NAMES.filter((n) => uses(userGroupSetting(realm, o, n)));
    if (settings.length > 0) objections.push({ type: 'user_group', group_id: o.id, settings });
  }
  const realmSettings = Object.keys(REALM_GROUP_SETTING_DEFAULTS).filter(
    (n) => isRealmGroupSettingName(n) && uses(realm.groupSetting(n)),
  );
  if (realmSettings.length > 0) objections.push({ type: 'realm', settings: realmSettings });
  if (objections.length > 0)
    throw new JsonableError('Cannot deactivate user group in use.', {
      code: 'CANNOT_DEACTIVATE_GROUP_IN_USE',
      extra: { objections },
    });
  return g;
}

export function doDeactivateUserGroup(
  ctx: MutationContext,
  g: UserGroupRow,
): Record<string, never> {
  const { realm, store } = ctx;
  store.groups.setDeactivated(g.id, true);
  const everyone = allUsers(realm);
  // Queues with the include_deactivated_groups capability take the update; others the remove.
  ctx.emit(
    { type: 'user_group', op: 'update', group_id: g.id, data: { deactivated: true } },
    everyone,
  );
  ctx.emit({ type: 'user_group', op: 'remove', group_id: g.id }, everyone);
  ctx.afterCommit(() => realm.reloadGroup(g.id));
  return {};
}
