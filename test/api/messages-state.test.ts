/**
 * The message area's part of POST /register (`max_message_id`, `unread_msgs` with its 50,000
 * cap, `starred_messages`, `recent_private_conversations`), GET /users/me `max_message_id`, and
 * how the register's `narrow` and `all_public_streams` filter message events.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { seedChannelMessages, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';

const MESSAGE_TYPES = [
  'message',
  'update_message_flags',
  'starred_messages',
  'recent_private_conversations',
];

t.test('unread_msgs, starred_messages, recent_private_conversations, max_message_id', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number];
  let reg = await register(t, api, 'othello', { fetch_event_types: MESSAGE_TYPES });
  t.equal(reg.body.max_message_id, -1, 'no messages yet');
  t.same(reg.body.unread_msgs, {
    count: 0,
    pms: [],
    streams: [],
    huddles: [],
    mentions: [],
    old_unreads_missing: false,
  });
  t.equal((await api.get('othello', 'users/me')).body.max_message_id, -1);

  const verona = await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const muted = await createChannel(api, 'hamlet', 'Muted', { principals: [hamlet, othello] });
  const a = await sendChannelMessage(api, 'hamlet', 'Verona', 'lunch', 'a');
  const b = await sendChannelMessage(api, 'hamlet', 'Verona', 'Lunch', 'b @**Othello**');
  const c = await sendChannelMessage(api, 'hamlet', 'Verona', '', 'c');
  const d = await sendChannelMessage(api, 'hamlet', 'Muted', 'x', 'd @**all**');
  const e = await sendDirectMessage(api, 'hamlet', [othello], 'e');
  const f = await sendDirectMessage(api, 'hamlet', [othello, cordelia], 'f');
  const g = await sendDirectMessage(api, 'othello', [othello], 'g', { read_by_sender: false });
  assertSuccess(
    t,
    await api.post('othello', 'users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: muted, property: 'is_muted', value: true }],
    }),
  );
  assertSuccess(
    t,
    await api.post('othello', 'messages/flags', { messages: [a], op: 'add', flag: 'starred' }),
  );

  reg = await register(t, api, 'othello', { fetch_event_types: MESSAGE_TYPES });
  assertMatchesOpenApi(t, '/register', 'post', reg.body, { allowExtra: REGISTER_SPEC_EXTRAS });
  t.equal(reg.body.max_message_id, g);
  t.same(reg.body.starred_messages, [a]);
  t.same(
    reg.body.unread_msgs,
    {
      count: 6,
      pms: [
        { other_user_id: hamlet, sender_id: hamlet, unread_message_ids: [e] },
        { other_user_id: othello, sender_id: othello, unread_message_ids: [g] },
      ].sort((x, y) => x.other_user_id - y.other_user_id),
      streams: [
        { stream_id: verona, topic: 'general chat', unread_message_ids: [c] },
        { stream_id: verona, topic: 'lunch', unread_message_ids: [a, b] },
        { stream_id: muted, topic: 'x', unread_message_ids: [d] },
      ],
      huddles: [
        {
          user_ids_string: [hamlet, othello, cordelia].sort((x, y) => x - y).join(','),
          unread_message_ids: [f],
        },
      ],
      mentions: [b],
      old_unreads_missing: false,
    },
    'muted channel not counted; its wildcard mention not listed',
  );
  t.same(reg.body.recent_private_conversations, [
    { max_message_id: g, user_ids: [] },
    { max_message_id: f, user_ids: [hamlet, cordelia].sort((x, y) => x - y) },
    { max_message_id: e, user_ids: [hamlet] },
  ]);
  t.equal((await api.get('othello', 'users/me')).body.max_message_id, g);

  const withEmpty = await register(t, api, 'othello', {
    fetch_event_types: ['message', 'update_message_flags'],
    client_capabilities: { empty_topic_name: true },
  });
  t.equal((withEmpty.body.unread_msgs as { streams: { topic: string }[] }).streams[0]!.topic, '');
  const onlyMessage = await register(t, api, 'othello', { fetch_event_types: ['message'] });
  t.notOk(
    'unread_msgs' in onlyMessage.body,
    'unread_msgs needs both message and update_message_flags',
  );
  t.ok('max_message_id' in onlyMessage.body);

  // Unsubscribing hides a channel's unread messages.
  assertSuccess(
    t,
    await api.delete('othello', 'users/me/subscriptions', { subscriptions: ['Verona'] }),
  );
  reg = await register(t, api, 'othello', {
    fetch_event_types: ['message', 'update_message_flags'],
  });
  t.same(
    (reg.body.unread_msgs as { streams: { stream_id: number }[] }).streams.map((s) => s.stream_id),
    [muted],
  );
});

t.test('the 50,000 newest unread messages', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const ch = await createChannel(api, 'hamlet', 'flood');
  const ids = seedChannelMessages(ts, {
    senderId: hamlet,
    streamId: ch,
    topic: 't',
    count: 50_001,
    recipients: [hamlet],
  });
  const reg = await register(t, api, 'hamlet', {
    fetch_event_types: ['message', 'update_message_flags'],
  });
  const unread = reg.body.unread_msgs as {
    count: number;
    old_unreads_missing: boolean;
    streams: { unread_message_ids: number[] }[];
  };
  t.equal(unread.count, 50_000);
  t.equal(unread.old_unreads_missing, true);
  t.equal(unread.streams[0]!.unread_message_ids[0], ids[1], 'the oldest one is left out');
  assertSuccess(
    t,
    await api.post('hamlet', 'messages/flags', { messages: [ids[2]], op: 'add', flag: 'read' }),
  );
  const again = await register(t, api, 'hamlet', {
    fetch_event_types: ['message', 'update_message_flags'],
  });
  t.match(again.body.unread_msgs, { count: 50_000, old_unreads_missing: true });
});

t.test('the register narrow and all_public_streams filter message events', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  await createChannel(api, 'hamlet', 'Denmark', { principals: [hamlet, othello] });
  await createChannel(api, 'iago', 'Elsewhere');
  await createChannel(api, 'iago', 'hidden', { invite_only: true });
  const onlyVerona = await register(t, api, 'othello', {
    event_types: ['message'],
    narrow: [['channel', 'Verona']],
  });
  const onlyDms = await register(t, api, 'othello', {
    event_types: ['message'],
    narrow: [['is', 'dm']],
  });
  const publicAll = await register(t, api, 'cordelia', {
    event_types: ['message'],
    all_public_streams: true,
  });
  const v = await sendChannelMessage(api, 'hamlet', 'Verona', 'x', 'v');
  const dk = await sendChannelMessage(api, 'hamlet', 'Denmark', 'x', 'd');
  const dm = await sendDirectMessage(api, 'hamlet', [othello], 'dm');
  const el = await sendChannelMessage(api, 'iago', 'Elsewhere', 'x', 'e');
  await sendChannelMessage(api, 'iago', 'hidden', 'x', 'private');
  t.same(
    (await events(t, api, 'othello', onlyVerona.queue_id, -1, true)).map(
      (e) => (e.message as { id: number }).id,
    ),
    [v],
  );
  t.same(
    (await events(t, api, 'othello', onlyDms.queue_id, -1, true)).map(
      (e) => (e.message as { id: number }).id,
    ),
    [dm],
  );
  const pub = await events(t, api, 'cordelia', publicAll.queue_id, -1, true);
  t.same(
    pub.map((e) => (e.message as { id: number }).id).sort((a, b) => a - b),
    [v, dk, el].sort((a, b) => a - b),
    'public channels, not the private one, not direct messages',
  );
  t.same(pub[0]!.flags, []);
});

t.test('GET /users/me max_message_id follows sends, deletions and moves', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello, iago] = ['hamlet', 'othello', 'iago'].map((n) => fx.users[n]!.id) as [
    number,
    number,
    number,
  ];
  const maxOf = async (who: string) =>
    (await api.get(who, 'users/me')).body.max_message_id as number;
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const secret = await createChannel(api, 'hamlet', 'Secret', {
    principals: [hamlet, iago],
    invite_only: true,
    history_public_to_subscribers: false,
  });
  const e = await sendDirectMessage(api, 'hamlet', [othello], 'e');
  t.equal(await maxOf('othello'), e, 'a direct message');
  t.equal(await maxOf('othello'), e, 'asked again');
  const iagoBefore = await maxOf('iago');

  const p = await sendChannelMessage(api, 'hamlet', 'Verona', 'plans', 'p');
  t.equal(await maxOf('othello'), p, 'a channel message after it');
  assertSuccess(t, await api.delete('iago', `messages/${p}`));
  t.equal(await maxOf('othello'), e, 'the deleted message no longer counts');

  const q = await sendChannelMessage(api, 'hamlet', 'Verona', 'plans', 'q');
  t.equal(await maxOf('othello'), q);
  t.equal(await maxOf('iago'), iagoBefore, 'iago is not in Verona');
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${q}`, {
      stream_id: secret,
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: false,
    }),
  );
  t.equal(await maxOf('othello'), e, 'moved where othello cannot see it');
  t.equal(await maxOf('iago'), q, 'moved into a channel with protected history: iago received it');
});
