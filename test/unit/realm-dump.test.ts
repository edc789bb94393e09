/**
 * Every table of the schema is either carried by a realm export (REALM_TABLES) or listed with the
 * reason it is not (NOT_EXPORTED), never both (src/storage/realm-dump.ts): a migration that adds
 * a table must decide.
 */
import t from 'tap';
import { closeDatabase, openDatabase } from '../../src/storage/db.js';
import { NOT_EXPORTED, REALM_TABLES, schemaTables } from '../../src/storage/realm-dump.js';

t.test('each table of the schema is exported or says why not', (t) => {
  const db = openDatabase(t.testdir());
  t.teardown(() => closeDatabase(db));
  const exported = REALM_TABLES.map((x) => x.table);
  const left = Object.keys(NOT_EXPORTED);
  t.same(
    exported.filter((x) => left.includes(x)),
    [],
    'no table in both lists',
  );
  t.same(
    schemaTables(db).filter((x) => !exported.includes(x) && !left.includes(x)),
    [],
    'no table in neither',
  );
  t.same(
    [...exported, ...left].filter((x) => !schemaTables(db).includes(x)),
    [],
    'no list names a table the schema lacks',
  );
  t.end();
});
