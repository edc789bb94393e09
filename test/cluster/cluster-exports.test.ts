/**
 * Realm exports whose node stops (docs/cluster.md "Exports whose node stopped"), for real:
 * three NATS servers, three Confab node processes and nginx (src/cluster/local.ts), every export
 * held for EXPORT_HOLD_MS once started (CONFAB_TEST_EXPORT_DELAY_MS), so that its node can be
 * killed while it runs, with the default lease time.
 *   1. An export on a live node, held longer than a stopped node's export takes to be failed,
 *      succeeds and is never shown failed.
 *   2. An export whose node (not the realm's owner) is SIGKILLed is shown failed by the two other
 *      nodes within the stated time, and by its node once it is back; a new export can be made.
 *   3. The realm's owner SIGKILLed while it runs an export and another node runs one: the owner's
 *      is shown failed within the stated time (after the failover), the other succeeds.
 * Skipped when nats-server or nginx is not installed.
 */
import t from 'tap';
import { killNode, startNodeAgain } from '../../src/cluster/local.js';
import { assertSuccess } from '../helpers/api.js';
import { clusterExports, type Listed } from '../helpers/cluster-exports.js';
import { leaseHolder } from '../helpers/cluster-kv.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

/** The lease time (CLUSTER_LEASE_MS's default). */
const LEASE_MS = 3000;
/** docs/cluster.md: failed within twice the lease time after its node is gone, plus a write. */
const STATED_MS = 2 * LEASE_MS;
/** What a write (and, after a failover, the new owner's catch-up) may take on a loaded machine. */
const WRITE_MS = 5000;
const EXPORT_HOLD_MS = 12_000;

await runWithEngines(run);

async function run(): Promise<void> {
  // Three nodes and three NATS servers to start on two cores, then about 40 s of exports.
  t.setTimeout(360_000);
  const { dir, rec } = await upForTest('cluster-exports', {
    CLUSTER_LEASE_MS: String(LEASE_MS),
    CONFAB_TEST_EXPORT_DELAY_MS: String(EXPORT_HOLD_MS),
  });

  const { via, stateOn, requestOn, watch, gone } = clusterExports(rec);
  const number = (name: string) => Number(name.slice(1));

  const owner = await leaseHolder(rec, 1);
  const [a, b] = rec.nodes.map((n) => n.name).filter((n) => n !== owner) as [string, string];
  t.comment(`realm 1 is owned by ${owner}; the others are ${a} and ${b}`);

  t.test('an export running on a live node is never failed', async (t) => {
    const started = Date.now();
    const id = await requestOn(t, a);
    const { seen, everFailed } = await watch([owner, b], id, started, EXPORT_HOLD_MS + 60_000);
    t.notOk(everFailed, 'no node ever showed it failed');
    for (const n of [owner, b]) {
      t.equal(seen.get(n)?.state, 'succeeded', `${n} shows it succeeded`);
      t.ok((seen.get(n)?.after ?? 0) >= EXPORT_HOLD_MS, `${n}: after it was held`);
    }
    // Deleted by its node once the owner took the write: maybe after the others showed it.
    t.ok(await gone(`export.${id}`, WRITE_MS), 'its runner is no longer recorded');
  });

  t.test(
    'an export whose node is killed is failed on every node; a new one can be made',
    async (t) => {
      const id = await requestOn(t, b);
      await sleep(1000); // under way: marked started, held
      t.equal(await stateOn(owner, id), 'pending', 'pending while it runs');
      await killNode(dir, number(b), 'SIGKILL');
      const killed = Date.now();
      const { seen } = await watch([owner, a], id, killed, STATED_MS + 60_000);
      for (const n of [owner, a]) {
        t.equal(seen.get(n)?.state, 'failed', `${n} shows it failed`);
        const after = seen.get(n)?.after ?? Infinity;
        t.ok(after <= STATED_MS + WRITE_MS, `${n}: failed ${after} ms after its node was killed`);
      }
      await startNodeAgain(dir, number(b));
      t.equal(await stateOn(b, id), 'failed', `${b}, back, shows it failed`);
      // Counted among the five a week, as in a single process; the next is accepted (and run: 3).
      const list = await via(a).get('owner', 'export/realm');
      t.equal((assertSuccess(t, list, 'list').exports as Listed[]).length, 2, 'two exports so far');
    },
  );

  t.test(
    'the owner killed while it exports: its export failed, another node’s succeeds',
    async (t) => {
      const other = await requestOn(t, a);
      const mine = await requestOn(t, owner);
      await sleep(1000);
      await killNode(dir, number(owner), 'SIGKILL');
      const killed = Date.now();
      const failed = await watch([a, b], mine, killed, STATED_MS + 60_000);
      for (const n of [a, b]) {
        t.equal(failed.seen.get(n)?.state, 'failed', `${n} shows the owner's export failed`);
        const after = failed.seen.get(n)?.after ?? Infinity;
        t.ok(after <= STATED_MS + WRITE_MS, `${n}: failed ${after} ms after the owner was killed`);
      }
      const ran = await watch([a, b], other, killed, EXPORT_HOLD_MS + 60_000);
      t.notOk(ran.everFailed, `${a}'s export was never shown failed`);
      for (const n of [a, b]) t.equal(ran.seen.get(n)?.state, 'succeeded', `${n}: it succeeded`);
      t.not(await leaseHolder(rec, 1), owner, 'another node owns the realm');
    },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
