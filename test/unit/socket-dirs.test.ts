/**
 * The private socket directories killed servers leave behind (src/http/guard.ts
 * removeStaleSocketDirs), in a temporary directory of the test's own: a dead one older than the
 * minimum age goes; a live one, a fresh one and anything not named as ours stay.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { removeStaleSocketDirs } from '../../src/http/guard.js';

t.test('stale socket directories are removed, live and fresh ones kept', async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'socket-dirs-test-'));
  t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const old = new Date(Date.now() - 10 * 60_000);
  const make = (name: string, aged = true) => {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    return { dir, age: () => aged && fs.utimesSync(dir, old, old) };
  };

  // A killed server's: the socket file is there, nobody listens on it.
  const dead = make('confab-http-dead');
  const bound = net.createServer();
  await new Promise<void>((r) => bound.listen(path.join(dead.dir, 'uws.sock'), r));
  // Closing unlinks the file; a killed process leaves it: put a plain file in its place.
  await new Promise<void>((r) => bound.close(() => r()));
  fs.writeFileSync(path.join(dead.dir, 'uws.sock'), '');
  dead.age();
  // A server killed before its socket existed.
  const empty = make('confab-http-empty');
  empty.age();
  // A live server's.
  const live = make('confab-http-live');
  const server = net.createServer((c) => c.destroy());
  await new Promise<void>((r) => server.listen(path.join(live.dir, 'uws.sock'), r));
  t.teardown(() => server.close());
  live.age();
  // One made a moment ago (its server may not listen yet).
  make('confab-http-fresh', false);
  // Not ours.
  const other = make('other-dead');
  fs.writeFileSync(path.join(other.dir, 'uws.sock'), '');
  other.age();

  t.equal(await removeStaleSocketDirs(tmp), 2, 'two removed');
  t.same(fs.readdirSync(tmp).sort(), ['confab-http-fresh', 'confab-http-live', 'other-dead']);
  t.equal(await removeStaleSocketDirs(tmp), 0, 'nothing more the second time');
  t.equal(await removeStaleSocketDirs(path.join(tmp, 'missing')), 0, 'no such directory: none');
});
