/**
 * No silent stall (issue 32, defect 2; docs/cluster.md "The log and what a node applies"): the
 * NATS server a node not owning the realm is connected to (the one its log consumer's messages
 * come through) is SIGKILLed and kept down while three clients send through the proxy. That node
 * must go on applying the log while the server is still down: a message acknowledged after the
 * kill reaches a queue registered on it. (Before the progress watch, such a node applied nothing
 * until the server came back, its reads and polls answering 503 meanwhile.) Then the server is
 * started again and the invariants of test/helpers/cluster-faults.ts are checked. Every wait is
 * bounded and names what it waited for; nothing asserts how fast. Skipped without nats-server or
 * nginx.
 */
import t from 'tap';
import { nodePid, readRecord, signalNats, startNatsAgain } from '../../src/cluster/local.js';
import { clusterRealmFixture } from '../helpers/cluster-fixture.js';
import {
  ask,
  checkScenario,
  natsServerOf,
  ownerNode,
  prepareFaults,
  runScenario,
  sleep,
  whole,
  within,
} from '../helpers/cluster-faults.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

/** How long the node may take to apply a message sent while its server is down (a bound). */
const APPLY_WITHIN_MS = 60_000;

/** How long /metrics may take to count a dead server's copy of the log away (10 s after its death). */
const AWAY_WITHIN_MS = 40_000;

/** `confab_cluster_log_replicas_away` on a node's /metrics (null: not there, or not answered). */
async function replicasAway(url: string): Promise<number | null> {
  try {
    const r = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
    const m = /^confab_cluster_log_replicas_away (\d+)$/m.exec(await r.text());
    return m === null ? null : Number(m[1]);
  } catch {
    return null;
  }
}

t.setTimeout(600_000);
await runWithEngines(run);

async function run(): Promise<void> {
  const { dir, rec } = await upForTest('faults-stall', {}, { supervise: true });
  const fx = await clusterRealmFixture(rec.url, {}, rec.owner, 1);
  await prepareFaults(rec, fx);
  const reader = fx.users.othello!;
  const sender = fx.users.hamlet!;

  t.test("SIGKILL of a node's NATS server, kept down: the node goes on applying", async (t) => {
    await whole(rec);
    const owner = await ownerNode(rec);
    const node = [1, 2, 3].find((n) => n !== owner)!;
    const nodeUrl = `http://127.0.0.1:${rec.nodes[node - 1]!.port}`;
    const pid = nodePid(readRecord(dir), node - 1);
    let server: number | null = null;
    await within(10_000, `n${node} connected to a NATS server`, () => {
      server = natsServerOf(pid, rec);
      return server !== null;
    });
    // A queue on that node for the probe's topic, registered there before the fault.
    const q = await ask(nodeUrl, reader, 'POST', 'register', {
      event_types: JSON.stringify(['message']),
      narrow: JSON.stringify([
        ['channel', 'faults'],
        ['topic', 'stall-probe'],
      ]),
    });
    t.equal(q?.status, 200, `a queue on n${node}`);
    const queueId = q!.body.queue_id as string;
    let last = q!.body.last_event_id as number;
    const probe = `sent while nats${server!} is down`;
    let applied: string | null = null;
    let away: string | null = null;

    const o = await runScenario(rec, fx, 'stall', async (mark) => {
      await signalNats(dir, server!, 'SIGKILL');
      mark.injected();
      try {
        // A message acknowledged while the server is down (asked again until it is; its topic is
        // not the scenario's, so a copy from a retry changes nothing checked)...
        await within(APPLY_WITHIN_MS, 'the probe message acknowledged', async () => {
          const r = await ask(rec.url, sender, 'POST', 'messages', {
            type: 'stream',
            to: 'faults',
            topic: 'stall-probe',
            content: probe,
          });
          return r?.status === 200 && r.body.result === 'success';
        });
        // ... reaches the queue on the node while the server is still down.
        await within(APPLY_WITHIN_MS, `n${node} to apply the probe message`, async () => {
          const r = await ask(
            nodeUrl,
            reader,
            'GET',
            'events',
            { queue_id: queueId, last_event_id: last, dont_block: true },
            5000,
          );
          if (r?.status !== 200) return false;
          const evs = r.body.events as { id: number; message?: { content: string } }[];
          if (evs.length > 0) last = evs[evs.length - 1]!.id;
          return evs.some((e) => e.message?.content === probe);
        });
        applied = 'yes';
      } catch (err) {
        applied = (err as Error).message;
      }
      // /metrics (on the node, through another server) counts the dead server's copy away.
      try {
        await within(
          AWAY_WITHIN_MS,
          `n${node}'s /metrics to count a copy of the log away`,
          async () => ((await replicasAway(nodeUrl)) ?? 0) >= 1,
        );
        away = 'yes';
      } catch (err) {
        away = (err as Error).message;
      }
      await sleep(1000);
      await startNatsAgain(dir, server!);
      mark.repaired();
    });
    t.equal(
      applied,
      'yes',
      `n${node} applied a message sent while nats${server!} (its server) was down`,
    );
    t.equal(away, 'yes', `n${node}'s /metrics counted nats${server!}'s copy of the log away`);
    await checkScenario(t, rec, fx, 'stall', o, { nodesKept: true, resumeWithinMs: 20_000 });
    // With the server back and its copy current, none is away.
    await whole(rec);
    let now: number | null = null;
    await within(AWAY_WITHIN_MS, `n${node}'s /metrics to count no copy away`, async () => {
      now = await replicasAway(nodeUrl);
      return now === 0;
    }).catch(() => undefined);
    t.equal(
      now,
      0,
      `n${node}'s /metrics counts no copy of the log away once nats${server!} is back`,
    );
  });
}
