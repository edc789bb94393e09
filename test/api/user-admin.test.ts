/**
 * Administration of users over HTTP: role changes (who may, the last owner, the system groups
 * that mirror roles, the channels a user may know before and after), names and profile values set
 * by administrators, deactivation and reactivation with their subscriber events — all through
 * real queues, and a client's snapshot kept equal to a fresh one.
 * Reference tests: zerver/tests/test_users.py (PermissionTest, test_change_role_*),
 * test_events.py (test_change_user_role, test_do_deactivate_user, test_do_reactivate_user).
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { applyEvents } from '../helpers/apply-events.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { register, type Ev } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { kind, Listener } from '../helpers/queues.js';
import { startServer } from '../helpers/server.js';
import { CHANNEL_SPEC_EXTRAS, USER_SPEC_EXTRAS } from '../helpers/spec-extras.js';

const EXTRAS = [...USER_SPEC_EXTRAS, ...CHANNEL_SPEC_EXTRAS];

t.test('a role change moves the user between groups and channels', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (who: string) => fx.users[who]!.id;
  const secret = await createChannel(api, 'hamlet', 'secret', { invite_only: true });
  const open = await createChannel(api, 'cordelia', 'open');
  const othello = await Listener.open(t, api, 'othello', {}, { allowExtra: EXTRAS });
  const cordelia = await Listener.open(t, api, 'cordelia', {}, { allowExtra: EXTRAS });
  const group = (name: string) => systemGroupId(ts, name);

  const change = async (role: number) => {
    const body = assertSuccess(t, await api.patch('iago', `users/${id('othello')}`, { role }));
    assertMatchesOpenApi(t, '/users/{user_id}', 'patch', body);
  };

  // Member → administrator: administrators know every private channel.
  await change(200);
  const promoted = await othello.drain(t);
  t.same(promoted.map(kind), [
    'realm_user update',
    'user_group remove_members',
    'user_group add_members',
    'user_group remove_members',
    'stream create',
    'subscription peer_add',
  ]);
  t.match(promoted, [
    { person: { user_id: id('othello'), role: 200 } },
    { group_id: group('role:members'), user_ids: [id('othello')] },
    { group_id: group('role:administrators'), user_ids: [id('othello')] },
    { group_id: group('role:fullmembers'), user_ids: [id('othello')] },
    { streams: [{ stream_id: secret, name: 'secret', invite_only: true }] },
    { stream_ids: [secret], user_ids: [id('hamlet')] },
  ]);
  t.same(
    (await cordelia.drain(t)).map(kind),
    [
      'realm_user update',
      'user_group remove_members',
      'user_group add_members',
      'user_group remove_members',
    ],
    'others learn the role and groups, nothing about channels',
  );

  // Administrator → guest: guests know only what they are subscribed to.
  await change(600);
  const demoted = await othello.drain(t);
  t.same(demoted.map(kind), [
    'realm_user update',
    'user_group remove_members',
    'user_group add_members',
    'stream delete',
  ]);
  t.match(demoted[2], { group_id: group('role:everyone') });
  t.same([...(demoted[3]!.stream_ids as number[])].sort(), [secret, open].sort());

  // Guest → member: public channels are known again (a full member at once: no waiting period).
  await change(400);
  const back = await othello.drain(t);
  t.same(back.map(kind), [
    'realm_user update',
    'user_group remove_members',
    'user_group add_members',
    'user_group add_members',
    'stream create',
    'subscription peer_add',
  ]);
  t.match(back, [
    {},
    { group_id: group('role:everyone') },
    { group_id: group('role:members') },
    { group_id: group('role:fullmembers') },
    { streams: [{ stream_id: open }] },
    { stream_ids: [open], user_ids: [id('cordelia')] },
  ]);
  await cordelia.drain(t);

  // A moderator: no channel changes (moderators see what members see).
  await change(300);
  t.same((await othello.drain(t)).map(kind), [
    'realm_user update',
    'user_group remove_members',
    'user_group add_members',
    'user_group remove_members',
  ]);

  const user = assertSuccess(t, await api.get('hamlet', `users/${id('othello')}`)).user;
  t.match(user, { role: 300, is_admin: false, is_guest: false });

  // The snapshot kept from the events equals a fresh one.
  for (const q of [othello, cordelia]) {
    await q.drain(t);
    const state = structuredClone(q.snapshot);
    applyEvents(state, q.got);
    const fresh = (await register(t, api, q.who)).body;
    for (const key of ['realm_users', 'realm_user_groups', 'streams'])
      t.same(state[key], fresh[key], `${q.who}: ${key} after the events`);
  }
});

t.test('who may change roles; the last owner', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (who: string) => fx.users[who]!.id;
  assertError(
    t,
    await api.patch('hamlet', `users/${id('othello')}`, { role: 300 }),
    'Insufficient permission',
  );
  assertError(
    t,
    await api.patch('iago', `users/${id('hamlet')}`, { role: 100 }),
    'Must be an organization owner',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await api.patch('iago', `users/${id('desdemona')}`, { role: 200 }),
    'Must be an organization owner',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await api.patch('desdemona', `users/${id('desdemona')}`, { role: 200 }),
    'The owner permission cannot be removed from the only organization owner.',
  );
  assertError(t, await api.patch('iago', `users/${id('hamlet')}`, { role: 500 }), 'Invalid role');
  assertError(t, await api.patch('iago', 'users/9999', { role: 400 }), 'No such user');
  assertError(
    t,
    await api.patch('iago', `users/${id('hamlet')}`, { role: 'admin' }),
    'role is not valid JSON',
    { code: 'INVALID_JSON' },
  );

  assertSuccess(t, await api.patch('desdemona', `users/${id('iago')}`, { role: 100 }));
  assertSuccess(t, await api.patch('iago', `users/${id('desdemona')}`, { role: 400 }));
  assertError(
    t,
    await api.patch('iago', `users/${id('iago')}`, { role: 200 }),
    'The owner permission cannot be removed from the only organization owner.',
  );
  // The same role again is no change.
  assertSuccess(t, await api.patch('iago', `users/${id('iago')}`, { role: 100 }));
  t.match(assertSuccess(t, await api.get('hamlet', `users/${id('desdemona')}`)).user, {
    role: 400,
    is_owner: false,
    is_admin: false,
  });
});

t.test('names and profile values set by an administrator', async (t) => {
  const ts = await startServer(t);
  const { api, fx, server } = ts;
  const target = fx.users.hamlet!.id;
  const q = await Listener.open(t, api, 'othello', {}, { allowExtra: USER_SPEC_EXTRAS });
  const realm = server.context.realms.get(fx.realmId)!;
  await realm.ask('realm.update_settings', {
    acting_user_id: null,
    settings: { name_changes_disabled: true },
  });
  await q.drain(t);
  assertSuccess(t, await api.patch('iago', `users/${target}`, { full_name: ' Prince Hamlet ' }));
  t.match(await q.drain(t), [
    { type: 'realm_user', op: 'update', person: { user_id: target, full_name: 'Prince Hamlet' } },
  ]);
  assertSuccess(
    t,
    await api.patch('iago', `users/${target}`, { full_name: '   ' }),
    'blank: ignored',
  );
  assertError(t, await api.patch('iago', `users/${target}`, { full_name: 'P' }), 'Name too short!');
  t.same(await q.drain(t), []);

  const locked = assertSuccess(
    t,
    await api.post('iago', 'realm/profile_fields', {
      name: 'Badge',
      field_type: 1,
      editable_by_user: false,
    }),
  ).id as number;
  const mentors = assertSuccess(
    t,
    await api.post('iago', 'realm/profile_fields', { name: 'Mentors', field_type: 6 }),
  ).id as number;
  await q.drain(t);
  assertSuccess(
    t,
    await api.patch('iago', `users/${target}`, {
      profile_data: [
        { id: locked, value: 'Gold *star*' },
        { id: mentors, value: [fx.users.othello!.id] },
      ],
    }),
  );
  t.match(
    (await q.drain(t)).map((e) => e.person),
    [
      {
        user_id: target,
        custom_profile_field: {
          id: locked,
          value: 'Gold *star*',
          rendered_value: '<p>Gold <em>star</em></p>',
        },
      },
      {
        user_id: target,
        custom_profile_field: { id: mentors, value: `[${fx.users.othello!.id}]` },
      },
    ],
  );
  // Empty values remove: null, "" and [].
  assertSuccess(
    t,
    await api.patch('iago', `users/${target}`, {
      profile_data: [
        { id: locked, value: null },
        { id: mentors, value: [] },
      ],
    }),
  );
  t.same(
    (await q.drain(t)).map(
      (e) => (e.person as { custom_profile_field: unknown }).custom_profile_field,
    ),
    [
      { id: locked, value: null },
      { id: mentors, value: null },
    ],
  );
  assertError(
    t,
    await api.patch('iago', `users/${target}`, { profile_data: [{ id: 999, value: 'x' }] }),
    'Field id 999 not found.',
  );
  assertError(
    t,
    await api.patch('hamlet', `users/${target}`, { profile_data: [{ id: locked, value: 'x' }] }),
    'Insufficient permission',
  );
});

t.test('deactivation and reactivation reach the channels the user was in', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (who: string) => fx.users[who]!.id;
  const open = await createChannel(api, 'prospero', 'open');
  const secret = await createChannel(api, 'hamlet', 'secret', {
    invite_only: true,
    principals: [id('hamlet'), id('prospero')],
  });
  const hamlet = await Listener.open(t, api, 'hamlet', {}, { allowExtra: EXTRAS });
  const othello = await Listener.open(t, api, 'othello', {}, { allowExtra: EXTRAS });
  const iago = await Listener.open(t, api, 'iago', {}, { allowExtra: EXTRAS });
  const polonius = await Listener.open(t, api, 'polonius', {}, { allowExtra: EXTRAS });

  assertSuccess(t, await api.delete('iago', `users/${id('prospero')}`));
  const peerRemoves = (evs: Ev[]) =>
    evs.flatMap((e) => (e.stream_ids as number[] | undefined) ?? []).sort();
  const h = await hamlet.drain(t);
  t.same(h.map(kind), [
    'subscription peer_remove',
    'subscription peer_remove',
    'realm_user update',
  ]);
  t.same(peerRemoves(h), [open, secret].sort());
  t.match(h[0], { user_ids: [id('prospero')] });
  t.same(peerRemoves(await iago.drain(t)), [open, secret].sort(), 'admins see both');
  const o = await othello.drain(t);
  t.same(o.map(kind), ['subscription peer_remove', 'realm_user update'], 'the public one only');
  t.same(peerRemoves(o), [open]);
  t.same(
    (await polonius.drain(t)).map(kind),
    ['realm_user update'],
    'a guest not in the channels learns only the deactivation',
  );

  assertError(t, await api.post('iago', 'users/9999/reactivate'), 'No such user');
  assertError(
    t,
    await api.post('hamlet', `users/${id('prospero')}/reactivate`),
    'Insufficient permission',
  );
  const body = assertSuccess(t, await api.post('iago', `users/${id('prospero')}/reactivate`));
  assertMatchesOpenApi(t, '/users/{user_id}/reactivate', 'post', body);
  const h2 = await hamlet.drain(t);
  t.same(h2.map(kind), ['realm_user update', 'subscription peer_add', 'subscription peer_add']);
  t.match(h2[0], { person: { user_id: id('prospero'), is_active: true } });
  t.same(peerRemoves(h2), [open, secret].sort());
  t.same((await othello.drain(t)).map(kind), ['realm_user update', 'subscription peer_add']);
  t.same((await polonius.drain(t)).map(kind), ['realm_user update']);

  // The account works again; reactivating an active account changes nothing.
  assertSuccess(t, await api.get('prospero', 'users/me'));
  assertSuccess(t, await api.post('iago', `users/${id('prospero')}/reactivate`));
  t.same(await hamlet.drain(t), []);

  for (const q of [hamlet, othello, polonius]) {
    await q.drain(t);
    const state = structuredClone(q.snapshot);
    applyEvents(state, q.got);
    const fresh = (await register(t, api, q.who)).body;
    for (const key of ['realm_users', 'realm_non_active_users'])
      t.same(state[key], fresh[key], `${q.who}: ${key} after the events`);
  }
});

t.test('every role transition leaves the known channels equal to a fresh snapshot', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (who: string) => fx.users[who]!.id;
  const group = (name: string) => systemGroupId(ts, name);
  // Private channels whose audiences depend on roles through each kind of setting.
  await createChannel(api, 'iago', 'admins-only', { invite_only: true });
  await createChannel(api, 'iago', 'full-members-join', {
    invite_only: true,
    can_subscribe_group: group('role:fullmembers'),
  });
  await createChannel(api, 'iago', 'moderators-add', {
    invite_only: true,
    can_add_subscribers_group: group('role:moderators'),
  });
  await createChannel(api, 'iago', 'members-administer', {
    invite_only: true,
    can_administer_channel_group: {
      direct_members: [],
      direct_subgroups: [group('role:members'), group('role:nobody')],
    },
  });
  await createChannel(api, 'cordelia', 'public-one');
  assertSuccess(t, await api.patch('iago', 'realm', { enable_spectator_access: true }));
  await createChannel(api, 'desdemona', 'web-public', { is_web_public: true });
  const q = await Listener.open(t, api, 'othello', {}, { allowExtra: EXTRAS });
  const roles = [400, 300, 200, 600, 100, 400, 600, 300, 100, 200, 400];
  for (const role of roles) {
    // The owner may give and take every role.
    assertSuccess(
      t,
      await api.patch('desdemona', `users/${id('othello')}`, { role }),
      `to ${role}`,
    );
    await q.drain(t);
    const state = structuredClone(q.snapshot);
    applyEvents(state, q.got);
    const fresh = (await register(t, api, 'othello')).body;
    t.same(
      (state.streams as { name: string }[]).map((s) => s.name),
      (fresh.streams as { name: string }[]).map((s) => s.name),
      `role ${role}: the channels othello knows`,
    );
  }
});
