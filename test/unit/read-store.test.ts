/**
 * ReadStore, the store endpoints and queries get: every area's reads and nothing that writes. The
 * compiler is the test: each `@ts-expect-error` line fails the build if that write becomes
 * reachable through a ReadStore.
 */
import t from 'tap';
import { Store, type ReadStore } from '../../src/storage/store.js';

t.test('a ReadStore offers reads only', (t) => {
  const dir = t.testdir();
  const store = Store.open(dir, { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  const read: ReadStore = store;
  t.equal(read.users.byId(1), undefined, 'reads are there');
  t.same(read.drafts.byUser(1), []);
  if (Date.now() < 0) {
    // Never run: each line must not compile.
    // @ts-expect-error writes are not part of a ReadStore
    read.users.setRole(1, 100);
    // @ts-expect-error a write
    read.messages.insert({});
    // @ts-expect-error a write
    read.messages.index(1, '', '');
    // @ts-expect-error a write
    read.drafts.removeAll(1);
    // @ts-expect-error a write
    read.messageEdits.reindex(1, '', '');
    // @ts-expect-error a write
    read.channels.subscribe(1, 1, '');
    // @ts-expect-error a write
    read.invitations.markUsed(1, 1);
    // @ts-expect-error a write
    read.transaction(() => 1);
    // @ts-expect-error a write
    void read.db;
  }
  t.end();
});
