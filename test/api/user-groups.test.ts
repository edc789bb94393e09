/**
 * User groups: POST /user_groups/create, GET /user_groups, PATCH /user_groups/{id}, members and
 * subgroups, reads of membership, deactivation — and the channel access that follows group
 * membership.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, eventsSince, systemGroupId } from '../helpers/channels.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { activeUserIds } from '../helpers/fixtures.js';

type Group = Record<string, unknown> & { id: number; name: string };

t.test('create a group and list groups', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const all = activeUserIds(fx);
  const mark = ts.events.length;
  const res = await api.post('hamlet', 'user_groups/create', {
    name: 'hamletcharacters',
    description: 'Characters of Hamlet',
    members: [id('hamlet'), id('polonius')],
    can_mention_group: systemGroupId(ts, 'role:members'),
  });
  const groupId = assertSuccess(t, res).group_id as number;
  assertMatchesOpenApi(t, '/user_groups/create', 'post', res.body);
  const [ev] = eventsSince(ts, mark);
  t.same(ev!.users, all, 'user_group add goes to everyone');
  t.match(ev!.event, {
    type: 'user_group',
    op: 'add',
    group: {
      id: groupId,
      name: 'hamletcharacters',
      members: [id('hamlet'), id('polonius')],
      direct_subgroup_ids: [],
      creator_id: id('hamlet'),
      is_system_group: false,
      deactivated: false,
      can_mention_group: systemGroupId(ts, 'role:members'),
      can_manage_group: { direct_members: [id('hamlet')], direct_subgroups: [] },
      can_add_members_group: { direct_members: [id('hamlet')], direct_subgroups: [] },
      can_join_group: systemGroupId(ts, 'role:nobody'),
      can_leave_group: systemGroupId(ts, 'role:everyone'),
      can_remove_members_group: systemGroupId(ts, 'role:nobody'),
    },
  });
  assertMatchesOpenApi(t, '/events', 'get', {
    result: 'success',
    msg: '',
    queue_id: 'q',
    events: [{ ...ev!.event, id: 1 }],
  });

  const list = await api.get('othello', 'user_groups');
  assertSuccess(t, list);
  assertMatchesOpenApi(t, '/user_groups', 'get', list.body);
  const groups = list.body.user_groups as Group[];
  t.ok(groups.some((g) => g.name === 'role:members' && g.is_system_group === true));
  const mine = groups.find((g) => g.id === groupId)!;
  t.equal(mine.description, 'Characters of Hamlet');
  const members = groups.find((g) => g.name === 'role:members')!;
  t.same(members.direct_subgroup_ids, [systemGroupId(ts, 'role:fullmembers')]);
  assertError(t, await api.get('polonius', 'user_groups'), 'Not allowed for guest users');
});

t.test('create: refusals', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const create = (who: string, params: Record<string, unknown>) =>
    api.post(who, 'user_groups/create', { name: 'g', description: 'd', members: [], ...params });
  let r = await create('hamlet', { members: [9999] });
  assertError(t, r, 'Invalid user ID: 9999');
  assertMatchesOpenApi(t, '/user_groups/create', 'post', r.body, { status: '400' });
  assertError(
    t,
    await create('hamlet', { can_mention_group: systemGroupId(ts, 'role:internet') }),
    "'can_mention_group' setting cannot be set to 'role:internet' group.",
  );
  assertError(
    t,
    await create('hamlet', { can_mention_group: systemGroupId(ts, 'role:owners') }),
    "'can_mention_group' setting cannot be set to 'role:owners' group.",
  );
  assertError(
    t,
    await create('hamlet', { can_manage_group: systemGroupId(ts, 'role:everyone') }),
    "'can_manage_group' setting cannot be set to 'role:everyone' group.",
  );
  assertError(t, await create('hamlet', { name: '  ' }), "User group name can't be empty!");
  assertError(
    t,
    await create('hamlet', { name: 'role:admins' }),
    "User group name cannot start with 'role:'.",
  );
  assertError(
    t,
    await create('hamlet', { name: 'x'.repeat(101) }),
    'User group name cannot exceed 100 characters.',
  );
  assertError(t, await create('hamlet', { subgroups: [9999] }), 'Invalid user group ID: 9999');
  assertError(t, await create('polonius', {}), 'Insufficient permission');
  r = await api.post('hamlet', 'user_groups/create', { name: 'g', description: 'd' });
  assertError(t, r, "Missing 'members' argument", { code: 'REQUEST_VARIABLE_MISSING' });
  assertError(t, await create('hamlet', { members: 'x' }), 'members is not valid JSON', {
    code: 'INVALID_JSON',
  });
  assertSuccess(t, await create('hamlet', { members: [fx.users.hamlet!.id] }));
  assertError(t, await create('othello', {}), "User group 'g' already exists.");
});

t.test('PATCH a group', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const gid = assertSuccess(
    t,
    await api.post('hamlet', 'user_groups/create', { name: 'team', description: 'a', members: [] }),
  ).group_id as number;
  const everyone = systemGroupId(ts, 'role:everyone');
  const members = systemGroupId(ts, 'role:members');
  const mark = ts.events.length;
  const res = await api.patch('hamlet', `user_groups/${gid}`, {
    name: 'squad',
    description: 'b',
    can_mention_group: { new: members, old: everyone },
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/user_groups/{user_group_id}', 'patch', res.body);
  t.same(eventsSince(ts, mark)[0]!.event, {
    type: 'user_group',
    op: 'update',
    group_id: gid,
    data: { name: 'squad', description: 'b', can_mention_group: members },
  });
  assertError(
    t,
    await api.patch('hamlet', `user_groups/${gid}`, {
      can_mention_group: { new: everyone, old: everyone },
    }),
    "'old' value does not match the expected value.",
    { code: 'EXPECTATION_MISMATCH' },
  );
  assertError(
    t,
    await api.patch('othello', `user_groups/${gid}`, { name: 'mine' }),
    'Insufficient permission',
  );
  assertSuccess(
    t,
    await api.patch('desdemona', `user_groups/${gid}`, { description: 'owners manage all groups' }),
  );
  assertError(t, await api.patch('hamlet', `user_groups/${gid}`, {}), 'No new data supplied');
  assertError(
    t,
    await api.patch('hamlet', 'user_groups/9999', { name: 'x' }),
    'Invalid user group',
  );
  assertError(
    t,
    await api.patch('desdemona', `user_groups/${members}`, { description: 'x' }),
    'Insufficient permission',
    {},
  );
  void fx;
});

t.test('members and subgroups', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const create = async (name: string, members: number[]) =>
    assertSuccess(
      t,
      await api.post('hamlet', 'user_groups/create', { name, description: '', members }),
    ).group_id as number;
  const outer = await create('outer', [id('hamlet')]);
  const inner = await create('inner', [id('othello')]);

  let mark = ts.events.length;
  let res = await api.post('hamlet', `user_groups/${outer}/members`, {
    add: [id('cordelia')],
    add_subgroups: [inner],
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/user_groups/{user_group_id}/members', 'post', res.body);
  t.same(
    eventsSince(ts, mark).map((e) => e.event),
    [
      { type: 'user_group', op: 'add_members', group_id: outer, user_ids: [id('cordelia')] },
      { type: 'user_group', op: 'add_subgroups', group_id: outer, direct_subgroup_ids: [inner] },
    ],
  );
  res = await api.get('prospero', `user_groups/${outer}/members`);
  assertMatchesOpenApi(t, '/user_groups/{user_group_id}/members', 'get', res.body);
  t.same(
    res.body.members,
    [id('hamlet'), id('othello'), id('cordelia')].sort((a, b) => a - b),
  );
  res = await api.get('prospero', `user_groups/${outer}/members`, { direct_member_only: true });
  t.same(
    res.body.members,
    [id('hamlet'), id('cordelia')].sort((a, b) => a - b),
  );
  res = await api.get('prospero', `user_groups/${outer}/members/${id('othello')}`);
  assertMatchesOpenApi(t, '/user_groups/{user_group_id}/members/{user_id}', 'get', res.body);
  t.equal(res.body.is_user_group_member, true);
  res = await api.get('prospero', `user_groups/${outer}/members/${id('othello')}`, {
    direct_member_only: true,
  });
  t.equal(res.body.is_user_group_member, false);
  res = await api.get('prospero', `user_groups/${outer}/subgroups`);
  assertMatchesOpenApi(t, '/user_groups/{user_group_id}/subgroups', 'get', res.body);
  t.same(res.body.subgroups, [inner]);

  // Refusals.
  const members = (who: string, params: Record<string, unknown>) =>
    api.post(who, `user_groups/${outer}/members`, params);
  assertError(
    t,
    await members('hamlet', {}),
    'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
  );
  assertError(
    t,
    await members('hamlet', { add: [id('cordelia')] }),
    `User ${id('cordelia')} is already a member of this group`,
  );
  assertError(
    t,
    await members('hamlet', { delete: [id('prospero')] }),
    `There is no member '${id('prospero')}' in this user group`,
  );
  assertError(t, await members('hamlet', { add: [9999] }), 'Invalid user ID: 9999');
  assertError(t, await members('othello', { add: [id('prospero')] }), 'Insufficient permission');
  assertError(
    t,
    await members('prospero', { add: [id('prospero')] }),
    'Insufficient permission',
    {},
  );
  assertError(
    t,
    await members('hamlet', { add_subgroups: [inner] }),
    `User group ${inner} is already a subgroup of this group.`,
  );
  assertError(
    t,
    await api.post('hamlet', `user_groups/${inner}/subgroups`, { add: [outer] }),
    `User group ${inner} is already a subgroup of one of the passed subgroups.`,
  );
  assertError(
    t,
    await api.post('hamlet', `user_groups/${inner}/subgroups`, {}),
    'Nothing to do. Specify at least one of "add" or "delete".',
  );
  assertError(
    t,
    await api.post('hamlet', `user_groups/${systemGroupId(ts, 'role:members')}/members`, {
      add: [id('hamlet')],
    }),
    'Insufficient permission',
  );
  assertError(t, await api.get('hamlet', 'user_groups/9999/members'), 'Invalid user group');

  // Joining and leaving oneself follows can_join_group / can_leave_group.
  assertSuccess(
    t,
    await api.patch('hamlet', `user_groups/${outer}`, {
      can_join_group: { new: systemGroupId(ts, 'role:members') },
    }),
  );
  assertSuccess(t, await members('prospero', { add: [id('prospero')] }), 'prospero joins');
  assertSuccess(t, await members('prospero', { delete: [id('prospero')] }), 'prospero leaves');

  // Removing members and subgroups.
  mark = ts.events.length;
  assertSuccess(
    t,
    await members('hamlet', { delete: [id('cordelia')], delete_subgroups: [inner] }),
  );
  t.same(
    eventsSince(ts, mark).map((e) => [e.event.op, e.event.user_ids ?? e.event.direct_subgroup_ids]),
    [
      ['remove_members', [id('cordelia')]],
      ['remove_subgroups', [inner]],
    ],
  );
  assertError(
    t,
    await members('hamlet', { delete_subgroups: [inner] }),
    `User group ${inner} is not a subgroup of this group.`,
  );
});

t.test('group membership grants and revokes access to private channels', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const gid = assertSuccess(
    t,
    await api.post('iago', 'user_groups/create', { name: 'readers', description: '', members: [] }),
  ).group_id as number;
  const secret = await createChannel(api, 'iago', 'secret', {
    invite_only: true,
    can_subscribe_group: gid,
  });

  assertError(t, await api.get('cordelia', `streams/${secret}`), 'Invalid channel ID');
  let mark = ts.events.length;
  assertSuccess(t, await api.post('iago', `user_groups/${gid}/members`, { add: [id('cordelia')] }));
  let evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [e.event.type, e.event.op, e.users]),
    [
      ['user_group', 'add_members', activeUserIds(fx)],
      ['stream', 'create', [id('cordelia')]],
      ['subscription', 'peer_add', [id('cordelia')]],
    ],
  );
  t.equal((await api.get('cordelia', `streams/${secret}`)).body.stream && true, true);
  // cordelia may now subscribe herself.
  assertSuccess(
    t,
    await api.post('cordelia', 'users/me/subscriptions', { subscriptions: [{ name: 'secret' }] }),
  );
  assertSuccess(
    t,
    await api.delete('cordelia', 'users/me/subscriptions', { subscriptions: ['secret'] }),
  );

  // A guest in the group gains nothing: the setting does not include guests.
  mark = ts.events.length;
  assertSuccess(t, await api.post('iago', `user_groups/${gid}/members`, { add: [id('polonius')] }));
  evs = eventsSince(ts, mark);
  t.notOk(
    evs.some((e) => e.event.type === 'stream'),
    'no stream event for the guest',
  );

  mark = ts.events.length;
  assertSuccess(
    t,
    await api.post('iago', `user_groups/${gid}/members`, { delete: [id('cordelia')] }),
  );
  evs = eventsSince(ts, mark);
  t.same(
    evs.filter((e) => e.event.type === 'stream').map((e) => [e.event.op, e.users]),
    [['delete', [id('cordelia')]]],
  );
  assertError(t, await api.get('cordelia', `streams/${secret}`), 'Invalid channel ID');
});

t.test('deactivating a group', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const make = async (name: string) =>
    assertSuccess(
      t,
      await api.post('hamlet', 'user_groups/create', { name, description: '', members: [] }),
    ).group_id as number;
  const used = await make('used');
  const free = await make('free');
  const pub = await createChannel(api, 'hamlet', 'pub', { can_send_message_group: used });
  const r = await api.post('hamlet', `user_groups/${used}/deactivate`);
  assertError(t, r, 'Cannot deactivate user group in use.', {
    code: 'CANNOT_DEACTIVATE_GROUP_IN_USE',
  });
  t.same(r.body.objections, [
    { type: 'channel', channel_id: pub, settings: ['can_send_message_group'] },
  ]);
  assertError(
    t,
    await api.post('othello', `user_groups/${free}/deactivate`),
    'Insufficient permission',
  );
  const mark = ts.events.length;
  const res = await api.post('hamlet', `user_groups/${free}/deactivate`);
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/user_groups/{user_group_id}/deactivate', 'post', res.body);
  t.same(
    eventsSince(ts, mark).map((e) => e.event),
    [
      { type: 'user_group', op: 'update', group_id: free, data: { deactivated: true } },
      { type: 'user_group', op: 'remove', group_id: free },
    ],
  );
  const listed = (await api.get('hamlet', 'user_groups')).body.user_groups as Group[];
  t.notOk(listed.some((g) => g.id === free));
  const withDeactivated = (
    await api.get('hamlet', 'user_groups', { include_deactivated_groups: true })
  ).body.user_groups as Group[];
  t.equal(withDeactivated.find((g) => g.id === free)?.deactivated, true);
  assertError(
    t,
    await api.post('hamlet', `user_groups/${free}/deactivate`),
    'User group is deactivated.',
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'x' }],
      can_send_message_group: free,
    }),
    'User group is deactivated.',
  );
  void fx;
});
