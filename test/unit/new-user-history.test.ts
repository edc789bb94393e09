/**
 * The store's part of a new account's history (store.messages.insertHistory, run by
 * src/mutations/new-user-history.ts): one INSERT ... SELECT that takes the newest messages of
 * several channels together, skips the ones the account has a row for already (the reference's
 * race) before choosing which stay unread, keeps the unread index exact below its watermark, and
 * reads each channel through its index, however long the channel.
 * The API-level behaviour is test/api/new-user-history.test.ts.
 */
import t from 'tap';
import { HISTORICAL_FLAGS, MESSAGE_FLAG_BITS } from '../../src/lib/message-flags.js';
import type { Store } from '../../src/storage/store.js';
import { insertChannelMessage, storeWithUsers } from '../helpers/bare-store.js';
import { explainCalls } from '../helpers/query-plans.js';

const HISTORICAL = MESSAGE_FLAG_BITS.historical;
const NOW = 1_800_000_000;

function seed(store: Store, sender: number, streamId: number, dateSent: number): number {
  return insertChannelMessage(store, {
    realmId: 1,
    senderId: sender,
    streamId,
    topic: 't',
    content: 'x',
    dateSent,
    recipients: [sender],
    flags: () => MESSAGE_FLAG_BITS.read,
    index: false,
  });
}

function history(store: Store, userId: number, channelIds: number[]) {
  return store.transaction(() =>
    store.messages.insertHistory({
      userId,
      channelIds,
      since: NOW - 86400,
      limit: 1000,
      unread: 20,
      unreadFlags: HISTORICAL,
      readFlags: HISTORICAL_FLAGS,
    }),
  );
}

function rowsOf(store: Store, userId: number): { message_id: number; flags: number }[] {
  return store.db
    .prepare<[number], { message_id: number; flags: number }>(
      'SELECT message_id, flags FROM user_messages WHERE user_id = ? ORDER BY message_id',
    )
    .all(userId);
}

t.test('the newest 1000 of several channels together; the newest 20 unread', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 2);
  t.teardown(() => store.close());
  const [sender, newbie] = users as [number, number];
  const ids: number[] = [];
  const other: number[] = [];
  store.transaction(() => {
    for (let i = 0; i < 1500; i++) {
      // Two channels interleaved, a third the account did not join, and old messages.
      ids.push(seed(store, sender, i % 2 === 0 ? 1 : 2, NOW - 10));
      other.push(seed(store, sender, 3, NOW - 10));
      if (i % 100 === 0) seed(store, sender, 1, NOW - 2 * 86400);
    }
  });
  // The unread index is exact below its watermark (triggers): put every message below it.
  store.transaction(() => store.unread.moveWatermark(1e9));

  t.equal(history(store, newbie, [1, 2]), 1000, '1000 rows');
  const rows = rowsOf(store, newbie);
  t.same(
    rows.map((r) => r.message_id),
    ids.slice(-1000),
    'the newest 1000 of the two channels, none of the third, none old',
  );
  t.same(
    rows.filter((r) => r.flags === HISTORICAL).map((r) => r.message_id),
    ids.slice(-20),
    'the newest 20 historical and unread',
  );
  t.equal(rows.filter((r) => r.flags === HISTORICAL_FLAGS).length, 980, 'the others read');
  const indexed = store.db
    .prepare<[number], number>(
      'SELECT message_id FROM unread_messages WHERE user_id = ? ORDER BY message_id',
    )
    .pluck()
    .all(newbie);
  t.same(indexed, ids.slice(-20), 'the unread index holds exactly the unread rows');
  t.equal(history(store, newbie, [1, 2]), 0, 'a second run adds nothing');
  t.equal(history(store, newbie, []), 0, 'no channels: nothing');
  t.end();
});

t.test('messages the account has a row for are skipped before the unread ones are chosen', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 2);
  t.teardown(() => store.close());
  const [sender, newbie] = users as [number, number];
  const ids: number[] = [];
  store.transaction(() => {
    for (let i = 0; i < 30; i++) ids.push(seed(store, sender, 1, NOW - 10));
  });
  // The newest message reached the account already (the reference's race), read by it.
  store.transaction(() =>
    store.messages.insertUserMessage(newbie, ids.at(-1)!, MESSAGE_FLAG_BITS.read),
  );
  t.equal(history(store, newbie, [1]), 29, 'the others');
  const rows = rowsOf(store, newbie);
  t.same(rows.at(-1), { message_id: ids.at(-1), flags: MESSAGE_FLAG_BITS.read }, 'kept as it was');
  t.same(
    rows.filter((r) => r.flags === HISTORICAL).map((r) => r.message_id),
    ids.slice(-21, -1),
    'still 20 unread: the newest 20 of those copied',
  );
  t.end();
});

t.test('each channel is read through its index, not scanned', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 2);
  t.teardown(() => store.close());
  const [sender, newbie] = users as [number, number];
  store.transaction(() => {
    for (let i = 0; i < 3000; i++) seed(store, sender, (i % 3) + 1, NOW - 10);
  });
  const plans = explainCalls(store, () => history(store, newbie, [1, 2]), {
    insertSelects: true,
  });
  t.equal(plans.length, 1, 'one statement');
  const plan = plans[0]!;
  t.match(plan, /SEARCH m USING INDEX messages_stream \(stream_id=\? AND id>\?\)/, plan);
  t.match(plan, /SEARCH b USING COVERING INDEX messages_stream/, 'the bound: an index search');
  t.notMatch(plan, /SCAN (m|b|u|messages|user_messages)\b(?! USING)/, 'no table scan');
  t.end();
});
