/**
 * PATCH /realm against the real server: administrators and owners, plain settings and the
 * reference's refusals, group settings ({new, old}) with their per-setting rules, the deprecated
 * integer policies mapped onto group settings, the waiting period and full members, channel
 * settings, authentication methods — and every `realm_*` field of a client's snapshot kept by the
 * events equal to a fresh snapshot. Reference tests: zerver/tests/test_realm.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { applyEvents } from '../helpers/apply-events.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { kind, Listener } from '../helpers/queues.js';
import { startServer } from '../helpers/server.js';
import { CHANNEL_SPEC_EXTRAS } from '../helpers/spec-extras.js';

async function realmFieldsMatch(
  t: Test,
  api: Parameters<typeof Listener.open>[1],
  q: Listener,
): Promise<void> {
  await q.drain(t);
  const state = structuredClone(q.snapshot);
  applyEvents(state, q.got);
  const fresh = (await register(t, api, q.who)).body;
  const keys = Object.keys(fresh).filter((k) => k.startsWith('realm_') && k !== 'realm_users');
  t.ok(keys.length > 50, 'many realm fields compared');
  const differing = keys.filter((k) => JSON.stringify(state[k]) !== JSON.stringify(fresh[k]));
  t.same(differing, [], 'every realm_* field equals a fresh snapshot after the events');
}

t.test('plain settings: who may, what is refused, what is answered and announced', async (t) => {
  const { api } = await startServer(t);
  const hamlet = await Listener.open(t, api, 'hamlet');
  assertError(
    t,
    await api.patch('hamlet', 'realm', { name: 'Mine' }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await api.patch('hamlet', 'realm', { default_language: 'xx' }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  const res = await api.patch('iago', 'realm', {
    name: 'Elsinore',
    description: 'A **castle**',
    allow_message_editing: false,
    default_language: 'fr',
    video_chat_provider: 0,
    message_content_edit_limit_seconds: 'unlimited',
    move_messages_within_stream_limit_seconds: 3600,
    jitsi_server_url: 'https://jitsi.elsinore.dk',
    message_edit_history_visibility_policy: 'moves',
    digest_weekday: 3,
    require_unique_names: true,
    unknown_setting: 1,
  });
  const body = assertSuccess(t, res);
  t.same(
    { ...body, result: undefined, msg: undefined },
    {
      result: undefined,
      msg: undefined,
      name: 'updated',
      description: 'updated',
      allow_message_editing: false,
      default_language: 'updated',
      video_chat_provider: 0,
      message_content_edit_limit_seconds: null,
      move_messages_within_stream_limit_seconds: 3600,
      jitsi_server_url: 'updated',
      message_edit_history_visibility_policy: 'updated',
      digest_weekday: 3,
      require_unique_names: true,
      ignored_parameters_unsupported: ['unknown_setting'],
    },
    'each changed setting, strings as "updated"',
  );
  const evs = await hamlet.drain(t);
  t.ok(evs.length > 0 && evs.every((e) => e.type === 'realm'), 'realm events to members');
  const data = Object.assign(
    {},
    ...evs.filter((e) => e.op === 'update_dict').map((e) => e.data as object),
  ) as Record<string, unknown>;
  t.match(data, { name: 'Elsinore', allow_message_editing: false });
  t.notOk('allow_edit_history' in data, "'moves' still allows the history: no change");

  // Nothing to change: nothing answered, nothing announced.
  const same = assertSuccess(t, await api.patch('iago', 'realm', { allow_message_editing: false }));
  t.notOk('allow_message_editing' in same);
  t.same(await hamlet.drain(t), []);

  const refusals: [Record<string, unknown>, string, string?][] = [
    [{ default_language: 'xx' }, "Invalid language 'xx'"],
    [{ video_chat_provider: 7 }, 'Invalid video_chat_provider 7'],
    [{ giphy_rating: 9 }, 'Invalid giphy_rating 9'],
    [
      { message_content_edit_limit_seconds: -5 },
      "Bad value for 'message_content_edit_limit_seconds': -5",
      'REQUEST_VARIABLE_INVALID',
    ],
    [
      { message_content_delete_limit_seconds: 'forever' },
      "Bad value for 'message_content_delete_limit_seconds': forever",
      'REQUEST_VARIABLE_INVALID',
    ],
    [{ jitsi_server_url: 'not a url' }, 'jitsi_server_url is not an allowed_type'],
    [{ name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
    [{ description: 'x'.repeat(1001) }, 'description is too long (limit: 1000 characters)'],
    [{ digest_weekday: 7 }, 'Invalid digest_weekday'],
    [{ org_type: 11 }, 'Invalid org_type'],
    [
      { message_edit_history_visibility_policy: 'some' },
      'Invalid message_edit_history_visibility_policy',
    ],
    [{ allow_message_editing: 'no' }, 'allow_message_editing is not valid JSON', 'INVALID_JSON'],
    [{ new_stream_announcements_stream_id: 9999 }, 'Invalid channel ID'],
  ];
  for (const [params, msg, code] of refusals) {
    assertError(t, await api.patch('iago', 'realm', params), msg, code ? { code } : {});
  }
  t.same(await hamlet.drain(t), [], 'a refused request changes nothing');

  // Owners only.
  for (const params of [
    { invite_required: false },
    { waiting_period_threshold: 3 },
    { message_retention_days: 30 },
    { emails_restricted_to_domains: true },
    { disallow_disposable_email_addresses: false },
    { authentication_methods: { Email: true } },
    { string_id: 'castle' },
    { can_manage_all_groups: { new: 1 } },
    { create_multiuse_invite_group: { new: 1 } },
    { invite_to_realm_policy: 2 },
  ]) {
    assertError(t, await api.patch('iago', 'realm', params), 'Must be an organization owner', {
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
  }
  assertError(
    t,
    await api.patch('desdemona', 'realm', { message_retention_days: 0 }),
    "Bad value for 'message_retention_days': 0",
    { code: 'REQUEST_VARIABLE_INVALID' },
  );
  assertError(
    t,
    await api.patch('desdemona', 'realm', { waiting_period_threshold: -1 }),
    'waiting_period_threshold is too small',
  );
  assertError(
    t,
    await api.patch('desdemona', 'realm', { string_id: 'castle' }),
    'Must be a demo organization.',
  );
  assertError(
    t,
    await api.patch('desdemona', 'realm', { authentication_methods: { Email: false } }),
    'At least one authentication method must be enabled.',
  );
  assertError(
    t,
    await api.patch('desdemona', 'realm', { authentication_methods: { GitHub: true } }),
    "Invalid authentication method: GitHub. Valid methods are: ['Email']",
  );
  const owner = assertSuccess(
    t,
    await api.patch('desdemona', 'realm', {
      message_retention_days: 'unlimited',
      invite_required: false,
      disallow_disposable_email_addresses: false,
    }),
  );
  t.match(owner, { invite_required: false, disallow_disposable_email_addresses: false });
  t.notOk('message_retention_days' in owner, 'already unlimited');
  assertSuccess(t, await api.patch('desdemona', 'realm', { message_retention_days: 30 }));

  await realmFieldsMatch(t, api, hamlet);
});

t.test('group settings, and the deprecated policies that map onto them', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = await Listener.open(t, api, 'hamlet', {}, { allowExtra: CHANNEL_SPEC_EXTRAS });
  const g = (name: string) => systemGroupId(ts, name);

  const res = assertSuccess(
    t,
    await api.patch('iago', 'realm', {
      can_create_public_channel_group: { new: g('role:moderators'), old: g('role:members') },
    }),
  );
  t.same(res.can_create_public_channel_group, g('role:moderators'));
  t.match(await hamlet.drain(t), [
    {
      type: 'realm',
      op: 'update_dict',
      data: { can_create_public_channel_group: g('role:moderators') },
    },
    // Register's deprecated policy follows the group setting.
    { type: 'realm', op: 'update', property: 'create_public_stream_policy', value: 4 },
  ]);
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'mine' }] }),
    'Insufficient permission',
  );

  assertError(
    t,
    await api.patch('iago', 'realm', {
      can_create_public_channel_group: { new: g('role:members'), old: g('role:members') },
    }),
    "'old' value does not match the expected value.",
    { code: 'EXPECTATION_MISMATCH' },
  );
  assertError(
    t,
    await api.patch('iago', 'realm', {
      can_create_public_channel_group: { new: g('role:everyone') },
    }),
    "'can_create_public_channel_group' setting cannot be set to 'role:everyone' group.",
  );
  assertError(
    t,
    await api.patch('iago', 'realm', {
      can_create_web_public_channel_group: {
        new: { direct_members: [fx.users.hamlet!.id], direct_subgroups: [] },
      },
    }),
    "'can_create_web_public_channel_group' must be a system user group.",
    { code: 'SYSTEM_GROUP_REQUIRED' },
  );
  assertError(
    t,
    await api.patch('iago', 'realm', { can_add_custom_emoji_group: { new: 9999 } }),
    'Invalid user group',
  );
  assertError(
    t,
    await api.patch('iago', 'realm', { can_add_custom_emoji_group: g('role:members') }),
    'can_add_custom_emoji_group is not a dict',
  );
  assertError(
    t,
    await api.patch('iago', 'realm', { can_access_all_users_group: { new: g('role:members') } }),
    "Restricting guests' access to other users is not supported by this server.",
  );
  const anonymous = {
    direct_members: [fx.users.hamlet!.id],
    direct_subgroups: [g('role:moderators')],
  };
  const anon = assertSuccess(
    t,
    await api.patch('iago', 'realm', { can_create_public_channel_group: { new: anonymous } }),
  );
  t.same(anon.can_create_public_channel_group, anonymous);
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'mine' }] }),
    'a direct member of the anonymous group may now create channels',
  );
  await hamlet.drain(t);

  // The deprecated integer policies.
  assertError(
    t,
    await api.patch('iago', 'realm', { create_public_stream_policy: 5 }),
    'Invalid create_public_stream_policy',
  );
  const mapped = assertSuccess(
    t,
    await api.patch('iago', 'realm', {
      create_private_stream_policy: 2,
      wildcard_mention_policy: 7,
      bot_creation_policy: 2,
      delete_own_message_policy: 5,
    }),
  );
  t.same(
    {
      private: mapped.can_create_private_channel_group,
      wildcard: mapped.can_mention_many_users_group,
      bots: mapped.can_create_bots_group,
    },
    {
      private: g('role:administrators'),
      wildcard: g('role:moderators'),
      bots: g('role:administrators'),
    },
  );
  t.notOk('can_create_write_only_bots_group' in mapped, 'already members');
  t.notOk('can_delete_own_message_group' in mapped, 'already everyone');
  const policyEvents = (await hamlet.drain(t)).filter((e) => e.op === 'update');
  t.same(policyEvents.map((e) => [e.property, e.value]).sort(), [
    ['bot_creation_policy', 2],
    ['create_private_stream_policy', 2],
    ['wildcard_mention_policy', 7],
  ]);
  const snap = (await register(t, api, 'hamlet')).body;
  t.match(snap, {
    realm_create_private_stream_policy: 2,
    realm_wildcard_mention_policy: 7,
    realm_bot_creation_policy: 2,
    realm_can_create_private_channel_group: g('role:administrators'),
  });

  await realmFieldsMatch(t, api, hamlet);
});

t.test('the waiting period decides full members, and what they may reach', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (who: string) => fx.users[who]!.id;
  const full = systemGroupId(ts, 'role:fullmembers');
  // A private channel full members may subscribe to (and so know about).
  const channel = await createChannel(api, 'iago', 'full-members-only', {
    invite_only: true,
    can_subscribe_group: full,
  });
  const othello = await Listener.open(t, api, 'othello', {}, { allowExtra: CHANNEL_SPEC_EXTRAS });
  const members = ['hamlet', 'othello', 'cordelia', 'prospero'].map(id).sort((a, b) => a - b);

  assertSuccess(t, await api.patch('desdemona', 'realm', { waiting_period_threshold: 30 }));
  const evs = await othello.drain(t);
  t.same(evs.map(kind), [
    'realm update_dict default',
    'user_group remove_members',
    'stream delete',
  ]);
  t.same(
    evs[1]!.user_ids,
    [...members, fx.notificationBotId].sort((a, b) => a - b),
    'every member is new again (the notification bot too)',
  );
  t.same(evs[1]!.group_id, full);
  t.same(evs[2]!.stream_ids, [channel], 'the channel only full members may know is gone');
  assertError(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'full-members-only' }],
    }),
    'Unable to access channel (full-members-only).',
  );

  // A member promoted to moderator is past any waiting period; back to member, they wait again.
  assertSuccess(t, await api.patch('iago', `users/${id('othello')}`, { role: 300 }));
  t.same((await othello.drain(t)).map(kind), [
    'realm_user update',
    'user_group remove_members',
    'user_group add_members',
    'stream create',
    'subscription peer_add',
  ]);
  assertSuccess(t, await api.patch('iago', `users/${id('othello')}`, { role: 400 }));
  t.same((await othello.drain(t)).map(kind), [
    'realm_user update',
    'user_group remove_members',
    'user_group add_members',
    'stream delete',
  ]);

  assertSuccess(t, await api.patch('desdemona', 'realm', { waiting_period_threshold: 0 }));
  const back = await othello.drain(t);
  t.same(back.map(kind), [
    'realm update_dict default',
    'user_group add_members',
    'stream create',
    'subscription peer_add',
  ]);
  t.same(back[1]!.user_ids, members);
  assertSuccess(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'full-members-only' }],
    }),
  );
});

t.test('channel settings of the realm', async (t) => {
  const { api } = await startServer(t);
  const hamlet = await Listener.open(t, api, 'hamlet', {}, { allowExtra: CHANNEL_SPEC_EXTRAS });
  const open = await createChannel(api, 'iago', 'announcements');
  const secret = await createChannel(api, 'iago', 'moderation', { invite_only: true });
  await hamlet.drain(t);
  const body = assertSuccess(
    t,
    await api.patch('iago', 'realm', {
      new_stream_announcements_stream_id: open,
      moderation_request_channel_id: secret,
    }),
  );
  t.match(body, {
    new_stream_announcements_stream_id: open,
    moderation_request_channel_id: secret,
  });
  assertError(
    t,
    await api.patch('iago', 'realm', { moderation_request_channel_id: open }),
    'Moderation request channel must be private.',
  );
  assertSuccess(t, await api.patch('iago', 'realm', { new_stream_announcements_stream_id: -1 }));
  await realmFieldsMatch(t, api, hamlet);
  t.match((await register(t, api, 'hamlet')).body, {
    realm_new_stream_announcements_stream_id: -1,
    realm_moderation_request_channel_id: secret,
  });
});

t.test(
  'name and description are bounded in characters (code points), as the reference counts',
  async (t) => {
    const { api } = await startServer(t);
    const emoji = '\u{1F3F0}'; // two UTF-16 units, one character
    assertSuccess(t, await api.patch('iago', 'realm', { name: emoji.repeat(40) }), '40 emoji');
    assertError(
      t,
      await api.patch('iago', 'realm', { name: emoji.repeat(41) }),
      'name is too long (limit: 40 characters)',
    );
    assertError(
      t,
      await api.patch('iago', 'realm', { name: ' \t ' }),
      'Organization name cannot be blank',
    );
    assertSuccess(
      t,
      await api.patch('iago', 'realm', { description: `${emoji.repeat(999)}x` }),
      '1000 characters, 1999 UTF-16 units',
    );
    assertError(
      t,
      await api.patch('iago', 'realm', { description: emoji.repeat(1001) }),
      'description is too long (limit: 1000 characters)',
    );
    const realm = (await register(t, api, 'hamlet')).body;
    t.equal(realm.realm_name, emoji.repeat(40));
    t.equal(realm.realm_description, `${emoji.repeat(999)}x`);
  },
);
