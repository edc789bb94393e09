/**
 * Data at rest is private to the server's user (issue 10.7; docs/operations.md "Data directory
 * and backups"): the real server (`node dist/src/main.js`) started with the usual umask 022, on a
 * data directory an older version left world-readable, then used — messages, an upload, a custom
 * emoji, queues saved by a graceful shutdown. Every directory under DATA_DIR is 0700 and every
 * file 0600 (no group or other rights at all).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startChild } from '../helpers/child-server.js';
import { manage } from '../helpers/manage.js';
import { client, ok, prepare, seed } from '../helpers/crash-load.js';
import { tinyPng } from '../helpers/images.js';
import { multipartBody, request, upload } from '../helpers/uploads.js';

function walk(dir: string, out: { path: string; mode: number; dir: boolean }[] = []) {
  const st = fs.statSync(dir);
  out.push({ path: dir, mode: st.mode & 0o777, dir: true });
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    const s = fs.lstatSync(p);
    if (s.isDirectory()) walk(p, out);
    else out.push({ path: p, mode: s.mode & 0o777, dir: false });
  }
  return out;
}

t.test('everything under DATA_DIR is private to the server user', async (t) => {
  const root = t.testdir();
  const dataDir = path.join(root, 'data');
  const users = seed(dataDir);
  // As an older version under umask 022 left it.
  fs.chmodSync(dataDir, 0o755);
  fs.chmodSync(path.join(dataDir, 'confab.sqlite3'), 0o644);
  const previous = process.umask(0o022);
  t.teardown(() => void process.umask(previous));
  const server = await startChild(dataDir);
  t.teardown(() => void server.kill('SIGKILL'));
  await prepare(server.url, users);
  const api = client(server.url);
  ok(await api.post(users[0]!, 'register', {}), 'a queue');
  ok(
    await api.post(users[1]!, 'messages', {
      type: 'stream',
      to: 'load',
      topic: 'secrets',
      content: 'at rest',
    }),
    'a message',
  );
  ok(
    await upload(api, users[1]!, [
      { filename: 'a.txt', data: 'private', contentType: 'text/plain' },
    ]),
    'an upload',
  );
  const emoji = multipartBody([{ filename: 'e.png', data: tinyPng(), contentType: 'image/png' }]);
  const res = await request(api, 'POST', users[0]!, '/api/v1/realm/emoji/secret', emoji.body, {
    'content-type': emoji.contentType,
  });
  t.equal(res.status, 200, 'a custom emoji');
  t.equal((await server.kill('SIGTERM')).code, 0);

  const entries = walk(dataDir);
  const files = entries.filter((e) => !e.dir).map((e) => path.relative(dataDir, e.path));
  for (const want of ['confab.sqlite3', 'event-queues.msgpack']) {
    t.ok(files.includes(want), `${want} is there`);
  }
  t.ok(
    files.some((f) => f.startsWith('uploads')),
    'an uploaded file is there',
  );
  t.ok(
    files.some((f) => f.includes('emoji')),
    'the emoji file is there',
  );
  const open = entries.filter((e) => (e.mode & 0o077) !== 0);
  t.same(
    open.map((e) => `${path.relative(root, e.path)} ${e.mode.toString(8)}`),
    [],
    'no group or other rights anywhere',
  );
  t.equal(fs.statSync(dataDir).mode & 0o777, 0o700, 'the data directory is 0700');
});

t.test('what the admin tool writes, run under umask 022, is private too', async (t) => {
  // A realm with an upload, exported; then a new data directory made by create-realm and the
  // archive imported into it, both by the tool with no server running.
  const root = t.testdir();
  const source = path.join(root, 'source');
  const users = seed(source);
  const server = await startChild(source);
  t.teardown(() => void server.kill('SIGKILL'));
  await prepare(server.url, users);
  ok(
    await upload(client(server.url), users[1]!, [
      { filename: 'a.txt', data: 'private', contentType: 'text/plain' },
    ]),
    'an upload',
  );
  t.equal((await server.kill('SIGTERM')).code, 0);
  const previous = process.umask(0o022);
  t.teardown(() => void process.umask(previous));
  const archive = path.join(root, 'realm.tar.gz');
  const exported = await manage(source, ['export-realm', '--realm', '', '--to', archive]);
  t.equal(exported.status, 0, exported.stderr);

  const dataDir = path.join(root, 'data');
  const made = await manage(
    dataDir,
    [
      'create-realm',
      '--name',
      'New',
      '--subdomain',
      'new',
      '--owner-email',
      'owner@new.test',
      '--password-stdin',
    ],
    { stdin: 'a-long-password\n' },
  );
  t.equal(made.status, 0, made.stderr);
  const imported = await manage(dataDir, [
    'import-realm',
    '--from',
    archive,
    '--subdomain',
    'copy',
  ]);
  t.equal(imported.status, 0, imported.stderr);

  const entries = walk(dataDir);
  t.ok(
    entries.some((e) => !e.dir && path.relative(dataDir, e.path).startsWith('uploads/')),
    'the imported upload is there',
  );
  t.same(
    entries
      .filter((e) => (e.mode & 0o077) !== 0)
      .map((e) => `${path.relative(root, e.path)} ${e.mode.toString(8)}`),
    [],
    'no group or other rights anywhere',
  );
});
