/**
 * Every answer the server gives is counted in GET /metrics (`confab_http_request_duration_seconds`,
 * by method, route pattern and status), refusals too: the per-address limits' 429
 * (src/http/address-limits.ts) and the rate limits' (src/http/rate-limits.ts), on a request and on
 * an event WebSocket's upgrade, and the shutdown's 503s (src/http/drain.ts) on every route. Before,
 * a refused upgrade (and an accepted one) and every 503 of the shutdown's grace went uncounted: a
 * dashboard saw no errors while the server refused everything.
 *
 * The metrics are the process's (one registry for every server of a test process): each check is
 * on how much a series grew across the step.
 */
import net from 'node:net';
import t from 'tap';
import WebSocket from 'ws';
import { DEFAULT_RATE_LIMITS } from '../../src/config.js';
import { basicAuth, rawRequest } from '../helpers/api.js';
import { openSocket, register, until } from '../helpers/events.js';
import { startServer } from '../helpers/server.js';

const COUNT = 'confab_http_request_duration_seconds_count';

/** The request counts of /metrics, by `method route status`. */
async function counts(url: string): Promise<Map<string, number>> {
  const res = await rawRequest(url, { method: 'GET', path: '/metrics' });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  const out = new Map<string, number>();
  for (const line of res.text.split('\n')) {
    if (!line.startsWith(`${COUNT}{`)) continue;
    const labels = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    out.set(`${labels.method} ${labels.route} ${labels.status}`, Number(line.split(' ').pop()));
  }
  return out;
}

/** The series that grew between two readings, and by how much (GET /metrics's own left out). */
function grown(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of after) {
    if (k.startsWith('GET /metrics ')) continue;
    const d = n - (before.get(k) ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

const HOST = 'testserver.local';

/** A raw request from the loopback address `from`; resolves with its status (0: none). */
function rawFrom(port: number, from: string, bytes: string): Promise<number> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress: from });
    let text = '';
    sock.on('connect', () => sock.write(bytes));
    sock.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m && text.includes('\r\n\r\n')) {
        sock.destroy();
        resolve(Number(m[1]));
      }
    });
    sock.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    sock.on('error', () => {});
  });
}

/** An event WebSocket's upgrade from `from`: 101 once open, or the status it was refused with. */
function upgradeFrom(
  port: number,
  from: string,
  auth: string,
  queueId: string,
): Promise<{ status: number; ws?: WebSocket }> {
  const url = `ws://127.0.0.1:${port}/api/v1/events/socket?queue_id=${queueId}&last_event_id=-1`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [], {
      localAddress: from,
      headers: { host: HOST, authorization: auth },
    });
    ws.once('open', () => resolve({ status: 101, ws }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    ws.once('error', reject);
  });
}

t.test("the per-address limits' 429s: counted, on a request and on an upgrade", async (t) => {
  const ts = await startServer(t, { maxConnectionsPerAddress: 1 });
  const limits = ts.server.context.addressLimits!;
  const hamlet = ts.fx.users.hamlet!;
  const auth = basicAuth(hamlet.email, hamlet.api_key);
  const queues = [];
  for (let i = 0; i < 3; i++) queues.push((await register(t, ts.api, 'hamlet')).queue_id);
  const port = ts.server.port;
  const before = await counts(ts.url);

  // A held poll from 127.0.0.2: its whole share.
  const held = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
  t.teardown(() => held.destroy());
  held.on('error', () => {});
  held.write(
    `GET /api/v1/events?queue_id=${queues[0]}&last_event_id=-1 HTTP/1.1\r\nHost: ${HOST}\r\n` +
      `Authorization: ${auth}\r\n\r\n`,
  );
  await until(() => limits.heldBy('127.0.0.2') === 1, 'the poll is held');
  const get = `GET /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: ${auth}\r\n\r\n`;
  t.equal(await rawFrom(port, '127.0.0.2', get), 429, 'a request from the same address: 429');
  const refused = await upgradeFrom(port, '127.0.0.2', auth, queues[1]!);
  t.equal(refused.status, 429, 'an upgrade from the same address: 429');
  const opened = await upgradeFrom(port, '127.0.0.3', auth, queues[2]!);
  t.equal(opened.status, 101, 'an upgrade from another address: opened');
  opened.ws?.terminate();

  t.same(
    grown(before, await counts(ts.url)),
    {
      'GET /api/v1/users/me 429': 1,
      'GET /api/v1/events/socket 429': 1,
      'GET /api/v1/events/socket 101': 1,
    },
    'each answer counted once, under its route and status (the held poll: not answered yet)',
  );
});

t.test("the rate limits' 429s: counted, on a request and on an upgrade", async (t) => {
  const ts = await startServer(t, {
    rateLimits: { ...DEFAULT_RATE_LIMITS, api_by_user: [[60, 1]], events_by_user: [[60, 1]] },
    rateLimitClock: () => 10_000_000,
  });
  const q = await register(t, ts.api, 'hamlet'); // the API budget's one request
  const before = await counts(ts.url);
  t.equal((await ts.api.get('hamlet', 'users/me')).status, 429, 'over the API budget: 429');
  const first = await openSocket(ts.url, ts.fx.users.hamlet!, {
    queue_id: q.queue_id,
    last_event_id: -1,
  });
  t.ok('client' in first, 'an upgrade within the events budget: opened');
  if ('client' in first) first.client.ws.terminate();
  const second = await openSocket(ts.url, ts.fx.users.hamlet!, {
    queue_id: q.queue_id,
    last_event_id: -1,
  });
  t.equal('status' in second ? second.status : 101, 429, 'over the events budget: 429');
  t.same(
    grown(before, await counts(ts.url)),
    {
      'GET /api/v1/users/me 429': 1,
      'GET /api/v1/events/socket 101': 1,
      'GET /api/v1/events/socket 429': 1,
    },
    'each answer counted once, under its route and status',
  );
});

t.test("the shutdown's 503s: each counted under the route it was for", async (t) => {
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!;
  const auth = basicAuth(hamlet.email, hamlet.api_key);
  const q = await register(t, ts.api, 'hamlet');
  const before = await counts(ts.url);
  // The grace outlasts the few requests below (a failure, not a skip, if it did not: refused).
  const closing = ts.server.close({ graceMs: 5000 });
  const headers = { host: HOST, authorization: auth };
  const asks: [string, string, string?][] = [
    ['GET', '/api/v1/server_settings'],
    ['POST', '/api/v1/messages', 'type=stream&to=Denmark&topic=t&content=late'],
    ['GET', '/user_uploads/2/ab/cdef/a.txt'],
    ['GET', '/no/such/path'],
    ['GET', '/'],
  ];
  for (const [method, path, body] of asks) {
    const res = await rawRequest(ts.url, {
      method,
      path,
      headers:
        body === undefined
          ? headers
          : { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      ...(body === undefined ? {} : { body }),
    });
    t.equal(res.status, 503, `${method} ${path}: 503`);
  }
  const upgrade = await openSocket(ts.url, hamlet, { queue_id: q.queue_id, last_event_id: -1 });
  t.equal('status' in upgrade ? upgrade.status : 101, 503, 'an upgrade: 503');
  t.same(
    grown(before, await counts(ts.url)),
    {
      'GET /api/v1/server_settings 503': 1,
      'POST /api/v1/messages 503': 1,
      'GET /user_uploads/*path_id 503': 1,
      'GET (unmatched) 503': 1,
      'GET / 503': 1,
      'GET /api/v1/events/socket 503': 1,
    },
    "each counted once, under the route pattern the metrics use (a wildcard's by its endpoint's)",
  );
  await closing;
});

t.test("the last resort's 500 (an exception thrown through a route): counted", async (t) => {
  // src/http/unexpected.ts guardRoute answers what a route threw before answering.
  const ts = await startServer(t, { testRoutes: true });
  const before = await counts(ts.url);
  const res = await rawRequest(ts.url, {
    method: 'POST',
    path: '/api/v1/__test/fail/arrival',
    headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'a=1',
  });
  t.equal(res.status, 500, 'answered 500 by the boundary around the route');
  t.same(
    grown(before, await counts(ts.url)),
    { 'POST /api/v1/__test/fail/arrival 500': 1 },
    'counted once, under its route',
  );
});
