/**
 * A realm export's run has a time limit (EXPORT_TIME_LIMIT; docs/cluster.md "Exports whose node
 * stopped"), for real: three NATS servers, three Confab node processes and nginx
 * (src/cluster/local.ts), every export held for an hour once started (CONFAB_TEST_EXPORT_DELAY_MS:
 * a run that hangs on a live node) with a limit of LIMIT_S seconds. Two exports asked for through
 * a node that does not own the realm, one after the other: the first is shown failed by every
 * node once its limit passed, its runner key given back; the second, queued behind it on the same
 * node, then runs and is failed after its own limit. Before, the first stayed pending for ever
 * (its node renewed its key), and the second never ran.
 * Skipped when nats-server or nginx is not installed.
 */
import t, { type Test } from 'tap';
import { ApiClient, assertSuccess } from '../helpers/api.js';
import { leaseHolder, kvString } from '../helpers/cluster-kv.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

/** The exports' time limit (EXPORT_TIME_LIMIT, seconds). */
const LIMIT_S = 5;
const LIMIT_MS = LIMIT_S * 1000;
/** What a write (the export marked failed, its key deleted) may take on a loaded machine. */
const WRITE_MS = 5000;
/** Longer than the test: the runs hang. */
const HANG_MS = 60 * 60 * 1000;

type Listed = {
  id: number;
  pending: boolean;
  failed_timestamp: number | null;
  export_url: string | null;
};
type State = 'pending' | 'failed' | 'succeeded' | 'unknown';

await runWithEngines(run);

async function run(): Promise<void> {
  t.setTimeout(300_000);
  const { rec } = await upForTest('export-time-limit', {
    CONFAB_TEST_EXPORT_DELAY_MS: String(HANG_MS),
    EXPORT_TIME_LIMIT: String(LIMIT_S),
  });

  const fx = {
    realmId: 1,
    users: { owner: { id: 0, ...rec.owner, role: 100 as const } },
    notificationBotId: 0,
  };
  const via = (name: string) =>
    new ApiClient(`http://127.0.0.1:${rec.nodes.find((n) => n.name === name)!.port}`, fx);

  const stateOn = async (name: string, id: number): Promise<State> => {
    const r = await via(name).get('owner', 'export/realm');
    if (r.status !== 200) return 'unknown';
    const e = (r.body.exports as Listed[]).find((x) => x.id === id);
    if (!e) return 'unknown';
    if (e.pending) return 'pending';
    if (e.failed_timestamp !== null) return 'failed';
    return e.export_url !== null ? 'succeeded' : 'unknown';
  };

  const requestOn = async (t: Test, name: string): Promise<number> => {
    const { id } = assertSuccess(t, await via(name).post('owner', 'export/realm', {}), name) as {
      id: number;
    };
    const runner = await kvString(rec, `export.${id}`);
    t.equal(runner && (JSON.parse(runner) as { node: string }).node, name, `${name} runs ${id}`);
    return id;
  };

  /** Each node's first finished state of export `id` and when it came (ms after `since`). */
  const watch = async (nodes: string[], id: number, since: number, ms: number) => {
    const seen = new Map<string, { state: State; after: number }>();
    for (const until = Date.now() + ms; Date.now() < until && seen.size < nodes.length;) {
      for (const n of nodes) {
        if (seen.has(n)) continue;
        const s = await stateOn(n, id);
        if (s === 'failed' || s === 'succeeded')
          seen.set(n, { state: s, after: Date.now() - since });
      }
      await sleep(250);
    }
    return seen;
  };

  const gone = async (key: string, ms: number): Promise<boolean> => {
    for (const until = Date.now() + ms; ; await sleep(100)) {
      if ((await kvString(rec, key)) === null) return true;
      if (Date.now() > until) return false;
    }
  };

  const owner = await leaseHolder(rec, 1);
  const a = rec.nodes.map((n) => n.name).find((n) => n !== owner)!;
  const all = rec.nodes.map((n) => n.name);
  t.comment(`realm 1 is owned by ${owner}; the exports run on ${a}`);

  t.test('a run past its time limit is failed; the one queued after it runs', async (t) => {
    const asked = Date.now();
    const first = await requestOn(t, a);
    const second = await requestOn(t, a);
    await sleep(1000);
    t.equal(await stateOn(owner, first), 'pending', 'the first is pending while it hangs');

    const one = await watch(all, first, asked, 2 * LIMIT_MS + 60_000);
    for (const n of all) {
      t.equal(one.get(n)?.state, 'failed', `${n} shows the first failed`);
      const after = one.get(n)?.after ?? Infinity;
      t.ok(
        after >= LIMIT_MS && after <= LIMIT_MS + WRITE_MS,
        `${n}: failed ${after} ms after it was asked for (limit ${LIMIT_MS})`,
      );
    }
    t.ok(await gone(`export.${first}`, WRITE_MS), 'its runner key is given back');

    const two = await watch(all, second, asked, 2 * LIMIT_MS + 60_000);
    for (const n of all) {
      t.equal(two.get(n)?.state, 'failed', `${n} shows the second failed`);
      // It ran (its own limit) only once the first had been failed.
      const after = two.get(n)?.after ?? Infinity;
      t.ok(
        after >= 2 * LIMIT_MS && after <= 2 * LIMIT_MS + 2 * WRITE_MS,
        `${n}: failed ${after} ms after it was asked for (twice the limit)`,
      );
    }
    t.ok(await gone(`export.${second}`, WRITE_MS), 'its runner key is given back');
    // The realm's owner never failed either as orphaned: their node renewed their keys.
    t.equal(await leaseHolder(rec, 1), owner, 'the realm kept its owner');
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
