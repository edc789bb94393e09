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
import t from 'tap';
import { clusterExports } from '../helpers/cluster-exports.js';
import { leaseHolder } from '../helpers/cluster-kv.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

/** The exports' time limit (EXPORT_TIME_LIMIT, seconds). */
const LIMIT_S = 5;
const LIMIT_MS = LIMIT_S * 1000;
/** What a write (the export marked failed, its key deleted) may take on a loaded machine. */
const WRITE_MS = 5000;
/** Longer than the test: the runs hang. */
const HANG_MS = 60 * 60 * 1000;

await runWithEngines(run);

async function run(): Promise<void> {
  t.setTimeout(300_000);
  const { rec } = await upForTest('export-time-limit', {
    CONFAB_TEST_EXPORT_DELAY_MS: String(HANG_MS),
    EXPORT_TIME_LIMIT: String(LIMIT_S),
  });

  const { stateOn, requestOn, watch, gone } = clusterExports(rec);

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

    const { seen: one } = await watch(all, first, asked, 2 * LIMIT_MS + 60_000);
    for (const n of all) {
      t.equal(one.get(n)?.state, 'failed', `${n} shows the first failed`);
      const after = one.get(n)?.after ?? Infinity;
      t.ok(
        after >= LIMIT_MS && after <= LIMIT_MS + WRITE_MS,
        `${n}: failed ${after} ms after it was asked for (limit ${LIMIT_MS})`,
      );
    }
    t.ok(await gone(`export.${first}`, WRITE_MS), 'its runner key is given back');

    const { seen: two } = await watch(all, second, asked, 2 * LIMIT_MS + 60_000);
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
