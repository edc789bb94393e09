/**
 * The background checkpointer's spacing (src/storage/checkpointer.ts, checkpoint-thread.ts):
 * every checkpoint that copies the whole WAL makes the writer's next commit start a fresh WAL,
 * whose header SQLite syncs in that commit on the writer's thread, so checkpoints are spaced to
 * about one a second while the WAL takes little — not one per 50 ms poll — and come sooner when
 * it grows fast. Counted with a real database and writes every few milliseconds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { BACKSTOP_PAGES, Checkpointer } from '../../src/storage/checkpointer.js';
import { closeDatabase, openDatabase } from '../../src/storage/db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A database in a temporary directory with one table, and its checkpointer. */
function database(t: Test) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-ckpt-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(dir, { durability: 'normal' });
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const checkpointer = new Checkpointer(db);
  t.teardown(() => {
    checkpointer.stop();
    closeDatabase(db);
  });
  return { db, checkpointer, insert: db.prepare('INSERT INTO t (v) VALUES (?)') };
}

t.test('small writes: about one checkpoint a second, and the WAL is copied', async (t) => {
  const { checkpointer, insert } = database(t);
  const until = Date.now() + 2_600;
  while (Date.now() < until) {
    insert.run('x'.repeat(100));
    await sleep(5);
  }
  await sleep(200);
  const { runs, pages } = checkpointer.stats;
  t.ok(runs >= 1, `the WAL was checkpointed (${runs} checkpoints, ${pages} pages)`);
  // Polled every 50 ms this would be some 50 checkpoints (and as many fresh WALs).
  t.ok(runs <= 5, `at most about one a second over 2.6 s (${runs})`);
});

t.test('heavy writes: checkpoints come sooner and keep the WAL bounded', async (t) => {
  const { db, checkpointer, insert } = database(t);
  const many = db.transaction(() => {
    for (let i = 0; i < 100; i++) insert.run('y'.repeat(2000));
  });
  // About 200 KB of rows per 10 ms: more than the checkpointer's target takes a second.
  const until = Date.now() + 2_600;
  let most = 0;
  while (Date.now() < until) {
    many();
    await sleep(10);
    most = Math.max(most, checkpointer.stats.walPages);
  }
  const { runs } = checkpointer.stats;
  t.ok(runs > 3, `more than one a second under heavy writes (${runs} in 2.6 s)`);
  t.ok(
    most > 0 && most < BACKSTOP_PAGES,
    `the WAL stayed under the writer's backstop (${most} pages at most)`,
  );
});
