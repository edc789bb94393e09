/**
 * Scheduled messages: create, list, edit, delete (every parameter and error, in the reference's
 * order); `scheduled_messages` events to the sender's queues only and the register snapshot;
 * delivery through the send path when the server's clock passes the scheduled time; failure
 * (marked `failed`, revived by a new time); persistence across a restart; privacy. Ported from the
 * reference's zerver/tests/test_scheduled_messages.py. The server's clock is moved by the test
 * (ServerConfig.clock), never waited for.
 */
import t, { type Test } from 'tap';
import { ApiClient, assertError, assertSuccess, type Params } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events as pollEvents, register, type Ev } from '../helpers/events.js';
import { TestClock } from '../helpers/clock.js';
import { fetchNarrow } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { upload } from '../helpers/uploads.js';
import { createServer } from '../../src/server.js';

type Scheduled = {
  scheduled_message_id: number;
  type: string;
  to: number | number[];
  topic?: string;
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
};

async function setup(t: Test): Promise<{ ts: TestServer; clock: TestClock; verona: number }> {
  const clock = new TestClock();
  const ts = await startServer(t, { clock: clock.now });
  const verona = await createChannel(ts.api, 'hamlet', 'Verona');
  assertSuccess(
    t,
    await ts.api.post('othello', 'users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] }),
  );
  return { ts, clock, verona };
}

async function schedule(t: Test, api: ApiClient, who: string, params: Params): Promise<number> {
  const res = await api.post(who, 'scheduled_messages', params);
  assertMatchesOpenApi(t, '/scheduled_messages', 'post', res.body);
  return assertSuccess(t, res, `schedule as ${who}`).scheduled_message_id as number;
}

async function list(t: Test, api: ApiClient, who: string): Promise<Scheduled[]> {
  const res = await api.get(who, 'scheduled_messages');
  assertMatchesOpenApi(t, '/scheduled_messages', 'get', res.body);
  return assertSuccess(t, res, `GET /scheduled_messages as ${who}`)
    .scheduled_messages as Scheduled[];
}

function scheduledEvents(ts: TestServer) {
  return ts.events.filter((e) => e.event.type === 'scheduled_messages');
}

t.test('scheduling channel and direct messages, listing them, events and snapshot', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, fx } = ts;
  const hamletQ = await register(t, api, 'hamlet', { event_types: ['scheduled_messages'] });
  const othelloQ = await register(t, api, 'othello', { event_types: ['scheduled_messages'] });
  const when = clock.seconds + 86400;

  t.same(await list(t, api, 'hamlet'), [], 'nothing scheduled yet');
  const channelId = await schedule(t, api, 'hamlet', {
    type: 'channel',
    to: verona,
    topic: 'Test topic',
    content: 'Test message 1',
    scheduled_delivery_timestamp: when,
  });
  const directId = await schedule(t, api, 'hamlet', {
    type: 'direct',
    to: [fx.users.othello!.id],
    content: 'Test **message** 3',
    scheduled_delivery_timestamp: when - 60,
  });
  const selfId = await schedule(t, api, 'hamlet', {
    type: 'private',
    to: JSON.stringify([fx.users.hamlet!.id]),
    content: 'Note to self',
    scheduled_delivery_timestamp: when + 60,
  });
  t.ok(channelId < directId && directId < selfId, 'ids ascend');

  const expected: Scheduled[] = [
    {
      scheduled_message_id: directId,
      type: 'private',
      to: [fx.users.othello!.id],
      content: 'Test **message** 3',
      rendered_content: '<p>Test <strong>message</strong> 3</p>',
      scheduled_delivery_timestamp: when - 60,
      failed: false,
    },
    {
      scheduled_message_id: channelId,
      type: 'stream',
      to: verona,
      topic: 'Test topic',
      content: 'Test message 1',
      rendered_content: '<p>Test message 1</p>',
      scheduled_delivery_timestamp: when,
      failed: false,
    },
    {
      scheduled_message_id: selfId,
      type: 'private',
      to: [fx.users.hamlet!.id],
      content: 'Note to self',
      rendered_content: '<p>Note to self</p>',
      scheduled_delivery_timestamp: when + 60,
      failed: false,
    },
  ];
  t.same(await list(t, api, 'hamlet'), expected, 'listed soonest first');
  t.same(await list(t, api, 'othello'), [], "another user's list is their own");

  // Events: one `add` per schedule, to hamlet only.
  const evs = await pollEvents(t, api, 'hamlet', hamletQ.queue_id, -1, true);
  const body = { result: 'success', msg: '', events: evs, queue_id: hamletQ.queue_id };
  assertMatchesOpenApi(t, '/events', 'get', body);
  t.same(
    evs.map((e) => (e.scheduled_messages as Scheduled[]).map((s) => s.scheduled_message_id)),
    [[channelId], [directId], [selfId]],
  );
  t.same(evs[0]!.op, 'add');
  t.same(
    await pollEvents(t, api, 'othello', othelloQ.queue_id, -1, true),
    [],
    'othello gets no scheduled_messages events',
  );
  for (const e of scheduledEvents(ts)) t.same(e.users, [fx.users.hamlet!.id], 'sender only');

  // The register snapshot has the same list.
  const snap = await register(t, api, 'hamlet', { fetch_event_types: ['scheduled_messages'] });
  t.same(snap.body.scheduled_messages, expected, 'register snapshot');
  const other = await register(t, api, 'othello', { fetch_event_types: ['scheduled_messages'] });
  t.same(other.body.scheduled_messages, []);
});

t.test('scheduling is checked as sending is', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, fx } = ts;
  const future = clock.seconds + 3600;
  const good = {
    type: 'stream',
    to: verona,
    topic: 'T',
    content: 'hello',
    scheduled_delivery_timestamp: future,
  };
  const refused = async (params: Params, msg: string, opts: { code?: string } = {}) => {
    const res = await api.post('hamlet', 'scheduled_messages', params);
    assertError(t, res, msg, opts);
    return res;
  };
  const without = (k: string) => Object.fromEntries(Object.entries(good).filter(([x]) => x !== k));

  await refused(without('type'), "Missing 'type' argument", { code: 'REQUEST_VARIABLE_MISSING' });
  await refused(without('to'), "Missing 'to' argument", { code: 'REQUEST_VARIABLE_MISSING' });
  await refused(without('content'), "Missing 'content' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  await refused(
    without('scheduled_delivery_timestamp'),
    "Missing 'scheduled_delivery_timestamp' argument",
    {
      code: 'REQUEST_VARIABLE_MISSING',
    },
  );
  await refused({ ...good, type: 'group' }, 'Invalid type');
  await refused(
    { ...good, scheduled_delivery_timestamp: 'soon' },
    'scheduled_delivery_timestamp is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
  await refused(
    { ...good, scheduled_delivery_timestamp: clock.seconds - 86400 },
    'Scheduled delivery time must be in the future.',
  );
  await refused(
    { ...good, scheduled_delivery_timestamp: clock.seconds },
    'Scheduled delivery time must be in the future.',
  );
  await refused({ ...good, read_by_sender: 'yes' }, 'read_by_sender is not valid JSON', {
    code: 'INVALID_JSON',
  });
  await refused({ ...good, to: 'Verona' }, 'Invalid data type for channel ID');
  await refused(without('topic'), 'Missing topic');
  const missing = await refused({ ...good, to: 9999 }, "Channel with ID '9999' does not exist", {
    code: 'STREAM_DOES_NOT_EXIST',
  });
  t.equal(missing.body.stream_id, 9999, 'stream_id names the channel');
  await refused({ ...good, content: '  ' }, 'Message must not be empty');
  await refused({ ...good, topic: 'a\u0000b' }, 'Invalid character in topic, at position 2!');

  const direct = { ...good, type: 'direct', to: [fx.users.othello!.id] };
  await refused({ ...direct, to: [fx.users.othello!.id, 9999] }, 'Invalid user ID 9999');
  await refused(
    { ...direct, to: ['othello@zulip.com'] },
    'Recipient list may only contain user IDs',
  );
  await refused({ ...direct, to: 5 }, 'Invalid data type for recipients');
  await refused({ ...direct, to: [] }, 'Message must have recipients');
  assertSuccess(t, await api.delete('iago', `users/${fx.users.cordelia!.id}`));
  await refused(
    { ...direct, to: [fx.users.cordelia!.id] },
    "'cordelia@zulip.com' is no longer using Zulip.",
  );

  // Permission to post is checked at schedule time: a private channel hamlet is not in.
  const secret = await createChannel(api, 'iago', 'secret', { invite_only: true });
  await refused({ ...good, to: secret }, "Not authorized to send to channel 'secret'");

  t.same(await list(t, api, 'hamlet'), [], 'nothing was stored');
  t.same(scheduledEvents(ts), [], 'no event was sent');
});

t.test('editing a scheduled message', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, fx } = ts;
  const when = clock.seconds + 86400;
  const id = await schedule(t, api, 'hamlet', {
    type: 'channel',
    to: verona,
    topic: 'Test topic',
    content: 'Original test message',
    scheduled_delivery_timestamp: when,
  });
  const patch = async (params: Params, who = 'hamlet') => {
    const res = await api.patch(who, `scheduled_messages/${id}`, params);
    // (The description's 400 is a oneOf that every error matches twice: not checkable.)
    if (res.status !== 400) {
      assertMatchesOpenApi(t, '/scheduled_messages/{scheduled_message_id}', 'patch', res.body, {
        status: String(res.status),
      });
    }
    return res;
  };
  const only = async () => (await list(t, api, 'hamlet'))[0]!;
  const hamletQ = await register(t, api, 'hamlet', { event_types: ['scheduled_messages'] });

  // Same type spelled differently, same channel and topic: nothing changes.
  assertSuccess(t, await patch({ type: 'stream', to: verona, topic: 'Test topic' }));
  t.match(await only(), {
    type: 'stream',
    to: verona,
    topic: 'Test topic',
    scheduled_delivery_timestamp: when,
  });
  const [update] = await pollEvents(t, api, 'hamlet', hamletQ.queue_id, -1, true);
  t.match(update, {
    type: 'scheduled_messages',
    op: 'update',
    scheduled_message: { scheduled_message_id: id },
  });

  assertError(t, await patch({}), 'Nothing to change');
  assertError(
    t,
    await patch({ type: 'direct' }),
    'Recipient required when updating type of scheduled message.',
  );

  // To a direct message: the topic goes.
  assertSuccess(t, await patch({ type: 'direct', to: [fx.users.othello!.id] }));
  let s = await only();
  t.same([s.type, s.to, s.topic], ['private', [fx.users.othello!.id], undefined]);
  // A topic for a direct message is ignored.
  assertSuccess(t, await patch({ topic: 'Direct message topic' }));
  s = await only();
  t.same([s.type, s.topic], ['private', undefined]);

  assertError(
    t,
    await patch({ type: 'channel', to: verona }),
    'Topic required when updating scheduled message type to channel.',
  );
  assertSuccess(t, await patch({ type: 'channel', to: verona, topic: 'New test topic' }));
  t.match(await only(), { type: 'stream', to: verona, topic: 'New test topic' });

  assertError(
    t,
    await patch({ scheduled_delivery_timestamp: clock.seconds - 86400 }),
    'Scheduled delivery time must be in the future.',
  );
  assertSuccess(
    t,
    await patch({ content: 'Edited *test* message', scheduled_delivery_timestamp: when + 7200 }),
  );
  t.match(await only(), {
    content: 'Edited *test* message',
    rendered_content: '<p>Edited <em>test</em> message</p>',
    topic: 'New test topic',
    scheduled_delivery_timestamp: when + 7200,
  });
  assertSuccess(t, await patch({ topic: 'Another topic for test', content: 'Final content' }));
  t.match(await only(), { topic: 'Another topic for test', content: 'Final content' });
  assertSuccess(t, await patch({ subject: 'Final topic' }));
  t.match(await only(), {
    type: 'stream',
    topic: 'Final topic',
    content: 'Final content',
    scheduled_delivery_timestamp: when + 7200,
  });

  // The new addressing is checked as a send would be.
  const missing = await patch({ to: 9999 });
  assertError(t, missing, "Channel with ID '9999' does not exist", {
    code: 'STREAM_DOES_NOT_EXIST',
  });
  t.equal(missing.body.stream_id, 9999);
  const badUser = await patch({ type: 'direct', to: [9999] });
  assertError(t, badUser, 'Invalid user ID 9999');
  assertError(t, await patch({ content: '' }), 'Message must not be empty');
  assertError(
    t,
    await patch({ type: 'stream', to: 'x', topic: 'y' }),
    'Invalid data type for channel ID',
  );
  assertError(
    t,
    await patch({ type: 'direct', to: '[true]' }),
    'Recipient list may only contain user IDs',
  );
  assertError(t, await patch({ type: 'huddle', to: verona }), 'Invalid type');
  t.match(
    await only(),
    { type: 'stream', to: verona, topic: 'Final topic' },
    'refused edits changed nothing',
  );

  // Someone else's, and a missing one.
  assertError(
    t,
    await patch({ content: 'mine now' }, 'othello'),
    'Scheduled message does not exist',
    { status: 404 },
  );
  const gone = await api.patch('hamlet', 'scheduled_messages/9999', { content: 'x' });
  assertError(t, gone, 'Scheduled message does not exist', { status: 404 });
  assertMatchesOpenApi(t, '/scheduled_messages/{scheduled_message_id}', 'patch', gone.body, {
    status: '404',
  });
  t.equal((await only()).content, 'Final content');
});

t.test('deleting a scheduled message', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, fx } = ts;
  const id = await schedule(t, api, 'hamlet', {
    type: 'channel',
    to: verona,
    topic: 'Test topic',
    content: 'Test message',
    scheduled_delivery_timestamp: clock.seconds + 86400,
  });
  const q = await register(t, api, 'hamlet', { event_types: ['scheduled_messages'] });

  assertError(
    t,
    await api.delete('othello', `scheduled_messages/${id}`),
    'Scheduled message does not exist',
    { status: 404 },
  );
  t.equal((await list(t, api, 'hamlet')).length, 1, "othello could not delete hamlet's");
  const res = await api.delete('hamlet', `scheduled_messages/${id}`);
  assertMatchesOpenApi(t, '/scheduled_messages/{scheduled_message_id}', 'delete', res.body);
  assertSuccess(t, res);
  t.same(await list(t, api, 'hamlet'), []);
  t.same(
    (await pollEvents(t, api, 'hamlet', q.queue_id, -1, true)).map(({ id: _id, ...e }) => e),
    [{ type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }],
  );
  const again = await api.delete('hamlet', `scheduled_messages/${id}`);
  assertError(t, again, 'Scheduled message does not exist', { status: 404 });
  assertMatchesOpenApi(t, '/scheduled_messages/{scheduled_message_id}', 'delete', again.body, {
    status: '404',
  });
  t.same(
    scheduledEvents(ts)
      .filter((e) => e.event.op === 'remove')
      .map((e) => e.users),
    [[fx.users.hamlet!.id]],
  );
});

t.test('delivery: sent as the sender when the time comes, then removed', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, fx, server } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const channelId = await schedule(t, api, 'hamlet', {
    type: 'channel',
    to: verona,
    topic: 'Test topic',
    content: 'Hello @**othello**',
    scheduled_delivery_timestamp: clock.seconds + 300,
  });
  const directId = await schedule(t, api, 'hamlet', {
    type: 'direct',
    to: [othello],
    content: 'Direct, later',
    scheduled_delivery_timestamp: clock.seconds + 600,
    read_by_sender: false,
  });
  const hamletQ = await register(t, api, 'hamlet', {
    event_types: ['scheduled_messages', 'message'],
  });
  const othelloQ = await register(t, api, 'othello', { event_types: ['message'] });

  t.equal(await server.context.scheduler.deliverDue(), 0, 'nothing due yet');
  clock.advance(301);
  t.equal(await server.context.scheduler.deliverDue(), 1, 'the channel message is due');

  const fetched = await fetchNarrow(api, 'othello', [{ operator: 'channel', operand: verona }]);
  const messages = fetched.body.messages as {
    id: number;
    content: string;
    sender_id: number;
    subject: string;
    flags: string[];
    timestamp: number;
  }[];
  t.equal(messages.length, 1);
  const sent = messages[0]!;
  t.match(sent, { sender_id: hamlet, subject: 'Test topic', timestamp: clock.seconds });
  t.match(sent.content, /user-mention/, 'rendered at delivery');
  t.ok(sent.flags.includes('mentioned'), 'othello is mentioned, as in any sent message');

  const othelloEvents = await pollEvents(t, api, 'othello', othelloQ.queue_id, -1, true);
  t.same(
    othelloEvents.map((e) => (e.message as { id: number }).id),
    [sent.id],
    'message event to the recipient',
  );
  const hamletEvents = await pollEvents(t, api, 'hamlet', hamletQ.queue_id, -1, true);
  t.same(
    hamletEvents.map((e: Ev) =>
      e.type === 'message'
        ? ['message', (e.message as { id: number }).id]
        : [e.op, e.scheduled_message_id],
    ),
    [
      ['message', sent.id],
      ['remove', channelId],
    ],
  );
  assertMatchesOpenApi(t, '/events', 'get', {
    result: 'success',
    msg: '',
    events: hamletEvents,
    queue_id: hamletQ.queue_id,
  });
  t.same(
    (await list(t, api, 'hamlet')).map((s) => s.scheduled_message_id),
    [directId],
  );

  // An edit after delivery is refused as the reference refuses it.
  assertError(
    t,
    await api.patch('hamlet', `scheduled_messages/${channelId}`, { content: 'too late' }),
    'Scheduled message was already sent',
  );

  // The direct message, later; read_by_sender false leaves it unread for hamlet.
  clock.advance(300);
  t.equal(await server.context.scheduler.deliverDue(), 1);
  const dm = await fetchNarrow(api, 'hamlet', [{ operator: 'dm', operand: [othello] }]);
  const dmMessages = dm.body.messages as { content: string; flags: string[] }[];
  t.equal(dmMessages.length, 1);
  t.equal(dmMessages[0]!.content, '<p>Direct, later</p>');
  t.notOk(dmMessages[0]!.flags.includes('read'), 'not read by its sender');
  t.same(await list(t, api, 'hamlet'), []);
  const fromBot = await fetchNarrow(api, 'hamlet', [['sender', 'notification-bot@zulip.com']]);
  t.same(fromBot.body.messages, [], 'deliveries that succeed send no notice');
});

t.test('failure: marked failed, revived by a new time', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, fx, server } = ts;
  const othello = fx.users.othello!.id;
  const id = await schedule(t, api, 'hamlet', {
    type: 'direct',
    to: [othello],
    content: 'Will this arrive?',
    scheduled_delivery_timestamp: clock.seconds + 60,
  });
  const archived = await schedule(t, api, 'hamlet', {
    type: 'channel',
    to: verona,
    topic: 't',
    content: 'To an archived channel',
    scheduled_delivery_timestamp: clock.seconds + 60,
  });
  // The recipient leaves and the channel is archived before delivery.
  assertSuccess(t, await api.delete('iago', `users/${othello}`));
  assertSuccess(t, await api.delete('iago', `streams/${verona}`));
  const q = await register(t, api, 'hamlet', { event_types: ['scheduled_messages'] });
  clock.advance(61);
  t.equal(await server.context.scheduler.deliverDue(), 2);

  const listed = await list(t, api, 'hamlet');
  t.same(
    listed.map((s) => [s.scheduled_message_id, s.failed]),
    [
      [id, true],
      [archived, true],
    ],
  );
  const evs = await pollEvents(t, api, 'hamlet', q.queue_id, -1, true);
  t.same(
    evs.map((e) => [e.op, (e.scheduled_message as Scheduled).failed]),
    [
      ['update', true],
      ['update', true],
    ],
  );
  assertMatchesOpenApi(t, '/events', 'get', {
    result: 'success',
    msg: '',
    events: evs,
    queue_id: q.queue_id,
  });
  const stored = server.store.scheduledMessages.byId(id)!;
  t.equal(stored.failure_message, "'othello@zulip.com' is no longer using Zulip.");
  t.equal(
    server.store.scheduledMessages.byId(archived)!.failure_message,
    "Not authorized to send to channel 'Verona'",
  );
  t.equal(
    await server.context.scheduler.deliverDue(),
    0,
    'failed messages are not retried on their own',
  );

  // The notification bot told hamlet about each failure, in a direct message.
  const notices = await fetchNarrow(api, 'hamlet', [['sender', 'notification-bot@zulip.com']], {
    apply_markdown: false,
  });
  const bodies = (notices.body.messages as { content: string; type: string }[]).map((m) => [
    m.type,
    m.content,
  ]);
  const when = new Date(stored.scheduled_timestamp * 1000).toISOString().slice(0, 19);
  t.same(bodies, [
    [
      'private',
      `The message you scheduled for <time:${when}+00:00> was not sent because of the following ` +
        "error:\n\n> 'othello@zulip.com' is no longer using Zulip.\n\n" +
        '[View scheduled messages](#scheduled)',
    ],
    [
      'private',
      `The message you scheduled for <time:${when}+00:00> was not sent because of the following ` +
        "error:\n\n> Not authorized to send to channel 'Verona'\n\n" +
        '[View scheduled messages](#scheduled)',
    ],
  ]);

  // Editing a failed message needs a new time.
  assertError(
    t,
    await api.patch('hamlet', `scheduled_messages/${id}`, { content: 'again' }),
    'Scheduled delivery time must be in the future.',
  );
  assertSuccess(t, await api.post('iago', `users/${othello}/reactivate`));
  assertSuccess(
    t,
    await api.patch('hamlet', `scheduled_messages/${id}`, {
      scheduled_delivery_timestamp: clock.seconds + 60,
    }),
  );
  t.same(
    (await list(t, api, 'hamlet')).map((s) => [s.scheduled_message_id, s.failed]),
    [
      [archived, true],
      [id, false],
    ],
    'revived, and listed by its new time',
  );
  t.equal(server.store.scheduledMessages.byId(id)!.failure_message, null);
  clock.advance(61);
  t.equal(await server.context.scheduler.deliverDue(), 1);
  const dm = await fetchNarrow(api, 'othello', [
    { operator: 'dm', operand: [fx.users.hamlet!.id] },
  ]);
  t.same(
    (dm.body.messages as { content: string }[]).map((m) => m.content),
    ['<p>Will this arrive?</p>'],
  );
  t.same(
    (await list(t, api, 'hamlet')).map((s) => s.scheduled_message_id),
    [archived],
  );
});

t.test(
  'a delivery more than 10 minutes late fails; a deactivated sender is not told',
  async (t) => {
    const { ts, clock, verona } = await setup(t);
    const { api, fx, server } = ts;
    const late = await schedule(t, api, 'hamlet', {
      type: 'channel',
      to: verona,
      topic: 't',
      content: 'stale',
      scheduled_delivery_timestamp: clock.seconds + 60,
    });
    const fromOthello = await schedule(t, api, 'othello', {
      type: 'channel',
      to: verona,
      topic: 't',
      content: 'from a departed user',
      scheduled_delivery_timestamp: clock.seconds + 60,
    });
    assertSuccess(t, await api.delete('iago', `users/${fx.users.othello!.id}`));
    const before = ts.events.length;
    clock.advance(60 + 601);
    t.equal(await server.context.scheduler.deliverDue(), 2);
    const store = server.store;
    t.match(store.scheduledMessages.byId(late), {
      failed: 1,
      failure_message: 'Message could not be sent at the scheduled time.',
    });
    t.match(store.scheduledMessages.byId(fromOthello), {
      failed: 1,
      failure_message: 'Account is deactivated',
    });
    const after = ts.events.slice(before).filter((e) => e.event.type === 'scheduled_messages');
    t.same(
      after.map((e) => [e.event.op, e.users]),
      [['update', [fx.users.hamlet!.id]]],
      'only hamlet is told',
    );
    const fetched = await fetchNarrow(api, 'hamlet', [{ operator: 'channel', operand: verona }]);
    t.same(fetched.ids, [], 'nothing was sent');
  },
);

t.test('scheduled messages survive a restart; those due while down go out on start', async (t) => {
  const clock = new TestClock();
  const first = await startServer(t, { clock: clock.now });
  const { api, fx, dataDir } = first;
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const due = await schedule(t, api, 'hamlet', {
    type: 'channel',
    to: verona,
    topic: 'while down',
    content: 'Sent on start',
    scheduled_delivery_timestamp: clock.seconds + 60,
  });
  const later = await schedule(t, api, 'hamlet', {
    type: 'direct',
    to: [fx.users.othello!.id],
    content: 'Still waiting',
    scheduled_delivery_timestamp: clock.seconds + 86400,
  });
  await first.server.close();

  clock.advance(120); // the server was down when the first fell due
  const second = await createServer({
    host: '127.0.0.1',
    port: 0,
    scryptN: 1024,
    externalHost: 'testserver.local',
    rateLimits: null,
    dataDir,
    clock: clock.now,
  });
  t.teardown(() => second.close());
  const api2 = new ApiClient(second.url, fx);

  // The timer armed on start delivers it by itself: wait for the message event, no sleeping.
  const q = await register(t, api2, 'hamlet', { event_types: ['message'], narrow: [] });
  const fetched = await fetchNarrow(api2, 'hamlet', [{ operator: 'channel', operand: verona }]);
  let ids = fetched.ids;
  if (ids.length === 0) {
    const res = await api2.get('hamlet', 'events', { queue_id: q.queue_id, last_event_id: -1 });
    const evs = assertSuccess(t, res).events as Ev[];
    ids = evs.filter((e) => e.type === 'message').map((e) => (e.message as { id: number }).id);
  }
  t.equal(ids.length, 1, 'the due message was sent on start');
  await second.context.scheduler.deliverDue();
  t.same(
    (await list(t, api2, 'hamlet')).map((s) => s.scheduled_message_id),
    [later],
    'the later one is still scheduled',
  );
  t.equal(second.store.scheduledMessages.byId(due)!.delivered_message_id, ids[0]);
});

/** Applies `scheduled_messages` events to a snapshot's list, as a client keeps it. */
function applyScheduledEvents(list: Scheduled[], evs: readonly Ev[]): Scheduled[] {
  let out = [...list];
  for (const e of evs) {
    if (e.type !== 'scheduled_messages') continue;
    if (e.op === 'add') out.push(...(e.scheduled_messages as Scheduled[]));
    else if (e.op === 'update') {
      const s = e.scheduled_message as Scheduled;
      out = out.map((x) => (x.scheduled_message_id === s.scheduled_message_id ? s : x));
    } else if (e.op === 'remove') {
      out = out.filter((x) => x.scheduled_message_id !== e.scheduled_message_id);
    }
  }
  return out.sort(
    (a, b) =>
      a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp ||
      a.scheduled_message_id - b.scheduled_message_id,
  );
}

t.test('the snapshot kept current by events equals a fresh snapshot', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, fx, server } = ts;
  const first = await register(t, api, 'hamlet', {
    event_types: ['scheduled_messages'],
    fetch_event_types: ['scheduled_messages'],
  });
  const start = first.body.scheduled_messages as Scheduled[];
  const base = { type: 'channel', to: verona, topic: 't', content: 'x' };
  const a = await schedule(t, api, 'hamlet', {
    ...base,
    scheduled_delivery_timestamp: clock.seconds + 100,
  });
  const b = await schedule(t, api, 'hamlet', {
    ...base,
    content: 'y',
    scheduled_delivery_timestamp: clock.seconds + 50,
  });
  const c = await schedule(t, api, 'hamlet', {
    type: 'direct',
    to: [fx.users.othello!.id],
    content: 'z',
    scheduled_delivery_timestamp: clock.seconds + 500,
  });
  const d = await schedule(t, api, 'hamlet', {
    type: 'direct',
    to: [fx.users.cordelia!.id],
    content: 'w',
    scheduled_delivery_timestamp: clock.seconds + 70,
  });
  assertSuccess(
    t,
    await api.patch('hamlet', `scheduled_messages/${a}`, {
      content: 'x, edited',
      scheduled_delivery_timestamp: clock.seconds + 40,
    }),
  );
  assertSuccess(t, await api.delete('hamlet', `scheduled_messages/${c}`));
  assertSuccess(t, await api.delete('iago', `users/${fx.users.cordelia!.id}`));
  clock.advance(80);
  t.equal(await server.context.scheduler.deliverDue(), 3, 'a and b sent, d failed');

  const evs = await pollEvents(t, api, 'hamlet', first.queue_id, -1, true);
  const fresh = await register(t, api, 'hamlet', { fetch_event_types: ['scheduled_messages'] });
  const expected = fresh.body.scheduled_messages as Scheduled[];
  t.same(
    expected.map((s) => [s.scheduled_message_id, s.failed]),
    [[d, true]],
  );
  t.same(applyScheduledEvents(start, evs), expected, 'events rebuild the snapshot');
  for (const id of [a, b]) {
    t.equal(server.store.scheduledMessages.byId(id)!.delivered, 1, `${id} delivered`);
  }
});

t.test('a delivered scheduled message claims the uploads it links, as a sent one', async (t) => {
  const { ts, clock, verona } = await setup(t);
  const { api, server } = ts;
  const res = await upload(api, 'hamlet', [{ filename: 'notes.txt', data: 'zulip!' }]);
  const url = assertSuccess(t, res, 'upload').url as string;
  const pathId = url.slice('/user_uploads/'.length);
  const claimedBy = async () => {
    const body = assertSuccess(t, await api.get('hamlet', 'attachments'));
    const list = body.attachments as { path_id: string; messages: { id: number }[] }[];
    return list.find((a) => a.path_id === pathId)?.messages.map((m) => m.id);
  };
  const id = await schedule(t, api, 'hamlet', {
    type: 'channel',
    to: verona,
    topic: 'files',
    content: `[notes.txt](${url})`,
    scheduled_delivery_timestamp: clock.seconds + 60,
  });
  t.same(await claimedBy(), [], 'not claimed while scheduled');
  clock.advance(61);
  t.equal(await server.context.scheduler.deliverDue(), 1);
  const sent = server.store.scheduledMessages.byId(id)!.delivered_message_id!;
  t.same(await claimedBy(), [sent], 'claimed by the delivered message');
  t.equal(server.store.messages.byId(sent)?.has_attachment, 1, 'has_attachment stored');
});
