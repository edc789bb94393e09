/**
 * One Confab node of a cluster (docs/cluster.md), as `npm run cluster` starts it; configured like
 * `npm start` (PORT, HOST, DATA_DIR, EXTERNAL_HOST, ...) plus:
 *   CLUSTER_NODE       this node's name (letters and digits; queue ids start with it)
 *   CLUSTER_NATS       NATS server URLs, comma-separated
 *   CLUSTER_REPLICAS   JetStream replicas of the log and the leases (default 3)
 *   CLUSTER_LEASE_MS   lease time (default 3000)
 *   CLUSTER_READ_BARRIER_MS  how long a request on a node not owning its realm waits for the node
 *                      to apply what the log held when it arrived before it is answered 503
 *                      (default 5000; docs/cluster.md "Guarantees")
 *   CLUSTER_FORWARD_ACK_MS  how long a write forwarded to the realm's owner waits for the owner to
 *                      say it received it before it is answered 503 with Retry-After (default 1000)
 *   CLUSTER_SNAPSHOT_EVERY  log entries between snapshots (default 10000)
 *   CLUSTER_TRIM_GRACE_MS   how long the log waits for a node that stopped reporting before
 *                      trimming what it would need (default 300000); it then starts from a snapshot
 *   CLUSTER_ID_BLOCK_SIZE  ids per block of a realm's new-row ids (default 65536; nodes may differ)
 *   CLUSTER_RESERVATION_TIMEOUT_MS  how long a new realm's subdomain reservation waits for the
 *                      realm to appear in the log before another node may take it (default 60000)
 *   CLUSTER_NAMESPACE  a prefix for the cluster's stream, buckets and subjects (default none), for
 *                      clusters sharing one NATS cluster
 *   CLUSTER_BOOTSTRAP  a file: on an empty cluster, this node creates the first realm and writes
 *                      its owner's credentials there (JSON)
 *   CONFAB_TEST_EXPORT_DELAY_MS  tests only: each realm export waits this long once started
 *   CLUSTER_SEED=1     move DATA_DIR's single-process database onto the cluster, whose log must be
 *                      empty (src/cluster/seed.ts; docs/cluster.md "Moving an existing server
 *                      onto a cluster")
 *   CLUSTER_ALLOW_UNSAFE_NATS=1  run on a nats-server older than 2.9.21 (with a warning), whose
 *                      fencing can let two racing writes through; without it the node refuses to
 *                      start on one (exit status 78; docs/cluster.md "NATS version")
 *   CLUSTER_TRACE=1    write a timestamped failover timeline to stderr (src/cluster/trace.ts;
 *                      docs/cluster.md "Faults")
 * A database holding commits the log never acknowledged (this node died as an owner between its
 * COMMIT and the ack), or older than what the log still holds (trimmed while the node was away,
 * or from before the cluster was seeded), is discarded and rebuilt from the newest snapshot and
 * the log before the node serves. A single-process database (never part of a cluster) is never
 * discarded: without CLUSTER_SEED, or when it cannot seed, the node refuses to start (exit status
 * 78, EX_CONFIG: starting it again changes nothing), as it does on another cluster's copy, and
 * on NATS servers whose max_payload is below 64 KiB (jetstream.ts MIN_MAX_PAYLOAD).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureFirstRealm } from '../bootstrap.js';
import { configFromEnv } from '../config.js';
import { SettingsError } from '../lib/settings-error.js';
import { createServer, type ConfabServer } from '../server.js';
import { stopOnSignals } from '../signals.js';
import { DataDirLock } from '../storage/data-lock.js';
import { openDatabase } from '../storage/db.js';
import { DATABASE_FILE } from '../storage/maintenance.js';
import { appliedPosition, hasUnackedCommits } from '../storage/replication.js';
import { ID_BLOCK_SIZE } from './id-blocks.js';
import { clusterNames, PayloadTooSmallError, UnsafeNatsError } from './jetstream.js';
import { TrimmedPastError } from './log-applier.js';
import { DEFAULT_FORWARD_ACK_MS } from './forwarding.js';
import { DEFAULT_READ_BARRIER_MS } from './read-barrier.js';
import { CopyRefusedError, prepareCopy, type Prepared } from './seed.js';
import { DEFAULT_TRIM_GRACE_MS } from './trim.js';
import { restoreSnapshot } from './snapshot.js';
import { DEFAULT_RESERVATION_TIMEOUT_MS } from './subdomains.js';

/**
 * A node refused to start on its data directory or its NATS server: a supervisor should not start
 * it again as is.
 */
const EX_CONFIG = 78;

/**
 * How many times a start is made in this process when the log is found trimmed past the copy
 * while the node starts (each from the newest snapshot); after the last, the node exits as a node
 * that cannot follow the log does (status 75), for its supervisor.
 */
const START_ATTEMPTS = 3;

/**
 * A whole number of the environment, `min` to `max` (`fallback` when unset or empty); anything
 * else is refused by name, before the node connects anywhere (it would become NaN: a lease or a
 * snapshot interval of NaN makes timers that fire at once, and a NaN block size no ids).
 */
function wholeNumber(name: string, fallback: number, min: number, max: number, unit = ''): number {
  const raw = (process.env[name] ?? '').trim();
  if (raw === '') return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new SettingsError(
      `bad environment: ${name} must be a whole number${unit} from ${min} to ${max}, not ${JSON.stringify(raw)}`,
    );
  return value;
}

/** A flag of the environment: unset, empty or `0` is off, `1` on; anything else is refused. */
function flag(name: string): boolean {
  const value = process.env[name] ?? '';
  if (!['', '0', '1'].includes(value))
    throw new SettingsError(`bad environment: ${name} must be 1 or 0`);
  return value === '1';
}

/**
 * Sets the database aside if it holds commits the log never acknowledged, if the log no longer
 * holds what comes after it (trimmed while this node was away: src/cluster/trim.ts), or if it is
 * from before the cluster was seeded (a node started empty before the seed: src/cluster/seed.ts).
 * Either way the node then starts from the newest snapshot and the log.
 */
function discardUnusableCopy(
  dataDir: string,
  { trimmed, seeded, gap }: Pick<Prepared, 'trimmed' | 'seeded' | 'gap'>,
): void {
  if (!fs.existsSync(path.join(dataDir, DATABASE_FILE))) return;
  const db = openDatabase(dataDir);
  const diverged = hasUnackedCommits(db);
  const applied = appliedPosition(db);
  db.close();
  let why: string;
  if (diverged) why = 'commits the log never acknowledged';
  else if (applied < trimmed) why = `at log position ${applied}, trimmed up to ${trimmed}`;
  else if (gap !== null)
    why = `at log position ${applied}, the log's next entry is ${gap} (trimmed)`;
  else if (applied < seeded) why = `at log position ${applied}, seeded at ${seeded}`;
  else return;
  const aside = setCopyAside(dataDir);
  console.error(`${dataDir}: ${why}; rebuilding (the copy is kept in ${aside})`);
}

/** Where a data directory's set-aside copies go (`<DATA_DIR>/discarded/<time>/`). */
const DISCARDED_DIR = 'discarded';

/**
 * How many set-aside copies a data directory keeps, the newest: each is a whole database, so the
 * disk they take stays bounded however often the node rebuilds.
 */
const DISCARDED_KEPT = 2;

/**
 * Moves the data directory's database (with its -wal, which may hold committed pages, and -shm)
 * to a new `<DATA_DIR>/discarded/<time>/`, for diagnosis, removing all but the newest
 * DISCARDED_KEPT there; the node then starts from the newest snapshot. Its new place.
 */
function setCopyAside(dataDir: string): string {
  const root = path.join(dataDir, DISCARDED_DIR);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  // The time in UTC, as it sorts (colons are no friends of some tools).
  const stamp = new Date().toISOString().replace(/:/g, '-');
  let dir = path.join(root, stamp);
  for (let i = 1; fs.existsSync(dir); i++) dir = path.join(root, `${stamp}-${i}`);
  fs.mkdirSync(dir, { mode: 0o700 });
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    const from = path.join(dataDir, `${DATABASE_FILE}${suffix}`);
    if (fs.existsSync(from)) fs.renameSync(from, path.join(dir, `${DATABASE_FILE}${suffix}`));
  }
  const older = fs.readdirSync(root).sort().slice(0, -DISCARDED_KEPT);
  for (const name of older) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  return dir;
}

async function main(): Promise<void> {
  process.umask(0o077);
  // A node's settings are its environment's (it reads no env file): the server's through
  // configFromEnv, as src/main.ts reads them, and the node's own below, all from `env`.
  const env = process.env;
  const config = configFromEnv(env);
  const node = process.env.CLUSTER_NODE ?? '';
  const servers = (process.env.CLUSTER_NATS ?? '').split(',').filter((s) => s !== '');
  if (node === '' || servers.length === 0)
    throw new SettingsError('bad environment: CLUSTER_NODE and CLUSTER_NATS are required');
  const namespace = process.env.CLUSTER_NAMESPACE ?? '';
  const names = clusterNames(namespace);
  // JetStream keeps at most 5 copies of a stream.
  const replicas = wholeNumber('CLUSTER_REPLICAS', 3, 1, 5);
  const leaseMs = wholeNumber('CLUSTER_LEASE_MS', 3000, 100, 600_000, ' of milliseconds');
  const snapshotEvery = wholeNumber('CLUSTER_SNAPSHOT_EVERY', 10_000, 1, 1e9);
  const trimGraceMs = wholeNumber(
    'CLUSTER_TRIM_GRACE_MS',
    DEFAULT_TRIM_GRACE_MS,
    0,
    86_400_000,
    ' of milliseconds',
  );
  const idBlockSize = wholeNumber('CLUSTER_ID_BLOCK_SIZE', ID_BLOCK_SIZE, 1, 1 << 30);
  const reservationTimeoutMs = wholeNumber(
    'CLUSTER_RESERVATION_TIMEOUT_MS',
    DEFAULT_RESERVATION_TIMEOUT_MS,
    1,
    86_400_000,
    ' of milliseconds',
  );
  const seed = flag('CLUSTER_SEED');
  const allowUnsafeNats = flag('CLUSTER_ALLOW_UNSAFE_NATS');
  const readBarrierMs = Number(process.env.CLUSTER_READ_BARRIER_MS ?? DEFAULT_READ_BARRIER_MS);
  // Not a number would be a budget of 0: every read on a node not owning its realm answered 503.
  if (!Number.isFinite(readBarrierMs) || readBarrierMs <= 0)
    throw new SettingsError(
      'bad environment: CLUSTER_READ_BARRIER_MS must be a positive number of milliseconds',
    );
  const forwardAckMs = Number(process.env.CLUSTER_FORWARD_ACK_MS ?? DEFAULT_FORWARD_ACK_MS);
  if (!Number.isFinite(forwardAckMs) || forwardAckMs <= 0)
    throw new SettingsError(
      'bad environment: CLUSTER_FORWARD_ACK_MS must be a positive number of milliseconds',
    );
  // One process at a time writes a data directory: a server or the admin tool running on it
  // would change what this node checks, seeds or discards.
  const lock = DataDirLock.acquire(config.dataDir, 'server');
  let server: ConfabServer;
  for (let attempt = 1; ; attempt++) {
    let prepared: Prepared;
    try {
      prepared = await prepareCopy({
        servers,
        names,
        node,
        replicas,
        dataDir: config.dataDir,
        seed,
        allowUnsafeNats,
      });
      discardUnusableCopy(config.dataDir, prepared);
      // Not on its own copy (none, or set aside): the node's reported position becomes the
      // snapshot's, no longer holding trims at the set-aside copy's.
      const restored = await restoreSnapshot(servers, names, config.dataDir, prepared.seeded, node);
      if (restored !== null) console.error(`started from the snapshot at log position ${restored}`);
    } catch (err) {
      lock.release();
      throw err;
    }
    try {
      server = await createServer({
        ...config,
        // The cluster's: external images in a message, signed by the node that rendered it (its
        // realm's owner), load through any node.
        imageProxyKey: prepared.imageProxyKey,
        lock,
        queueIdPrefix: `${node}-`,
        ...(process.env.CONFAB_TEST_EXPORT_DELAY_MS
          ? { exportStartDelayMs: Number(process.env.CONFAB_TEST_EXPORT_DELAY_MS) }
          : {}),
        cluster: {
          node,
          servers,
          namespace,
          replicas,
          leaseMs,
          readBarrierMs,
          forwardAckMs,
          snapshotEvery,
          trimGraceMs,
          tmpDir: path.join(config.dataDir, 'tmp'),
          idBlockSize,
          reservationTimeoutMs,
          allowUnsafeNats,
        },
      });
      break;
    } catch (err) {
      // The log was trimmed past this copy after prepareCopy looked (another node trimmed it in
      // between): the server made nothing that runs or listens (createServer closed what it had
      // opened), so the start is made again here, from the newest snapshot, rather than by a
      // supervisor after an exit. The copy cannot be swapped under a server that has it open: its
      // database handles, realm registry, read models and restored queues were built from it.
      if (!(err instanceof TrimmedPastError) || attempt >= START_ATTEMPTS) {
        lock.release();
        throw err;
      }
      const aside = setCopyAside(config.dataDir);
      console.error(
        `cluster ${node}: ${err.message} while it started: setting the copy aside (kept in ` +
          `${aside}) and starting again from the newest snapshot`,
      );
    }
  }
  const cluster = server.cluster!;
  const ownerFile = process.env.CLUSTER_BOOTSTRAP;
  if (ownerFile) {
    const creds = await cluster.bootstrap(() => ensureFirstRealm(server.store, config));
    if (creds) {
      // Whole or not at all: whoever waits for the file (src/cluster/local.ts `up`) reads it as
      // soon as it appears, and a plain write can be seen empty (a CI run failed on that).
      const partial = `${ownerFile}.${process.pid}.tmp`;
      fs.writeFileSync(
        partial,
        JSON.stringify({ email: creds.email, api_key: creds.api_key, password: creds.password }),
        { mode: 0o600 },
      );
      fs.renameSync(partial, ownerFile);
    }
  }
  // Before the announcement, which whoever started the node may answer with a signal at once.
  // No grace unless SHUTDOWN_GRACE_MS is set: the proxy in front of the nodes fails over on a
  // refused connection (a 503 from a stopping node would reach the client), and requests on kept
  // connections are still served. A proxy that retries a 503 elsewhere can have one.
  stopOnSignals(server, {
    graceMs: env.SHUTDOWN_GRACE_MS !== undefined ? config.shutdownGraceMs : 0,
  });
  console.log(`Confab node ${node} listening on ${server.url} (data: ${config.dataDir})`);
}

main().catch((err: unknown) => {
  if (err instanceof SettingsError) {
    // As the single-process server says it (src/main.ts): the setting and what is wrong with it,
    // on one line, no stack trace; EX_CONFIG, so that a supervisor does not start it again.
    console.error(`Confab node cannot start: ${err.message}`);
    process.exit(EX_CONFIG);
  }
  if (
    err instanceof CopyRefusedError ||
    err instanceof UnsafeNatsError ||
    err instanceof PayloadTooSmallError
  ) {
    console.error(`refusing to start: ${err.message}`);
    process.exit(EX_CONFIG);
  }
  if (err instanceof TrimmedPastError) {
    // As a node that finds the log trimmed past its copy once started (ClusterNode.die).
    console.error(`stopping: ${err.message}, again after ${START_ATTEMPTS} starts`);
    process.exit(75);
  }
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
