/**
 * A cluster node applying another node's log entries (src/storage/replication.ts Replication.apply)
 * keeps the channel activity it remembers (src/storage/topics.ts ChannelActivity: a channel's first
 * message and newest date) right without forgetting every channel's: a new message forgets its
 * own channel's, as a local send does; a move or a deletion forgets all, as local ones do.
 */
import t from 'tap';
import { doCreateRealm } from '../../src/mutations/realms.js';
import type { RowChange } from '../../src/storage/replication.js';
import { Replication } from '../../src/storage/replication.js';
import { Store } from '../../src/storage/store.js';
import { realmParams } from '../helpers/realms.js';

t.test('applied messages: each forgets its channel; a move or a deletion, every one', (t) => {
  const store = Store.open(t.testdir(), { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  const realm = doCreateRealm(store, realmParams('', 'Replica'));
  // Channel ids as messages name them (the activity asks nothing of the channels' rows).
  const [a, b] = [501, 502];
  const replication = new Replication(store);
  const columns = (store.db.pragma('table_info(messages)') as { name: string }[]).map(
    (c) => c.name,
  );
  const message = (id: number, channel: number, dateSent: number): RowChange => {
    const row: Record<string, unknown> = {
      id,
      realm_id: realm.realm_id,
      sender_id: realm.user_id,
      stream_id: channel,
      dm_group_id: null,
      topic: 'replicated',
      content: `message ${id}`,
      rendered_content: `<p>message ${id}</p>`,
      rendered_content_version: 1,
      date_sent: dateSent,
      last_edit_time: null,
      last_moved_time: null,
      edit_history: null,
      has_attachment: 0,
      has_image: 0,
      has_link: 0,
      sending_client: 'test',
      type: 1,
    };
    return ['messages', 'u', columns.map((c) => row[c] ?? null)];
  };
  const activity = (channel: number) => store.topics.activity(channel);
  let seq = 0;

  t.same(activity(a), { first: null, last: null }, 'no messages yet (now remembered)');
  t.same(activity(b), { first: null, last: null });
  let version = store.topics.firstMessageVersion();

  replication.apply(++seq, [message(1000, a, 100)]);
  t.same(activity(a), { first: 1000, last: 100 }, "a channel's first message");
  t.ok(store.topics.firstMessageVersion() > version, 'a first message changes first ids');
  version = store.topics.firstMessageVersion();

  replication.apply(++seq, [message(1001, a, 200)]);
  t.same(activity(a), { first: 1000, last: 200 }, 'a later one: its newest date');
  t.equal(store.topics.firstMessageVersion(), version, 'no first id changed');
  t.same(activity(b), { first: null, last: null }, 'the other channel, as it was');

  replication.apply(++seq, [message(1001, b, 200)]);
  t.same(activity(a), { first: 1000, last: 100 }, 'moved away: the old channel');
  t.same(activity(b), { first: 1001, last: 200 }, 'and the new one');
  t.ok(store.topics.firstMessageVersion() > version, 'a move changes first ids');
  version = store.topics.firstMessageVersion();

  replication.apply(++seq, [['messages', 'd', [1000]]]);
  t.same(activity(a), { first: null, last: null }, 'deleted: none left');
  t.ok(store.topics.firstMessageVersion() > version, 'a deletion changes first ids');
  t.same(activity(b), { first: 1001, last: 200 }, 'the other channel, read again');
  version = store.topics.firstMessageVersion();

  replication.apply(++seq, [message(1001, b, 300)]);
  t.same(activity(b), { first: 1001, last: 300 }, 'an edited row in its channel');
  t.equal(store.topics.firstMessageVersion(), version, 'no first id changed');
  t.equal(replication.state().applied, seq, 'every entry applied');
  t.end();
});
