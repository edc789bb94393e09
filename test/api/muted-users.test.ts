/**
 * Muted users: POST/DELETE /users/me/muted_users/{id}, the `muted_users` event and register
 * field, messages from a muted user arriving read, muting marking their messages read (in
 * batches); the legacy PATCH /users/me/subscriptions/muted_topics. Reference:
 * zerver/tests/test_muted_users.py, test_muting.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, eventsSince } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { seedChannelMessages, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { READ_BATCH } from '../../src/mutations/reading.js';

const READ = 1;

t.test('muting and unmuting users', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const store = ts.server.store;
  const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number];
  await createChannel(api, 'hamlet', 'general', { principals: [hamlet, othello, cordelia] });
  // Cordelia's messages before the mute.
  const s1 = await sendChannelMessage(api, 'cordelia', 'general', 'chat', 'old spam');
  const g1 = await sendDirectMessage(api, 'cordelia', [hamlet, othello], 'old group spam');
  const p1 = await sendDirectMessage(api, 'cordelia', [hamlet], 'old direct spam');
  const fromOthello = await sendChannelMessage(api, 'othello', 'general', 'chat', 'not muted');
  const unread = (who: number, id: number) => (store.messages.userFlags(who, id)! & READ) === 0;
  t.ok([s1, g1, p1].every((id) => unread(hamlet, id)));

  const q = await register(t, api, 'hamlet', {
    event_types: ['muted_users', 'update_message_flags'],
  });
  t.same(q.body.muted_users, [], 'nobody muted yet');
  const qOthello = await register(t, api, 'othello', {
    event_types: ['muted_users', 'update_message_flags'],
  });

  const from = ts.events.length;
  const before = Math.floor(Date.now() / 1000);
  let res = await api.post('hamlet', `users/me/muted_users/${cordelia}`);
  assertMatchesOpenApi(t, '/users/me/muted_users/{muted_user_id}', 'post', assertSuccess(t, res));
  t.ok(
    [s1, g1, p1].every((id) => !unread(hamlet, id)),
    'their messages are read for hamlet',
  );
  t.ok(unread(hamlet, fromOthello), "others' messages untouched");
  t.ok(unread(othello, s1) && unread(othello, g1), 'still unread for othello');

  const evs = await events(t, api, 'hamlet', q.queue_id, -1, true);
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });
  t.match(evs[0], {
    type: 'update_message_flags',
    op: 'add',
    flag: 'read',
    messages: [s1, g1, p1],
  });
  t.equal(evs[1]!.type, 'muted_users');
  const list = evs[1]!.muted_users as { id: number; timestamp: number }[];
  t.equal(list.length, 1);
  t.equal(list[0]!.id, cordelia);
  t.ok(list[0]!.timestamp >= before && list[0]!.timestamp <= Math.floor(Date.now() / 1000) + 1);
  t.ok(
    eventsSince(ts, from).every((e) => e.users.join() === String(hamlet)),
    'nobody else hears of it',
  );
  t.same(await events(t, api, 'othello', qOthello.queue_id, -1, true), []);

  // The register snapshot.
  const again = await register(t, api, 'hamlet', { fetch_event_types: ['muted_users'] });
  t.same(again.body.muted_users, list);
  assertMatchesOpenApi(t, '/register', 'post', again.body);

  // New messages from cordelia arrive read for hamlet only.
  const s2 = await sendChannelMessage(api, 'cordelia', 'general', 'chat', 'new spam');
  const g2 = await sendDirectMessage(api, 'cordelia', [hamlet, othello], 'new group spam');
  const p2 = await sendDirectMessage(api, 'cordelia', [hamlet], 'new direct spam');
  const p3 = await sendDirectMessage(api, 'cordelia', [othello], 'to othello');
  t.ok(
    [s2, g2, p2].every((id) => !unread(hamlet, id)),
    'arrive read for hamlet',
  );
  t.ok(
    [s2, g2, p3].every((id) => unread(othello, id)),
    'unread for othello',
  );
  const msgEvents = (await events(t, api, 'hamlet', q.queue_id, evs[1]!.id, true)).filter(
    (e) => e.type === 'message',
  );
  t.same(msgEvents, [], 'the queue only asked for muted_users and flags');
  const q2 = await register(t, api, 'hamlet', { event_types: ['message'] });
  const s3 = await sendChannelMessage(api, 'cordelia', 'general', 'chat', 'more spam');
  const arrived = await events(t, api, 'hamlet', q2.queue_id, -1, true);
  t.same(arrived[0]!.flags, ['read'], 'the message event carries the read flag');
  t.ok(unread(othello, s3));

  // Errors.
  assertError(
    t,
    await api.post('hamlet', `users/me/muted_users/${cordelia}`),
    'User already muted',
  );
  assertError(t, await api.post('hamlet', `users/me/muted_users/${hamlet}`), 'Cannot mute self');
  assertError(t, await api.post('hamlet', 'users/me/muted_users/99999'), 'No such user');
  assertError(t, await api.delete('hamlet', 'users/me/muted_users/99999'), 'No such user');
  assertError(
    t,
    await api.delete('hamlet', `users/me/muted_users/${othello}`),
    'User is not muted',
  );
  assertError(t, await api.post('hamlet', 'users/me/muted_users/abc'), /muted_user_id/);

  // Unmuting.
  const from2 = ts.events.length;
  res = await api.delete('hamlet', `users/me/muted_users/${cordelia}`);
  assertMatchesOpenApi(t, '/users/me/muted_users/{muted_user_id}', 'delete', assertSuccess(t, res));
  t.same(eventsSince(ts, from2), [
    { event: { type: 'muted_users', muted_users: [] }, users: [hamlet] },
  ]);
  t.same(store.mutedUsers.byUser(hamlet), []);
  const s4 = await sendChannelMessage(api, 'cordelia', 'general', 'chat', 'heard again');
  t.ok(unread(hamlet, s4), 'messages arrive unread again');
  t.ok(!unread(hamlet, s1), 'what was marked read stays read');

  // Deactivated users and bots may be muted too.
  assertSuccess(t, await api.delete('iago', `users/${othello}`));
  assertSuccess(t, await api.post('hamlet', `users/me/muted_users/${othello}`));
  t.same(
    store.mutedUsers.byUser(hamlet).map((m) => m.id),
    [othello],
  );
});

t.test('muting a user with a large unread backlog marks it all, batch by batch', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const store = ts.server.store;
  const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
  const ch = await createChannel(api, 'othello', 'big', { principals: [hamlet, othello] });
  const ids = seedChannelMessages(ts, {
    senderId: othello,
    streamId: ch,
    topic: 'bulk',
    count: READ_BATCH + 5,
    recipients: [hamlet],
  });
  const from = ts.events.length;
  assertSuccess(t, await api.post('hamlet', `users/me/muted_users/${othello}`));
  t.equal(store.reading.unreadFromSender(hamlet, othello, 10).length, 0);
  const evs = eventsSince(ts, from);
  t.same(
    evs.map((e) => [e.event.type, ((e.event.messages as number[]) ?? []).length]),
    [
      ['update_message_flags', READ_BATCH],
      ['muted_users', 0],
      ['update_message_flags', 5],
    ],
    'the first batch commits with the mute, the rest follow',
  );
  t.equal(
    evs
      .flatMap((e) => (e.event.messages as number[] | undefined) ?? [])
      .sort((a, b) => a - b)
      .join(),
    ids.join(),
  );
});

t.test('PATCH /users/me/subscriptions/muted_topics (legacy)', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const store = ts.server.store;
  const hamlet = fx.users.hamlet!.id;
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const secret = await createChannel(api, 'othello', 'secret', { invite_only: true });
  const q = await register(t, api, 'hamlet', { event_types: ['user_topic'] });
  const patch = (params: Record<string, unknown>) =>
    api.patch('hamlet', 'users/me/subscriptions/muted_topics', params);

  let res = await patch({ stream: 'Verona', topic: 'dinner', op: 'add' });
  assertMatchesOpenApi(t, '/users/me/subscriptions/muted_topics', 'patch', assertSuccess(t, res));
  t.equal(store.topics.userTopic(hamlet, verona, 'dinner')?.visibility_policy, 1, 'muted');
  res = await patch({ stream_id: verona, topic: 'lunch', op: 'add' });
  assertSuccess(t, res);
  t.equal(store.topics.userTopic(hamlet, verona, 'lunch')?.visibility_policy, 1);
  assertSuccess(t, await patch({ stream_id: verona, topic: 'lunch', op: 'add' }), 'again: fine');
  res = await patch({ stream: 'Verona', topic: 'dinner', op: 'remove' });
  assertSuccess(t, res);
  t.equal(store.topics.userTopic(hamlet, verona, 'dinner'), undefined, 'unmuted');

  const evs = await events(t, api, 'hamlet', q.queue_id, -1, true);
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });
  t.same(
    evs.map((e) => [e.type, e.stream_id, e.topic_name, e.visibility_policy]),
    [
      ['user_topic', verona, 'dinner', 1],
      ['user_topic', verona, 'lunch', 1],
      ['user_topic', verona, 'lunch', 1],
      ['user_topic', verona, 'dinner', 0],
    ],
  );

  assertError(t, await patch({ topic: 'x', op: 'add' }), "Please supply 'stream'.");
  assertError(
    t,
    await patch({ stream: 'Verona', stream_id: verona, topic: 'x', op: 'add' }),
    "Please choose one: 'stream' or 'stream_id'.",
  );
  assertError(
    t,
    await patch({ stream: 'nowhere', topic: 'x', op: 'add' }),
    "Invalid channel name 'nowhere'",
  );
  assertError(
    t,
    await patch({ stream: 'secret', topic: 'x', op: 'add' }),
    "Invalid channel name 'secret'",
  );
  assertError(t, await patch({ stream_id: secret, topic: 'x', op: 'add' }), 'Invalid channel ID');
  assertError(t, await patch({ stream_id: verona, topic: 'x', op: 'toggle' }), 'Invalid op');
  assertError(t, await patch({ stream_id: verona, op: 'add' }), "Missing 'topic' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
});
