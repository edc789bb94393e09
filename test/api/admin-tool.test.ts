/**
 * The admin tool without traps (issue 34): it refuses a data directory that does not exist or
 * holds no database (only create-realm and restore start one) and a user other than its owner;
 * its commands for the operator's everyday work (rename and reactivate a realm, create a channel,
 * send a message as a bot, make an invitation link, change an e-mail address, log a user out
 * everywhere, check the configuration); and the audit log, which records every administrative
 * action by the tool or the API (who, what, when, from where) and which the tool reads.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import os from 'node:os';
import t, { type Test } from 'tap';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { firstOwner, startChild, type ChildServer } from '../helpers/child-server.js';
import { manage, type ManageRun } from '../helpers/manage.js';
import { fileURLToPath } from 'node:url';

t.setTimeout(600_000);
// Each subtest has its own data directory (and server, where it starts one) and spawns the tool
// one command after another: two of them run at once, so that one's child process starts while
// the other's waits (alone on this file: ~50 s one at a time).
t.jobs = 2;

type Entry = {
  id: number;
  event_type: string;
  acting_user_id: number | null;
  modified_user_id: number | null;
  modified_channel_id: number | null;
  via: string;
  address?: string;
  user_agent?: string;
  os_user?: string;
  extra: Record<string, unknown>;
};

async function auditLog(dataDir: string, args: string[] = ['--realm', '']): Promise<Entry[]> {
  const r = await manage(dataDir, ['audit-log', ...args]);
  if (r.status !== 0) throw new Error(`audit-log failed: ${r.stderr}`);
  return (r.json as { entries: Entry[] }).entries;
}

function ok(t: Test, r: ManageRun, what: string): Record<string, unknown> {
  t.equal(r.status, 0, `${what}: exit 0`, { stderr: r.stderr });
  return r.json;
}

function api(server: ChildServer, owner: { email: string; apiKey: string }) {
  const auth = basicAuth(owner.email, owner.apiKey);
  return (method: string, p: string, form?: Record<string, string>, headers = {}) =>
    rawRequest(server.url, {
      method,
      path: p,
      headers: {
        authorization: auth,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
}

/** The admin tool as another operating-system user (`uid`), root only. */
function manageAs(uid: number, dataDir: string, args: string[]): Promise<ManageRun> {
  return manage(dataDir, args, { uid, cwd: '/' });
}

t.test('a data directory that does not exist, or holds no database, is refused', async (t) => {
  const root = t.testdir();
  const missing = path.join(root, 'missing');
  const r = await manage(missing, ['list-realms']);
  t.equal(r.status, 1, 'exit 1');
  t.match(r.json, { code: 'NO_DATA_DIR', error: /does not exist.*--env-file/ });
  t.notOk(fs.existsSync(missing), 'nothing was created');

  const empty = path.join(root, 'empty');
  fs.mkdirSync(empty, { mode: 0o700 });
  const e = await manage(empty, ['list-users', '--realm', '']);
  t.equal(e.status, 1);
  t.match(e.json, { code: 'NO_DATABASE', error: /holds no Confab database/ });
  t.same(fs.readdirSync(empty), [], 'the empty directory stays empty');

  // Only create-realm starts a new data directory.
  const made = await manage(
    missing,
    ['create-realm', '--name', 'New', '--owner-email', 'new@example.org', '--password-stdin'],
    { stdin: 'pw-new-owner-1\n' },
  );
  ok(t, made, 'create-realm on a new directory');
  t.equal(fs.statSync(missing).mode & 0o777, 0o700, 'made private');
  ok(t, await manage(missing, ['list-realms']), 'then list-realms works');
});

t.test('a full name or password the server refuses: a usage error saying why', async (t) => {
  const dataDir = path.join(t.testdir(), 'data');
  const realm = ['create-realm', '--name', 'Names', '--subdomain', 'names', '--password-stdin'];
  // No --owner-name: the default, the e-mail's local part, is one letter here.
  const short = await manage(dataDir, [...realm, '--owner-email', 'o@example.org'], {
    stdin: 'pw-names-owner-1\n',
  });
  t.equal(short.status, 2, 'exit 2');
  t.same(short.json, {
    error:
      '--owner-name: Name too short! (none given, so the e-mail’s local part, "o": give --owner-name)',
    code: 'USAGE',
  });
  const bad = await manage(
    dataDir,
    [...realm, '--owner-email', 'o@example.org', '--owner-name', 'a*b'],
    { stdin: 'pw-names-owner-1\n' },
  );
  t.equal(bad.status, 2);
  t.equal(bad.json.error, '--owner-name: Invalid characters in name!');
  ok(
    t,
    await manage(dataDir, [...realm, '--owner-email', 'o@example.org', '--owner-name', 'Olga'], {
      stdin: 'pw-names-owner-1\n',
    }),
    'with --owner-name',
  );
  const user = await manage(dataDir, [
    'create-user',
    '--realm',
    'names',
    '--email',
    'x@example.org',
    '--full-name',
    'x',
    '--without-password',
  ]);
  t.equal(user.status, 2, 'create-user: exit 2');
  t.equal(user.json.error, '--full-name: Name too short!');
  // A password the API's rule refuses: the rule said, as a usage error.
  for (const [what, password] of [
    ['5 characters', 'abcde'],
    ['101 characters', 'x'.repeat(101)],
  ]) {
    const weak = await manage(
      dataDir,
      ['reset-password', '--realm', 'names', '--user', 'o@example.org', '--password-stdin'],
      { stdin: `${password}\n` },
    );
    t.equal(weak.status, 2, `${what}: exit 2`);
    t.equal(
      weak.json.error,
      'the password is too weak: it must be 6 to 100 characters long',
      `${what}: says the rule`,
    );
  }
});

t.test('a user other than the data directory’s owner is refused', async (t) => {
  if (process.getuid?.() !== 0) {
    t.pass('skipped: only root can run the tool as another user');
    return;
  }
  const NOBODY = 65534;
  const root = t.testdir();
  fs.chmodSync(root, 0o755);
  const dataDir = path.join(root, 'data');
  ok(
    t,
    await manage(
      dataDir,
      ['create-realm', '--name', 'Ops', '--owner-email', 'ops@example.org', '--password-stdin'],
      { stdin: 'pw-ops-owner-1\n' },
    ),
    'a realm, as root',
  );

  // Root's data directory, another user's tool.
  const other = await manageAs(NOBODY, dataDir, ['list-realms']);
  t.equal(other.status, 1, 'another user: exit 1');
  t.match(other.json, { code: 'WRONG_USER', error: /belongs to root.*sudo -u root/ });

  // The service user's data directory, root's tool: what the issue met (uploads/ and tmp/ left
  // owned by root, after which uploads failed with EACCES).
  fs.chownSync(dataDir, NOBODY, NOBODY);
  for (const f of fs.readdirSync(dataDir)) fs.chownSync(path.join(dataDir, f), NOBODY, NOBODY);
  const before = fs.readdirSync(dataDir).sort();
  const asRoot = await manage(dataDir, [
    'create-user',
    '--realm',
    '',
    '--email',
    'x@example.org',
    '--full-name',
    'Xavier',
    '--without-password',
  ]);
  t.equal(asRoot.status, 1, 'root on the service user’s directory: exit 1');
  t.match(asRoot.json, { code: 'WRONG_USER', error: /belongs to nobody.*sudo -u nobody/ });
  t.same(fs.readdirSync(dataDir).sort(), before, 'nothing was created');
  const asOwner = await manageAs(NOBODY, dataDir, ['list-realms']);
  ok(t, asOwner, 'the owner’s tool works');
});

t.test('the new commands, through the running server, each in the audit log', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir);
  t.teardown(() => server.kill('SIGKILL'));
  const owner = firstOwner(dataDir);
  const call = api(server, owner);

  // rename-realm
  ok(t, await manage(dataDir, ['rename-realm', '--realm', '', '--name', 'Acme']), 'rename-realm');
  const settings = await rawRequest(server.url, { method: 'GET', path: '/api/v1/server_settings' });
  t.equal(assertSuccess(t, settings).realm_name, 'Acme', 'clients see the new name');

  // create-channel, every active user subscribed
  const ch = ok(
    t,
    await manage(dataDir, [
      'create-channel',
      '--realm',
      '',
      '--name',
      'ops',
      '--description',
      'Operations',
      '--subscribe-everyone',
    ]),
    'create-channel',
  );
  t.match(ch, { name: 'ops', stream_id: Number, invite_only: false });
  const subs = assertSuccess(t, await call('GET', '/api/v1/users/me/subscriptions'));
  t.ok(
    (subs.subscriptions as { name: string }[]).some((s) => s.name === 'ops'),
    'the owner is subscribed',
  );
  const again = await manage(dataDir, ['create-channel', '--realm', '', '--name', 'ops']);
  t.equal(again.status, 2, 'an existing name is refused');

  // send-message, as Notification Bot, to the channel; and directly to the owner
  const sent = ok(
    t,
    await manage(
      dataDir,
      [
        'send-message',
        '--realm',
        '',
        '--channel',
        'ops',
        '--topic',
        'maintenance',
        '--content-stdin',
      ],
      { stdin: 'The server restarts at **22:00**.' },
    ),
    'send-message to a channel',
  );
  const msg = assertSuccess(
    t,
    await call('GET', `/api/v1/messages/${String(sent.message_id)}?apply_markdown=true`),
  );
  t.match(msg.message, {
    sender_email: 'notification-bot@zulip.com',
    subject: 'maintenance',
    content: /<strong>22:00<\/strong>/,
  });
  ok(
    t,
    await manage(dataDir, ['send-message', '--realm', '', '--to', owner.email, '--content', 'hi']),
    'send-message directly',
  );
  const noBot = await manage(dataDir, [
    'send-message',
    '--realm',
    '',
    '--bot',
    owner.email,
    '--to',
    owner.email,
    '--content',
    'x',
  ]);
  t.equal(noBot.status, 2, 'a human is no bot');

  // create-invitation: for one address, and a reusable link
  const inv = ok(
    t,
    await manage(dataDir, [
      'create-invitation',
      '--realm',
      '',
      '--email',
      'newbie@example.com',
      '--role',
      'moderator',
    ]),
    'create-invitation --email',
  );
  t.match(inv, { link: /\/accounts\/do_confirm\/\w+\/$/, invited_as: 'moderator' });
  const multi = ok(
    t,
    await manage(dataDir, [
      'create-invitation',
      '--realm',
      '',
      '--multiuse',
      '--expires-days',
      '0',
    ]),
    'create-invitation --multiuse',
  );
  t.match(multi, { link: /\/join\/\w+\/$/, expires_in_days: null });
  const listed = ok(t, await manage(dataDir, ['list-invitations', '--realm', '']), 'listed');
  t.equal((listed.invitations as unknown[]).length, 2, 'both are pending');

  // change-email
  const changed = ok(
    t,
    await manage(dataDir, [
      'change-email',
      '--realm',
      '',
      '--user',
      owner.email,
      '--email',
      'boss@acme.test',
    ]),
    'change-email',
  );
  t.match(changed, { old_email: owner.email, new_email: 'boss@acme.test' });
  const me = assertSuccess(
    t,
    await rawRequest(server.url, {
      method: 'GET',
      path: '/api/v1/users/me',
      headers: { authorization: basicAuth('boss@acme.test', owner.apiKey) },
    }),
  );
  t.equal(me.delivery_email, 'boss@acme.test', 'the account has the new address');
  const call2 = api(server, { email: 'boss@acme.test', apiKey: owner.apiKey });

  // logout-everywhere: the event queue is gone; with --new-api-key, the key too
  const reg = assertSuccess(t, await call2('POST', '/api/v1/register', {}));
  ok(
    t,
    await manage(dataDir, ['logout-everywhere', '--realm', '', '--user', 'boss@acme.test']),
    'logout-everywhere',
  );
  const poll = await call2(
    'GET',
    `/api/v1/events?queue_id=${String(reg.queue_id)}&last_event_id=-1`,
  );
  t.equal(poll.body.code, 'BAD_EVENT_QUEUE_ID', 'the queue ended');
  const out = ok(
    t,
    await manage(dataDir, [
      'logout-everywhere',
      '--realm',
      '',
      '--user',
      'boss@acme.test',
      '--new-api-key',
    ]),
    'logout-everywhere --new-api-key',
  );
  t.not(out.api_key, owner.apiKey);
  t.equal((await call2('GET', '/api/v1/users/me')).status, 401, 'the old key is refused');

  // deactivate, then reactivate the realm
  ok(t, await manage(dataDir, ['deactivate-realm', '--realm', '']), 'deactivate-realm');
  const call3 = api(server, { email: 'boss@acme.test', apiKey: out.api_key as string });
  t.not((await call3('GET', '/api/v1/users/me')).status, 200, 'nobody gets in');
  ok(t, await manage(dataDir, ['reactivate-realm', '--realm', '']), 'reactivate-realm');
  assertSuccess(t, await call3('GET', '/api/v1/users/me'), 'in again');

  // Every one of them in the audit log, as the admin tool's, newest first.
  const entries = await auditLog(dataDir);
  const types = entries.map((e) => e.event_type);
  for (const type of [
    'realm_changed',
    'channel_created',
    'message_sent_by_tool',
    'invitation_created',
    'user_email_changed',
    'user_logged_out',
    'realm_deactivated',
    'realm_reactivated',
  ]) {
    t.ok(types.includes(type), `${type} recorded`);
  }
  t.equal(types[0], 'realm_reactivated', 'newest first');
  const tool = entries.filter((e) => e.via === 'admin_tool');
  t.ok(tool.length >= 9, 'the tool’s actions');
  for (const e of tool) {
    t.equal(e.os_user, 'root', `${e.event_type}: who ran the tool`);
    t.equal(e.acting_user_id, null, `${e.event_type}: no API user acted`);
  }
  const renamed = entries.find((e) => e.event_type === 'realm_changed' && e.via === 'admin_tool');
  t.match(renamed?.extra, { name: 'Acme' }, 'what changed');
  const email = entries.find((e) => e.event_type === 'user_email_changed')!;
  t.equal(email.modified_user_id, me.user_id, 'on whom');
  t.notMatch(JSON.stringify(entries), /pw-|api_key":"[A-Za-z0-9]{32}/, 'no secrets');
  const filtered = await auditLog(dataDir, ['--realm', '', '--type', 'channel_created']);
  t.ok(filtered.length >= 1 && filtered.every((e) => e.event_type === 'channel_created'));

  // The server's log has a line for each, too.
  await server.waitFor(/"msg":"audit: realm_reactivated"/);
  t.match(server.output(), /"msg":"admin tool: rename-realm"/, 'the tool’s commands are logged');
});

t.test('audit-log --type: an unknown type is a usage error naming the types', async (t) => {
  const dataDir = path.join(t.testdir(), 'data');
  const made = await manage(
    dataDir,
    ['create-realm', '--name', 'Acme', '--owner-email', 'owner@example.org', '--password-stdin'],
    { stdin: 'pw-acme-owner-1\n' },
  );
  t.equal(made.status, 0, made.stderr);
  const known = await manage(dataDir, ['audit-log', '--realm', '', '--type', 'realm_created']);
  t.equal(known.status, 0, known.stderr);
  t.equal((known.json as { entries: Entry[] }).entries.length, 1, 'a known type filters');
  const typo = await manage(dataDir, ['audit-log', '--realm', '', '--type', 'realm_create']);
  t.equal(typo.status, 2, 'exit 2, not an empty list');
  t.match(typo.json.error, /^unknown --type "realm_create": the types are .*realm_created/);
  for (const type of ['user_changed', 'backup_taken', 'data_restored', 'channel_created'])
    t.match(typo.json.error, type, `names ${type}`);
  const server = await manage(dataDir, ['audit-log', '--server', '--type', 'backup']);
  t.equal(server.status, 2, '--server too');
});

t.test('API actions: who, from which address and client', async (t) => {
  const dataDir = t.testdir();
  const server = await startChild(dataDir, { TRUSTED_PROXIES: '127.0.0.1', LOG_FORMAT: 'json' });
  t.teardown(() => server.kill('SIGKILL'));
  const owner = firstOwner(dataDir);
  const call = api(server, owner);
  const headers = { 'x-forwarded-for': '203.0.113.9', 'user-agent': 'ZulipTerminal/0.7.0' };
  assertSuccess(t, await call('PATCH', '/api/v1/realm', { name: 'Renamed' }, headers));
  const created = assertSuccess(
    t,
    await call(
      'POST',
      '/api/v1/users',
      { email: 'ann@example.org', password: 'pw-ann-00001', full_name: 'Ann Example' },
      headers,
    ),
  );
  assertSuccess(
    t,
    await call('PATCH', `/api/v1/users/${String(created.user_id)}`, { role: '200' }, headers),
  );
  // A member's own doings are not administrative.
  assertSuccess(
    t,
    await call('POST', '/api/v1/messages', {
      type: 'stream',
      to: 'general',
      topic: 't',
      content: 'x',
    }),
  );

  const entries = await auditLog(dataDir);
  const byType = (type: string) => entries.find((e) => e.event_type === type && e.via === 'api');
  for (const type of ['realm_changed', 'user_created', 'user_changed']) {
    const e = byType(type);
    t.match(
      e,
      { acting_user_id: Number, address: '203.0.113.9', user_agent: 'ZulipTerminal/0.7.0' },
      `${type}: by the owner, from the forwarded address, with the client's name`,
    );
  }
  t.equal(byType('user_created')?.modified_user_id, created.user_id, 'on the new user');
  t.match(byType('user_changed')?.extra, { role: 200 });
  t.notOk(
    entries.some((e) => /message/.test(e.event_type)),
    'no message entries',
  );
  const first = entries.at(-1)!;
  t.match(first, { event_type: 'realm_created', via: 'server' }, 'the first start made the realm');

  await server.waitFor(/"msg":"audit: user_changed"/);
  const line = server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; audit?: Record<string, unknown> })
    .find((o) => o.msg === 'audit: realm_changed');
  t.match(line?.audit, { via: 'api', address: '203.0.113.9', realm_id: 1 }, 'the log line');
});

t.test('check-config: a data directory the server’s user cannot write is an error', async (t) => {
  if (process.getuid?.() !== 0) {
    t.pass('skipped: only root can run the tool as another user');
    return;
  }
  // Root's directory, checked by the service user (as under `sudo -u confab`).
  const root = t.testdir({ data: {} });
  fs.chmodSync(root, 0o755);
  fs.chmodSync(path.join(root, 'data'), 0o755);
  const cases: [string, RegExp][] = [
    [path.join(root, 'data'), /is not writable by nobody: the server, run as nobody, would not/],
    [
      path.join(root, 'data', 'a', 'b'),
      /does not exist and nobody cannot make it \(\S+\/data is not writable\)/,
    ],
  ];
  for (const [dataDir, message] of cases) {
    const r = await manage(dataDir, ['check-config'], { uid: 65534, cwd: '/', env: { PORT: '0' } });
    t.equal(r.status, 1, `${dataDir}: exit 1`);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      findings: { level: string; message: string; setting?: string }[];
    };
    t.equal(out.ok, false);
    t.match(
      out.findings.filter((f) => f.level === 'error'),
      [{ setting: 'DATA_DIR', message }],
      'the one error names DATA_DIR and says why',
    );
  }
});

t.test('check-config', async (t) => {
  const dataDir = t.testdir();
  const good = await manage(dataDir, ['check-config'], { env: { PORT: '0' } });
  t.equal(good.status, 0, good.stderr);
  t.match(good.json, { ok: true, data_dir: dataDir, server_running: false });
  const findings = (r: ManageRun) =>
    (JSON.parse(r.stdout) as { findings: { level: string; setting?: string }[] }).findings;
  t.ok(
    findings(good).some((f) => f.level === 'warning' && f.setting === 'EXTERNAL_HOST'),
    'a warning: EXTERNAL_HOST unset',
  );
  t.notOk(
    findings(good).some((f) => f.level === 'error'),
    'no error',
  );

  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = String((taken.address() as net.AddressInfo).port);
  const bad = await manage(dataDir, ['check-config'], {
    env: { PORT: port, EXTERNAL_HOST: 'chat.example.com', EXTERNAL_SCHEME: 'http' },
  });
  t.equal(bad.status, 1, 'an error: exit 1');
  t.equal((JSON.parse(bad.stdout) as { ok: boolean }).ok, false);
  t.ok(
    findings(bad).some((f) => f.level === 'error' && f.setting === 'PORT'),
    'the port taken: an error',
  );
  t.ok(
    findings(bad).some((f) => f.level === 'warning' && f.setting === 'EXTERNAL_SCHEME'),
    'http for a public name: a warning',
  );

  const server = await startChild(dataDir);
  t.teardown(() => server.kill('SIGKILL'));
  const running = await manage(dataDir, ['check-config'], {
    env: { PORT: new URL(server.url).port },
  });
  t.match(running.json, { ok: true, server_running: true }, 'the server’s own port is no error');

  const to = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-backup-'));
  t.teardown(() => fs.rmSync(to, { recursive: true, force: true }));
  const backup = await manage(dataDir, ['backup', '--to', path.join(to, 'b')]);
  t.equal(backup.status, 0, backup.stderr);
  const server_ = await auditLog(dataDir, ['--server']);
  t.match(server_[0], { event_type: 'backup_taken', via: 'admin_tool' }, 'server-wide entries');
});

t.test(
  'what the tool loads: the store and what runs on it only to open the data directory',
  async (t) => {
    const hook = fileURLToPath(new URL('../helpers/loaded-modules.js', import.meta.url));
    const dataDir = t.testdir();
    /** The tool with `args`, and the modules it loaded (URLs, as the loader names them). */
    const run = async (args: string[], stdin?: string) => {
      const file = path.join(t.testdirName, `loaded-${args[0]}.txt`);
      const r = await manage(dataDir, args, {
        nodeFlags: ['--import', hook],
        env: { LOADED_MODULES_FILE: file },
        ...(stdin !== undefined ? { stdin } : {}),
      });
      return { r, loaded: fs.readFileSync(file, 'utf8').split('\n') };
    };
    const has = (loaded: string[], end: string) => loaded.some((u) => u.includes(end));
    // What a command on the data directory itself needs, and --help and a request to a server not.
    const store = [
      '/dist/src/storage/store.js',
      '/node_modules/better-sqlite3/',
      '/dist/actors/registry.js',
      '/dist/workers/pool.js',
      '/node_modules/piscina/',
    ];

    const help = await run(['--help']);
    t.equal(help.r.status, 0, '--help: exit 0');
    t.match(help.r.stdout, /^usage: npm run manage/);
    t.ok(has(help.loaded, '/dist/src/admin/commands.js'), '--help: the command table, seen loaded');
    // Nor the settings' parser (zod) or the logger: the command table alone.
    for (const m of [...store, '/dist/src/config.js', '/node_modules/zod/', '/node_modules/pino/'])
      t.notOk(has(help.loaded, m), `--help: not ${m}`);

    const unknown = await run(['no-such-command']);
    t.equal(unknown.r.status, 2, 'a usage error: exit 2');
    t.match(JSON.parse(unknown.r.stderr.split('\n')[0]!), { code: 'USAGE' });
    for (const m of [...store, '/dist/src/config.js'])
      t.notOk(has(unknown.loaded, m), `usage: not ${m}`);

    // No server: the tool opens the data directory itself (what the list above would catch).
    const created = await run(
      ['create-realm', '--name', 'Loads', '--owner-email', 'owner@loads.test', '--password-stdin'],
      'pw-loads-1\n',
    );
    t.equal(created.r.status, 0, created.r.stderr);
    for (const m of store) t.ok(has(created.loaded, m), `the tool on the data directory: ${m}`);

    const server = await startChild(dataDir);
    t.teardown(() => server.kill('SIGKILL'));
    const asked = await run(['queue-stats']);
    t.match(asked.r.json, { server_running: true }, 'answered by the running server');
    // Nor the logger: nothing logs in this process then.
    for (const m of [...store, '/node_modules/pino/'])
      t.notOk(has(asked.loaded, m), `through the admin socket: not ${m}`);
    t.equal((await server.kill('SIGTERM')).code, 0);
  },
);
