/**
 * Crash safety on start (docs/robustness.md): the real server as a child process on damaged
 * data. A corrupt or truncated saved-queues file is logged and ignored; a database of a newer
 * schema version is refused with a clear message and left untouched.
 */
import Database from '../../src/storage/sqlite.js';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { pack } from '../../src/lib/pack.js';
import { spawnChild, startChild } from '../helpers/child-server.js';
import { client, ok, seed } from '../helpers/crash-load.js';

t.test('a corrupt or truncated saved-queues file is logged and ignored', async (t) => {
  const dataDir = t.testdir();
  const users = seed(dataDir);
  // A real saved file first (a queue, a graceful shutdown).
  const first = await startChild(dataDir);
  ok(await client(first.url).post(users[0]!, 'register', {}), 'register');
  // On a wrong exit code the child's output is printed with the failure (its log says why).
  t.equal((await first.kill('SIGTERM')).code, 0, 'first run: clean shutdown', {
    output: first.output(),
  });
  const saved = path.join(dataDir, 'event-queues.msgpack');
  const real = fs.readFileSync(saved);
  const variants: [string, Buffer][] = [
    ['truncated', real.subarray(0, Math.floor(real.length / 2))],
    ['garbage', Buffer.from('\xc1\xff\x00garbage that is not msgpack', 'latin1')],
    ['another shape', Buffer.from([0x93, 0x01, 0x02, 0x03])], // msgpack [1, 2, 3]
    [
      'broken queue entries',
      pack({ version: 1, savedAt: 0, queues: [{ id: 'x' }, null, 7, { id: 'y', settings: {} }] }),
    ],
  ];
  for (const [what, bytes] of variants) {
    fs.writeFileSync(saved, bytes);
    const server = await startChild(dataDir);
    t.match(server.output(), /could not read .*saved event queues/, `${what}: logged`);
    ok(await client(server.url).get(users[0]!, 'users/me'), `${what}: serving`);
    const { code, signal } = await server.kill('SIGTERM');
    t.same({ code, signal }, { code: 0, signal: null }, `${what}: clean shutdown`, {
      output: server.output(),
    });
  }
});

t.test('a data directory of a newer schema version is refused with a clear message', async (t) => {
  const dataDir = t.testdir();
  seed(dataDir);
  const file = path.join(dataDir, 'confab.sqlite3');
  const db = new Database(file);
  const version = db.pragma('user_version', { simple: true }) as number;
  db.pragma(`user_version = ${version + 1}`);
  db.close();
  const run = spawnChild(dataDir);
  const { code } = await run.exited;
  t.equal(code, 1, 'exit code 1', { output: run.output() });
  t.match(
    run.output(),
    `database schema version ${version + 1} is newer than this build knows (${version}); refusing to start`,
  );
  t.notMatch(run.output(), /listening on/, 'never listened');
  const check = new Database(file, { readonly: true });
  t.equal(
    check.pragma('user_version', { simple: true }),
    version + 1,
    'the database is left as it was',
  );
  check.close();
});
