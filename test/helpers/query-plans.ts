/**
 * EXPLAIN QUERY PLAN of the statements a store method really runs: every statement of
 * better-sqlite3 records its SQL text and arguments while `explainCalls` runs the method, and
 * each recorded read is explained with the same arguments. So a query-plan test follows the
 * code: change a statement in src/storage and the test explains the new one.
 */
import type Database from 'better-sqlite3';
import type { Test } from 'tap';
import type { Store } from '../../src/storage/store.js';

type Call = { sql: string; args: unknown[] };
type StatementProto = Record<'all' | 'get' | 'iterate' | 'run', (...a: unknown[]) => unknown>;

let recording: Call[] | null = null;
const patched = new WeakSet<object>();

function patchStatements(db: Database.Database): void {
  const proto = Object.getPrototypeOf(db.prepare('SELECT 1')) as StatementProto;
  if (patched.has(proto)) return;
  patched.add(proto);
  for (const name of ['all', 'get', 'iterate', 'run'] as const) {
    const original = proto[name];
    proto[name] = function (this: { source: string }, ...args: unknown[]) {
      recording?.push({ sql: this.source, args });
      return original.apply(this, args);
    };
  }
}

/**
 * The plans of the reads `fn` ran on the store's database, one line per statement; with
 * `insertSelects`, also of its INSERT ... SELECT statements (the plan of their SELECT).
 */
export function explainCalls(
  store: Store,
  fn: () => unknown,
  opts: { insertSelects?: boolean } = {},
): string[] {
  patchStatements(store.db);
  const calls: Call[] = [];
  recording = calls;
  try {
    fn();
  } finally {
    recording = null;
  }
  const reads = calls.filter(
    (c) =>
      /^\s*(SELECT|WITH)\b/i.test(c.sql) ||
      (opts.insertSelects === true && /^\s*INSERT\b[^;]*\bSELECT\b/i.test(c.sql)),
  );
  if (reads.length === 0) throw new Error('the call ran no read statement');
  return reads.map((c) =>
    (store.db.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...c.args) as { detail: string }[])
      .map((r) => r.detail)
      .join(' | '),
  );
}

/**
 * Each case's reads are index searches: every plan line SEARCHes and none SCANs one of `tables`
 * without an index.
 */
export function assertIndexSearches(
  t: Test,
  store: Store,
  cases: readonly (readonly [string, () => unknown])[],
  tables: readonly string[],
): void {
  const scan = new RegExp(`SCAN (${tables.join('|')})\\b(?! USING)`);
  for (const [name, call] of cases) {
    for (const p of explainCalls(store, call)) {
      t.match(p, /SEARCH/, `${name}: ${p}`);
      t.notMatch(p, scan, `${name}: no table scan`);
    }
  }
}
