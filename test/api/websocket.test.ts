/**
 * WebSocket push (GET /api/v1/events/socket): JSON and msgpack frames, acknowledgements, pending
 * events on open, heartbeats, reconnecting and falling back to long-polling without loss,
 * replacement by a newer consumer, refusals before the upgrade, and backpressure.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { events, mustOpen, openSocket, poll, register, until, type Ev } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test(
  'JSON frames: every new event, shaped like a GET /events response; acks prune',
  async (t) => {
    const { api, server, fx } = await startServer(t);
    const { queue_id } = await register(t, api, 'hamlet');
    const ws = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
    t.equal(ws.protocol, '', 'no subprotocol: JSON text frames');
    await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] });
    const frame = await ws.next();
    assertMatchesOpenApi(t, '/events', 'get', frame);
    t.match(frame, {
      result: 'success',
      msg: '',
      events: [{ id: 0, type: 'typing', op: 'start' }],
    });
    await api.post('othello', 'typing', { op: 'stop', to: [fx.users.hamlet!.id] });
    t.match(await ws.nextEvents(1), [{ id: 1, op: 'stop' }], 'each event as it is appended');
    const rt = server.context.queues.get(queue_id)!;
    t.equal(rt.queue.size, 2, 'sent is not acknowledged');
    ws.ack(1);
    await until(() => rt.queue.size === 0, 'the ack pruned both');
  },
);

t.test('msgpack subprotocol: binary frames both ways', async (t) => {
  const { api, server, fx } = await startServer(t);
  const { queue_id } = await register(t, api, 'hamlet');
  await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] });
  const ws = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 }, [
    'msgpack',
    'json',
  ]);
  t.equal(ws.protocol, 'msgpack');
  const frame = await ws.next(); // decoded from a binary frame by the helper
  t.match(frame, {
    result: 'success',
    msg: '',
    events: [{ id: 0, type: 'typing', sender: { email: 'othello@zulip.com' } }],
  });
  const rt = server.context.queues.get(queue_id)!;
  ws.ack(0, true);
  await until(() => rt.queue.size === 0, 'the msgpack ack pruned');

  const json = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: 0 }, [
    'json',
  ]);
  t.equal(json.protocol, 'json', 'the json subprotocol can be named too');
});

t.test('reconnecting, or going back to long-polling, loses nothing', async (t) => {
  const { api, server, fx } = await startServer(t);
  const queues = server.context.queues;
  const { queue_id } = await register(t, api, 'hamlet');
  // Each typing notice must be taken (a refused one, e.g. a cluster node's 503, would show up
  // below only as a missing event).
  const type = async (op: string) =>
    assertSuccess(t, await api.post('othello', 'typing', { op, to: [fx.users.hamlet!.id] }));

  const first = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
  await type('start');
  t.match(await first.nextEvents(1), [{ id: 0, type: 'typing', op: 'start' }]);
  await first.close(); // without acknowledging
  await until(() => queues.consumers().streaming === 0, 'the socket detached');
  await type('stop'); // while nobody listens

  const second = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
  t.same(
    (await second.nextEvents(2)).map((e: Ev) => [e.id, e.op]),
    [
      [0, 'start'],
      [1, 'stop'],
    ],
    'everything unacknowledged arrives on the new socket',
  );
  await second.close();
  await until(() => queues.consumers().streaming === 0, 'the second socket detached');
  await type('start');
  t.same(
    (await events(t, api, 'hamlet', queue_id, 1)).map((e) => [e.id, e.op]),
    [[2, 'start']],
    'long-polling resumes where the socket left off',
  );
});

t.test('one consumer at a time: a poll or a newer socket replaces a socket', async (t) => {
  const { api, server, fx } = await startServer(t);
  const queues = server.context.queues;
  const { queue_id } = await register(t, api, 'hamlet');
  const a = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
  const b = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
  t.same(await a.closed, { code: 4000, reason: 'replaced' });
  const held = poll(api, 'hamlet', queue_id, -1);
  t.same(await b.closed, { code: 4000, reason: 'replaced' });
  await until(() => queues.consumers().waiting === 1, 'the poll is held');
  await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] });
  t.match(assertSuccess(t, await held).events, [{ type: 'typing' }]);

  // A socket opening finishes a held poll.
  const held2 = poll(api, 'hamlet', queue_id, 0);
  await until(() => queues.consumers().waiting === 1, 'the second poll is held');
  const c = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: 0 });
  t.same(assertSuccess(t, await held2).events, []);
  // Deleting the queue closes its socket.
  assertSuccess(t, await api.delete('hamlet', 'events', { queue_id }));
  t.same(await c.closed, { code: 4001, reason: 'queue deleted' });
});

t.test('idle sockets get heartbeats', async (t) => {
  const { api, server, fx } = await startServer(t, { heartbeatMs: 20, heartbeatJitterMs: 5 });
  const { queue_id } = await register(t, api, 'hamlet');
  const ws = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
  t.same(await ws.nextEvents(1), [{ type: 'heartbeat', id: 0 }]);
  ws.ack(0);
  t.same(await ws.nextEvents(1), [{ type: 'heartbeat', id: 1 }]);
});

t.test('bad acknowledgement frames get an error frame; the socket stays', async (t) => {
  const { api, server, fx } = await startServer(t);
  const { queue_id } = await register(t, api, 'hamlet');
  const ws = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
  ws.ws.send('not json');
  t.same(await ws.next(), { result: 'error', msg: 'Invalid JSON frame', code: 'BAD_REQUEST' });
  ws.ws.send(JSON.stringify({ last_event_id: 'x' }));
  t.same(await ws.next(), {
    result: 'error',
    msg: 'An acknowledgement frame is {"last_event_id": <integer>}',
    code: 'BAD_REQUEST',
  });
  ws.ack(3);
  t.same(await ws.next(), {
    result: 'error',
    msg: 'Event 3 was not in this queue',
    code: 'BAD_REQUEST',
  });
  await api.post('othello', 'typing', { op: 'start', to: [fx.users.hamlet!.id] });
  t.match(await ws.nextEvents(1), [{ id: 0, type: 'typing' }]);
});

t.test('refusals come before the upgrade, as GET /events errors', async (t) => {
  const { api, server, fx } = await startServer(t);
  const { queue_id } = await register(t, api, 'hamlet');
  const hamlet = fx.users.hamlet!;
  const cases: [
    { email: string; api_key: string } | null,
    Record<string, string | number>,
    string[],
    number,
    string,
    string,
  ][] = [
    [
      null,
      { queue_id, last_event_id: -1 },
      [],
      401,
      'UNAUTHORIZED',
      'Not logged in: API authentication or user session required',
    ],
    [
      { email: hamlet.email, api_key: 'wrong' },
      { queue_id, last_event_id: -1 },
      [],
      401,
      'UNAUTHORIZED',
      'Invalid API key',
    ],
    [
      fx.users.othello!,
      { queue_id, last_event_id: -1 },
      [],
      400,
      'BAD_EVENT_QUEUE_ID',
      `Bad event queue ID: ${queue_id}`,
    ],
    [
      hamlet,
      { queue_id: 'nope', last_event_id: -1 },
      [],
      400,
      'BAD_EVENT_QUEUE_ID',
      'Bad event queue ID: nope',
    ],
    [hamlet, { queue_id }, [], 400, 'REQUEST_VARIABLE_MISSING', "Missing 'last_event_id' argument"],
    [
      hamlet,
      { queue_id, last_event_id: 'x' },
      [],
      400,
      'INVALID_JSON',
      'last_event_id is not valid JSON',
    ],
    [
      hamlet,
      { queue_id, last_event_id: 4 },
      [],
      400,
      'BAD_REQUEST',
      'Event 4 was not in this queue',
    ],
    [
      hamlet,
      { queue_id, last_event_id: -1 },
      ['cbor'],
      400,
      'BAD_REQUEST',
      'Unsupported WebSocket subprotocol: cbor',
    ],
  ];
  for (const [user, query, protocols, status, code, msg] of cases) {
    const r = await openSocket(server.url, user, query, protocols);
    if ('client' in r) {
      t.fail(`upgrade accepted: ${msg}`);
      r.client.ws.terminate();
      continue;
    }
    t.equal(r.status, status, msg);
    t.match(r.body, { result: 'error', code, msg });
  }
  t.equal(server.context.queues.consumers().streaming, 0);
  assertError(
    t,
    await api.get('hamlet', '/api/v1/events/socket', { queue_id, last_event_id: -1 }),
    'This URL is a WebSocket: connect with an Upgrade request',
  );
});

t.test(
  'a socket that stops reading is closed past the bound; its queue keeps everything',
  async (t) => {
    const { api, server, fx } = await startServer(t, { wsMaxBackpressureBytes: 64 * 1024 });
    const { queue_id } = await register(t, api, 'hamlet');
    const ws = await mustOpen(t, server.url, fx.users.hamlet!, { queue_id, last_event_id: -1 });
    // Stop reading: the kernel buffers fill, then the server's send buffer grows.
    (ws.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const big = 'x'.repeat(256 * 1024);
    // Until the server closes it: directly, the socket buffers on loopback hold about 10 MiB;
    // through the cluster's nginx (test/cluster/api-subset-b) two more buffers are in between,
    // up to about 40 MiB where tcp_rmem's maximum is 32 MiB (16 MiB was sometimes all taken in,
    // the server never saw the backpressure). At most 240 (60 MiB): under the queue's 64 MiB.
    let N = 0;
    while (N < 240 && server.context.queues.consumers().streaming > 0) {
      server.context.publisher.publish(fx.realmId, [
        { event: { type: 'bench_blob', n: N++, blob: big }, users: [fx.users.hamlet!.id] },
      ]);
      await new Promise((r) => setImmediate(r)); // let each flush run
    }
    t.comment(`closed after ${N} events of 256 KiB`);
    await until(
      () => server.context.queues.consumers().streaming === 0,
      'the server closed the socket',
    );
    (ws.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await ws.closed;
    t.ok([4002, 1006].includes(closed.code), `closed for backpressure (${closed.code})`);
    const evs = await events(t, api, 'hamlet', queue_id, -1, true);
    t.same(
      evs.map((e) => e.n),
      Array.from({ length: N }, (_, i) => i),
      'the queue still holds every event',
    );
  },
);
