/**
 * User groups. Reference: views/user_groups.py. Reads answer from the realm's read model; writes go
 * to the realm actor (src/mutations/user-groups.ts).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import {
  GuestNotAllowedError,
  InvalidUserGroupError,
  JsonableError,
  NoSuchUserError,
  UserGroupDeactivatedError,
} from '../lib/errors.js';
import { USER_GROUP_SETTING_NAMES, type UserGroupSettingName } from '../lib/group-settings.js';
import { bool, groupSetting, groupSettingChange, intList, pathInt, str } from '../lib/params.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { Role } from '../lib/roles.js';
import type { RealmView } from '../queries/realm-view.js';
import { listUserGroups } from '../queries/user-groups.js';
import type { UserRow } from '../storage/users.js';

function requireNonGuest(user: UserRow): void {
  if (user.role === Role.GUEST) throw new GuestNotAllowedError();
}

/** A group whose membership may be read (any non-deactivated group of the realm). */
function groupToRead(view: RealmView, id: number) {
  const g = view.group(id);
  if (!g) throw new InvalidUserGroupError();
  if (g.deactivated) throw new UserGroupDeactivatedError();
  return g;
}

/** GET /api/v1/user_groups */
export const getUserGroups = endpoint({
  method: 'GET',
  path: '/api/v1/user_groups',
  params: z.object({ include_deactivated_groups: bool().default(false) }),
  handle: ({ realm, user }, p) => {
    requireNonGuest(user);
    return { user_groups: listUserGroups(realm.view, p.include_deactivated_groups) };
  },
});

const createSettings = Object.fromEntries(
  USER_GROUP_SETTING_NAMES.map((n) => [n, groupSetting().optional()]),
) as Record<UserGroupSettingName, z.ZodOptional<ReturnType<typeof groupSetting>>>;

/** POST /api/v1/user_groups/create */
export const createUserGroup = endpoint({
  method: 'POST',
  path: '/api/v1/user_groups/create',
  params: z.object({
    name: str(),
    description: str(),
    members: intList(),
    subgroups: intList().optional(),
    ...createSettings,
  }),
  handle: ({ realm, user }, p) => {
    const settings: Partial<Record<UserGroupSettingName, GroupSettingValue>> = {};
    for (const n of USER_GROUP_SETTING_NAMES) if (p[n] !== undefined) settings[n] = p[n];
    return realm.ask('user_group.create', {
      acting_user_id: user.id,
      name: p.name,
      description: p.description,
      members: p.members,
      subgroups: p.subgroups ?? [],
      settings,
    });
  },
});

const updateSettings = Object.fromEntries(
  USER_GROUP_SETTING_NAMES.map((n) => [n, groupSettingChange().optional()]),
) as Record<UserGroupSettingName, z.ZodOptional<ReturnType<typeof groupSettingChange>>>;

/** PATCH /api/v1/user_groups/{user_group_id} */
export const updateUserGroup = endpoint({
  method: 'PATCH',
  path: '/api/v1/user_groups/:user_group_id',
  params: z.object({
    user_group_id: pathInt(),
    name: str().optional(),
    description: str().optional(),
    ...updateSettings,
  }),
  handle: ({ realm, user }, p) => {
    const settings: Partial<
      Record<UserGroupSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>
    > = {};
    for (const n of USER_GROUP_SETTING_NAMES) {
      const c = p[n];
      if (c !== undefined)
        settings[n] = c.old === undefined ? { new: c.new } : { new: c.new, old: c.old };
    }
    return realm.ask('user_group.update', {
      acting_user_id: user.id,
      group_id: p.user_group_id,
      ...(p.name !== undefined ? { name: p.name } : {}),
      ...(p.description !== undefined ? { description: p.description } : {}),
      settings,
    });
  },
});

/** POST /api/v1/user_groups/{user_group_id}/members */
export const updateUserGroupMembers = endpoint({
  method: 'POST',
  path: '/api/v1/user_groups/:user_group_id/members',
  params: z.object({
    user_group_id: pathInt(),
    add: intList().default([]),
    delete: intList().default([]),
    add_subgroups: intList().default([]),
    delete_subgroups: intList().default([]),
  }),
  handle: ({ realm, user }, p) =>
    realm.ask('user_group.members', {
      acting_user_id: user.id,
      group_id: p.user_group_id,
      add: p.add,
      delete: p.delete,
      add_subgroups: p.add_subgroups,
      delete_subgroups: p.delete_subgroups,
    }),
});

/** POST /api/v1/user_groups/{user_group_id}/subgroups */
export const updateUserGroupSubgroups = endpoint({
  method: 'POST',
  path: '/api/v1/user_groups/:user_group_id/subgroups',
  params: z.object({
    user_group_id: pathInt(),
    add: intList().default([]),
    delete: intList().default([]),
  }),
  handle: ({ realm, user }, p) => {
    if (p.add.length === 0 && p.delete.length === 0)
      throw new JsonableError('Nothing to do. Specify at least one of "add" or "delete".');
    return realm.ask('user_group.members', {
      acting_user_id: user.id,
      group_id: p.user_group_id,
      add: [],
      delete: [],
      add_subgroups: p.add,
      delete_subgroups: p.delete,
    });
  },
});

/** GET /api/v1/user_groups/{user_group_id}/members */
export const getUserGroupMembers = endpoint({
  method: 'GET',
  path: '/api/v1/user_groups/:user_group_id/members',
  params: z.object({ user_group_id: pathInt(), direct_member_only: bool().default(false) }),
  handle: ({ realm }, p) => {
    const view = realm.view;
    const g = groupToRead(view, p.user_group_id);
    const ids = p.direct_member_only
      ? (view.directMembers.get(g.id) ?? [])
      : view.recursiveMembers(g.id);
    return {
      members: [...ids].filter((id) => view.user(id)?.is_active).sort((a, b) => a - b),
    };
  },
});

/** GET /api/v1/user_groups/{user_group_id}/members/{user_id} */
export const getIsUserGroupMember = endpoint({
  method: 'GET',
  path: '/api/v1/user_groups/:user_group_id/members/:user_id',
  params: z.object({
    user_group_id: pathInt(),
    user_id: pathInt(),
    direct_member_only: bool().default(false),
  }),
  handle: ({ realm }, p) => {
    const view = realm.view;
    const g = groupToRead(view, p.user_group_id);
    const u = view.user(p.user_id);
    if (!u) throw new NoSuchUserError();
    const member =
      u.is_active === 1 &&
      (p.direct_member_only
        ? (view.directMembers.get(g.id)?.has(u.id) ?? false)
        : view.recursiveMembers(g.id).has(u.id));
    return { is_user_group_member: member };
  },
});

/** GET /api/v1/user_groups/{user_group_id}/subgroups */
export const getUserGroupSubgroups = endpoint({
  method: 'GET',
  path: '/api/v1/user_groups/:user_group_id/subgroups',
  params: z.object({ user_group_id: pathInt(), direct_subgroup_only: bool().default(false) }),
  handle: ({ realm }, p) => {
    const view = realm.view;
    const g = groupToRead(view, p.user_group_id);
    const out = new Set<number>();
    const stack = [...(view.directSubgroups.get(g.id) ?? [])];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (out.has(id)) continue;
      out.add(id);
      if (!p.direct_subgroup_only)
        for (const s of view.directSubgroups.get(id) ?? []) stack.push(s);
    }
    out.delete(g.id);
    return { subgroups: [...out].sort((a, b) => a - b) };
  },
});

/** POST /api/v1/user_groups/{user_group_id}/deactivate */
export const deactivateUserGroup = endpoint({
  method: 'POST',
  path: '/api/v1/user_groups/:user_group_id/deactivate',
  params: z.object({ user_group_id: pathInt() }),
  handle: ({ realm, user }, p) =>
    realm.ask('user_group.deactivate', { acting_user_id: user.id, group_id: p.user_group_id }),
});
