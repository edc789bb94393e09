/**
 * A cluster node's link to NATS (docs/cluster.md): its options, its names, this process's
 * incarnation, and the JetStream handles every part of the node uses (the log writer and applier,
 * the lease keeper, the forwarder: node.ts composes them). Opened before the server builds what
 * depends on it (the replicated uploads, the export runs), so that nothing is wired afterwards.
 */
import crypto from 'node:crypto';
import type { JetStreamClient, JetStreamManager, KV, NatsConnection, ObjectStore } from 'nats';
import { ExportRuns } from './export-runs.js';
import { ID_BLOCK_SIZE } from './id-blocks.js';
import {
  clusterNames,
  connectionCheck,
  connectJetStream,
  followPayloadFloor,
  JETSTREAM_TIMEOUT_MS,
  leaderReads,
  patiently,
  sharedTemporaryUrlKey,
  type ClusterNames,
} from './jetstream.js';

export type ClusterOptions = {
  /** NATS server URLs (any of the cluster's servers). */
  servers: string[];
  /** This node's name: letters and digits; queue ids start with it. */
  node: string;
  /** JetStream replicas of the log and the lease bucket (the NATS cluster's size, at most 5). */
  replicas: number;
  /** Prefix of the stream, buckets and subjects (clusterNames); default none. */
  namespace?: string;
  /** Lease time (ms): how long an owner that stopped renewing keeps a realm. Default 3000. */
  leaseMs?: number;
  /** A node owning no realm writes a snapshot after this many log entries; default 10,000. */
  snapshotEvery?: number;
  /**
   * How long a request on a node that does not own its realm waits for this node to apply what the
   * log held when it arrived (the read barrier, read-barrier.ts) before it is answered 503;
   * default 5000 (CLUSTER_READ_BARRIER_MS).
   */
  readBarrierMs?: number;
  /**
   * How long a write forwarded to the realm's owner waits for the owner to say it received it
   * before it is answered 503 with Retry-After (forwarding.ts); default 1000
   * (CLUSTER_FORWARD_ACK_MS).
   */
  forwardAckMs?: number;
  /** Where the snapshot file is written before it is uploaded (DATA_DIR/tmp). */
  tmpDir?: string;
  /**
   * How long the log keeps entries for a node that stopped reporting its position (docs/cluster.md
   * "Catch-up"); one away longer starts from a snapshot. Default 5 minutes.
   */
  trimGraceMs?: number;
  /** What to do when this node must stop (its database holds commits the log refused). */
  fatal?: (reason: string) => void;
  /**
   * Ids per block of a realm's new-row ids (id-blocks.ts); default 65,536. Nodes may differ
   * (claims count ids); small blocks are for tests.
   */
  idBlockSize?: number;
  /**
   * How long a subdomain reservation whose realm has not appeared in the log is waited for before
   * another node may take it over (subdomains.ts); default 60 s.
   */
  reservationTimeoutMs?: number;
  /**
   * Run on a nats-server older than 2.9.21 (CLUSTER_ALLOW_UNSAFE_NATS=1), whose expected-sequence
   * checks can let two racing writes through; without it the node refuses to join on one
   * (connectJetStream, docs/cluster.md "NATS version").
   */
  allowUnsafeNats?: boolean;
  /**
   * How long this node's copy may stay behind the log without applying anything before its
   * consumer is made again (log-applier.ts "progress watch"); default 5000.
   */
  stallMs?: number;
  /** How long such a stall may last before the node stops, for its supervisor; default 120 s. */
  stallExitMs?: number;
};

/** The handles and names every part of a node shares. */
export type ClusterLink = {
  readonly opts: ClusterOptions;
  readonly names: ClusterNames;
  readonly node: string;
  /** This process's incarnation: entries it wrote carry it (a restarted node is another). */
  readonly incarnation: string;
  readonly leaseMs: number;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /**
   * The lease bucket, with the JetStream client's usual patience; read through its stream leader
   * (jetstream.ts leaderReads), as `leaseKv` is.
   */
  readonly kv: KV;
  /**
   * The same bucket for lease renewals: asked with a timeout of a third of the lease time (a
   * renewal answered later renews nothing; the next one is due).
   */
  readonly leaseKv: KV;
  /** Uploaded files (src/cluster/uploads.ts). */
  readonly files: ObjectStore;
  readonly snapshots: ObjectStore;
  /** Signs temporary upload URLs: the same on every node (sharedTemporaryUrlKey). */
  readonly temporaryUrlKey: Buffer;
  /** Which node runs each realm export under way (export-runs.ts). */
  readonly exportRuns: ExportRuns;
  /**
   * Call when a request went unanswered: a server that does not answer a ping at once is left for
   * another (jetstream.ts connectionCheck).
   */
  readonly checkConnection: () => void;
};

/**
 * Connects to NATS as this node, makes sure the log stream and the buckets exist, and reads the
 * cluster's temporary-URL key.
 */
export async function openLink(opts: ClusterOptions): Promise<ClusterLink> {
  if (!/^[a-z0-9]{1,16}$/i.test(opts.node)) throw new Error(`bad node name ${opts.node}`);
  const blockSize = opts.idBlockSize ?? ID_BLOCK_SIZE;
  if (!Number.isSafeInteger(blockSize) || blockSize < 1)
    throw new Error(`bad id block size ${opts.idBlockSize}`);
  const names = clusterNames(opts.namespace);
  const { nc, js, jsm, kv, files, snapshots } = await connectJetStream({ ...opts, names });
  try {
    const temporaryUrlKey = await sharedTemporaryUrlKey(kv);
    const leaseMs = opts.leaseMs ?? 3000;
    // Binding asks JetStream for the account's info: asked again while it does not answer yet.
    // Its reads go through the bucket's stream leader (leaderReads), never a lagging replica.
    const leaseKv = await patiently(() =>
      leaderReads(
        nc.jetstream({ timeout: Math.min(JETSTREAM_TIMEOUT_MS, Math.max(500, leaseMs / 3)) }),
        names,
      ),
    );
    const incarnation = crypto.randomBytes(6).toString('hex');
    // Each server it reconnects to is checked as the first was (max_payload's floor).
    void followPayloadFloor(nc, (line) => console.error(`cluster ${opts.node}: ${line}`));
    return {
      opts,
      names,
      node: opts.node,
      incarnation,
      leaseMs,
      nc,
      js,
      jsm,
      kv,
      leaseKv,
      files,
      snapshots,
      temporaryUrlKey,
      exportRuns: new ExportRuns(kv, opts.node, incarnation, leaseMs),
      checkConnection: connectionCheck(nc, (line) =>
        console.error(`cluster ${opts.node}: ${line}`),
      ),
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
