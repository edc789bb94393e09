/**
 * A cluster's id blocks (src/cluster/id-blocks.ts), without NATS: a realm's blocks (current,
 * reserve, exhaustion, increasing ids), the bucket counter's compare-and-set claims (on a small
 * in-memory stand-in for the key-value bucket), and a node's id source and guard on a real store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KV } from 'nats';
import t, { type Test } from 'tap';
import {
  claimIds,
  ClusterIds,
  ID_BLOCKS_KEY,
  IdBlocksExhaustedError,
  idClaimer,
  raiseIdCounter,
  RealmIdBlocks,
  type ClaimIds,
} from '../../src/cluster/id-blocks.js';
import { NotOwnerError } from '../../src/cluster/jetstream.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { Store } from '../../src/storage/store.js';

/** A counter of ids claimed in order, like the bucket's; each claim can be held back. */
function counter(start = 1) {
  let next = start;
  const claims: number[] = [];
  let gate: Promise<void> | null = null;
  const claim: ClaimIds = async (count) => {
    claims.push(count);
    if (gate) await gate;
    const first = next;
    next += count;
    return first;
  };
  return {
    claim,
    claims,
    /** Holds every claim back until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => {
        gate = null;
        open();
      };
    },
  };
}

const take = (blocks: RealmIdBlocks, n: number, table = 'messages') =>
  Array.from({ length: n }, () => blocks.next(table));

/** What `fn` threw (undefined: nothing). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}
const exhausted = (blocks: RealmIdBlocks) =>
  thrown(() => blocks.next('messages')) instanceof IdBlocksExhaustedError;

t.test('a realm starts with a current block and a reserve, claimed at once', async (t) => {
  const c = counter(101);
  const blocks = await RealmIdBlocks.claimFor(c.claim, 10);
  t.same(c.claims, [20], 'one claim of two blocks');
  t.same(blocks.blocks, { current: { start: 101, end: 111 }, reserve: { start: 111, end: 121 } });
  t.same(take(blocks, 3), [101, 102, 103], 'ids in order from the current block');
  t.ok(blocks.holds(101) && blocks.holds(110) && blocks.holds(120), 'holds both blocks');
  t.notOk(blocks.holds(100) || blocks.holds(121), 'and nothing else');
});

t.test(
  'the reserve takes over when the block runs out, and a new reserve is claimed',
  async (t) => {
    const c = counter(1);
    const blocks = await RealmIdBlocks.claimFor(c.claim, 4);
    t.same(take(blocks, 4), [1, 2, 3, 4]);
    t.same(c.claims, [8], 'no claim while the block lasts');
    t.equal(blocks.next('messages'), 5, 'the reserve’s first id');
    t.same(blocks.blocks.reserve, null, 'the reserve is in use');
    t.same(c.claims, [8, 4], 'a new reserve is being claimed');
    await blocks.settled();
    t.same(blocks.blocks, { current: { start: 5, end: 9 }, reserve: { start: 9, end: 13 } });
    t.notOk(blocks.holds(4), 'a used-up block is no longer held');
    t.same(take(blocks, 6), [6, 7, 8, 9, 10, 11], 'on into the new reserve');
  },
);

t.test('each table has its own cursor; the reserve takes over for all at once', async (t) => {
  const c = counter(1);
  const blocks = await RealmIdBlocks.claimFor(c.claim, 4);
  t.same(take(blocks, 2, 'realms'), [1, 2], 'one table');
  t.same(take(blocks, 3, 'users'), [1, 2, 3], 'another, from the block’s start');
  t.same(take(blocks, 2, 'realms'), [3, 4]);
  t.equal(blocks.next('realms'), 5, 'a table past the block’s end: the reserve');
  t.equal(blocks.next('users'), 5, 'every table moves to it, above its ids before');
  t.notOk(blocks.holds(4), 'the old block is given up');
});

t.test('peek: the id a table would get next, not given', async (t) => {
  const c = counter(1);
  const blocks = await RealmIdBlocks.claimFor(c.claim, 2);
  t.equal(blocks.peek('realms'), 1, 'a fresh block: its first id');
  t.equal(blocks.peek('realms'), 1, 'peeking gives nothing away');
  t.equal(blocks.next('realms'), 1, 'next gives what peek said');
  t.equal(blocks.next('realms'), 2);
  t.equal(blocks.peek('realms'), 3, 'past the block’s end: the reserve’s first');
  t.equal(blocks.next('realms'), 3);
  t.equal(blocks.next('realms'), 4, 'the block used up, a new reserve on its way');
  t.ok(thrown(() => blocks.peek('realms')) instanceof IdBlocksExhaustedError, 'none to peek');
  await blocks.settled();
  t.equal(blocks.peek('realms'), 5);
});

t.test('a burst that uses both blocks before the next arrives is refused', async (t) => {
  const c = counter(1);
  const blocks = await RealmIdBlocks.claimFor(c.claim, 3);
  const release = c.hold();
  t.same(take(blocks, 6), [1, 2, 3, 4, 5, 6], 'both blocks');
  const err = t.throws(() => blocks.next('messages')) as IdBlocksExhaustedError;
  t.ok(err instanceof IdBlocksExhaustedError, 'refused');
  t.equal(err.httpStatus, 503);
  t.same(err.toBody(), {
    result: 'error',
    msg: 'This server is allocating ids for the realm; try again',
    code: 'BAD_REQUEST',
    'retry-after': 1,
  });
  t.same(err.headers, { 'Retry-After': '1' });
  t.ok(exhausted(blocks), 'still refused: no id outside its blocks');
  t.same(c.claims, [6, 3], 'one claim under way, not one per refusal');
  release();
  await blocks.settled();
  t.equal(blocks.next('messages'), 7, 'the new block, above every id before');
});

t.test('a failed claim is tried again when an id is next needed', async (t) => {
  let fail = true;
  let next = 1;
  const claim: ClaimIds = (count) => {
    if (fail && next > 1) return Promise.reject(new Error('no answer'));
    const first = next;
    next += count;
    return Promise.resolve(first);
  };
  const blocks = await RealmIdBlocks.claimFor(claim, 2);
  const errors: unknown[] = [];
  const log = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  t.teardown(() => void (console.error = log));
  t.same(take(blocks, 3), [1, 2, 3], 'into the reserve; its successor’s claim fails');
  await blocks.settled();
  t.equal(errors.length, 1, 'the failure is logged');
  t.equal(blocks.next('messages'), 4);
  t.ok(exhausted(blocks), 'refused while no claim succeeded');
  await blocks.settled();
  fail = false;
  t.ok(exhausted(blocks), 'refused, and claimed again');
  await blocks.settled();
  t.equal(blocks.next('messages'), 5, 'the new block');
});

t.test('a closed realm claims nothing more', async (t) => {
  const c = counter(1);
  const blocks = await RealmIdBlocks.claimFor(c.claim, 2);
  blocks.close();
  take(blocks, 4);
  await blocks.settled();
  t.same(c.claims, [4]);
  t.ok(exhausted(blocks));
});

t.test('realms sharing a counter: disjoint ids, increasing within each realm', async (t) => {
  const c = counter(1);
  const realms = await Promise.all([1, 2, 3].map(() => RealmIdBlocks.claimFor(c.claim, 5)));
  const tables = ['messages', 'reactions'];
  const given = realms.map(() => tables.map(() => [] as number[]));
  for (let round = 0; round < 300; round++) {
    const r = (round * 7 + (round >> 3)) % 3;
    const table = (round * 5 + (round >> 2)) % 2;
    try {
      given[r]![table]!.push(realms[r]!.next(tables[table]!));
    } catch (err) {
      if (!(err instanceof IdBlocksExhaustedError)) throw err;
    }
    if (round % 4 === 0) await Promise.all(realms.map((b) => b.settled()));
  }
  for (const [i, byTable] of given.entries())
    for (const [k, ids] of byTable.entries())
      t.ok(
        ids.every((id, j) => j === 0 || id > ids[j - 1]!),
        `realm ${i}, ${tables[k]}: ${ids.length} ids, increasing`,
      );
  for (const [k, table] of tables.entries()) {
    const all = given.map((byTable) => byTable[k]!).flat();
    t.equal(new Set(all).size, all.length, `no ${table} id given to two realms`);
  }
});

/** Just what claimIds uses of a KV bucket, with JetStream's compare-and-set refusals. */
function memoryBucket() {
  const keys = new Map<string, { value: string; revision: number }>();
  let revision = 0;
  const conflict = () =>
    Object.assign(new Error('wrong last sequence'), { api_error: { err_code: 10071 } });
  const tick = () => new Promise((r) => setImmediate(r));
  const kv = {
    async get(key: string) {
      await tick();
      const e = keys.get(key);
      return e ? { operation: 'PUT', revision: e.revision, string: () => e.value } : null;
    },
    async create(key: string, value: string) {
      await tick();
      if (keys.has(key)) throw conflict();
      keys.set(key, { value, revision: ++revision });
      return revision;
    },
    async update(key: string, value: string, rev: number) {
      await tick();
      if (keys.get(key)?.revision !== rev) throw conflict();
      keys.set(key, { value, revision: ++revision });
      return revision;
    },
  };
  return { kv: kv as unknown as KV, keys };
}

t.test('claims from the bucket: created above the copy’s ids, disjoint under races', async (t) => {
  const { kv, keys } = memoryBucket();
  let asked = 0;
  const firstFree = () => (asked++, 1000);
  const starts = await Promise.all(
    Array.from({ length: 8 }, (_, i) => claimIds(kv, 10 + i, firstFree)),
  );
  const ranges = starts.map((s, i) => [s, s + 10 + i] as const).sort((a, b) => a[0] - b[0]);
  t.equal(ranges[0]![0], 1000, 'the first claim starts at the first free id');
  for (let i = 1; i < ranges.length; i++)
    t.equal(ranges[i]![0], ranges[i - 1]![1], `range ${i} follows the one before, no overlap`);
  t.equal(keys.get(ID_BLOCKS_KEY)!.value, String(ranges.at(-1)![1]), 'the counter is past them');
  t.ok(asked >= 1, 'the first free id came from the copy');
  const later = await claimIds(kv, 5, () => 1);
  t.equal(later, ranges.at(-1)![1], 'an existing counter wins over the copy’s first free id');
});

t.test('a node’s claims go one at a time', async (t) => {
  // A bucket that, like a NATS cluster before nats-server 2.9.21, accepts concurrent updates
  // made with the same revision.
  const keys = new Map<string, { value: string; revision: number }>();
  let revision = 0;
  const tick = () => new Promise((r) => setImmediate(r));
  const lax = {
    async get(key: string) {
      await tick();
      const e = keys.get(key);
      return e ? { operation: 'PUT', revision: e.revision, string: () => e.value } : null;
    },
    async create(key: string, value: string) {
      await tick();
      keys.set(key, { value, revision: ++revision });
    },
    async update(key: string, value: string) {
      await tick();
      keys.set(key, { value, revision: ++revision });
    },
  } as unknown as KV;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'id-claims-'));
  const store = Store.open(dir, { backgroundCheckpoint: false });
  t.teardown(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const raced = await Promise.all([claimIds(lax, 10, () => 1), claimIds(lax, 10, () => 1)]);
  t.equal(raced[0], raced[1], 'two concurrent claims on such a bucket get the same ids');
  const claim = idClaimer(lax, store.db);
  const starts = await Promise.all(Array.from({ length: 5 }, () => claim(10)));
  t.same(starts, [11, 21, 31, 41, 51], 'a node’s claims, made at once, get consecutive ids');
});

t.test('a seed raises the counter, never lowers it', async (t) => {
  const { kv, keys } = memoryBucket();
  t.equal(await raiseIdCounter(kv, 500), 500, 'absent: created where asked');
  t.equal(await claimIds(kv, 10, () => 1), 500, 'claims start there');
  t.equal(await raiseIdCounter(kv, 300), 510, 'a lower floor leaves it');
  t.equal(await raiseIdCounter(kv, 900), 900, 'a higher one raises it');
  const raced = await Promise.all([raiseIdCounter(kv, 950), claimIds(kv, 20, () => 1)]);
  const counter = Number(keys.get(ID_BLOCKS_KEY)!.value);
  t.ok(counter >= 950, `raised under a concurrent claim (${counter}; ${raced.join(', ')})`);
  t.ok(raced[1] >= 900, 'the claim is above the floor before it');
});

t.test('a node’s id source and guard', async (t: Test) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'id-blocks-'));
  const store = Store.open(dir, { backgroundCheckpoint: false });
  t.teardown(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const ids = new ClusterIds(store.db);
  store.ids.install(ids);
  const params = (stringId: string) => ({
    name: 'R',
    string_id: stringId,
    owner_email: `o@${stringId || 'root'}.example.com`,
    owner_full_name: 'O',
    owner_password_hash: null,
    owner_can_create_users: true,
    now: 1,
  });

  // The first realm of an empty cluster: SQLite's ids, unchecked.
  const first = await ids.withoutBlocks(() => doCreateRealm(store, params('')));
  t.equal(first.realm_id, 1, 'the first realm: SQLite’s id');
  t.throws(
    () => doCreateRealm(store, params('x')),
    /outside any realm's write/,
    'outside a realm’s write, no id is given',
  );

  const c = counter(50_000);
  const blocks = await RealmIdBlocks.claimFor(c.claim, 100);
  const second = ids.writing(blocks, () => doCreateRealm(store, params('b')));
  t.equal(second.realm_id, 50_000, 'a realm created with its blocks has its first id');
  t.ok(second.user_id >= 50_000 && second.user_id < 50_100, 'its users too');

  const rawInsert = (id: number | null) =>
    store.db
      .prepare("INSERT INTO alert_words (id, realm_id, user_id, word) VALUES (?, ?, ?, 'w')")
      .run(id, second.realm_id, second.user_id);
  const refused = /outside the blocks of the realm written/;
  t.throws(() => ids.writing(blocks, () => rawInsert(null)), refused, 'an id left to SQLite');
  t.throws(() => ids.writing(blocks, () => rawInsert(7)), refused, 'an id of no block of its');
  ids.writing(blocks, () => rawInsert(50_199));
  t.pass('an id of its reserve passes');
  t.throws(() => rawInsert(60_000), refused, 'outside any realm’s write: refused');
  ids.withoutBlocksSync(() => rawInsert(60_000));
  t.pass('applying the log: unchecked');
  t.ok(
    thrown(() => ids.writing(undefined, () => ids.nextId('messages'))) instanceof NotOwnerError,
    'a realm not owned gets no id',
  );
  t.throws(() => ids.writing(undefined, () => rawInsert(50_198)), refused, 'a realm not owned');
});
