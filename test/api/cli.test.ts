/**
 * The two ways to run Confab from a shell: `npm start` (src/main.ts: first boot creates a realm and
 * prints its owner's credentials once; SIGTERM shuts down cleanly) and `npm run manage`
 * (src/manage.ts: create-realm, create-user). Both run as real child processes on a temporary DATA_DIR.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { firstOwner, startChild } from '../helpers/child-server.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';

/** The admin tool; a password, when given, on standard input (--password-stdin). */
function manage(
  dataDir: string,
  args: string[],
  password?: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const node = plainNode(
    [
      path.join(DIST_SRC, 'manage.js'),
      ...args,
      ...(password === undefined ? [] : ['--password-stdin']),
    ],
    { DATA_DIR: dataDir },
  );
  // Not spawnSync: the other subtest's server, in this process's event loop, goes on meanwhile.
  return new Promise((resolve, reject) => {
    const child = spawn(node.file, node.args, { env: node.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(password ?? '');
  });
}

// The two subtests are independent (each its own data directory and server on port 0): they run
// at once, so that one's child process starts while the other's waits.
t.jobs = 2;

t.test(
  'npm start: the first start writes working owner credentials once; SIGTERM exits cleanly',
  async (t) => {
    const dataDir = t.testdir();
    const first = await startChild(dataDir);
    const { email, apiKey, password } = firstOwner(dataDir);
    const settings = await rawRequest(first.url, {
      method: 'GET',
      path: '/api/v1/server_settings',
    });
    assertSuccess(t, settings, 'server_settings served');
    const me = await rawRequest(first.url, {
      method: 'GET',
      path: '/api/v1/users/me',
      headers: { authorization: basicAuth(email, apiKey) },
    });
    t.match(assertSuccess(t, me), { email, role: 100, is_owner: true });
    const login = await rawRequest(first.url, {
      method: 'POST',
      path: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: email, password }).toString(),
    });
    t.equal(assertSuccess(t, login).api_key, apiKey, 'the written password logs in');
    t.equal((await first.kill('SIGTERM')).code, 0, 'exit code 0 after SIGTERM');

    const written = fs.statSync(path.join(dataDir, 'first-owner.txt')).mtimeMs;
    const second = await startChild(dataDir);
    await second.waitFor(/credentials are still in .*first-owner\.txt/);
    t.pass('a reminder that the credentials file is still there');
    t.equal(
      fs.statSync(path.join(dataDir, 'first-owner.txt')).mtimeMs,
      written,
      'the credentials are written only at the first start',
    );
    const again = await rawRequest(second.url, {
      method: 'GET',
      path: '/api/v1/users/me',
      headers: { authorization: basicAuth(email, apiKey) },
    });
    assertSuccess(t, again, 'data survived the restart');
    t.equal((await second.kill('SIGINT')).code, 0, 'exit code 0 after SIGINT');
  },
);

t.test('npm run manage: create-realm and create-user', async (t) => {
  const dataDir = t.testdir();
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

  const user = await manage(
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

  const dup = await manage(
    dataDir,
    ['create-user', '--realm', 'eng', '--email', 'mod@eng.test', '--full-name', 'Again'],
    'pw-mod-1',
  );
  t.equal(dup.status, 1);
  t.match(dup.stderr, /already in use/);
  const usage = await manage(dataDir, ['create-user', '--realm', 'eng']);
  t.equal(usage.status, 2);
  t.match(usage.stderr, /missing --email/);
  const noRealm = await manage(
    dataDir,
    ['create-user', '--realm', 'nope', '--email', 'a@b.cd', '--full-name', 'Ann'],
    'pw-123456',
  );
  t.equal(noRealm.status, 2);
  t.match(JSON.parse(noRealm.stderr), { error: 'no realm "nope"', code: 'USAGE' });
  const badRole = await manage(
    dataDir,
    ['create-user', '--realm', 'eng', '--email', 'a@b.cd', '--full-name', 'Ann', '--role', 'king'],
    'pw-123456',
  );
  t.equal(badRole.status, 2);

  // The server, started on that data directory, serves both accounts on the eng subdomain.
  const server = await startChild(dataDir);
  t.notOk(
    fs.existsSync(path.join(dataDir, 'first-owner.txt')),
    'an existing realm: no first realm',
  );
  const me = await rawRequest(server.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { host: 'eng.localhost:0', authorization: basicAuth('mod@eng.test', u.api_key) },
  });
  t.match(assertSuccess(t, me), { role: 300, full_name: 'Mo Derator' });
  t.equal((await server.kill('SIGTERM')).code, 0);
});
