/**
 * GET /events and DELETE /events against the real server: delivery by long-poll, acknowledgement
 * and pruning, held polls, heartbeats, expiry, refusals, filters and privacy.
 * Reference tests: zerver/tests/test_event_system.py (GetEventsTest, EventsEndpointTest).
 */
import net from 'node:net';
import t from 'tap';
import { ApiClient, assertError, assertSuccess, basicAuth } from '../helpers/api.js';
import { arrivedEvents, events, poll, register, until } from '../helpers/events.js';
import { addWelcomeBot, seedRealm } from '../helpers/fixtures.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test('a mutation reaches a registered queue; acknowledged events are pruned', async (t) => {
  const { api, server, fx } = await startServer(t);
  // The new account's Welcome Bot is there already, as in every realm the server sets up.
  await addWelcomeBot(server, fx);
  const { queue_id, last_event_id } = await register(t, api, 'hamlet', {
    event_types: ['realm_user'],
  });
  t.equal(last_event_id, -1);
  assertSuccess(
    t,
    await api.post('iago', 'users', {
      email: 'newbie@zulip.com',
      password: 'pw-123456',
      full_name: 'Newbie',
    }),
  );
  const res = await poll(api, 'hamlet', queue_id, -1);
  const body = assertSuccess(t, res);
  // The spec's user object adds is_billing_admin to the description's.
  assertMatchesOpenApi(t, '/events', 'get', body, { allowExtra: ['is_billing_admin'] });
  const evs = body.events as { id: number; type: string; op: string; person: { email: string } }[];
  t.equal(evs.length, 1);
  t.match(evs[0], { id: 0, type: 'realm_user', op: 'add', person: { email: 'newbie@zulip.com' } });

  // Acknowledging 0 drops it: nothing left, and nothing older can be asked for.
  t.same(await events(t, api, 'hamlet', queue_id, 0, true), []);
  t.equal(server.context.queues.get(queue_id)!.queue.size, 0);
  assertError(
    t,
    await poll(api, 'hamlet', queue_id, -1, true),
    'An event newer than -1 has already been pruned!',
  );
  assertError(t, await poll(api, 'hamlet', queue_id, 5, true), 'Event 5 was not in this queue');
});

t.test('a held poll is answered by the next event', async (t) => {
  const { api, server, fx } = await startServer(t);
  const queues = server.context.queues;
  const { queue_id } = await register(t, api, 'hamlet');
  const held = poll(api, 'hamlet', queue_id, -1);
  await until(() => queues.consumers().waiting === 1, 'the poll is held');
  assertSuccess(t, await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] }));
  const body = assertSuccess(t, await held);
  t.match(body.events, [{ id: 0, type: 'typing', op: 'start' }]);
  t.equal(queues.consumers().waiting, 0);
});

t.test('a second poll on the same queue finishes the first', async (t) => {
  const { api, server, fx } = await startServer(t);
  const queues = server.context.queues;
  const { queue_id } = await register(t, api, 'hamlet');
  const first = poll(api, 'hamlet', queue_id, -1);
  await until(() => queues.consumers().waiting === 1, 'the first poll is held');
  const second = poll(api, 'hamlet', queue_id, -1);
  const firstBody = assertSuccess(t, await first, 'the first poll is finished');
  t.same(firstBody.events, [], 'with what was pending: nothing');
  await until(() => queues.consumers().waiting === 1, 'the second poll is held');
  await api.post('othello', 'typing', { op: 'stop', to: [fx.users.hamlet!.id] });
  t.match(assertSuccess(t, await second).events, [{ type: 'typing', op: 'stop' }]);
});

t.test('a held poll gets a heartbeat when nothing happens', async (t) => {
  const { api } = await startServer(t, { heartbeatMs: 30, heartbeatJitterMs: 5 });
  const { queue_id } = await register(t, api, 'cordelia');
  const body = assertSuccess(t, await poll(api, 'cordelia', queue_id, -1));
  t.same(body.events, [{ type: 'heartbeat', id: 0 }]);
  assertMatchesOpenApi(t, '/events', 'get', body);
  t.same(await events(t, api, 'cordelia', queue_id, 0, true), [], 'acknowledged like any event');
});

t.test('idle queues are collected; held or streaming ones are not', async (t) => {
  const { api, server, fx } = await startServer(t, { queueIdleLifetimeMs: 0 });
  const queues = server.context.queues;
  const idle = await register(t, api, 'hamlet');
  const busy = await register(t, api, 'othello');
  const held = poll(api, 'othello', busy.queue_id, -1);
  await until(() => queues.consumers().waiting === 1, 'the poll is held');
  t.equal(queues.sweep(), 1, 'one sweep removes the idle queue only');
  const res = await poll(api, 'hamlet', idle.queue_id, -1, true);
  assertError(t, res, `Bad event queue ID: ${idle.queue_id}`, { code: 'BAD_EVENT_QUEUE_ID' });
  t.equal(res.body.queue_id, idle.queue_id);
  assertMatchesOpenApi(t, '/events', 'get', res.body, { status: '400' });
  await api.post('hamlet', 'typing', { op: 'start', to: [fx.users.othello!.id] });
  t.match(assertSuccess(t, await held).events, [{ type: 'typing' }], 'the held queue lives on');
});

t.test('the periodic sweep runs by itself (one timer, not one per queue)', async (t) => {
  const { api, server } = await startServer(t, { queueIdleLifetimeMs: 0, queueSweepMs: 5 });
  const queues = server.context.queues;
  const { queue_id } = await register(t, api, 'hamlet');
  await until(() => queues.get(queue_id) === undefined, 'the sweep collected the queue');
  assertError(t, await poll(api, 'hamlet', queue_id, -1, true), `Bad event queue ID: ${queue_id}`, {
    code: 'BAD_EVENT_QUEUE_ID',
  });
});

t.test("another user's queue, or an unknown one, is a bad queue id", async (t) => {
  const { api } = await startServer(t);
  const { queue_id } = await register(t, api, 'hamlet');
  for (const [who, id] of [
    ['othello', queue_id],
    ['hamlet', 'hamster'],
  ] as const) {
    const res = await poll(api, who, id, -1, true);
    assertError(t, res, `Bad event queue ID: ${id}`, { code: 'BAD_EVENT_QUEUE_ID' });
    t.equal(res.body.queue_id, id);
  }
  assertError(
    t,
    await api.delete('othello', 'events', { queue_id }),
    'You are not authorized to access this queue',
  );
  const gone = await api.delete('hamlet', 'events', { queue_id: 'hamster' });
  assertError(t, gone, 'Bad event queue ID: hamster', { code: 'BAD_EVENT_QUEUE_ID' });
  assertMatchesOpenApi(t, '/events', 'delete', gone.body, { status: '400' });
  t.same(await events(t, api, 'hamlet', queue_id, -1, true), [], 'the queue is untouched');
});

t.test('DELETE /events removes a queue and finishes its held poll', async (t) => {
  const { api, server } = await startServer(t);
  const queues = server.context.queues;
  const { queue_id } = await register(t, api, 'hamlet');
  const held = poll(api, 'hamlet', queue_id, -1);
  await until(() => queues.consumers().waiting === 1, 'the poll is held');
  const del = await api.delete('hamlet', 'events', { queue_id });
  assertSuccess(t, del);
  assertMatchesOpenApi(t, '/events', 'delete', del.body);
  t.same(assertSuccess(t, await held).events, []);
  assertError(t, await poll(api, 'hamlet', queue_id, -1, true), `Bad event queue ID: ${queue_id}`, {
    code: 'BAD_EVENT_QUEUE_ID',
  });
  assertError(t, await api.delete('hamlet', 'events', {}), "Missing 'queue_id' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
});

t.test('GET /events parameters', async (t) => {
  const { api, fx } = await startServer(t);
  assertError(t, await api.get('hamlet', 'events', {}), "Missing 'queue_id' argument");
  assertError(
    t,
    await api.get('hamlet', 'events', { queue_id: 'x' }),
    "Missing 'last_event_id' argument",
  );
  assertError(
    t,
    await api.get('hamlet', 'events', { queue_id: 'x', last_event_id: 'one' }),
    'last_event_id is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  assertError(
    t,
    await api.get('hamlet', 'events', { queue_id: 'x', last_event_id: 1.5 }),
    'last_event_id is not an integer',
  );
  assertError(
    t,
    await api.get('hamlet', 'events', { queue_id: 'x', last_event_id: -1, dont_block: 'yes' }),
    'dont_block is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  assertError(
    t,
    await api.get(null, 'events', {}),
    'Not logged in: API authentication or user session required',
    {
      status: 401,
      code: 'UNAUTHORIZED',
    },
  );

  const { queue_id } = await register(t, api, 'hamlet');
  const extra = assertSuccess(
    t,
    await api.get('hamlet', 'events', { queue_id, last_event_id: -1, dont_block: true, bogus: 1 }),
  );
  t.same(extra.ignored_parameters_unsupported, ['bogus']);
  assertMatchesOpenApi(t, '/events', 'get', extra);

  // Without a queue_id, dont_block registers a queue from the register parameters.
  const made = assertSuccess(
    t,
    await api.get('hamlet', 'events', { dont_block: true, event_types: ['typing'] }),
  );
  t.same(made.events, []);
  t.type(made.queue_id, 'string');
  assertMatchesOpenApi(t, '/events', 'get', made);
  await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] });
  t.match(await arrivedEvents(t, api, 'hamlet', made.queue_id as string, -1, 1), [
    { type: 'typing' },
  ]);
  assertError(
    t,
    await api.get('polonius', 'events', { dont_block: true, all_public_streams: true }),
    'User not authorized for this query',
  );
});

t.test('a client that goes away while waiting costs nothing and loses nothing', async (t) => {
  const { api, server, fx } = await startServer(t);
  const queues = server.context.queues;
  const { queue_id } = await register(t, api, 'hamlet');
  const sock = net.connect(server.port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `GET /api/v1/events?queue_id=${queue_id}&last_event_id=-1 HTTP/1.1\r\n` +
      `Host: testserver.local\r\nAuthorization: ${basicAuth(fx.users.hamlet!.email, fx.users.hamlet!.api_key)}\r\n\r\n`,
  );
  await until(() => queues.consumers().waiting === 1, 'the poll is held');
  sock.destroy();
  await until(() => queues.consumers().waiting === 0, 'the abandoned poll is released');
  await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] });
  t.match(await arrivedEvents(t, api, 'hamlet', queue_id, -1, 1), [{ id: 0, type: 'typing' }]);
});

t.test('event_types narrows what a queue receives', async (t) => {
  const { api, server, fx } = await startServer(t);
  await addWelcomeBot(server, fx);
  const typingOnly = await register(t, api, 'hamlet', { event_types: ['typing'] });
  const usersOnly = await register(t, api, 'hamlet', { event_types: ['realm_user'] });
  const unknownType = await register(t, api, 'hamlet', { event_types: ['no_such_type'] });
  await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] });
  await api.post('iago', 'users', {
    email: 'n2@zulip.com',
    password: 'pw-123456',
    full_name: 'N2',
  });
  t.same(
    (await arrivedEvents(t, api, 'hamlet', typingOnly.queue_id, -1, 1)).map((e) => e.type),
    ['typing'],
  );
  t.same(
    (await events(t, api, 'hamlet', usersOnly.queue_id, -1, true)).map((e) => e.type),
    ['realm_user'],
  );
  t.same(await events(t, api, 'hamlet', unknownType.queue_id, -1, true), []);
});

t.test('privacy: an event for some users never reaches the others', async (t) => {
  const { api, server, fx } = await startServer(t);
  const zephyr = await seedRealm(server, 'zephyr');
  const zApi = new ApiClient(server.url, zephyr, { host: 'zephyr.testserver.local' });
  await addWelcomeBot(server, fx);
  const cordelia = await register(t, api, 'cordelia');
  const othello = await register(t, api, 'othello');
  const otherRealm = await register(t, zApi, 'hamlet');
  // Typing to othello only.
  await api.post('hamlet', 'typing', { op: 'start', to: [fx.users.othello!.id] });
  t.same(
    (await arrivedEvents(t, api, 'othello', othello.queue_id, -1, 1)).map((e) => e.type),
    ['typing'],
  );
  // A user created in the first realm.
  await api.post('iago', 'users', {
    email: 'new3@zulip.com',
    password: 'pw-123456',
    full_name: 'N3',
  });
  t.same(
    (await events(t, api, 'othello', othello.queue_id, 0, true)).map((e) => e.type),
    ['realm_user', 'user_group', 'user_group'],
  );
  t.same(
    (await events(t, api, 'cordelia', cordelia.queue_id, -1, true)).map((e) => e.type),
    ['realm_user', 'user_group', 'user_group'],
    'a direct typing notification never reaches a non-participant',
  );
  t.same(
    await events(t, zApi, 'hamlet', otherRealm.queue_id, -1, true),
    [],
    "nothing of one realm reaches another realm's users",
  );
});

t.test('the snapshot and the queue agree: each event is in exactly one of them', async (t) => {
  const { api, server } = await startServer(t);
  const N = 12;
  const creations: Promise<unknown>[] = [];
  const registrations: ReturnType<typeof register>[] = [];
  for (let i = 0; i < N; i++) {
    creations.push(
      api.post('iago', 'users', {
        email: `race${i}@zulip.com`,
        password: 'pw-123456',
        full_name: `Race ${i}`,
      }),
    );
    registrations.push(register(t, api, 'hamlet', { event_types: ['realm_user'] }));
  }
  await Promise.all(creations);
  const all = server.context.realms
    .get(api.fx.realmId)!
    .view.activeUsers()
    .map((u) => u.id);
  for (const r of await Promise.all(registrations)) {
    const inSnapshot = (r.body.realm_users as { user_id: number }[]).map((u) => u.user_id);
    const evs = await events(t, api, 'hamlet', r.queue_id, -1, true);
    const added = evs.map((e) => (e.person as { user_id: number }).user_id);
    t.same(
      [...inSnapshot, ...added].sort((a, b) => a - b),
      [...all].sort((a, b) => a - b),
      'every user exactly once: in the snapshot or as a later event',
    );
  }
});

t.test('a realm settings change reaches everyone as update_dict', async (t) => {
  const { api, server, fx } = await startServer(t);
  const realm = server.context.realms.get(fx.realmId)!;
  const q = await register(t, api, 'polonius', { event_types: ['realm'] });
  await realm.ask('realm.update_settings', {
    acting_user_id: fx.users.desdemona!.id,
    settings: { enable_spectator_access: true, waiting_period_threshold: 3 },
  });
  const body = assertSuccess(t, await poll(api, 'polonius', q.queue_id, -1, true));
  t.same(body.events, [
    {
      type: 'realm',
      op: 'update_dict',
      property: 'default',
      data: { enable_spectator_access: true, waiting_period_threshold: 3 },
      id: 0,
    },
  ]);
  assertMatchesOpenApi(t, '/events', 'get', body);
  const again = await register(t, api, 'polonius', { event_types: ['realm'] });
  t.equal(again.body.realm_enable_spectator_access, true);
  t.equal(again.body.realm_waiting_period_threshold, 3);
});
