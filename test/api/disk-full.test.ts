/**
 * A full disk (issue 10.9; docs/robustness.md "Crash safety"): the real server as a child process
 * with its data directory on a small tmpfs (mounted by the test: tests and CI run as root). Once a
 * filler file takes every byte left, writes are answered 507 INSUFFICIENT_STORAGE in the API's
 * error format (never a 500), reads keep working, nothing half-written appears; when the filler
 * is removed writes succeed again, and after a graceful shutdown the database passes its
 * integrity check and holds exactly the writes answered with success.
 */
import Database from '../../src/storage/sqlite.js';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startChild, type ChildServer } from '../helpers/child-server.js';
import { client, ok, prepare, seed, type User } from '../helpers/crash-load.js';
import { upload } from '../helpers/uploads.js';

/**
 * Appends to `file` until the file system has no byte left. Called again before each check:
 * the server may free space of its own in between (SQLite truncates its WAL after a checkpoint),
 * and what is checked is the answer when nothing fits.
 */
function fill(file: string): void {
  const fd = fs.openSync(file, 'a');
  try {
    for (const size of [1 << 20, 1 << 12, 1]) {
      const chunk = Buffer.alloc(size, 0x55);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as { code?: string }).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Mounts a tmpfs of `size` at `dir`; the reason it cannot, or null. */
function mountTmpfs(dir: string, size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return String(err).split('\n')[0]!;
  }
}

// Whether this machine lets the test mount a file system at all (root, no sandbox forbidding it).
const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-mount-probe-'));
const cannotMount = mountTmpfs(probe, '1m');
if (cannotMount === null) execFileSync('umount', [probe]);
fs.rmdirSync(probe);

t.test(
  'disk full: 507 for writes, reads served, recovery when space returns',
  { skip: cannotMount === null ? false : `cannot mount a tmpfs here: ${cannotMount}` },
  async (t) => {
    // Not under t.testdir(): tap removes that before the teardown below unmounts.
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-disk-full-'));
    const failed = mountTmpfs(mnt, '24m');
    if (failed !== null) throw new Error(failed);
    let server: ChildServer | null = null;
    t.teardown(async () => {
      if (server) await server.kill('SIGKILL');
      execFileSync('umount', [mnt]);
      fs.rmdirSync(mnt);
    });
    const dataDir = path.join(mnt, 'data');
    const users = seed(dataDir) as [User, User, User];
    server = await startChild(dataDir);
    await prepare(server.url, users);
    const api = client(server.url);
    const sent = new Set<string>();
    const refused = new Set<string>();
    let serial = 0;
    const send = async () => {
      const token = `tok${serial++}`;
      const res = await api.post(users[1], 'messages', {
        type: 'stream',
        to: 'load',
        topic: 'disk',
        content: `${token} `.padEnd(9_000, 'x'),
      });
      if (res.status === 200) sent.add(token);
      else refused.add(token);
      return res;
    };
    for (let i = 0; i < 5; i++) ok(await send(), 'before the disk fills');

    const filler = path.join(mnt, 'filler');
    fill(filler);
    let full = null;
    for (let i = 0; i < 300 && !full; i++) {
      const res = await send();
      if (res.status === 507) full = res;
      else if (res.status !== 200) t.fail(`a write answered ${res.status}: ${res.text}`);
    }
    t.ok(full, 'a write that does not fit is refused');
    t.match(full?.body, {
      result: 'error',
      code: 'INSUFFICIENT_STORAGE',
      msg: 'The server is out of storage space; try again later',
    });
    fill(filler);
    const more = await send();
    t.equal(more.status, 507, 'and the next one too');
    fill(filler);
    const up = await upload(api, users[1], [
      {
        filename: 'big.bin',
        // Larger than anything the server could have freed since the filler (a sixth of the disk).
        data: Buffer.alloc(4 * 1024 * 1024, 1),
        contentType: 'application/octet-stream',
      },
    ]);
    t.equal(up.status, 507, 'an upload that does not fit too');
    t.match(up.body, { code: 'INSUFFICIENT_STORAGE' });
    const read = ok(
      await api.get(users[2], 'messages', { anchor: 'newest', num_before: 1000, num_after: 0 }),
      'reads are served',
    );
    const seen = (read.messages as { content: string }[]).map((m) => /tok\d+/.exec(m.content)?.[0]);
    t.ok(
      [...sent].every((s) => seen.includes(s)),
      'every acknowledged message is readable',
    );
    t.notOk(
      [...refused].some((s) => seen.includes(s)),
      'no refused one is',
    );
    ok(await api.get(users[0], 'users/me'), 'and so is the rest');

    fs.rmSync(filler);
    ok(await send(), 'with space back, writes succeed again');
    t.equal((await server.kill('SIGTERM')).code, 0, 'a clean shutdown');
    server = null;

    const db = new Database(path.join(dataDir, 'confab.sqlite3'), { readonly: true });
    t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'the database is intact');
    const stored = db
      .prepare<[], { content: string }>('SELECT content FROM messages')
      .all()
      .map((m) => /tok\d+/.exec(m.content)?.[0]);
    db.close();
    t.same(
      stored.filter((s) => s !== undefined).sort(),
      [...sent].sort(),
      'exactly the writes answered with success',
    );
  },
);
