/**
 * Running Confab: GET /health, GET /metrics (Prometheus text), structured request logs, and the
 * data directory's lock. Against the real server (in-process); docs/operations.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createServer } from '../../src/server.js';
import { createLogger, setLogger } from '../../src/observability/log.js';
import { DataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/storage/data-lock.js';
import { assertSuccess, rawRequest } from '../helpers/api.js';
import { mustOpen, poll, register, until } from '../helpers/events.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { capturingLogger } from '../helpers/log.js';
import { startServer } from '../helpers/server.js';

/** A logger whose lines the test reads (JSON objects), at `level`. */
/** The value of a metric sample line (`name{labels} value`), or undefined. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const set = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) return Number(m[3]);
  }
  return undefined;
}

t.test('GET /health: 200 with a small body, whatever the Host, without credentials', async (t) => {
  // The event loop's lag is the next test's subject: here a loaded machine's (the test process
  // shares it with its server) must not make the server unhealthy.
  const { url } = await startServer(t, { healthMaxLagMs: 60_000 });
  for (const host of ['testserver.local', 'nosuchrealm.example.org', '']) {
    const res = await rawRequest(url, {
      method: 'GET',
      path: '/health',
      headers: host === '' ? {} : { host },
    });
    t.equal(res.status, 200, `Host ${host || '(none)'}`);
    t.match(res.body, { status: 'ok', database: 'ok', shutting_down: false });
    t.type(res.body.event_loop_lag_ms, 'number');
    t.equal(res.headers['cache-control'], 'no-store');
  }
});

t.test(
  'GET /health: 503 when the event loop was blocked, and when the database fails',
  async (t) => {
    const { url, server } = await startServer(t, { healthMaxLagMs: 150 });
    // Block the event loop well past the limit; the next health check sees it. The monitor's
    // 500 ms tick then fires late by the block less the time since its last firing: at least
    // 300 ms for an 800 ms block (a 600 ms block could show as little as 100 ms).
    const until = Date.now() + 800;
    while (Date.now() < until) {
      // busy
    }
    const blocked = await rawRequest(url, { method: 'GET', path: '/health' });
    t.equal(blocked.status, 503, 'unhealthy right after a blocked event loop');
    t.equal(blocked.body.status, 'unavailable');
    t.ok((blocked.body.event_loop_lag_ms as number) > 150, 'the lag is reported');

    const store = server.store;
    const ping = store.ping.bind(store);
    store.ping = () => false;
    t.teardown(() => (store.ping = ping));
    const noDb = await rawRequest(url, { method: 'GET', path: '/health' });
    t.equal(noDb.status, 503);
    t.equal(noDb.body.database, 'unavailable');
  },
);

t.test('GET /health answers 503 while shutting down', async (t) => {
  const { server } = await startServer(t);
  const url = server.url;
  // A held poll keeps the shutdown going long enough to ask.
  const closing = server.close();
  const res = await rawRequest(url, { method: 'GET', path: '/health' }).catch(() => null);
  // The listen socket closes first: either refused, or answered 503 — never 200.
  if (res !== null) t.equal(res.status, 503);
  else t.pass('connection refused once shutting down');
  await closing;
});

t.test('GET /metrics: Prometheus text with the server’s figures', async (t) => {
  const { url, api, fx } = await startServer(t);
  // Traffic for the figures: a held long-poll, a WebSocket-less queue, some messages.
  const q = await register(t, api, 'hamlet', { event_types: ['message'] });
  const held = api.get('hamlet', 'events', {
    queue_id: q.queue_id,
    last_event_id: q.last_event_id,
  });
  await api.post('iago', 'users/me/subscriptions', {
    subscriptions: [{ name: 'metrics' }],
    principals: [fx.users.hamlet!.id],
  });
  for (let i = 0; i < 5; i++) await sendChannelMessage(api, 'iago', 'metrics', 'm', `message ${i}`);
  assertSuccess(t, await held, 'the held poll is answered');
  const polled = api.get('hamlet', 'events', {
    queue_id: q.queue_id,
    last_event_id: q.last_event_id,
  });
  // Wait for the poll to be held (it has events: it is answered at once unless all are acked).
  await polled;

  const res = await rawRequest(url, { method: 'GET', path: '/metrics' });
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const text = res.text;
  for (const name of [
    'process_cpu_seconds_total',
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
    'nodejs_gc_duration_seconds_count',
    'confab_http_request_duration_seconds_bucket',
    'confab_http_requests_in_flight',
    'confab_commit_batch_size_bucket',
    'confab_commit_duration_seconds_count',
    'confab_checkpoints_total',
    'confab_wal_commit_holds_total',
    'confab_wal_emptied_total',
    'confab_event_queues',
    'confab_event_queue_events',
    'confab_event_queue_bytes',
    'confab_event_queue_memory_bytes',
    'confab_event_queue_memory_budget_bytes',
    'process_resident_memory_bytes',
    'confab_long_polls_held',
    'confab_websockets_open',
    'confab_events_delivered_total',
    'confab_render_pool_queue',
    'confab_rate_limit_refusals_total',
  ]) {
    t.match(text, new RegExp(`^${name}[ {]`, 'm'), `${name} is exported`);
  }
  t.ok(
    (sample(text, 'confab_http_request_duration_seconds_count', {
      method: 'POST',
      route: '/api/v1/messages',
      status: '200',
    }) ?? 0) >= 5,
    'requests are counted by route pattern and status',
  );
  t.notMatch(text, /route="\/api\/v1\/messages\/\d/, 'routes are patterns, never paths');
  t.ok((sample(text, 'confab_commit_batch_size_count') ?? 0) >= 5, 'commits are counted');
  t.ok((sample(text, 'confab_event_queues') ?? 0) >= 1, 'the registered queue is counted');
  t.ok((sample(text, 'confab_events_delivered_total') ?? 0) >= 5, 'delivered events are counted');
  // The queue memory budget's estimate, beside the budget and the process's resident memory.
  const estimate = sample(text, 'confab_event_queue_memory_bytes') ?? NaN;
  t.ok(estimate > 0, `what the queue holds is counted (${estimate} bytes)`);
  t.equal(sample(text, 'confab_event_queue_memory_budget_bytes'), 1024 * 1024 * 1024);
  t.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > estimate, 'beside the RSS');
  // Counted without blocking the event loop (src/observability/metrics.ts), and still counted.
  const fds = sample(text, 'process_open_fds') ?? 0;
  t.ok(fds >= 3 && fds === Math.floor(fds), `open file descriptors counted (${fds})`);
  t.equal(text.match(/^process_open_fds /gm)?.length, 1, 'once');
});

t.test(
  'confab_event_delivery_seconds: one observation per held poll answered or socket fed by a ' +
    'fan-out, none for a poll that finds its events waiting',
  async (t) => {
    const { server, url, api, fx } = await startServer(t);
    const deliveries = async () => {
      const res = await rawRequest(url, { method: 'GET', path: '/metrics' });
      return {
        count: sample(res.text, 'confab_event_delivery_seconds_count') ?? NaN,
        sum: sample(res.text, 'confab_event_delivery_seconds_sum') ?? NaN,
        inf: sample(res.text, 'confab_event_delivery_seconds_bucket', { le: '+Inf' }) ?? NaN,
      };
    };
    await api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'delivery' }],
      principals: [fx.users.hamlet!.id, fx.users.othello!.id],
    });
    const consumers = () => server.context.queues.consumers();
    const polled = await register(t, api, 'hamlet', { event_types: ['message'] });
    const streamed = await register(t, api, 'othello', { event_types: ['message'] });
    const before = await deliveries();

    // A held poll and a socket, each answered by the fan-out of one message.
    const held = poll(api, 'hamlet', polled.queue_id, polled.last_event_id);
    await until(() => consumers().waiting === 1, 'the poll is held');
    const ws = await mustOpen(t, url, fx.users.othello!, {
      queue_id: streamed.queue_id,
      last_event_id: streamed.last_event_id,
    });
    await until(() => consumers().streaming === 1, 'the socket is attached');
    await sendChannelMessage(api, 'iago', 'delivery', 'd', 'one');
    const answer = assertSuccess(t, await held, 'the held poll is answered');
    t.equal((answer.events as unknown[]).length, 1);
    t.equal((await ws.nextEvents(1)).length, 1, 'the socket is fed');
    const pushed = await deliveries();
    t.equal(pushed.count - before.count, 2, 'two deliveries observed: the poll and the frame');
    t.equal(pushed.inf - before.inf, 2, 'in the histogram’s buckets');
    t.ok(pushed.sum >= before.sum, 'their time is added');

    // A message while no poll is held: the next poll finds it waiting, which is not a delivery
    // the server pushed (the socket's frame is).
    await sendChannelMessage(api, 'iago', 'delivery', 'd', 'two');
    t.equal((await ws.nextEvents(1)).length, 1);
    const waiting = assertSuccess(
      t,
      await poll(api, 'hamlet', polled.queue_id, (answer.events as { id: number }[])[0]!.id),
      'the next poll',
    );
    t.equal((waiting.events as unknown[]).length, 1, 'it finds the message waiting');
    const after = await deliveries();
    t.equal(after.count - pushed.count, 1, 'only the frame is observed');
  },
);

t.test(
  'GET /metrics past 64 KiB (its help texts are not all ASCII): whole, and the server goes on',
  async (t) => {
    // The text was sent with its length in UTF-16 units as its size: past 64 KiB (sent in slices)
    // the responder never finished, and the server stopped answering anything. /health at the end
    // says the server answers; its event loop's lag is not the subject (the test process shares
    // it, and a loaded machine can stall it past the default second): a limit out of the way.
    const { url } = await startServer(t, { healthMaxLagMs: 60_000 });
    const routes = [
      'users/me',
      'messages',
      'streams',
      'users',
      'realm/emoji',
      'realm/filters',
      'user_groups',
      'drafts',
      'attachments',
      'export/realm',
      'scheduled_messages',
      'realm/linkifiers',
      'users/me/subscriptions',
      'alert_words',
      'saved_snippets',
      'realm/presence',
      'users/me/muted_users',
      'realm/profile_fields',
      'invites',
      'realm/playgrounds',
    ];
    let res = await rawRequest(url, { method: 'GET', path: '/metrics' });
    // Each route, method and status is a series of its own: the text grows past 64 KiB.
    for (const route of routes) {
      if (Buffer.byteLength(res.text) > 70_000) break;
      for (const method of ['GET', 'POST', 'PATCH', 'DELETE'])
        await rawRequest(url, { method, path: `/api/v1/${route}` });
      res = await rawRequest(url, { method: 'GET', path: '/metrics' });
    }
    const bytes = Buffer.byteLength(res.text);
    t.ok(bytes > 65_536, `the text is past 64 KiB (${bytes} bytes)`);
    t.equal(res.status, 200);
    t.equal(
      Number(res.headers['content-length']),
      bytes,
      'its Content-Length is its size in bytes',
    );
    t.match(res.text, /’/, 'with a non-ASCII help text');
    t.match(res.text, /\n[a-z_]+(\{[^}]*\})? \S+\n$/, 'whole, to its last sample');
    const health = await rawRequest(url, { method: 'GET', path: '/health' });
    t.equal(health.status, 200, 'the server still answers');
  },
);

t.test(
  'GET /metrics from a non-local client: 403 without a token, bearer token with one',
  async (t) => {
    const open = await startServer(t);
    const proxied = await rawRequest(open.url, {
      method: 'GET',
      path: '/metrics',
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    t.equal(proxied.status, 403, 'a request through a proxy is not local');
    t.same(proxied.body, {
      result: 'error',
      msg: 'Metrics are served only to local clients.',
      code: 'UNAUTHORIZED',
    });
    t.equal(proxied.headers['www-authenticate'], undefined);

    const token = 'metrics-token-0123456789abcdef';
    const { url } = await startServer(t, {
      metricsToken: token,
      trustedProxies: ['127.0.0.1'],
    });
    const viaProxy = (headers: Record<string, string>) =>
      rawRequest(url, {
        method: 'GET',
        path: '/metrics',
        headers: { 'x-forwarded-for': '203.0.113.7', ...headers },
      });
    const noToken = await viaProxy({});
    t.equal(noToken.status, 401, 'no token');
    t.same(noToken.body, {
      result: 'error',
      msg: 'A valid metrics token is required.',
      code: 'UNAUTHORIZED',
    });
    t.equal(noToken.headers['www-authenticate'], 'Bearer');
    t.equal(noToken.headers['content-type'], 'application/json');
    t.equal((await viaProxy({ authorization: 'Bearer wrong-token-0000000000' })).status, 401);
    const ok = await viaProxy({ authorization: `Bearer ${token}` });
    t.equal(ok.status, 200, 'the configured token opens it');
    t.match(ok.text, /^confab_http_requests_in_flight /m);
    const localViaTrustedProxy = await rawRequest(url, {
      method: 'GET',
      path: '/metrics',
      headers: { 'x-forwarded-for': '127.0.0.1' },
    });
    t.equal(localViaTrustedProxy.status, 200, 'a local client behind a trusted proxy is local');
  },
);

t.test(
  'a log line per request: request id, method, route, status, time, user, realm',
  async (t) => {
    const { logger, lines } = capturingLogger();
    setLogger(logger);
    t.teardown(() => setLogger(createLogger()));
    const { api, fx } = await startServer(t, { logRequests: 'all', testRoutes: true });
    await api.get('hamlet', 'users/me');
    await api.get('hamlet', 'messages/123456/history');
    await api.get(null, '/api/v1/no/such/endpoint');
    const failing = await api.get(null, '/api/v1/__test/fail');
    t.equal(failing.status, 500);
    const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const r of requests) {
      t.type(r.time, 'string');
      t.type(r.level, 'string');
      t.type(r.msg, 'string');
    }
    const reqLines = requests.filter((r) => r.msg === 'request');
    const me = reqLines.find((r) => r.url === '/api/v1/users/me');
    t.match(me, {
      level: 'info',
      method: 'GET',
      status: 200,
      userId: fx.users.hamlet!.id,
      realmId: fx.realmId,
      reqId: /^[a-z0-9]+-[a-z0-9]+$/,
    });
    t.type(me?.ms, 'number');
    t.ok(
      reqLines.some((r) => r.url === '/api/v1/messages/:message_id/history'),
      'the route pattern, not the path',
    );
    t.ok(
      reqLines.some((r) => r.status === 404 && r.url === '(unmatched)'),
      '404s are logged',
    );
    const err = requests.find((r) => r.msg === 'internal server error');
    t.match(
      err,
      { level: 'error', reqId: /./, err: { stack: /deliberate failure/ } },
      'a 500 is logged with its stack',
    );
    t.ok(reqLines.some((r) => r.status === 500 && r.url === '/api/v1/__test/fail'));
    const ids = reqLines.map((r) => r.reqId);
    t.equal(new Set(ids).size, ids.length, 'request ids are unique');
  },
);

t.test('the data directory lock: a second server on the same directory is refused', async (t) => {
  const { dataDir } = await startServer(t);
  let refused: unknown = null;
  try {
    const second = await createServer({ host: '127.0.0.1', port: 0, dataDir });
    await second.close();
  } catch (err) {
    refused = err;
  }
  t.ok(refused instanceof DataDirLockedError, 'a second server is refused');
  t.match((refused as Error).message, /in use by another process \(server, pid \d+/);
});

t.test('assertFree: whether the lock is held, writing nothing', (t) => {
  const dataDir = t.testdir();
  DataDirLock.assertFree(dataDir);
  t.notOk(fs.existsSync(path.join(dataDir, LOCK_FILE)), 'no lock file made');
  const lock = DataDirLock.acquire(dataDir, 'server');
  const bytes = fs.readFileSync(path.join(dataDir, LOCK_FILE));
  t.throws(
    () => DataDirLock.assertFree(dataDir),
    DataDirLockedError,
    'held: refused, the holder named',
  );
  t.ok(fs.readFileSync(path.join(dataDir, LOCK_FILE)).equals(bytes), 'the lock file as it was');
  lock.release();
  DataDirLock.assertFree(dataDir);
  t.end();
});

t.test('the lock is released by a clean shutdown', async (t) => {
  const dataDir = t.testdir();
  const first = await createServer({ host: '127.0.0.1', port: 0, dataDir, scryptN: 1024 });
  await first.close();
  // The lag limit out of the way, as above: the directory is the subject.
  const second = await createServer({
    host: '127.0.0.1',
    port: 0,
    dataDir,
    scryptN: 1024,
    healthMaxLagMs: 60_000,
  });
  t.teardown(() => second.close());
  const res = await rawRequest(second.url, { method: 'GET', path: '/health' });
  t.equal(res.status, 200, 'the directory can be served again');
});
