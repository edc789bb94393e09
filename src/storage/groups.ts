/** SQL for user groups, their direct members and direct subgroups. */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type UserGroupRow = {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  is_system_group: number;
  creator_id: number | null;
  date_created: number | null;
  deactivated: number;
  settings: string;
};

export function groupStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<Omit<UserGroupRow, 'id' | 'deactivated'> & WithId, void>(
    `INSERT INTO user_groups (id, realm_id, name, description, is_system_group, creator_id, date_created, settings)
     VALUES (@id, @realm_id, @name, @description, @is_system_group, @creator_id, @date_created, @settings)`,
  );
  const byId = db.prepare<[number], UserGroupRow>('SELECT * FROM user_groups WHERE id = ?');
  const byName = db.prepare<[number, string], UserGroupRow>(
    'SELECT * FROM user_groups WHERE realm_id = ? AND name = ?',
  );
  const byRealm = db.prepare<[number], UserGroupRow>(
    'SELECT * FROM user_groups WHERE realm_id = ? ORDER BY id',
  );
  const addMember = db.prepare<[number, number], void>(
    'INSERT OR IGNORE INTO user_group_members (group_id, user_id) VALUES (?, ?)',
  );
  const removeMember = db.prepare<[number, number], void>(
    'DELETE FROM user_group_members WHERE group_id = ? AND user_id = ?',
  );
  const removeUserFromSystemGroups = db.prepare<[number], void>(
    `DELETE FROM user_group_members WHERE user_id = ?
       AND group_id IN (SELECT id FROM user_groups WHERE is_system_group = 1)`,
  );
  const addSubgroup = db.prepare<[number, number], void>(
    'INSERT OR IGNORE INTO user_group_subgroups (group_id, subgroup_id) VALUES (?, ?)',
  );
  const removeSubgroup = db.prepare<[number, number], void>(
    'DELETE FROM user_group_subgroups WHERE group_id = ? AND subgroup_id = ?',
  );
  const membersByRealm = db.prepare<[number], { group_id: number; user_id: number }>(
    `SELECT m.group_id, m.user_id FROM user_group_members m JOIN user_groups g ON g.id = m.group_id
     WHERE g.realm_id = ? ORDER BY m.group_id, m.user_id`,
  );
  const subgroupsByRealm = db.prepare<[number], { group_id: number; subgroup_id: number }>(
    `SELECT s.group_id, s.subgroup_id FROM user_group_subgroups s JOIN user_groups g ON g.id = s.group_id
     WHERE g.realm_id = ? ORDER BY s.group_id, s.subgroup_id`,
  );
  const updateSettings = db.prepare<[string, number], void>(
    'UPDATE user_groups SET settings = ? WHERE id = ?',
  );
  const updateName = db.prepare<[string, number], void>(
    'UPDATE user_groups SET name = ? WHERE id = ?',
  );
  const updateDescription = db.prepare<[string, number], void>(
    'UPDATE user_groups SET description = ? WHERE id = ?',
  );
  const setDeactivated = db.prepare<[number, number], void>(
    'UPDATE user_groups SET deactivated = ? WHERE id = ?',
  );
  const directMembers = db
    .prepare<[number], number>(
      'SELECT user_id FROM user_group_members WHERE group_id = ? ORDER BY user_id',
    )
    .pluck();
  const directSubgroups = db
    .prepare<[number], number>(
      'SELECT subgroup_id FROM user_group_subgroups WHERE group_id = ? ORDER BY subgroup_id',
    )
    .pluck();

  return {
    insert: (g: Omit<UserGroupRow, 'id' | 'deactivated'>): number =>
      Number(insert.run({ ...g, id: ids.nextId('user_groups') }).lastInsertRowid),
    byId: (id: number): UserGroupRow | undefined => byId.get(id),
    byName: (realmId: number, name: string): UserGroupRow | undefined => byName.get(realmId, name),
    byRealm: (realmId: number): UserGroupRow[] => byRealm.all(realmId),
    addMember: (groupId: number, userId: number): void => void addMember.run(groupId, userId),
    removeMember: (groupId: number, userId: number): void => void removeMember.run(groupId, userId),
    removeUserFromSystemGroups: (userId: number): void =>
      void removeUserFromSystemGroups.run(userId),
    addSubgroup: (groupId: number, subgroupId: number): void =>
      void addSubgroup.run(groupId, subgroupId),
    removeSubgroup: (groupId: number, subgroupId: number): void =>
      void removeSubgroup.run(groupId, subgroupId),
    membersByRealm: (realmId: number) => membersByRealm.all(realmId),
    subgroupsByRealm: (realmId: number) => subgroupsByRealm.all(realmId),
    updateSettings: (id: number, json: string): void => void updateSettings.run(json, id),
    updateName: (id: number, name: string): void => void updateName.run(name, id),
    updateDescription: (id: number, description: string): void =>
      void updateDescription.run(description, id),
    setDeactivated: (id: number, deactivated: boolean): void =>
      void setDeactivated.run(deactivated ? 1 : 0, id),
    directMembers: (groupId: number): number[] => directMembers.all(groupId),
    directSubgroups: (groupId: number): number[] => directSubgroups.all(groupId),
  };
}
export type GroupStatements = ReturnType<typeof groupStatements>;
