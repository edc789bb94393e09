/**
 * A forwarded write when the forwarding node's own NATS server freezes (src/cluster/forwarding.ts),
 * against two real nats-servers in one cluster (skipped when nats-server is not installed). The
 * forwarding node is connected as a cluster node is (connectNode, its connection checked as a
 * node's: connectionCheck); the owner, to the other server.
 *
 * - Received by the owner, then the forwarding node's server freezes, then the owner answers: the
 *   answer goes to the frozen server and is lost there. The forwarding node leaves the frozen
 *   server and asks again as a repeat; the owner answers with what the command came to, without
 *   running it again. (Before: nothing asked again, the client got 503 after the answer's 8 s, its
 *   write done.)
 * - Sent after the forwarding node's server froze: sent again once the connection has moved, and
 *   answered by the owner (the wait to be received given here is long, so that the answer does not
 *   depend on how soon the frozen server is left).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import t, { type Test } from 'tap';
import { Forwarder } from '../../src/cluster/forwarding.js';
import { clusterNames, connectionCheck, connectNode } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import {
  alive,
  frozen,
  listens,
  missingEngines,
  ports,
  sleep,
  startNatsServers,
  waitFor,
} from '../../src/cluster/local.js';
import type { EventQueues } from '../../src/delivery/publisher.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

const names = clusterNames();

function forwarder(
  nc: NatsConnection,
  opts: { owns: boolean; runHere?: (payload: unknown) => Promise<unknown>; ackMs?: number },
): Forwarder {
  const link = {
    nc,
    names,
    node: opts.owns ? 'n1' : 'n2',
    checkConnection: connectionCheck(nc, (line) => t.comment(line)),
  } as unknown as ClusterLink;
  return new Forwarder({
    link,
    queues: {} as EventQueues,
    owns: () => opts.owns,
    runHere: (_realm, _type, payload) =>
      (opts.runHere ?? (() => Promise.reject(new Error('not here'))))(payload),
    position: () => 0,
    waitApplied: () => Promise.resolve(),
    ...(opts.ackMs !== undefined ? { ackMs: opts.ackMs } : {}),
  });
}

t.test("the forwarding node's own NATS server frozen", async (t) => {
  if (missing) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forwarding-frozen-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  const [c1, c2, r1, r2] = await ports(4);
  const servers = startNatsServers(dir, [c1!, c2!], [r1!, r2!]);
  const urls = servers.map((s) => `nats://127.0.0.1:${s.port}`);
  t.teardown(async () => {
    for (const s of servers)
      if (alive(s.pid)) {
        process.kill(s.pid, 'SIGCONT');
        process.kill(s.pid, 'SIGKILL');
      }
    while (servers.some((s) => alive(s.pid))) await sleep(50);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await waitFor('nats-server', async () => (await listens(c1!)) && listens(c2!));

  /** A forwarding node on the first server, the owner on the second; the first frozen later. */
  async function pair(t: Test) {
    const asking = await connectNode(urls, 'n2');
    const mine = servers.find((s) => asking.getServer().endsWith(`:${s.port}`))!;
    const other = servers.find((s) => s !== mine)!;
    const owning = await connect({ servers: `nats://127.0.0.1:${other.port}` });
    t.teardown(async () => {
      if (alive(mine.pid)) process.kill(mine.pid, 'SIGCONT');
      await Promise.all([asking.close(), owning.close()]);
    });
    // The routes carry each side's interest to the other.
    const probe = owning.subscribe('probe', { callback: (_e, m) => m.respond(new Uint8Array()) });
    await owning.flush();
    await waitFor('the route', () =>
      asking.request('probe', new Uint8Array(), { timeout: 200 }).then(
        () => true,
        () => false,
      ),
    );
    probe.unsubscribe();
    return { asking, owning, mine };
  }

  await t.test('received, then its server froze: asked again, run once', async (t) => {
    const { asking, owning, mine } = await pair(t);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let runs = 0;
    let began = false;
    const owner = forwarder(owning, {
      owns: true,
      runHere: async (payload) => {
        runs++;
        began = true;
        await held;
        return payload;
      },
    });
    owner.serve(1);
    await owning.flush();
    // A long wait to be received: should the "received" not have reached this node before the
    // freeze, the write is sent again once connected elsewhere, and answered all the same.
    const f = forwarder(asking, { owns: false, ackMs: 60_000 });
    const result = f.forward(1, 'send', { content: 'held' }).then(
      (v) => ({ ok: true, v }),
      (e: unknown) => ({ ok: false, v: e }),
    );
    await waitFor('the owner to run it', () => began);
    await sleep(100); // its "received" on the way back
    process.kill(mine.pid, 'SIGSTOP');
    // kill returns before the server's threads have stopped: one still running would pass the
    // answer on (seen once in CI: answered in 0.4 s through the "frozen" server).
    await waitFor('the server to stop', () => frozen(mine.pid));
    release(); // the answer goes to the frozen server
    const r = await result;
    t.same(r, { ok: true, v: { content: 'held' } }, "the owner's answer, not a 503");
    t.equal(runs, 1, 'run once');
    t.notOk(asking.getServer().endsWith(`:${mine.port}`), 'connected to the other server');
    owner.close();
    f.close();
  });

  await t.test('sent after its server froze: sent again from the next server', async (t) => {
    const { asking, owning, mine } = await pair(t);
    let runs = 0;
    const owner = forwarder(owning, {
      owns: true,
      runHere: (payload) => {
        runs++;
        return Promise.resolve(payload);
      },
    });
    owner.serve(1);
    await owning.flush();
    const f = forwarder(asking, { owns: false, ackMs: 60_000 });
    t.same(await f.forward(1, 'send', { n: 1 }), { n: 1 }, 'through the first server');
    process.kill(mine.pid, 'SIGSTOP');
    await waitFor('the server to stop', () => frozen(mine.pid));
    t.same(await f.forward(1, 'send', { n: 2 }), { n: 2 }, 'its server frozen: answered');
    t.equal(runs, 2, 'each run once');
    owner.close();
    f.close();
  });
});
