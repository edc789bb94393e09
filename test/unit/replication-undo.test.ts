/**
 * A cluster node's own commits that the log did not take are taken back from its copy
 * (src/storage/replication.ts Replication.undo; docs/cluster.md "Failover and fencing"): the rows
 * of two batches (a message inserted, indexed, edited; a user's row updated; an older message
 * deleted) go back to their state before the first, byte for byte in every table, the full-text
 * index finds what it found before, and the batches no longer count as unacknowledged.
 */
import t from 'tap';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { Replication } from '../../src/storage/replication.js';
import { Store } from '../../src/storage/store.js';
import { realmParams } from '../helpers/realms.js';

t.test('two batches taken back: every table as before them, the index too', (t) => {
  const store = Store.open(t.testdir(), { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  const realm = doCreateRealm(store, realmParams('', 'Undo'));
  const replication = new Replication(store);
  const db = store.db;
  const tables = db
    .prepare<[], string>(
      `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'
       AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'messages_fts%' AND name <> 'cluster_state'`,
    )
    .pluck()
    .all();
  const dump = () =>
    tables.map((name) => [
      name,
      db
        .prepare(`SELECT * FROM "${name}"`)
        .all()
        .map((r) => JSON.stringify(r))
        .sort(),
    ]);
  const found = (word: string) =>
    db
      .prepare<[string], number>('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?')
      .pluck()
      .all(word);
  // A channel (its group settings: one of the realm's groups).
  const group = db
    .prepare<[number], number>('SELECT id FROM user_groups WHERE realm_id = ? LIMIT 1')
    .pluck()
    .get(realm.realm_id)!;
  const required = (
    db.pragma('table_info(streams)') as { name: string; notnull: number; dflt_value: unknown }[]
  ).filter((c) => c.notnull === 1 && c.dflt_value === null && c.name !== 'id');
  const values: Record<string, unknown> = { realm_id: realm.realm_id, name: 'undo' };
  for (const c of required) values[c.name] ??= c.name.endsWith('_group') ? group : 1;
  const channel = Number(
    db
      .prepare(
        `INSERT INTO streams (${Object.keys(values).join(', ')})
         VALUES (${Object.keys(values)
           .map(() => '?')
           .join(', ')})`,
      )
      .run(...Object.values(values)).lastInsertRowid,
  );
  const insertMessage = (id: number, text: string) => {
    db.prepare(
      `INSERT INTO messages (id, realm_id, sender_id, stream_id, topic, content, rendered_content,
       date_sent, sending_client, type) VALUES (?, ?, ?, ?, 'undo', ?, ?, 100, 'test', 2)`,
    ).run(id, realm.realm_id, realm.user_id, channel, text, `<p>${text}</p>`);
    store.messages.index(id, 'undo', text);
  };

  // Before: a channel and a message the log holds (written as if applied: not captured).
  store.transaction(() => insertMessage(999, 'older'));
  replication.discard();
  const before = dump();
  t.same(found('older'), [999], 'the older message is indexed');

  const batches: ReturnType<Replication['sealWithUndo']>[] = [];
  store.transaction(() => {
    insertMessage(1000, 'refused');
    db.prepare('UPDATE users SET full_name = ? WHERE id = ?').run('Renamed', realm.user_id);
    replication.noteUnacked(1);
    batches.push(replication.sealWithUndo());
  });
  store.transaction(() => {
    db.prepare('UPDATE messages SET content = ?, rendered_content = ? WHERE id = ?').run(
      'edited',
      '<p>edited</p>',
      1000,
    );
    store.messageEdits.reindex(1000, 'undo', 'edited');
    db.prepare('DELETE FROM messages WHERE id = ?').run(999);
    db.prepare('DELETE FROM messages_fts WHERE rowid = ?').run(999);
    db.prepare('UPDATE users SET full_name = ? WHERE id = ?').run('Renamed again', realm.user_id);
    replication.noteUnacked(1);
    batches.push(replication.sealWithUndo());
  });
  t.equal(replication.state().unacked, 2, 'two commits await the log');
  t.notSame(dump(), before, 'the copy holds them');
  t.same(found('edited'), [1000]);
  t.same(found('older'), []);
  t.ok(
    batches.every((b) => b.undo.length > 0 && b.changes.length > 0),
    'each batch has its rows and their state before it',
  );

  const { touched } = replication.undo(batches);
  t.same(dump(), before, 'every table as before the first batch');
  t.same(found('older'), [999], 'the deleted message is found again');
  t.same(found('edited'), [], 'the refused edit is not');
  t.same(found('refused'), [], 'nor the refused message');
  t.equal(replication.state().unacked, 0, 'nothing awaits the log any more');
  t.ok(touched.has('users') && touched.has('messages'), 'the tables it wrote, for the read model');
  t.same(replication.seal(), [], 'the undo itself is not captured for the log');
  t.end();
});
