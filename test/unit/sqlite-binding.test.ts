/**
 * Which SQLite binding each Node gets (src/storage/sqlite.ts): better-sqlite3 12 on Node 20 and
 * 22, the Node-API build (13) on Node 24 and later, and the binding loaded here works.
 */
import t from 'tap';
import Database, { SQLITE_PACKAGE, sqlitePackageFor } from '../../src/storage/sqlite.js';

t.test('the binding for each runtime', (t) => {
  t.equal(sqlitePackageFor('20.20.2', 9), 'better-sqlite3', 'Node 20 has no Node-API 10');
  t.equal(sqlitePackageFor('22.23.3', 10), 'better-sqlite3', 'Node 22: verified with 12');
  t.equal(sqlitePackageFor('24.18.0', 10), 'better-sqlite3-napi');
  t.equal(sqlitePackageFor('24.21.0', 10), 'better-sqlite3-napi', 'where 12 aborts');
  t.equal(sqlitePackageFor('26.0.0', 10), 'better-sqlite3-napi');
  t.equal(sqlitePackageFor('24.21.0', 9), 'better-sqlite3', 'a runtime without Node-API 10');
  t.equal(
    SQLITE_PACKAGE,
    sqlitePackageFor(process.versions.node, Number(process.versions.napi)),
    `this Node (${process.versions.node}) gets ${SQLITE_PACKAGE}`,
  );
  t.end();
});

t.test('the loaded binding opens, writes and reads a database', (t) => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)');
  const insert = db.prepare<[string], void>('INSERT INTO t (b) VALUES (?)');
  for (let i = 0; i < 100; i++) insert.run(`row ${i}`);
  t.equal(db.prepare('SELECT COUNT(*) FROM t').pluck().get(), 100);
  t.throws(() => db.exec('SELECT * FROM missing'), { code: 'SQLITE_ERROR' }, 'errors carry codes');
  db.close();
  t.end();
});
