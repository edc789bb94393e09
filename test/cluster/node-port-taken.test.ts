/**
 * A local cluster's node whose port another process took after it was picked (src/cluster/local.ts
 * `up`): a node binds its port only once caught up with the log, so a port free at the pick can be
 * taken before (CI runs two test files at once). The node cannot listen, and under a supervisor it
 * was started again and again on that port, `up` waiting out its two minutes ("timed out waiting
 * for node n3", CI at cc4d78f). Now `up` sees it in the node's log, stops it and starts it on
 * another free port; the proxy, started once the nodes serve, uses the new one. Played with
 * --base-port's fixed ports, node 3's held by a server of the test's own. Skipped without
 * nats-server or nginx.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { answers, claimPort, down, ports, up } from '../../src/cluster/local.js';
import { reapOnExit, runWithEngines } from '../helpers/cluster-run.js';

t.setTimeout(300_000);
await runWithEngines(run);

/** Listens on `port` on loopback; null when it cannot (taken). */
function hold(port: number): Promise<net.Server | null> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(null));
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

/**
 * Ten consecutive ports free now (held meanwhile), for --base-port; they are let go, each claimed
 * for this process (claimPort: `up` binds them tens of seconds later, and another test's pick in
 * between would take one; `ports` claimed only the first).
 */
async function freeBlock(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const [base] = await ports(1);
    const held: net.Server[] = [];
    for (let i = 0; i < 10; i++) {
      const s = await hold(base! + i);
      if (s === null || !claimPort(base! + i)) {
        s?.close();
        break;
      }
      held.push(s);
    }
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
    if (held.length === 10) return base!;
  }
  throw new Error('no ten consecutive free ports');
}

async function run(): Promise<void> {
  // In a subtest: the root test, once it has a teardown, ends by itself when idle for three timer
  // turns (tap's rule), which a loaded machine's slow answer from a node can outlast (CI at 906dfd5:
  // 'assertion after automatic end').
  await t.test('a node whose port was taken is started on another', (t) => portTaken(t));
}

async function portTaken(t: Test): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-port-taken-'));
  const base = await freeBlock();
  // Ports: the proxy, three NATS clients, three routes, then the nodes: n3's is the last.
  const taken = base + 9;
  const squatter = await hold(taken);
  t.ok(squatter, `port ${taken} held by another process`);
  t.teardown(async () => {
    squatter?.close();
    await down(dir);
    if (t.passing()) fs.rmSync(dir, { recursive: true, force: true });
    else console.error(`# the cluster's files and logs are kept in ${dir}`);
  });
  const rec = await up({
    dir,
    nodes: 3,
    basePort: base,
    supervise: true,
    env: { RATE_LIMITING: 'off' },
  });
  reapOnExit(dir);
  const n3 = rec.nodes[2]!;
  t.not(n3.port, taken, `n3 started on another port (${n3.port})`);
  t.ok(await answers(`http://127.0.0.1:${n3.port}/api/v1/server_settings`), 'n3 serves there');
  const log = fs.readFileSync(path.join(dir, 'logs', 'n3.log'), 'utf8');
  t.match(log, `cannot listen on 127.0.0.1:${taken}`, 'its first start could not listen');
  const conf = fs.readFileSync(path.join(dir, 'nginx.conf'), 'utf8');
  // A server line: the address, then its parameters (fail_timeout=…) or the end of the line.
  const serverLine = (port: number) => new RegExp(`server 127\\.0\\.0\\.1:${port}[ ;]`);
  t.match(conf, serverLine(n3.port), 'the proxy sends to its new port');
  t.notMatch(conf, serverLine(taken), 'not to the taken one');
  t.ok(await answers(`${rec.url}/api/v1/server_settings`), 'the proxy answers');
}
