/**
 * The NATS JetStream side of a cluster node (src/cluster/node.ts): the names of the log stream
 * and the buckets, the format of log entries, opening them, and one fenced append to a realm's
 * subject.
 */
import {
  connect,
  headers as natsHeaders,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type ObjectStore,
} from 'nats';
import { JsonableError } from '../lib/errors.js';
import type { OutboundEvent } from '../lib/events.js';
import { pack } from '../lib/pack.js';
import type { RowChange } from '../storage/replication.js';

export const STREAM = 'CONFAB_LOG';
export const LEASES = 'confab_leases';
export const UPLOADS = 'confab_uploads';
export const SNAPSHOTS = 'confab_snapshots';
/** The one object of the snapshot bucket: the newest copy; its description is its log position. */
export const SNAPSHOT_NAME = 'latest';
export const LOG_SUBJECT = 'confab.log';

/** One entry of the replicated log: a new owner's lease marker, or a committed batch. */
export type Entry =
  | { k: 'lease'; node: string; inc: string; term: number }
  | {
      k: 'batch';
      node: string;
      inc: string;
      term: number;
      changes: RowChange[];
      events: OutboundEvent[];
      ended: (readonly number[] | null)[];
    };

export class NotOwnerError extends JsonableError {
  constructor() {
    super('This realm is moving to another server; try again', {
      code: 'BAD_REQUEST',
      status: 503,
    });
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type JetStreamHandles = {
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  files: ObjectStore;
  snapshots: ObjectStore;
};

/**
 * How long a JetStream API call or publish may wait for its answer (nats.js's default is 5 s). A
 * busy machine running the NATS servers beside the nodes (the local cluster on 2 cores, under a
 * test suite) answers stream requests later than that while the cluster settles; a node that
 * gave up would exit at start.
 */
export const JETSTREAM_TIMEOUT_MS = 15_000;

/**
 * How long a node that is starting keeps asking a JetStream that does not answer in time (a
 * NATS cluster just started, or a busy machine) before it gives up and exits.
 */
export const STARTUP_PATIENCE_MS = 90_000;

/** Whether a NATS call failed only for want of an answer in time (or of a responder yet). */
export function isNoAnswer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'TIMEOUT' || code === '503';
}

/**
 * Runs a JetStream call of a node's start, again while it fails for want of an answer, until
 * STARTUP_PATIENCE_MS after `since`. Any other failure is passed on at once.
 */
export async function patiently<T>(fn: () => Promise<T>, since = Date.now()): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isNoAnswer(err) || Date.now() - since > STARTUP_PATIENCE_MS) throw err;
      await sleep(500);
    }
  }
}

/** Makes sure the log stream, the lease bucket and the object buckets exist; their handles. */
async function openJetStream(nc: NatsConnection, replicas: number): Promise<JetStreamHandles> {
  const jsm = await nc.jetstreamManager({ timeout: JETSTREAM_TIMEOUT_MS });
  try {
    await jsm.streams.info(STREAM);
  } catch {
    try {
      await jsm.streams.add({
        name: STREAM,
        subjects: [`${LOG_SUBJECT}.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        num_replicas: replicas,
        discard: DiscardPolicy.New,
        duplicate_window: 120_000_000_000,
      });
    } catch (err) {
      // Another node created it at the same moment.
      await jsm.streams.info(STREAM).catch(() => {
        throw err;
      });
    }
  }
  const js = nc.jetstream({ timeout: JETSTREAM_TIMEOUT_MS });
  const kv = await js.views.kv(LEASES, { history: 1, replicas });
  const files = await js.views.os(UPLOADS, { replicas });
  const snapshots = await js.views.os(SNAPSHOTS, { replicas });
  return { js, jsm, kv, files, snapshots };
}

/**
 * Connects to NATS as node `node` and opens the log and the buckets, retrying while a NATS
 * cluster just started has no JetStream leader yet (up to STARTUP_PATIENCE_MS).
 */
export async function connectJetStream(opts: {
  servers: string[];
  node: string;
  replicas: number;
}): Promise<JetStreamHandles & { nc: NatsConnection }> {
  const nc = await connect({
    servers: opts.servers,
    name: `confab-${opts.node}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
  try {
    // A NATS cluster just started has no JetStream leader for a few seconds.
    const deadline = Date.now() + STARTUP_PATIENCE_MS;
    for (;;) {
      try {
        return { nc, ...(await openJetStream(nc, opts.replicas)) };
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
  } catch (err) {
    await nc.close();
    throw err;
  }
}

/**
 * Appends an entry to a realm's subject with JetStream's optimistic concurrency: `header` names
 * the expectation (the realm's last sequence, or the whole stream's) and `expectLast` its value.
 * Returns the entry's sequence; rejects when another append got there first.
 */
export async function appendEntry(
  js: JetStreamClient,
  realmId: number,
  entry: Entry,
  header: 'Nats-Expected-Last-Subject-Sequence' | 'Nats-Expected-Last-Sequence',
  expectLast: number,
  timeout?: number,
): Promise<number> {
  const h = natsHeaders();
  h.set(header, String(expectLast));
  const ack = await js.publish(`${LOG_SUBJECT}.${realmId}`, pack(entry), {
    headers: h,
    ...(timeout ? { timeout } : {}),
  });
  return ack.seq;
}
