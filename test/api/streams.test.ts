/**
 * GET /streams (every flag), GET /streams/{id}, PATCH /streams/{id} (every parameter and its
 * rules), DELETE /streams/{id} (archiving), default channels and channel folders, with the events
 * each change sends and to whom.
 */
import t from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import {
  createChannel,
  eventsSince,
  setRealmSettings,
  systemGroupId,
} from '../helpers/channels.js';
import { seedChannelMessages } from '../helpers/messages.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';

const SPEC_EXTRA = [
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'topics_policy',
  'folder_id',
];

async function names(api: ApiClient, who: string, params: Record<string, unknown> = {}) {
  const res = await api.get(who, 'streams', params);
  if (res.status !== 200) throw new Error(res.text);
  return (res.body.streams as { name: string }[]).map((s) => s.name);
}

async function channel(api: ApiClient, who: string, id: number) {
  const res = await api.get(who, `streams/${id}`);
  return res.body.stream as Record<string, unknown>;
}

/** pub (hamlet), priv (iago + hamlet), hidden (iago), web (web-public), old (archived). */
async function setup(ts: TestServer) {
  const { api, fx } = ts;
  setRealmSettings(ts, { enable_spectator_access: true });
  const pub = await createChannel(api, 'hamlet', 'pub');
  const priv = await createChannel(api, 'iago', 'priv', {
    invite_only: true,
    principals: [fx.users.iago!.id, fx.users.hamlet!.id],
  });
  const hidden = await createChannel(api, 'iago', 'hidden', { invite_only: true });
  const web = await createChannel(api, 'desdemona', 'web', { is_web_public: true });
  const old = await createChannel(api, 'hamlet', 'old');
  assertSuccess(t, await api.delete('iago', `streams/${old}`));
  assertSuccess(t, await api.post('iago', 'default_streams', { stream_id: pub }));
  return { pub, priv, hidden, web, old };
}

t.test('GET /streams: each flag of the spec’s table', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  await setup(ts);

  const res = await api.get('hamlet', 'streams');
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/streams', 'get', res.body, { allowExtra: SPEC_EXTRA });
  t.same(await names(api, 'hamlet'), ['priv', 'pub', 'web'], 'public and subscribed');
  t.same(await names(api, 'hamlet', { include_public: false }), ['priv', 'pub']);
  t.same(await names(api, 'hamlet', { include_subscribed: false }), ['pub', 'web']);
  t.same(await names(api, 'hamlet', { include_public: false, include_subscribed: false }), []);
  t.same(
    await names(api, 'hamlet', {
      include_public: false,
      include_subscribed: false,
      include_web_public: true,
    }),
    ['web'],
  );
  t.same(await names(api, 'hamlet', { exclude_archived: false }), ['old', 'priv', 'pub', 'web']);
  t.same(await names(api, 'hamlet', { include_all: true }), ['priv', 'pub', 'web']);
  t.same(await names(api, 'iago', { include_all: true }), ['hidden', 'priv', 'pub', 'web']);
  t.same(await names(api, 'iago', { include_all_active: true }), ['hidden', 'priv', 'pub', 'web']);
  assertError(
    t,
    await api.get('hamlet', 'streams', { include_all_active: true }),
    'User not authorized for this query',
  );
  t.same(await names(api, 'cordelia', { include_can_access_content: true }), ['pub', 'web']);
  t.same(await names(api, 'hamlet', { include_can_access_content: true }), ['priv', 'pub', 'web']);
  // Guests: no public channels; web-public ones on request.
  t.same(await names(api, 'polonius'), []);
  t.same(await names(api, 'polonius', { include_web_public: true }), ['web']);
  const withDefault = await api.get('hamlet', 'streams', { include_default: true });
  assertMatchesOpenApi(t, '/streams', 'get', withDefault.body, { allowExtra: SPEC_EXTRA });
  t.same(
    (withDefault.body.streams as { name: string; is_default: boolean }[]).map((s) => [
      s.name,
      s.is_default,
    ]),
    [
      ['priv', false],
      ['pub', true],
      ['web', false],
    ],
  );
  t.notOk('is_default' in (res.body.streams as object[])[0]!, 'is_default only on request');
  assertError(
    t,
    await api.get('hamlet', 'streams', { include_all: 'yes' }),
    'include_all is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
});

t.test('GET /streams/{stream_id} and its members', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { pub, priv, hidden, old } = await setup(ts);
  const res = await api.get('cordelia', `streams/${pub}`);
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/streams/{stream_id}', 'get', res.body, { allowExtra: SPEC_EXTRA });
  t.match(res.body.stream, { stream_id: pub, name: 'pub', invite_only: false });
  for (const [who, id] of [
    ['cordelia', priv],
    ['hamlet', hidden],
    ['polonius', pub],
    ['hamlet', old],
    ['hamlet', 9999],
  ] as const) {
    const r = await api.get(who, `streams/${id}`);
    assertError(t, r, 'Invalid channel ID');
    assertMatchesOpenApi(t, '/streams/{stream_id}', 'get', r.body, { status: '400' });
  }
  t.equal((await channel(api, 'iago', hidden)).name, 'hidden', 'administrators know every channel');
  const members = await api.get('cordelia', `streams/${pub}/members`);
  assertMatchesOpenApi(t, '/streams/{stream_id}/members', 'get', members.body);
  t.same(members.body.subscribers, [fx.users.hamlet!.id]);
  assertError(t, await api.get('cordelia', `streams/${priv}/members`), 'Invalid channel ID');
  t.same(
    (await api.get('iago', `streams/${priv}/members`)).body.subscribers,
    [fx.users.iago!.id, fx.users.hamlet!.id].sort((a, b) => a - b),
  );
  assertError(t, await api.get('hamlet', 'streams/abc'), 'stream_id is not an integer');
});

t.test('PATCH: name and description', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { pub, priv } = await setup(ts);
  // The notification bot is a member of the realm too.
  const nonGuests = ['desdemona', 'iago', 'shiva', 'hamlet', 'othello', 'cordelia', 'prospero']
    .map((n) => fx.users[n]!.id)
    .concat(fx.notificationBotId)
    .sort((a, b) => a - b);

  let mark = ts.events.length;
  const res = await api.patch('hamlet', `streams/${pub}`, {
    new_name: 'Public square',
    description: 'Talk\nhere',
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/streams/{stream_id}', 'patch', res.body);
  t.match(await channel(api, 'hamlet', pub), {
    name: 'Public square',
    description: 'Talk here',
    rendered_description: '<p>Talk here</p>',
  });
  const evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => e.event),
    [
      {
        type: 'stream',
        op: 'update',
        stream_id: pub,
        name: 'pub',
        property: 'description',
        value: 'Talk here',
        rendered_description: '<p>Talk here</p>',
      },
      {
        type: 'stream',
        op: 'update',
        stream_id: pub,
        name: 'pub',
        property: 'name',
        value: 'Public square',
      },
    ],
  );
  for (const e of evs) t.same(e.users, nonGuests, 'to everyone who may know a public channel');

  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { new_name: 'Public square' }),
    'Channel already has that name.',
  );
  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { new_name: 'WEB' }),
    "Channel 'WEB' already exists",
    { code: 'CHANNEL_ALREADY_EXISTS' },
  );
  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { new_name: 'hidden' }),
    'Insufficient permission',
  );
  assertSuccess(
    t,
    await api.patch('hamlet', `streams/${pub}`, { new_name: 'PUBLIC SQUARE' }),
    'case only',
  );
  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { new_name: '' }),
    "Channel name can't be empty.",
  );
  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { description: 'x'.repeat(1025) }),
    'description is too long (limit: 1024 characters)',
  );

  // Private channel: the rename goes to those who know it only.
  mark = ts.events.length;
  assertSuccess(t, await api.patch('iago', `streams/${priv}`, { new_name: 'inner' }));
  t.same(
    eventsSince(ts, mark)[0]!.users,
    [fx.users.desdemona!.id, fx.users.iago!.id, fx.users.hamlet!.id].sort((a, b) => a - b),
  );

  // Who may administer: administrators, the channel's administrators (its creator); others not.
  assertError(
    t,
    await api.patch('cordelia', `streams/${pub}`, { description: 'mine' }),
    'You do not have permission to administer this channel.',
    { code: 'CANNOT_ADMINISTER_CHANNEL' },
  );
  assertError(
    t,
    await api.patch('cordelia', `streams/${priv}`, { description: 'mine' }),
    'Invalid channel ID',
  );
  assertError(
    t,
    await api.patch('iago', 'streams/9999', { description: 'x' }),
    'Invalid channel ID',
  );
  assertError(
    t,
    await api.patch('polonius', `streams/${pub}`, { description: 'x' }),
    'Invalid channel ID',
  );
});

t.test('PATCH: privacy, history and web-public rules', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => (n === 'bot' ? fx.notificationBotId : fx.users[n]!.id);
  const { pub, priv, hidden, web } = await setup(ts);

  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { history_public_to_subscribers: false }),
    'Invalid parameters',
  );
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, {
      is_private: false,
      history_public_to_subscribers: false,
    }),
    'Invalid parameters',
  );
  assertError(
    t,
    await api.patch('desdemona', `streams/${web}`, { is_private: true }),
    'Invalid parameters',
  );
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { is_private: true }),
    'A default channel cannot be private.',
  );
  assertSuccess(t, await api.delete('iago', 'default_streams', { stream_id: pub }));

  // Public → private: those who are not subscribed (and not administrators) lose it.
  let mark = ts.events.length;
  assertSuccess(t, await api.patch('hamlet', `streams/${pub}`, { is_private: true }));
  let evs = eventsSince(ts, mark);
  const lost = evs.find((e) => e.event.op === 'delete')!;
  t.same(
    lost.users,
    ['bot', 'shiva', 'othello', 'cordelia', 'prospero'].map(id).sort((a, b) => a - b),
  );
  const upd = evs.find((e) => e.event.op === 'update')!;
  t.same(upd.event, {
    type: 'stream',
    op: 'update',
    stream_id: pub,
    name: 'pub',
    property: 'invite_only',
    value: true,
    history_public_to_subscribers: false,
    is_web_public: false,
  });
  t.same(
    upd.users,
    ['desdemona', 'iago', 'hamlet'].map(id).sort((a, b) => a - b),
  );
  t.match(await channel(api, 'hamlet', pub), {
    invite_only: true,
    history_public_to_subscribers: false,
  });

  // Private → public: they learn it again, with its subscribers.
  mark = ts.events.length;
  assertSuccess(t, await api.patch('hamlet', `streams/${pub}`, { is_private: false }));
  evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [e.event.type, e.event.op, e.users]),
    [
      [
        'stream',
        'create',
        ['bot', 'shiva', 'othello', 'cordelia', 'prospero'].map(id).sort((a, b) => a - b),
      ],
      [
        'subscription',
        'peer_add',
        ['bot', 'shiva', 'othello', 'cordelia', 'prospero'].map(id).sort((a, b) => a - b),
      ],
      ['stream', 'update', ['desdemona', 'iago', 'hamlet'].map(id).sort((a, b) => a - b)],
      ['stream', 'update', ['desdemona', 'iago', 'hamlet'].map(id).sort((a, b) => a - b)],
    ],
  );
  t.same(evs[1]!.event.user_ids, [id('hamlet')]);

  // Private with shared history.
  assertSuccess(
    t,
    await api.patch('iago', `streams/${priv}`, { history_public_to_subscribers: true }),
  );
  t.equal((await channel(api, 'iago', priv)).history_public_to_subscribers, true);

  // An administrator not subscribed to a private channel may rename it, but not open it up.
  assertSuccess(t, await api.patch('desdemona', `streams/${hidden}`, { description: 'ok' }));
  assertError(
    t,
    await api.patch('desdemona', `streams/${hidden}`, { is_private: false }),
    'Channel content access is required.',
  );
  assertSuccess(
    t,
    await api.patch('iago', `streams/${hidden}`, { is_private: false }),
    'subscribed admin may',
  );

  // Web-public: owners only (realm default), when the realm allows spectators.
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { is_web_public: true }),
    'Insufficient permission',
  );
  assertSuccess(t, await api.patch('desdemona', `streams/${pub}`, { is_web_public: true }));
  t.equal((await channel(api, 'hamlet', pub)).is_web_public, true);
  setRealmSettings(ts, { enable_spectator_access: false });
  assertError(
    t,
    await api.patch('desdemona', `streams/${hidden}`, { is_web_public: true }),
    'Web-public channels are not enabled.',
  );

  // Who may make channels private or public: the realm's creation policies.
  setRealmSettings(ts, {
    can_create_private_channel_group: systemGroupId(ts, 'role:administrators'),
  });
  const mine = await createChannel(api, 'hamlet', 'mine');
  assertError(
    t,
    await api.patch('hamlet', `streams/${mine}`, { is_private: true }),
    'Insufficient permission',
  );
  assertError(
    t,
    await api.patch('hamlet', `streams/${mine}`, { is_private: 'yes' }),
    'is_private is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
});

t.test('PATCH: default channel, retention, folder, topics policy, archive state', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { pub, priv, old } = await setup(ts);

  // Default channel membership.
  let mark = ts.events.length;
  assertSuccess(t, await api.patch('iago', `streams/${pub}`, { is_default_stream: false }));
  const ev = eventsSince(ts, mark)[0]!;
  t.same(ev.event, { type: 'default_streams', default_streams: [] });
  t.notOk(ev.users.includes(fx.users.polonius!.id));
  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { is_default_stream: true }),
    'You do not have permission to change default channels.',
    { code: 'CANNOT_MANAGE_DEFAULT_CHANNEL' },
  );
  assertError(
    t,
    await api.patch('iago', `streams/${priv}`, { is_default_stream: true }),
    'A default channel cannot be private.',
  );

  // Retention: owners only.
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { message_retention_days: 5 }),
    'Must be an organization owner',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  for (const [value, stored] of [
    [5, 5],
    ['unlimited', -1],
    ['realm_default', null],
  ] as const) {
    assertSuccess(
      t,
      await api.patch('desdemona', `streams/${pub}`, { message_retention_days: value }),
    );
    t.equal(
      (await channel(api, 'hamlet', pub)).message_retention_days,
      stored,
      `retention ${value}`,
    );
  }
  assertError(
    t,
    await api.patch('desdemona', `streams/${pub}`, { message_retention_days: 'soon' }),
    "Bad value for 'message_retention_days': soon",
    { code: 'REQUEST_VARIABLE_INVALID' },
  );

  // Folders.
  assertError(
    t,
    await api.post('hamlet', 'channel_folders/create', { name: 'Frontend' }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  const folder = assertSuccess(
    t,
    await api.post('iago', 'channel_folders/create', { name: 'Frontend', description: 'UI' }),
  ).channel_folder_id as number;
  const folders = await api.get('hamlet', 'channel_folders');
  t.match(folders.body.channel_folders, [
    { id: folder, name: 'Frontend', rendered_description: '<p>UI</p>' },
  ]);
  assertSuccess(t, await api.patch('hamlet', `streams/${pub}`, { folder_id: folder }));
  t.equal((await channel(api, 'hamlet', pub)).folder_id, folder);
  assertSuccess(t, await api.patch('hamlet', `streams/${pub}`, { folder_id: null }));
  t.equal((await channel(api, 'hamlet', pub)).folder_id, null);
  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { folder_id: 999 }),
    'Invalid channel folder ID',
  );

  // topics_policy: can_set_topics_policy_group (moderators by default) and the channel's admins.
  assertError(
    t,
    await api.patch('hamlet', `streams/${pub}`, { topics_policy: 'disable_empty_topic' }),
    'Insufficient permission',
  );
  assertError(
    t,
    await api.patch('shiva', `streams/${pub}`, { topics_policy: 'disable_empty_topic' }),
    'You do not have permission to administer this channel.',
    { code: 'CANNOT_ADMINISTER_CHANNEL' },
  );
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, { topics_policy: 'disable_empty_topic' }),
  );
  t.equal((await channel(api, 'hamlet', pub)).topics_policy, 'disable_empty_topic');
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { topics_policy: 'sometimes' }),
    'Invalid topics_policy',
  );
  // Messages the current policies would refuse: written through the store.
  seedChannelMessages(ts, {
    senderId: fx.users.hamlet!.id,
    streamId: pub,
    topic: '',
    count: 1,
    recipients: [],
  });
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, { topics_policy: 'empty_topic_only' }),
    'only the empty topic so far',
  );
  seedChannelMessages(ts, {
    senderId: fx.users.hamlet!.id,
    streamId: pub,
    topic: 'lunch',
    count: 1,
    recipients: [],
  });
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { topics_policy: 'empty_topic_only' }),
    'To enable this configuration, all messages in this channel must be in the "general chat" topic. Consider renaming or deleting other topics.',
  );
  t.match(await channel(api, 'hamlet', pub), { first_message_id: Number });

  // Archive state: only unarchiving.
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { is_archived: false }),
    'Channel is not currently deactivated',
  );
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { is_archived: true }),
    'Channels are archived with DELETE /streams/{stream_id}, not updated.',
  );
  mark = ts.events.length;
  assertSuccess(t, await api.patch('iago', `streams/${old}`, { is_archived: false }));
  const evs = eventsSince(ts, mark);
  t.same(
    evs.map((e) => [
      e.event.type,
      e.event.op,
      e.event.property ?? null,
      e.event.for_unarchiving ?? null,
    ]),
    [
      ['stream', 'create', null, true],
      ['stream', 'update', 'is_archived', null],
    ],
  );
  t.equal((await channel(api, 'hamlet', old)).is_archived, false);
});

t.test('PATCH: group-setting parameters as {new, old}', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { pub, hidden } = await setup(ts);
  const admins = systemGroupId(ts, 'role:administrators');
  const moderators = systemGroupId(ts, 'role:moderators');
  const members = systemGroupId(ts, 'role:members');

  let mark = ts.events.length;
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, {
      can_remove_subscribers_group: { new: moderators, old: admins },
      can_send_message_group: {
        new: { direct_members: [fx.users.hamlet!.id], direct_subgroups: [admins] },
      },
    }),
  );
  t.same(
    eventsSince(ts, mark).map((e) => [e.event.property, e.event.value]),
    [
      ['can_remove_subscribers_group', moderators],
      [
        'can_send_message_group',
        { direct_members: [fx.users.hamlet!.id], direct_subgroups: [admins] },
      ],
    ],
  );
  t.match(await channel(api, 'hamlet', pub), {
    can_remove_subscribers_group: moderators,
    can_send_message_group: { direct_members: [fx.users.hamlet!.id], direct_subgroups: [admins] },
    stream_post_policy: 1,
  });
  const wrongOld = await api.patch('iago', `streams/${pub}`, {
    can_remove_subscribers_group: { new: members, old: admins },
  });
  assertError(t, wrongOld, "'old' value does not match the expected value.", {
    code: 'EXPECTATION_MISMATCH',
  });
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, {
      can_send_message_group: {
        new: admins,
        old: { direct_members: [fx.users.hamlet!.id], direct_subgroups: [admins] },
      },
    }),
  );
  t.match(await channel(api, 'hamlet', pub), { stream_post_policy: 2, is_announcement_only: true });
  // An unchanged value is no change (no event).
  mark = ts.events.length;
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, { can_send_message_group: { new: admins } }),
  );
  t.equal(ts.events.length, mark);

  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, {
      can_subscribe_group: { new: systemGroupId(ts, 'role:everyone') },
    }),
    "'can_subscribe_group' setting cannot be set to 'role:everyone' group.",
  );
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { can_subscribe_group: { old: admins } }),
    'Invalid can_subscribe_group["new"]',
  );
  assertError(
    t,
    await api.patch('iago', `streams/${pub}`, { can_subscribe_group: 7 }),
    'can_subscribe_group is not a dict',
  );

  // Settings that grant content access need content access to change, even for administrators.
  assertError(
    t,
    await api.patch('desdemona', `streams/${hidden}`, { can_subscribe_group: { new: moderators } }),
    'Channel content access is required.',
  );
  assertSuccess(
    t,
    await api.patch('desdemona', `streams/${hidden}`, {
      can_send_message_group: { new: moderators },
    }),
  );

  // A channel administrator who is a member.
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, { can_administer_channel_group: { new: members } }),
  );
  assertSuccess(t, await api.patch('cordelia', `streams/${pub}`, { description: 'by cordelia' }));
  // Channel-level delete permissions: can_set_delete_message_policy_group (moderators).
  assertError(
    t,
    await api.patch('cordelia', `streams/${pub}`, {
      can_delete_any_message_group: { new: moderators },
    }),
    'Insufficient permission',
  );
  assertSuccess(
    t,
    await api.patch('shiva', `streams/${pub}`, {
      can_delete_any_message_group: { new: moderators },
    }),
  );
});

t.test('DELETE /streams/{stream_id} archives', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { pub, priv } = await setup(ts);
  assertError(
    t,
    await api.delete('cordelia', `streams/${pub}`),
    'You do not have permission to administer this channel.',
    { code: 'CANNOT_ADMINISTER_CHANNEL' },
  );
  assertError(t, await api.delete('cordelia', `streams/${priv}`), 'Invalid channel ID');
  assertError(t, await api.delete('iago', 'streams/9999'), 'Invalid channel ID');
  const mark = ts.events.length;
  const res = await api.delete('iago', `streams/${priv}`);
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/streams/{stream_id}', 'delete', res.body);
  const knowers = [fx.users.desdemona!.id, fx.users.iago!.id, fx.users.hamlet!.id].sort(
    (a, b) => a - b,
  );
  t.same(eventsSince(ts, mark), [
    {
      event: {
        type: 'stream',
        op: 'delete',
        streams: [{ stream_id: priv }],
        stream_ids: [priv],
        for_archiving: true,
      },
      users: knowers,
    },
    {
      event: {
        type: 'stream',
        op: 'update',
        stream_id: priv,
        name: 'priv',
        property: 'is_archived',
        value: true,
      },
      users: knowers,
    },
  ]);
  assertError(t, await api.delete('iago', `streams/${priv}`), 'Channel is already deactivated');
  t.notOk((await names(api, 'hamlet')).includes('priv'));
  t.ok((await names(api, 'hamlet', { exclude_archived: false })).includes('priv'));
  // Archiving a default channel removes it from the defaults.
  const before = ts.events.length;
  assertSuccess(t, await api.delete('iago', `streams/${pub}`));
  t.same(
    eventsSince(ts, before).find((e) => e.event.type === 'default_streams')?.event.default_streams,
    [],
  );
  // Subscriptions survive archiving (and can still be changed).
  const subs = await api.get('hamlet', 'users/me/subscriptions');
  t.same(
    (subs.body.subscriptions as { name: string }[]).map((s) => s.name),
    [],
    'archived ones are not listed',
  );
  const left = await api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['priv'] });
  t.same(assertSuccess(t, left).removed, ['priv']);
});

t.test('default channels endpoints', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const { pub, priv } = await setup(ts);
  assertError(
    t,
    await api.post('hamlet', 'default_streams', { stream_id: pub }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await api.post('iago', 'default_streams', { stream_id: priv }),
    'Private channels cannot be made default.',
  );
  assertError(
    t,
    await api.post('iago', 'default_streams', { stream_id: 9999 }),
    'Invalid channel ID',
  );
  assertError(t, await api.post('iago', 'default_streams', {}), "Missing 'stream_id' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertSuccess(t, await api.delete('iago', 'default_streams', { stream_id: pub }));
  const listed = await api.get('hamlet', 'streams', { include_default: true });
  t.notOk((listed.body.streams as { is_default: boolean }[]).some((s) => s.is_default));
});

t.test('first_message_id and is_recently_active follow sends, moves and deletions', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const a = await createChannel(api, 'iago', 'alpha');
  const b = await createChannel(api, 'iago', 'beta');
  const firstOf = async (id: number) => {
    const { body } = await register(t, api, 'iago', { fetch_event_types: '["subscription"]' });
    const sub = (
      body.subscriptions as { stream_id: number; first_message_id: number | null }[]
    ).find((s) => s.stream_id === id)!;
    t.same((await channel(api, 'iago', id)).first_message_id, sub.first_message_id, 'both agree');
    return sub.first_message_id;
  };
  // Asked before any message (remembered), then after the first one.
  t.equal(await firstOf(a), null);
  t.equal(await firstOf(b), null);
  const send = async (to: number, topic: string) =>
    assertSuccess(
      t,
      await api.post('iago', 'messages', { type: 'stream', to, topic, content: 'x' }),
    ).id as number;
  const m1 = await send(a, 'one');
  const m2 = await send(a, 'two');
  t.equal(await firstOf(a), m1, 'the first message');
  t.equal((await channel(api, 'iago', a)).is_recently_active, true);
  // Topic "one" moved to beta: each channel's first message changes.
  assertSuccess(
    t,
    await api.patch('iago', `messages/${m1}`, { stream_id: b, propagate_mode: 'change_all' }),
  );
  t.equal(await firstOf(b), m1, 'moved in');
  t.ok((await firstOf(a))! > m1, 'moved out');
  // Deleted: the next one is first, then none.
  assertSuccess(t, await api.delete('iago', `messages/${m1}`));
  const afterDelete = await firstOf(b);
  t.ok(afterDelete === null || afterDelete > m1, 'deleted');
  assertSuccess(t, await api.delete('iago', `messages/${m2}`));
  t.not(await firstOf(a), m2);
});

t.test("register's channel lists follow renames, descriptions and permissions", async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const id = await createChannel(api, 'iago', 'gamma');
  const listed = async () => {
    const { body } = await register(t, api, 'hamlet');
    type Entry = { stream_id: number } & Record<string, unknown>;
    const inStreams = (body.streams as Entry[]).find((s) => s.stream_id === id)!;
    const never = (body.never_subscribed as Entry[]).find((s) => s.stream_id === id)!;
    t.same(inStreams, never, 'the same channel in both lists');
    return never;
  };
  t.match(await listed(), { name: 'gamma', description: '' });
  assertSuccess(t, await api.patch('iago', `streams/${id}`, { new_name: 'delta' }));
  t.match(await listed(), { name: 'delta' });
  assertSuccess(t, await api.patch('iago', `streams/${id}`, { description: 'Greek letters' }));
  t.match(await listed(), { description: 'Greek letters' });
  const admins = ts.server.context.realms
    .get(ts.fx.realmId)!
    .view.systemGroupId('role:administrators');
  assertSuccess(
    t,
    await api.patch('iago', `streams/${id}`, {
      can_send_message_group: JSON.stringify({ new: admins }),
    }),
  );
  t.match(await listed(), { can_send_message_group: admins, stream_post_policy: 2 });
});
