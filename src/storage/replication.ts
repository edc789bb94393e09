/**
 * Row-level change capture and replay, for the cluster deployment (src/cluster, docs/cluster.md).
 * Not used by the single-process server.
 *
 * Capture: TEMP triggers (they live only on this connection, and the database file is unchanged)
 * on every table of the schema record each row written by the realm actor's transaction into a
 * temp table: an upsert with the row's every column, or a delete with its primary key. The temp
 * table takes part in the transaction and its savepoints, so a refused command's rows vanish with
 * it. `seal()`, run inside the transaction just before COMMIT, takes the rows out. The full-text
 * index (a virtual table, which cannot carry triggers) is captured by wrapping the store's two
 * indexing methods.
 *
 * Replay: `apply()` writes the captured rows, in their original order, with UPSERTs and DELETEs
 * by primary key, inside one transaction that also records the log position applied, so a node
 * applies each log entry exactly once, also across a crash.
 *
 * Undo: the same triggers record each row's state before the write (a delete of a row inserted,
 * the old row of one updated or deleted). An owner keeps a batch's undo until the log holds the
 * batch; a batch the log never takes (another owner's entry took its place) is undone with
 * `undo()`, so the copy holds the log's state again without starting over.
 */
import type Database from 'better-sqlite3';
import { htmlToText } from '../lib/search.js';
import type { DB } from './db.js';
import type { Store } from './store.js';

/**
 * One captured row: an upsert (every column, in table order) or a delete (primary key values,
 * then the table's DELETE_EXTRA columns, if any).
 */
export type RowChange = [table: string, op: 'u' | 'd', values: unknown[]];

/**
 * Columns a delete carries beyond the key, for what every node must do besides deleting the row:
 * an upload's `path_id`, so each node can remove its own copy of the file (goneFiles).
 */
const DELETE_EXTRA: Readonly<Record<string, readonly string[]>> = { attachments: ['path_id'] };

/**
 * Files whose copies a node may no longer need once it has applied some changes: the uploads whose
 * rows they delete (by path id), and the realms whose row they write, each of which may no longer
 * name the uploaded icon it named (by realm id; the row says which icon it names now).
 */
export type GoneFiles = { uploads: string[]; realmIcons: number[] };

/** What goneFiles finds in these changes (see GoneFiles); empty lists when nothing. */
export function goneFiles(changes: readonly RowChange[]): GoneFiles {
  const out: GoneFiles = { uploads: [], realmIcons: [] };
  for (const [table, op, values] of changes) {
    if (table === 'attachments' && op === 'd' && typeof values[1] === 'string')
      out.uploads.push(values[1]);
    // An upsert carries every column in table order: a realm's `id` first.
    else if (table === 'realms' && op === 'u' && typeof values[0] === 'number')
      if (!out.realmIcons.includes(values[0])) out.realmIcons.push(values[0]);
  }
  return out;
}

type TableShape = {
  name: string;
  columns: string[];
  key: string[];
  upsert: Stmt;
  remove: Stmt;
};

type Stmt = Database.Statement<unknown[]>;

const FTS = 'messages_fts';

/** Tables each copy derives for itself from others (migration 0030). */
const LOCAL_TABLES = ['unread_messages', 'unread_watermark'];

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

function tableShapes(db: DB): Map<string, TableShape> {
  const names = db
    .prepare<[], { name: string }>(
      `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'
       AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '${FTS}_%' ORDER BY name`,
    )
    .all()
    .map((r) => r.name);
  const shapes = new Map<string, TableShape>();
  for (const name of names) {
    const info = db
      .prepare<[string], { name: string; pk: number }>('SELECT name, pk FROM pragma_table_info(?)')
      .all(name);
    const withRowid = !/WITHOUT\s+ROWID/i.test(
      db
        .prepare<[string], string>('SELECT sql FROM sqlite_schema WHERE name = ?')
        .pluck()
        .get(name)!,
    );
    let columns = info.map((c) => c.name);
    let key = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    if (key.length === 0 && withRowid) {
      key = ['rowid'];
      columns = ['rowid', ...columns];
    }
    const nonKey = columns.filter((c) => !key.includes(c));
    const upsert = db.prepare<unknown[]>(
      `INSERT INTO ${q(name)} (${columns.map(q).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
       ON CONFLICT (${key.map(q).join(', ')}) DO ${
         nonKey.length === 0
           ? 'NOTHING'
           : `UPDATE SET ${nonKey.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`
       }`,
    );
    const remove = db.prepare<unknown[]>(
      `DELETE FROM ${q(name)} WHERE ${key.map((c) => `${q(c)} = ?`).join(' AND ')}`,
    );
    shapes.set(name, { name, columns, key, upsert, remove });
  }
  return shapes;
}

/**
 * Whether a database is (or was) a cluster node's copy: written by the log and its realms' owners
 * only, never by a process outside the cluster (its rows would reach no other node). Its
 * `cluster_state` is made when a node first opens it.
 */
export function isClusterCopy(db: DB): boolean {
  return (
    db
      .prepare<[], number>("SELECT count(*) FROM sqlite_schema WHERE name = 'cluster_state'")
      .pluck()
      .get() === 1
  );
}

/**
 * Whether this data directory's database holds commits of its own that the log never
 * acknowledged (the node died between its COMMIT and the append's ack, or was deposed): such a
 * copy has diverged and is rebuilt from the log.
 */
export function hasUnackedCommits(db: DB): boolean {
  if (!isClusterCopy(db)) return false;
  const n = db.prepare<[], number>('SELECT unacked FROM cluster_state WHERE id = 1').pluck().get();
  return (n ?? 0) > 0;
}

/** The log position a database holds (0 if it never joined a cluster). */
export function appliedPosition(db: DB): number {
  if (!isClusterCopy(db)) return 0;
  return (
    db.prepare<[], number>('SELECT applied FROM cluster_state WHERE id = 1').pluck().get() ?? 0
  );
}

const CLUSTER_STATE = `CREATE TABLE IF NOT EXISTS cluster_state (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  applied INTEGER NOT NULL,
  unacked INTEGER NOT NULL
)`;

/**
 * Records a database as holding the log up to `seq` and nothing awaiting the log's ack: the
 * database a cluster was seeded from, at its seed entry (src/cluster/seed.ts).
 */
export function recordSeeded(db: DB, seq: number): void {
  db.exec(CLUSTER_STATE);
  db.prepare(
    `INSERT INTO cluster_state (id, applied, unacked) VALUES (1, ?, 0)
     ON CONFLICT (id) DO UPDATE SET applied = excluded.applied, unacked = 0`,
  ).run(seq);
}

export class Replication {
  private readonly shapes: Map<string, TableShape>;
  private readonly take: Stmt;
  private readonly clear: Stmt;
  private readonly takeUndo: Stmt;
  private readonly clearUndo: Stmt;
  private readonly messageText: Stmt;
  private readonly record: Stmt;
  private readonly ftsDelete: Stmt;
  private readonly ftsInsert: Stmt;
  private readonly readState: Stmt;
  private readonly writeApplied: Stmt;
  private readonly writeUnacked: Stmt;
  /** A message's channel as this copy holds it (before an entry's row replaces it). */
  private readonly channelOf: Stmt;
  /** Where `id` and `stream_id` are in a `messages` row of an entry. */
  private readonly messageId: number;
  private readonly messageChannel: number;

  private readonly db: DB;
  /** Own entries seen in the log whose bookkeeping is not written yet (markAppliedLater). */
  private pending: { seq: number; acked: number } | null = null;

  constructor(private readonly store: Store) {
    const db = store.db;
    this.db = db;
    db.exec(CLUSTER_STATE);
    db.exec('INSERT OR IGNORE INTO cluster_state (id, applied, unacked) VALUES (1, 0, 0)');
    this.shapes = tableShapes(db);
    this.shapes.delete('cluster_state');
    // Each copy keeps its own unread index from the user_messages rows it writes (its triggers,
    // src/storage/unread.ts): neither logged nor replayed.
    for (const t of LOCAL_TABLES) this.shapes.delete(t);
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS cluster_changes (
      id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, op TEXT NOT NULL, v TEXT NOT NULL
    )`);
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS cluster_undo (
      id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, op TEXT NOT NULL, v TEXT NOT NULL
    )`);
    for (const s of this.shapes.values()) this.installTriggers(s);
    this.take = db.prepare<unknown[]>('SELECT tbl, op, v FROM temp.cluster_changes ORDER BY id');
    this.clear = db.prepare<unknown[]>('DELETE FROM temp.cluster_changes');
    this.takeUndo = db.prepare<unknown[]>('SELECT tbl, op, v FROM temp.cluster_undo ORDER BY id');
    this.clearUndo = db.prepare<unknown[]>('DELETE FROM temp.cluster_undo');
    this.messageText = db.prepare<unknown[]>(
      'SELECT topic, rendered_content FROM messages WHERE id = ?',
    );
    this.record = db.prepare<unknown[]>(
      'INSERT INTO temp.cluster_changes (tbl, op, v) VALUES (?, ?, ?)',
    );
    this.ftsDelete = db.prepare<unknown[]>(`DELETE FROM ${FTS} WHERE rowid = ?`);
    this.ftsInsert = db.prepare<unknown[]>(
      `INSERT INTO ${FTS} (rowid, topic, body) VALUES (?, ?, ?)`,
    );
    this.readState = db.prepare<unknown[]>(
      'SELECT applied, unacked FROM cluster_state WHERE id = 1',
    );
    this.writeApplied = db.prepare<unknown[]>('UPDATE cluster_state SET applied = ? WHERE id = 1');
    this.writeUnacked = db.prepare<unknown[]>(
      'UPDATE cluster_state SET unacked = unacked + ? WHERE id = 1',
    );
    this.channelOf = db.prepare<unknown[]>('SELECT stream_id FROM messages WHERE id = ?').pluck();
    const messageColumns = this.shapes.get('messages')?.columns ?? [];
    this.messageId = messageColumns.indexOf('id');
    this.messageChannel = messageColumns.indexOf('stream_id');
    this.wrapSearchIndex();
  }

  private installTriggers(s: TableShape): void {
    const t = q(s.name);
    const row = (ref: 'NEW' | 'OLD', cols: string[]) =>
      `json_array(${cols.map((c) => `${ref}.${q(c)}`).join(', ')})`;
    const lit = `'${s.name.replace(/'/g, "''")}'`;
    const ins = (op: string, expr: string) =>
      `INSERT INTO temp.cluster_changes (tbl, op, v) VALUES (${lit}, '${op}', ${expr});`;
    // The row's state before the write, for undo (applied in reverse order).
    const undo = (op: string, expr: string) =>
      `INSERT INTO temp.cluster_undo (tbl, op, v) VALUES (${lit}, '${op}', ${expr});`;
    const keyChanged = s.key.map((c) => `OLD.${q(c)} IS NOT NEW.${q(c)}`).join(' OR ');
    const base = `cluster_${s.name}`;
    this.db.exec(`
      DROP TRIGGER IF EXISTS temp.${q(`${base}_i`)};
      DROP TRIGGER IF EXISTS temp.${q(`${base}_u`)};
      DROP TRIGGER IF EXISTS temp.${q(`${base}_d`)};
      CREATE TEMP TRIGGER ${q(`${base}_i`)} AFTER INSERT ON main.${t}
      BEGIN
        ${ins('u', row('NEW', s.columns))}
        ${undo('d', row('NEW', s.key))}
      END;
      CREATE TEMP TRIGGER ${q(`${base}_u`)} AFTER UPDATE ON main.${t}
      BEGIN
        INSERT INTO temp.cluster_changes (tbl, op, v)
          SELECT ${lit}, 'd', ${row('OLD', s.key)} WHERE ${keyChanged};
        ${ins('u', row('NEW', s.columns))}
        ${undo('u', row('OLD', s.columns))}
        INSERT INTO temp.cluster_undo (tbl, op, v)
          SELECT ${lit}, 'd', ${row('NEW', s.key)} WHERE ${keyChanged};
      END;
      CREATE TEMP TRIGGER ${q(`${base}_d`)} AFTER DELETE ON main.${t}
      BEGIN
        ${ins('d', row('OLD', [...s.key, ...(DELETE_EXTRA[s.name] ?? [])]))}
        ${undo('u', row('OLD', s.columns))}
      END;`);
  }

  /** The full-text index cannot carry triggers: its two writers also record what they wrote. */
  private wrapSearchIndex(): void {
    const messages = this.store.messages;
    const index = messages.index.bind(messages);
    messages.index = (id, topic, body) => {
      index(id, topic, body);
      this.record.run(FTS, 'u', JSON.stringify([id, topic, body]));
    };
    const edits = this.store.messageEdits;
    const reindex = edits.reindex.bind(edits);
    edits.reindex = (id, topic, body) => {
      reindex(id, topic, body);
      this.record.run(FTS, 'u', JSON.stringify([id, topic, body]));
    };
  }

  /** Inside the transaction, just before COMMIT: the rows it wrote (and forgets them). */
  seal(): RowChange[] {
    const rows = this.take.all() as { tbl: string; op: 'u' | 'd'; v: string }[];
    if (rows.length > 0) this.clear.run();
    this.clearUndo.run();
    return rows.map((r) => [r.tbl, r.op, JSON.parse(r.v) as unknown[]]);
  }

  /**
   * seal, with what undoes the transaction's rows (their state before it, in the order written:
   * `undo` applies them backwards).
   */
  sealWithUndo(): { changes: RowChange[]; undo: RowChange[] } {
    const rows = this.take.all() as { tbl: string; op: 'u' | 'd'; v: string }[];
    if (rows.length > 0) this.clear.run();
    const before = this.takeUndo.all() as { tbl: string; op: 'u' | 'd'; v: string }[];
    if (before.length > 0) this.clearUndo.run();
    const parse = (r: { tbl: string; op: 'u' | 'd'; v: string }): RowChange => [
      r.tbl,
      r.op,
      JSON.parse(r.v) as unknown[],
    ];
    return { changes: rows.map(parse), undo: before.map(parse) };
  }

  /** Drops captured rows of a transaction that did not go through seal (first boot). */
  discard(): void {
    this.clear.run();
    this.clearUndo.run();
  }

  /**
   * Takes back this node's own commits that the log did not take, in one transaction: `batches`
   * in the order they were committed, each with the undo and the changes `sealWithUndo` gave. The
   * rows go back to their state before the first of them (applied from the last written to the
   * first), the full-text index of their messages is made again from the rows, and they no longer
   * count as unacknowledged. Returns the tables touched and the rows as they are now (for the
   * read model).
   */
  undo(batches: readonly { undo: readonly RowChange[]; changes: readonly RowChange[] }[]): {
    touched: Set<string>;
    restored: RowChange[];
  } {
    const touched = new Set<string>();
    const restored: RowChange[] = [];
    const messages = new Set<unknown>();
    let counted = 0;
    const pending = this.pending;
    this.store.transaction(() => {
      if (pending !== null) this.writePending(pending);
      this.db.pragma('defer_foreign_keys = ON');
      for (let b = batches.length - 1; b >= 0; b--) {
        const { undo, changes } = batches[b]!;
        if (changes.length > 0) counted++;
        for (const [table, op, values] of changes)
          if (table === FTS || (table === 'messages' && op === 'd')) messages.add(values[0]);
          else if (table === 'messages') messages.add(values[this.messageId]);
        for (let i = undo.length - 1; i >= 0; i--) {
          const change = undo[i]!;
          const [table, op, values] = change;
          const shape = this.shapes.get(table);
          if (!shape) continue;
          touched.add(table);
          restored.push(change);
          if (op === 'u') shape.upsert.run(...values);
          else shape.remove.run(...values.slice(0, shape.key.length));
        }
      }
      for (const id of messages) {
        this.ftsDelete.run(id);
        const m = this.messageText.get(id) as
          { topic: string; rendered_content: string } | undefined;
        if (m) this.ftsInsert.run(id, m.topic, htmlToText(m.rendered_content));
      }
      if (counted > 0) this.writeUnacked.run(-counted);
      this.clear.run();
      this.clearUndo.run();
    });
    this.pending = null;
    if (touched.has('messages')) touched.add(FTS);
    if (touched.has('user_messages')) this.store.messages.forgetReceivedMaxima();
    if (touched.has('messages')) this.store.topics.forgetActivity();
    return { touched, restored };
  }

  /** This node's position in the log, and how many of its own commits await the log's ack. */
  state(): { applied: number; unacked: number } {
    const s = this.readState.get() as { applied: number; unacked: number };
    const p = this.pending;
    return p === null ? s : { applied: Math.max(s.applied, p.seq), unacked: s.unacked - p.acked };
  }

  /** Counts a commit of this node's own that the log has not acknowledged yet (in its transaction). */
  noteUnacked(delta: number): void {
    this.writeUnacked.run(delta);
  }

  /**
   * Writes a consistent copy of the database to `file` (VACUUM INTO) and returns the log position
   * it holds — or null while this node has commits of its own the log has not acknowledged (a copy
   * must hold nothing the log may refuse).
   */
  snapshotTo(file: string): number | null {
    if (!this.db.inTransaction) this.flushApplied();
    const { applied, unacked } = this.state();
    if (unacked > 0 || this.db.inTransaction) return null;
    this.db.prepare('VACUUM INTO ?').run(file);
    return applied;
  }

  /** Records a log position as applied (this node's own entries, already in its database). */
  markApplied(seq: number, ackedOwn: boolean): void {
    this.markAppliedLater(seq, ackedOwn);
    this.flushApplied();
  }

  /**
   * markApplied, recorded at the next `flushApplied` (or with the next entry applied, or before a
   * snapshot): an owner's own entry comes back from the log a moment before the append's ack, and
   * a write transaction for its bookkeeping there would delay the client's answer. Until then
   * `state()` counts it; if the process dies first, the copy's position is behind (the entries are
   * applied again: upserts by key, in order) and its unacked count too high (the copy is rebuilt
   * from the log at its next start, as after a death between a COMMIT and its ack).
   */
  markAppliedLater(seq: number, ackedOwn: boolean): void {
    const p = (this.pending ??= { seq, acked: 0 });
    p.seq = Math.max(p.seq, seq);
    if (ackedOwn) p.acked++;
  }

  /** Writes what markAppliedLater deferred, if anything, in a transaction of its own. */
  flushApplied(): void {
    const p = this.pending;
    if (p === null) return;
    this.store.transaction(() => this.writePending(p));
    this.pending = null;
  }

  private writePending(p: { seq: number; acked: number }): void {
    this.writeApplied.run(p.seq);
    if (p.acked !== 0) this.writeUnacked.run(-p.acked);
  }

  /**
   * Applies another node's log entry: its rows, in order, and the log position, in one
   * transaction. Returns the tables it touched.
   */
  apply(seq: number, changes: readonly RowChange[]): Set<string> {
    const touched = new Set<string>();
    // Channel activity (first message, newest date) to forget: a new message's or an edited
    // one's channel, as a local send does; everything after a move or a deletion, as local ones.
    const channels = new Set<number | null>();
    let everyChannel = false;
    const pending = this.pending;
    this.store.transaction(() => {
      if (pending !== null) this.writePending(pending);
      this.db.pragma('defer_foreign_keys = ON');
      for (const [table, op, values] of changes) {
        touched.add(table);
        if (table === 'messages' && !everyChannel) {
          const channel = values[this.messageChannel] as number | null | undefined;
          const before = this.channelOf.get(values[this.messageId]) as number | null | undefined;
          if (op !== 'u' || channel === undefined || (before !== undefined && before !== channel))
            everyChannel = true;
          else channels.add(channel);
        }
        if (table === FTS) {
          this.ftsDelete.run(values[0]);
          this.ftsInsert.run(...values);
          continue;
        }
        const shape = this.shapes.get(table);
        if (!shape) throw new Error(`log entry ${seq} names an unknown table ${table}`);
        if (op === 'u') shape.upsert.run(...values);
        else {
          shape.remove.run(...values.slice(0, shape.key.length));
          if (table === 'messages') this.ftsDelete.run(values[0]);
        }
      }
      this.writeApplied.run(seq);
      // Our own capture triggers saw the replayed rows too: they are not ours to append.
      this.clear.run();
      this.clearUndo.run();
    });
    this.pending = null;
    if (touched.has('user_messages')) this.store.messages.forgetReceivedMaxima();
    if (everyChannel) this.store.topics.forgetActivity();
    else for (const c of channels) this.store.topics.forgetChannelActivity(c);
    return touched;
  }
}
