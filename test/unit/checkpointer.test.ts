/**
 * The background checkpointer's spacing (src/storage/checkpointer.ts, checkpoint-thread.ts):
 * every checkpoint that copies the whole WAL makes the writer's next commit start a fresh WAL,
 * whose header SQLite syncs in that commit on the writer's thread, so checkpoints are spaced to
 * about one a second while the WAL takes little — not one per 50 ms poll — and come sooner when
 * it grows fast (the spacing, a pure function: ./checkpoint-spacing.ts). Counted with a real
 * database and writes every few milliseconds, from the thread's first checkpoint on; no count
 * depends on how soon a loaded machine starts or schedules the thread. And who starts the emptied
 * WAL afresh: the thread, with its own commit, so that the writer's commits never sync a new WAL's
 * header on the main thread; the store's transactions take the write lock at BEGIN, so that commit
 * never leaves one of them unable to write.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { checkpointDue, TARGET_PAGES } from '../../src/storage/checkpoint-spacing.js';
import { BACKSTOP_PAGES, Checkpointer } from '../../src/storage/checkpointer.js';
import { closeDatabase, openDatabase } from '../../src/storage/db.js';
import { Store } from '../../src/storage/store.js';
import { WalIndex } from '../../src/storage/wal-index.js';
import { holdRemaining, MAX_HOLD_MS, RESTART_PAGES } from '../../src/storage/wal-restart.js';

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

/**
 * Writes small rows until the thread has checkpointed once: it is running (a thread starts in
 * milliseconds on a quiet machine, seconds on a loaded one; the counts below start from here).
 */
async function started(
  t: Test,
  checkpointer: Checkpointer,
  insert: { run: (v: string) => unknown },
) {
  for (const deadline = Date.now() + 120_000; checkpointer.stats.runs === 0; await sleep(5)) {
    if (Date.now() > deadline) throw new Error('the checkpoint thread never ran');
    insert.run('x'.repeat(100));
  }
  t.pass('the thread checkpoints the WAL');
}

t.test('the spacing: once a second while little waits, at once when TARGET_PAGES wait', (t) => {
  t.notOk(checkpointDue(0, 5_000, 1000), 'nothing waiting: never');
  t.notOk(checkpointDue(10, 300, 1000), 'a few pages: not before a second');
  t.ok(checkpointDue(10, 1000, 1000), 'a few pages: after a second');
  t.ok(checkpointDue(TARGET_PAGES, 0, 1000), 'the target waiting: at once');
  t.ok(checkpointDue(null, 0, 1000), 'the wal-index unreadable: checkpoint (and so learn)');
  t.end();
});

t.test('the wal-index header says how many frames wait to be copied', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-walindex-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(dir, { durability: 'normal' });
  const index = new WalIndex(path.join(dir, 'confab.sqlite3-shm'));
  t.teardown(() => {
    index.close();
    closeDatabase(db);
  });
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  db.pragma('wal_checkpoint(TRUNCATE)');
  t.equal(index.waiting(), 0, 'an empty WAL');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < 50; i++) insert.run('w'.repeat(3000));
  const waiting = index.waiting();
  const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
  t.ok(r!.log > 50, `frames were written (${r!.log})`);
  t.equal(waiting, r!.log, 'every frame was waiting');
  t.equal(index.waiting(), 0, 'none after a checkpoint copied them');
  insert.run('one more');
  t.ok(index.waiting()! > 0, 'a new commit waits again');
  t.end();
});

t.test('small writes: about one checkpoint a second, and the WAL is copied', async (t) => {
  const { checkpointer, insert } = database(t);
  await started(t, checkpointer, insert);
  const before = checkpointer.stats.runs;
  const began = Date.now();
  while (Date.now() < began + 2_600) {
    insert.run('x'.repeat(100));
    await sleep(5);
  }
  const runs = checkpointer.stats.runs - before;
  const seconds = (Date.now() - began) / 1000;
  // Polled every 50 ms this would be some 50 checkpoints (and as many fresh WALs). A loaded
  // machine only delays the thread: the bound is on at most, over the time actually taken.
  t.ok(
    runs <= Math.ceil(seconds) + 1,
    `at most about one a second (${runs} in ${seconds.toFixed(1)} s)`,
  );
  t.ok(checkpointer.stats.pages > 0, 'pages were copied');
});

t.test('heavy writes: checkpoints keep coming and the WAL stays bounded', async (t) => {
  const { db, checkpointer, insert } = database(t);
  await started(t, checkpointer, insert);
  const many = db.transaction(() => {
    for (let i = 0; i < 100; i++) insert.run('y'.repeat(2000));
  });
  // About 200 KB of rows per batch, until the thread has run four more times (how soon is the
  // spacing's, tested above; a loaded machine only delays it).
  const before = checkpointer.stats.runs;
  let most = 0;
  for (const deadline = Date.now() + 120_000; checkpointer.stats.runs < before + 4;) {
    if (Date.now() > deadline) throw new Error('the checkpoint thread stopped running');
    many();
    await sleep(10);
    most = Math.max(most, checkpointer.stats.walPages);
  }
  t.ok(
    most > 0 && most < BACKSTOP_PAGES,
    `the WAL stayed under the writer's backstop (${most} pages at most)`,
  );
});

t.test('holdRemaining: until the deadline, never more than MAX_HOLD_MS', (t) => {
  t.equal(holdRemaining(0, 1000), 0, 'no hold');
  t.equal(holdRemaining(1030, 1000), 30, 'the rest of the hold');
  t.equal(holdRemaining(1000, 1000), 0, 'over at its deadline');
  t.equal(holdRemaining(999_999, 1000), MAX_HOLD_MS, 'a clock step back never holds longer');
  t.end();
});

t.test(
  'steady writes that honour the commit hold: the thread empties the WAL and it restarts',
  async (t) => {
    const { db, checkpointer, insert } = database(t);
    await started(t, checkpointer, insert);
    // About 50 pages a transaction, one every few milliseconds, the way the realm actors write:
    // never while the thread holds commits. No PASSIVE checkpoint alone could copy the whole WAL.
    const many = db.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run('z'.repeat(2000));
    });
    let longestHold = 0;
    let heldTurns = 0;
    let most = 0;
    let afresh = false;
    // Until the WAL restarted and this writer has seen a hold: a hold lasts milliseconds, and a
    // main thread descheduled that long (a loaded machine) misses one, as it may; the next
    // restart holds again.
    for (const deadline = Date.now() + 120_000; !(afresh && heldTurns > 0);) {
      if (Date.now() > deadline)
        throw new Error(
          `no restart seen under a hold (${heldTurns} turns held): ${JSON.stringify(checkpointer.stats)}`,
        );
      const held = checkpointer.commitHoldMs;
      longestHold = Math.max(longestHold, held);
      if (held > 0) {
        heldTurns++;
        await sleep(1);
        continue;
      }
      many();
      await sleep(2);
      const { walPages, restarts } = checkpointer.stats;
      most = Math.max(most, walPages);
      // Started afresh: after a restart, the thread sees a WAL far smaller than it was.
      afresh = restarts > 0 && most >= RESTART_PAGES && walPages < most / 2;
    }
    const stats = checkpointer.stats;
    t.ok(
      stats.holds >= stats.restarts && stats.restarts >= 1,
      `emptied under a hold (${JSON.stringify(stats)})`,
    );
    t.ok(heldTurns > 0, `the writer saw the hold (${heldTurns} turns held)`);
    t.ok(
      stats.heldMs > 0 && stats.longestHoldMs > 0 && stats.longestHoldMs <= stats.heldMs,
      `how long the holds lasted is counted (${stats.heldMs} ms in all, ${stats.longestHoldMs} ms the longest)`,
    );
    t.ok(longestHold <= MAX_HOLD_MS, `a hold is bounded (${longestHold} ms at most)`);
    for (const deadline = Date.now() + 120_000; checkpointer.commitHoldMs > 0; await sleep(5)) {
      if (Date.now() > deadline) throw new Error('the hold never ended');
    }
    t.pass('the hold ends');
  },
);

/** The salt a WAL's header carries (bytes 16-19 of the -wal file): it changes at each restart. */
function walSalt(walFile: string): number {
  const buf = Buffer.alloc(4);
  const fd = fs.openSync(walFile, 'r');
  try {
    fs.readSync(fd, buf, 0, 4, 16);
  } finally {
    fs.closeSync(fd);
  }
  return buf.readUInt32BE(0);
}

t.test('the thread starts the emptied WAL afresh itself, not a commit of the writer', async (t) => {
  const { db, checkpointer, insert } = database(t);
  await started(t, checkpointer, insert);
  const wal = `${db.name}-wal`;
  const many = db.transaction(() => {
    for (let i = 0; i < 100; i++) insert.run('z'.repeat(2000));
  });
  // Writes as the realm actors do (never while commits are held), noting whether the WAL's salt
  // changed during one of these commits (the writer restarted it) or between them (the thread).
  let byWriter = 0;
  let byThread = 0;
  let salt = walSalt(wal);
  for (const deadline = Date.now() + 120_000; byThread === 0;) {
    if (Date.now() > deadline)
      throw new Error(
        `the thread never restarted the WAL (${byWriter} restarts by the writer's commits; ` +
          `${JSON.stringify(checkpointer.stats)})`,
      );
    if (checkpointer.commitHoldMs > 0) {
      await sleep(1);
      continue;
    }
    if (walSalt(wal) !== salt) byThread++;
    salt = walSalt(wal);
    many();
    if (walSalt(wal) !== salt) byWriter++;
    salt = walSalt(wal);
    await sleep(2);
  }
  const stats = checkpointer.stats;
  t.ok(
    stats.afresh >= 1 && stats.afresh <= stats.restarts,
    `started afresh by the thread after emptying it (${JSON.stringify(stats)})`,
  );
  t.ok(byThread >= 1, `the WAL restarted between the writer's commits (${byThread} times)`);
  // The thread's commit changed nothing: the writer goes on where it was.
  const count = db.prepare('SELECT count(*) FROM t').pluck();
  const before = count.get() as number;
  many();
  t.equal(count.get(), before + 100, 'the writer commits after it as before');
});

t.test(
  "the store's transactions hold the write lock from BEGIN: another connection's commit cannot come between a read and a write",
  (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-immediate-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const store = Store.open(dir, { backgroundCheckpoint: false });
    const other = openDatabase(dir);
    other.pragma('busy_timeout = 0');
    t.teardown(() => {
      closeDatabase(other);
      store.close();
    });
    const insertRealm = (db: typeof other, name: string) =>
      db
        .prepare(`INSERT INTO realms (string_id, name, date_created) VALUES (?, ?, 0)`)
        .run(name, name);
    let otherRefused = false;
    store.transaction(() => {
      store.db.prepare('SELECT count(*) FROM realms').pluck().get();
      try {
        insertRealm(other, 'other'); // as the checkpointer's thread commits to restart the WAL
      } catch (err) {
        otherRefused = (err as { code?: string }).code === 'SQLITE_BUSY';
      }
      insertRealm(store.db, 'mine'); // deferred, this would fail: SQLITE_BUSY_SNAPSHOT
    });
    t.ok(otherRefused, 'the other connection waits for the lock (busy)');
    const names = store.db.prepare('SELECT string_id FROM realms ORDER BY id').pluck().all();
    t.ok(names.includes('mine'), 'and the transaction wrote what it meant to');
    insertRealm(other, 'other');
    t.ok(
      store.db.prepare('SELECT count(*) FROM realms WHERE string_id = ?').pluck().get('other'),
      'once it has committed, the other connection writes',
    );
    t.end();
  },
);
