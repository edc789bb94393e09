/**
 * Runs designated API test files through the front proxy of a three-node cluster
 * (docs/cluster.md "Tests"): each file in its own process with CONFAB_TEST_CLUSTER=1, where
 * startServer() builds a cluster for each test server (./cluster-server.ts). One NATS cluster,
 * started here, serves the files (each test server has its own namespace in it). Skipped when
 * nats-server or nginx is not installed. The subset is split over two test files
 * (test/cluster/api-subset-*.test.ts) so that tap's two job slots share it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { alive, missingEngines } from '../../src/cluster/local.js';
import { startTestNats } from './cluster-server.js';
import { plainNode } from './plain-node.js';

/** A designated file of test/api, and the environment it needs beyond cluster mode. */
export type SubsetFile = [name: string, env: Record<string, string>];

const API_TESTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../api');

export async function runThroughCluster(t: Test, files: readonly SubsetFile[]): Promise<void> {
  const missing = missingEngines();
  if (missing) {
    t.plan(
      0,
      `${missing} is not installed (apt-get install -y nats-server nginx): cluster tests skipped`,
    );
    return;
  }
  // Each file's own timeout still applies to it; this one covers them all, one after another.
  t.setTimeout(20 * 60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-api-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  const nats = await startTestNats(dir);
  t.teardown(() => {
    for (const pid of nats.pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // Each file runs without tap's module hooks (twice as fast; these files mock nothing).
  for (const [name, env] of files) {
    const node = plainNode([path.join(API_TESTS, `${name}.test.js`)], {
      CONFAB_TEST_CLUSTER: '1',
      CONFAB_TEST_NATS: nats.urls.join(','),
      TAP_TIMEOUT: '600',
      ...env,
    });
    t.spawn(
      node.file,
      node.args,
      { env: node.env },
      `test/api/${name}.test.ts through a three-node cluster`,
    );
  }
}
