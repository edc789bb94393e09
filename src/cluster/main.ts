/**
 * One Confab node of a cluster (docs/cluster.md), as `npm run cluster` starts it; configured like
 * `npm start` (PORT, HOST, DATA_DIR, EXTERNAL_HOST, ...) plus:
 *   CLUSTER_NODE       this node's name (letters and digits; queue ids start with it)
 *   CLUSTER_NATS       NATS server URLs, comma-separated
 *   CLUSTER_REPLICAS   JetStream replicas of the log and the leases (default 3)
 *   CLUSTER_LEASE_MS   lease time (default 3000)
 *   CLUSTER_SNAPSHOT_EVERY  log entries between snapshots (default 10000)
 *   CLUSTER_NAMESPACE  a prefix for the cluster's stream, buckets and subjects (default none), for
 *                      clusters sharing one NATS cluster
 *   CLUSTER_BOOTSTRAP  a file: on an empty cluster, this node creates the first realm and writes
 *                      its owner's credentials there (JSON)
 * A database holding commits the log never acknowledged (this node died as an owner between its
 * COMMIT and the ack) is discarded and rebuilt from the log before the node serves.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureFirstRealm } from '../bootstrap.js';
import { configFromEnv } from '../config.js';
import { createServer } from '../server.js';
import { stopOnSignals } from '../signals.js';
import { openDatabase } from '../storage/db.js';
import { hasUnackedCommits } from '../storage/replication.js';
import { clusterNames } from './jetstream.js';
import { restoreSnapshot } from './snapshot.js';

function discardDivergedCopy(dataDir: string): void {
  if (!fs.existsSync(path.join(dataDir, 'confab.sqlite3'))) return;
  const db = openDatabase(dataDir);
  const diverged = hasUnackedCommits(db);
  db.close();
  if (!diverged) return;
  console.error(`${dataDir}: commits the log never acknowledged; rebuilding from the log`);
  for (const f of ['confab.sqlite3', 'confab.sqlite3-wal', 'confab.sqlite3-shm'])
    fs.rmSync(path.join(dataDir, f), { force: true });
}

async function main(): Promise<void> {
  process.umask(0o077);
  const config = configFromEnv();
  const node = process.env.CLUSTER_NODE ?? '';
  const servers = (process.env.CLUSTER_NATS ?? '').split(',').filter((s) => s !== '');
  if (node === '' || servers.length === 0)
    throw new Error('CLUSTER_NODE and CLUSTER_NATS are required');
  discardDivergedCopy(config.dataDir);
  const namespace = process.env.CLUSTER_NAMESPACE ?? '';
  const restored = await restoreSnapshot(servers, clusterNames(namespace), config.dataDir);
  if (restored !== null) console.error(`started from the snapshot at log position ${restored}`);
  const server = await createServer({
    ...config,
    queueIdPrefix: `${node}-`,
    cluster: {
      node,
      servers,
      namespace,
      replicas: Number(process.env.CLUSTER_REPLICAS ?? 3),
      leaseMs: Number(process.env.CLUSTER_LEASE_MS ?? 3000),
      snapshotEvery: Number(process.env.CLUSTER_SNAPSHOT_EVERY ?? 10_000),
      tmpDir: path.join(config.dataDir, 'tmp'),
    },
  });
  const cluster = server.cluster!;
  const ownerFile = process.env.CLUSTER_BOOTSTRAP;
  if (ownerFile) {
    const creds = await cluster.bootstrap(() => ensureFirstRealm(server.store, config));
    if (creds) {
      fs.writeFileSync(
        ownerFile,
        JSON.stringify({ email: creds.email, api_key: creds.api_key, password: creds.password }),
        { mode: 0o600 },
      );
    }
  }
  console.log(`Confab node ${node} listening on ${server.url} (data: ${config.dataDir})`);
  stopOnSignals(server);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
