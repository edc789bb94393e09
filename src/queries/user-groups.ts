/**
 * User groups as the API shows them (GET /user_groups, `user_group` events, register
 * `realm_user_groups`), and each group's own permission settings. Reference:
 * lib/user_groups.py user_groups_in_realm_serialized.
 */
import { USER_GROUP_SETTING_NAMES, type UserGroupSettingName } from '../lib/group-settings.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import type { SystemGroupName } from '../lib/roles.js';
import type { UserGroupRow } from '../storage/groups.js';
import { markShared } from '../lib/shared-parts.js';
import { groupSettingForApi, type ApiGroupSetting } from './channels.js';
import { cacheSlot } from './realm-caches.js';
import type { RealmView } from './realm-view.js';

/**
 * Defaults of a user-defined group's settings; `creator` stands for an anonymous group of the
 * group's creator. System groups have `role:nobody` for all of them.
 */
export const USER_GROUP_SETTING_DEFAULTS: Record<
  UserGroupSettingName,
  SystemGroupName | 'creator'
> = {
  can_add_members_group: 'creator',
  can_join_group: 'role:nobody',
  can_leave_group: 'role:everyone',
  can_manage_group: 'creator',
  can_mention_group: 'role:everyone',
  can_remove_members_group: 'role:nobody',
};

export type StoredGroupSettings = Partial<Record<UserGroupSettingName, GroupSettingValue>>;

/** The value of one of a group's settings (stored, else its default). */
export function userGroupSetting(
  realm: RealmView,
  g: UserGroupRow,
  name: UserGroupSettingName,
): GroupSettingValue {
  const stored = (JSON.parse(g.settings) as StoredGroupSettings)[name];
  if (stored !== undefined) return stored;
  const def = g.is_system_group ? 'role:nobody' : USER_GROUP_SETTING_DEFAULTS[name];
  if (def === 'creator') {
    return g.creator_id === null
      ? realm.systemGroupId('role:nobody')
      : { direct_members: [g.creator_id], direct_subgroups: [] };
  }
  return realm.systemGroupId(def);
}

export type ApiUserGroup = {
  id: number;
  name: string;
  description: string;
  members: number[];
  direct_subgroup_ids: number[];
  creator_id: number | null;
  date_created: number | null;
  is_system_group: boolean;
  deactivated: boolean;
} & Record<UserGroupSettingName, ApiGroupSetting>;

/**
 * `direct` gives the group's direct members and subgroups when the read model does not have them
 * yet (a group being created).
 */
export function formatUserGroup(
  realm: RealmView,
  g: UserGroupRow,
  direct?: { members: Iterable<number>; subgroups: Iterable<number> },
): ApiUserGroup {
  const members = [...(direct?.members ?? realm.directMembers.get(g.id) ?? [])]
    .filter((id) => realm.user(id)?.is_active)
    .sort((a, b) => a - b);
  const subgroups = [...(direct?.subgroups ?? realm.directSubgroups.get(g.id) ?? [])];
  const out = {
    id: g.id,
    name: g.name,
    description: g.description,
    members,
    direct_subgroup_ids: subgroups.sort((a, b) => a - b),
    creator_id: g.creator_id,
    date_created: g.is_system_group ? null : g.date_created,
    is_system_group: g.is_system_group === 1,
    deactivated: g.deactivated === 1,
  } as ApiUserGroup;
  for (const name of USER_GROUP_SETTING_NAMES)
    out[name] = groupSettingForApi(realm, userGroupSetting(realm, g, name));
  return out;
}

export function listUserGroups(realm: RealmView, includeDeactivated: boolean): ApiUserGroup[] {
  const out: ApiUserGroup[] = [];
  for (const g of realm.groupsById.values()) {
    if (g.deactivated && !includeDeactivated) continue;
    out.push(formatUserGroup(realm, g));
  }
  return out.sort((a, b) => a.id - b.id);
}

/** The serialized group lists (without and with deactivated groups) and what they were made from. */
type GroupListsJson = { version: number; groupsVersion: number; lists: Map<boolean, Buffer> };
const GROUP_LISTS_JSON = cacheSlot<GroupListsJson>('user group lists JSON');

/**
 * listUserGroups as JSON, the same for every caller: kept, marked shared, until a group, a
 * membership, a subgroup link or a user (members are listed when active) changes. Every register
 * carries it (about 100 KB in a realm of 10,000 users).
 */
export function userGroupsJson(realm: RealmView, includeDeactivated: boolean): Buffer {
  let c = realm.caches.get(GROUP_LISTS_JSON);
  if (!c || c.version !== realm.version || c.groupsVersion !== realm.groupsVersion) {
    c = { version: realm.version, groupsVersion: realm.groupsVersion, lists: new Map() };
    realm.caches.set(GROUP_LISTS_JSON, c);
  }
  let json = c.lists.get(includeDeactivated);
  if (json === undefined) {
    json = markShared(Buffer.from(JSON.stringify(listUserGroups(realm, includeDeactivated))));
    c.lists.set(includeDeactivated, json);
  }
  return json;
}
