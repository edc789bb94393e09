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

/** A narrow's span of listed rows: every row of the narrow with an id in [lo, hi] was listed. */
type Span = { lo: number; hi: number; n: number };

/**
 * Which listings can expect their rows kept (ListedRows), guessed from what listings of the same
 * narrow covered lately, so that a listing of rows nobody listed before (history scrolled back
 * for the first time, a narrow never opened) runs the one query of whole rows instead of the ids
 * and then the rows by id (two queries, 60–130 µs more for 100 rows). Only a guess: either way
 * the rows are SQLite's; a wrong guess costs time, never an answer.
 *
 * Per narrow (its conditions; the user too when a condition is the user's own) one span of ids,
 * the listings that touch it merged into it, the latest listing's otherwise; bounded by narrows,
 * the first listed given up first (a narrow listed again keeps its place: its listings write no
 * map, and a busy narrow given up costs one listing of whole rows).
 */
export class ListedSpans {
  private readonly spans = new Map<string, Span>();
  /** The narrows in the order first listed (giveUpOldest). */
  private order: MapIterator<string> | null = null;
  /** The highest id any listing answered: a `before` listing from above it lists the newest. */
  private top = 0;

  constructor(readonly maxNarrows: number) {}

  get size(): number {
    return this.spans.size;
  }

  /**
   * Whether at least half of what `range` lists should be kept. A narrow not listed before: a
   * listing of its newest, or from an anchor that is kept (a first unread, a linked message).
   */
  expectKept(key: string, range: MessageRange, kept: ListedRows): boolean {
    if (kept.size === 0) return false;
    if (range.dir === 'ids') {
      let hits = 0;
      for (const id of range.ids) if (kept.get(id) !== undefined) hits++;
      return hits * 2 >= range.ids.length;
    }
    const a = range.anchor;
    const s = this.spans.get(key);
    if (s === undefined) {
      const near = range.dir === 'before' ? a + 1 : a - 1;
      return (
        (range.dir === 'before' && a >= this.top) ||
        kept.get(a) !== undefined ||
        kept.get(near) !== undefined
      );
    }
    // From an anchor outside the span, the rows up to it come first, none kept; only above the
    // newest any listing answered (a narrow's newest, new messages since) are they expected few.
    if (range.dir === 'after' ? a < s.lo : a > s.hi && a < this.top) return false;
    // The span's rows on the listing's side of the anchor, as if evenly spread over its ids.
    const inSpan = range.dir === 'before' ? Math.min(a, s.hi) - s.lo : s.hi - a;
    if (inSpan < 0) return false;
    const expected = (s.n * (inSpan + 1)) / (s.hi - s.lo + 1);
    return expected * 2 >= Math.min(range.limit, s.n);
  }

  /** Notes a `before` or `after` listing's answer (`lo`..`hi`, `n` rows) of the narrow `key`. */
  note(key: string, range: MessageRange, lo: number, hi: number, n: number): void {
    if (range.dir === 'ids' || n === 0) return;
    if (hi > this.top) this.top = hi;
    // Every row of the narrow from the anchor to the last row listed was listed.
    const from = range.dir === 'before' ? lo : Math.min(range.anchor, lo);
    const to = range.dir === 'before' ? Math.max(range.anchor, hi) : hi;
    let s = this.spans.get(key);
    if (s !== undefined && from <= s.hi + 1 && to + 1 >= s.lo) {
      // The span's rows outside this listing's ids, as if evenly spread, and this listing's.
      const overlap = Math.max(0, Math.min(hi, s.hi) - Math.max(lo, s.lo) + 1);
      const outside = (s.n * (s.hi - s.lo + 1 - overlap)) / (s.hi - s.lo + 1);
      s.n = n + Math.round(outside);
      s.lo = Math.min(lo, s.lo);
      s.hi = Math.max(hi, s.hi);
    } else if (s !== undefined) {
      s.lo = lo;
      s.hi = hi;
      s.n = n;
    } else {
      s = { lo, hi, n };
      this.spans.set(key, s);
    }
    while (this.spans.size > this.maxNarrows) {
      this.order = giveUpOldest(this.spans, this.order, (k) => this.spans.delete(k));
    }
  }

  clear(): void {
    this.spans.clear();
    this.order = null;
    this.top = 0;
  }
}

/** Narrows whose spans ListedSpans keeps. */
export const LISTED_SPANS_MAX = 4096;

/** Conditions whose rows differ between users of one narrow. */
const OWN_CONDITIONS: ReadonlySet<MessageCondition['kind']> = new Set([
  'flags',
  'dm_including',
  'followed',
  'muted',
]);

/**
 * A narrow's key in ListedSpans: its conditions, not its user (the users of a channel list the
 * same rows), unless a condition is the user's own.
 */
function narrowKey(q: MessageQuery): string {
  let own = false;
  for (const c of q.conditions) if (OWN_CONDITIONS.has(c.kind)) own = true;
  return `${q.realmId}:${q.includeHistory ? 1 : 0}:${own ? q.userId : ''}:${JSON.stringify(q.conditions)}`;
}

/** The statement cache's bound: distinct query shapes seen in practice are far fewer. */
const MAX_CACHED_STATEMENTS = 256;

export function messageSearchStatements(db: DB, unread: UnreadStatements) {
  type Stmt = ReturnType<typeof db.prepare<unknown[], unknown>>;
  const cache = new Map<string, Stmt>();
  const listedRows = new ListedRows(LISTED_ROWS_MAX, LISTED_ROWS_MAX_CHARS);
  forgetOnWrite(db, listedRows);
  const listedSpans = new ListedSpans(LISTED_SPANS_MAX);
  /** How many listings ran which way (tests): whole rows in one query, or ids then rows by id. */
  const listings = { whole: 0, byId: 0 };
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
   * A query's SQL, of ids and flags or (`whole`) of LISTED_COLUMNS and flags. An unread narrow
   * reads the unread index in two parts (./unread.ts): `part` 'above' the watermark `w`
   * (user_messages' own rows) or at or 'below' it (unread_messages).
   */
  function build(
    q: MessageQuery,
    range: MessageRange,
    part: { side: 'above' | 'below'; w: number } | null,
    whole: boolean,
  ): { sql: string; params: unknown[] } {
    // Join order and index choice are spelled out (the planner has no statistics): the realm
    // index never leads (`+m.realm_id`), a named conversation's index does, and flag conditions
    // with an index use it.
    const flagIdx = q.includeHistory ? null : flagIndex(q);
    const mLeads = q.includeHistory || (flagIdx === null && conversationLed(q));
    const idCol = part?.side === 'below' ? 'u.message_id' : mLeads ? 'm.id' : 'um.message_id';
    const select = whole
      ? `SELECT ${LISTED_COLUMNS}, um.flags AS flags`
      : `SELECT ${idCol} AS id, um.flags AS flags`;
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
   * A query's rows (build's columns). An unread narrow's two parts hold ids on either side of the
   * watermark, so newest first is the part above then the part below, each for what is left of
   * the limit; oldest first the other way round.
   */
  function rows(q: MessageQuery, range: MessageRange, whole = false): RawRow[] {
    const run = (r: MessageRange, part: { side: 'above' | 'below'; w: number } | null) => {
      const { sql, params } = build(q, r, part, whole);
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

  /** A listing in one query of whole rows, each kept (ListedRows) for the listings after it. */
  function wholeRows(q: MessageQuery, range: MessageRange): ListedMessageRow[] {
    listings.whole++;
    const listed = rows(q, range, true);
    const keep = !db.inTransaction;
    const out: ListedMessageRow[] = new Array<ListedMessageRow>(listed.length);
    for (let i = 0; i < listed.length; i++) {
      const row = listed[i]!;
      const flags = row.pop() as number | null; // LISTED_COLUMNS' values are left
      if (keep) listedRows.keep(row);
      out[i] = new ListedRow(row, flags);
    }
    return out;
  }

  /** A listing of ids and flags, then the columns of those not kept (ListedRows) in one query. */
  function fromKept(q: MessageQuery, range: MessageRange): ListedMessageRow[] {
    listings.byId++;
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
  }

  return {
    /**
     * The messages of a narrow in a range, with the user's flags: `before` newest first from
     * `anchor` down, `after` oldest first from `anchor` up (both inclusive), `ids` ascending.
     */
    messages(q: MessageQuery, range: MessageRange): ListedMessageRow[] {
      if (matchesNothing(q)) return [];
      const key = narrowKey(q);
      const out = listedSpans.expectKept(key, range, listedRows)
        ? fromKept(q, range)
        : wholeRows(q, range);
      // Never what an open transaction wrote (nor its spans): it may yet roll back.
      if (out.length > 0 && !db.inTransaction) {
        const a = out[0]!.id;
        const b = out[out.length - 1]!.id;
        listedSpans.note(key, range, Math.min(a, b), Math.max(a, b), out.length);
      }
      return out;
    },
    /** The messages whose columns listings keep (ListedRows; tests). */
    listedRows,
    /** The spans of the narrows listed lately (ListedSpans; tests). */
    listedSpans,
    listings,
    /** Like `messages`, only the ids and flags. */
    ids(q: MessageQuery, range: MessageRange): { id: number; flags: number | null }[] {
      if (matchesNothing(q)) return [];
      return rows(q, range).map((r) => ({
        id: r[0] as number,
        flags: r[1] as number | null,
      }));
    },
    /**
     * The plans of a query, of ids and flags or (`whole`) of whole rows (query-plan tests; an
     * unread narrow's two parts one after the other).
     */
    explain(q: MessageQuery, range: MessageRange, whole = false): { detail: string }[] {
      const parts =
        q.includeHistory || flagIndex(q) !== UNREAD
          ? [null]
          : [
              { side: 'above' as const, w: unread.watermark() },
              { side: 'below' as const, w: unread.watermark() },
            ];
      return parts.flatMap((part) => {
        const { sql, params } = build(q, range, part, whole);
        return db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
      });
    },
  };
}
export type MessageSearchStatements = ReturnType<typeof messageSearchStatements>;
