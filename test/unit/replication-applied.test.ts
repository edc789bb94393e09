/**
 * The log position and unacknowledged-commit count a cluster copy records for its own entries
 * (src/storage/replication.ts markAppliedLater): counted at once, written later — at flushApplied,
 * inside the next applied entry's transaction, before a snapshot — and never written backwards.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { appliedPosition, hasUnackedCommits, Replication } from '../../src/storage/replication.js';
import { DATABASE_FILE } from '../../src/storage/maintenance.js';
import { Store } from '../../src/storage/store.js';
import { realmParams } from '../helpers/realms.js';

/** What the database file itself holds (another connection, as a restart would read it). */
function onDisk(file: string): { applied: number; unacked: boolean } {
  const db = new Database(file, { readonly: true });
  try {
    return { applied: appliedPosition(db), unacked: hasUnackedCommits(db) };
  } finally {
    db.close();
  }
}

function setUp(t: Test) {
  const dir = t.testdir();
  const store = Store.open(dir, { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  doCreateRealm(store, realmParams('', 'Replica'));
  const replication = new Replication(store);
  const file = path.join(dir, DATABASE_FILE);
  return { store, replication, file, dir };
}

t.test('own entries: counted at once, written at the flush', (t) => {
  const { store, replication, file } = setUp(t);
  // Two commits of this node's own, awaiting the log.
  store.transaction(() => replication.noteUnacked(1));
  store.transaction(() => replication.noteUnacked(1));
  t.same(onDisk(file), { applied: 0, unacked: true }, 'two commits unacknowledged');

  replication.markAppliedLater(1, true);
  replication.markAppliedLater(2, false); // a lease marker's position, say
  replication.markAppliedLater(3, true);
  t.same(replication.state(), { applied: 3, unacked: 0 }, 'state counts the deferred ones');
  t.same(onDisk(file), { applied: 0, unacked: true }, 'nothing written yet');

  replication.flushApplied();
  t.same(onDisk(file), { applied: 3, unacked: false }, 'the flush writes both');
  t.same(replication.state(), { applied: 3, unacked: 0 });
  replication.flushApplied();
  t.same(replication.state(), { applied: 3, unacked: 0 }, 'a second flush changes nothing');
  t.end();
});

t.test("another node's entry writes the deferred ones in its transaction", (t) => {
  const { store, replication, file } = setUp(t);
  store.transaction(() => replication.noteUnacked(1));
  replication.markAppliedLater(1, true);
  replication.apply(2, []);
  t.same(onDisk(file), { applied: 2, unacked: false }, 'written with the entry');
  t.same(replication.state(), { applied: 2, unacked: 0 });
  replication.flushApplied();
  t.same(onDisk(file), { applied: 2, unacked: false }, 'nothing left to write, nothing moved back');
  t.end();
});

t.test('a failed apply leaves the deferred ones deferred', (t) => {
  const { store, replication, file } = setUp(t);
  store.transaction(() => replication.noteUnacked(1));
  replication.markAppliedLater(1, true);
  t.throws(() => replication.apply(2, [['no_such_table', 'u', [1]]]), /unknown table/);
  t.same(onDisk(file), { applied: 0, unacked: true }, 'rolled back with the entry');
  t.same(replication.state(), { applied: 1, unacked: 0 }, 'still counted');
  replication.flushApplied();
  t.same(onDisk(file), { applied: 1, unacked: false });
  t.end();
});

t.test('a snapshot holds the deferred ones', (t) => {
  const { store, replication, dir } = setUp(t);
  store.transaction(() => replication.noteUnacked(1));
  replication.markAppliedLater(5, true);
  const copy = path.join(dir, 'snapshot.db');
  t.equal(replication.snapshotTo(copy), 5, 'the snapshot is at the deferred position');
  t.same(onDisk(copy), { applied: 5, unacked: false }, 'and the copy says so');
  t.end();
});

t.test('markApplied writes at once, the deferred ones with it', (t) => {
  const { store, replication, file } = setUp(t);
  store.transaction(() => replication.noteUnacked(1));
  replication.markAppliedLater(1, true);
  replication.markApplied(2, false);
  t.same(onDisk(file), { applied: 2, unacked: false });
  t.end();
});
