/**
 * A cluster node's shutdown grace (src/cluster/main.ts, docs/operations.md "Configuration"): a
 * node process (src/cluster/main.ts) on a nats-server of this file's own stops listening at once
 * on SIGTERM, answering no 503 (the proxy in front of the nodes fails over on a refused
 * connection), unless SHUTDOWN_GRACE_MS is set for it: then it answers new requests 503 for that
 * long, as a standalone server does, and only then refuses connections. (Before the setting, a
 * node always stopped at once: the second test failed.) Skipped without nats-server or nginx.
 */
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { localNatsIsUnsafe, missingEngines } from '../../src/cluster/local.js';
import { startChild, type ChildEnv } from '../helpers/child-server.js';
import { oneNatsServer } from '../helpers/one-nats.js';
import { DIST_SRC } from '../helpers/plain-node.js';

t.setTimeout(120_000);

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

/** A GET by a new connection: its status, or the connection's error code. */
function getOnce(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    http
      .get(url, { agent: new http.Agent() }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      })
      .on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** A node on `url`'s NATS, SIGTERMed once serving: what new requests got, and when (ms). */
async function stopNode(t: Test, url: string, name: string, env: ChildEnv) {
  const dataDir = path.join(t.testdir(), 'node');
  const node = await startChild(
    dataDir,
    {
      CLUSTER_NODE: 'n1',
      CLUSTER_NATS: url,
      CLUSTER_REPLICAS: '1',
      CLUSTER_NAMESPACE: `${name}${process.pid}`,
      CLUSTER_ALLOW_UNSAFE_NATS: localNatsIsUnsafe() ? '1' : '0',
      ...env,
    },
    path.join(DIST_SRC, 'cluster', 'main.js'),
  );
  t.teardown(() => void node.kill('SIGKILL'));
  t.equal(await getOnce(`${node.url}/health`), 200, 'serving before the signal');
  const signalled = Date.now();
  node.child.kill('SIGTERM');
  const seen: { at: number; outcome: number | string }[] = [];
  while (Date.now() - signalled < 20_000) {
    const outcome = await getOnce(`${node.url}/api/v1/server_settings`);
    seen.push({ at: Date.now() - signalled, outcome });
    if (outcome === 'ECONNREFUSED') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal((await node.exited).code, 0, 'exit status 0');
  return seen;
}

t.test('SHUTDOWN_GRACE_MS unset: a node stops listening at once, no 503', async (t) => {
  if (missing) return;
  const url = await oneNatsServer(t, 'node-grace-unset');
  const seen = await stopNode(t, url, 'unset', { SHUTDOWN_GRACE_MS: undefined });
  t.equal(seen.at(-1)?.outcome, 'ECONNREFUSED', 'the port refuses connections');
  // Loose: with the standalone default it would stay open 1.5 s.
  t.ok((seen.at(-1)?.at ?? Infinity) < 1000, `soon (${seen.at(-1)?.at} ms after the signal)`);
  t.same(
    seen.filter((s) => s.outcome === 503),
    [],
    'no request was answered 503',
  );
});

t.test('SHUTDOWN_GRACE_MS=2000 set for a node: 503 for about 2 s, then refused', async (t) => {
  if (missing) return;
  const graceMs = 2000;
  const url = await oneNatsServer(t, 'node-grace-set');
  const seen = await stopNode(t, url, 'set', { SHUTDOWN_GRACE_MS: String(graceMs) });
  const refused = seen.at(-1)!;
  t.equal(refused.outcome, 'ECONNREFUSED', 'the port refuses connections in the end');
  t.ok(refused.at >= graceMs - 100, `not before the grace (${refused.at} ms after the signal)`);
  t.ok(refused.at < graceMs + 5000, `soon after it (${refused.at} ms)`);
  // The first poll may come before the node has handled the signal (then it is served), and one
  // at the instant the listener closes may be reset (src/http/drain.ts).
  const during = seen.filter((s) => s.at >= 500 && s.at < graceMs - 300);
  t.ok(during.length > 0, `requests during the grace (${during.length})`);
  t.same(
    during.filter((s) => s.outcome !== 503),
    [],
    'each answered 503',
  );
});
