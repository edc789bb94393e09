/**
 * Ids are never handed out twice. A table whose key is a plain `INTEGER PRIMARY KEY` gives a new
 * row the largest id in use plus one, so deleting the newest message (draft, channel, user group,
 * …) and creating another reused its id, and clients' caches, permalinks and anchors pointed at
 * the wrong object. `AUTOINCREMENT` keeps the largest id ever used (sqlite_sequence) instead.
 *
 * SQLite cannot add AUTOINCREMENT to a table, so every table keyed by `id INTEGER PRIMARY KEY` is
 * rebuilt: the same definition (as the schema holds it now, later columns included) with
 * AUTOINCREMENT, the rows copied with their ids (which seeds sqlite_sequence with the largest),
 * the old table dropped, the new one renamed, its indexes recreated. Foreign keys are off during
 * the rebuild (migrate() checks them all before committing). The tables are found in the schema,
 * not listed, so none is missed; FTS shadow tables are left alone. Ids deleted before this
 * migration ran cannot be known and are not protected.
 *
 * Tables created by later migrations declare `id INTEGER PRIMARY KEY AUTOINCREMENT` themselves.
 */
import type { DB } from '../db.js';

const PLAIN_ID_KEY = /\bid(\s+)INTEGER(\s+)PRIMARY(\s+)KEY\b(?!\s+AUTOINCREMENT)/i;

type SchemaRow = { type: string; name: string; tbl_name: string; sql: string | null };

export function rebuildWithAutoincrement(db: DB): string[] {
  const schema = db
    .prepare<[], SchemaRow>('SELECT type, name, tbl_name, sql FROM sqlite_master')
    .all();
  const virtual = schema
    .filter((r) => r.type === 'table' && /^CREATE\s+VIRTUAL\s+TABLE/i.test(r.sql ?? ''))
    .map((r) => r.name);
  const tables = schema.filter(
    (r) =>
      r.type === 'table' &&
      r.sql !== null &&
      /^CREATE\s+TABLE/i.test(r.sql) &&
      !r.name.startsWith('sqlite_') &&
      !virtual.some((v) => r.name.startsWith(`${v}_`)) &&
      PLAIN_ID_KEY.test(r.sql),
  );
  const legacy = db.pragma('legacy_alter_table', { simple: true }) as number;
  // Renaming must not rewrite other tables' references (they already name the final table).
  db.pragma('legacy_alter_table = ON');
  try {
    for (const table of tables) {
      const temp = `${table.name}__autoincrement`;
      const head = /^CREATE\s+TABLE\s+("[^"]+"|`[^`]+`|\[[^\]]+\]|\S+?)\s*\(/i.exec(table.sql!);
      if (!head) throw new Error(`cannot read the definition of ${table.name}`);
      const body = table.sql!.slice(head[0].length).replace(PLAIN_ID_KEY, '$& AUTOINCREMENT');
      db.exec(`CREATE TABLE "${temp}" (${body}`);
      db.exec(`INSERT INTO "${temp}" SELECT * FROM "${table.name}"`);
      db.exec(`DROP TABLE "${table.name}"`);
      db.exec(`ALTER TABLE "${temp}" RENAME TO "${table.name}"`);
      for (const dep of schema) {
        if (dep.tbl_name === table.name && dep.type !== 'table' && dep.sql !== null) {
          db.exec(dep.sql);
        }
      }
    }
  } finally {
    db.pragma(`legacy_alter_table = ${legacy ? 'ON' : 'OFF'}`);
  }
  return tables.map((t) => t.name);
}

export const m0014_autoincrement_ids = {
  name: '0014_autoincrement_ids',
  sql: '',
  foreignKeysOff: true,
  run: (db: DB): void => void rebuildWithAutoincrement(db),
};
