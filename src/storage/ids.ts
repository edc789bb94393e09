/**
 * The ids of new rows. Every table keyed by `id INTEGER PRIMARY KEY AUTOINCREMENT` (ID_TABLES) is
 * shared by all realms, and each of its INSERT statements binds the new row's id from the Store's
 * RowIds:
 * - the single-process server binds NULL, and SQLite chooses the id as if the column were left
 *   out (the largest id ever used plus one: same id, same lastInsertRowid, same sqlite_sequence;
 *   checked by test/unit/row-ids.test.ts);
 * - a cluster node cannot leave it to SQLite: the owners of two realms would both choose the same
 *   "largest plus one" on their own copies. It installs an IdSource that hands out ids from blocks
 *   claimed for the realm being written (src/cluster/id-blocks.ts, docs/cluster.md "Ids").
 */
import type { DB } from './db.js';

/** The tables whose rows get an id (test/unit/row-ids.test.ts checks the list against the schema). */
export const ID_TABLES = [
  'alert_words',
  'attachments',
  'audit_log',
  'bot_services',
  'channel_folders',
  'custom_profile_fields',
  'direct_message_groups',
  'drafts',
  'email_change_requests',
  'image_attachments',
  'invitations',
  'linkifiers',
  'mail_outbox',
  'messages',
  'password_reset_requests',
  'push_device_tokens',
  'reactions',
  'realm_emoji',
  'realm_exports',
  'realm_playgrounds',
  'realms',
  'saved_snippets',
  'scheduled_messages',
  'streams',
  'submessages',
  'user_groups',
  'users',
] as const;

export type IdTable = (typeof ID_TABLES)[number];

export interface IdSource {
  /** The id of a new row of `table`; null: SQLite chooses it. May throw (a JsonableError). */
  nextId(table: IdTable): number | null;
}

/** A named-parameter INSERT's `@id`: the new row's id, or null (SQLite chooses). */
export type WithId = { id: number | null };

/** The Store's id source: SQLite chooses every id, unless a cluster node installed its own. */
export class RowIds implements IdSource {
  private source: IdSource | null = null;

  /** From now on `source` gives the ids (a cluster node, at its start). */
  install(source: IdSource): void {
    this.source = source;
  }

  nextId(table: IdTable): number | null {
    return this.source === null ? null : this.source.nextId(table);
  }
}

/**
 * The largest id any id table holds or ever gave (0 when none did): its rows, and SQLite's record
 * of the largest id each AUTOINCREMENT table handed out (`sqlite_sequence`), so that an id whose
 * row was deleted is not given again (a database a single process wrote, moved onto a cluster:
 * src/cluster/seed.ts).
 */
export function largestId(db: DB): number {
  const union = ID_TABLES.map((t) => `SELECT max(id) AS m FROM ${t}`).join(' UNION ALL ');
  const held = db.prepare<[], number | null>(`SELECT max(m) FROM (${union})`).pluck().get() ?? 0;
  const sequences = db
    .prepare<[], number>("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'")
    .pluck()
    .get();
  if (!sequences) return held;
  const given =
    db
      .prepare<unknown[], number | null>(
        `SELECT max(seq) FROM sqlite_sequence WHERE name IN (${ID_TABLES.map(() => '?').join(', ')})`,
      )
      .pluck()
      .get(...ID_TABLES) ?? 0;
  return Math.max(held, given);
}

/**
 * Cluster nodes only (src/cluster/id-blocks.ts): TEMP triggers (on this connection only; the
 * database file has no trace of them, like replication's) that abort any INSERT into an id table
 * whose new id `allowed` refuses. They run before the row is written, where an id left to SQLite
 * reads as -1: so an INSERT that did not take its id from the Store fails, loudly, instead of
 * getting an id another realm's owner may give too.
 */
export function guardIdTables(db: DB, allowed: (id: number) => boolean): void {
  db.function('cluster_id_allowed', { deterministic: false }, (id: unknown) =>
    typeof id === 'number' || typeof id === 'bigint' ? (allowed(Number(id)) ? 1 : 0) : 0,
  );
  for (const table of ID_TABLES) {
    db.exec(`
      DROP TRIGGER IF EXISTS temp.cluster_ids_${table};
      CREATE TEMP TRIGGER cluster_ids_${table} BEFORE INSERT ON main.${table}
      WHEN NOT cluster_id_allowed(NEW.id)
      BEGIN
        SELECT RAISE(ABORT, 'a new ${table} row has an id outside the blocks of the realm written');
      END;`);
  }
}
