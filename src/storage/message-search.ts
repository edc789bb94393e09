/**
 * Narrow queries (GET /messages, flags by narrow): SQL built from a typed description of the
 * narrow (MessageQuery), never from client text. Every value is a bound parameter; the SQL text
 * depends only on the shape of the query (which conditions, negated or not, which range), so a
 * bounded cache of prepared statements keyed by that text serves every request.
 *
 * Two bases, as the reference's (lib/narrow.py get_base_query_for_search):
 * - `user_messages` (includeHistory false): only messages the user received, with their flags.
 * - `messages` (includeHistory true): every message of the realm that the conditions select, with
 *   the user's flags where they have a row. The caller must only choose this when a condition
 *   restricts the result to channels whose whole history the user may read.
 *
 * Conditions never add rows. A condition is SQL that is true, false or NULL (NULL counts as
 * false); a negated condition is NOT COALESCE(condition, 0), so a NULL (a direct message has no
 * channel) counts as "does not match" before negation.
 */
import type { DB } from './db.js';
import type { ListedMessageRow } from './messages.js';
import type { UnreadStatements } from './unread.js';

export type MessageCondition = { negated: boolean } & (
  | { kind: 'channel'; id: number }
  | { kind: 'channels'; ids: readonly number[] }
  | { kind: 'topic'; topic: string }
  | { kind: 'sender'; id: number }
  | { kind: 'id'; id: number }
  /** Any of `mask`'s bits set in the user's flags (`set`), or none of them (`!set`). */
  | { kind: 'flags'; mask: number; set: boolean }
  | { kind: 'dm_group'; id: number }
  /** Direct conversations of the user that include `userId` (`groupsOnly`: three people or more). */
  | { kind: 'dm_including'; userId: number; groupsOnly: boolean }
  | { kind: 'has'; what: 'attachment' | 'image' | 'link' | 'reaction' }
  | { kind: 'resolved' }
  | { kind: 'followed' }
  /** In a muted topic, or (`channelLevel`) a muted channel without an unmuted/followed topic. */
  | { kind: 'muted'; channelLevel: boolean }
  | { kind: 'search'; fts: string }
  | { kind: 'nothing' }
);

export type MessageQuery = {
  userId: number;
  realmId: number;
  includeHistory: boolean;
  conditions: readonly MessageCondition[];
};

export type MessageRange =
  | { dir: 'before'; anchor: number; limit: number }
  | { dir: 'after'; anchor: number; limit: number }
  | { dir: 'ids'; ids: readonly number[] };

type Fragment = { sql: string; params: unknown[] };

const RESOLVED_PREFIX = '✔ ';

/** flagIndex's answer for unread messages: the unread index (./unread.ts), not an index name. */
const UNREAD = 'unread';

function positive(c: MessageCondition, userId: number): Fragment {
  switch (c.kind) {
    case 'channel':
      return { sql: 'm.stream_id = ?', params: [c.id] };
    case 'channels':
      return {
        sql: 'm.stream_id IN (SELECT value FROM json_each(?))',
        params: [JSON.stringify(c.ids)],
      };
    case 'topic':
      return { sql: 'm.stream_id IS NOT NULL AND m.topic = ? COLLATE NOCASE', params: [c.topic] };
    case 'sender':
      return { sql: 'm.sender_id = ?', params: [c.id] };
    case 'id':
      return { sql: 'm.id = ?', params: [c.id] };
    case 'flags':
      // Literal masks: `(um.flags & 1) = 0` is the unread partial index's own expression.
      return {
        sql: `(um.flags & ${c.mask | 0}) ${c.set ? '<>' : '='} 0`,
        params: [],
      };
    case 'dm_group':
      return { sql: 'm.dm_group_id = ?', params: [c.id] };
    case 'dm_including':
      return {
        sql: `m.dm_group_id IN (SELECT a.group_id FROM direct_message_group_members a
                JOIN direct_message_group_members b ON b.group_id = a.group_id
                ${c.groupsOnly ? 'JOIN direct_message_groups g ON g.id = a.group_id AND g.size > 2' : ''}
                WHERE a.user_id = ? AND b.user_id = ?)`,
        params: [userId, c.userId],
      };
    case 'has':
      if (c.what === 'reaction') {
        return { sql: 'EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)', params: [] };
      }
      return { sql: `m.has_${c.what} = 1`, params: [] };
    case 'resolved':
      return {
        sql: 'm.stream_id IS NOT NULL AND substr(m.topic, 1, 2) = ?',
        params: [RESOLVED_PREFIX],
      };
    case 'followed':
      return {
        sql: `m.stream_id IS NOT NULL AND EXISTS (SELECT 1 FROM user_topics ut
                WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic = m.topic
                AND ut.visibility_policy = 3)`,
        params: [userId],
      };
    case 'muted': {
      const policy = `COALESCE((SELECT ut.visibility_policy FROM user_topics ut
          WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic = m.topic), 0)`;
      const channelMuted = c.channelLevel
        ? `EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = ? AND s.stream_id = m.stream_id
             AND s.is_muted = 1)`
        : '0';
      return {
        sql: `m.stream_id IS NOT NULL AND (CASE ${policy} WHEN 1 THEN 1 WHEN 2 THEN 0 WHEN 3 THEN 0
                ELSE ${channelMuted} END)`,
        params: c.channelLevel ? [userId, userId] : [userId],
      };
    }
    case 'search':
      return {
        sql: 'm.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)',
        params: [c.fts],
      };
    case 'nothing':
      return { sql: '0', params: [] };
  }
}

function condition(c: MessageCondition, userId: number): Fragment {
  const p = positive(c, userId);
  return c.negated ? { sql: `NOT COALESCE((${p.sql}), 0)`, params: p.params } : p;
}

/**
 * Whether a query can match nothing (a conversation that does not exist yet). It is answered
 * without SQLite: `AND 0` beside `INDEXED BY` makes SQLite refuse the statement ("no query
 * solution"), as the constant condition leaves the named index nothing to do.
 */
function matchesNothing(q: MessageQuery): boolean {
  return q.conditions.some((c) => c.kind === 'nothing' && !c.negated);
}

type RawRow = unknown[];

/** The columns of a listing (ListedMessageRow), in the order ListedRow reads them. */
const LISTED_COLUMNS =
  'm.id, m.sender_id, m.stream_id, m.dm_group_id, m.topic, m.content, m.rendered_content, ' +
  'm.date_sent, m.last_edit_time, m.last_moved_time, m.edit_history, m.sending_client';

/**
 * A row of LISTED_COLUMNS (as SQLite gives it, or as ListedRows keeps it) and the reader's flags,
 * read through the fields callers know: an object of two fields over the values, not a copy of
 * them (a 100-message fetch made 100 such copies, ~12 KB of its heap).
 */
class ListedRow implements ListedMessageRow {
  constructor(
    private readonly r: RawRow,
    readonly flags: number | null,
  ) {}
  get id(): number {
    return this.r[0] as number;
  }
  get sender_id(): number {
    return this.r[1] as number;
  }
  get stream_id(): number | null {
    return this.r[2] as number | null;
  }
  get dm_group_id(): number | null {
    return this.r[3] as number | null;
  }
  get topic(): string {
    return this.r[4] as string;
  }
  get content(): string {
    return this.r[5] as string;
  }
  get rendered_content(): string {
    return this.r[6] as string;
  }
  get date_sent(): number {
    return this.r[7] as number;
  }
  get last_edit_time(): number | null {
    return this.r[8] as number | null;
  }
  get last_moved_time(): number | null {
    return this.r[9] as number | null;
  }
  get edit_history(): string | null {
    return this.r[10] as string | null;
  }
  get sending_client(): string {
    return this.r[11] as string;
  }
}

/**
 * The shown columns of the messages listed lately, by id, so that a listing asks SQLite only for
 * its ids and flags and reads the columns of the messages it saw before from here: a message's
 * columns are the same for every reader, only the flags are the reader's (the reference keeps its
 * message dictionaries in a cache for the same reason: zerver/lib/message_cache.py). Clients
 * fetch the newest messages of their narrows over and over (every start, every narrow they open);
 * the newest 100 of a channel read whole from SQLite cost ~2.3 times their ids and flags.
 *
 * Correct by construction rather than by each writer's care: temporary triggers on this
 * connection forget a row on every UPDATE or DELETE of `messages`, whoever runs it (an edit, a
 * move, a deletion, the cluster's replay and undo, an import, a test's own SQL), inside the
 * transaction that writes it; and a row is kept only when no transaction is open, so what a
 * transaction wrote is never kept before it commits (nor after it rolls back). Bounded by rows
 * and by the length of their text, the oldest kept given up first.
 */
export class ListedRows {
  private readonly rows = new Map<number, RawRow>();
  private chars = 0;
  /** The ids in the order kept (giveUpOldest). */
  private order: MapIterator<number> | null = null;

  constructor(
    readonly maxRows: number,
    readonly maxChars: number,
  ) {}

  get size(): number {
    return this.rows.size;
  }

  get(id: number): RawRow | undefined {
    return this.rows.get(id);
  }

  /** Keeps `row` (LISTED_COLUMNS' values), giving up the oldest kept beyond the bounds. */
  keep(row: RawRow): void {
    const id = row[0] as number;
    this.forget(id);
    const chars = rowChars(row);
    if (chars > this.maxChars) return;
    this.rows.set(id, row);
    this.chars += chars;
    while (this.rows.size > this.maxRows || this.chars > this.maxChars) {
      this.order = giveUpOldest(this.rows, this.order, (id) => this.forget(id));
    }
  }

  forget(id: number): void {
    const row = this.rows.get(id);
    if (row === undefined) return;
    this.rows.delete(id);
    this.chars -= rowChars(row);
  }

  clear(): void {
    this.rows.clear();
    this.chars = 0;
    this.order = null;
  }
}

/**
 * Gives up `map`'s oldest entry (by `forget`), found by `order`, an iterator of its keys read on
 * from the entry given up last: every key before it was given up (a key set again goes last), so
 * its next is the oldest. Returns the iterator for the next time. `map.keys().next()` each time
 * read from the start of V8's table over the hole of every entry deleted since the table was last
 * rebuilt: with the listed rows past their bound, ~850 µs more per listing of 100 rows not kept
 * (docs/benchmarks.md "Listed messages' columns kept").
 */
function giveUpOldest<K>(
  map: Map<K, unknown>,
  order: MapIterator<K> | null,
  forget: (key: K) => void,
): MapIterator<K> {
  let next = order?.next();
  if (next === undefined || next.done === true) {
    order = map.keys();
    next = order.next();
  }
  forget(next.value!);
  return order!;
}

/** A row's text, counted in characters, and a little for the row itself. */
function rowChars(row: RawRow): number {
  let n = 64;
  for (const v of row) if (typeof v === 'string') n += v.length;
  return n;
}

/** Rows listed rows keep (LISTED_ROWS_MAX) and the length of their text (characters). */
export const LISTED_ROWS_MAX = 20_000;
export const LISTED_ROWS_MAX_CHARS = 16 * 1024 * 1024;

let forgetters = 0;

/**
 * Makes `db` forget a message's row in `cache` whenever the row is updated or deleted: temporary
 * triggers (on this connection only; the database file is unchanged) calling a function of ours.
 */
function forgetOnWrite(db: DB, cache: ListedRows): void {
  const n = ++forgetters;
  const fn = `confab_forget_listed_${n}`;
  db.function(fn, { deterministic: false }, (id: unknown) => {
    if (typeof id === 'number') cache.forget(id);
    else if (typeof id === 'bigint') cache.forget(Number(id));
    return null;
  });
  db.exec(`CREATE TEMP TRIGGER confab_listed_update_${n} AFTER UPDATE ON main.messages
             BEGIN SELECT ${fn}(OLD.id), ${fn}(NEW.id); END;
           CREATE TEMP TRIGGER confab_listed_delete_${n} AFTER DELETE ON main.messages
             BEGIN SELECT ${fn}(OLD.id); END;`);
}

/** The statement cache's bound: distinct query shapes seen in practice are far fewer. */
const MAX_CACHED_STATEMENTS = 256;

export function messageSearchStatements(db: DB, unread: UnreadStatements) {
  type Stmt = ReturnType<typeof db.prepare<unknown[], unknown>>;
  const cache = new Map<string, Stmt>();
  const listedRows = new ListedRows(LISTED_ROWS_MAX, LISTED_ROWS_MAX_CHARS);
  forgetOnWrite(db, listedRows);
  const byIds = db
    .prepare<[string], unknown>(
      `SELECT ${LISTED_COLUMNS} FROM messages m WHERE m.id IN (SELECT value FROM json_each(?))`,
    )
    .raw(true);

  function prepared(sql: string): Stmt {
    let stmt = cache.get(sql);
    if (stmt) {
      cache.delete(sql); // keep the most recently used last
      cache.set(sql, stmt);
      return stmt;
    }
    // Rows as arrays, made into objects here (ListedRow): better-sqlite3 builds a row object one
    // property at a time, which was half of a 100-message fetch's time in SQLite's call.
    stmt = db.prepare<unknown[], unknown>(sql).raw(true);
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
    cache.set(sql, stmt);
    return stmt;
  }

  /**
   * The index a flags condition can use (exact index expressions): a partial index of
   * user_messages, or for unread messages the unread index (UNREAD, ./unread.ts).
   */
  function flagIndex(q: MessageQuery): string | null {
    for (const c of q.conditions) {
      if (c.kind !== 'flags' || c.negated) continue;
      if (c.mask === 1 && !c.set) return UNREAD;
      if (c.mask === 2 && c.set) return 'user_messages_starred';
      if (c.mask === 512 && c.set) return 'user_messages_private';
    }
    return null;
  }

  /** Whether the query names one conversation (channel or direct), whose index should lead. */
  function conversationLed(q: MessageQuery): boolean {
    return q.conditions.some((c) => !c.negated && (c.kind === 'channel' || c.kind === 'dm_group'));
  }

  /**
   * A query's SQL. An unread narrow reads the unread index in two parts (./unread.ts): `part`
   * 'above' the watermark `w` (user_messages' own rows) or at or 'below' it (unread_messages).
   */
  function build(
    q: MessageQuery,
    range: MessageRange,
    part: { side: 'above' | 'below'; w: number } | null = null,
  ): { sql: string; params: unknown[] } {
    // Join order and index choice are spelled out (the planner has no statistics): the realm
    // index never leads (`+m.realm_id`), a named conversation's index does, and flag conditions
    // with an index use it.
    const flagIdx = q.includeHistory ? null : flagIndex(q);
    const mLeads = q.includeHistory || (flagIdx === null && conversationLed(q));
    const idCol = part?.side === 'below' ? 'u.message_id' : mLeads ? 'm.id' : 'um.message_id';
    const select = `SELECT ${idCol} AS id, um.flags AS flags`;
    let sql: string;
    const params: unknown[] = [];
    if (q.includeHistory) {
      sql = `${select} FROM messages m
        LEFT JOIN user_messages um ON um.user_id = ? AND um.message_id = m.id
        WHERE +m.realm_id = ?`;
      params.push(q.userId, q.realmId);
    } else if (mLeads) {
      sql = `${select} FROM messages m
        CROSS JOIN user_messages um ON um.user_id = ? AND um.message_id = m.id
        WHERE 1`;
      params.push(q.userId);
    } else if (part?.side === 'below') {
      sql = `${select} FROM unread_messages u
        CROSS JOIN user_messages um ON um.user_id = u.user_id AND um.message_id = u.message_id
        CROSS JOIN messages m ON m.id = u.message_id
        WHERE u.user_id = ? AND u.message_id <= ?`;
      params.push(q.userId, part.w);
    } else if (part?.side === 'above') {
      sql = `${select} FROM user_messages um CROSS JOIN messages m ON m.id = um.message_id
        WHERE um.user_id = ? AND um.message_id > ?`;
      params.push(q.userId, part.w);
    } else {
      sql = `${select} FROM user_messages um ${flagIdx ? `INDEXED BY ${flagIdx}` : ''}
        JOIN messages m ON m.id = um.message_id
        WHERE um.user_id = ?`;
      params.push(q.userId);
    }
    for (const c of q.conditions) {
      const f = condition(c, q.userId);
      sql += ` AND ${f.sql}`;
      params.push(...f.params);
    }
    switch (range.dir) {
      case 'before':
        sql += ` AND ${idCol} <= ? ORDER BY ${idCol} DESC LIMIT ?`;
        params.push(range.anchor, range.limit);
        break;
      case 'after':
        sql += ` AND ${idCol} >= ? ORDER BY ${idCol} ASC LIMIT ?`;
        params.push(range.anchor, range.limit);
        break;
      case 'ids':
        sql += ` AND ${idCol} IN (SELECT value FROM json_each(?)) ORDER BY ${idCol}`;
        params.push(JSON.stringify(range.ids));
        break;
    }
    return { sql, params };
  }

  /**
   * A query's rows. An unread narrow's two parts hold ids on either side of the watermark, so
   * newest first is the part above then the part below, each for what is left of the limit;
   * oldest first the other way round.
   */
  function rows(q: MessageQuery, range: MessageRange): RawRow[] {
    const run = (r: MessageRange, part: { side: 'above' | 'below'; w: number } | null) => {
      const { sql, params } = build(q, r, part);
      return prepared(sql).all(...params) as RawRow[];
    };
    if (q.includeHistory || flagIndex(q) !== UNREAD) return run(range, null);
    const w = unread.watermark();
    if (range.dir === 'ids') {
      return run(range, { side: 'below', w }).concat(run(range, { side: 'above', w }));
    }
    const [first, second] =
      range.dir === 'before' ? (['above', 'below'] as const) : (['below', 'above'] as const);
    const out = run(range, { side: first, w });
    if (out.length < range.limit) {
      out.push(...run({ ...range, limit: range.limit - out.length }, { side: second, w }));
    }
    return out;
  }

  return {
    /**
     * The messages of a narrow in a range, with the user's flags: `before` newest first from
     * `anchor` down, `after` oldest first from `anchor` up (both inclusive), `ids` ascending.
     */
    messages(q: MessageQuery, range: MessageRange): ListedMessageRow[] {
      if (matchesNothing(q)) return [];
      // The ids and flags, then the columns of those not kept (ListedRows), in one query.
      const listed = rows(q, range);
      const values: (RawRow | undefined)[] = new Array<RawRow | undefined>(listed.length);
      let missing: number[] | null = null;
      for (let i = 0; i < listed.length; i++) {
        const id = listed[i]![0] as number;
        if ((values[i] = listedRows.get(id)) === undefined) (missing ??= []).push(id);
      }
      if (missing !== null) {
        const found = new Map<number, RawRow>();
        for (const row of byIds.all(JSON.stringify(missing)) as RawRow[]) {
          found.set(row[0] as number, row);
          // Never what an open transaction wrote: it may yet roll back.
          if (!db.inTransaction) listedRows.keep(row);
        }
        for (let i = 0; i < listed.length; i++) values[i] ??= found.get(listed[i]![0] as number);
      }
      // Read with nothing written between the two queries: every id listed has its row.
      const out: ListedMessageRow[] = [];
      for (let i = 0; i < listed.length; i++) {
        const row = values[i];
        if (row !== undefined) out.push(new ListedRow(row, listed[i]![1] as number | null));
      }
      return out;
    },
    /** The messages whose columns listings keep (ListedRows; tests). */
    listedRows,
    /** Like `messages`, only the ids and flags. */
    ids(q: MessageQuery, range: MessageRange): { id: number; flags: number | null }[] {
      if (matchesNothing(q)) return [];
      return rows(q, range).map((r) => ({
        id: r[0] as number,
        flags: r[1] as number | null,
      }));
    },
    /** The plans of a query (query-plan tests; an unread narrow's two parts one after the other). */
    explain(q: MessageQuery, range: MessageRange): { detail: string }[] {
      const parts =
        q.includeHistory || flagIndex(q) !== UNREAD
          ? [null]
          : [
              { side: 'above' as const, w: unread.watermark() },
              { side: 'below' as const, w: unread.watermark() },
            ];
      return parts.flatMap((part) => {
        const { sql, params } = build(q, range, part);
        return db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
      });
    },
  };
}
export type MessageSearchStatements = ReturnType<typeof messageSearchStatements>;
