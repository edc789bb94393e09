/**
 * The settings' User groups panel (web/app/user-groups.tsx), as plain data: which groups it lists
 * (the user-defined ones, the deactivated apart; system groups are the roles, changed with a
 * person's role, so not listed, as the reference's groups settings), what the user may do to each
 * (the realm's `can_create_groups` and `can_manage_all_groups`, and the group's own
 * `can_manage_group`, `can_add_members_group`, `can_remove_members_group`, `can_join_group`,
 * `can_leave_group`, as the server decides them in src/mutations/user-groups.ts), a new name's
 * problems, and which groups may become a subgroup. The groups themselves are ChatState's, kept by
 * the `user_group` events.
 */
import { groupDisplayName } from '../../src/client/group-names.js';
import { Role, SYSTEM_GROUP_CHOICES } from '../../src/lib/roles.js';
import { inGroupSetting, type GroupSetting, type GroupsById } from './groups.js';
import { everyoneIn } from './profile.js';

/** The names a group may not start with (they would read as another kind of mention). */
export const RESERVED_GROUP_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'] as const;
export const MAX_GROUP_NAME_LENGTH = 100;

/** Who is looking: the user, their role, the realm's settings and the groups. */
export type Viewer = {
  userId: number;
  role: number;
  /** A realm setting by its register name (`realm_can_create_groups`). */
  realm: (name: string) => unknown;
  groups: GroupsById;
};

export type GroupRights = {
  /** Rename, describe, deactivate. */
  manage: boolean;
  addMembers: boolean;
  removeMembers: boolean;
  join: boolean;
  leave: boolean;
  deactivate: boolean;
};

const NO_RIGHTS: GroupRights = {
  manage: false,
  addMembers: false,
  removeMembers: false,
  join: false,
  leave: false,
  deactivate: false,
};

/** Settings that may include guests (the others never count a guest in). */
const GUESTS_ALLOWED = new Set(['can_leave_group', 'can_mention_group']);

function setting(v: unknown): GroupSetting | undefined {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'direct_members' in v && 'direct_subgroups' in v)
    return v as GroupSetting;
  return undefined;
}

/** Whether the user may create groups (the realm's `can_create_groups`; never a guest). */
export function mayCreateGroups(v: Viewer): boolean {
  if (v.role >= Role.GUEST) return false;
  return inGroupSetting(setting(v.realm('realm_can_create_groups')), v.userId, v.groups);
}

/** What the user may do to a group; nothing to a system group or one the app does not know. */
export function groupRights(groupId: number, v: Viewer): GroupRights {
  const g = v.groups.get(groupId);
  if (!g || g.is_system_group) return NO_RIGHTS;
  const guest = v.role >= Role.GUEST;
  const has = (name: string) =>
    (!guest || GUESTS_ALLOWED.has(name)) &&
    inGroupSetting(setting((g as Record<string, unknown>)[name]), v.userId, v.groups);
  const managesAll =
    !guest && inGroupSetting(setting(v.realm('realm_can_manage_all_groups')), v.userId, v.groups);
  const manage = managesAll || has('can_manage_group');
  // A deactivated group's members are as they were: only its name and description change.
  const live = g.deactivated !== true;
  const addMembers = live && (manage || has('can_add_members_group'));
  const removeMembers = live && (manage || has('can_remove_members_group'));
  const member = g.members.includes(v.userId);
  return {
    manage,
    addMembers,
    removeMembers,
    join: live && !member && (addMembers || has('can_join_group')),
    leave: live && member && (removeMembers || has('can_leave_group')),
    deactivate: live && manage,
  };
}

export type GroupRow = {
  id: number;
  name: string;
  description: string;
  /** Everyone in it, through its subgroups too. */
  count: number;
  /** The user is a direct member. */
  mine: boolean;
};

/** The user-defined groups by name: the active ones, and the deactivated apart. */
export function groupLists(
  groups: GroupsById,
  userId: number,
): { active: GroupRow[]; deactivated: GroupRow[] } {
  const active: GroupRow[] = [];
  const deactivated: GroupRow[] = [];
  for (const g of groups.values()) {
    if (g.is_system_group) continue;
    const row = {
      id: g.id,
      name: g.name,
      description: g.description,
      count: everyoneIn(g.id, groups).size,
      mine: g.members.includes(userId),
    };
    (g.deactivated ? deactivated : active).push(row);
  }
  const byName = (a: GroupRow, b: GroupRow) =>
    a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) || a.id - b.id;
  return { active: active.sort(byName), deactivated: deactivated.sort(byName) };
}

/**
 * Why a group cannot have this name, or null (the server checks again): empty, too long, a
 * reserved start, or another group's name (`exceptId`: the group being renamed).
 */
export function groupNameProblem(
  name: string,
  groups: GroupsById,
  exceptId?: number,
): string | null {
  const n = name.trim();
  if (n === '') return 'Give the group a name.';
  if ([...n].length > MAX_GROUP_NAME_LENGTH)
    return `A group’s name has at most ${MAX_GROUP_NAME_LENGTH} characters.`;
  const prefix = RESERVED_GROUP_PREFIXES.find((p) => n.startsWith(p));
  if (prefix !== undefined) return `A group’s name cannot start with “${prefix}”.`;
  for (const g of groups.values())
    if (g.id !== exceptId && g.name === n) return `There is already a group named “${n}”.`;
  return null;
}

/**
 * The groups that may become subgroups of a group: the other active user-defined groups not
 * already in it, and none that holds it (a cycle), by name.
 */
export function subgroupChoices(
  groupId: number,
  groups: GroupsById,
): { id: number; name: string }[] {
  const g = groups.get(groupId);
  if (!g) return [];
  const direct = new Set(g.direct_subgroup_ids ?? []);
  const holds = (candidate: number): boolean => {
    // Whether `groupId` is among `candidate`'s subgroups, at any depth (or is it).
    const seen = new Set<number>();
    const stack = [candidate];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (id === groupId) return true;
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...(groups.get(id)?.direct_subgroup_ids ?? []));
    }
    return false;
  };
  return [...groups.values()]
    .filter((o) => !o.is_system_group && !o.deactivated && !direct.has(o.id) && !holds(o.id))
    .map((o) => ({ id: o.id, name: o.name }))
    .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
}

/** A group's direct subgroups by name (system groups by their display names). */
export function subgroupsOf(
  groupId: number,
  groups: GroupsById,
): { id: number; name: string; deactivated: boolean }[] {
  return (groups.get(groupId)?.direct_subgroup_ids ?? [])
    .map((id) => groups.get(id))
    .filter((s) => s !== undefined)
    .map((s) => ({ id: s.id, name: groupDisplayName(s.name), deactivated: s.deactivated === true }))
    .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
}

/** "3 members", "1 member", "No members". */
export function memberCount(n: number): string {
  return n === 0 ? 'No members' : n === 1 ? '1 member' : `${n} members`;
}

/** Where a group is still used, as the server lists it when refusing to deactivate it. */
export type Objection =
  | { type: 'subgroup'; supergroup_ids: number[] }
  | { type: 'channel'; channel_id: number; settings: string[] }
  | { type: 'user_group'; group_id: number; settings: string[] }
  | { type: 'realm'; settings: string[] };

/**
 * The refusal to deactivate a group in use, with where it is used (the error's `objections`):
 * "… It is still a subgroup of critics; in the permissions of #general." Other refusals as they
 * came.
 */
export function deactivationRefusal(
  msg: string,
  body: Record<string, unknown> | undefined,
  names: { group: (id: number) => string | undefined; channel: (id: number) => string | undefined },
): string {
  const objections = body?.objections;
  if (body?.code !== 'CANNOT_DEACTIVATE_GROUP_IN_USE' || !Array.isArray(objections)) return msg;
  const uses: string[] = [];
  const permissionsOf: string[] = [];
  for (const o of objections as Objection[]) {
    if (o.type === 'subgroup') {
      const supers = o.supergroup_ids.map((id) => names.group(id) ?? 'a group');
      uses.push(`a subgroup of ${supers.join(', ')}`);
    } else if (o.type === 'channel') {
      const ch = names.channel(o.channel_id);
      permissionsOf.push(ch === undefined ? 'a channel you cannot see' : `#${ch}`);
    } else if (o.type === 'user_group') {
      permissionsOf.push(`the group ${names.group(o.group_id) ?? 'that you do not know'}`);
    } else if (o.type === 'realm') {
      permissionsOf.push('the organization');
    }
  }
  if (permissionsOf.length > 0) uses.push(`in the permissions of ${permissionsOf.join(', ')}`);
  return uses.length === 0 ? msg : `${msg} It is still ${uses.join('; ')}.`;
}

/** A group's own permission settings, as its managers change them (the reference's wording). */
export const GROUP_PERMISSIONS: readonly {
  name: string;
  label: string;
  /** Whether role:everyone (guests included) may be chosen. */
  everyone: boolean;
  /** Whether role:owners may be chosen. */
  owners: boolean;
}[] = [
  { name: 'can_mention_group', label: 'Who can mention this group', everyone: true, owners: false },
  {
    name: 'can_manage_group',
    label: 'Who can administer this group',
    everyone: false,
    owners: true,
  },
  { name: 'can_add_members_group', label: 'Who can add members', everyone: false, owners: true },
  {
    name: 'can_remove_members_group',
    label: 'Who can remove members',
    everyone: false,
    owners: true,
  },
  { name: 'can_join_group', label: 'Who can join this group', everyone: false, owners: true },
  { name: 'can_leave_group', label: 'Who can leave this group', everyone: true, owners: true },
];

/**
 * What one of a group's settings may be set to: the roles it allows (never role:internet), then
 * the active user-defined groups; and the current value — a named group, or an anonymous one (a
 * list of people and groups, made elsewhere) shown as `custom`, kept unless another is chosen.
 */
export function permissionChoices(
  perm: (typeof GROUP_PERMISSIONS)[number],
  groupId: number,
  groups: GroupsById,
  userName: (id: number) => string,
): { current: number | null; custom: string | null; choices: { id: number; name: string }[] } {
  const g = groups.get(groupId);
  const value = setting(g ? (g as Record<string, unknown>)[perm.name] : undefined);
  const byName = new Map([...groups.values()].map((o) => [o.name, o]));
  const roles = SYSTEM_GROUP_CHOICES.filter(
    (r) => (perm.everyone || r !== 'role:everyone') && (perm.owners || r !== 'role:owners'),
  )
    .map((r) => byName.get(r))
    .filter((o) => o !== undefined)
    .map((o) => ({ id: o.id, name: groupDisplayName(o.name) }));
  const named = [...groups.values()]
    .filter((o) => !o.is_system_group && (!o.deactivated || o.id === value))
    .map((o) => ({ id: o.id, name: o.name }))
    .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
  if (typeof value === 'number' || value === undefined)
    return { current: value ?? null, custom: null, choices: [...roles, ...named] };
  const parts = [
    ...value.direct_members.map(userName),
    ...value.direct_subgroups.map((id) => {
      const o = groups.get(id);
      return o ? groupDisplayName(o.name) : `group ${id}`;
    }),
  ];
  return {
    current: null,
    custom: parts.length === 0 ? 'Nobody' : parts.join(', '),
    choices: [...roles, ...named],
  };
}

/** The rows whose name or description holds every word of `query` (any case). */
export function filterGroups(rows: readonly GroupRow[], query: string): GroupRow[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...rows];
  return rows.filter((r) => {
    const text = `${r.name} ${r.description}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
