/**
 * What an operator watches (issue 34): the access log names the client (its address, behind
 * TRUSTED_PROXIES the one the proxy saw, and its User-Agent); failed logins are logged with the
 * address (for fail2ban) and counted; /metrics has the build, the realms, users and messages, the
 * database's and uploads' sizes, and login failures; /health fails when the data directory cannot
 * be written. The real server as `npm start` runs it, JSON logs read from its stdout.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { firstOwner, startChild, type ChildServer } from '../helpers/child-server.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';
import { multipartBody } from '../helpers/uploads.js';

t.setTimeout(300_000);

type Line = Record<string, unknown> & { msg: string };

function lines(server: ChildServer): Line[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

/** The value of a metric line (`name{labels} value`) in Prometheus text. */
function metric(text: string, name: string, labels = ''): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name && (labels === '' || (m[2] ?? '').includes(labels))) return Number(m[3]);
  }
  return null;
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };

t.test('the access log: client address (behind a trusted proxy) and User-Agent', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, {
    LOG_FORMAT: 'json',
    LOG_REQUESTS: '1',
    TRUSTED_PROXIES: '127.0.0.1',
  });
  t.teardown(() => server.kill('SIGKILL'));
  const owner = firstOwner(dataDir);
  const auth = basicAuth(owner.email, owner.apiKey);
  await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { authorization: auth, 'x-forwarded-for': '198.51.100.7', 'user-agent': 'Probe/1.0' },
  });
  await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/no/such/route',
    headers: { 'x-forwarded-for': '198.51.100.8', 'user-agent': 'Lost/2.0' },
  });
  await server.waitFor(/"url":"\(unmatched\)"/);
  const requests = lines(server).filter((l) => l.msg === 'request');
  t.match(
    requests.find((l) => l.url === '/api/v1/users/me'),
    { status: 200, address: '198.51.100.7', userAgent: 'Probe/1.0', userId: Number },
    'the address nginx saw, and the client',
  );
  t.match(
    requests.find((l) => l.url === '(unmatched)'),
    { status: 404, address: '198.51.100.8', userAgent: 'Lost/2.0' },
    'unmatched routes too',
  );
});

t.test('request lines written in batches are all there after a SIGTERM', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, { LOG_FORMAT: 'json', LOG_REQUESTS: '1' });
  t.teardown(() => server.kill('SIGKILL'));
  for (let i = 0; i < 5; i++) {
    const r = await rawRequest(server.url, { method: 'GET', path: '/api/v1/server_settings' });
    t.equal(r.status, 200);
  }
  // At once: the batch is written at exit, whether or not its timer ran.
  t.equal((await server.kill('SIGTERM')).code, 0);
  const requests = lines(server).filter((l) => l.url === '/api/v1/server_settings');
  t.equal(requests.length, 5, 'every request line');
  const order = lines(server).map((l) => l.msg);
  t.ok(
    order.lastIndexOf('request') < order.indexOf('SIGTERM: shutting down'),
    'in order: the requests before the shutdown line',
  );
});

t.test('without a trusted proxy, X-Forwarded-For is not believed', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, { LOG_FORMAT: 'json', LOG_REQUESTS: '1' });
  t.teardown(() => server.kill('SIGKILL'));
  await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/server_settings',
    headers: { 'x-forwarded-for': '198.51.100.7' },
  });
  await server.waitFor(/"url":"\/api\/v1\/server_settings"/);
  t.match(
    lines(server).find((l) => l.url === '/api/v1/server_settings'),
    { address: '127.0.0.1' },
    'the peer',
  );
});

t.test('failed logins: logged with the address, counted in /metrics', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, { LOG_FORMAT: 'json', TRUSTED_PROXIES: '127.0.0.1' });
  t.teardown(() => server.kill('SIGKILL'));
  const owner = firstOwner(dataDir);
  const wrongPassword = await rawRequest(server.url, {
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    headers: { ...form, 'x-forwarded-for': '203.0.113.50', 'user-agent': 'Guesser/1' },
    body: new URLSearchParams({ username: owner.email, password: 'not-it-000' }).toString(),
  });
  t.equal(wrongPassword.status, 401);
  const wrongKey = await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: {
      authorization: basicAuth(owner.email, 'x'.repeat(32)),
      'x-forwarded-for': '203.0.113.51',
    },
  });
  t.equal(wrongKey.status, 401);
  await server.waitFor(/"auth":"api_key"/);
  const failed = lines(server).filter((l) => l.msg === 'login failed');
  t.match(failed, [
    {
      level: 'warn',
      auth: 'password',
      username: owner.email,
      address: '203.0.113.50',
      userAgent: 'Guesser/1',
    },
    { level: 'warn', auth: 'api_key', username: owner.email, address: '203.0.113.51' },
  ]);
  t.notOk(server.output().includes('not-it-000'), 'never the password tried');
  t.notOk(server.output().includes('x'.repeat(32)), 'nor the key');

  const text = (await rawRequest(server.url, { method: 'GET', path: '/metrics' })).text;
  t.equal(metric(text, 'confab_login_failures_total', 'method="password"'), 1);
  t.equal(metric(text, 'confab_login_failures_total', 'method="api_key"'), 1);
});

t.test('/metrics: the build, what the server holds', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir);
  t.teardown(() => server.kill('SIGKILL'));
  const owner = firstOwner(dataDir);
  const auth = basicAuth(owner.email, owner.apiKey);
  const file = multipartBody([
    { filename: 'notes.txt', data: 'n'.repeat(5000), contentType: 'text/plain' },
  ]);
  assertSuccess(
    t,
    await rawRequest(server.url, {
      method: 'POST',
      path: '/api/v1/user_uploads',
      headers: { authorization: auth, 'content-type': file.contentType },
      body: file.body,
    }),
    'an upload',
  );
  const history = assertSuccess(
    t,
    await rawRequest(server.url, {
      method: 'GET',
      path: '/api/v1/messages?anchor=newest&num_before=1000&num_after=0',
      headers: { authorization: auth },
    }),
  );
  const messages = (history.messages as unknown[]).length;
  t.ok(messages > 0, 'the welcome messages');

  const text = (await rawRequest(server.url, { method: 'GET', path: '/metrics' })).text;
  const build = text.split('\n').find((l) => l.startsWith('confab_build_info{'));
  t.match(
    build,
    new RegExp(
      `^confab_build_info\\{version="0\\.1\\.0",node="${process.versions.node.replace(/\./g, '\\.')}",uws="[^"]+",sqlite="better-sqlite3(-napi)?"\\} 1$`,
    ),
    'build info',
  );
  t.equal(metric(text, 'confab_realms', 'state="active"'), 1, 'one realm');
  t.equal(metric(text, 'confab_realms', 'state="deactivated"'), 0);
  t.equal(metric(text, 'confab_users', 'kind="human"'), 1, 'one person');
  t.ok((metric(text, 'confab_users', 'kind="bot"') ?? 0) >= 2, 'the system bots');
  t.equal(metric(text, 'confab_messages'), messages, 'every message');
  const db = fs.statSync(path.join(dataDir, 'confab.sqlite3')).size;
  t.ok((metric(text, 'confab_database_bytes') ?? 0) >= db, 'the database’s size');
  t.ok((metric(text, 'confab_upload_bytes', 'kind="uploads"') ?? 0) >= 5000, 'the uploads’ size');
  t.equal(metric(text, 'confab_login_failures_total', 'method="password"'), 0, 'no failures');
});

t.test('/health fails when the data directory cannot be written', async (t) => {
  if (process.getuid?.() !== 0) {
    t.pass('skipped: needs root, to run the server as a user the directory can refuse');
    return;
  }
  const NOBODY = 65534;
  const root = t.testdir();
  fs.chmodSync(root, 0o755);
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  fs.chownSync(dataDir, NOBODY, NOBODY);
  const node = plainNode([path.join(DIST_SRC, 'main.js')], {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const child = spawn(node.file, node.args, { env: node.env, uid: NOBODY, gid: NOBODY, cwd: '/' });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', check);
    child.on('exit', () => reject(new Error(`exited:\n${out}`)));
  });
  const health = async () => rawRequest(url, { method: 'GET', path: '/health' });
  const first = await health();
  t.equal(first.status, 200);
  t.match(first.body, { status: 'ok', data_dir: 'ok' });

  // What an admin tool run as root used to leave: uploads/ owned by root.
  const uploads = path.join(dataDir, 'uploads');
  fs.mkdirSync(uploads, { recursive: true });
  fs.chownSync(uploads, 0, 0);
  fs.chmodSync(uploads, 0o700);
  let answer = await health();
  // The directory is looked at again within seconds; no timing is asserted, only the outcome.
  for (let i = 0; i < 60 && answer.status === 200; i++) {
    await new Promise((r) => setTimeout(r, 500));
    answer = await health();
  }
  t.equal(answer.status, 503, 'unhealthy');
  t.match(answer.body, { status: 'unavailable', data_dir: 'not_writable', database: 'ok' });
  fs.chownSync(uploads, NOBODY, NOBODY);
  for (let i = 0; i < 60 && answer.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 500));
    answer = await health();
  }
  t.equal(answer.status, 200, 'healthy again once repaired');
});
