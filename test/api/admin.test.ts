/**
 * The admin tool (`npm run manage`, src/manage.ts) with the server running (its commands go
 * through the admin socket into the server's realm actors, and show at once) and stopped (the tool
 * opens the data directory under its lock); passwords never on the command line; --help for every
 * command; settings from --env-file. And the server's log: JSON lines, none of them with a
 * password, an API key or message content. Real processes on temporary data directories.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { commandHelp, COMMANDS } from '../../src/admin/commands.js';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { firstOwner, startChild } from '../helpers/child-server.js';
import { manage } from '../helpers/manage.js';

function me(url: string, email: string, apiKey: string, host?: string) {
  return rawRequest(url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { authorization: basicAuth(email, apiKey), ...(host ? { host } : {}) },
  });
}

function login(url: string, email: string, password: string) {
  return rawRequest(url, {
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: email, password }).toString(),
  });
}

// Each test spawns the tool (and servers) several times: a loaded machine needs the time.
t.setTimeout(600_000);
// The subtests are independent (each its own data directory, server and ports): two run at once.
t.jobs = 2;

t.test('every command has --help, and an unknown option is refused', async (t) => {
  for (const [name, cmd] of Object.entries(COMMANDS)) {
    const help = commandHelp(name, cmd);
    t.match(help, new RegExp(`npm run -s manage -- ${name}`), `${name} has help`);
    for (const option of Object.keys(cmd.options)) t.match(help, `--${option}`);
  }
  const r = await manage(null, ['create-user', '--help']);
  t.equal(r.status, 0, 'create-user --help');
  t.equal(r.stdout.trim(), commandHelp('create-user', COMMANDS['create-user']!));
  const top = await manage(null, ['--help']);
  t.equal(top.status, 0);
  for (const name of Object.keys(COMMANDS)) t.match(top.stdout, name);
  const bad = await manage(null, ['list-users', '--realm', '', '--bogus']);
  t.equal(bad.status, 2);
  t.match(bad.json, { code: 'USAGE', error: /Unknown option '--bogus'/ });
  const unknown = await manage(null, ['frobnicate']);
  t.equal(unknown.status, 2);
  const helpOn = await manage(null, ['help', 'create-user']);
  t.equal(helpOn.status, 0, 'help create-user');
  t.equal(helpOn.stdout.trim(), commandHelp('create-user', COMMANDS['create-user']!));
  // Help on a command that does not exist: said, not the general usage with exit 0.
  const helpUnknown = await manage(null, ['help', 'frobnicate']);
  t.equal(helpUnknown.status, 2, 'help frobnicate: exit 2');
  t.match(helpUnknown.json, { code: 'USAGE', error: 'unknown command: frobnicate' });
});

t.test('passwords never come from the command line', async (t) => {
  const dataDir = t.testdir();
  const onArgv = await manage(dataDir, [
    'create-realm',
    '--name',
    'X',
    '--owner-email',
    'owner@x.test',
    '--password',
    'pw-on-argv-1',
  ]);
  t.equal(onArgv.status, 2, '--password is not an option');
  const noSource = await manage(dataDir, [
    'create-realm',
    '--name',
    'X',
    '--owner-email',
    'owner@x.test',
  ]);
  t.equal(noSource.status, 2);
  t.match(noSource.json.error, /--password-stdin|--password-env/);
  const fromEnv = await manage(
    dataDir,
    [
      'create-realm',
      '--name',
      'X',
      '--subdomain',
      'x',
      '--owner-email',
      'owner@x.test',
      '--password-env',
      'OWNER_PW',
    ],
    { env: { OWNER_PW: 'pw-from-env-1' } },
  );
  t.equal(fromEnv.status, 0, fromEnv.stderr);
  t.match(fromEnv.json, { string_id: 'x', email: 'owner@x.test', api_key: /^[A-Za-z0-9]{32}$/ });
});

t.test(
  'create-realm keeps the realm name bound (1 to 40 characters, as the settings endpoint)',
  async (t) => {
    const dataDir = t.testdir();
    const create = (name: string, sub: string) =>
      manage(
        dataDir,
        [
          'create-realm',
          '--name',
          name,
          '--subdomain',
          sub,
          '--owner-email',
          `owner@${sub}.test`,
          '--password-env',
          'PW',
        ],
        { env: { PW: 'pw-for-names-1' } },
      );
    for (const [name, sub] of [
      ['x'.repeat(41), 'long'],
      ['   ', 'blank'],
    ] as const) {
      const r = await create(name, sub);
      t.equal(r.status, 2, `${name.length} characters: refused`);
      t.match(r.json, { code: 'USAGE', error: /--name must be 1 to 40 characters/ });
    }
    // Forty characters outside the BMP count as forty, as the reference counts them.
    const ok = await create('🦊'.repeat(40), 'long');
    t.equal(ok.status, 0, ok.stderr);
    const list = await manage(dataDir, ['list-realms']);
    t.same(
      (list.json.realms as { string_id: string; name: string }[]).map((r) => [r.string_id, r.name]),
      [['long', '🦊'.repeat(40)]],
      'only the realm within the bound was made: the refusals left nothing',
    );
    // rename-realm keeps the same bound, with the same message.
    const rename = (name: string) =>
      manage(dataDir, ['rename-realm', '--realm', 'long', '--name', name]);
    for (const name of ['🐺'.repeat(41), ' ']) {
      const r = await rename(name);
      t.equal(r.status, 2, `rename to ${name.length} UTF-16 units: refused`);
      t.match(r.json, { code: 'USAGE', error: /--name must be 1 to 40 characters/ });
    }
    const renamed = await rename(` ${'🐺'.repeat(40)} `);
    t.equal(renamed.status, 0, renamed.stderr);
    t.match(renamed.json, { name: '🐺'.repeat(40) }, 'trimmed; 40 emoji are 40 characters');
  },
);

t.test('with the server running: changes go through the server and show at once', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir);
  t.teardown(() => server.kill('SIGTERM'));
  const owner = firstOwner(dataDir);

  const sock = fs.statSync(path.join(dataDir, 'admin.sock'));
  t.ok(sock.isSocket(), 'the admin socket is in the data directory');
  t.equal(sock.mode & 0o777, 0o600, 'mode 0600');

  // The bug of the issue: a user made by the tool while the server ran got "Invalid API key".
  const created = await manage(
    dataDir,
    [
      'create-user',
      '--realm',
      '',
      '--email',
      'ann@example.com',
      '--full-name',
      'Ann Example',
      '--password-stdin',
    ],
    { stdin: 'pw-ann-12345\n' },
  );
  t.equal(created.status, 0, created.stderr);
  const ann = created.json as { user_id: number; api_key: string };
  t.match(assertSuccess(t, await me(server.url, 'ann@example.com', ann.api_key)), {
    full_name: 'Ann Example',
    role: 400,
  });
  assertSuccess(
    t,
    await login(server.url, 'ann@example.com', 'pw-ann-12345'),
    'her password works',
  );
  const subs = await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me/subscriptions',
    headers: { authorization: basicAuth('ann@example.com', ann.api_key) },
  });
  t.same(
    (assertSuccess(t, subs).subscriptions as { name: string }[]).map((s) => s.name).sort(),
    ['Confab', 'general', 'sandbox'],
    'she joined the default channels of the first realm',
  );

  const listed = await manage(dataDir, ['list-users', '--realm', '']);
  t.equal(listed.status, 0);
  t.match(
    (listed.json.users as { email: string }[]).map((u) => u.email),
    ['owner@example.com', 'notification-bot@zulip.com', 'welcome-bot@zulip.com', 'ann@example.com'],
  );

  const role = await manage(dataDir, [
    'change-role',
    '--realm',
    '',
    '--user',
    'ann@example.com',
    '--role',
    'moderator',
  ]);
  t.equal(role.status, 0, role.stderr);
  t.equal(assertSuccess(t, await me(server.url, 'ann@example.com', ann.api_key)).role, 300);

  const lastOwner = await manage(dataDir, [
    'change-role',
    '--realm',
    '',
    '--user',
    owner.email,
    '--role',
    'member',
  ]);
  t.equal(lastOwner.status, 1, 'the last owner keeps the role');
  t.match(lastOwner.json.error, /only organization owner/);

  t.equal(
    (await manage(dataDir, ['deactivate-user', '--realm', '', '--user', 'ann@example.com'])).status,
    0,
  );
  const gone = await me(server.url, 'ann@example.com', ann.api_key);
  t.equal(gone.status, 401);
  t.equal(gone.body.msg, 'Account is deactivated');
  t.equal(
    (await manage(dataDir, ['reactivate-user', '--realm', '', '--user', String(ann.user_id)]))
      .status,
    0,
  );
  assertSuccess(t, await me(server.url, 'ann@example.com', ann.api_key), 'reactivated');

  const reset = await manage(
    dataDir,
    ['reset-password', '--realm', '', '--user', 'ann@example.com', '--password-stdin'],
    {
      stdin: 'pw-ann-new-67890\n',
    },
  );
  t.equal(reset.status, 0, reset.stderr);
  assertSuccess(
    t,
    await login(server.url, 'ann@example.com', 'pw-ann-new-67890'),
    'the new password works',
  );
  t.equal(
    (await login(server.url, 'ann@example.com', 'pw-ann-12345')).status,
    401,
    'the old one does not',
  );

  const rekey = await manage(dataDir, [
    'regenerate-api-key',
    '--realm',
    '',
    '--user',
    'ann@example.com',
  ]);
  t.equal(rekey.status, 0);
  const newKey = rekey.json.api_key as string;
  t.not(newKey, ann.api_key);
  t.equal(
    (await me(server.url, 'ann@example.com', ann.api_key)).status,
    401,
    'the old key stops working',
  );
  assertSuccess(t, await me(server.url, 'ann@example.com', newKey), 'the new key works');

  const realm = await manage(
    dataDir,
    [
      'create-realm',
      '--name',
      'Engineering',
      '--subdomain',
      'eng',
      '--owner-email',
      'boss@eng.test',
      '--password-stdin',
    ],
    { stdin: 'pw-boss-12345\n' },
  );
  t.equal(realm.status, 0, realm.stderr);
  t.match(realm.json, { string_id: 'eng', url: /^http:\/\/eng\.localhost:\d+$/ });
  const engHost = `eng.${new URL(server.url).host.replace('127.0.0.1', 'localhost')}`;
  assertSuccess(
    t,
    await me(server.url, 'boss@eng.test', realm.json.api_key as string, engHost),
    'the new realm serves at once on its subdomain',
  );
  const realms = await manage(dataDir, ['list-realms']);
  t.same(
    (realms.json.realms as { string_id: string }[]).map((r) => r.string_id),
    ['', 'eng'],
  );

  const stats = await manage(dataDir, ['queue-stats']);
  t.match(stats.json, { server_running: true, queues: Number });

  const deactivated = await manage(dataDir, ['deactivate-realm', '--realm', 'eng']);
  t.equal(deactivated.status, 0, deactivated.stderr);
  const refused = await me(server.url, 'boss@eng.test', realm.json.api_key as string, engHost);
  t.equal(refused.status, 401);
  t.match(refused.body.msg, /deactivated/);
  assertSuccess(t, await me(server.url, owner.email, owner.apiKey), 'the other realm is untouched');

  const elsewhere = fs.mkdtempSync(`${dataDir}-backup-`);
  t.teardown(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
  const restore = await manage(dataDir, ['restore', '--from', elsewhere]);
  t.equal(restore.status, 2, 'restore refuses while the server runs');
  t.match(restore.json.error, /server stopped/);

  const second = await manage(null, ['list-realms'], { env: { DATA_DIR: dataDir } });
  t.equal(second.status, 0, 'DATA_DIR from the environment');
});

t.test('with the server stopped: the tool opens the data directory under its lock', async (t) => {
  const dataDir = t.testdir();
  const first = await startChild(dataDir);
  const owner = firstOwner(dataDir);
  t.equal((await first.kill('SIGTERM')).code, 0);
  t.notOk(fs.existsSync(path.join(dataDir, 'admin.sock')), 'the socket goes with the server');

  const created = await manage(dataDir, [
    'create-user',
    '--realm',
    '',
    '--email',
    'bob@example.com',
    '--full-name',
    'Bob Example',
    '--without-password',
  ]);
  t.equal(created.status, 0, created.stderr);
  const bob = created.json as { api_key: string };

  const server = await startChild(dataDir);
  t.teardown(() => server.kill('SIGTERM'));
  assertSuccess(
    t,
    await me(server.url, 'bob@example.com', bob.api_key),
    'the user made offline works',
  );
  assertSuccess(t, await me(server.url, owner.email, owner.apiKey));
});

t.test('the lock: a second server on the directory is refused with a clear message', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir);
  t.teardown(() => server.kill('SIGTERM'));
  const { spawnChild } = await import('../helpers/child-server.js');
  const second = spawnChild(dataDir);
  const exit = await second.exited;
  t.equal(exit.code, 1);
  t.match(second.output(), /in use by another process \(server, pid \d+/);
  t.equal((await rawRequest(server.url, { method: 'GET', path: '/health' })).status, 200);
});

t.test('--env-file: the tool reads the server’s settings file', async (t) => {
  const dir = t.testdir({ 'confab.env': '' });
  const dataDir = path.join(dir, 'data');
  fs.writeFileSync(
    path.join(dir, 'confab.env'),
    `# as systemd's EnvironmentFile\nDATA_DIR=${dataDir}\nEXTERNAL_HOST=chat.example.org\nEXTERNAL_SCHEME=https\n`,
  );
  const made = await manage(
    null,
    [
      '--env-file',
      path.join(dir, 'confab.env'),
      'create-realm',
      '--name',
      'E',
      '--owner-email',
      'eve@x.test',
      '--password-env',
      'PW',
    ],
    { env: { PW: 'pw-env-file-1', DATA_DIR: '/nonexistent/elsewhere' } },
  );
  t.equal(made.status, 0, made.stderr);
  t.equal(made.json.url, 'https://chat.example.org', 'links use the file’s EXTERNAL_HOST');
  t.ok(fs.existsSync(path.join(dataDir, 'confab.sqlite3')), 'the file’s DATA_DIR');
});

t.test('the server log: JSON lines; no password, API key or message content', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, {
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'json',
    LOG_REQUESTS: 'all',
  });
  const owner = firstOwner(dataDir);
  const auth = { authorization: basicAuth(owner.email, owner.apiKey) };
  const secretContent = 'zebra-crossing-7731 message text';
  assertSuccess(t, await login(server.url, owner.email, owner.password));
  const sent = await rawRequest(server.url, {
    method: 'POST',
    path: '/api/v1/messages',
    headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      type: 'stream',
      to: 'general',
      topic: 'logs',
      content: secretContent,
    }).toString(),
  });
  assertSuccess(t, sent);
  await rawRequest(server.url, {
    method: 'GET',
    path: `/api/v1/messages?anchor=newest&num_before=5&num_after=0&narrow=${encodeURIComponent('[{"operator":"search","operand":"zebra"}]')}`,
    headers: auth,
  });
  await rawRequest(server.url, {
    method: 'PATCH',
    path: '/api/v1/settings',
    headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      old_password: owner.password,
      new_password: 'pw-new-owner-99',
    }).toString(),
  });
  await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { authorization: basicAuth(owner.email, 'not-the-key-0000000000000000000') },
  });
  await server.waitFor(/Confab is ready/);
  t.equal((await server.kill('SIGTERM')).code, 0);

  const out = server.output();
  t.match(out, /Confab is ready: open http:\/\/localhost:\d+ in a browser/, 'the banner (stderr)');
  t.notOk(out.includes(owner.password), 'no password in the banner, away from a terminal');
  const lines = out.split('\n').filter((l) => l.startsWith('{'));
  t.ok(lines.length >= 6, 'lines were logged');
  for (const l of lines) {
    const o = JSON.parse(l) as Record<string, unknown>;
    t.ok(o.time && o.level && o.msg, 'time, level, msg');
  }
  const log = lines.join('\n');
  for (const [what, secret] of [
    ['password', owner.password],
    ['new password', 'pw-new-owner-99'],
    ['API key', owner.apiKey],
    ['message content', 'zebra'],
  ] as const) {
    t.notOk(log.includes(secret), `no ${what} in the log`);
  }
  t.notMatch(log, /narrow=|anchor=/, 'no query strings');
  const requests = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((o) => o.msg === 'request');
  t.ok(
    requests.some((r) => r.url === '/api/v1/messages' && r.method === 'POST' && r.status === 200),
  );
  t.ok(requests.some((r) => r.url === '/api/v1/fetch_api_key'));
});
