/**
 * web/state/user-groups.ts: the User groups panel's logic — which groups it lists (no system
 * groups; the deactivated apart), what a user may do to a group as the server decides it (the
 * realm's can_create_groups / can_manage_all_groups, the group's own settings, guests, a
 * deactivated group), a name's problems, the subgroups offered (no cycle) — and the groups kept by
 * ChatState from the `user_group` events, a deactivation included (the app registers with
 * include_deactivated_groups: the group stays, marked).
 */
import t from 'tap';
import type { RegisterResponse, ServerEvent, UserGroup } from '../../src/client/types.js';
import { ChatState } from '../../web/state/chat.js';
import type { GroupSetting } from '../../web/state/groups.js';
import { REGISTER_PARAMS } from '../../web/state/register.js';
import {
  GROUP_PERMISSIONS,
  deactivationRefusal,
  filterGroups,
  groupLists,
  groupNameProblem,
  groupRights,
  mayCreateGroups,
  memberCount,
  permissionChoices,
  subgroupChoices,
  subgroupsOf,
  type Viewer,
} from '../../web/state/user-groups.js';
import { FakeTimers } from '../helpers/fake-timers.js';

type G = UserGroup & { direct_subgroup_ids?: number[] } & Record<string, unknown>;

// System groups: 1 owners, 2 administrators, 3 members (1, 2 and 3 through them), 4 everyone,
// 5 nobody. Users: 1 owner, 2 administrator, 3..5 members, 6 guest.
const system = (id: number, name: string, members: number[], subs: number[] = []): G => ({
  id,
  name,
  description: '',
  members,
  direct_subgroup_ids: subs,
  is_system_group: true,
});
const SYSTEM: G[] = [
  system(1, 'role:owners', [1]),
  system(2, 'role:administrators', [2], [1]),
  system(3, 'role:members', [3, 4, 5], [2]),
  system(4, 'role:everyone', [6], [3]),
  system(5, 'role:nobody', []),
];
const group = (id: number, name: string, o: Partial<G> = {}): G => ({
  id,
  name,
  description: `About ${name}`,
  members: [],
  direct_subgroup_ids: [],
  is_system_group: false,
  deactivated: false,
  can_manage_group: { direct_members: [3], direct_subgroups: [] },
  can_add_members_group: { direct_members: [3], direct_subgroups: [] },
  can_remove_members_group: 5,
  can_join_group: 5,
  can_leave_group: 4,
  can_mention_group: 4,
  ...o,
});
const ROLES: Record<number, number> = { 1: 100, 2: 200, 3: 400, 4: 400, 5: 400, 6: 600 };

function viewer(userId: number, groups: G[], realm: Record<string, GroupSetting> = {}): Viewer {
  const settings: Record<string, GroupSetting> = {
    realm_can_create_groups: 3,
    realm_can_manage_all_groups: 1,
    ...realm,
  };
  return {
    userId,
    role: ROLES[userId]!,
    realm: (name) => settings[name],
    groups: new Map([...SYSTEM, ...groups].map((g) => [g.id, g])),
  };
}

t.test('who may create groups: the realm setting, never a guest', (t) => {
  t.equal(mayCreateGroups(viewer(3, [])), true, 'a member, with role:members');
  t.equal(mayCreateGroups(viewer(6, [], { realm_can_create_groups: 4 })), false, 'not a guest');
  t.equal(mayCreateGroups(viewer(3, [], { realm_can_create_groups: 2 })), false);
  t.equal(mayCreateGroups(viewer(1, [], { realm_can_create_groups: 2 })), true, 'owners too');
  t.equal(
    mayCreateGroups(
      viewer(4, [], { realm_can_create_groups: { direct_members: [4], direct_subgroups: [] } }),
    ),
    true,
    'an anonymous group naming the user',
  );
  t.end();
});

t.test('what a user may do to a group', (t) => {
  const leads = group(10, 'leads', { members: [3, 4] });
  const gs = [leads];
  const creator = groupRights(10, viewer(3, gs));
  t.same(
    creator,
    {
      manage: true,
      addMembers: true,
      removeMembers: true,
      join: false,
      leave: true,
      deactivate: true,
    },
    'its creator (can_manage_group) may do everything',
  );
  t.same(
    groupRights(10, viewer(4, gs)),
    {
      manage: false,
      addMembers: false,
      removeMembers: false,
      join: false,
      leave: true,
      deactivate: false,
    },
    'another member may only leave (can_leave_group: everyone)',
  );
  t.same(
    groupRights(10, viewer(5, gs)),
    {
      manage: false,
      addMembers: false,
      removeMembers: false,
      join: false,
      leave: false,
      deactivate: false,
    },
    'a non-member, with can_join_group nobody: nothing',
  );
  t.equal(groupRights(10, viewer(1, gs)).manage, true, 'an owner manages all groups');
  t.equal(groupRights(10, viewer(2, gs)).manage, false, 'not an administrator by default');
  t.equal(
    groupRights(10, viewer(2, gs, { realm_can_manage_all_groups: 2 })).deactivate,
    true,
    'administrators when the realm says so',
  );

  const open = group(11, 'open', { can_join_group: 3, members: [3] });
  t.equal(groupRights(11, viewer(5, [open])).join, true, 'can_join_group: members may join');
  t.equal(groupRights(11, viewer(5, [open])).addMembers, false, 'but not add others');
  t.equal(groupRights(11, viewer(3, [open])).join, false, 'not when already in it');
  const adders = group(12, 'adders', {
    can_add_members_group: 3,
    can_remove_members_group: { direct_members: [], direct_subgroups: [2] },
  });
  t.equal(groupRights(12, viewer(4, [adders])).addMembers, true, 'can_add_members_group');
  t.equal(groupRights(12, viewer(4, [adders])).removeMembers, false);
  t.equal(
    groupRights(12, viewer(1, [adders])).removeMembers,
    true,
    'can_remove_members_group through a subgroup (owners in administrators)',
  );
  t.equal(groupRights(12, viewer(4, [adders])).manage, false);

  const guests = group(13, 'guests', {
    members: [6],
    can_manage_group: 4,
    can_add_members_group: 4,
  });
  const guest = groupRights(13, viewer(6, [guests]));
  t.equal(guest.manage, false, 'a guest never manages, even in role:everyone');
  t.equal(guest.addMembers, false);
  t.equal(guest.leave, true, 'but may leave (can_leave_group allows guests)');

  const gone = group(14, 'gone', { members: [3], deactivated: true });
  t.same(
    groupRights(14, viewer(3, [gone])),
    {
      manage: true,
      addMembers: false,
      removeMembers: false,
      join: false,
      leave: false,
      deactivate: false,
    },
    'a deactivated group: only its name and description',
  );
  t.same(groupRights(3, viewer(1, [])).manage, false, 'nothing for a system group');
  t.same(groupRights(99, viewer(1, [])).manage, false, 'nor an unknown group');
  t.end();
});

t.test(
  'the lists: user-defined groups by name, the deactivated apart, sizes with subgroups',
  (t) => {
    const gs = [
      group(10, 'zeta', { members: [3] }),
      group(11, 'Alpha', { members: [4, 5], direct_subgroup_ids: [10] }),
      group(12, 'old', { members: [3], deactivated: true }),
      group(13, 'beta'),
    ];
    const v = viewer(3, gs);
    const { active, deactivated } = groupLists(v.groups, 3);
    t.same(
      active.map((g) => g.name),
      ['Alpha', 'beta', 'zeta'],
      'no system group, by name without case',
    );
    t.same(
      active.map((g) => g.count),
      [3, 0, 1],
      'everyone in it, through subgroups',
    );
    t.same(
      active.map((g) => g.mine),
      [false, false, true],
      'a direct member',
    );
    t.same(
      deactivated.map((g) => g.name),
      ['old'],
    );
    t.equal(memberCount(0), 'No members');
    t.equal(memberCount(1), '1 member');
    t.equal(memberCount(7), '7 members');
    t.end();
  },
);

t.test('a new name: not empty, not too long, no reserved start, not taken', (t) => {
  const groups = viewer(3, [group(10, 'leads')]).groups;
  t.equal(groupNameProblem('  ', groups), 'Give the group a name.');
  t.match(groupNameProblem('x'.repeat(101), groups), /at most 100/);
  t.equal(groupNameProblem('x'.repeat(100), groups), null);
  t.match(groupNameProblem('@team', groups), /cannot start with “@”/);
  t.match(groupNameProblem('role:team', groups), /“role:”/);
  t.match(groupNameProblem('channel:x', groups), /“channel:”/);
  t.match(groupNameProblem('leads', groups), /already a group named “leads”/);
  t.match(groupNameProblem('role:members', groups), /“role:”/, 'a system group’s name');
  t.equal(groupNameProblem('leads', groups, 10), null, 'its own name, renaming');
  t.equal(groupNameProblem(' Leads two ', groups), null);
  t.end();
});

t.test('subgroups: shown by name, offered without cycles', (t) => {
  const gs = [
    group(10, 'a', { direct_subgroup_ids: [11, 2] }),
    group(11, 'b', { direct_subgroup_ids: [12] }),
    group(12, 'c'),
    group(13, 'd'),
    group(14, 'e', { deactivated: true }),
  ];
  const groups = viewer(3, gs).groups;
  t.same(
    subgroupsOf(10, groups).map((g) => g.name),
    ['Administrators', 'b'],
    'a system subgroup by its display name',
  );
  t.same(
    subgroupChoices(10, groups).map((g) => g.name),
    ['c', 'd'],
    'not itself, not one in it, no system or deactivated group',
  );
  t.same(
    subgroupChoices(12, groups).map((g) => g.name),
    ['d'],
    'not a group holding it, at any depth (a and b hold c)',
  );
  t.same(subgroupChoices(99, groups), []);
  t.end();
});

t.test('a refusal to deactivate a group in use says where it is used', (t) => {
  const groupNames: Record<number, string> = { 10: 'critics', 11: 'editors' };
  const names = {
    group: (id: number) => groupNames[id],
    channel: (id: number) => (id === 7 ? 'general' : undefined),
  };
  const msg = 'Cannot deactivate user group in use.';
  const body = (objections: unknown[]) => ({ code: 'CANNOT_DEACTIVATE_GROUP_IN_USE', objections });
  t.equal(
    deactivationRefusal(msg, body([{ type: 'subgroup', supergroup_ids: [10, 11] }]), names),
    `${msg} It is still a subgroup of critics, editors.`,
  );
  t.equal(
    deactivationRefusal(
      msg,
      body([
        { type: 'subgroup', supergroup_ids: [99] },
        { type: 'channel', channel_id: 7, settings: ['can_add_subscribers_group'] },
        { type: 'channel', channel_id: 8, settings: ['can_subscribe_group'] },
        { type: 'user_group', group_id: 11, settings: ['can_manage_group'] },
        { type: 'realm', settings: ['can_create_groups'] },
      ]),
      names,
    ),
    `${msg} It is still a subgroup of a group; in the permissions of #general, a channel you ` +
      'cannot see, the group editors, the organization.',
  );
  t.equal(
    deactivationRefusal('Insufficient permission', { code: 'BAD_REQUEST' }, names),
    'Insufficient permission',
  );
  t.equal(deactivationRefusal(msg, body([]), names), msg, 'nothing listed: the message alone');
  t.equal(deactivationRefusal(msg, undefined, names), msg);
  t.end();
});

t.test(
  'the app registers for deactivated groups; their events keep the panel and card live',
  (t) => {
    t.equal(REGISTER_PARAMS.client_capabilities.include_deactivated_groups, true);
    const clock = new FakeTimers();
    const register = {
      queue_id: 'q',
      last_event_id: -1,
      user_id: 3,
      email: 'u3@x',
      full_name: 'U3',
      realm_users: [3, 4, 5].map((id) => ({
        user_id: id,
        email: `u${id}@x`,
        full_name: `U${id}`,
        is_bot: false,
        role: 400,
      })),
      realm_user_groups: [...SYSTEM, group(10, 'leads', { members: [3] })],
      realm_can_create_groups: 3,
      realm_can_manage_all_groups: 1,
    } as unknown as RegisterResponse;
    const s = new ChatState(register, { now: clock.now, timers: clock.timers });
    let id = 0;
    const apply = (e: Record<string, unknown>) =>
      s.apply([{ id: id++, type: 'user_group', ...e } as unknown as ServerEvent]);
    const v = (): Viewer => ({
      userId: 3,
      role: 400,
      realm: (n) => s.realm.settings[n],
      groups: s.groups,
    });
    t.equal(mayCreateGroups(v()), true, 'the realm setting from register');
    t.equal(groupRights(10, v()).manage, true);

    const other = { direct_members: [4], direct_subgroups: [] };
    apply({
      op: 'add',
      group: group(11, 'reviewers', {
        members: [4],
        can_manage_group: other,
        can_add_members_group: other,
      }),
    });
    apply({ op: 'add_members', group_id: 11, user_ids: [5] });
    apply({ op: 'add_subgroups', group_id: 11, direct_subgroup_ids: [10] });
    t.same(
      groupLists(s.groups, 3).active.map((g) => [g.name, g.count]),
      [
        ['leads', 1],
        ['reviewers', 3],
      ],
    );
    t.equal(groupRights(11, v()).manage, false, 'another’s group');
    apply({
      op: 'update',
      group_id: 11,
      data: { can_manage_group: { direct_members: [3], direct_subgroups: [] } },
    });
    t.equal(groupRights(11, v()).manage, true, 'a setting changed by an event');
    apply({ op: 'update', group_id: 11, data: { name: 'critics', description: 'Read first.' } });
    apply({ op: 'remove_members', group_id: 11, user_ids: [4] });
    apply({ op: 'remove_subgroups', group_id: 11, direct_subgroup_ids: [10] });
    t.same(groupLists(s.groups, 3).active[0], {
      id: 11,
      name: 'critics',
      description: 'Read first.',
      count: 1,
      mine: false,
    });

    // A deactivation, as a queue with include_deactivated_groups receives it.
    apply({ op: 'update', group_id: 10, data: { deactivated: true } });
    const lists = groupLists(s.groups, 3);
    t.same(
      lists.active.map((g) => g.name),
      ['critics'],
    );
    t.same(
      lists.deactivated.map((g) => g.name),
      ['leads'],
      'listed apart',
    );
    t.equal(groupRights(10, v()).addMembers, false, 'its members no longer change');
    t.equal(s.groups.get(10)?.deactivated, true, 'kept, marked: its mention’s card can say so');
    apply({ op: 'remove', group_id: 11 });
    t.equal(s.groups.has(11), false, 'a removal still removes');
    t.end();
  },
);

t.test('a permission’s choices: the roles it allows, the groups, an anonymous value', (t) => {
  const gs = [
    group(10, 'leads'),
    group(11, 'old', { deactivated: true }),
    group(12, 'design', { can_join_group: 11 }),
  ];
  const groups = viewer(3, gs).groups;
  const name = (id: number) => `U${id}`;
  const perm = (n: string) => GROUP_PERMISSIONS.find((p) => p.name === n)!;
  const manage = permissionChoices(perm('can_manage_group'), 10, groups, name);
  t.same(
    manage.choices.map((c) => c.name),
    ['Members', 'Administrators', 'Owners', 'Nobody', 'design', 'leads'],
    'no role:everyone for administering; no deactivated group',
  );
  t.same([manage.current, manage.custom], [null, 'U3'], 'the creator, an anonymous group');
  const mention = permissionChoices(perm('can_mention_group'), 10, groups, name);
  t.same(
    mention.choices.map((c) => c.name).slice(0, 4),
    ['Everyone', 'Members', 'Administrators', 'Nobody'],
    'everyone may be chosen to mention it, not owners alone',
  );
  t.same([mention.current, mention.custom], [4, null]);
  const join = permissionChoices(perm('can_join_group'), 12, groups, name);
  t.equal(join.current, 11, 'a deactivated group that is the value');
  t.ok(
    join.choices.some((c) => c.id === 11),
    'is kept among the choices',
  );
  const mixed = permissionChoices(
    perm('can_add_members_group'),
    12,
    new Map([
      ...groups,
      [
        12,
        group(12, 'design', {
          can_add_members_group: { direct_members: [4], direct_subgroups: [2, 10] },
        }),
      ],
    ]),
    name,
  );
  t.equal(mixed.custom, 'U4, Administrators, leads');
  const empty = permissionChoices(
    perm('can_add_members_group'),
    12,
    new Map([
      ...groups,
      [
        12,
        group(12, 'design', {
          can_add_members_group: { direct_members: [], direct_subgroups: [] },
        }),
      ],
    ]),
    name,
  );
  t.equal(empty.custom, 'Nobody');
  t.end();
});

t.test('the filter: every word, in the name or the description, any case', (t) => {
  const rows = [
    { id: 1, name: 'Design', description: 'Logos and colours', count: 2, mine: false },
    { id: 2, name: 'support', description: 'First line', count: 1, mine: true },
  ];
  t.same(
    filterGroups(rows, '').map((r) => r.id),
    [1, 2],
  );
  t.same(
    filterGroups(rows, '  ').map((r) => r.id),
    [1, 2],
  );
  t.same(
    filterGroups(rows, 'DES').map((r) => r.id),
    [1],
  );
  t.same(
    filterGroups(rows, 'line first').map((r) => r.id),
    [2],
    'words in any order, from the description',
  );
  t.same(filterGroups(rows, 'design first'), [], 'every word must be found');
  t.end();
});
