/**
 * POST /mark_all_as_read, /mark_stream_as_read, /mark_topic_as_read and
 * POST /streams/{stream_id}/delete_topic: bounded batches, `complete`, update_message_flags and
 * delete_message events (who receives them and who must not), access rules, uploads released.
 * Reference: zerver/tests/test_message_flags.py, test_message_delete.py (delete_in_topic).
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, eventsSince } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { seedChannelMessages, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { DELETE_TOPIC_BATCH, READ_BATCH } from '../../src/mutations/reading.js';
import { upload } from '../helpers/uploads.js';

const READ = 1;

t.test('POST /mark_all_as_read: every unread message, in bounded batches', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const store = ts.server.store;
  const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
  const ch = await createChannel(api, 'othello', 'big', { principals: [hamlet, othello] });
  const count = 2 * READ_BATCH + 500;
  const ids = seedChannelMessages(ts, {
    senderId: othello,
    streamId: ch,
    topic: 'bulk',
    count,
    recipients: [hamlet, othello],
  });
  const dm = await sendDirectMessage(api, 'othello', [hamlet], 'a direct message');
  const q = await register(t, api, 'hamlet', { event_types: ['update_message_flags'] });
  const qOthello = await register(t, api, 'othello', { event_types: ['update_message_flags'] });
  const from = ts.events.length;

  const res = await api.post('hamlet', 'mark_all_as_read');
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/mark_all_as_read', 'post', body);
  t.same(body, { result: 'success', msg: '', complete: true });
  t.equal(store.reading.unreadAll(hamlet, 10).length, 0, 'nothing unread is left');
  t.equal(
    store.reading.unreadAll(othello, count + 10).length,
    count + 1,
    "othello's flags untouched (the seeded messages, and his own sent through the API)",
  );

  const evs = await events(t, api, 'hamlet', q.queue_id, -1, true);
  // The shape, checked on shortened copies (validating thousands of ids takes seconds).
  const short = evs.map((e) => ({ ...e, messages: (e.messages as number[]).slice(0, 3) }));
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: short });
  t.equal(evs.length, 3, 'one event per batch');
  t.same(
    evs.map((e) => (e.messages as number[]).length),
    [READ_BATCH, READ_BATCH, 501],
    'newest first, at most one batch each',
  );
  for (const e of evs) {
    t.match(e, {
      type: 'update_message_flags',
      op: 'add',
      operation: 'add',
      flag: 'read',
      all: false,
    });
  }
  const marked = evs.flatMap((e) => e.messages as number[]).sort((a, b) => a - b);
  t.equal(marked.join(','), [...ids, dm].join(','), 'every unread message, once');
  t.ok((evs[0]!.messages as number[]).includes(dm), 'the newest batch holds the newest message');
  t.ok(
    eventsSince(ts, from).every((e) => e.users.length === 1 && e.users[0] === hamlet),
    'only the reader hears of it',
  );
  t.same(await events(t, api, 'othello', qOthello.queue_id, -1, true), []);

  // Nothing left: still complete, no event.
  t.same(assertSuccess(t, await api.post('hamlet', 'mark_all_as_read')).complete, true);
  t.equal(ts.events.length, from + 3, 'no event when nothing changed');
});

t.test('POST /mark_all_as_read: complete false when the time budget runs out', async (t) => {
  const ts = await startServer(t, { batchTimeBudgetMs: 0 });
  const { api, fx } = ts;
  const store = ts.server.store;
  const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
  const ch = await createChannel(api, 'othello', 'big', { principals: [hamlet, othello] });
  seedChannelMessages(ts, {
    senderId: othello,
    streamId: ch,
    topic: 'bulk',
    count: READ_BATCH + 10,
    recipients: [hamlet],
  });
  let body = assertSuccess(t, await api.post('hamlet', 'mark_all_as_read'));
  assertMatchesOpenApi(t, '/mark_all_as_read', 'post', body);
  t.equal(body.complete, false, 'stopped after one batch');
  t.equal(store.reading.unreadAll(hamlet, 100).length, 10, 'the batch that ran committed');
  body = assertSuccess(t, await api.post('hamlet', 'mark_all_as_read'));
  t.equal(body.complete, true, 'repeating the request finishes');
  t.equal(store.reading.unreadAll(hamlet, 100).length, 0);
});

t.test('POST /mark_stream_as_read and /mark_topic_as_read', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const store = ts.server.store;
  const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number];
  const verona = await createChannel(api, 'othello', 'Verona', {
    principals: [hamlet, othello, cordelia],
  });
  const denmark = await createChannel(api, 'othello', 'Denmark', { principals: [hamlet, othello] });
  const secret = await createChannel(api, 'othello', 'secret', {
    principals: [othello],
    invite_only: true,
  });
  const v1 = await sendChannelMessage(api, 'othello', 'Verona', 'Lunch', 'one');
  const v2 = await sendChannelMessage(api, 'othello', 'Verona', 'lunch', 'two (same topic)');
  const v3 = await sendChannelMessage(api, 'othello', 'Verona', 'other', 'three');
  const vEmpty = await sendChannelMessage(api, 'othello', 'Verona', '', 'general chat');
  const d1 = await sendChannelMessage(api, 'othello', 'Denmark', 'Lunch', 'elsewhere');
  const dm = await sendDirectMessage(api, 'othello', [hamlet], 'dm');
  const unread = (id: number, who = hamlet) => (store.messages.userFlags(who, id)! & READ) === 0;
  const q = await register(t, api, 'hamlet', { event_types: ['update_message_flags'] });

  // A topic (names compare case-insensitively).
  let res = await api.post('hamlet', 'mark_topic_as_read', {
    stream_id: verona,
    topic_name: 'LUNCH',
  });
  assertMatchesOpenApi(t, '/mark_topic_as_read', 'post', assertSuccess(t, res));
  t.same([unread(v1), unread(v2), unread(v3), unread(d1)], [false, false, true, true]);
  t.ok(unread(v1, cordelia), "another user's flags untouched");
  let evs = await events(t, api, 'hamlet', q.queue_id, -1, true);
  t.equal(evs.length, 1);
  t.match(evs[0], { type: 'update_message_flags', op: 'add', flag: 'read', messages: [v1, v2] });

  // The empty topic, by its display name.
  res = await api.post('hamlet', 'mark_topic_as_read', {
    stream_id: verona,
    topic_name: 'general chat',
  });
  assertSuccess(t, res);
  t.notOk(unread(vEmpty), 'general chat is the empty topic');

  // A whole channel.
  res = await api.post('hamlet', 'mark_stream_as_read', { stream_id: verona });
  assertMatchesOpenApi(t, '/mark_stream_as_read', 'post', assertSuccess(t, res));
  t.same([unread(v3), unread(d1), unread(dm)], [false, true, true], 'only that channel');
  evs = await events(t, api, 'hamlet', q.queue_id, evs[0]!.id, true);
  t.same(
    evs.map((e) => e.messages),
    [[vEmpty], [v3]],
  );
  // Again: nothing left, no event.
  const before = ts.events.length;
  assertSuccess(t, await api.post('hamlet', 'mark_stream_as_read', { stream_id: verona }));
  t.equal(ts.events.length, before);

  // Errors.
  assertError(
    t,
    await api.post('hamlet', 'mark_topic_as_read', { stream_id: verona, topic_name: 'nope' }),
    "No such topic 'nope'",
  );
  assertError(
    t,
    await api.post('hamlet', 'mark_stream_as_read', { stream_id: secret }),
    'Invalid channel ID',
    {},
  );
  assertError(
    t,
    await api.post('hamlet', 'mark_topic_as_read', { stream_id: secret, topic_name: 'x' }),
    'Invalid channel ID',
  );
  assertError(
    t,
    await api.post('hamlet', 'mark_stream_as_read', { stream_id: 99999 }),
    'Invalid channel ID',
  );
  assertError(
    t,
    await api.post('hamlet', 'mark_stream_as_read', {}),
    "Missing 'stream_id' argument",
    {
      code: 'REQUEST_VARIABLE_MISSING',
    },
  );
  assertError(t, await api.post('hamlet', 'mark_stream_as_read', { stream_id: 'x' }), /stream_id/, {
    code: 'INVALID_JSON',
  });
  assertError(
    t,
    await api.post('hamlet', 'mark_topic_as_read', { stream_id: denmark }),
    "Missing 'topic_name' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );

  // More unread messages in a channel than one batch: all of them, batch by batch.
  const ids = seedChannelMessages(ts, {
    senderId: othello,
    streamId: denmark,
    topic: 'bulk',
    count: READ_BATCH + 3,
    recipients: [hamlet],
  });
  const last = ts.events.length;
  assertSuccess(t, await api.post('hamlet', 'mark_stream_as_read', { stream_id: denmark }));
  const batches = eventsSince(ts, last);
  t.same(
    batches.map((b) => (b.event.messages as number[]).length),
    [READ_BATCH, 4],
  );
  t.ok(ids.every((id) => !unread(id)) && !unread(d1));
});

t.test('POST /streams/{stream_id}/delete_topic', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const store = ts.server.store;
  const [hamlet, othello, cordelia, iago, prospero] = [
    'hamlet',
    'othello',
    'cordelia',
    'iago',
    'prospero',
  ].map((n) => fx.users[n]!.id) as [number, number, number, number, number];
  // othello creates the channel: he administers it (can_administer_channel_group).
  const verona = await createChannel(api, 'othello', 'Verona', {
    principals: [hamlet, othello, cordelia],
  });
  const up = assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'notes.txt', data: 'some notes' }]),
  );
  const url = up.url as string;
  const d1 = await sendChannelMessage(api, 'hamlet', 'Verona', 'Doomed', `[notes](${url})`);
  const d2 = await sendChannelMessage(api, 'othello', 'Verona', 'doomed', 'two');
  const kept = await sendChannelMessage(api, 'othello', 'Verona', 'kept', 'stays');
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', {
      stream_id: verona,
      topic: 'Doomed',
      visibility_policy: 3,
    }),
  );
  const attachments = async () =>
    (
      assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as {
        messages: { id: number }[];
      }[]
    )[0]!.messages.map((m) => m.id);
  t.same(await attachments(), [d1], 'the upload is claimed');

  // Members who do not administer the channel may not.
  const del = (who: string, stream: number, topic: string) =>
    api.post(who, `streams/${stream}/delete_topic`, { topic_name: topic });
  for (const who of ['hamlet', 'shiva', 'polonius']) {
    const res = await del(who, verona, 'doomed');
    assertError(t, res, 'Must be an organization administrator', {
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
    assertMatchesOpenApi(t, '/streams/{stream_id}/delete_topic', 'post', res.body, {
      status: '400',
    });
  }
  assertError(t, await del('iago', 99999, 'x'), 'Invalid channel ID');
  assertError(
    t,
    await api.post('iago', `streams/${verona}/delete_topic`, {}),
    "Missing 'topic_name' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );

  // The channel's administrator deletes the topic (its name in any case).
  const from = ts.events.length;
  const res = await del('othello', verona, 'DOOMED');
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/streams/{stream_id}/delete_topic', 'post', body);
  t.same(body, { result: 'success', msg: '', complete: true });
  t.equal(store.messages.byId(d1), undefined);
  t.equal(store.messages.byId(d2), undefined);
  t.ok(store.messages.byId(kept), 'other topics stay');
  const evs = eventsSince(ts, from);
  const deletes = evs.filter((e) => e.event.type === 'delete_message');
  t.equal(deletes.length, 1, 'one event for the batch');
  t.same(deletes[0]!.event, {
    type: 'delete_message',
    message_ids: [d1, d2],
    message_type: 'stream',
    stream_id: verona,
    topic: 'Doomed',
  });
  t.same(
    deletes[0]!.users,
    [hamlet, othello, cordelia].sort((a, b) => a - b),
    'subscribers only',
  );
  t.notOk(deletes[0]!.users.includes(iago) || deletes[0]!.users.includes(prospero));
  const userTopic = evs.find((e) => e.event.type === 'user_topic');
  t.match(userTopic, {
    event: { stream_id: verona, topic_name: 'Doomed', visibility_policy: 0 },
    users: [hamlet],
  });
  t.equal(store.topics.userTopic(hamlet, verona, 'Doomed'), undefined, 'preference cleared');
  t.same(await attachments(), [], 'the upload is released');
  // Deleting an empty topic succeeds and does nothing.
  const n = ts.events.length;
  t.same(assertSuccess(t, await del('iago', verona, 'doomed')).complete, true);
  t.equal(ts.events.length, n);

  // Protected history: an administrator deletes only what they can see.
  const vault = await createChannel(api, 'othello', 'vault', {
    principals: [othello, cordelia],
    invite_only: true,
    history_public_to_subscribers: false,
  });
  const early = await sendChannelMessage(api, 'othello', 'vault', 'plans', 'before iago');
  assertError(t, await del('iago', vault, 'plans'), 'Invalid channel ID', {});
  assertSuccess(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'vault' }],
      principals: [iago],
    }),
  );
  const late = await sendChannelMessage(api, 'othello', 'vault', 'plans', 'after iago');
  const from2 = ts.events.length;
  t.same(assertSuccess(t, await del('iago', vault, 'plans')).complete, true);
  t.ok(store.messages.byId(early), 'a message iago never received stays');
  t.equal(store.messages.byId(late), undefined);
  const d = eventsSince(ts, from2).filter((e) => e.event.type === 'delete_message');
  t.same(
    d.map((e) => [e.event.message_ids, e.users]),
    [[[late], [othello, cordelia, iago].sort((a, b) => a - b)]],
  );
});

t.test('delete_topic: bounded batches, complete false on the time budget', async (t) => {
  for (const budget of [50_000, 0]) {
    const ts = await startServer(t, { batchTimeBudgetMs: budget });
    const { api, fx } = ts;
    const store = ts.server.store;
    const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
    const ch = await createChannel(api, 'othello', 'big', { principals: [hamlet, othello] });
    const ids = seedChannelMessages(ts, {
      senderId: othello,
      streamId: ch,
      topic: 'bulk',
      count: 2 * DELETE_TOPIC_BATCH + 7,
      recipients: [hamlet, othello],
    });
    const from = ts.events.length;
    const body = assertSuccess(
      t,
      await api.post('iago', `streams/${ch}/delete_topic`, { topic_name: 'bulk' }),
    );
    const batches = eventsSince(ts, from).filter((e) => e.event.type === 'delete_message');
    if (budget === 0) {
      t.equal(body.complete, false, 'stopped after one batch');
      t.equal(batches.length, 1);
      t.equal(store.reading.topicMessageIds(ch, 'bulk', 10_000).length, DELETE_TOPIC_BATCH + 7);
      t.equal(store.messages.byId(ids[ids.length - 1]!), undefined, 'the newest went first');
    } else {
      t.equal(body.complete, true);
      t.same(
        batches.map((b) => (b.event.message_ids as number[]).length),
        [DELETE_TOPIC_BATCH, DELETE_TOPIC_BATCH, 7],
      );
      t.equal(store.reading.topicMessageIds(ch, 'bulk', 10).length, 0);
    }
    t.ok(batches.every((b) => b.users.join() === [hamlet, othello].sort((a, b) => a - b).join()));
  }
});
