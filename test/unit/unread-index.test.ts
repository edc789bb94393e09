/**
 * The unread index (migration 0030, src/storage/unread.ts). A send's transaction writes no unread
 * index entry per recipient: its commit holds about one page per recipient (the user_messages
 * row), not two (the row and its unread entry), counted in the WAL. And wherever the watermark
 * is, every reader of unread messages answers what user_messages' flags say, through sends, flag
 * changes both ways, deletes, rows added for old messages and watermark moves in any order.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { lastCommitPages, PageOwners } from '../../bench/lib/wal-pages.js';
import type { MessageQuery } from '../../src/storage/message-search.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { Store } from '../../src/storage/store.js';
import { READ, sendToAll, storeWithUsers } from '../helpers/bare-store.js';
import { explainCalls } from '../helpers/query-plans.js';

const EMAILED = 2048;

t.test("a send's commit writes the recipients' rows, not an unread entry for each", (t) => {
  const dir = t.testdir();
  const { store, users } = storeWithUsers(dir, 50);
  t.teardown(() => store.close());
  // Enough sends that each recipient's rows fill pages of their own.
  for (let i = 0; i < 400; i++) sendToAll(store, users);
  // The server moves the watermark between sends (src/storage/store.ts); here at once. (Optional
  // so that this test runs on the code before the unread index too, where it fails.)
  const unread = (store as { unread?: { moveWatermark(rows: number): boolean } }).unread;
  store.transaction(() => unread?.moveWatermark(1e9));
  const owners = new PageOwners(path.join(dir, 'confab.sqlite3'));
  t.teardown(() => owners.close());
  const byOwner = new Map<string, number>();
  let pages = 0;
  const rounds = 20;
  for (let i = 0; i < rounds; i++) {
    sendToAll(store, users);
    for (const page of lastCommitPages(path.join(dir, 'confab.sqlite3-wal'))) {
      const owner = owners.of(page);
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
      pages++;
    }
  }
  const per = pages / rounds;
  const unreadPages = [...byOwner].filter(([name]) => /unread/.test(name));
  t.same(unreadPages, [], 'no page of an unread index in the commit');
  t.ok(
    per <= users.length + 30,
    `about one page per recipient: ${per} pages per send to ${users.length} ` +
      `(${JSON.stringify([...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 4))})`,
  );
  t.end();
});

t.test('unread answers follow the flags wherever the watermark is', (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 4);
  t.teardown(() => store.close());
  const db = store.db;
  // A small deterministic generator (the same run every time).
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const ids: number[] = [];
  const truth = (u: number) =>
    db
      .prepare<[number], number>(
        'SELECT message_id FROM user_messages WHERE user_id = ? AND (flags & 1) = 0 ORDER BY message_id DESC',
      )
      .pluck()
      .all(u);
  const unreadQuery = (u: number, conditions: MessageQuery['conditions'] = []): MessageQuery => ({
    userId: u,
    realmId: 1,
    includeHistory: false,
    conditions: [{ kind: 'flags', mask: 1, set: false, negated: false }, ...conditions],
  });
  // The missed-message mail's read as it was before the unread index (user_messages alone).
  const unreadSinceTruth = db.prepare<[number, number, number], { id: number; flags: number }>(
    `SELECT m.id, um.flags AS flags FROM user_messages um JOIN messages m ON m.id = um.message_id
     WHERE um.user_id = ? AND (um.flags & 1) = 0 AND (um.flags & 2048) = 0 AND m.date_sent >= ?
     ORDER BY um.message_id DESC LIMIT ?`,
  );
  let checks = 0;
  const check = (step: string) => {
    const w = store.unread.watermark();
    const index = db
      .prepare<[], string>(
        "SELECT user_id || ':' || message_id FROM unread_messages ORDER BY user_id, message_id",
      )
      .pluck()
      .all();
    const expected = db
      .prepare<[number], string>(
        `SELECT user_id || ':' || message_id FROM user_messages
         WHERE (flags & 1) = 0 AND message_id <= ? ORDER BY user_id, message_id`,
      )
      .pluck()
      .all(w);
    if (!t.same(index, expected, `${step}: the index holds the unread rows up to ${w}`)) return;
    for (const u of users) {
      const all = truth(u);
      for (const limit of [1, 3, 1000]) {
        const want = all.slice(0, limit);
        t.same(store.reading.unreadAll(u, limit), want, `${step}: unreadAll ${u} ${limit}`);
        t.same(
          store.messages.unread(u, limit).map((r) => r.message_id),
          [...want].reverse(),
          `${step}: register unread ${u} ${limit}`,
        );
        t.same(
          store.messageSearch
            .ids(unreadQuery(u), { dir: 'before', anchor: 1e15, limit })
            .map((r) => r.id),
          want,
          `${step}: is:unread newest ${u} ${limit}`,
        );
        t.same(
          store.messageSearch
            .ids(unreadQuery(u), { dir: 'after', anchor: 0, limit })
            .map((r) => r.id),
          [...all].reverse().slice(0, limit),
          `${step}: is:unread oldest ${u} ${limit}`,
        );
      }
      for (const since of [0, 2, 3])
        for (const limit of [1, 3, 1000])
          t.same(
            store.missedMessages.unreadSince(u, since, limit).map((r) => [r.id, r.flags]),
            unreadSinceTruth.all(u, since, limit).map((r) => [r.id, r.flags]),
            `${step}: missed-message mail's unread since ${since} ${u} ${limit}`,
          );
      const even = all.filter((id) => id % 2 === 0);
      t.same(
        store.messageSearch.ids(unreadQuery(u), { dir: 'ids', ids: even }).map((r) => r.id),
        [...even].reverse(),
        `${step}: is:unread by ids ${u}`,
      );
      const inChannel2 = db
        .prepare<[number], number>(
          `SELECT um.message_id FROM user_messages um JOIN messages m ON m.id = um.message_id
           WHERE um.user_id = ? AND (um.flags & 1) = 0 AND m.stream_id = 2
           ORDER BY um.message_id DESC`,
        )
        .pluck()
        .all(u);
      t.same(store.reading.unreadInChannel(u, 2, 1000), inChannel2, `${step}: in channel ${u}`);
      t.same(
        store.messageSearch
          .ids(unreadQuery(u, [{ kind: 'channel', id: 2, negated: false }]), {
            dir: 'before',
            anchor: 1e15,
            limit: 1000,
          })
          .map((r) => r.id),
        inChannel2,
        `${step}: is:unread in a channel ${u}`,
      );
      checks++;
    }
  };

  for (let step = 0; step < 120; step++) {
    const op = rnd(10);
    const u = users[rnd(users.length)]!;
    if (op < 4 || ids.length < 3) {
      const id = sendToAll(store, users, { stream: 1 + rnd(2) });
      ids.push(id);
      // Dates and mail flags for the missed-message mail's read (no draw: the same sequence).
      db.prepare('UPDATE messages SET date_sent = ? WHERE id = ?').run(id % 4, id);
      if (id % 3 === 0) store.transaction(() => store.messages.setFlag(users[1]!, [id], EMAILED));
    } else if (op === 4) {
      const some = [ids[rnd(ids.length)]!, ids[rnd(ids.length)]!];
      store.transaction(() => store.messages.setFlag(u, some, READ));
    } else if (op === 5) {
      const some = [ids[rnd(ids.length)]!, ids[rnd(ids.length)]!];
      store.transaction(() => store.messages.clearFlag(u, some, READ));
    } else if (op === 6) {
      const id = ids.splice(rnd(ids.length), 1)[0]!;
      store.transaction(() => store.messages.delete(id));
    } else if (op === 7) {
      // A row for an old message (as a flag change on a message the user never received adds).
      const id = ids[rnd(ids.length)]!;
      store.transaction(() => {
        db.prepare('DELETE FROM user_messages WHERE user_id = ? AND message_id = ?').run(u, id);
        store.messages.insertUserMessage(u, id, rnd(2));
      });
    } else {
      store.transaction(() => store.unread.moveWatermark(1 + rnd(12)));
    }
    check(`step ${step} (op ${op})`);
  }
  t.ok(store.unread.watermark() > 0, 'the watermark moved');
  t.ok(checks > 0);
  t.end();
});

t.test("the register's unread rows: one statement for the rows above the watermark", (t) => {
  const statements: string[] = [];
  const { store, users } = storeWithUsers(t.testdir(), 3, (sql) => statements.push(String(sql)));
  t.teardown(() => store.close());
  const db = store.db;
  const u = users[1]!;
  db.pragma('foreign_keys = OFF'); // subscriptions without their channels' rows
  // The user left channel 2: its unread messages are not the register's.
  db.prepare(
    `INSERT INTO subscriptions (user_id, stream_id, active, color) VALUES (?, 1, 1, ''), (?, 2, 0, '')`,
  ).run(u, u);
  const ids: number[] = [];
  for (let i = 0; i < 6; i++) ids.push(sendToAll(store, users, { stream: 1 + (i % 2) }));
  store.transaction(() => store.unread.moveWatermark(3 * 3)); // the first three below it
  for (let i = 0; i < 6; i++) ids.push(sendToAll(store, users, { stream: i < 4 ? 2 : 1 }));
  t.equal(store.unread.watermark(), ids[2], 'three below the watermark, nine above');
  // Limits count rows before the channel filter: channel 2's count but are not shown.
  const want = (limit: number) =>
    ids
      .slice(-limit)
      .filter(
        (id) => db.prepare('SELECT stream_id FROM messages WHERE id = ?').pluck().get(id) === 1,
      );
  for (const limit of [1, 2, 5, 9, 10, 12, 100]) {
    statements.length = 0;
    const got = store.messages.unread(u, limit).map((r) => r.message_id);
    const ran = [...statements];
    t.same(got, want(limit), `limit ${limit}`);
    const reads = ran.filter((sql) => /\bFROM (user_messages|unread_messages)\b/.test(sql));
    const expected = limit > 9 ? 2 : 1;
    t.equal(
      reads.length,
      expected,
      `limit ${limit}: ${expected === 2 ? 'one statement on each side' : 'one statement above'} ` +
        `(${ran.length} ran: ${ran.map((s) => s.replace(/\s+/g, ' ').slice(0, 60)).join(' / ')})`,
    );
  }
  t.end();
});

t.test("the missed-message mail's unread read uses the unread index", (t) => {
  const { store, users } = storeWithUsers(t.testdir(), 2);
  t.teardown(() => store.close());
  for (let i = 0; i < 4; i++) sendToAll(store, users);
  store.transaction(() => store.unread.moveWatermark(4)); // rows on both sides
  const plans = explainCalls(store, () => store.missedMessages.unreadSince(users[1]!, 0, 100));
  const [above = '', below = '', ...more] = plans.filter((p) => !/unread_watermark/.test(p));
  t.same(more, [], `two reads: ${JSON.stringify(plans)}`);
  // Above the watermark: a range of the user's user_messages rows; at or below it: their unread
  // rows in unread_messages. Not all of the user's rows (SEARCH um USING PRIMARY KEY (user_id=?)).
  t.match(above, /SEARCH um USING PRIMARY KEY \(user_id=\? AND message_id>\?\)/, above);
  t.match(
    below,
    /^SEARCH u USING PRIMARY KEY \(user_id=\? AND message_id<\?\) \| SEARCH um USING PRIMARY KEY \(user_id=\? AND message_id=\?\)/,
    below,
  );
  t.end();
});

t.test('an existing database migrates: its unread rows become the index', (t) => {
  const dir = t.testdir();
  const { store, users } = storeWithUsers(dir, 3);
  const ids = [sendToAll(store, users), sendToAll(store, users), sendToAll(store, users)];
  store.transaction(() => store.messages.setFlag(users[1]!, [ids[0]!, ids[2]!], READ));
  const db = store.db;
  // Back to the schema before migration 0030 (and those after it), with the unread rows still
  // there.
  db.exec(`
    DROP TABLE bot_storage;
    DROP TABLE submessages;
    DROP TRIGGER user_messages_unread_insert;
    DROP TRIGGER user_messages_unread_update;
    DROP TRIGGER user_messages_unread_delete;
    DROP TABLE unread_messages;
    DROP TABLE unread_watermark;
    CREATE INDEX user_messages_unread ON user_messages(user_id, message_id) WHERE (flags & 1) = 0;
  `);
  const version = db.pragma('user_version', { simple: true }) as number;
  db.pragma(`user_version = ${MIGRATIONS.findIndex((m) => m.name === '0030_unread_settled')}`);
  store.close();
  fs.rmSync(path.join(dir, 'confab.sqlite3-wal'), { force: true });

  const again = Store.open(dir, { backgroundCheckpoint: false });
  t.teardown(() => again.close());
  t.equal(again.db.pragma('user_version', { simple: true }), version, 'migrated');
  t.equal(again.unread.watermark(), ids[2], 'the watermark at the newest message');
  t.same(
    again.db.prepare('SELECT user_id, message_id FROM unread_messages ORDER BY 1, 2').all(),
    [
      { user_id: users[1], message_id: ids[1] },
      { user_id: users[2], message_id: ids[0] },
      { user_id: users[2], message_id: ids[1] },
      { user_id: users[2], message_id: ids[2] },
    ],
    'the unread rows',
  );
  t.same(again.reading.unreadAll(users[2]!, 10), [ids[2], ids[1], ids[0]]);
  t.equal(
    again.db
      .prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'user_messages_unread'")
      .pluck()
      .get(),
    0,
    'the partial index is gone',
  );
  // A send after the migration is above the watermark until it moves.
  const next = sendToAll(again, users);
  t.same(again.reading.unreadAll(users[1]!, 10), [next, ids[1]]);
  again.transaction(() => again.unread.moveWatermark(100));
  t.equal(again.unread.watermark(), next);
  t.same(again.reading.unreadAll(users[1]!, 10), [next, ids[1]]);
  t.end();
});

t.test('the server moves the watermark by itself, a transaction of its own', async (t) => {
  const dir = t.testdir();
  const store = Store.open(dir);
  t.teardown(async () => {
    store.close();
    await store.stopped();
  });
  store.db.prepare(`INSERT INTO realms (string_id, name, date_created) VALUES ('', 'r', 0)`).run();
  store.db
    .prepare(
      `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key, date_joined)
       VALUES (1, 'a@r', 'a@r', 'a', 'k', 0)`,
    )
    .run();
  const id = sendToAll(store, [1]);
  for (let i = 0; i < 400 && store.unread.watermark() < id; i++)
    await new Promise((r) => setTimeout(r, 10));
  t.equal(store.unread.watermark(), id, 'caught up with the newest message');
});
