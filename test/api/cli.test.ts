/**
 * The two ways to run Confab from a shell: `npm start` (src/main.ts: first boot creates a realm and
 * prints its owner's credentials once; SIGTERM shuts down cleanly) and `npm run manage`
 * (src/manage.ts: create-realm, create-user). Both run as real child processes on a temporary DATA_DIR.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';

/** The admin tool; a password, when given, on standard input (--password-stdin). */
function manage(dataDir: string, args: string[], password?: string) {
  const node = plainNode(
    [
      path.join(DIST_SRC, 'manage.js'),
      ...args,
      ...(password === undefined ? [] : ['--password-stdin']),
    ],
    { DATA_DIR: dataDir },
  );
  const r = spawnSync(node.file, node.args, {
    env: node.env,
    encoding: 'utf8',
    input: password ?? '',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Started = {
  url: string;
  output: () => string;
  stop: (signal: NodeJS.Signals) => Promise<number | null>;
};

function startMain(dataDir: string): Promise<Started> {
  const node = plainNode([path.join(DIST_SRC, 'main.js')], {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const child = spawn(node.file, node.args, {
    env: node.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearInterval(timer);
        resolve({
          url: m[1]!,
          output: () => out,
          stop: (signal) => {
            child.kill(signal);
            return exited;
          },
        });
      }
    }, 20);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`server exited (${String(code)}) before listening:\n${out}`));
    });
  });
}

t.test(
  'npm start: first boot prints working owner credentials once; SIGTERM exits cleanly',
  async (t) => {
    const dataDir = t.testdir();
    const first = await startMain(dataDir);
    const email = /email:\s+(\S+)/.exec(first.output())?.[1];
    const apiKey = /api key:\s+(\S+)/.exec(first.output())?.[1];
    const password = /password:\s+(\S+)/.exec(first.output())?.[1];
    t.ok(email && apiKey && password, 'credentials printed');
    const settings = await rawRequest(first.url, {
      method: 'GET',
      path: '/api/v1/server_settings',
    });
    assertSuccess(t, settings, 'server_settings served');
    const me = await rawRequest(first.url, {
      method: 'GET',
      path: '/api/v1/users/me',
      headers: { authorization: basicAuth(email!, apiKey!) },
    });
    t.match(assertSuccess(t, me), { email, role: 100, is_owner: true });
    const login = await rawRequest(first.url, {
      method: 'POST',
      path: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: email!, password: password! }).toString(),
    });
    t.equal(assertSuccess(t, login).api_key, apiKey, 'the printed password logs in');
    t.equal(await first.stop('SIGTERM'), 0, 'exit code 0 after SIGTERM');

    const second = await startMain(dataDir);
    t.notMatch(second.output(), /api key:/, 'credentials are printed only on the first boot');
    const again = await rawRequest(second.url, {
      method: 'GET',
      path: '/api/v1/users/me',
      headers: { authorization: basicAuth(email!, apiKey!) },
    });
    assertSuccess(t, again, 'data survived the restart');
    t.equal(await second.stop('SIGINT'), 0, 'exit code 0 after SIGINT');
  },
);

t.test('npm run manage: create-realm and create-user', async (t) => {
  const dataDir = t.testdir();
  const realm = manage(
    dataDir,
    [
      'create-realm',
      '--name',
      'Engineering',
      '--subdomain',
      'eng',
      '--owner-email',
      'boss@eng.test',
    ],
    'pw-boss-1',
  );
  t.equal(realm.status, 0, realm.stderr);
  const r = JSON.parse(realm.stdout) as {
    realm_id: number;
    user_id: number;
    email: string;
    api_key: string;
  };
  t.match(r, {
    realm_id: Number,
    user_id: Number,
    email: 'boss@eng.test',
    api_key: /^[A-Za-z0-9]{32}$/,
  });

  const user = manage(
    dataDir,
    [
      'create-user',
      '--realm',
      'eng',
      '--email',
      'mod@eng.test',
      '--full-name',
      'Mo Derator',
      '--role',
      'moderator',
    ],
    'pw-mod-1',
  );
  t.equal(user.status, 0, user.stderr);
  const u = JSON.parse(user.stdout) as {
    realm_id: number;
    user_id: number;
    email: string;
    api_key: string;
  };
  t.match(u, { realm_id: r.realm_id, email: 'mod@eng.test', api_key: /^[A-Za-z0-9]{32}$/ });

  const dup = manage(
    dataDir,
    ['create-user', '--realm', 'eng', '--email', 'mod@eng.test', '--full-name', 'Again'],
    'pw-mod-1',
  );
  t.equal(dup.status, 1);
  t.match(dup.stderr, /already in use/);
  const usage = manage(dataDir, ['create-user', '--realm', 'eng']);
  t.equal(usage.status, 2);
  t.match(usage.stderr, /missing --email/);
  const noRealm = manage(
    dataDir,
    ['create-user', '--realm', 'nope', '--email', 'a@b.cd', '--full-name', 'Ann'],
    'pw-123456',
  );
  t.equal(noRealm.status, 2);
  t.match(JSON.parse(noRealm.stderr), { error: 'no realm "nope"', code: 'USAGE' });
  const badRole = manage(
    dataDir,
    ['create-user', '--realm', 'eng', '--email', 'a@b.cd', '--full-name', 'Ann', '--role', 'king'],
    'pw-123456',
  );
  t.equal(badRole.status, 2);

  // The server, started on that data directory, serves both accounts on the eng subdomain.
  const server = await startMain(dataDir);
  t.notMatch(server.output(), /api key:/, 'an existing realm means no first-boot realm');
  const me = await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { host: 'eng.localhost:0', authorization: basicAuth('mod@eng.test', u.api_key) },
  });
  t.match(assertSuccess(t, me), { role: 300, full_name: 'Mo Derator' });
  t.equal(await server.stop('SIGTERM'), 0);
});
