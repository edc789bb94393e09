/**
 * A single cluster node for tests of what a node does on NATS servers of their own (no `up`):
 * in this process (nodeInProcess) or as a process of src/cluster/main.ts (nodeProcess). Used by
 * test/cluster/payload-floor.test.ts, first-entry-size.test.ts and unsafe-nats.test.ts.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Test } from 'tap';
import { localNatsIsUnsafe } from '../../src/cluster/local.js';
import type { ClusterOptions } from '../../src/cluster/node.js';
import { createServer, type ConfabServer } from '../../src/server.js';
import { DIST_SRC, plainNode } from './plain-node.js';
import { TEST_SERVER_OPTIONS } from './server.js';

/**
 * Node n`serial` in this process on the NATS server `url` (one replica), its data in
 * `dir`/n`serial`, its streams and buckets under `namespace`, closed at `t`'s teardown. Its lease
 * and read barrier are a minute and 30 s: the test's own steps hold this process's event loop.
 */
export async function nodeInProcess(
  t: Test,
  opts: {
    url: string;
    dir: string;
    serial: number;
    namespace: string;
    extra?: Partial<ClusterOptions>;
  },
): Promise<{ server: ConfabServer; dataDir: string }> {
  const dataDir = path.join(opts.dir, `n${opts.serial}`);
  const server = await createServer({
    ...TEST_SERVER_OPTIONS,
    dataDir,
    queueIdPrefix: `n${opts.serial}-`,
    cluster: {
      servers: [opts.url],
      node: `n${opts.serial}`,
      replicas: 1,
      namespace: opts.namespace,
      leaseMs: 60_000,
      readBarrierMs: 30_000,
      allowUnsafeNats: localNatsIsUnsafe(),
      ...opts.extra,
    },
  });
  t.teardown(() => server.close());
  return { server, dataDir };
}

/**
 * A cluster node process (src/cluster/main.ts) with `env`: its exit status and output once it
 * exits (SIGKILLed after a minute), or, given `serving`, once its output matches it (then it is
 * stopped, and its status is null).
 */
export function nodeProcess(
  env: Record<string, string>,
  serving?: RegExp,
): Promise<{ code: number | null; output: string }> {
  const node = plainNode([path.join(DIST_SRC, 'cluster', 'main.js')], env);
  const child = spawn(node.file, node.args, { env: node.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => {
    const seen = (c: Buffer) => {
      output += c.toString();
      if (serving?.test(output)) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.once('exit', () => resolve({ code: null, output }));
        child.kill('SIGTERM');
        serving = undefined;
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
