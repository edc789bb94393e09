/**
 * POST / GET / DELETE /users/me/subscriptions and POST /users/me/subscriptions/properties:
 * creating channels while subscribing, subscribing others, the refusals the reference gives, and
 * who receives each event (and who must not).
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import {
  createChannel,
  eventsSince,
  setRealmSettings,
  systemGroupId,
} from '../helpers/channels.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

/** Fields spec/API.md adds to channel objects beyond the OpenAPI description. */
const SPEC_EXTRA = [
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'topics_policy',
  'folder_id',
];

t.test('subscribing creates a channel with the requested settings', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const res = await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: '  Verona ', description: 'The city\nof love' }],
  });
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/users/me/subscriptions', 'post', res.body);
  t.same(body.subscribed, { [fx.users.hamlet!.id]: ['Verona'] });
  t.same(body.already_subscribed, {});
  t.notOk('unauthorized' in body, 'unauthorized only when authorization errors are not fatal');

  const list = await api.get('hamlet', 'users/me/subscriptions', { include_subscribers: true });
  assertSuccess(t, list);
  assertMatchesOpenApi(t, '/users/me/subscriptions', 'get', list.body, { allowExtra: SPEC_EXTRA });
  const [sub] = list.body.subscriptions as Record<string, unknown>[];
  t.match(sub, {
    name: 'Verona',
    description: 'The city of love',
    rendered_description: '<p>The city of love</p>',
    invite_only: false,
    is_web_public: false,
    history_public_to_subscribers: true,
    creator_id: fx.users.hamlet!.id,
    is_archived: false,
    subscribers: [fx.users.hamlet!.id],
    can_administer_channel_group: { direct_members: [fx.users.hamlet!.id], direct_subgroups: [] },
    can_remove_subscribers_group: systemGroupId(ts, 'role:administrators'),
    can_send_message_group: systemGroupId(ts, 'role:everyone'),
    can_add_subscribers_group: systemGroupId(ts, 'role:nobody'),
    can_subscribe_group: systemGroupId(ts, 'role:nobody'),
    can_delete_any_message_group: systemGroupId(ts, 'role:nobody'),
    can_delete_own_message_group: systemGroupId(ts, 'role:nobody'),
    topics_policy: 'inherit',
    folder_id: null,
    first_message_id: null,
    message_retention_days: null,
    stream_post_policy: 1,
    is_muted: false,
    pin_to_top: false,
  });
  t.match(sub!.color, /^#[0-9a-f]{6}$/);

  // Same name in another case: the existing channel, already subscribed.
  const again = await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: 'VERONA' }],
  });
  t.same(assertSuccess(t, again).already_subscribed, { [fx.users.hamlet!.id]: ['Verona'] });
  t.same(again.body.subscribed, {});

  // Without include_subscribers, no subscriber lists.
  const plain = await api.get('hamlet', 'users/me/subscriptions');
  t.notOk('subscribers' in (plain.body.subscriptions as object[])[0]!);
});

t.test('creation options: private, history, group settings, retention, default', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const admins = systemGroupId(ts, 'role:administrators');
  let res = await api.post('desdemona', 'users/me/subscriptions', {
    subscriptions: [{ name: 'ops' }],
    invite_only: true,
    history_public_to_subscribers: true,
    message_retention_days: 30,
    can_add_subscribers_group: {
      direct_members: [fx.users.othello!.id],
      direct_subgroups: [admins],
    },
    can_administer_channel_group: admins,
  });
  assertSuccess(t, res);
  const ops = await api.get('desdemona', `streams/${await createChannel(api, 'desdemona', 'ops')}`);
  t.match(assertSuccess(t, ops).stream, {
    invite_only: true,
    history_public_to_subscribers: true,
    message_retention_days: 30,
    can_add_subscribers_group: {
      direct_members: [fx.users.othello!.id],
      direct_subgroups: [admins],
    },
    can_administer_channel_group: admins,
  });

  // A private channel's history is protected unless asked otherwise; a public one's never is.
  res = await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: 'quiet' }, { name: 'loud' }],
    invite_only: true,
  });
  assertSuccess(t, res);
  const quiet = await api.get('hamlet', `streams/${await createChannel(api, 'hamlet', 'quiet')}`);
  t.equal(
    (quiet.body.stream as { history_public_to_subscribers: boolean }).history_public_to_subscribers,
    false,
  );
  res = await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: 'open' }],
    history_public_to_subscribers: false,
  });
  assertSuccess(t, res);
  const open = await api.get('hamlet', `streams/${await createChannel(api, 'hamlet', 'open')}`);
  t.equal(
    (open.body.stream as { history_public_to_subscribers: boolean }).history_public_to_subscribers,
    true,
  );

  // Default channels: administrators only, never private.
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'lobby' }],
      is_default_stream: true,
    }),
    'Insufficient permission',
  );
  assertError(
    t,
    await api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'lobby' }],
      is_default_stream: true,
      invite_only: true,
    }),
    'A default channel cannot be private.',
  );
  const mark = ts.events.length;
  assertSuccess(
    t,
    await api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'lobby' }],
      is_default_stream: true,
    }),
  );
  const lobby = await createChannel(api, 'iago', 'lobby');
  const defaults = eventsSince(ts, mark).find((e) => e.event.type === 'default_streams')!;
  t.same(defaults.event.default_streams, [lobby]);
  t.notOk(defaults.users.includes(fx.users.polonius!.id), 'guests do not get default_streams');
  t.ok(defaults.users.includes(fx.users.hamlet!.id));
  const listed = await api.get('hamlet', 'streams', { include_default: true });
  const lobbyObj = (listed.body.streams as { stream_id: number; is_default: boolean }[]).find(
    (s) => s.stream_id === lobby,
  );
  t.equal(lobbyObj?.is_default, true);
});

t.test('creation refusals', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  // Settings apply only to channels the request creates: each attempt names a new channel.
  let n = 0;
  const sub = (who: string, params: Record<string, unknown>) =>
    api.post(who, 'users/me/subscriptions', { subscriptions: [{ name: `new ${++n}` }], ...params });
  assertError(t, await sub('polonius', {}), 'Not allowed for guest users');
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: '   ' }] }),
    "Channel name can't be empty.",
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'x'.repeat(61) }],
    }),
    'Channel name too long (limit: 60 characters).',
  );
  // Bounds count characters (code points), as the reference does: an emoji is one, not two.
  const emoji = '\u{1F3AD}';
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: emoji.repeat(60), description: emoji.repeat(1024) }],
    }),
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: emoji.repeat(61) }],
    }),
    'Channel name too long (limit: 60 characters).',
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'masks', description: emoji.repeat(1025) }],
    }),
    'subscriptions[0]["description"] is too long (limit: 1024 characters)',
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'bad\u0001name' }],
    }),
    'Invalid character in channel name, at position 4.',
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {}),
    "Missing 'subscriptions' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: 'nope' }),
    'subscriptions is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  assertError(
    t,
    await sub('hamlet', { message_retention_days: 10 }),
    'Must be an organization owner',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await sub('desdemona', { message_retention_days: 0 }),
    "Bad value for 'message_retention_days': 0",
    { code: 'REQUEST_VARIABLE_INVALID' },
  );
  assertError(
    t,
    await sub('desdemona', { message_retention_days: 'forever' }),
    "Bad value for 'message_retention_days': forever",
    { code: 'REQUEST_VARIABLE_INVALID' },
  );
  assertError(
    t,
    await sub('desdemona', { is_web_public: true }),
    'Web-public channels are not enabled.',
  );
  setRealmSettings(ts, { enable_spectator_access: true });
  assertError(t, await sub('iago', { is_web_public: true }), 'Insufficient permission');
  assertSuccess(t, await sub('desdemona', { is_web_public: true }), 'owners create web-public');

  // Group-setting values the settings refuse.
  const internet = systemGroupId(ts, 'role:internet');
  const everyone = systemGroupId(ts, 'role:everyone');
  assertError(
    t,
    await sub('hamlet', { can_administer_channel_group: everyone }),
    "'can_administer_channel_group' setting cannot be set to 'role:everyone' group.",
  );
  assertError(
    t,
    await sub('hamlet', { can_send_message_group: internet }),
    "'can_send_message_group' setting cannot be set to 'role:internet' group.",
  );
  assertError(t, await sub('hamlet', { can_send_message_group: 9999 }), 'Invalid user group');
  assertError(
    t,
    await sub('hamlet', {
      can_send_message_group: { direct_members: [9999], direct_subgroups: [] },
    }),
    'Invalid user ID: 9999',
  );
  assertError(
    t,
    await sub('hamlet', {
      can_send_message_group: { direct_members: [], direct_subgroups: [9999, 1] },
    }),
    'Invalid user group ID: 9999',
  );
  assertError(
    t,
    await sub('hamlet', { can_send_message_group: 'x' }),
    'can_send_message_group is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
  assertError(
    t,
    await sub('hamlet', { can_send_message_group: [1] }),
    'Invalid can_send_message_group',
  );
  // Channel-level delete permissions: only can_set_delete_message_policy_group (moderators).
  const owners = systemGroupId(ts, 'role:owners');
  assertError(
    t,
    await sub('hamlet', { can_delete_any_message_group: owners }),
    'Insufficient permission',
  );
  assertSuccess(t, await sub('shiva', { can_delete_any_message_group: owners }));

  // Realm policies on who may create channels.
  setRealmSettings(ts, { can_create_private_channel_group: systemGroupId(ts, 'role:moderators') });
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'hideout' }],
      invite_only: true,
    }),
    'Insufficient permission',
  );
  assertSuccess(
    t,
    await api.post('shiva', 'users/me/subscriptions', {
      subscriptions: [{ name: 'hideout' }],
      invite_only: true,
    }),
  );
  // Nothing half-written: a refused request created nothing.
  const all = await api.get('desdemona', 'streams', { include_all: true });
  t.same((all.body.streams as { name: string }[]).map((s) => s.name).sort(), [
    'hideout',
    'new 16', // by the moderator, with channel-level delete permissions
    'new 7', // web-public, by the owner
    '\u{1F3AD}'.repeat(60), // the limits in emoji
  ]);
});

t.test('subscribing others and the unauthorized list', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const cordelia = fx.users.cordelia!.id;
  await createChannel(api, 'hamlet', 'public');
  await createChannel(api, 'iago', 'secret', { invite_only: true });

  // Others, by id and by e-mail (members may add subscribers by default).
  let res = await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: 'public' }],
    principals: [othello, hamlet],
  });
  t.same(assertSuccess(t, res).subscribed, { [othello]: ['public'] });
  t.same(res.body.already_subscribed, { [hamlet]: ['public'] });
  res = await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: 'public' }],
    principals: ['cordelia@zulip.com'],
  });
  t.same(assertSuccess(t, res).subscribed, { [cordelia]: ['public'] });

  // Unknown or deactivated principals: 400.
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'public' }],
      principals: [9999],
    }),
    'No such user',
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'public' }],
      principals: ['nobody@zulip.com'],
    }),
    'No such user',
  );
  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'public' }],
      principals: [fx.users.prospero!.id],
    }),
    'User is deactivated',
  );

  // A private channel the user cannot access.
  assertError(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'secret' }] }),
    'Unable to access channel (secret).',
  );
  res = await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: 'secret' }, { name: 'public' }],
    authorization_errors_fatal: false,
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/users/me/subscriptions', 'post', res.body);
  t.same(res.body.unauthorized, ['secret']);
  t.same(res.body.subscribed, {});

  // Without the realm-wide right, members may not add others to an existing channel.
  setRealmSettings(ts, { can_add_subscribers_group: systemGroupId(ts, 'role:nobody') });
  assertError(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'public' }],
      principals: [fx.users.shiva!.id],
    }),
    'Insufficient permission',
  );
  // ... but may when creating the channel (they administer it).
  assertSuccess(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'fresh' }],
      principals: [fx.users.shiva!.id],
    }),
  );
});

t.test('events of subscribing: who receives each, and who must not', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => (n === 'bot' ? fx.notificationBotId : fx.users[n]!.id);
  // The notification bot is a member of the realm too.
  const everyoneButGuest = [
    'bot',
    'desdemona',
    'iago',
    'shiva',
    'hamlet',
    'othello',
    'cordelia',
    'prospero',
  ]
    .map(id)
    .sort((a, b) => a - b);

  // A public channel: `stream create` to every non-guest; `subscription add` to the subscriber;
  // `peer_add` to the others who may see subscribers — never the guest.
  let mark = ts.events.length;
  await createChannel(api, 'hamlet', 'public');
  let evs = eventsSince(ts, mark);
  const create = evs.find((e) => e.event.type === 'stream' && e.event.op === 'create')!;
  t.same(create.users, everyoneButGuest);
  assertMatchesOpenApi(
    t,
    '/events',
    'get',
    { result: 'success', msg: '', queue_id: 'x', events: [{ ...create.event, id: 0 }] },
    { allowExtra: SPEC_EXTRA },
  );
  const add = evs.find((e) => e.event.type === 'subscription' && e.event.op === 'add')!;
  t.same(add.users, [id('hamlet')]);
  t.same((add.event.subscriptions as { subscribers: number[] }[])[0]!.subscribers, [id('hamlet')]);
  const peer = evs.find((e) => e.event.op === 'peer_add')!;
  t.same(peer.event, {
    type: 'subscription',
    op: 'peer_add',
    stream_ids: [
      create.event.streams && (create.event.streams as { stream_id: number }[])[0]!.stream_id,
    ],
    user_ids: [id('hamlet')],
  });
  t.same(
    peer.users,
    everyoneButGuest.filter((u) => u !== id('hamlet')),
  );

  // A guest subscribed to a public channel now knows it: `stream create` for them alone.
  mark = ts.events.length;
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'public' }],
      principals: [id('polonius')],
    }),
  );
  evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [e.event.type, e.event.op, e.users]),
    [
      ['stream', 'create', [id('polonius')]],
      ['subscription', 'add', [id('polonius')]],
      ['subscription', 'peer_add', everyoneButGuest.filter((u) => u !== id('polonius'))],
    ],
  );

  // A private channel: `stream create` to administrators and the members who can know it (its
  // creator administers it, and subscribers); nobody else hears of it.
  mark = ts.events.length;
  assertSuccess(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'secret' }],
      invite_only: true,
      principals: [id('othello'), id('cordelia')],
    }),
  );
  evs = eventsSince(ts, mark);
  const knowers = [id('desdemona'), id('iago'), id('othello'), id('cordelia')].sort(
    (a, b) => a - b,
  );
  const pcreate = evs.find((e) => e.event.type === 'stream' && e.event.op === 'create')!;
  t.same(pcreate.users, knowers);
  const ppeer = evs.find((e) => e.event.op === 'peer_add')!;
  t.same(ppeer.users, [id('desdemona'), id('iago')], 'only admins hear of the new subscribers');
  for (const e of evs) {
    for (const outsider of ['shiva', 'hamlet', 'prospero', 'polonius'])
      t.notOk(e.users.includes(id(outsider)), `${outsider} hears nothing of the private channel`);
  }
  t.same(
    evs.filter((e) => e.event.op === 'add').map((e) => e.users),
    [[id('othello')], [id('cordelia')]],
  );

  // Adding someone to the private channel: they learn it exists; peers get peer_add.
  mark = ts.events.length;
  assertSuccess(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'secret' }],
      principals: [id('hamlet')],
    }),
  );
  evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [e.event.type, e.event.op, e.users]),
    [
      ['stream', 'create', [id('hamlet')]],
      ['subscription', 'add', [id('hamlet')]],
      ['subscription', 'peer_add', knowers],
    ],
  );
});

t.test('DELETE /users/me/subscriptions', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => (n === 'bot' ? fx.notificationBotId : fx.users[n]!.id);
  const pub = await createChannel(api, 'hamlet', 'public');
  const secret = await createChannel(api, 'iago', 'secret', { invite_only: true });
  await api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: [{ name: 'public' }],
    principals: [id('othello'), id('cordelia'), id('polonius')],
  });
  await api.post('iago', 'users/me/subscriptions', {
    subscriptions: [{ name: 'secret' }],
    principals: [id('othello'), id('cordelia')],
  });

  // Self.
  let mark = ts.events.length;
  let res = await api.delete('othello', 'users/me/subscriptions', { subscriptions: ['public'] });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/users/me/subscriptions', 'delete', res.body);
  t.same(res.body, { result: 'success', msg: '', removed: ['public'], not_removed: [] });
  let evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [e.event.type, e.event.op, e.users]),
    [
      ['subscription', 'remove', [id('othello')]],
      [
        'subscription',
        'peer_remove',
        ['bot', 'desdemona', 'iago', 'shiva', 'hamlet', 'cordelia', 'prospero', 'polonius']
          .map(id)
          .sort((a, b) => a - b),
      ],
    ],
  );
  t.same(evs[0]!.event.subscriptions, [{ name: 'public', stream_id: pub }]);
  res = await api.delete('othello', 'users/me/subscriptions', { subscriptions: ['public'] });
  t.same(assertSuccess(t, res).not_removed, ['public']);

  // Unknown channel (and a private channel the user may not know): STREAM_DOES_NOT_EXIST.
  res = await api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['nowhere'] });
  assertError(t, res, "Channel 'nowhere' does not exist", { code: 'STREAM_DOES_NOT_EXIST' });
  t.equal(res.body.stream, 'nowhere');
  assertMatchesOpenApi(t, '/users/me/subscriptions', 'delete', res.body, { status: '400' });
  res = await api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['secret'] });
  assertError(t, res, "Channel 'secret' does not exist", { code: 'STREAM_DOES_NOT_EXIST' });

  // Others: members may not (except the channel's administrators, such as its creator hamlet);
  // organization administrators may, by id or e-mail.
  assertError(
    t,
    await api.delete('othello', 'users/me/subscriptions', {
      subscriptions: ['public'],
      principals: [id('cordelia')],
    }),
    'Insufficient permission',
  );
  res = await api.delete('iago', 'users/me/subscriptions', {
    subscriptions: ['public'],
    principals: ['cordelia@zulip.com'],
  });
  t.same(assertSuccess(t, res).removed, ['public']);
  assertError(
    t,
    await api.delete('iago', 'users/me/subscriptions', {
      subscriptions: ['public'],
      principals: [9999],
    }),
    'No such user',
  );
  assertSuccess(t, await api.delete('iago', `users/${id('prospero')}`));
  assertError(
    t,
    await api.delete('iago', 'users/me/subscriptions', {
      subscriptions: ['public'],
      principals: [id('prospero')],
    }),
    'User is deactivated',
  );

  // An administrator not subscribed to a private channel may still remove its subscribers; the
  // removed user loses the channel (`stream delete`), the remaining peers get `peer_remove`.
  mark = ts.events.length;
  assertSuccess(
    t,
    await api.delete('desdemona', 'users/me/subscriptions', {
      subscriptions: ['secret'],
      principals: [id('cordelia')],
    }),
  );
  evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [e.event.type, e.event.op, e.users]),
    [
      ['subscription', 'remove', [id('cordelia')]],
      ['subscription', 'peer_remove', [id('desdemona'), id('iago'), id('othello')]],
      ['stream', 'delete', [id('cordelia')]],
    ],
  );
  t.same(evs[2]!.event, {
    type: 'stream',
    op: 'delete',
    streams: [{ stream_id: secret }],
    stream_ids: [secret],
  });

  // A guest who leaves a public channel no longer knows it.
  mark = ts.events.length;
  assertSuccess(
    t,
    await api.delete('polonius', 'users/me/subscriptions', { subscriptions: ['public'] }),
  );
  evs = eventsSince(ts, mark);
  t.same(evs.find((e) => e.event.op === 'delete')?.users, [id('polonius')]);

  // can_remove_subscribers_group lets members remove others.
  const everyone = systemGroupId(ts, 'role:everyone');
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, { can_remove_subscribers_group: { new: everyone } }),
  );
  await api.post('othello', 'users/me/subscriptions', { subscriptions: [{ name: 'public' }] });
  res = await api.delete('othello', 'users/me/subscriptions', {
    subscriptions: ['public'],
    principals: [id('hamlet')],
  });
  t.same(assertSuccess(t, res).removed, ['public']);
});

t.test('POST /users/me/subscriptions/properties', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const pub = await createChannel(api, 'hamlet', 'public');
  const mark = ts.events.length;
  const res = await api.post('hamlet', 'users/me/subscriptions/properties', {
    subscription_data: [
      { stream_id: pub, property: 'is_muted', value: true },
      { stream_id: pub, property: 'color', value: '#123456' },
      { stream_id: pub, property: 'pin_to_top', value: true },
    ],
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/users/me/subscriptions/properties', 'post', res.body);
  const evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [e.event.property, e.event.value, e.users]),
    [
      ['in_home_view', false, [fx.users.hamlet!.id]],
      ['is_muted', true, [fx.users.hamlet!.id]],
      ['color', '#123456', [fx.users.hamlet!.id]],
      ['pin_to_top', true, [fx.users.hamlet!.id]],
    ],
  );
  const sub = (
    (await api.get('hamlet', 'users/me/subscriptions')).body.subscriptions as Record<
      string,
      unknown
    >[]
  )[0];
  t.match(sub, { is_muted: true, in_home_view: false, color: '#123456', pin_to_top: true });

  const prop = (who: string, c: Record<string, unknown>) =>
    api.post(who, 'users/me/subscriptions/properties', { subscription_data: [c] });
  assertError(
    t,
    await prop('hamlet', { stream_id: pub, property: 'nonsense', value: true }),
    'Unknown subscription property: nonsense',
  );
  assertError(
    t,
    await prop('hamlet', { stream_id: pub, property: 'pin_to_top', value: 'yes' }),
    'pin_to_top is not a boolean',
  );
  assertError(
    t,
    await prop('hamlet', { stream_id: pub, property: 'color', value: 'red' }),
    'color is not a valid hex color code',
  );
  assertError(
    t,
    await prop('othello', { stream_id: pub, property: 'pin_to_top', value: true }),
    `Not subscribed to channel ID ${pub}`,
  );
  assertError(
    t,
    await prop('hamlet', { stream_id: 9999, property: 'pin_to_top', value: true }),
    'Invalid channel ID',
  );
});

t.test('new users join the default channels', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const lobby = await createChannel(api, 'iago', 'lobby', { is_default_stream: true });
  const mark = ts.events.length;
  const created = await api.post('iago', 'users', {
    email: 'newbie@zulip.com',
    password: 'pw-123456',
    full_name: 'Newbie',
  });
  const newId = assertSuccess(t, created).user_id as number;
  const add = eventsSince(ts, mark).find(
    (e) => e.event.type === 'subscription' && e.event.op === 'add',
  )!;
  t.same(add.users, [newId]);
  t.same(
    (add.event.subscriptions as { stream_id: number }[]).map((s) => s.stream_id),
    [lobby],
  );
  const members = await api.get('iago', `streams/${lobby}/members`);
  t.ok((members.body.subscribers as number[]).includes(newId));
});

t.test('PATCH /users/me/subscriptions: add and delete together', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  await createChannel(api, 'hamlet', 'old');
  const res = await api.patch('hamlet', 'users/me/subscriptions', {
    add: [{ name: 'new', color: '#abcdef' }],
    delete: ['old'],
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/users/me/subscriptions', 'patch', res.body);
  t.same(res.body.subscribed, { [fx.users.hamlet!.id]: ['new'] });
  t.same(res.body.removed, ['old']);
  t.same(res.body.not_removed, []);
  const subs = (await api.get('hamlet', 'users/me/subscriptions')).body.subscriptions as {
    name: string;
    color: string;
  }[];
  t.same(
    subs.map((s) => [s.name, s.color]),
    [['new', '#abcdef']],
  );
  assertError(
    t,
    await api.patch('hamlet', 'users/me/subscriptions', {}),
    'Nothing to do. Specify at least one of "add" or "delete".',
  );
  // One transaction: a failing delete undoes the add.
  const failed = await api.patch('hamlet', 'users/me/subscriptions', {
    add: [{ name: 'third' }],
    delete: ['nowhere'],
  });
  assertError(t, failed, "Channel 'nowhere' does not exist", { code: 'STREAM_DOES_NOT_EXIST' });
  const all = await api.get('desdemona', 'streams', { include_all: true });
  t.notOk((all.body.streams as { name: string }[]).some((s) => s.name === 'third'));
});
