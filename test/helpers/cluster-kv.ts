/**
 * The lease bucket of a local cluster (src/cluster/local.ts) as the cluster tests look into it:
 * keys read (asked again while NATS does not answer in time: three NATS servers and three nodes
 * share the machine's two cores), a realm's lease holder, and the bucket itself for a test that
 * writes there.
 */
import { connect, type KV, type NatsConnection } from 'nats';
import type { ClusterRecord } from '../../src/cluster/local.js';
import { clusterNames, JETSTREAM_TIMEOUT_MS } from '../../src/cluster/jetstream.js';

/** Runs `fn` with the cluster's lease bucket, on a connection of its own. */
export async function withLeaseBucket<T>(
  rec: ClusterRecord,
  fn: (kv: KV, nc: NatsConnection) => Promise<T>,
): Promise<T> {
  const nc = await connect({ servers: rec.natsUrls });
  try {
    // Without nats.js's API check: it answers 503 while JetStream elects a leader (a fault test).
    // Reads go to the bucket's stream leader, not as direct gets, which any replica answers, one
    // that has not applied the newest write among them (CI: a record written before the node's
    // answer read as missing right after it).
    const kv = await nc
      .jetstream({ checkAPI: false, timeout: JETSTREAM_TIMEOUT_MS })
      .views.kv(clusterNames().leases, { allow_direct: false });
    return await fn(kv, nc);
  } finally {
    await nc.close();
  }
}

/** What the lease bucket holds under `key` (null while nothing). */
export async function kvString(rec: ClusterRecord, key: string): Promise<string | null> {
  return withLeaseBucket(rec, async (kv) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const e = await kv.get(key);
        return e && e.operation === 'PUT' ? e.string() : null;
      } catch (err) {
        if (attempt >= 5) throw err;
      }
    }
  });
}

/** A number the lease bucket holds under `key` (0 if none). */
export async function kvNumber(rec: ClusterRecord, key: string): Promise<number> {
  return Number((await kvString(rec, key)) ?? 0);
}

/** The node the lease bucket names as the realm's holder (waits while none does). */
export async function leaseHolder(rec: ClusterRecord, realmId: number): Promise<string> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const held = await kvString(rec, `realm-${realmId}`);
    if (held !== null) return (JSON.parse(held) as { node: string }).node;
  }
  throw new Error(`nobody holds realm ${realmId}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
