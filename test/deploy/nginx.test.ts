/**
 * The deployment recipe end to end: Debian's nginx, configured with the shipped
 * deploy/nginx/confab.conf (only the server name, the ports and the certificate paths are
 * substituted), in front of the real server run as `npm start` runs it. Through nginx: TLS, the
 * HTTP → HTTPS redirect, long-polls (one answered by an event, one held until the server's
 * heartbeat), the WebSocket channel, the web app's page and a browser's session (a Secure cookie,
 * the browsers' WebSocket), uploads above nginx's default body size and Confab's own
 * refusal of a file over its limit, and X-Forwarded-For read only from the trusted proxy (the
 * per-address rate limit and the loopback-only /metrics), odd but legal HTTP answered by nginx
 * (header names with `_`, unknown methods, absolute-form targets, `OPTIONS *`, HTTP/1.0). The
 * systemd unit is checked with
 * `systemd-analyze verify` where systemd is installed.
 *
 * Skipped, with a message, only when nginx is not installed (`.ci/run` installs it on Debian).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { ports } from '../../src/cluster/local.js';
import { ApiClient, assertError, assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { firstOwner, startChild } from '../helpers/child-server.js';
import { SocketClient, type Ev } from '../helpers/events.js';
import type { Fixture } from '../helpers/fixtures.js';
import { download, upload } from '../helpers/uploads.js';

t.setTimeout(300_000);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HOST = 'chat.test';

function findNginx(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin'];
  for (const d of dirs) {
    const p = path.join(d, 'nginx');
    if (d !== '' && fs.existsSync(p)) return p;
  }
  return null;
}

/** The shipped site file with names, ports and certificate paths replaced (each must occur). */
function siteConfig(dir: string, upstream: string, httpPort: number, httpsPort: number): string {
  let conf = fs.readFileSync(path.join(root, 'deploy/nginx/confab.conf'), 'utf8');
  const swap = (from: string | RegExp, to: string) => {
    const next = conf.replace(from, to);
    if (next === conf) throw new Error(`deploy/nginx/confab.conf no longer has ${String(from)}`);
    conf = next;
  };
  swap('/etc/letsencrypt/live/chat.example.com/fullchain.pem', path.join(dir, 'cert.pem'));
  swap('/etc/letsencrypt/live/chat.example.com/privkey.pem', path.join(dir, 'key.pem'));
  swap(/chat\.example\.com/g, HOST);
  swap('server 127.0.0.1:9991;', `server ${upstream};`);
  swap('listen 80;', `listen ${httpPort};`);
  swap('root /var/www/letsencrypt;', `root ${path.join(dir, 'acme')};`);
  swap('listen 443 ssl http2;', `listen ${httpsPort} ssl http2;`);
  // IPv6 may be off where the tests run.
  swap(/^\s*listen \[::\]:\d+.*$/gm, '');
  return conf;
}

/** nginx's error output, for a failure's message. */
let diagnostics = () => '';

const nginx = findNginx();
if (nginx === null) {
  t.plan(0, 'nginx is not installed (apt-get install nginx): the nginx recipe is not tested');
} else {
  void t.test('Confab behind nginx', async (t) => {
    await run(t, nginx).catch((err: unknown) => {
      t.fail(`${String(err)}\n${diagnostics()}`);
    });
  });
}

async function run(t: Test, nginxBin: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-nginx-'));
  // nginx's workers (nobody, when the tests run as root) reach their temp directories here.
  fs.chmodSync(dir, 0o755);
  // certbot's webroot (the port-80 block serves the ACME challenge from it).
  const acmeToken = 'a-challenge-token';
  const acme = path.join(dir, 'acme/.well-known/acme-challenge');
  fs.mkdirSync(acme, { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(acme, acmeToken), `${acmeToken}.key-authorization`, { mode: 0o644 });
  if (!process.env.KEEP_NGINX_DIR)
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  const openssl = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${HOST}`,
      '-addext',
      `subjectAltName=DNS:${HOST},DNS:*.${HOST},IP:127.0.0.1`,
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { encoding: 'utf8' },
  );
  if (openssl.status !== 0) throw new Error(`openssl failed: ${openssl.stderr}`);
  const ca = fs.readFileSync(path.join(dir, 'cert.pem'));

  const server = await startChild(path.join(dir, 'data'), {
    EXTERNAL_HOST: HOST,
    EXTERNAL_SCHEME: 'https',
    TRUSTED_PROXIES: '127.0.0.1',
    RATE_LIMITING: 'on',
    // Requests without credentials: 3 per address in 10 minutes, to see addresses told apart.
    RATE_LIMITING_RULES: JSON.stringify({ api_by_ip: [[600, 3]] }),
  });
  t.teardown(() => server.kill('SIGTERM'));
  const { email, apiKey, password: firstPassword } = firstOwner(path.join(dir, 'data'));

  // Ports below the ephemeral range (as the cluster tests take): nginx binds them only after
  // `nginx -t`, and a port the kernel handed out a moment ago could meanwhile be taken as the
  // local port of any process's outgoing connection (nginx then exits: "nginx did not start").
  const [httpPort, httpsPort] = (await ports(2)) as [number, number];
  const site = siteConfig(dir, new URL(server.url).host, httpPort, httpsPort);
  fs.writeFileSync(path.join(dir, 'confab.conf'), site);
  const temp = (name: string) => `${name}_temp_path ${path.join(dir, 'tmp', name)};`;
  fs.mkdirSync(path.join(dir, 'tmp'), { mode: 0o755 });
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${path.join(dir, 'nginx.pid')};`,
      `error_log ${path.join(dir, 'error.log')} info;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log ${path.join(dir, 'access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((n) => '  ' + temp(n)),
      `  include ${path.join(dir, 'confab.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const nginxArgs = ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'];
  const check = spawnSync(nginxBin, ['-t', ...nginxArgs], { encoding: 'utf8' });
  t.equal(check.status, 0, `nginx -t accepts the configuration\n${check.stderr}`);

  const proxy: ChildProcess = spawn(nginxBin, nginxArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let nginxErr = '';
  proxy.stderr!.on('data', (c: Buffer) => (nginxErr += c.toString()));
  diagnostics = () => {
    const log = path.join(dir, 'error.log');
    return `nginx: ${nginxErr}\n${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''}`;
  };
  const proxyExited = new Promise<void>((resolve) => proxy.on('exit', () => resolve()));
  t.teardown(async () => {
    proxy.kill('SIGQUIT');
    await proxyExited;
  });

  const base = `https://127.0.0.1:${httpsPort}`;
  const owner = { email, api_key: apiKey };
  const fx: Fixture = { realmId: 0, users: {}, notificationBotId: 0 };
  const api = new ApiClient(base, fx, { host: HOST }, { ca });
  /** An event WebSocket opened through nginx (JSON frames), closed at the test's end. */
  const socketThrough = async (
    t: Test,
    url: URL,
    headers: Record<string, string>,
  ): Promise<SocketClient> => {
    const ws = new WebSocket(url, ['json'], { ca, headers });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) =>
        reject(new Error(`upgrade refused: ${res.statusCode ?? 0}`)),
      );
    });
    t.teardown(() => ws.terminate());
    return new SocketClient(ws);
  };
  // Wait (bounded) until nginx answers.
  for (let i = 0; ; i++) {
    const ok = await rawRequest(base, { method: 'GET', path: '/health' }, { ca }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (i > 200 || proxy.exitCode !== null) throw new Error(`nginx did not start:\n${nginxErr}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  // A poll held from now until the server's heartbeat (45–55 s): it must outlast nginx's timeouts.
  const hbQueue = assertSuccess(t, await api.post(owner, 'register', { event_types: ['typing'] }));
  const heartbeatPoll = api.get(owner, 'events', {
    queue_id: hbQueue.queue_id,
    last_event_id: hbQueue.last_event_id,
  });

  await t.test('TLS termination, the redirect, the realm on its https URL', async (t) => {
    const health = await api.get(null, '/health');
    t.equal(health.status, 200);
    t.equal(health.body.status, 'ok');
    const me = assertSuccess(t, await api.get(owner, 'users/me'));
    t.equal(me.email, email);
    const settings = assertSuccess(t, await api.get(null, 'server_settings'));
    t.equal(settings.realm_url, `https://${HOST}`, 'the realm is served at its https URL');
    const redirect = await rawRequest(`http://127.0.0.1:${httpPort}`, {
      method: 'GET',
      path: '/api/v1/users/me?x=1',
      headers: { host: HOST },
    });
    t.equal(redirect.status, 301);
    t.equal(redirect.headers.location, `https://${HOST}/api/v1/users/me?x=1`);
    // A renewal with nginx running: certbot's webroot answers the ACME challenge on port 80.
    const challenge = await rawRequest(`http://127.0.0.1:${httpPort}`, {
      method: 'GET',
      path: `/.well-known/acme-challenge/${acmeToken}`,
      headers: { host: HOST },
    });
    t.equal(challenge.status, 200, 'the ACME challenge is served, not redirected');
    t.equal(challenge.text, `${acmeToken}.key-authorization`);
  });

  await t.test('long-polling through nginx', async (t) => {
    const q = assertSuccess(t, await api.post(owner, 'register', { event_types: ['message'] }));
    // The server holds the poll (its gauge says so: one more than the heartbeat poll held since
    // the start), then a message answers it.
    const heldNow = async () =>
      Number(/^confab_long_polls_held (\d+)/m.exec((await api.get(null, '/metrics')).text)?.[1]);
    const before = await heldNow();
    const held = api.get(owner, 'events', { queue_id: q.queue_id, last_event_id: -1 });
    for (let i = 0; ; i++) {
      if ((await heldNow()) > before) break;
      if (i > 400) throw new Error('the poll was never held');
      await new Promise((r) => setTimeout(r, 25));
    }
    const sent = assertSuccess(
      t,
      await api.post(owner, 'messages', {
        type: 'stream',
        to: 'general',
        topic: 'nginx',
        content: 'through the proxy',
      }),
    );
    const res = assertSuccess(t, await held, 'the held poll is answered');
    const ev = (res.events as Ev[]).find((e) => e.type === 'message');
    t.match(ev, { message: { id: sent.id, content: 'through the proxy' } });
  });

  await t.test('the WebSocket channel through nginx', async (t) => {
    const q = assertSuccess(t, await api.post(owner, 'register', { event_types: ['message'] }));
    const url = new URL(`wss://127.0.0.1:${httpsPort}/api/v1/events/socket`);
    url.searchParams.set('queue_id', q.queue_id as string);
    url.searchParams.set('last_event_id', '-1');
    const client = await socketThrough(t, url, {
      host: HOST,
      authorization: basicAuth(email, apiKey),
    });
    t.equal(client.protocol, 'json');
    const sent = assertSuccess(
      t,
      await api.post(owner, 'messages', {
        type: 'stream',
        to: 'general',
        topic: 'nginx',
        content: 'pushed through the proxy',
      }),
    );
    const [ev] = await client.nextEvents(1);
    t.match(ev, { type: 'message', message: { id: sent.id } });
    client.ack(ev!.id);
    const closed = await client.close();
    t.equal(closed.code, 1005, 'closed cleanly by the client');
  });

  await t.test('the web app and a browser session through nginx', async (t) => {
    const page = await rawRequest(
      base,
      { method: 'GET', path: '/', headers: { host: HOST } },
      { ca },
    );
    t.equal(page.status, 200, 'the app page');
    t.match(page.headers['content-type'], /^text\/html/);
    t.match(
      page.headers['content-security-policy'],
      new RegExp(`connect-src 'self' wss://${HOST}`),
    );
    const origin = `https://${HOST}`;
    const form = new URLSearchParams({ username: email, password: firstPassword }).toString();
    const login = await rawRequest(
      base,
      {
        method: 'POST',
        path: '/json/login',
        headers: {
          host: HOST,
          origin,
          'sec-fetch-site': 'same-origin',
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(form)),
        },
        body: form,
      },
      { ca },
    );
    assertSuccess(t, login, 'logged in over https');
    const cookie = String(login.headers['set-cookie']);
    t.match(cookie, /; HttpOnly; SameSite=Lax; Secure$/, 'a Secure cookie (EXTERNAL_SCHEME=https)');
    const token = /^confab_session=([^;]+)/.exec(cookie)![1]!;
    const csrf = (login.body as { csrf_token: string }).csrf_token;
    const headers = { host: HOST, origin, cookie: `confab_session=${token}` };
    const reg = await rawRequest(
      base,
      {
        method: 'POST',
        path: '/json/register',
        headers: {
          ...headers,
          'x-csrf-token': csrf,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': '0',
        },
        body: '',
      },
      { ca },
    );
    const q = assertSuccess(t, reg, '/json/register');
    const url = new URL(`wss://127.0.0.1:${httpsPort}/json/events/socket`);
    url.searchParams.set('queue_id', q.queue_id as string);
    url.searchParams.set('last_event_id', '-1');
    const client = await socketThrough(t, url, headers);
    const sent = assertSuccess(
      t,
      await api.post(owner, 'messages', {
        type: 'stream',
        to: 'general',
        topic: 'nginx',
        content: 'to the browser through the proxy',
      }),
    );
    const [ev] = await client.nextEvents(1);
    t.match(ev, { type: 'message', message: { id: sent.id } }, "the browsers' socket");
  });

  await t.test('uploads and request sizes through nginx', async (t) => {
    // 2 MiB: over nginx's default body limit (1 MiB), under Confab's (25 MiB).
    const data = crypto.randomBytes(2 * 1024 * 1024);
    const up = assertSuccess(t, await upload(api, owner, [{ filename: 'big.bin', data }]));
    const got = await download(api, owner, up.url as string);
    t.equal(got.status, 200);
    t.ok(got.body.equals(data), 'the same bytes come back');
    // Over the limits: Confab's own JSON errors (the same words), not an nginx page or a 502.
    const tooBig = await upload(api, owner, [
      { filename: 'huge.bin', data: Buffer.alloc(26 * 1024 * 1024) },
    ]);
    t.equal(tooBig.headers['content-type'], 'application/json');
    assertError(
      t,
      tooBig,
      "File is larger than this server's configured maximum upload size (25 MiB).",
      { status: 413, code: 'REQUEST_TOO_LARGE' },
    );
    const bigForm = await api.post(owner, 'messages', {
      type: 'stream',
      to: 'general',
      topic: 'nginx',
      content: 'x'.repeat(5 * 1024 * 1024),
    });
    assertError(t, bigForm, 'Request body too large (limit: 4194304 bytes)', {
      status: 413,
      code: 'REQUEST_TOO_LARGE',
    });
  });

  await t.test('X-Forwarded-For is believed from the trusted proxy only', async (t) => {
    const from = (localAddress: string, headers: Record<string, string> = {}) =>
      new ApiClient(base, fx, { host: HOST, ...headers }, { ca, localAddress });
    const a = from('127.0.0.2');
    for (let i = 0; i < 3; i++) assertSuccess(t, await a.get(null, 'server_settings'));
    t.equal((await a.get(null, 'server_settings')).status, 429, "127.0.0.2's limit is reached");
    const spoofed = from('127.0.0.2', { 'x-forwarded-for': '127.0.0.50' });
    t.equal(
      (await spoofed.get(null, 'server_settings')).status,
      429,
      'an address the client claims is not believed',
    );
    assertSuccess(
      t,
      await from('127.0.0.3').get(null, 'server_settings'),
      'another address has its own limit (nginx passed the client address on)',
    );

    t.equal((await a.get(null, '/metrics')).status, 200, 'metrics for a loopback client');
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
    if (external === undefined) {
      t.comment('no non-loopback IPv4 address here: metrics from elsewhere not tried');
      return;
    }
    const tries: Record<string, string>[] = [{}, { 'x-forwarded-for': '127.0.0.1' }];
    for (const headers of tries) {
      const res = await rawRequest(
        `https://${external}:${httpsPort}`,
        { method: 'GET', path: '/metrics', headers: { host: HOST, ...headers } },
        { ca, localAddress: external, checkServerIdentity: () => undefined },
      );
      t.equal(res.status, 403, `no metrics for ${external} ${JSON.stringify(headers)}`);
    }
  });

  await t.test('odd but legal HTTP is answered by nginx, in JSON', async (t) => {
    const auth = `Authorization: ${basicAuth(email, apiKey)}\r\n`;
    const ask = (head: string) => rawTls(httpsPort, ca, head);
    const me = (r: RawAnswer) => (JSON.parse(r.body) as { email?: string }).email;
    // uWS alone would wait for more of the head (its 10 s idle timeout) and nginx answer 502.
    const underscore = await ask(
      `GET /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\n${auth}X_Custom: 1\r\nX.Id: 2\r\n\r\n`,
    );
    t.equal(underscore.status, 200, 'header names with _ and . are dropped, the request served');
    t.equal(me(underscore), email);
    const query = await ask(`QUERY /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\n${auth}\r\n`);
    t.equal(query.status, 501, 'an unknown method: 501');
    t.same(JSON.parse(query.body), {
      result: 'error',
      msg: 'Method not implemented: QUERY',
      code: 'BAD_REQUEST',
    });
    t.match(query.head, /\r\ncontent-type: application\/json/i);
    const absolute = await ask(
      `GET https://${HOST}/api/v1/users/me HTTP/1.1\r\nHost: elsewhere.test\r\n${auth}\r\n`,
    );
    t.equal(absolute.status, 200, 'an absolute-form target is served (its host picks the realm)');
    t.equal(me(absolute), email);
    const star = await ask(`OPTIONS * HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    t.equal(star.status, 200, 'OPTIONS * is answered 200');
    t.match(star.head, /\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS/i);
    const v10 = await ask(`GET /api/v1/users/me HTTP/1.0\r\nHost: ${HOST}\r\n${auth}\r\n`);
    t.equal(v10.status, 200, 'HTTP/1.0 is served');
    t.equal(me(v10), email);
    for (const [what, head, status, code] of [
      [
        'a lowercase method',
        `get /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`,
        400,
        'BAD_REQUEST',
      ],
      ['TRACE', `TRACE / HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, 405, 'METHOD_NOT_ALLOWED'],
    ] as const) {
      const r = await ask(head);
      t.equal(r.status, status, `${what}: ${status}`);
      t.match(JSON.parse(r.body), { result: 'error', code }, `${what}: the API's error format`);
    }
  });

  await t.test('a long-poll held until the heartbeat', async (t) => {
    const res = assertSuccess(t, await heartbeatPoll, 'answered through nginx, not cut off');
    t.match(res.events, [{ type: 'heartbeat' }]);
  });

  await t.test('the systemd unit', (t) => {
    const analyze = spawnSync('systemd-analyze', ['verify', 'deploy/confab.service'], {
      cwd: root,
      encoding: 'utf8',
    });
    if (analyze.error) {
      t.comment('systemd-analyze is not installed: the unit is not verified');
      t.end();
      return;
    }
    t.equal(analyze.status, 0, analyze.stderr);
    const unit = fs.readFileSync(path.join(root, 'deploy/confab.service'), 'utf8');
    t.match(unit, /^ExecStart=.* \/opt\/confab\/dist\/src\/main\.js --env-file /m);
    t.ok(fs.existsSync(path.join(root, 'dist/src/main.js')), 'the file it starts is built');
    t.end();
  });
}

type RawAnswer = { status: number; head: string; body: string };

/** Sends `head` over TLS (HTTP/1.1, no ALPN) and reads one answer: until its length, or a close. */
function rawTls(port: number, ca: Buffer, head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, ca, servername: HOST });
    let text = '';
    const done = () => {
      sock.destroy();
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) {
        reject(new Error(`no answer to ${JSON.stringify(head.split('\r\n')[0])}: ${text}`));
        return;
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, head: text.slice(0, end), body: text.slice(end + 4) });
    };
    sock.on('secureConnect', () => sock.write(head));
    sock.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
      if (end !== -1 && length !== undefined && text.length >= end + 4 + Number(length)) done();
    });
    sock.on('end', done);
    sock.on('error', reject);
  });
}
