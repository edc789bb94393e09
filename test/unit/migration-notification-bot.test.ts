/**
 * Migration 0015: realms created before every realm had its notification bot get one (a realm
 * whose bot was created on first use keeps its own), and messages get their type.
 */
import Database from '../../src/storage/sqlite.js';
import t from 'tap';
import { NOTIFICATION_BOT_EMAIL } from '../../src/lib/notices.js';
import { migrate } from '../../src/storage/db.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { m0015_notification_bot } from '../../src/storage/migrations/0015_notification_bot.js';
import { RealmView } from '../../src/queries/realm-view.js';
import { Store } from '../../src/storage/store.js';

t.test('existing realms get a notification bot, once', (t) => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  const before = MIGRATIONS.indexOf(m0015_notification_bot);
  for (const m of MIGRATIONS.slice(0, before)) db.exec(m.sql);
  db.pragma(`user_version = ${before}`);

  const realm = (stringId: string) =>
    Number(
      db
        .prepare("INSERT INTO realms (string_id, name, date_created) VALUES (?, 'R', 1700000000)")
        .run(stringId).lastInsertRowid,
    );
  const group = (realmId: number, name: string) =>
    Number(
      db
        .prepare('INSERT INTO user_groups (realm_id, name, is_system_group) VALUES (?, ?, 1)')
        .run(realmId, name).lastInsertRowid,
    );
  const user = (realmId: number, email: string, isBot: number) =>
    Number(
      db
        .prepare(
          `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key, is_bot,
             bot_type, date_joined) VALUES (?, ?, ?, ?, ?, ?, ?, 1700000000)`,
        )
        .run(realmId, email, email, email, `key-${realmId}-${email}`, isBot, isBot ? 1 : null)
        .lastInsertRowid,
    );
  const a = realm('a');
  const b = realm('b');
  for (const r of [a, b])
    for (const name of ['role:members', 'role:fullmembers', 'role:owners']) group(r, name);
  user(a, 'owner@a.test', 0);
  user(b, 'owner@b.test', 0);
  const earlierBot = user(b, NOTIFICATION_BOT_EMAIL, 1);
  db.prepare('INSERT INTO realm_user_defaults (realm_id, settings) VALUES (?, ?)').run(
    a,
    '{"enter_sends":true}',
  );
  const dm = db
    .prepare("INSERT INTO direct_message_groups (realm_id, user_ids, size) VALUES (?, '1', 1)")
    .run(a).lastInsertRowid;
  db.prepare(
    `INSERT INTO messages (realm_id, sender_id, dm_group_id, content, rendered_content,
       date_sent, sending_client) VALUES (?, 1, ?, 'x', '<p>x</p>', 1700000000, 'test')`,
  ).run(a, dm);

  migrate(db);
  t.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.length);

  type Row = { id: number; realm_id: number; is_bot: number; bot_type: number; role: number };
  const bots = db
    .prepare('SELECT * FROM users WHERE delivery_email = ? ORDER BY realm_id')
    .all(NOTIFICATION_BOT_EMAIL) as (Row & { settings: string; full_name: string })[];
  t.equal(bots.length, 2, 'one bot per realm');
  t.match(bots[0], {
    realm_id: a,
    is_bot: 1,
    bot_type: 1,
    role: 400,
    full_name: 'Notification Bot',
    settings: '{"enter_sends":true}',
  });
  t.equal(bots[1]!.id, earlierBot, 'a bot created earlier is kept');
  const groupsOf = (userId: number) =>
    db
      .prepare(
        `SELECT g.name FROM user_group_members m JOIN user_groups g ON g.id = m.group_id
         WHERE m.user_id = ? ORDER BY g.name`,
      )
      .pluck()
      .all(userId);
  t.same(groupsOf(bots[0]!.id), ['role:fullmembers', 'role:members']);
  t.same(groupsOf(earlierBot), ['role:fullmembers', 'role:members']);
  t.equal(db.prepare('SELECT type FROM messages').pluck().get(), 1, 'old messages are normal');

  // The read model finds it.
  const store = new Store(db);
  t.equal(new RealmView(store, a).userByEmail(NOTIFICATION_BOT_EMAIL)?.id, bots[0]!.id);
  db.close();
  t.end();
});
