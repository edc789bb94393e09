/**
 * Which node runs each realm export (src/cluster/export-runs.ts), without NATS: two or three
 * nodes' ExportRuns on one in-memory stand-in for the lease bucket (with JetStream's
 * compare-and-set refusals) and a clock moved by hand. The cases the cluster test
 * (test/cluster/cluster-exports.test.ts) does not reach: an export whose key never appeared, a
 * node's earlier process, a graceful stop's queued export, a failure to fail, a runner that was
 * given up and comes back.
 */
import type { KV } from 'nats';
import t from 'tap';
import { ExportRuns, exportKey, type UnfinishedExport } from '../../src/cluster/export-runs.js';

const LEASE = 3000;
const GRACE = 30_000;

/** What ExportRuns uses of a KV bucket; a deleted key is gone (as `get` shows it: DEL). */
function memoryBucket() {
  const keys = new Map<string, { value: string; revision: number; op: 'PUT' | 'DEL' }>();
  let revision = 0;
  const conflict = () =>
    Object.assign(new Error('wrong last sequence'), { api_error: { err_code: 10071 } });
  const kv = {
    get(key: string) {
      const e = keys.get(key);
      return Promise.resolve(
        e ? { operation: e.op, revision: e.revision, string: () => e.value } : null,
      );
    },
    create(key: string, value: string) {
      if (keys.get(key)?.op === 'PUT') return Promise.reject(conflict());
      keys.set(key, { value, revision: ++revision, op: 'PUT' });
      return Promise.resolve(revision);
    },
    update(key: string, value: string, rev: number) {
      if (keys.get(key)?.revision !== rev) return Promise.reject(conflict());
      keys.set(key, { value, revision: ++revision, op: 'PUT' });
      return Promise.resolve(revision);
    },
    delete(key: string, opts: { previousSeq: number }) {
      if (keys.get(key)?.revision !== opts.previousSeq) return Promise.reject(conflict());
      keys.set(key, { value: '', revision: ++revision, op: 'DEL' });
      return Promise.resolve();
    },
    /** The keys' lister a node passes to abandonPrevious (jetstream.ts bucketKeys in one). */
    keys(filter: string) {
      const prefix = filter.replace(/\*$/, '');
      const found = [...keys].filter(([k, e]) => e.op === 'PUT' && k.startsWith(prefix));
      // Async iterable, as nats.js's (a plain array's iterator serves `for await` too).
      return Promise.resolve(found.map(([k]) => k));
    },
  };
  const value = (id: number) => {
    const e = keys.get(exportKey(id));
    return e?.op === 'PUT' ? (JSON.parse(e.value) as Record<string, unknown>) : null;
  };
  return { kv: kv as unknown as KV, value };
}

function cluster() {
  const bucket = memoryBucket();
  let now = 1_000_000;
  const node = (name: string, inc = `${name}-1`) =>
    new ExportRuns(bucket.kv, name, inc, LEASE, GRACE, () => now);
  /** The owner's check: the exports it failed. */
  const check = async (runs: ExportRuns, unfinished: UnfinishedExport[], owns = true) => {
    const failed: number[] = [];
    await runs.check(
      unfinished,
      () => owns,
      (_realm, id) => {
        failed.push(id);
        return Promise.resolve();
      },
    );
    return failed;
  };
  return { ...bucket, node, check, advance: (ms: number) => (now += ms) };
}

const X: UnfinishedExport[] = [{ id: 7, realm_id: 1 }];

t.test('a live runner is never given up; one that stops renewing is, after a lease', async (t) => {
  const c = cluster();
  const runner = c.node('n2');
  const owner = c.node('n1');
  const other = c.node('n3');
  t.ok(await runner.claim(7), 'claimed');
  t.same(c.value(7), { node: 'n2', inc: 'n2-1' }, 'the bucket names its runner');
  for (let i = 0; i < 9; i++) {
    t.same(await c.check(owner, X), [], `alive: not failed (${i})`);
    c.advance(LEASE / 3);
    await runner.renew();
  }
  // It stops renewing (killed): a lease time later, the owner gives it up.
  t.same(await c.check(owner, X), [], 'the revision is new to the owner');
  t.same(await c.check(other, X, false), [], 'seen by a node not owning the realm');
  c.advance(LEASE - 1);
  t.same(await c.check(owner, X), [], 'not before a whole lease time');
  c.advance(1);
  t.same(await c.check(other, X, false), [], 'a node not owning the realm never fails it');
  t.same(await c.check(owner, X), [7], 'the owner fails it');
  t.equal(c.value(7), null, 'its key goes once it failed');
  // Back (it was only cut off): its renewal is refused; it no longer holds the key.
  await runner.renew();
  t.ok(await runner.claim(8), 'another export');
  await runner.finish(7);
  t.same(c.value(8), { node: 'n2', inc: 'n2-1' }, 'its other key stays');
});

t.test('a node that came back gives up its earlier process’s exports', async (t) => {
  const c = cluster();
  t.ok(await c.node('n2', 'old').claim(7), 'claimed by n2’s earlier process');
  const back = c.node('n2', 'new');
  t.equal(await back.abandonPrevious((f) => c.kv.keys(f)), 1, 'given up at start');
  t.match(c.value(7), { node: 'n2', inc: 'old', abandoned: true }, 'marked abandoned');
  t.same(await c.check(c.node('n1'), X), [7], 'the owner fails it at its next check');
  // The owner itself restarted: its own earlier process's export fails at its first check.
  const c2 = cluster();
  t.ok(await c2.node('n1', 'old').claim(7), 'claimed by the owner’s earlier process');
  t.same(await c2.check(c2.node('n1', 'new'), X), [7], 'failed at once');
});

t.test('a graceful stop gives up what it had queued: failed at the next check', async (t) => {
  const c = cluster();
  const runner = c.node('n2');
  t.ok(await runner.claim(7));
  await runner.giveUp(7);
  t.same(await c.check(c.node('n1'), X), [7], 'failed');
});

t.test('an export whose runner never recorded it: failed after the grace', async (t) => {
  const c = cluster();
  const owner = c.node('n1');
  t.same(await c.check(owner, X), [], 'no key yet');
  c.advance(GRACE - 1);
  t.same(await c.check(owner, X), [], 'waited for');
  c.advance(1);
  // A runner recording it now (its row failed a moment later) may not run it.
  let late: boolean | null = null;
  await owner.check(
    X,
    () => true,
    async () => {
      late = await c.node('n2').claim(7);
    },
  );
  t.equal(late, false, 'given up first: a late claim is refused');
  // One recorded within the grace is watched as any other.
  const c2 = cluster();
  const owner2 = c2.node('n1');
  t.same(await c2.check(owner2, X), [], 'no key yet');
  c2.advance(GRACE - 1);
  t.ok(await c2.node('n2').claim(7), 'recorded just in time');
  c2.advance(GRACE);
  t.same(await c2.check(owner2, X), [], 'its key is new to the owner');
});

t.test('a failure to fail is tried again; the owner’s own exports are left alone', async (t) => {
  const c = cluster();
  const owner = c.node('n1');
  t.ok(await c.node('n2').claim(7));
  t.ok(await owner.claim(9), 'one the owner runs itself');
  const both: UnfinishedExport[] = [...X, { id: 9, realm_id: 1 }];
  await c.check(owner, both);
  c.advance(LEASE);
  let calls = 0;
  await owner.check(
    both,
    () => true,
    () => {
      calls++;
      return Promise.reject(new Error('no owner answered'));
    },
  );
  t.equal(calls, 1, 'only the other node’s export is failed');
  t.match(c.value(7), { abandoned: true }, 'still given up');
  t.same(await c.check(owner, both), [7], 'failed at the next check');
  t.same(c.value(9), { node: 'n1', inc: 'n1-1' }, 'the owner’s own export keeps its key');
});

t.test(
  'a claim whose answer was lost, and whose look at the key goes unanswered too',
  async (t) => {
    // The create lands but its answer is held by a frozen server until the client's timeout, and
    // so is the first look at the key; a look asked again beside it is answered. On the code
    // before, the claim read the key once and, that look failing, said "not ours": the export
    // (recorded as this node's) was not run, and its owner failed it.
    const { kv } = memoryBucket();
    const timeout = () =>
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' })), 4000),
      );
    let gets = 0;
    const frozen = {
      create: (key: string, value: string) => kv.create(key, value).then(timeout),
      get: (key: string) => (++gets === 1 ? timeout() : kv.get(key)),
    } as unknown as KV;
    const runs = new ExportRuns(frozen, 'n2', 'n2-1', LEASE, GRACE);
    t.ok(await runs.claim(7), 'ours: it landed');
    t.equal(gets, 2, 'the look asked again once');
  },
);

t.test("the owner's check racing its own claim does not give its own export up", async (t) => {
  // The owner took the request itself: the export's row is in its copy, and its tick's check
  // reads the key (not yet held or being claimed when the check looked) while the claim creates
  // it. The key then names this very process: it runs the export, and it is not given up (CI
  // run of cluster-exports: the owner failed its own export 1 s after the request, "its node is
  // gone", then found it given up).
  const c = cluster();
  const owner = c.node('n1');
  const get = c.kv.get.bind(c.kv);
  let claimed: Promise<boolean> | null = null;
  (c.kv as unknown as { get: typeof get }).get = async (key: string) => {
    // The claim starts and lands while the check's read is on its way.
    claimed ??= owner.claim(7);
    await claimed;
    return get(key);
  };
  const failed = await c.check(owner, X);
  // Set by the stand-in's read (TypeScript cannot see that the check called it).
  const claim = claimed as Promise<boolean> | null;
  t.ok(claim !== null && (await claim), 'claimed');
  t.same(failed, [], 'not failed');
  t.match(c.value(7), { node: 'n1', inc: 'n1-1' }, 'its key still names it, not given up');
  t.notOk(c.value(7)?.abandoned, 'not abandoned');
});

t.test('an export finished while its own renewal is under way: its key goes', async (t) => {
  // The renewal read the key, then the export finished and `finish` read it at the same revision;
  // the renewal's update landed before `finish`'s delete, which JetStream refused. On the code
  // before, the key of the finished export stayed in the bucket for good (a run of
  // cluster-exports on this machine: 'wrong last sequence: 43', the runner still recorded); a
  // graceful stop's giving up was refused the same way (its export failed a lease time late).
  for (const op of ['finish', 'giveUp'] as const) {
    const c = cluster();
    const runner = c.node('n2');
    t.ok(await runner.claim(7), 'claimed');
    const get = c.kv.get.bind(c.kv);
    const update = c.kv.update.bind(c.kv);
    let gets = 0;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
      // Landing anyway a little later (a runner that looks only after a renewal ends).
      setTimeout(resolve, 50);
    });
    Object.assign(c.kv, {
      // The renewal's read, then `op`'s: the renewal's update lands between this read and its
      // answer (a renewal that is done by the time `op` reads is the ordinary case).
      get: (key: string) => {
        const answer = get(key);
        if (++gets === 2) release();
        return answer;
      },
      update: (key: string, value: string, rev: number) => gate.then(() => update(key, value, rev)),
    });
    const renewal = runner.renew();
    await new Promise((resolve) => setImmediate(resolve));
    await runner[op](7);
    await renewal;
    if (op === 'finish') t.equal(c.value(7), null, 'finish: its key is gone');
    else t.match(c.value(7), { abandoned: true }, 'giveUp: its key is given up');
    Object.assign(c.kv, { get, update });
    if (op === 'giveUp') t.same(await c.check(c.node('n1'), X), [7], 'failed at the next check');
  }
});

t.test("the owner's own key for an export it does not run: failed after a lease", async (t) => {
  // The owner took the request itself; its claim's create landed but the answer was lost, and so
  // were its looks at the key: taken as refused, the export is not run here, yet the key names
  // this very process. On the code before, a key naming the judging process was never given up:
  // the export stayed pending for good.
  const c = cluster();
  const owner = c.node('n1');
  const create = c.kv.create.bind(c.kv);
  const get = c.kv.get.bind(c.kv);
  const lost = () => Promise.reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' }));
  Object.assign(c.kv, {
    create: (key: string, value: string) => create(key, value).then(lost),
    get: lost,
  });
  t.notOk(await owner.claim(7), 'taken as not claimed: not run here');
  Object.assign(c.kv, { create, get });
  t.same(c.value(7), { node: 'n1', inc: 'n1-1' }, 'yet its key names this process');
  t.same(await c.check(owner, X), [], 'its revision is new to the owner');
  c.advance(LEASE - 1);
  t.same(await c.check(owner, X), [], 'not before a whole lease time');
  c.advance(1);
  t.same(await c.check(owner, X), [7], 'failed once its key stood still for a lease time');
  // One it does run is never given up, however long.
  t.ok(await owner.claim(8), 'claimed');
  const Y: UnfinishedExport[] = [{ id: 8, realm_id: 1 }];
  for (let i = 0; i < 3; i++) {
    t.same(await c.check(owner, Y), [], `its own running export kept (${i})`);
    c.advance(LEASE);
  }
});
