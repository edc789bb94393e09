/**
 * No stale read from a cut-off owner (issue 32's third defect; docs/cluster.md "Failover and
 * fencing", rule 4): a request on a node skips the read barrier only while that node acts as the
 * realm's owner (ClusterNode.owns, LogWriter.acts: it writes the realm and its lease is valid).
 * Before, an owner whose NATS server froze kept skipping the barrier — it had not heard that its
 * lease had passed to another node — and answered reads from its own copy while the new owner
 * acknowledged writes it did not have (6 of 6 reads stale over 13 s).
 *
 * Two nodes' lease keepers and log writers on a lease bucket played in memory with a simulated
 * clock (test/helpers/lease-world.ts); the takeover as node.ts does it (take, confirm, the writer
 * started, establish). Node a owns the realm; it is cut off from the bucket at some moment for
 * some time (its renewals unanswered, landing or not) while it keeps answering reads; b takes the
 * realm over when the rules let it and acknowledges writes while it acts as owner. At every
 * simulated step, a read on a that skips the barrier after b acknowledged a write is stale.
 */
import t from 'tap';
import type { ClusterLink } from '../../src/cluster/link.js';
import type { LeaseKeeper } from '../../src/cluster/lease-keeper.js';
import { LogWriter } from '../../src/cluster/log-writer.js';
import { LEASE, World } from '../helpers/lease-world.js';

/** One node: its keeper and its writer; a lost lease stops the writer, as ClusterNode.lose does. */
function node(w: World, name: string) {
  const keeper: LeaseKeeper = w.keeper(name, (realmId) => writer.stop(realmId));
  const writer: LogWriter = new LogWriter({
    link: { node: name, incarnation: name } as unknown as ClusterLink,
    store: {} as never,
    replication: {} as never,
    ids: {} as never,
    keeper,
    queues: { watchRegistrations: () => undefined } as never,
    die: () => undefined,
    deposed: (realmId) => writer.stop(realmId),
  });
  /** Takes the realm over if the rules let it (node.ts leaseTick, takeOver). */
  const tryTakeOver = async (realmId: number): Promise<boolean> => {
    if (keeper.holds(realmId) || (await keeper.tryTake(realmId)) === 0) return false;
    if ((await keeper.confirm(realmId)) === 0) return false;
    writer.start(realmId, 0, { close: () => undefined } as never);
    keeper.establish(realmId);
    return true;
  };
  return { keeper, writer, tryTakeOver };
}

type Run = { stale: number; barrierReads: number; bWrites: number };

/** One run: a owns, cut off from `cutAt` to `healAt` (ms) with its writes landing or not. */
async function run(cutAt: number, healAt: number, landing: 'lost' | 'landed'): Promise<Run> {
  const w = new World();
  const a = node(w, 'a');
  const b = node(w, 'b');
  if (!(await a.tryTakeOver(1))) throw new Error('a could not take the free realm');
  const out: Run = { stale: 0, barrierReads: 0, bWrites: 0 };
  let bAcked = -1; // when b first acknowledged a write a's copy lacks
  const tick = LEASE / 3;
  for (w.now = 0; w.now < 15_000; w.now += 50) {
    if (w.now === cutAt) w.cutOff.set('a', landing);
    if (w.now === healAt) w.cutOff.delete('a');
    if (w.now % tick < 50) {
      await a.keeper.renewAll();
      if (b.writer.writes(1)) await b.keeper.renewAll();
      else await b.tryTakeOver(1);
    }
    // b writes while it acts as owner (its batches go to the log only then: LogWriter.seal).
    if (b.writer.acts(1)) {
      out.bWrites++;
      if (bAcked < 0) bAcked = w.now;
    }
    // A read on a (a cut-off node still answers HTTP): from its copy only while it acts as owner.
    if (a.writer.acts(1)) {
      if (bAcked >= 0) out.stale++;
    } else out.barrierReads++;
  }
  return out;
}

t.test(
  'a cut-off owner stops answering reads from its copy before another node writes',
  async (t) => {
    // The case: a's NATS server frozen from 1 s on for 13 s; b takes over meanwhile.
    const frozen = await run(1000, 14_000, 'lost');
    t.ok(frozen.bWrites > 0, `b took the realm over and wrote (${frozen.bWrites} steps)`);
    t.ok(frozen.barrierReads > 0, "a's reads went through the read barrier");
    t.equal(frozen.stale, 0, 'no read on a skipped the barrier once b had acknowledged a write');

    // Cut off at every moment of a lease tick and for many lengths, its renewals landing or not.
    let takeovers = 0;
    const stale: string[] = [];
    for (const landing of ['lost', 'landed'] as const)
      for (let cutAt = 1000; cutAt < 2000; cutAt += 150)
        for (let held = 500; held <= 10_000; held += 950) {
          const r = await run(cutAt, cutAt + held, landing);
          if (r.bWrites > 0) takeovers++;
          if (r.stale > 0) stale.push(`cut ${cutAt}+${held} ms (${landing}): ${r.stale} stale`);
        }
    t.ok(takeovers > 0, `b took over in ${takeovers} runs`);
    t.same(stale.slice(0, 5), [], 'no stale read in any run');
  },
);
