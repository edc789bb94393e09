/**
 * Backups (`manage backup`, online, through the running server) and restores (`manage restore`
 * into an empty data directory): a backup taken while messages keep being sent restores to a
 * server that has every message acknowledged before the backup began, and the uploads, and
 * passes SQLite's integrity check. docs/operations.md "Backups".
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createServer } from '../../src/server.js';
import { checkDatabaseFile } from '../../src/storage/maintenance.js';
import { ApiClient, assertSuccess } from '../helpers/api.js';
import { manage } from '../helpers/manage.js';
import { fetchNarrow } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { download, upload } from '../helpers/uploads.js';

t.setTimeout(600_000);

t.test('a backup during send load restores every acknowledged message', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  assertSuccess(
    t,
    await api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'load' }],
      principals: [fx.users.iago!.id, fx.users.hamlet!.id, fx.users.othello!.id],
    }),
  );
  const fileBytes = Buffer.from('backed-up file contents '.repeat(100));
  const up = assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'notes.txt', data: fileBytes }]),
  );
  const fileUrl = up.url as string;

  // Senders: each sends one message after another and records the ones acknowledged.
  const acked: number[] = [];
  let stop = false;
  let sent = 0;
  const MAX_MESSAGES = 3000;
  const sender = async (who: string) => {
    while (!stop && sent < MAX_MESSAGES) {
      sent++;
      const res = await api.post(who, 'messages', {
        type: 'stream',
        to: 'load',
        topic: `from ${who}`,
        content: `message ${sent} [file](${fileUrl})`,
      });
      if (res.status !== 200) throw new Error(`send failed: ${res.text}`);
      acked.push(res.body.id as number);
    }
  };
  const senders = Promise.all(['iago', 'hamlet', 'othello', 'iago'].map(sender));
  while (acked.length < 40) await new Promise((r) => setTimeout(r, 20));

  const before = [...acked];
  const backupDir = `${ts.dataDir}-backup`;
  t.teardown(() => fs.rmSync(backupDir, { recursive: true, force: true }));
  const backup = await manage(ts.dataDir, ['backup', '--to', backupDir]);
  const sentDuringBackup = acked.length - before.length;
  stop = true;
  await senders;
  t.equal(backup.status, 0, backup.stderr);
  t.ok(sentDuringBackup > 0, `messages kept being sent during the backup (${sentDuringBackup})`);

  const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as {
    format: string;
    files: { path: string; size: number; sha256: string }[];
  };
  t.equal(manifest.format, 'confab-backup');
  const paths = manifest.files.map((f) => f.path);
  t.ok(paths.includes('confab.sqlite3'), 'the database');
  t.ok(
    paths.some((p) => p.startsWith('uploads/') && p.endsWith('notes.txt')),
    'the upload',
  );
  t.notOk(
    paths.some((p) => /confab\.(lock|pid)|admin\.sock|-wal$/.test(p)),
    'no lock, socket or WAL',
  );
  for (const f of manifest.files) {
    t.equal(fs.statSync(path.join(backupDir, f.path)).size, f.size, `${f.path}: size`);
    t.match(f.sha256, /^[0-9a-f]{64}$/);
  }

  const restoredDir = `${ts.dataDir}-restored`;
  t.teardown(() => fs.rmSync(restoredDir, { recursive: true, force: true }));
  const restore = await manage(restoredDir, ['restore', '--from', backupDir]);
  t.equal(restore.status, 0, restore.stderr);
  t.match(restore.json, { integrity: 'ok', files: manifest.files.length });
  t.match(checkDatabaseFile(path.join(restoredDir, 'confab.sqlite3')), { ok: true, problems: [] });

  const restored = await createServer({
    host: '127.0.0.1',
    port: 0,
    dataDir: restoredDir,
    scryptN: 1024,
    externalHost: 'testserver.local',
    rateLimits: null,
  });
  t.teardown(() => restored.close());
  const api2 = new ApiClient(restored.url, fx);
  const got = await fetchNarrow(api2, 'iago', [{ operator: 'channel', operand: 'load' }], {
    num_before: 5000,
  });
  t.equal(got.status, 200, got.text.slice(0, 300));
  const have = new Set(got.ids);
  const missing = before.filter((id) => !have.has(id));
  t.same(missing, [], `all ${before.length} messages acknowledged before the backup are there`);
  const file = await download(api2, 'hamlet', fileUrl);
  t.equal(file.status, 200, 'the upload is restored');
  t.ok(file.body.equals(fileBytes), 'byte for byte');
});

t.test('restore refuses a damaged backup and a data directory in use', async (t) => {
  const ts = await startServer(t);
  const backupDir = `${ts.dataDir}-backup`;
  t.teardown(() => fs.rmSync(backupDir, { recursive: true, force: true }));
  // What a start leaves of the saved event queues (read, then moved aside), which nothing reads.
  fs.writeFileSync(path.join(ts.dataDir, 'event-queues.msgpack.last'), 'CFQ2');
  // A copy a cluster node set aside (src/cluster/main.ts), kept for diagnosis only.
  const aside = path.join(ts.dataDir, 'discarded', '2026-12-07T18-00-00.000Z');
  fs.mkdirSync(aside, { recursive: true });
  fs.writeFileSync(path.join(aside, 'confab.sqlite3'), 'SQLite format 3');
  t.equal((await manage(ts.dataDir, ['backup', '--to', backupDir])).status, 0);
  t.notOk(
    fs.existsSync(path.join(backupDir, 'event-queues.msgpack.last')),
    'the saved event queues already read are not backed up',
  );
  t.notOk(fs.existsSync(path.join(backupDir, 'discarded')), 'nor the copies set aside');
  const again = await manage(ts.dataDir, ['backup', '--to', backupDir]);
  t.equal(again.status, 2, 'a backup never overwrites another');
  t.match(again.json.error, /not empty/);
  const inside = await manage(ts.dataDir, ['backup', '--to', path.join(ts.dataDir, 'bk')]);
  t.equal(inside.status, 2, 'nor goes inside the data directory');

  // A file where the backup or an export archive's directory would go: said, not an "internal
  // error (see the server log)" from the server that ran the command.
  const file = `${ts.dataDir}-file`;
  fs.writeFileSync(file, 'x');
  t.teardown(() => fs.rmSync(file, { force: true }));
  const onFile = await manage(ts.dataDir, ['backup', '--to', file]);
  t.equal(onFile.status, 2, 'a backup onto a file is refused as a usage error');
  t.equal(onFile.json.error, `the backup directory ${file} cannot be made: a file has that name`);
  const underFile = await manage(ts.dataDir, ['backup', '--to', path.join(file, 'b')]);
  t.equal(underFile.status, 2);
  t.equal(
    underFile.json.error,
    `the backup directory ${file}/b cannot be made: a file stands in its path`,
  );
  const archive = await manage(ts.dataDir, [
    'export-realm',
    '--realm',
    '',
    '--to',
    path.join(file, 'eng.tar.gz'),
  ]);
  t.equal(archive.status, 2, 'an archive under a file is refused as a usage error');
  t.equal(
    archive.json.error,
    `the archive’s directory ${file} cannot be made: a file has that name`,
  );

  const notEmpty = `${ts.dataDir}-notempty`;
  fs.mkdirSync(notEmpty);
  fs.writeFileSync(path.join(notEmpty, 'something'), 'x');
  t.teardown(() => fs.rmSync(notEmpty, { recursive: true, force: true }));
  const refused = await manage(notEmpty, ['restore', '--from', backupDir]);
  t.equal(refused.status, 2);
  t.match(refused.json.error, /is not empty/);

  // One changed byte in the database copy: the checksum catches it, nothing stays behind.
  const db = path.join(backupDir, 'confab.sqlite3');
  const bytes = fs.readFileSync(db);
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  fs.writeFileSync(db, bytes);
  const damagedTarget = `${ts.dataDir}-damaged`;
  t.teardown(() => fs.rmSync(damagedTarget, { recursive: true, force: true }));
  const damaged = await manage(damagedTarget, ['restore', '--from', backupDir]);
  t.equal(damaged.status, 2);
  t.match(damaged.json.error, /does not match the manifest/);
  const left = fs.readdirSync(damagedTarget).filter((n) => !n.startsWith('confab.lock'));
  t.same(left, [], 'the data directory is left empty');
});
