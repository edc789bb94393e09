/**
 * Group-setting values (a user group's id, or `{direct_members, direct_subgroups}`) and whether
 * a user is in one, through subgroups: the realm's permissions (who may delete their messages,
 * move topics, create invitation links) are such settings.
 */
import type { UserGroup } from '../../src/client/types.js';

export type GroupSetting = number | { direct_members: number[]; direct_subgroups: number[] };

export type GroupsById = ReadonlyMap<number, UserGroup & { direct_subgroup_ids?: number[] }>;

export function inGroupSetting(
  setting: GroupSetting | undefined,
  userId: number,
  groups: GroupsById,
): boolean {
  if (setting === undefined) return false;
  if (typeof setting === 'number') return inGroup(setting, userId, groups, new Set());
  if (setting.direct_members.includes(userId)) return true;
  return setting.direct_subgroups.some((g) => inGroup(g, userId, groups, new Set()));
}

function inGroup(id: number, userId: number, groups: GroupsById, seen: Set<number>): boolean {
  if (seen.has(id)) return false;
  seen.add(id);
  const g = groups.get(id);
  if (!g) return false;
  if (g.members.includes(userId)) return true;
  return (g.direct_subgroup_ids ?? []).some((s) => inGroup(s, userId, groups, seen));
}
