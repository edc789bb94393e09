/**
 * Migration 0014 on an existing data directory: a database at schema version 13 with data in it
 * (a realm, users, groups, messages, reactions, an attachment linked to a message, search rows) is
 * migrated in place: every row kept, every index kept, foreign keys intact (no cascade fired by
 * the rebuild), the tables keyed by `id` now AUTOINCREMENT, and a deleted newest id never reused.
 */
import Database from '../../src/storage/sqlite.js';
import path from 'node:path';
import t from 'tap';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { closeDatabase, openDatabase, type DB } from '../../src/storage/db.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { Store } from '../../src/storage/store.js';

function counts(db: DB): Record<string, number> {
  const tables = db
    .prepare<[], string>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE TABLE%' AND name <> 'sqlite_sequence'",
    )
    .pluck()
    .all();
  return Object.fromEntries(
    tables.map((name) => [
      name,
      db.prepare<[], number>(`SELECT count(*) FROM "${name}"`).pluck().get()!,
    ]),
  );
}

const indexes = (db: DB) =>
  db
    .prepare<[], string>(
      "SELECT name || ' ' || sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
    )
    .pluck()
    .all();

function insertMessage(db: DB, realmId: number, senderId: number, text: string): number {
  let group = db
    .prepare<[number], number>('SELECT id FROM direct_message_groups WHERE realm_id = ?')
    .pluck()
    .get(realmId);
  if (group === undefined) {
    group = Number(
      db
        .prepare('INSERT INTO direct_message_groups (realm_id, user_ids, size) VALUES (?, ?, 1)')
        .run(realmId, String(senderId)).lastInsertRowid,
    );
    db.prepare('INSERT INTO direct_message_group_members (group_id, user_id) VALUES (?, ?)').run(
      group,
      senderId,
    );
  }
  const id = Number(
    db
      .prepare(
        `INSERT INTO messages (realm_id, sender_id, stream_id, dm_group_id, topic, content,
           rendered_content, date_sent, has_attachment, has_image, has_link, sending_client)
         VALUES (?, ?, NULL, ?, '', ?, ?, 0, 0, 0, 0, 'test')`,
      )
      .run(realmId, senderId, group, text, `<p>${text}</p>`).lastInsertRowid,
  );
  db.prepare('INSERT INTO user_messages (user_id, message_id, flags) VALUES (?, ?, 0)').run(
    senderId,
    id,
  );
  db.prepare("INSERT INTO messages_fts (rowid, topic, body) VALUES (?, '', ?)").run(id, text);
  return id;
}

t.test('an existing data directory at version 13 is migrated in place', (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'confab.sqlite3');
  const old = new Database(file);
  old.pragma('journal_mode = WAL');
  old.pragma('foreign_keys = ON');
  for (let v = 0; v < 13; v++) old.exec(MIGRATIONS[v]!.sql);
  old.pragma('user_version = 13');
  // Today's Store also reads the message type of migration 0015: the column is there while the
  // realm is created through it, then dropped again, leaving the version-13 schema.
  // So do the tables of later migrations (realm exports, image attachments): made for the
  // realm's creation and dropped again too.
  old.exec('ALTER TABLE messages ADD COLUMN type INTEGER NOT NULL DEFAULT 1');
  const later = MIGRATIONS.filter((m) => /^00(1[6-9]|[2-9]\d)_/.test(m.name));
  // (Later migrations also drop indexes and add triggers, 0030: put back as they were after.)
  const schemaOf = () =>
    old
      .prepare<[], { type: string; name: string; sql: string }>(
        "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND sql IS NOT NULL",
      )
      .all();
  const schemaBefore = schemaOf();
  for (const m of later) old.exec(m.sql);
  const store = new Store(old);
  const realm = doCreateRealm(store, {
    name: 'Old',
    string_id: '',
    owner_email: 'owner@example.com',
    owner_full_name: 'Owner',
    owner_password_hash: null,
    owner_can_create_users: false,
    now: 1,
  });
  old.exec('ALTER TABLE messages DROP COLUMN type');
  for (const m of later) {
    for (const [, table] of m.sql.matchAll(/CREATE TABLE (\w+)/g)) old.exec(`DROP TABLE ${table}`);
  }
  const names = new Set(schemaOf().map((e) => e.name));
  for (const e of schemaOf())
    if (e.type === 'trigger' && !schemaBefore.some((b) => b.name === e.name))
      old.exec(`DROP TRIGGER ${e.name}`);
  for (const e of schemaBefore) if (!names.has(e.name)) old.exec(e.sql);
  insertMessage(old, realm.realm_id, realm.user_id, 'first');
  const m2 = insertMessage(old, realm.realm_id, realm.user_id, 'second');
  old
    .prepare(
      "INSERT INTO reactions (message_id, user_id, emoji_name, emoji_code, reaction_type) VALUES (?, ?, 'smile', '1f642', 'unicode_emoji')",
    )
    .run(m2, realm.user_id);
  const att = Number(
    old
      .prepare(
        `INSERT INTO attachments (realm_id, owner_id, path_id, file_name, content_type, size, create_time)
         VALUES (?, ?, '1/ab/x/f.txt', 'f.txt', 'text/plain', 3, 1)`,
      )
      .run(realm.realm_id, realm.user_id).lastInsertRowid,
  );
  old
    .prepare('INSERT INTO attachment_messages (attachment_id, message_id) VALUES (?, ?)')
    .run(att, m2);
  // A deleted message before the migration: its id cannot be known and is not protected.
  const m3 = insertMessage(old, realm.realm_id, realm.user_id, 'third');
  old.prepare('DELETE FROM user_messages WHERE message_id = ?').run(m3);
  old.prepare('DELETE FROM messages WHERE id = ?').run(m3);
  const before = counts(old);
  const indexesBefore = indexes(old);
  old.close();

  const db = openDatabase(dir);
  t.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.length, 'migrated to the end');
  // Later migrations add tables and indexes of their own; those that were there are all kept.
  const after = counts(db);
  t.same(
    Object.fromEntries(Object.keys(before).map((name) => [name, after[name]])),
    before,
    'every row of every table kept',
  );
  const indexesAfter = indexes(db);
  // (But those a later migration drops on purpose: 0030's unread index, now a table.)
  const dropped = later.flatMap((m) => [...m.sql.matchAll(/DROP INDEX (\w+)/g)].map((x) => x[1]));
  t.same(
    indexesBefore.filter((i) => !indexesAfter.includes(i) && !dropped.includes(i.split(' ')[0])),
    [],
    'every index kept',
  );
  t.same(db.pragma('foreign_key_check'), [], 'foreign keys intact');
  t.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys back on');
  t.same(
    db.prepare('SELECT attachment_id, message_id FROM attachment_messages').all(),
    [{ attachment_id: att, message_id: m2 }],
    'no cascade fired during the rebuild',
  );
  const plain = db
    .prepare<[], string>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%id %INTEGER PRIMARY KEY,%' AND sql NOT LIKE '%AUTOINCREMENT%' AND name NOT LIKE 'messages_fts%'",
    )
    .pluck()
    .all();
  t.same(plain, [], 'no table keyed by a plain id is left');
  t.equal(
    db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").pluck().get(),
    m2,
    'the sequence starts at the largest id present',
  );
  t.same(
    db.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?').pluck().all('second'),
    [m2],
    'search still finds the messages',
  );

  const m4 = insertMessage(db, realm.realm_id, realm.user_id, 'fourth');
  db.prepare('DELETE FROM user_messages WHERE message_id = ?').run(m4);
  db.prepare('DELETE FROM messages WHERE id = ?').run(m4);
  const m5 = insertMessage(db, realm.realm_id, realm.user_id, 'fifth');
  t.ok(m5 > m4, `after the migration a deleted newest id is not reused (${m4} → ${m5})`);
  closeDatabase(db);
  t.end();
});
