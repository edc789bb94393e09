/**
 * A realm's rows, table by table, for realm export (src/admin/export-worker.ts reads them on a
 * connection of its own) and import (src/admin/realm-import.ts writes them back with new ids).
 * SQL stays here; what the rows mean (ids to renumber, private data to leave out) is the admin
 * modules' business.
 *
 * REALM_TABLES lists, in an order that respects foreign keys, every table that holds a realm's
 * data; NOT_EXPORTED lists the others, each with the reason. test/unit/realm-dump.test.ts checks
 * that every table of the schema is in one list or the other, so a migration that adds a table
 * must decide whether exports carry it.
 */
import type { DB } from './db.js';

export type Row = Record<string, unknown>;

/** A cell as text (rows come from JSON: strings, numbers or null). */
export function cellText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return '';
}

const inRealmUsers = 'user_id IN (SELECT id FROM users WHERE realm_id = ?)';
const inRealmStreams = 'stream_id IN (SELECT id FROM streams WHERE realm_id = ?)';
const inRealmMessages = 'message_id IN (SELECT id FROM messages WHERE realm_id = ?)';

/** Table → the WHERE clause selecting one realm's rows (one `?`: the realm id). */
export const REALM_TABLES: readonly { table: string; where: string; order: string }[] = [
  { table: 'realms', where: 'id = ?', order: 'id' },
  { table: 'users', where: 'realm_id = ?', order: 'id' },
  { table: 'user_groups', where: 'realm_id = ?', order: 'id' },
  {
    table: 'user_group_members',
    where: 'group_id IN (SELECT id FROM user_groups WHERE realm_id = ?)',
    order: 'group_id, user_id',
  },
  {
    table: 'user_group_subgroups',
    where: 'group_id IN (SELECT id FROM user_groups WHERE realm_id = ?)',
    order: 'group_id, subgroup_id',
  },
  { table: 'custom_profile_fields', where: 'realm_id = ?', order: 'id' },
  {
    table: 'custom_profile_field_values',
    where: 'field_id IN (SELECT id FROM custom_profile_fields WHERE realm_id = ?)',
    order: 'user_id, field_id',
  },
  { table: 'channel_folders', where: 'realm_id = ?', order: 'id' },
  { table: 'streams', where: 'realm_id = ?', order: 'id' },
  { table: 'subscriptions', where: inRealmStreams, order: 'user_id, stream_id' },
  { table: 'default_streams', where: 'realm_id = ?', order: 'stream_id' },
  { table: 'user_topics', where: inRealmStreams, order: 'user_id, stream_id, topic' },
  { table: 'direct_message_groups', where: 'realm_id = ?', order: 'id' },
  {
    table: 'direct_message_group_members',
    where: 'group_id IN (SELECT id FROM direct_message_groups WHERE realm_id = ?)',
    order: 'group_id, user_id',
  },
  { table: 'realm_emoji', where: 'realm_id = ?', order: 'id' },
  { table: 'messages', where: 'realm_id = ?', order: 'id' },
  { table: 'user_messages', where: inRealmMessages, order: 'message_id, user_id' },
  { table: 'reactions', where: inRealmMessages, order: 'id' },
  { table: 'submessages', where: inRealmMessages, order: 'id' },
  { table: 'attachments', where: 'realm_id = ?', order: 'id' },
  { table: 'image_attachments', where: 'realm_id = ?', order: 'id' },
  {
    table: 'attachment_messages',
    where: 'attachment_id IN (SELECT id FROM attachments WHERE realm_id = ?)',
    order: 'attachment_id, message_id',
  },
  { table: 'linkifiers', where: 'realm_id = ?', order: 'id' },
  { table: 'drafts', where: inRealmUsers, order: 'id' },
  { table: 'alert_words', where: 'realm_id = ?', order: 'id' },
  { table: 'scheduled_messages', where: 'realm_id = ?', order: 'id' },
  { table: 'user_presence', where: 'realm_id = ?', order: 'user_id' },
  { table: 'user_status', where: 'realm_id = ?', order: 'user_id' },
  { table: 'saved_snippets', where: 'realm_id = ?', order: 'id' },
  { table: 'realm_playgrounds', where: 'realm_id = ?', order: 'id' },
  { table: 'realm_user_defaults', where: 'realm_id = ?', order: 'realm_id' },
  { table: 'muted_users', where: inRealmUsers, order: 'user_id, muted_user_id' },
  { table: 'bot_profiles', where: inRealmUsers, order: 'user_id' },
  { table: 'bot_services', where: inRealmUsers, order: 'id' },
  { table: 'bot_config', where: inRealmUsers, order: 'user_id, key' },
  { table: 'bot_storage', where: inRealmUsers, order: 'user_id, key' },
];

/** Tables an export leaves out, and why. */
export const NOT_EXPORTED: Readonly<Record<string, string>> = {
  messages_fts: 'the search index: rebuilt from the messages on import',
  invitations: 'pending invitations carry secrets valid on this server only',
  email_change_requests: 'pending confirmations carry secrets valid on this server only',
  push_device_tokens: 'devices register again with the new server',
  realm_exports: 'the export records of this server',
  mail_outbox: "mail waiting for this server's SMTP server",
  outgoing_webhook_calls: 'outgoing-webhook calls waiting to be made by this server',
  missed_message_emails: "missed-message mail waiting for its batch, on this server's schedule",
  password_reset_requests: 'pending reset links carry secrets valid on this server only',
  sessions: 'browser login sessions are valid on this server only',
  sent_local_ids: "recent sends' local ids, kept an hour to answer a client's retry",
  audit_log: 'what was done on this server; the importing server records the import',
  unread_messages: "the unread index, kept by triggers from user_messages' flags on import",
  unread_watermark: 'how far the unread index reaches on this copy (src/storage/unread.ts)',
};

/** Every table of the schema (FTS shadow tables and SQLite's own left out). */
export function schemaTables(db: DB): string[] {
  const rows = db
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all();
  return rows.map((r) => r.name).filter((n) => !/^messages_fts_/.test(n));
}

/** Reads each table's rows of one realm, inside one read transaction (a consistent snapshot). */
export function readRealmTables(
  db: DB,
  realmId: number,
  each: (table: string, rows: Row[]) => void,
): void {
  db.transaction(() => {
    for (const t of REALM_TABLES) {
      const stmt = db.prepare<[number], Row>(
        `SELECT * FROM ${t.table} WHERE ${t.where} ORDER BY ${t.order}`,
      );
      each(t.table, stmt.all(realmId));
    }
  })();
}

/** The highest id of each table with an INTEGER PRIMARY KEY `id` (0 when empty). */
export function maxIds(db: DB): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of REALM_TABLES) {
    const cols = db
      .prepare<[], { name: string; pk: number }>(`PRAGMA table_info(${t.table})`)
      .all();
    if (!cols.some((c) => c.name === 'id' && c.pk === 1)) continue;
    out[t.table] =
      (db.prepare<[], { m: number | null }>(`SELECT max(id) AS m FROM ${t.table}`).get()?.m ?? 0) ||
      0;
  }
  return out;
}

/**
 * Inserting rows for an import: one prepared INSERT per table (made on first use), with the
 * columns the row has. The caller runs it inside one transaction.
 */
export function rowInserter(db: DB): {
  insert(table: string, row: Row): void;
  indexMessage(id: number, topic: string, text: string): void;
} {
  const known = new Set(REALM_TABLES.map((t) => t.table));
  const columns = new Map<string, Set<string>>();
  const stmts = new Map<string, { cols: string[]; stmt: ReturnType<DB['prepare']> }>();
  const fts = db.prepare('INSERT INTO messages_fts (rowid, topic, body) VALUES (?, ?, ?)');
  return {
    insert(table, row) {
      if (!known.has(table)) throw new Error(`not a realm table: ${table}`);
      let tableCols = columns.get(table);
      if (!tableCols) {
        const names = db.prepare<[], { name: string }>(`PRAGMA table_info(${table})`).all();
        tableCols = new Set(names.map((c) => c.name));
        columns.set(table, tableCols);
      }
      // The row's columns this schema has (an archive from an older schema lacks newer ones,
      // which then take their defaults).
      const cols = Object.keys(row).filter((c) => tableCols.has(c));
      const key = `${table}(${cols.join(',')})`;
      let s = stmts.get(key);
      if (!s) {
        const stmt = db.prepare(
          `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`,
        );
        s = { cols, stmt };
        stmts.set(key, s);
      }
      const values: Row = {};
      for (const c of s.cols) values[c] = row[c];
      s.stmt.run(values);
    },
    indexMessage(id, topic, text) {
      fts.run(id, topic, text);
    },
  };
}
