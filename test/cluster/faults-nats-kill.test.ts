/**
 * NATS servers SIGKILLed under load (docs/cluster.md "Faults"): the log stream leader's server,
 * the server the realm's owner is connected to, and two servers of three; each killed while three
 * clients send (retrying with the same local id), a reader asks every node for the newest
 * acknowledged message and a queue on every node collects events, then started again. After
 * each, the invariants of test/helpers/cluster-faults.ts. Skipped without nats-server or nginx.
 */
import t from 'tap';
import { clusterNames } from '../../src/cluster/jetstream.js';
import { nodePid, readRecord, signalNats, startNatsAgain } from '../../src/cluster/local.js';
import { clusterRealmFixture } from '../helpers/cluster-fixture.js';
import {
  checkScenario,
  natsServerOf,
  ownerNode,
  prepareFaults,
  runScenario,
  sleep,
  streamLeader,
  whole,
  within,
} from '../helpers/cluster-faults.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

t.setTimeout(600_000);
await runWithEngines(run);

async function run(): Promise<void> {
  const { dir, rec } = await upForTest('faults-nats-kill', {}, { supervise: true });
  const fx = await clusterRealmFixture(rec.url, {}, rec.owner, 1);
  await prepareFaults(rec, fx);

  /** Kills `servers`, holds the fault until writes resume (or `holdMs`), starts them again. */
  const killAndRestart = async (topic: string, pick: () => Promise<number[]>, holdMs: number) => {
    await whole(rec);
    const servers = await pick();
    return runScenario(rec, fx, topic, async (mark) => {
      for (const n of servers) await signalNats(dir, n, 'SIGKILL');
      mark.injected();
      await sleep(holdMs);
      for (const n of servers) await startNatsAgain(dir, n);
      mark.repaired();
    });
  };

  t.test("SIGKILL of the log stream leader's NATS server", async (t) => {
    const o = await killAndRestart(
      'kill-leader',
      async () => [await streamLeader(rec, clusterNames().stream)],
      10_000,
    );
    await checkScenario(t, rec, fx, 'kill-leader', o, { nodesKept: true, resumeWithinMs: 20_000 });
  });

  t.test("SIGKILL of the owner's NATS server", async (t) => {
    const o = await killAndRestart(
      'kill-owners',
      async () => {
        const owner = await ownerNode(rec);
        const pid = nodePid(readRecord(dir), owner - 1);
        let server: number | null = null;
        await within(10_000, 'the owner connected to a NATS server', () => {
          server = natsServerOf(pid, rec);
          return server !== null;
        });
        return [server!];
      },
      10_000,
    );
    await checkScenario(t, rec, fx, 'kill-owners', o, { nodesKept: true, resumeWithinMs: 20_000 });
  });

  t.test('SIGKILL of two NATS servers of three', async (t) => {
    const o = await killAndRestart(
      'kill-two',
      async () => {
        const leader = await streamLeader(rec, clusterNames().stream);
        return [leader, (leader % 3) + 1];
      },
      6000,
    );
    await checkScenario(t, rec, fx, 'kill-two', o, {
      nodesKept: true,
      resumeWithinMs: 30_000,
      pauseFromRepair: true,
    });
  });
}
