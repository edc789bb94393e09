/**
 * The shutdown's grace (src/http/drain.ts, docs/operations.md): the real server as a child
 * process, busy with a write load, gets SIGTERM at the instant 40 clients send a message each
 * over new keep-alive connections. None of them sees a reset or a refusal: each is answered, 200
 * (taken before the signal) or 503 in the API's error format with `Retry-After` and
 * `Connection: close`. (Before the grace the listening socket closed at once: this test failed
 * in every run, the 40 refused, or some reset by the kernel, still in its backlog (5 and 9 of 40
 * in two runs), and the rest refused.) During the grace a new connection, a new request on a
 * connection kept alive from before and a WebSocket upgrade are answered 503 (GET /health with
 * its own 503 report); after it the port refuses connections, while a request in flight since
 * before the signal is still answered with success, and the exit status is 0. GET /metrics is
 * answered during the grace as before the signal (before, it was refused 503 with the API).
 * Those run with the server's default grace; SHUTDOWN_GRACE_MS (src/config.ts) lengthens it (3 s:
 * 503s until then, then refused), 0 closes the port at once, and a bad value stops the start.
 */
import http from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { SHUTDOWN_RETRY_AFTER_S } from '../../src/http/drain.js';
import { DEFAULT_SHUTDOWN_GRACE_MS as SHUTDOWN_GRACE_MS } from '../../src/config.js';
import { spawnChild, startChild } from '../helpers/child-server.js';
import { prepare, seed, writeLoad, type User } from '../helpers/crash-load.js';

t.setTimeout(120_000);

type Outcome =
  { status: number; headers: http.IncomingHttpHeaders; body: string } | { error: string };

const authOf = (u: User) => 'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64');

/** A message sent over `agent` (a new keep-alive connection each when the agent has none free). */
function send(
  url: string,
  user: User,
  agent: http.Agent,
  n: number,
  onConnect = () => {},
): Promise<Outcome> {
  const body = new URLSearchParams({
    type: 'stream',
    to: 'load',
    topic: 'grace',
    content: `message ${n}`,
  }).toString();
  return new Promise((resolve) => {
    const req = http.request(
      `${url}/api/v1/messages`,
      {
        method: 'POST',
        agent,
        headers: {
          Authorization: authOf(user),
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        res.on('error', (err: NodeJS.ErrnoException) =>
          resolve({ error: err.code ?? err.message }),
        );
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.on('socket', (sock) => sock.once('connect', onConnect));
    req.end(body);
  });
}

/** A raw keep-alive connection: `ask` writes a request and resolves with the answer's text. */
async function rawConnection(url: string) {
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  let text = '';
  let waiter: (() => void) | null = null;
  sock.on('data', (c: Buffer) => {
    text += c.toString();
    waiter?.();
  });
  const ended = new Promise<string>((resolve) => {
    sock.on('end', () => resolve('end'));
    sock.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  await new Promise<void>((resolve) => sock.on('connect', () => resolve()));
  return {
    sock,
    ended,
    /** Writes `head`; resolves once a whole answer with a Content-Length body is in. */
    ask: (head: string) => {
      text = '';
      sock.write(head);
      return new Promise<string>((resolve) => {
        waiter = () => {
          const end = text.indexOf('\r\n\r\n');
          const len = /content-length: (\d+)/i.exec(text)?.[1];
          if (end >= 0 && len !== undefined && text.length >= end + 4 + Number(len)) {
            waiter = null;
            resolve(text);
          }
        };
      });
    },
  };
}

function connectOutcome(url: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port), u.hostname);
    sock.on('connect', () => {
      sock.destroy();
      resolve('connected');
    });
    sock.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

t.test('SIGTERM under 40 concurrent sends: each is answered, none reset', async (t) => {
  const dataDir = t.testdir();
  const users = seed(dataDir);
  // The server's default grace (the helper's children have a short one).
  const server = await startChild(dataDir, { LOG_FORMAT: 'json', SHUTDOWN_GRACE_MS: undefined });
  t.teardown(() => void server.kill('SIGKILL'));
  await prepare(server.url, users);
  const { host } = new URL(server.url);
  const user = users[1]!;

  // A connection kept alive from before the signal.
  const kept = await rawConnection(server.url);
  t.teardown(() => kept.sock.destroy());
  const get = `GET /api/v1/users/me HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authOf(user)}\r\n\r\n`;
  t.match(await kept.ask(get), /^HTTP\/1\.1 200 /, 'a keep-alive connection, answered before');
  // A request in flight across the whole shutdown: its head and half its body are in.
  const body = 'type=stream&to=load&topic=late&content=in%20flight';
  const half = await rawConnection(server.url);
  t.teardown(() => half.sock.destroy());
  const halfAnswer = half.ask(
    `POST /api/v1/messages HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authOf(user)}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n` +
      body.slice(0, 10),
  );
  // Both have reached the server once a later request is answered (one thread, in order).
  t.match(await kept.ask(get), /^HTTP\/1\.1 200 /, 'barrier');

  const agent = new http.Agent({ keepAlive: true, maxSockets: 40 });
  t.teardown(() => agent.destroy());
  // The instant of the signal: a write load keeps the server busy, and 40 clients connect as
  // it comes (into the kernel's backlog, most of them, before the server takes them).
  const load = writeLoad(server.url, users, 8);
  await load.reached(50);
  const signalled = Date.now();
  server.child.kill('SIGTERM');
  load.stop();
  const sending = Array.from({ length: 40 }, (_, i) => send(server.url, user, agent, i));
  const outcomes = await Promise.all(sending);
  const errors = outcomes.filter((o) => 'error' in o).map((o) => o.error);
  t.same(errors, [], 'no send ended in an error (a reset, a hang-up)');
  const statuses = outcomes.map((o) => ('status' in o ? o.status : 0));
  t.ok(
    statuses.every((s) => s === 200 || s === 503),
    `each is answered 200 or 503 (${statuses.filter((s) => s === 200).length} 200, ${statuses.filter((s) => s === 503).length} 503)`,
  );
  const unlike503 = outcomes.filter((o) => {
    if (!('status' in o) || o.status !== 503) return false;
    const body = JSON.parse(o.body) as Record<string, unknown>;
    return !(
      body.result === 'error' &&
      body.code === 'BAD_REQUEST' &&
      /shutting down/.test(String(body.msg)) &&
      body['retry-after'] === SHUTDOWN_RETRY_AFTER_S &&
      o.headers['retry-after'] === String(SHUTDOWN_RETRY_AFTER_S) &&
      o.headers.connection === 'close'
    );
  });
  t.same(unlike503, [], "each 503 in the API's error format, with Retry-After, Connection: close");

  await server.waitFor(/SIGTERM: shutting down/);
  if (Date.now() - signalled < SHUTDOWN_GRACE_MS - 300) {
    const refused = await kept.ask(get);
    t.match(refused, /^HTTP\/1\.1 503 /, 'a new request on a kept-alive connection: 503');
    t.match(refused, /\r\nConnection: close\r\n/i, 'with Connection: close');
    t.equal(await kept.ended, 'end', 'and the server closes that connection (no reset)');
    const fresh = await send(server.url, user, new http.Agent(), 99);
    t.equal('status' in fresh ? fresh.status : fresh.error, 503, 'a new connection: 503');
    const upgrade = await rawConnection(server.url);
    t.teardown(() => upgrade.sock.destroy());
    t.match(
      await upgrade.ask(
        `GET /api/v1/events/socket HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authOf(user)}\r\n` +
          'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n' +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      ),
      /^HTTP\/1\.1 503 /,
      'a WebSocket upgrade: 503',
    );
    const health = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      http
        .get(`${server.url}/health`, { agent: new http.Agent() }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        })
        .on('error', reject);
    });
    t.equal(health.status, 503, 'GET /health: 503');
    t.match(JSON.parse(health.body), { shutting_down: true }, 'with its own report');
  } else {
    t.comment('the grace was nearly over before the checks of it could run (a slow machine)');
  }

  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(0, signalled + SHUTDOWN_GRACE_MS + 1000 - Date.now())),
  );
  t.equal(
    await connectOutcome(server.url),
    'ECONNREFUSED',
    'after the grace the port refuses connections',
  );
  half.sock.write(body.slice(10));
  t.match(await halfAnswer, /^HTTP\/1\.1 200 /, 'the request in flight is answered with success');
  t.equal((await server.exited).code, 0, 'exit code 0');
  await load.done;
});

/** A GET by a new connection: its status, headers and body. */
function getOnce(url: string): Promise<Outcome> {
  return new Promise((resolve) => {
    http
      .get(url, { agent: new http.Agent() }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      })
      .on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

t.test('GET /metrics during the grace: still scraped, as long as the server listens', async (t) => {
  // A scraper's last scrape of a stopping process is its last word on it (the counters up to the
  // end): Prometheus' own exporters answer until the process is gone. The API's routes are
  // refused meanwhile; /health answers its 503 report.
  const server = await startChild(t.testdir(), {
    LOG_FORMAT: 'json',
    SHUTDOWN_GRACE_MS: undefined,
  });
  t.teardown(() => void server.kill('SIGKILL'));
  const before = await getOnce(`${server.url}/metrics`);
  t.equal('status' in before ? before.status : before.error, 200, 'scraped before the signal');
  const signalled = Date.now();
  server.child.kill('SIGTERM');
  await server.waitFor(/SIGTERM: shutting down/);
  const [metrics, api] = [
    await getOnce(`${server.url}/metrics`),
    await getOnce(`${server.url}/api/v1/server_settings`),
  ];
  if (Date.now() - signalled < SHUTDOWN_GRACE_MS - 300) {
    t.equal('status' in metrics ? metrics.status : metrics.error, 200, 'GET /metrics: 200');
    t.match('status' in metrics ? metrics.body : '', /^# HELP /m, 'with the Prometheus text');
    t.match(
      'status' in metrics ? metrics.headers['content-type'] : '',
      /^text\/plain/,
      "in Prometheus' text format",
    );
    t.equal('status' in api ? api.status : api.error, 503, 'an API request meanwhile: 503');
  } else {
    t.comment('the grace was nearly over before the checks of it could run (a slow machine)');
  }
  t.equal((await server.exited).code, 0, 'exit code 0');
});

/** Requests by new connections every `everyMs` until the port refuses one; each with its time. */
async function pollUntilRefused(url: string, since: number, everyMs: number, limitMs: number) {
  const seen: { at: number; outcome: number | string }[] = [];
  while (Date.now() - since < limitMs) {
    const o = await getOnce(`${url}/api/v1/server_settings`);
    seen.push({ at: Date.now() - since, outcome: 'status' in o ? o.status : o.error });
    if ('error' in o && o.error === 'ECONNREFUSED') break;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return seen;
}

t.test('SHUTDOWN_GRACE_MS=3000: the stop answers 503 for about 3 s, then refuses', async (t) => {
  // Twice the default: on the old code (the setting ignored, 1.5 s) the port refused by ~1.5 s.
  const graceMs = 3000;
  const server = await startChild(t.testdir(), {
    LOG_FORMAT: 'json',
    SHUTDOWN_GRACE_MS: String(graceMs),
  });
  t.teardown(() => void server.kill('SIGKILL'));
  const signalled = Date.now();
  server.child.kill('SIGTERM');
  await server.waitFor(/SIGTERM: shutting down/);
  const seen = await pollUntilRefused(server.url, signalled, 50, graceMs + 10_000);
  const refusedAt = seen.at(-1)!;
  t.equal(refusedAt.outcome, 'ECONNREFUSED', `the port refuses connections in the end`);
  // The timer starts once the signal is handled, after `signalled`: never a refusal before it.
  t.ok(refusedAt.at >= graceMs - 100, `not before the grace (${refusedAt.at} ms after the signal)`);
  // Loose: a busy machine (CI's two tap jobs) delays the timer and this poll.
  t.ok(refusedAt.at < graceMs + 5000, `soon after it (${refusedAt.at} ms)`);
  const answered = seen.slice(0, -1);
  // A connection taken at the instant the listener closes may be reset (src/http/drain.ts).
  const last = answered.at(-1)?.outcome === 'ECONNRESET' ? answered.slice(0, -1) : answered;
  t.same(
    last.filter((s) => s.outcome !== 503),
    [],
    `until then each request is answered 503 (${last.length} of them)`,
  );
  const late503 = last.filter((s) => s.outcome === 503 && s.at > SHUTDOWN_GRACE_MS + 500);
  t.ok(late503.length > 0, `503 still well after the default grace (${late503.length} requests)`);
  t.equal((await server.exited).code, 0, 'exit code 0');
  const lines = server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(
    lines.find((l) => typeof l.refused === 'number'),
    { graceMs, msg: /requests answered 503 \(shutting down\)/ },
    'the log says the grace it kept',
  );
});

t.test('SHUTDOWN_GRACE_MS=0: the port closes at once, exit 0', async (t) => {
  const server = await startChild(t.testdir(), { LOG_FORMAT: 'json', SHUTDOWN_GRACE_MS: '0' });
  t.teardown(() => void server.kill('SIGKILL'));
  server.child.kill('SIGTERM');
  await server.waitFor(/SIGTERM: shutting down/);
  const since = Date.now();
  const seen = await pollUntilRefused(server.url, since, 20, 10_000);
  const refusedAt = seen.at(-1)!;
  t.equal(refusedAt.outcome, 'ECONNREFUSED', 'the port refuses connections');
  // Loose: the default grace would keep it open 1.5 s after the line.
  t.ok(refusedAt.at < 1000, `well before the default grace's end (${refusedAt.at} ms)`);
  t.equal((await server.exited).code, 0, 'exit code 0');
});

t.test('a bad SHUTDOWN_GRACE_MS stops the start, saying so in one line', async (t) => {
  const dir = t.testdir();
  const runs = ['-1', '60001', '1.5', 'soon'].map((value, i) => {
    const dataDir = path.join(dir, `data-${i}`);
    const run = spawnChild(dataDir, { SHUTDOWN_GRACE_MS: value });
    // A start that takes the value (the code before the setting) would serve until killed.
    t.teardown(() => void run.kill('SIGKILL'));
    return { value, dataDir, run };
  });
  const limit = new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000).unref());
  for (const { value, dataDir, run } of runs) {
    const exit = await Promise.race([run.exited, limit]);
    t.equal(exit?.code, 1, `${value}: exit status 1 (not still running after 30 s)`);
    t.equal(
      run.output(),
      'Confab cannot start: bad environment: SHUTDOWN_GRACE_MS: SHUTDOWN_GRACE_MS is a whole ' +
        'number of milliseconds, 0 to 60000 (the default is 1500; 0: stop listening at once)\n',
      `${value}: says why, in one line`,
    );
    t.notOk(fs.existsSync(dataDir), `${value}: no data directory made`);
  }
});
