/**
 * The local cluster's nginx (src/cluster/local.ts startProxy) with the real nginx: a node that
 * was down when a request for one of its event queues came (the request went to a backup node)
 * and is up again gets that queue's requests back within a few seconds. With nginx's defaults
 * (max_fails=1 fail_timeout=10s) the restarted node was left out for 10 s, its queues' requests
 * answered by another node meanwhile (BAD_EVENT_QUEUE_ID: the client registers again).
 * test/unit/cluster-nginx-config.test.ts checks the configuration itself.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { binary, ports, startProxy } from '../../src/cluster/local.js';

const nginx = binary('nginx');

/**
 * How soon the node back up must be used again: not a speed, the line between the configured
 * fail_timeout (2 s, plus a loaded machine's delays) and nginx's default (10 s).
 */
const BACK_WITHIN_MS = 8000;

/** A stand-in node: answers every request with its name. */
async function node(t: Test, name: string, port: number): Promise<void> {
  const server = http.createServer((_req, res) => res.end(name));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

/** GET through the proxy: the body (the name of the node that answered), or the error. */
function ask(port: number, path: string): Promise<string> {
  return new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(res.statusCode === 200 ? text : `${res.statusCode}`));
      })
      .on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.on('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });
}

if (!fs.existsSync(nginx)) {
  t.plan(0, `nginx is not installed (${nginx}; apt-get install nginx): not tested`);
} else {
  t.test("a node back up gets its queues' requests again within seconds", async (t) => {
    const dir = t.testdir({ logs: {} });
    const [proxyPort, port1, port2] = await ports(3);
    // node1 down at first; node2, its backup, up.
    await node(t, 'node2', port2!);
    const pid = startProxy(dir, proxyPort!, [
      { name: 'node1', port: port1! },
      { name: 'node2', port: port2! },
    ]);
    t.teardown(() => {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    });
    for (const limit = Date.now() + 10_000; !(await listens(proxyPort!));) {
      if (Date.now() > limit)
        throw new Error(
          `nginx did not listen:\n${fs.readFileSync(path.join(dir, 'logs', 'nginx.log'), 'utf8')}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
    const queuePath = '/api/v1/events?queue_id=node1-1234';
    t.equal(await ask(proxyPort!, queuePath), 'node2', 'node1 down: its backup answers');
    const failedAt = Date.now();
    await node(t, 'node1', port1!);
    let answer = '';
    while (Date.now() - failedAt < BACK_WITHIN_MS + 1000) {
      answer = await ask(proxyPort!, queuePath);
      if (answer === 'node1') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const took = Date.now() - failedAt;
    t.equal(answer, 'node1', `node1 up again: its queue's requests go to it (after ${took} ms)`);
    t.ok(took < BACK_WITHIN_MS, `within ${BACK_WITHIN_MS} ms of the failure (${took} ms)`);
  });
}
