/**
 * POST /register: the snapshot (fields, values, event-type selection, capabilities), spectators,
 * and parameter refusals. Reference tests: zerver/tests/test_event_system.py
 * (EventsEndpointTest, FetchInitialStateDataTest), test_events.py.
 */
import t from 'tap';
import { NOTIFICATION_BOT_EMAIL } from '../../src/lib/notices.js';
import { REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { assertError, assertSuccess } from '../helpers/api.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

/**
 * Fields the spec adds to the register response beyond the OpenAPI description (the deprecated
 * policies it lists, newer settings), removed before the schema check.
 */
const SPEC_EXTRAS = REGISTER_SPEC_EXTRAS;

t.test('the full snapshot: limits, versions, realm, users, settings', async (t) => {
  const { api, fx } = await startServer(t);
  const settingsRes = await api.get(null, 'server_settings');
  const { body } = await register(t, api, 'hamlet');
  assertMatchesOpenApi(t, '/register', 'post', body, { allowExtra: SPEC_EXTRAS });
  t.type(body.queue_id, 'string');
  t.equal(body.last_event_id, -1);
  for (const k of ['service_feature_level', 'service_version', 'service_merge_base']) {
    t.equal(body[k], settingsRes.body[k], `${k} as server_settings says`);
  }
  t.match(body, {
    max_message_length: 10000,
    max_topic_length: 60,
    max_stream_name_length: 60,
    max_stream_description_length: 1024,
    realm_empty_topic_display_name: 'general chat',
    event_queue_longpoll_timeout_seconds: 90,
    server_typing_started_expiry_period_milliseconds: 45000,
    server_typing_stopped_wait_period_milliseconds: 12000,
    server_typing_started_wait_period_milliseconds: 30000,
    realm_name: 'Zulip Dev',
    realm_url: 'http://testserver.local',
    realm_uri: 'http://testserver.local',
    realm_enable_spectator_access: false,
    realm_allow_message_editing: true,
    realm_message_content_edit_limit_seconds: 600,
    realm_message_edit_history_visibility_policy: 'all',
    realm_allow_edit_history: true,
    realm_mandatory_topics: false,
    realm_authentication_methods: { Email: { enabled: true, available: true } },
    realm_password_auth_enabled: true,
    max_file_upload_size_mib: 25,
  });
  t.type(body.server_generation, 'number');
  t.type(body.realm_date_created, 'number');

  // Group settings are the system groups' ids by default.
  const realm = (await api.get('hamlet', 'users')).body;
  t.ok(realm, 'users listed');
  t.type(body.realm_can_create_groups, 'number');
  t.type(body.realm_create_multiuse_invite_group, 'number');

  // The caller.
  t.match(body, {
    user_id: fx.users.hamlet!.id,
    email: 'hamlet@zulip.com',
    delivery_email: 'hamlet@zulip.com',
    full_name: 'Hamlet',
    is_admin: false,
    is_owner: false,
    is_moderator: false,
    is_guest: false,
    can_create_public_streams: true,
    can_create_private_streams: true,
    can_create_web_public_streams: false,
    can_create_streams: true,
    can_subscribe_other_users: true,
    can_invite_others_to_realm: true,
    avatar_source: 'G',
  });
  // The system bots, as the reference's cross-realm bots (the fixture realm has no Welcome Bot
  // yet: the first new account brings it). Accounts of the realm here, so in realm_users too.
  t.same(body.cross_realm_bots, [
    {
      user_id: fx.notificationBotId,
      email: NOTIFICATION_BOT_EMAIL,
      delivery_email: NOTIFICATION_BOT_EMAIL,
      full_name: 'Notification Bot',
      date_joined: (body.cross_realm_bots as { date_joined: string }[])[0]!.date_joined,
      is_active: true,
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: true,
      bot_type: 1,
      role: 400,
      timezone: '',
      avatar_url: '/static/images/default-avatar.png?version=1',
      avatar_version: 1,
      bot_owner_id: null,
      is_system_bot: true,
    },
  ]);
  // The server's own default avatar (no outside host unless the realm opted in: avatars.test).
  t.equal(body.avatar_url, '/static/images/default-avatar.png?version=1');
  t.equal(body.avatar_url_medium, '/static/images/default-avatar.png?version=1');

  // Users: every active one (the notification bot too), without is_active; every avatar the
  // server's default, client_extavatar (default true) notwithstanding.
  const users = body.realm_users as Record<string, unknown>[];
  t.same(
    users.map((u) => u.email).sort(),
    [...Object.values(fx.users).map((u) => u.email), NOTIFICATION_BOT_EMAIL].sort(),
  );
  t.notOk(users.some((u) => 'is_active' in u));
  t.ok(users.every((u) => u.avatar_url === '/static/images/default-avatar.png?version=1'));
  t.same(body.realm_non_active_users, []);

  // Settings: the object, and (no user_settings_object capability) the legacy copies.
  t.match(body.user_settings, {
    receives_typing_notifications: true,
    enter_sends: false,
    timezone: '',
    emojiset: 'vendora',
  });
  t.notOk('dense_mode' in (body.user_settings as object), 'retired settings are not sent');
  t.equal(body.enter_sends, false);
  t.equal(body.receives_typing_notifications, true);
  t.equal(body.enable_sounds, true);
  t.type(body.emojiset_choices, Array);
  t.type(body.available_notification_sounds, Array);
  t.same(body.custom_profile_fields, []);
  t.match(body.custom_profile_field_types, { SHORT_TEXT: { id: 1, name: 'Text (short)' } });
});

t.test('deprecated policies follow the group settings', async (t) => {
  const { api, server, fx } = await startServer(t);
  const { body } = await register(t, api, 'hamlet', { event_types: ['realm'] });
  t.match(body, {
    realm_create_public_stream_policy: 1,
    realm_create_private_stream_policy: 1,
    realm_create_web_public_stream_policy: 7,
    realm_wildcard_mention_policy: 5,
    realm_add_custom_emoji_policy: 1,
    realm_delete_own_message_policy: 5,
    realm_invite_to_stream_policy: 1,
    realm_invite_to_realm_policy: 1,
    realm_move_messages_between_streams_policy: 1,
    realm_bot_creation_policy: 1,
  });
  const view = server.context.realms.get(fx.realmId)!.view;
  await server.context.realms.get(fx.realmId)!.ask('realm.update_settings', {
    acting_user_id: null,
    settings: {
      can_create_public_channel_group: view.systemGroupId('role:administrators'),
      can_mention_many_users_group: view.systemGroupId('role:moderators'),
      can_invite_users_group: view.systemGroupId('role:nobody'),
      can_create_bots_group: view.systemGroupId('role:administrators'),
      can_delete_own_message_group: { direct_members: [fx.users.hamlet!.id], direct_subgroups: [] },
    },
  });
  const after = (await register(t, api, 'hamlet', { event_types: ['realm'] })).body;
  t.match(after, {
    realm_can_create_public_channel_group: view.systemGroupId('role:administrators'),
    realm_create_public_stream_policy: 2,
    realm_wildcard_mention_policy: 7,
    realm_invite_to_realm_policy: 6,
    realm_bot_creation_policy: 2,
    realm_can_delete_own_message_group: {
      direct_members: [fx.users.hamlet!.id],
      direct_subgroups: [],
    },
    realm_delete_own_message_policy: 5,
  });
  const me = (await register(t, api, 'hamlet', { event_types: ['realm_user'] })).body;
  t.equal(me.can_create_public_streams, false, "the caller's abilities follow too");
  t.equal(me.can_invite_others_to_realm, false);
});

t.test('event_types and fetch_event_types choose the snapshot', async (t) => {
  const { api } = await startServer(t);
  const users = (await register(t, api, 'hamlet', { event_types: ['realm_user'] })).body;
  t.ok('realm_users' in users);
  t.notOk('realm_name' in users);
  t.notOk('user_settings' in users);
  t.equal(users.service_feature_level, 388, 'versions are always present');

  const fetched = (
    await register(t, api, 'hamlet', {
      event_types: ['realm_user'],
      fetch_event_types: ['realm', 'no_such_type'],
    })
  ).body;
  t.ok('realm_name' in fetched, 'fetch_event_types wins for the snapshot');
  t.notOk('realm_users' in fetched);

  const modern = (
    await register(t, api, 'hamlet', {
      fetch_event_types: [
        'user_settings',
        'update_display_settings',
        'update_global_notifications',
      ],
      client_capabilities: { notification_settings_null: true, user_settings_object: true },
    })
  ).body;
  t.ok('user_settings' in modern);
  t.notOk('enter_sends' in modern, 'no legacy copies for user_settings_object clients');
  t.notOk('enable_sounds' in modern);

  const users2 = (
    await register(t, api, 'iago', { event_types: ['realm_user'], client_extavatar: false })
  ).body;
  t.ok(
    (users2.realm_users as { avatar_url: string | null }[]).every(
      (u) => typeof u.avatar_url === 'string',
    ),
    'client_extavatar false: full avatar URLs',
  );
});

t.test('deactivated users, profile fields and their values', async (t) => {
  const { api, server, fx } = await startServer(t);
  const realm = server.context.realms.get(fx.realmId)!;
  const { id } = await realm.ask('profile_field.create', {
    name: 'Phone',
    hint: 'Your phone',
    type: 1,
    field_data: {},
    display_in_profile_summary: false,
    required: false,
    editable_by_user: true,
  });
  await realm.ask('user.profile_data.update', {
    user_id: fx.users.othello!.id,
    data: [{ id, value: '555', rendered_value: '<p>555</p>' }],
  });
  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  const { body } = await register(t, api, 'hamlet');
  assertMatchesOpenApi(t, '/register', 'post', body, { allowExtra: SPEC_EXTRAS });
  t.match(body.custom_profile_fields, [{ id, name: 'Phone', type: 1, hint: 'Your phone' }]);
  const othello = (body.realm_users as { user_id: number; profile_data: object }[]).find(
    (u) => u.user_id === fx.users.othello!.id,
  )!;
  t.same(othello.profile_data, { [id]: { value: '555', rendered_value: '<p>555</p>' } });
  t.same(
    (body.realm_non_active_users as { user_id: number }[]).map((u) => u.user_id),
    [fx.users.prospero!.id],
  );
  t.notOk(
    (body.realm_users as { user_id: number }[]).some((u) => u.user_id === fx.users.prospero!.id),
  );
});

t.test('spectators: only with public access; no queue; a guest view', async (t) => {
  const { api, server, fx } = await startServer(t);
  assertError(
    t,
    await api.post(null, 'register', {}),
    'Not logged in: API authentication or user session required',
    {
      status: 401,
      code: 'UNAUTHORIZED',
    },
  );
  await server.context.realms.get(fx.realmId)!.ask('realm.update_settings', {
    acting_user_id: null,
    settings: { enable_spectator_access: true },
  });
  const res = await api.post(null, 'register', {});
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/register', 'post', body, { allowExtra: SPEC_EXTRAS });
  t.equal(body.queue_id, null);
  t.equal(body.last_event_id, -1);
  t.match(body, {
    user_id: 0,
    is_guest: true,
    is_admin: false,
    is_owner: false,
    full_name: 'Anonymous User',
    realm_allow_message_editing: false,
    realm_presence_disabled: true,
    custom_profile_fields: [],
    can_create_public_streams: false,
  });
  t.equal((body.user_settings as { web_home_view: string }).web_home_view, 'recent_topics');
  const users = body.realm_users as Record<string, unknown>[];
  t.ok(users.length > 0);
  t.notOk(
    users.some((u) => 'profile_data' in u),
    'no profile values for spectators',
  );
  t.ok(
    users.every((u) => u.delivery_email === null),
    'no real e-mail addresses for spectators',
  );

  assertSuccess(t, await api.post(null, 'register', { client_extavatar: false }));
  assertError(
    t,
    await api.post(null, 'register', { client_extavatar: true }),
    "Invalid 'client_extavatar' parameter for anonymous request",
  );
  assertError(
    t,
    await api.post(null, 'register', { include_subscribers: true }),
    "Invalid 'include_subscribers' parameter for anonymous request",
  );
});

t.test('register parameters are validated', async (t) => {
  const { api } = await startServer(t);
  assertError(
    t,
    await api.post('hamlet', 'register', { narrow: [['search', 'x']] }),
    'Operator search not supported.',
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { narrow: [['is', 'followed']] }),
    'Operand followed not supported.',
  );
  assertError(t, await api.post('hamlet', 'register', { narrow: '{}' }), 'narrow is not a list');
  assertError(
    t,
    await api.post('hamlet', 'register', { narrow: [['is']] }),
    'narrow[0] is not a list of length 2',
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { narrow: 'nope' }),
    'narrow is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { event_types: 'message' }),
    'event_types is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { event_types: [1] }),
    'event_types[0] is not a string',
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { client_capabilities: [] }),
    'client_capabilities is not a dict',
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { client_capabilities: { bulk_message_deletion: 'yes' } }),
    'client_capabilities["bulk_message_deletion"] is not a boolean',
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { apply_markdown: 'x' }),
    'apply_markdown is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
  assertError(
    t,
    await api.post('polonius', 'register', { all_public_streams: true }),
    'User not authorized for this query',
  );
  assertError(
    t,
    await api.post('hamlet', 'register', { queue_lifespan_secs: -1 }),
    'queue_lifespan_secs is too small',
  );
  const ok = await api.post('hamlet', 'register', { event_types: ['realm'], unknown_param: 1 });
  t.same(assertSuccess(t, ok).ignored_parameters_unsupported, ['unknown_param']);
});

t.test(
  'realm_users stay true between registers: kept serialized, remade when users change',
  async (t) => {
    const { api, fx } = await startServer(t);
    const hamlet = fx.users.hamlet!;
    const othello = fx.users.othello!;
    type Entry = { user_id: number; delivery_email: string | null; full_name: string } & Record<
      string,
      unknown
    >;
    const entry = async (who: string, userId: number, params = {}) => {
      const { body } = await register(t, api, who, params);
      return (body.realm_users as Entry[]).find((u) => u.user_id === userId);
    };
    // Administrators only: a member sees no one's address but their own; an administrator sees it.
    for (const who of ['hamlet', 'othello']) {
      assertSuccess(t, await api.patch(who, 'settings', { email_address_visibility: 3 }));
    }
    t.equal((await entry('othello', hamlet.id))!.delivery_email, null, 'hidden from a member');
    t.equal((await entry('othello', othello.id))!.delivery_email, othello.email, 'own shown');
    t.equal((await entry('hamlet', hamlet.id))!.delivery_email, hamlet.email, 'own shown');
    t.equal((await entry('hamlet', othello.id))!.delivery_email, null, 'hidden from a member');
    t.equal((await entry('iago', hamlet.id))!.delivery_email, hamlet.email, 'shown to an admin');
    // A setting changed: the next register shows it.
    assertSuccess(t, await api.patch('hamlet', 'settings', { email_address_visibility: 1 }));
    t.equal((await entry('othello', hamlet.id))!.delivery_email, hamlet.email, 'now everyone');
    // A rename, a profile value, a new user: each in the next register.
    assertSuccess(t, await api.patch('hamlet', 'settings', { full_name: 'Prince Hamlet' }));
    t.equal((await entry('othello', hamlet.id))!.full_name, 'Prince Hamlet');
    const field = assertSuccess(
      t,
      await api.post('iago', 'realm/profile_fields', { name: 'Castle', field_type: 1 }),
    ).id as number;
    const data = JSON.stringify([{ id: field, value: 'Elsinore' }]);
    assertSuccess(t, await api.patch('hamlet', 'users/me/profile_data', { data }));
    t.same((await entry('othello', hamlet.id))!.profile_data, {
      [String(field)]: { value: 'Elsinore', rendered_value: '<p>Elsinore</p>' },
    });
    t.notOk((await entry('othello', hamlet.id, { client_gravatar: false }))!.avatar_url === null);
    const created = assertSuccess(
      t,
      await api.post('iago', 'users', {
        email: 'yorick@zulip.com',
        password: 'pw-123456',
        full_name: 'Yorick',
      }),
    ).user_id as number;
    t.equal((await entry('othello', created))!.full_name, 'Yorick', 'a new user is listed');
    // Deactivated: moved to realm_non_active_users.
    assertSuccess(t, await api.delete('iago', `users/${created}`));
    const { body } = await register(t, api, 'othello');
    t.notOk((body.realm_users as Entry[]).some((u) => u.user_id === created));
    t.ok((body.realm_non_active_users as Entry[]).some((u) => u.user_id === created));
    t.equal((await entry('iago', hamlet.id))!.full_name, 'Prince Hamlet', 'every role remade');
  },
);
