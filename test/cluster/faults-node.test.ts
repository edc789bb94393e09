/**
 * The realm's owner node SIGKILLed and frozen (SIGSTOP) under load (docs/cluster.md "Faults"):
 * three clients send through the proxy (retrying with the same local id), a reader asks every node
 * for the newest acknowledged message and a queue on every node collects events. The nodes run
 * under supervisors (src/cluster/supervise.ts): a killed owner is started again. A frozen owner
 * is thawed after twice the lease time: another node owns the realm by then, and the thawed one
 * must neither answer a stale read nor get a write acknowledged, nor stop. After each, the invariants of
 * test/helpers/cluster-faults.ts. Skipped without nats-server or nginx.
 */
import t from 'tap';
import { DEFAULT_FORWARD_ACK_MS } from '../../src/cluster/forwarding.js';
import fs from 'node:fs';
import { killNode, nodePid, readRecord, signalNode } from '../../src/cluster/local.js';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.js';
import { clusterRealmFixture } from '../helpers/cluster-fixture.js';
import {
  checkScenario,
  ownerNode,
  prepareFaults,
  runScenario,
  sleep,
  whole,
} from '../helpers/cluster-faults.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

t.setTimeout(600_000);
await runWithEngines(run);

async function run(): Promise<void> {
  // A forwarded write's default wait to be received (1 s; the harness's 30 s elsewhere): a
  // frozen server or owner loses forwarded writes, answered 503 and sent again by the clients.
  const { dir, rec } = await upForTest(
    'faults-node',
    { CLUSTER_FORWARD_ACK_MS: String(DEFAULT_FORWARD_ACK_MS) },
    { supervise: true },
  );
  const fx = await clusterRealmFixture(rec.url, {}, rec.owner, 1);
  await prepareFaults(rec, fx);

  t.test('a supervised node runs with the server flags of npm start', async (t) => {
    await whole(rec);
    const now = readRecord(rec.dir);
    for (const [i, n] of now.nodes.entries()) {
      const args = fs.readFileSync(`/proc/${nodePid(now, i)}/cmdline`, 'utf8').split('\0');
      for (const flag of SERVER_NODE_FLAGS) t.ok(args.includes(flag), `${n.name}: ${flag}`);
    }
  });

  t.test('SIGKILL of the owner node', async (t) => {
    await whole(rec);
    const owner = await ownerNode(rec);
    const o = await runScenario(rec, fx, 'kill-owner', async (mark) => {
      await killNode(dir, owner);
      mark.injected();
      await sleep(5000);
      mark.repaired(); // its supervisor starts it again
    });
    await checkScenario(t, rec, fx, 'kill-owner', o, { nodesKept: false, resumeWithinMs: 20_000 });
  });

  t.test('SIGSTOP of the owner node for twice the lease time', async (t) => {
    await whole(rec);
    const owner = await ownerNode(rec);
    const o = await runScenario(rec, fx, 'stop-owner', async (mark) => {
      signalNode(dir, owner, 'SIGSTOP');
      mark.injected();
      await sleep(6000);
      signalNode(dir, owner, 'SIGCONT');
      mark.repaired();
      await sleep(3000);
    });
    // Thawed, it finds its lease taken: an append it had in flight, refused by the new owner's
    // marker, is taken back from its copy and it goes on as a non-owner (it stopped before).
    await checkScenario(t, rec, fx, 'stop-owner', o, { nodesKept: true, resumeWithinMs: 20_000 });
  });
}
