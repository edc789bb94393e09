/**
 * The ids of new rows (src/storage/ids.ts): every INSERT into an id table binds `id` from the
 * Store's RowIds. In the single-process server that is NULL, which SQLite must treat exactly as
 * an omitted id; a cluster node's id source gives explicit ids, which the rows must get.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import Database from '../../src/storage/sqlite.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { ID_TABLES, largestId, type IdTable } from '../../src/storage/ids.js';
import { Store } from '../../src/storage/store.js';
import { realmParams } from '../helpers/realms.js';

function tempStore(t: Test): Store {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'row-ids-'));
  const store = Store.open(dir, { backgroundCheckpoint: false });
  t.teardown(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

t.test('ID_TABLES lists exactly the tables keyed by an AUTOINCREMENT id', (t) => {
  const store = tempStore(t);
  const schema = store.db
    .prepare<[], string>(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%' ORDER BY name",
    )
    .pluck()
    .all();
  t.same([...ID_TABLES].sort(), schema);
  t.end();
});

t.test('binding id = NULL is the same as leaving the id out', (t) => {
  const run = (bindNull: boolean) => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE x (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)');
    const insert = bindNull
      ? (v: string) => db.prepare('INSERT INTO x (id, v) VALUES (?, ?)').run(null, v)
      : (v: string) => db.prepare('INSERT INTO x (v) VALUES (?)').run(v);
    const given = [insert('a').lastInsertRowid, insert('b').lastInsertRowid];
    db.exec('DELETE FROM x WHERE id = 2'); // the newest: AUTOINCREMENT never hands it out again
    given.push(insert('c').lastInsertRowid);
    const out = {
      given: given.map(Number),
      rows: db.prepare('SELECT * FROM x ORDER BY id').all(),
      sequence: db.prepare('SELECT * FROM sqlite_sequence').all(),
    };
    db.close();
    return out;
  };
  const omitted = run(false);
  t.same(run(true), omitted, 'same ids, same lastInsertRowid, same sqlite_sequence');
  t.same(omitted.given, [1, 2, 3]);
  t.end();
});

t.test('the single-process store lets SQLite choose', (t) => {
  const store = tempStore(t);
  t.equal(store.ids.nextId('messages'), null);
  const a = doCreateRealm(store, realmParams('', 'Ids'));
  const b = doCreateRealm(store, realmParams('b', 'Ids'));
  t.same([a.realm_id, b.realm_id], [1, 2], 'realm ids follow each other');
  t.ok(b.user_id > a.user_id, 'so do user ids');
  const maxOf = (table: string) =>
    store.db.prepare<[], number>(`SELECT max(id) FROM ${table}`).pluck().get()!;
  t.equal(largestId(store.db), Math.max(maxOf('users'), maxOf('user_groups')), 'the largest id');
  t.end();
});

t.test('the largest id counts ids given to rows deleted since', (t) => {
  const store = tempStore(t);
  doCreateRealm(store, realmParams('', 'Ids'));
  const b = doCreateRealm(store, realmParams('b', 'Ids'));
  const newest = largestId(store.db);
  t.ok(newest >= b.user_id, `the largest id: ${newest}`);
  // The newest rows of every table holding it go, as a single process deletes a newest message.
  for (const table of ID_TABLES) store.db.prepare(`DELETE FROM ${table} WHERE id = ?`).run(newest);
  const held = store.db
    .prepare<[], number>(
      `SELECT max(m) FROM (${ID_TABLES.map((x) => `SELECT max(id) AS m FROM ${x}`).join(' UNION ALL ')})`,
    )
    .pluck()
    .get()!;
  t.ok(held < newest, `no row holds it any more (largest held: ${held})`);
  t.equal(largestId(store.db), newest, 'still the largest: SQLite never gives it again either');
  t.end();
});

t.test('an installed id source gives every id', (t) => {
  const store = tempStore(t);
  const asked: IdTable[] = [];
  let next = 5000;
  store.ids.install({
    nextId: (table) => {
      asked.push(table);
      return next++;
    },
  });
  const created = doCreateRealm(store, realmParams('', 'Ids'));
  t.equal(created.realm_id, 5000, 'the realm');
  t.same(
    [...new Set(asked)].sort(),
    ['audit_log', 'realms', 'user_groups', 'users'],
    'the tables a new realm writes asked for theirs',
  );
  const row = (table: string, id: number) =>
    store.db.prepare(`SELECT id FROM ${table} WHERE id = ?`).pluck().get(id);
  t.equal(row('users', created.user_id), created.user_id);
  t.ok(created.user_id >= 5000 && created.user_id < next, 'the owner’s id came from the source');
  t.equal(largestId(store.db), next - 1);
  t.end();
});

/**
 * Every INSERT into an id table names `id` first (so it binds the source's id), except those
 * that write rows with their ids already known: replication's upserts (replication.ts), a realm
 * import (realm-dump.ts) and the migrations.
 */
t.test('every INSERT into an id table binds the id', (t) => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src');
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) files.push(p);
    }
  };
  walk(root);
  const exempt = /(storage\/replication|storage\/realm-dump|storage\/migrations\/)/;
  const ids = new Set<string>(ID_TABLES);
  let sites = 0;
  for (const file of files) {
    if (exempt.test(file)) continue;
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/INSERT\s+(?:OR\s+\w+\s+)?INTO\s+(\w+)\s*\(\s*([^,)\s]+)/g)) {
      if (!ids.has(m[1]!)) continue;
      sites++;
      t.equal(m[2], 'id', `${path.relative(root, file)}: INSERT INTO ${m[1]} binds the id`);
    }
  }
  t.equal(sites, ID_TABLES.length, 'one INSERT site per id table');
  t.end();
});
