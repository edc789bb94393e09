/**
 * A cluster node (src/cluster/main.ts) given a bad setting says so as the single-process server
 * does (src/main.ts, SettingsError): one line on stderr naming the setting, no stack trace, and a
 * non-zero exit: 78 (EX_CONFIG), which its supervisor does not restart (supervise.ts). Before,
 * it printed the error's stack trace and exited 1. The settings are refused before the node
 * connects to NATS, so no NATS server is needed: the one named is never reached.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { nodeProcess } from '../helpers/cluster-node.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-settings-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/** A node's environment: valid but for `bad` (no NATS server listens on port 1). */
const env = (bad: Record<string, string>) => ({
  DATA_DIR: dataDir,
  PORT: '0',
  CLUSTER_NODE: 'n1',
  CLUSTER_NATS: 'nats://127.0.0.1:1',
  ...bad,
});

const cases: { bad: Record<string, string>; names: string }[] = [
  // Through the server's settings (src/config.ts configFromEnv), as every node's are.
  { bad: { SHUTDOWN_GRACE_MS: '90000' }, names: 'SHUTDOWN_GRACE_MS' },
  { bad: { PORT: 'eighty' }, names: 'PORT' },
  // The node's own.
  { bad: { CLUSTER_READ_BARRIER_MS: '-5' }, names: 'CLUSTER_READ_BARRIER_MS' },
  { bad: { CLUSTER_SEED: 'yes' }, names: 'CLUSTER_SEED' },
  { bad: { CLUSTER_NATS: '' }, names: 'CLUSTER_NATS' },
  // Numbers that were taken as given (NaN, 0, negative) before.
  { bad: { CLUSTER_REPLICAS: 'three' }, names: 'CLUSTER_REPLICAS' },
  { bad: { CLUSTER_REPLICAS: '7' }, names: 'CLUSTER_REPLICAS' },
  { bad: { CLUSTER_LEASE_MS: '3s' }, names: 'CLUSTER_LEASE_MS' },
  { bad: { CLUSTER_SNAPSHOT_EVERY: '0' }, names: 'CLUSTER_SNAPSHOT_EVERY' },
  { bad: { CLUSTER_TRIM_GRACE_MS: '-1' }, names: 'CLUSTER_TRIM_GRACE_MS' },
  { bad: { CLUSTER_ID_BLOCK_SIZE: '1.5' }, names: 'CLUSTER_ID_BLOCK_SIZE' },
  { bad: { CLUSTER_RESERVATION_TIMEOUT_MS: 'soon' }, names: 'CLUSTER_RESERVATION_TIMEOUT_MS' },
];

for (const { bad, names } of cases) {
  t.test(`${Object.entries(bad)[0]!.join('=')}`, async (t) => {
    const { code, output } = await nodeProcess(env(bad));
    const lines = output.trimEnd().split('\n');
    t.equal(code, 78, 'exit status 78 (EX_CONFIG)');
    t.equal(lines.length, 1, `one line: ${JSON.stringify(output)}`);
    t.match(lines[0], /^Confab node cannot start: bad environment: /, 'says it cannot start');
    t.match(lines[0], names, `names ${names}`);
    t.notMatch(output, /^\s+at /m, 'no stack trace');
  });
}
