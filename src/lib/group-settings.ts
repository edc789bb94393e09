/**
 * Group-setting values: which values each permission setting accepts, and turning what a client
 * sent into the value to store. One table for realm, channel and user-group settings, so every
 * endpoint that takes a group-setting value refuses the same things with the same words.
 * Reference: the reference server's GroupPermissionSetting tables (models/realms.py,
 * models/streams.py, models/groups.py) and lib/user_groups.py (access_user_group_for_setting,
 * parse_group_setting_value, validate_group_setting_value_change); where spec/API.md names the
 * values a setting refuses, the spec's list is used.
 *
 * Pure: realm data comes in through GroupLookup.
 */
import { InvalidUserGroupError, JsonableError, UserGroupDeactivatedError } from './errors.js';
import type { GroupSettingValue } from './realm-settings.js';
import type { SystemGroupName } from './roles.js';

export type AnonymousGroup = { direct_members: number[]; direct_subgroups: number[] };

export type GroupSettingConfig = {
  /** Only named system groups (no user-defined group, no anonymous group). */
  requireSystemGroup?: boolean;
  allowInternet?: boolean;
  allowEveryone: boolean;
  allowNobody: boolean;
  allowOwners?: boolean;
  allowMembers?: boolean;
  /** If set, the only system groups allowed. */
  allowedSystemGroups?: readonly SystemGroupName[];
};

const S = (c: GroupSettingConfig) => c;

/** Realm-level settings (the realm_* fields of POST /register). */
export const REALM_GROUP_SETTING_CONFIG = {
  can_access_all_users_group: S({
    requireSystemGroup: true,
    allowEveryone: true,
    allowNobody: false,
    allowedSystemGroups: ['role:everyone', 'role:members'],
  }),
  can_add_custom_emoji_group: S({ allowEveryone: false, allowNobody: true }),
  can_add_subscribers_group: S({ allowEveryone: false, allowNobody: true }),
  can_create_bots_group: S({ allowEveryone: false, allowNobody: true }),
  can_create_groups: S({ allowEveryone: false, allowNobody: true }),
  // spec/API.md: "Not role:internet, role:everyone, role:owners, role:nobody."
  can_create_private_channel_group: S({
    allowEveryone: false,
    allowNobody: false,
    allowOwners: false,
  }),
  can_create_public_channel_group: S({
    allowEveryone: false,
    allowNobody: false,
    allowOwners: false,
  }),
  can_create_web_public_channel_group: S({
    requireSystemGroup: true,
    allowEveryone: false,
    allowNobody: true,
    allowedSystemGroups: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
  }),
  can_create_write_only_bots_group: S({ allowEveryone: false, allowNobody: true }),
  can_delete_any_message_group: S({ allowEveryone: false, allowNobody: true }),
  can_delete_own_message_group: S({ allowEveryone: true, allowNobody: true }),
  can_invite_users_group: S({ allowEveryone: false, allowNobody: true }),
  can_manage_all_groups: S({ allowEveryone: false, allowNobody: false }),
  can_manage_billing_group: S({ allowEveryone: false, allowNobody: false }),
  can_mention_many_users_group: S({ allowEveryone: true, allowNobody: true }),
  can_move_messages_between_channels_group: S({ allowEveryone: false, allowNobody: true }),
  can_move_messages_between_topics_group: S({ allowEveryone: true, allowNobody: true }),
  can_resolve_topics_group: S({ allowEveryone: true, allowNobody: true }),
  can_set_delete_message_policy_group: S({ allowEveryone: false, allowNobody: true }),
  can_set_topics_policy_group: S({ allowEveryone: true, allowNobody: true }),
  can_summarize_topics_group: S({ allowEveryone: true, allowNobody: true }),
  // spec/API.md: "System group only (not role:internet, role:owners)."
  create_multiuse_invite_group: S({
    requireSystemGroup: true,
    allowEveryone: false,
    allowNobody: true,
    allowOwners: false,
  }),
  direct_message_initiator_group: S({ allowEveryone: true, allowNobody: true }),
  direct_message_permission_group: S({ allowEveryone: true, allowNobody: true }),
} as const satisfies Record<string, GroupSettingConfig>;

/** Per-channel settings. */
export const CHANNEL_GROUP_SETTING_CONFIG = {
  can_add_subscribers_group: S({ allowEveryone: false, allowNobody: true }),
  can_remove_subscribers_group: S({ allowEveryone: true, allowNobody: true }),
  can_administer_channel_group: S({ allowEveryone: false, allowNobody: true }),
  can_send_message_group: S({ allowEveryone: true, allowNobody: true }),
  can_subscribe_group: S({ allowEveryone: false, allowNobody: true }),
  can_delete_any_message_group: S({ allowEveryone: true, allowNobody: true }),
  can_delete_own_message_group: S({ allowEveryone: true, allowNobody: true }),
} as const satisfies Record<string, GroupSettingConfig>;
export type ChannelGroupSettingName = keyof typeof CHANNEL_GROUP_SETTING_CONFIG;
export const CHANNEL_GROUP_SETTING_NAMES = Object.keys(
  CHANNEL_GROUP_SETTING_CONFIG,
) as ChannelGroupSettingName[];

/** Per-user-group settings. */
export const USER_GROUP_SETTING_CONFIG = {
  can_add_members_group: S({ allowEveryone: false, allowNobody: true }),
  can_join_group: S({ allowEveryone: false, allowNobody: true }),
  can_leave_group: S({ allowEveryone: true, allowNobody: true }),
  can_manage_group: S({ allowEveryone: false, allowNobody: true }),
  // spec/API.md: "not role:internet or role:owners".
  can_mention_group: S({ allowEveryone: true, allowNobody: true, allowOwners: false }),
  can_remove_members_group: S({ allowEveryone: false, allowNobody: true }),
} as const satisfies Record<string, GroupSettingConfig>;
export type UserGroupSettingName = keyof typeof USER_GROUP_SETTING_CONFIG;
export const USER_GROUP_SETTING_NAMES = Object.keys(
  USER_GROUP_SETTING_CONFIG,
) as UserGroupSettingName[];

/** What validation needs to know about the realm's groups and users. */
export interface GroupLookup {
  group(
    id: number,
  ): { id: number; name: string; is_system_group: number; deactivated: number } | undefined;
  /** A user of this realm (deactivated ones included). */
  user(id: number): { is_active: number } | undefined;
  systemGroupId(name: SystemGroupName): number;
}

export class SystemGroupRequiredError extends JsonableError {
  constructor(settingName: string) {
    super(`'${settingName}' must be a system user group.`, {
      code: 'SYSTEM_GROUP_REQUIRED',
      extra: { setting_name: settingName },
    });
  }
}

export class PreviousSettingValueMismatchedError extends JsonableError {
  constructor() {
    super("'old' value does not match the expected value.", { code: 'EXPECTATION_MISMATCH' });
  }
}

/**
 * The canonical form of a value (the reference's parse_group_setting_value): an anonymous group of
 * exactly one subgroup and no members is that subgroup; an empty one is `role:nobody`.
 */
export function normalizeGroupSettingValue(
  value: GroupSettingValue,
  nobodyGroupId: number,
): GroupSettingValue {
  if (typeof value === 'number') return value;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1)
    return value.direct_subgroups[0]!;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 0)
    return nobodyGroupId;
  return {
    direct_members: [...new Set(value.direct_members)].sort((a, b) => a - b),
    direct_subgroups: [...new Set(value.direct_subgroups)].sort((a, b) => a - b),
  };
}

export function groupSettingValuesEqual(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const same = (x: number[], y: number[]) => {
    const sx = new Set(x);
    const sy = new Set(y);
    return sx.size === sy.size && [...sx].every((v) => sy.has(v));
  };
  return same(a.direct_members, b.direct_members) && same(a.direct_subgroups, b.direct_subgroups);
}

/**
 * Checks a value a client sent for `settingName` and returns the value to store (normalized).
 * Refuses unknown or deactivated groups, unknown or deactivated users, and the system groups the
 * setting does not allow.
 */
export function validateGroupSettingValue(
  lookup: GroupLookup,
  settingName: string,
  config: GroupSettingConfig,
  raw: GroupSettingValue,
): GroupSettingValue {
  const value = normalizeGroupSettingValue(raw, lookup.systemGroupId('role:nobody'));
  if (typeof value === 'number') {
    const group = lookup.group(value);
    if (!group) throw new InvalidUserGroupError();
    if (group.deactivated) throw new UserGroupDeactivatedError();
    if (config.requireSystemGroup && !group.is_system_group)
      throw new SystemGroupRequiredError(settingName);
    if (group.is_system_group) checkSystemGroupAllowed(settingName, config, group.name);
    return value;
  }
  if (config.requireSystemGroup) throw new SystemGroupRequiredError(settingName);
  for (const id of value.direct_members) {
    const u = lookup.user(id);
    if (!u || !u.is_active) throw new JsonableError(`Invalid user ID: ${id}`);
  }
  for (const id of value.direct_subgroups) {
    const g = lookup.group(id);
    if (!g) throw new JsonableError(`Invalid user group ID: ${id}`);
    if (g.deactivated) throw new UserGroupDeactivatedError();
  }
  return value;
}

function checkSystemGroupAllowed(
  settingName: string,
  config: GroupSettingConfig,
  groupName: string,
): void {
  const refuse = () =>
    new JsonableError(`'${settingName}' setting cannot be set to '${groupName}' group.`);
  if (groupName === 'role:internet' && !config.allowInternet) throw refuse();
  if (groupName === 'role:nobody' && !config.allowNobody) throw refuse();
  if (groupName === 'role:everyone' && !config.allowEveryone) throw refuse();
  if (groupName === 'role:owners' && config.allowOwners === false) throw refuse();
  if (groupName === 'role:members' && config.allowMembers === false) throw refuse();
  if (
    config.allowedSystemGroups &&
    !(config.allowedSystemGroups as readonly string[]).includes(groupName)
  )
    throw refuse();
}

/**
 * A `{new, old}` change request (PATCH endpoints): refuses a wrong `old`, and returns whether the
 * new value differs from the current one.
 */
export function checkGroupSettingChange(
  current: GroupSettingValue,
  next: GroupSettingValue,
  expectedOld: GroupSettingValue | undefined,
  nobodyGroupId: number,
): boolean {
  if (
    expectedOld !== undefined &&
    !groupSettingValuesEqual(normalizeGroupSettingValue(expectedOld, nobodyGroupId), current)
  ) {
    throw new PreviousSettingValueMismatchedError();
  }
  return !groupSettingValuesEqual(current, next);
}

/** Parses a stored group-setting value (JSON text). */
export function parseStoredGroupSetting(json: string): GroupSettingValue {
  return JSON.parse(json) as GroupSettingValue;
}
