/**
 * A JSON list kept serialized for many answers (the register snapshot's channel lists), and one
 * answer's version of it: some entries left out, some of its own put in at their place in the
 * order. The answer is views of the shared Buffer — each run of kept entries one view, with the
 * commas between them — and small Buffers for the rest, so it costs a few Buffers per change,
 * not a copy of the list, and gzip reuses the shared list's compressed segments (src/http/gzip.ts).
 */
import { markShared } from './shared-parts.js';

/** An entry: its JSON, the id answers name it by, and the key it is ordered by. */
export type ListEntry = { id: number; key: string; json: string };

export type SharedList = {
  /** `[e1,e2,…]`, marked shared. */
  readonly buf: Buffer;
  /** Entry i's id and key, in list order (ascending key, then id). */
  readonly ids: readonly number[];
  readonly keys: readonly string[];
  /** Entry i is buf[starts[i], ends[i]). */
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  /** id → entry index. */
  readonly index: ReadonlyMap<number, number>;
};

/** By key (as the channel lists sort by name: UTF-16 code units), then by id. */
function before(aKey: string, aId: number, bKey: string, bId: number): boolean {
  return aKey < bKey || (aKey === bKey && aId < bId);
}

const byKeyThenId = (a: ListEntry, b: ListEntry) =>
  before(a.key, a.id, b.key, b.id) ? -1 : before(b.key, b.id, a.key, a.id) ? 1 : 0;

/** The entries (any order; ids distinct) as a shared list, in key order. */
export function sharedList(entries: readonly ListEntry[]): SharedList {
  const sorted = [...entries].sort(byKeyThenId);
  const starts: number[] = [];
  const ends: number[] = [];
  let at = 1;
  for (const e of sorted) {
    if (starts.length > 0) at++;
    starts.push(at);
    at += Buffer.byteLength(e.json);
    ends.push(at);
  }
  return {
    buf: markShared(Buffer.from(`[${sorted.map((e) => e.json).join(',')}]`)),
    ids: sorted.map((e) => e.id),
    keys: sorted.map((e) => e.key),
    starts,
    ends,
    index: new Map(sorted.map((e, i) => [e.id, i])),
  };
}

/** How many entries of `list` come before (key, id). */
function position(list: SharedList, key: string, id: number): number {
  let lo = 0;
  let hi = list.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(list.keys[mid]!, list.ids[mid]!, key, id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `list` without the entries named in `remove` (ids it does not hold are ignored) and with
 * `insert` (ids it does not hold) in their place by key, as the JSON text of the resulting list
 * in parts: views of list.buf and small Buffers of their own. Costs O((removals + insertions) ·
 * log n), whatever the list's length.
 */
export function spliceList(
  list: SharedList,
  remove: Iterable<number>,
  insert: readonly ListEntry[],
): Buffer[] {
  const n = list.ids.length;
  const removed: number[] = [];
  for (const id of remove) {
    const i = list.index.get(id);
    if (i !== undefined) removed.push(i);
  }
  removed.sort((a, b) => a - b);
  const added = [...insert].sort(byKeyThenId);
  const at = added.map((e) => position(list, e.key, e.id));

  const out: Buffer[] = [];
  let pending = '';
  let first = true;
  let closed = false;
  const flush = () => {
    if (pending !== '') out.push(Buffer.from(pending));
    pending = '';
  };
  // Entries [a, b) of the list, kept: one view, from the list's own `[` or `,` before them when
  // they need one, to its `]` when they end the answer.
  const run = (a: number, b: number, last: boolean) => {
    if (a >= b) return;
    let from = list.starts[a]!;
    if (first ? a === 0 : a > 0) from--;
    else pending += first ? '[' : ',';
    flush();
    const end = last && b === n;
    out.push(list.buf.subarray(from, end ? list.buf.length : list.ends[b - 1]!));
    first = false;
    closed = end;
  };
  const put = (json: string) => {
    pending += (first ? '[' : ',') + json;
    first = false;
  };
  // Walk the list once by its changes: a run ends at each removed entry and each insertion point.
  let next = 0;
  let r = 0;
  for (let k = 0; k <= added.length; k++) {
    const stop = k < added.length ? at[k]! : n;
    while (r < removed.length && removed[r]! < stop) {
      run(next, removed[r]!, false);
      next = Math.max(next, removed[r]! + 1);
      r++;
    }
    run(next, stop, k === added.length);
    next = Math.max(next, stop);
    if (k < added.length) put(added[k]!.json);
  }
  if (!closed) pending += first ? '[]' : ']';
  flush();
  return out;
}
