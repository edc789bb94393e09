/**
 * POST /messages/flags and POST /messages/flags/narrow: editable flags, only real changes
 * counted, historical rows, unread only in subscribed channels, the update_message_flags event,
 * and paging a large range in bounded batches. Reference: zerver/tests/test_message_flags.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { seedChannelMessages, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test('POST /messages/flags', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const store = ts.server.store;
  const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number];
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const m1 = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'one');
  const m2 = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'two @**Othello**');
  const dm = await sendDirectMessage(api, 'hamlet', [othello], 'dm');
  const q = await register(t, api, 'othello', {
    event_types: ['update_message_flags'],
    client_capabilities: { empty_topic_name: true },
  });

  const flags = (who: string, messages: number[], op: string, flag: string) =>
    api.post(who, 'messages/flags', { messages, op, flag });
  let res = await flags('othello', [m1, m2, dm], 'add', 'read');
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/flags', 'post', body);
  t.same(body.messages, [m1, m2, dm]);
  t.equal(store.messages.userFlags(othello, m1)! & 1, 1);
  res = await flags('othello', [m1, m2], 'add', 'read');
  assertSuccess(t, res);
  res = await flags('othello', [m2], 'remove', 'read');
  t.same(assertSuccess(t, res).ignored_because_not_subscribed_channels, []);
  assertSuccess(t, await flags('othello', [m1], 'add', 'starred'));
  assertSuccess(t, await flags('othello', [m1], 'remove', 'starred'));
  assertSuccess(t, await flags('othello', [m1], 'add', 'collapsed'));

  const evs = await events(t, api, 'othello', q.queue_id, -1, true);
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });
  t.match(evs[0], {
    type: 'update_message_flags',
    op: 'add',
    operation: 'add',
    flag: 'read',
    messages: [m1, m2, dm],
    all: false,
  });
  t.same(evs[1]!.messages, [], 'nothing changed the second time');
  t.match(evs[2], {
    op: 'remove',
    flag: 'read',
    messages: [m2],
    message_details: {
      [m2]: { type: 'stream', topic: 'T', mentioned: true, unmuted_stream_msg: true },
    },
  });
  t.match(evs[3], { op: 'add', flag: 'starred', messages: [m1] });
  t.match(evs[4], { op: 'remove', flag: 'starred', messages: [m1] });

  assertError(t, await flags('othello', [m1], 'add', 'foo'), "Invalid flag: 'foo'");
  assertError(t, await flags('othello', [m1], 'add', 'is_private'), "Invalid flag: 'is_private'");
  assertError(
    t,
    await flags('othello', [m1], 'add', 'mentioned'),
    "Flag not editable: 'mentioned'",
  );
  assertError(
    t,
    await flags('othello', [m1], 'add', 'historical'),
    "Flag not editable: 'historical'",
  );
  assertError(
    t,
    await flags('othello', [m1], 'toggle', 'read'),
    "Invalid message flag operation: 'toggle'",
  );
  assertError(
    t,
    await api.post('othello', 'messages/flags', { messages: 'x', op: 'add', flag: 'read' }),
    'messages is not valid JSON',
    { code: 'INVALID_JSON' },
  );

  // Messages the user never received: starring a readable one makes it part of their history.
  await createChannel(api, 'iago', 'Denmark');
  const d1 = await sendChannelMessage(api, 'iago', 'Denmark', 'x', 'history');
  t.equal(store.messages.userFlags(cordelia, d1), undefined);
  assertSuccess(t, await flags('cordelia', [d1], 'add', 'starred'));
  t.equal(store.messages.userFlags(cordelia, d1), 1 | 2 | 256, 'read, starred, historical');
  assertSuccess(t, await flags('cordelia', [d1], 'add', 'read'), 'already read: no change');
  // Marking unread is only for subscribed channels.
  const ignored = await flags('cordelia', [d1], 'remove', 'read');
  t.same(assertSuccess(t, ignored).ignored_because_not_subscribed_channels, [
    store.messages.byId(d1)!.stream_id,
  ]);
  t.equal(store.messages.userFlags(cordelia, d1)! & 1, 1, 'still read');
  // A message the user cannot read, or that does not exist.
  assertError(t, await flags('cordelia', [dm], 'add', 'starred'), 'Invalid message(s)');
  assertError(t, await flags('cordelia', [99999], 'add', 'starred'), 'Invalid message(s)');
  assertSuccess(
    t,
    await flags('cordelia', [99999], 'add', 'read'),
    'reading the unreadable changes nothing',
  );
});

t.test('POST /messages/flags/narrow: ranges, paging, bounded batches', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const ch = await createChannel(api, 'hamlet', 'big', { principals: [hamlet, othello] });
  const ids = seedChannelMessages(ts, {
    senderId: othello,
    streamId: ch,
    topic: 'bulk',
    count: 6500,
    recipients: [hamlet, othello],
  });
  const other = await sendChannelMessage(api, 'othello', 'big', 'elsewhere', 'not in the narrow');
  const q = await register(t, api, 'hamlet', { event_types: ['update_message_flags'] });
  const narrow = [
    { operator: 'channel', operand: ch },
    { operator: 'topic', operand: 'bulk' },
  ];
  const mark = (params: Record<string, unknown>) =>
    api.post('hamlet', 'messages/flags/narrow', { narrow, op: 'add', flag: 'read', ...params });

  let res = await mark({ anchor: 'oldest', num_before: 0, num_after: 10_000 });
  let body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/flags/narrow', 'post', body);
  t.match(
    body,
    {
      processed_count: 5000,
      updated_count: 5000,
      first_processed_id: ids[0],
      last_processed_id: ids[4999],
      found_oldest: true,
      found_newest: false,
    },
    'the range is capped at 5000',
  );
  const evs = await events(t, api, 'hamlet', q.queue_id, -1, true);
  t.equal(evs.length, 5, 'updated in five transactions of at most 1000 messages');
  t.ok(evs.every((e) => (e.messages as number[]).length === 1000));

  res = await mark({
    anchor: String(body.last_processed_id),
    include_anchor: false,
    num_before: 0,
    num_after: 10_000,
  });
  body = assertSuccess(t, res);
  t.match(body, {
    processed_count: 1500,
    updated_count: 1500,
    first_processed_id: ids[5000],
    last_processed_id: ids[6499],
    found_newest: true,
  });

  res = await mark({ anchor: 'newest', num_before: 100, num_after: 0 });
  t.match(
    assertSuccess(t, res),
    { processed_count: 100, updated_count: 0, found_oldest: false, found_newest: true },
    'only real changes count',
  );
  t.equal(
    ts.server.store.messages.userFlags(hamlet, other)! & 1,
    0,
    'outside the narrow: untouched',
  );

  // is:unread narrows, first_unread anchors, removal.
  res = await api.post('hamlet', 'messages/flags/narrow', {
    narrow: [],
    op: 'remove',
    flag: 'read',
    anchor: String(ids[10]),
    num_before: 5,
    num_after: 5,
  });
  t.match(assertSuccess(t, res), {
    processed_count: 11,
    updated_count: 11,
    first_processed_id: ids[5],
    last_processed_id: ids[15],
  });
  res = await api.post('hamlet', 'messages/flags/narrow', {
    narrow: [['is', 'unread']],
    op: 'add',
    flag: 'starred',
    anchor: 'first_unread',
    num_before: 0,
    num_after: 100,
  });
  t.match(assertSuccess(t, res), {
    processed_count: 12,
    updated_count: 12,
    first_processed_id: ids[5],
    last_processed_id: other,
  });
  res = await api.post('hamlet', 'messages/flags/narrow', {
    narrow: [],
    op: 'add',
    flag: 'starred',
    anchor: 'newest',
    num_before: 0,
    num_after: 0,
  });
  t.match(assertSuccess(t, res), {
    processed_count: 0,
    updated_count: 0,
    first_processed_id: null,
    last_processed_id: null,
  });

  const bad = (params: Record<string, unknown>) =>
    api.post('hamlet', 'messages/flags/narrow', {
      narrow: [],
      op: 'add',
      flag: 'read',
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      ...params,
    });
  assertError(t, await bad({ anchor: 'sometime' }), 'Invalid anchor');
  assertError(
    t,
    await bad({ anchor: '5', num_after: 1, include_anchor: false }),
    'The anchor can only be excluded at an end of the range',
  );
  assertError(t, await bad({ flag: 'mentioned' }), "Flag not editable: 'mentioned'");
  assertError(
    t,
    await bad({ narrow: [['nope', 'x']] }),
    'Invalid narrow operator: unknown operator nope',
    { code: 'BAD_NARROW' },
  );
  assertError(
    t,
    await api.post('hamlet', 'messages/flags/narrow', {
      narrow: [],
      op: 'add',
      flag: 'read',
      anchor: 'newest',
      num_before: 1,
    }),
    "Missing 'num_after' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
});
