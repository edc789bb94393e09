/**
 * src/lib/spliced-list.ts: a shared list with some entries removed and others put in reads back
 * as the list built plainly, for every place a change can fall (either end, adjacent entries, all
 * of them), and is made of views of the shared Buffer — one per run of kept entries — plus a few
 * small Buffers.
 */
import t, { type Test } from 'tap';
import { rng } from '../../bench/lib/open-loop.js';
import { sharedOrigin } from '../../src/lib/shared-parts.js';
import { sharedList, spliceList, type ListEntry } from '../../src/lib/spliced-list.js';

const entry = (id: number, key: string): ListEntry => ({
  id,
  key,
  // Multi-byte text: offsets are bytes, not characters.
  json: JSON.stringify({ id, name: key, note: `é€${'x'.repeat(id % 7)}` }),
});

/** The list built plainly: entries sorted by key, then id. */
function naive(entries: ListEntry[]): unknown[] {
  return [...entries]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id - b.id))
    .map((e) => JSON.parse(e.json) as unknown);
}

function check(
  t: Test,
  base: ListEntry[],
  remove: number[],
  insert: ListEntry[],
  what: string,
): Buffer[] {
  const list = sharedList(base);
  const parts = spliceList(list, remove, insert);
  const text = Buffer.concat(parts).toString();
  const gone = new Set(remove);
  t.same(
    JSON.parse(text),
    naive([...base.filter((e) => !gone.has(e.id)), ...insert]),
    `${what}: ${text.slice(0, 80)}`,
  );
  return parts;
}

t.test('edge cases', (t) => {
  const base = ['b', 'd', 'f', 'h', 'j'].map((k, i) => entry(i + 1, k));
  const [a, c, e, g, k] = ['a', 'c', 'e', 'g', 'k'].map((key, i) => entry(100 + i, key));
  check(t, [], [], [], 'empty, unchanged');
  check(t, [], [3], [], 'empty, removing an id it does not hold');
  check(t, [], [], [c!, a!], 'empty, insertions only');
  const list = sharedList(base);
  const same = spliceList(list, [], []);
  t.equal(same.length, 1, 'unchanged: one part');
  t.ok(same[0]!.equals(list.buf) && same[0]!.byteOffset === list.buf.byteOffset, 'the list itself');
  check(t, base, [1], [], 'first removed');
  check(t, base, [5], [], 'last removed');
  check(t, base, [1, 5], [], 'both ends removed');
  check(t, base, [2, 3], [], 'adjacent removed');
  check(t, base, [3, 2, 3, 99], [], 'unsorted, repeated and unknown removals');
  check(t, base, [1, 2, 3, 4, 5], [], 'all removed');
  check(t, base, [1, 2, 3, 4, 5], [a!, k!], 'all removed, others inserted');
  check(t, base, [], [a!], 'inserted before the first');
  check(t, base, [], [k!], 'inserted after the last');
  check(t, base, [], [c!, e!, g!], 'inserted between');
  check(t, base, [], [k!, a!, e!], 'insertions in any order');
  check(t, base, [1], [a!], 'first replaced');
  check(t, base, [5], [k!], 'last replaced');
  check(t, base, [2, 3], [c!, e!], 'removed around insertions');
  check(t, base, [], [entry(100, 'd'), entry(0, 'd')], 'same key: by id');
  t.end();
});

t.test('parts: a view per kept run, few small Buffers', (t) => {
  const base = Array.from({ length: 200 }, (_, i) => entry(i, `k${String(i).padStart(3, '0')}`));
  const list = sharedList(base);
  const parts = check(t, base, [10, 11, 50, 199], [entry(1000, 'k0305')], 'a few changes');
  const views = parts.filter((p) => sharedOrigin(p) !== null);
  t.equal(views.length, 4, 'runs 0–9, 12–30, 31–49, 51–198');
  t.ok(parts.length <= 2 * views.length + 1, `${parts.length} parts`);
  for (const p of parts) if (sharedOrigin(p) === null) t.ok(p.length < 200, 'small own part');
  t.equal(views[0]!.byteOffset, list.buf.byteOffset, 'the first run carries the shared `[`');
  t.end();
});

t.test('random changes equal the plain list', (t) => {
  const random = rng(11);
  for (let round = 0; round < 300; round++) {
    const n = Math.floor(random() * 30);
    const keys = () => String.fromCharCode(97 + Math.floor(random() * 26)) + random();
    const base = Array.from({ length: n }, (_, i) => entry(i, keys()));
    const remove = base.filter(() => random() < 0.3).map((e) => e.id);
    const insert = Array.from({ length: Math.floor(random() * 6) }, (_, i) =>
      entry(1000 + i, keys()),
    );
    check(t, base, remove, insert, `round ${round}`);
  }
  t.end();
});
