/**
 * One real nats-server for a test (JetStream on, as the cluster's servers), in a new temporary
 * directory, killed and removed at the test's teardown: its client URL. For tests of one part of
 * the cluster against a real server (test/cluster/nats-write-now.test.ts, forwarding.test.ts,
 * consumer-recreate.test.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import {
  alive,
  listens,
  ports,
  sleep,
  startNatsServers,
  waitFor,
} from '../../src/cluster/local.js';

export async function oneNatsServer(t: Test, name: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  fs.mkdirSync(path.join(dir, 'logs'));
  const [client, route] = await ports(2);
  const servers = startNatsServers(dir, [client!], [route!]);
  t.teardown(async () => {
    for (const s of servers) if (alive(s.pid)) process.kill(s.pid, 'SIGKILL');
    while (servers.some((s) => alive(s.pid))) await sleep(50);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await waitFor('nats-server', () => listens(client!));
  return `nats://127.0.0.1:${client}`;
}
