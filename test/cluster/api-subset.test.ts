/**
 * The project's own API tests for sending, fetching, editing, subscriptions, events (long-poll
 * and WebSocket) and uploads run through the front proxy of a three-node cluster (docs/cluster.md "Tests"):
 * each designated file in its own process with CONFAB_TEST_CLUSTER=1, where startServer() builds a
 * cluster for each test server (test/helpers/cluster-server.ts). One NATS cluster, started here,
 * serves every file (each test server has its own namespace in it). Skipped when nats-server or
 * nginx is not installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { alive, missingEngines } from '../../src/cluster/local.js';
import { startTestNats, withoutTapHooks } from '../helpers/cluster-server.js';

/** The designated files, and the environment each needs beyond cluster mode. */
const FILES: [string, Record<string, string>][] = [
  ['messages-send', {}],
  ['messages-fetch', {}],
  ['messages-edit', {}],
  ['subscriptions', {}],
  // These look into the queues of the test's own node (n1): new queues are placed there.
  ['events', { CONFAB_TEST_CLUSTER_QUEUES: 'n1' }],
  ['websocket', { CONFAB_TEST_CLUSTER_QUEUES: 'n1' }],
  // Its looks into n1's data directory, and the statuses of paths nginx refuses itself, are
  // skipped in cluster mode (their reasons are in the file).
  ['upload', {}],
];

const API_TESTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../api');

const missing = missingEngines();
if (missing) {
  t.plan(
    0,
    `${missing} is not installed (apt-get install -y nats-server nginx): cluster tests skipped`,
  );
} else {
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
  const plain = withoutTapHooks();
  for (const [name, env] of FILES) {
    t.spawn(
      process.execPath,
      [...plain.execArgv, path.join(API_TESTS, `${name}.test.js`)],
      {
        env: {
          ...plain.env,
          CONFAB_TEST_CLUSTER: '1',
          CONFAB_TEST_NATS: nats.urls.join(','),
          TAP_TIMEOUT: '600',
          ...env,
        },
      },
      `test/api/${name}.test.ts through a three-node cluster`,
    );
  }
}
