/**
 * Listed messages' columns kept between listings (ListedRows, src/storage/message-search.ts): a
 * listing answers what SQLite holds after every kind of write, whoever makes it (the store's
 * edits, moves and deletions, SQL of its own on the connection, a transaction that rolls back),
 * in the order and with the flags of the listing, and the rows kept stay within their bounds.
 * Whichever way a listing runs (ListedSpans' guess): whole rows in one query, or the ids and the
 * rows not kept by id.
 */
import t from 'tap';
import { MESSAGE_FLAG_BITS } from '../../src/lib/message-flags.js';
import { ListedRows, ListedSpans, type MessageQuery } from '../../src/storage/message-search.js';
import type { Store } from '../../src/storage/store.js';
import { sendToAll, storeWithUsers } from '../helpers/bare-store.js';

const STARRED = MESSAGE_FLAG_BITS.starred;

const everything = (userId: number): MessageQuery => ({
  userId,
  realmId: 1,
  includeHistory: false,
  conditions: [],
});

/** The newest `n` of the user's messages as [id, content, rendered, topic, channel, flags]. */
function newest(store: Store, userId: number, n = 100) {
  return store.messageSearch
    .messages(everything(userId), { dir: 'before', anchor: Number.MAX_SAFE_INTEGER, limit: n })
    .map((r) => [r.id, r.content, r.rendered_content, r.topic, r.stream_id, r.flags]);
}

/** The same, read from SQLite directly. */
function newestInSql(store: Store, userId: number, n = 100) {
  return (
    store.db
      .prepare(
        `SELECT m.id, m.content, m.rendered_content, m.topic, m.stream_id, um.flags
         FROM user_messages um JOIN messages m ON m.id = um.message_id
         WHERE um.user_id = ? ORDER BY m.id DESC LIMIT ?`,
      )
      .raw(true)
      .all(userId, n) as unknown[][]
  ).map((r) => [...r]);
}

/** `n` of the user's messages from `anchor` down (`before`) or up (`after`), read from SQLite. */
function rangeInSql(
  store: Store,
  userId: number,
  dir: 'before' | 'after',
  anchor: number,
  n: number,
) {
  const [cmp, order] = dir === 'before' ? ['<=', 'DESC'] : ['>=', 'ASC'];
  return (
    store.db
      .prepare(
        `SELECT m.id, m.content, m.rendered_content, m.topic, m.stream_id, um.flags
         FROM user_messages um JOIN messages m ON m.id = um.message_id
         WHERE um.user_id = ? AND m.id ${cmp} ? ORDER BY m.id ${order} LIMIT ?`,
      )
      .raw(true)
      .all(userId, anchor, n) as unknown[][]
  ).map((r) => [...r]);
}

/** The same through the store: the listing, and which way it ran ('whole' or 'byId'). */
function range(store: Store, userId: number, dir: 'before' | 'after', anchor: number, n: number) {
  const { listings } = store.messageSearch;
  const whole = listings.whole;
  const rows = store.messageSearch
    .messages(everything(userId), { dir, anchor, limit: n })
    .map((r) => [r.id, r.content, r.rendered_content, r.topic, r.stream_id, r.flags]);
  return { rows, way: listings.whole > whole ? 'whole' : 'byId' };
}

t.test('a listing answers what SQLite holds after every kind of write', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 3);
  t.teardown(() => store.close());
  const ids: number[] = [];
  for (let i = 0; i < 10; i++) ids.push(sendToAll(store, users, { content: `m${i}` }));
  const check = (what: string) => {
    for (const u of users) t.same(newest(store, u), newestInSql(store, u), `${what} (user ${u})`);
  };
  check('first listing');
  t.equal(store.messageSearch.listedRows.size, 10, 'the listed rows are kept');
  check('second listing, from the kept rows');

  store.transaction(() =>
    store.messageEdits.updateContent(ids[3]!, {
      content: 'edited',
      rendered_content: '<p>edited</p>',
      has_attachment: false,
      has_image: false,
      has_link: false,
      last_edit_time: 1,
      entry: '{"timestamp":1}',
    }),
  );
  check('after an edit through the store');
  store.transaction(() => store.messageEdits.setRenderedContent(ids[2]!, '<p>thumbnail</p>'));
  check('after a new rendering');
  store.transaction(() => store.messageEdits.move([ids[0]!, ids[1]!], 3, 'elsewhere', 2, null));
  check('after a move through the store');

  store.db.prepare(`UPDATE messages SET topic = 'moved', stream_id = 2 WHERE id = ?`).run(ids[4]);
  check("after the connection's own UPDATE");

  store.db.prepare('UPDATE user_messages SET flags = ? WHERE message_id = ?').run(STARRED, ids[5]);
  check('after a flag change (flags are never kept)');

  store.transaction(() => store.messages.delete(ids[6]!));
  check('after a deletion');
  t.notOk(store.messageSearch.listedRows.get(ids[6]!), 'the deleted row is not kept');

  // Written, listed and rolled back inside one transaction: never kept.
  t.throws(() =>
    store.transaction(() => {
      store.db.prepare(`UPDATE messages SET content = 'uncommitted' WHERE id = ?`).run(ids[7]);
      t.equal(
        newest(store, users[1]!).find((r) => r[0] === ids[7])?.[1],
        'uncommitted',
        'the transaction reads its own write',
      );
      throw new Error('roll back');
    }),
  );
  t.equal(store.messageSearch.listedRows.get(ids[7]!), undefined, 'nothing kept of it');
  check('after a rolled-back transaction');
  t.equal(newest(store, users[1]!).find((r) => r[0] === ids[7])?.[1], 'm7');
  t.end();
});

t.test('order and flags of a listing from kept rows and new ones together', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 2);
  t.teardown(() => store.close());
  const ids: number[] = [];
  for (let i = 0; i < 30; i++) ids.push(sendToAll(store, users, { content: `m${i}` }));
  // Every other message kept (listed by id), the rest not.
  store.messageSearch.messages(everything(users[1]!), {
    dir: 'ids',
    ids: ids.filter((_, i) => i % 2 === 0),
  });
  t.equal(store.messageSearch.listedRows.size, 15);
  for (const [i, id] of ids.entries())
    if (i % 3 === 0)
      store.db
        .prepare('UPDATE user_messages SET flags = ? WHERE message_id = ? AND user_id = ?')
        .run(STARRED, id, users[1]);
  t.same(newest(store, users[1]!, 25), newestInSql(store, users[1]!, 25), 'newest first');
  const after = store.messageSearch
    .messages(everything(users[1]!), { dir: 'after', anchor: ids[5]!, limit: 10 })
    .map((r) => [r.id, r.flags]);
  t.same(
    after,
    ids.slice(5, 15).map((id, k) => [id, (5 + k) % 3 === 0 ? STARRED : 0]),
    'oldest first, with the flags',
  );
  t.end();
});

t.test('rows kept beyond the bounds give way, and a listing loses none of its own', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 2);
  t.teardown(() => store.close());
  for (let i = 0; i < 40; i++) sendToAll(store, users, { content: `m${i}` });
  const kept = store.messageSearch.listedRows;
  // Fill past the bound, then list a range of which part is kept and part is not.
  t.same(newest(store, users[1]!, 40), newestInSql(store, users[1]!, 40));
  t.ok(kept.size <= kept.maxRows);
  const rows = new ListedRows(3, 10_000);
  const row = (id: number, text = 'x') => [
    id,
    1,
    1,
    null,
    't',
    text,
    text,
    0,
    null,
    null,
    null,
    'c',
  ];
  for (let id = 1; id <= 5; id++) rows.keep(row(id));
  t.equal(rows.size, 3, 'at most maxRows');
  t.notOk(rows.get(1), 'the oldest kept given up first');
  t.ok(rows.get(5));
  // Text counts twice in these rows (content and rendered content).
  rows.keep(row(6, 'y'.repeat(4_000)));
  t.equal(rows.size, 3);
  rows.keep(row(7, 'z'.repeat(2_000)));
  t.notOk(rows.get(6), 'given up for the length of the text, not the count');
  t.equal(rows.size, 1);
  t.ok(rows.get(7));
  rows.keep(row(8, 'w'.repeat(6_000)));
  t.notOk(rows.get(8), 'a row longer than the bound is not kept');
  t.ok(rows.get(7), 'and pushes nothing out');
  rows.forget(7);
  t.notOk(rows.get(7));

  // Given up in the order kept, a row kept again counting as new, through many rounds.
  const order = new ListedRows(4, 1_000_000);
  const keptIds = (from: number, to: number) => {
    const out: number[] = [];
    for (let id = from; id <= to; id++) if (order.get(id)) out.push(id);
    return out;
  };
  for (let id = 1; id <= 4; id++) order.keep(row(id));
  order.keep(row(2));
  order.forget(3);
  order.keep(row(5));
  order.keep(row(6));
  t.same(keptIds(1, 6), [2, 4, 5, 6], 'the oldest (1) given up');
  order.keep(row(7));
  t.same(keptIds(1, 7), [2, 5, 6, 7], 'then 4');
  order.keep(row(8));
  t.same(keptIds(1, 8), [5, 6, 7, 8], '2, kept again after 4');
  for (let id = 9; id <= 5_000; id++) order.keep(row(id));
  t.same(keptIds(1, 5_000), [4_997, 4_998, 4_999, 5_000], 'the newest four');
  order.clear();
  for (let id = 1; id <= 6; id++) order.keep(row(id));
  t.same(keptIds(1, 6), [3, 4, 5, 6], 'after clear(), the same order');
  t.end();
});

t.test('a listing longer than the bound answers every row', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 2);
  t.teardown(() => store.close());
  const kept = store.messageSearch.listedRows;
  const n = kept.maxRows + 50;
  store.transaction(() => {
    for (let i = 0; i < n; i++) sendToAll(store, users, { content: `m${i}`, index: false });
  });
  // Half of them kept, then all listed at once: the kept ones are pushed out by the rest.
  newest(store, users[1]!, Math.floor(n / 2));
  t.same(newest(store, users[1]!, n), newestInSql(store, users[1]!, n));
  t.ok(kept.size <= kept.maxRows);
  t.end();
});

t.test(
  'a listing of rows not kept runs one query of whole rows; either way SQLite answers',
  (t) => {
    const { store, users } = storeWithUsers(t.testdir(), 3);
    t.teardown(() => store.close());
    const [, u, v] = users as [number, number, number];
    const ids: number[] = [];
    store.transaction(() => {
      for (let i = 0; i < 400; i++) ids.push(sendToAll(store, users, { content: `m${i}` }));
    });
    const top = Number.MAX_SAFE_INTEGER;
    const check = (
      what: string,
      dir: 'before' | 'after',
      anchor: number,
      n: number,
      way: 'whole' | 'byId',
      userId = u,
    ) => {
      const got = range(store, userId, dir, anchor, n);
      t.same(got.rows, rangeInSql(store, userId, dir, anchor, n), `${what}: SQLite's rows`);
      t.equal(got.way, way, `${what}: ${way}`);
    };

    check('the newest, nothing kept', 'before', top, 100, 'whole');
    t.equal(store.messageSearch.listedRows.size, 100, 'the whole rows are kept');
    check('the newest again', 'before', top, 100, 'byId');
    check("another user's newest of the same narrow", 'before', top, 100, 'byId', v);
    check('scrolled back for the first time', 'before', ids[299]! - 1, 100, 'whole');
    check('scrolled back again', 'before', ids[299]! - 1, 100, 'byId');
    check('the newest 200, all kept', 'before', top, 200, 'byId');
    check('oldest first from an anchor not listed', 'after', ids[0]!, 50, 'whole');
    check('oldest first over kept rows', 'after', ids[10]!, 30, 'byId');
    check('a middle anchor, down, mostly not kept', 'before', ids[60]!, 100, 'whole');

    // Writes to kept rows and to rows not kept, then each listed again.
    store.transaction(() => store.messages.delete(ids[150]!));
    store.transaction(() => store.messageEdits.move([ids[151]!], 3, 'elsewhere', 2, null));
    store.db
      .prepare(`UPDATE messages SET content = 'sql' WHERE id IN (?, ?)`)
      .run(ids[160], ids[350]);
    store.db
      .prepare('UPDATE user_messages SET flags = ? WHERE message_id = ?')
      .run(STARRED, ids[161]);
    store.transaction(() =>
      store.messageEdits.updateContent(ids[390]!, {
        content: 'edited',
        rendered_content: '<p>edited</p>',
        has_attachment: false,
        has_image: false,
        has_link: false,
        last_edit_time: 1,
        entry: '{"timestamp":1}',
      }),
    );
    check('after writes, rows never listed', 'before', ids[199]!, 80, 'whole');
    check('after writes, the kept newest', 'before', top, 100, 'byId');
    t.equal(
      store.messageSearch.listedRows.get(ids[350]!)?.[5],
      'sql',
      'listed again after the write',
    );

    // Listed whole inside a transaction that rolls back: read, not kept.
    const kept = store.messageSearch.listedRows.size;
    t.throws(() =>
      store.transaction(() => {
        store.db.prepare(`UPDATE messages SET content = 'uncommitted' WHERE id = ?`).run(ids[110]);
        const inside = range(store, u, 'before', ids[119]!, 20);
        t.equal(inside.way, 'whole');
        t.equal(inside.rows.find((r) => r[0] === ids[110])?.[1], 'uncommitted', 'its own write');
        throw new Error('roll back');
      }),
    );
    t.equal(store.messageSearch.listedRows.size, kept, 'nothing kept of it');
    check('after the rollback', 'before', ids[119]!, 20, 'whole');
    t.equal(store.messageSearch.listedRows.get(ids[110]!)?.[5], 'm110');

    // By ids: whole rows when fewer than half are kept.
    const byIds = (list: number[]) => {
      const whole = store.messageSearch.listings.whole;
      const rows = store.messageSearch.messages(everything(u), { dir: 'ids', ids: list });
      const inSql = rangeInSql(store, u, 'after', 0, 1000).filter((r) =>
        list.includes(r[0] as number),
      );
      t.same(
        rows.map((r) => [r.id, r.content, r.rendered_content, r.topic, r.stream_id, r.flags]),
        inSql,
      );
      return store.messageSearch.listings.whole > whole ? 'whole' : 'byId';
    };
    t.equal(byIds(ids.slice(70, 90)), 'whole', 'by ids, not kept');
    t.equal(byIds(ids.slice(70, 90)), 'byId', 'by ids, kept');
    t.end();
  },
);

t.test('the spans of a narrow: merged when they touch, the latest otherwise, bounded', (t) => {
  const spans = new ListedSpans(2);
  const rows = new ListedRows(100, 100_000);
  rows.keep([1, 1, 1, null, 't', 'x', 'x', 0, null, null, null, 'c']);
  const before = (anchor: number, limit = 10) => ({ dir: 'before' as const, anchor, limit });
  const after = (anchor: number, limit = 10) => ({ dir: 'after' as const, anchor, limit });
  t.ok(spans.expectKept('a', before(50), rows), 'nothing listed yet: as if its newest');
  spans.note('z', before(1e9), 200, 300, 10);
  t.notOk(spans.expectKept('a', before(50), rows), 'a narrow never listed, anchor not kept');
  t.ok(spans.expectKept('a', after(1), rows), 'a narrow never listed, anchor kept');
  t.ok(spans.expectKept('a', before(1e9), rows), 'a narrow never listed, its newest');
  spans.note('a', before(1e9), 91, 100, 10);
  t.ok(spans.expectKept('a', before(1e9), rows), 'its newest again');
  t.notOk(spans.expectKept('a', before(90), rows), 'below its span');
  t.notOk(spans.expectKept('a', before(92), rows), 'two of ten in its span');
  t.ok(spans.expectKept('a', after(92), rows), 'nine of ten');
  spans.note('a', before(90), 81, 90, 10);
  t.ok(spans.expectKept('a', before(90), rows), 'scrolled back, merged');
  t.ok(spans.expectKept('a', before(1e9, 20), rows), 'twenty of twenty');
  spans.note('a', after(10), 10, 19, 10);
  t.notOk(spans.expectKept('a', before(95), rows), 'apart: the latest span only');
  t.ok(spans.expectKept('a', after(10), rows));
  spans.note('b', before(1e9), 1, 5, 5);
  spans.note('c', before(1e9), 1, 5, 5);
  t.equal(spans.size, 2, 'bounded');
  t.notOk(spans.expectKept('a', after(10), rows), 'the first listed given up');
  t.notOk(spans.expectKept('b', before(1e9), new ListedRows(1, 1)), 'nothing kept at all');
  t.end();
});
