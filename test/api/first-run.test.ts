/**
 * The first start (src/main.ts, src/bootstrap.ts) as an operator meets it: the first realm's name
 * and its owner's e-mail and name from settings or flags; the realm made only once the server
 * listens (a port taken or invalid creates nothing, and the next good start still gets the
 * credentials); the one-time credentials in a 0600 file, never in the log; the right URL with
 * PORT=0; a banner that says which URL to open.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { firstOwner, spawnChild, startChild } from '../helpers/child-server.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';
import { ports } from '../../src/cluster/local.js';

t.setTimeout(300_000);
// The subtests are independent (each its own data directory; servers on port 0 or a port of its
// own): two run at once, so that one's server starts while the other's waits.
t.jobs = 2;

const OWNER_FILE = 'first-owner.txt';

t.test('the realm and owner from the settings; credentials in a 0600 file only', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, {
    FIRST_REALM_NAME: 'Acme Chat',
    FIRST_OWNER_EMAIL: 'Boss@Acme.test',
    FIRST_OWNER_NAME: 'Bea Boss',
    LOG_FORMAT: 'json',
  });
  t.teardown(() => server.kill('SIGKILL'));
  const file = path.join(dataDir, OWNER_FILE);
  t.equal(fs.statSync(file).mode & 0o777, 0o600, 'the credentials file is 0600');
  const owner = firstOwner(dataDir);
  t.match(owner, { email: 'Boss@Acme.test', realmName: 'Acme Chat' });

  const settings = await rawRequest(server.url, { method: 'GET', path: '/api/v1/server_settings' });
  t.match(assertSuccess(t, settings), { realm_name: 'Acme Chat' }, 'the realm’s name');
  const me = await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { authorization: basicAuth(owner.email, owner.apiKey) },
  });
  t.match(assertSuccess(t, me), { full_name: 'Bea Boss', is_owner: true }, 'the owner');
  const login = await rawRequest(server.url, {
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: owner.email, password: owner.password }).toString(),
  });
  t.equal(assertSuccess(t, login).api_key, owner.apiKey, 'the password logs in');

  await server.waitFor(/in a browser[^]*delete the file/);
  const out = server.output();
  t.match(out, `Confab is ready: open ${owner.realmUrl} in a browser.`, 'the banner');
  t.match(out, `Created the first realm, "Acme Chat", and its owner, Boss@Acme.test.`);
  t.match(out, file, 'the banner names the credentials file');
  t.notOk(out.includes(owner.password), 'the password is not in the output (no terminal)');
  t.notOk(out.includes(owner.apiKey), 'nor the API key');
  const created = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((o) => o.msg === 'created the first realm and its owner');
  t.match(created, { email: 'Boss@Acme.test', credentialsFile: file }, 'logged, without secrets');
});

t.test('flags win over the settings', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, { FIRST_REALM_NAME: 'From the env' }, undefined, [
    '--realm-name',
    'From the flag',
    '--owner-email',
    'flag@example.org',
    '--owner-name',
    'Flag Owner',
  ]);
  t.teardown(() => server.kill('SIGKILL'));
  t.match(firstOwner(dataDir), { realmName: 'From the flag', email: 'flag@example.org' });
});

t.test('a bad first-start setting or port is refused before anything is created', async (t) => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['PORT=99999', { PORT: '99999' }, /PORT must be a port number \(0 to 65535\)/],
    ['PORT=http', { PORT: 'http' }, /PORT must be a port number/],
    ['a bad owner e-mail', { FIRST_OWNER_EMAIL: 'not-an-address' }, /FIRST_OWNER_EMAIL/],
    ['a bad owner name', { FIRST_OWNER_NAME: 'x' }, /FIRST_OWNER_NAME: Name too short/],
    ['an empty realm name', { FIRST_REALM_NAME: ' ' }, /FIRST_REALM_NAME must be 1 to 40/],
    ['LOG_LEVEL=verbose', { LOG_LEVEL: 'verbose' }, /LOG_LEVEL must be one of fatal, error/],
    ['LOG_FORMAT=text', { LOG_FORMAT: 'text' }, /LOG_FORMAT must be json or pretty/],
    [
      'TRUSTED_PROXIES=nginx',
      { TRUSTED_PROXIES: '127.0.0.1,nginx' },
      /TRUSTED_PROXIES: not an address or CIDR range: nginx/,
    ],
    [
      'ADDRESS_LIMITS_EXEMPT=10.0.0.0/40',
      { ADDRESS_LIMITS_EXEMPT: '10.0.0.0/40' },
      /ADDRESS_LIMITS_EXEMPT: bad prefix length: 10\.0\.0\.0\/40/,
    ],
    [
      'EXTERNAL_HOST with a scheme',
      { EXTERNAL_HOST: 'https://chat.example.com' },
      /EXTERNAL_HOST: .*no scheme \(that is EXTERNAL_SCHEME\)/,
    ],
    ['MAX_REQUEST_BYTES=0', { MAX_REQUEST_BYTES: '0' }, /MAX_REQUEST_BYTES .* at least 1048576/],
    ['CONFAB_UWS=fast', { CONFAB_UWS: 'fast' }, /CONFAB_UWS must be modern or legacy, not "fast"/],
  ];
  for (const [what, env, message] of cases) {
    const dataDir = path.join(t.testdir(), 'data');
    const run = spawnChild(dataDir, env);
    const { code } = await run.exited;
    t.equal(code, 1, `${what}: exit status 1`);
    t.match(run.output(), message, `${what}: says why`);
    t.match(run.output(), /^Confab cannot start: [^\n]*\n$/, `${what}: in one line`);
    t.notMatch(run.output(), /\n\s+at /, `${what}: no stack trace`);
    t.notOk(fs.existsSync(dataDir), `${what}: no data directory made`);
  }
});

t.test('CONFAB_UWS in the env file counts, as every other setting there', async (t) => {
  const dir = t.testdir({ 'confab.env': 'CONFAB_UWS=fast\n' });
  const dataDir = path.join(dir, 'data');
  const run = spawnChild(dataDir, {}, undefined, ['--env-file', path.join(dir, 'confab.env')]);
  const { code } = await run.exited;
  t.equal(code, 1, 'exit status 1');
  t.match(
    run.output(),
    /^Confab cannot start: no uWebSockets\.js build for Node [^\n]*CONFAB_UWS must be modern or legacy, not "fast"[^\n]*\n$/,
  );
  t.notOk(fs.existsSync(dataDir), 'no data directory made');
});

t.test('a data directory that cannot be one: said in one line, nothing made', async (t) => {
  const dir = t.testdir({ file: 'not a directory' });
  const file = path.join(dir, 'file');
  const cases: [string, string][] = [
    [file, `${file} is not a directory`],
    [path.join(file, 'data'), `${file}/data cannot be a directory: a file stands in its path`],
  ];
  for (const [dataDir, message] of cases) {
    const run = spawnChild(dataDir);
    const { code } = await run.exited;
    t.equal(code, 1, `${dataDir}: exit status 1`);
    t.equal(run.output(), `Confab cannot start: bad environment: DATA_DIR: ${message}\n`);
  }
  t.same(fs.readdirSync(dir), ['file'], 'nothing made beside it');
});

t.test(
  'a data directory under /proc, /sys or /dev: refused in one line, nothing made',
  async (t) => {
    const dir = t.testdir();
    fs.symlinkSync('/proc/self', path.join(dir, 'link'));
    const name = `confab-test-${process.pid}`;
    // What a start that is not refused would make there (as root /dev is writable).
    t.teardown(() => fs.rmSync(`/dev/${name}`, { recursive: true, force: true }));
    for (const dataDir of [
      `/proc/${name}/data`, // Node's recursive mkdir there never returned: the start hung
      `/sys/${name}/data`,
      `/dev/${name}/data`,
      path.join(dir, 'link', name, 'data'),
    ]) {
      const run = spawnChild(dataDir);
      const timer = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
      const { code, signal } = await run.exited;
      clearTimeout(timer);
      t.same({ code, signal }, { code: 1, signal: null }, `${dataDir}: exit status 1, at once`);
      t.match(
        run.output(),
        new RegExp(
          `^Confab cannot start: bad environment: DATA_DIR: ${dataDir} is under /(proc|sys|dev)\\b[^\\n]*: set DATA_DIR to a directory on a disk\\n$`,
        ),
        `${dataDir}: says why, in one line`,
      );
    }
    t.notOk(fs.existsSync(`/dev/${name}`), 'nothing made under /dev');
  },
);

t.test('a port already taken: nothing created; the next start gets the credentials', async (t) => {
  const dataDir = t.testdir();
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as net.AddressInfo).port;
  const failed = spawnChild(dataDir, { PORT: String(port) });
  const { code } = await failed.exited;
  await new Promise((resolve) => taken.close(resolve));
  t.not(code, 0, 'the start fails');
  t.notOk(fs.existsSync(path.join(dataDir, OWNER_FILE)), 'no credentials written');
  t.notMatch(failed.output(), /Created the first realm/, 'no realm announced');

  const server = await startChild(dataDir);
  t.teardown(() => server.kill('SIGKILL'));
  const owner = firstOwner(dataDir);
  const me = await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { authorization: basicAuth(owner.email, owner.apiKey) },
  });
  assertSuccess(t, me, 'the credentials of the next, good start work');
  await server.waitFor(/Created the first realm/);
});

t.test('GET /health answers ok only once the first owner’s credentials are written', async (t) => {
  // The server listens before it makes the first realm; a container's check that waited for
  // /health and then read first-owner.txt found no file (CI, the container job).
  const dataDir = t.testdir();
  const [port] = await ports(1);
  const run = spawnChild(dataDir, { PORT: String(port) });
  t.teardown(() => run.kill('SIGKILL'));
  const file = path.join(dataDir, OWNER_FILE);
  let starting = 0;
  let body: Record<string, unknown>;
  let exited = false;
  void run.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`the server exited:\n${run.output()}`);
    const answer = await rawRequest(`http://127.0.0.1:${port}`, {
      method: 'GET',
      path: '/health',
    }).catch(() => null);
    if (answer !== null) {
      body = answer.body;
      if (answer.status === 200) break;
      t.match(
        { status: answer.status, body },
        { status: 503, body: { status: 'unavailable', starting: true } },
        'before: 503, starting',
      );
      starting++;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.ok(fs.existsSync(file), 'the credentials file exists when /health first says ok');
  t.match(body, { status: 'ok', starting: false });
  t.comment(`${starting} answers said starting`);
  firstOwner(dataDir);
});

t.test('PORT=0: the URLs given out name the port actually used', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, { PORT: '0' });
  t.teardown(() => server.kill('SIGKILL'));
  const port = new URL(server.url).port;
  t.not(port, '0');
  const owner = firstOwner(dataDir);
  t.equal(owner.realmUrl, `http://localhost:${port}`, 'the credentials file');
  await server.waitFor(/in a browser/);
  t.match(server.output(), `open http://localhost:${port} in a browser`, 'the banner');
  const settings = await rawRequest(server.url, { method: 'GET', path: '/api/v1/server_settings' });
  t.match(assertSuccess(t, settings), { realm_uri: `http://localhost:${port}` }, 'the API');
});

t.test('a data directory the server’s user cannot write: who, and what to do', (t) => {
  // As root, the server runs as nobody in a directory root owns; as anyone else, in one of its
  // own without write permission (root could write there).
  const asRoot = process.getuid?.() === 0;
  const dir = t.testdir({ data: {} });
  const dataDir = path.join(dir, 'data');
  fs.chmodSync(dir, 0o755);
  fs.chmodSync(dataDir, asRoot ? 0o755 : 0o500);
  const node = plainNode([path.join(DIST_SRC, 'main.js')], { DATA_DIR: dataDir, PORT: '0' });
  const run = spawnSync(node.file, node.args, {
    env: node.env,
    encoding: 'utf8',
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  t.equal(run.status, 1, 'exit status 1');
  t.match(
    run.stderr,
    new RegExp(
      `^Confab cannot start: ${dataDir} is not writable by \\S+, the user the server runs as ` +
        `\\(permission denied; it belongs to \\S+\\): run the server as \\S+, or give the data ` +
        `directory to \\S+ \\(chown -R \\S+ ${dataDir}\\)\\n$`,
    ),
    'names the directory, both users and the remedy, in one line',
  );
  t.same(fs.readdirSync(dataDir), [], 'nothing made in it');
  t.end();
});

t.test(
  'LOG_FORMAT=pretty without pino-pretty installed: one warning naming it, then JSON',
  async (t) => {
    // An install without dev dependencies: the compiled server, and node_modules holding every
    // package of the checkout's but pino-pretty (links); outside the checkout, so that Node's
    // lookup cannot find the checkout's node_modules above it.
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-no-pretty-'));
    t.teardown(() => fs.rmSync(app, { recursive: true, force: true }));
    const dist = path.resolve(DIST_SRC, '..');
    fs.cpSync(dist, path.join(app, 'dist'), {
      recursive: true,
      filter: (src) => !src.startsWith(path.join(dist, 'test')),
    });
    const modules = path.resolve(DIST_SRC, '../../node_modules');
    fs.mkdirSync(path.join(app, 'node_modules'));
    for (const name of fs.readdirSync(modules))
      if (name !== 'pino-pretty')
        fs.symlinkSync(path.join(modules, name), path.join(app, 'node_modules', name));
    fs.copyFileSync(path.resolve(DIST_SRC, '../../package.json'), path.join(app, 'package.json'));

    const main = path.join(app, 'dist/src/main.js');
    const dataDir = path.join(app, 'data');
    const server = await startChild(dataDir, { LOG_FORMAT: 'pretty' }, main);
    t.teardown(() => server.kill('SIGKILL'));
    const warnings =
      server.output().match(/LOG_FORMAT=pretty needs the package pino-pretty/g) ?? [];
    t.equal(warnings.length, 1, 'said once');
    t.match(
      server.output(),
      /"level":"warn".*which is not installed: logging JSON lines \(install it with `npm install pino-pretty`, or set LOG_FORMAT=json\)/,
      'a warn line naming what to install, itself JSON',
    );
    t.equal((await server.kill('SIGTERM')).code, 0);

    // The checkout (pino-pretty installed): no warning.
    const dev = await startChild(path.join(app, 'data-dev'), { LOG_FORMAT: 'pretty' });
    t.teardown(() => dev.kill('SIGKILL'));
    t.notMatch(dev.output(), /needs the package pino-pretty/, 'no warning where it is installed');
    t.equal((await dev.kill('SIGTERM')).code, 0);
  },
);
