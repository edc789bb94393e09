/**
 * The realm leases of a cluster node (src/cluster/node.ts), as the `confab_leases` bucket holds
 * them: key `realm-<id>`, value the holder's node name and incarnation. The holder renews its
 * lease with a compare-and-set on the revision; another node takes a lease that is absent, or
 * whose revision stayed the same for a whole lease time, the same way, so at most one node wins
 * each revision.
 */
import type { KV } from 'nats';

type Watch = { rev: number; since: number };

export class LeaseBucket {
  /** The revision last seen of each lease another node holds, and since when. */
  private readonly watching = new Map<number, Watch>();
  private readonly value: string;

  constructor(
    private readonly kv: KV,
    node: string,
    incarnation: string,
    private readonly leaseMs: number,
  ) {
    this.value = JSON.stringify({ node, inc: incarnation });
  }

  /** The realm's current holder, as the bucket says. */
  async holderOf(realmId: number): Promise<string | null> {
    const e = await this.kv.get(`realm-${realmId}`);
    if (!e || e.operation !== 'PUT') return null;
    return (JSON.parse(e.string()) as { node: string }).node;
  }

  /** Renews a lease this node holds; false when it is no longer this node's. */
  async renew(realmId: number): Promise<boolean> {
    const key = `realm-${realmId}`;
    const e = await this.kv.get(key);
    try {
      if (!e || e.operation !== 'PUT' || e.string() !== this.value) throw new Error('lost');
      await this.kv.update(key, this.value, e.revision);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Gives up a lease this node holds (a graceful stop): another node takes it at its next tick
   * instead of after a lease time. Deleted only at the revision this node holds.
   */
  async release(realmId: number): Promise<void> {
    const key = `realm-${realmId}`;
    const e = await this.kv.get(key);
    if (!e || e.operation !== 'PUT' || e.string() !== this.value) return;
    await this.kv.delete(key, { previousSeq: e.revision });
  }

  /** Takes a lease nobody holds (a realm this node creates): the revision, or 0. */
  async claim(realmId: number): Promise<number> {
    return this.kv.create(`realm-${realmId}`, this.value).catch(() => 0);
  }

  /**
   * Takes the lease if it is free or its holder stopped renewing it for a lease time: the
   * revision this node now holds (its term), or 0.
   */
  async tryTake(realmId: number): Promise<number> {
    const key = `realm-${realmId}`;
    const e = await this.kv.get(key);
    const now = Date.now();
    if (!e || e.operation !== 'PUT') return this.kv.create(key, this.value).catch(() => 0);
    const w = this.watching.get(realmId);
    if (!w || w.rev !== e.revision) {
      this.watching.set(realmId, { rev: e.revision, since: now });
      return 0;
    }
    if (now - w.since < this.leaseMs) return 0;
    return this.kv.update(key, this.value, e.revision).catch(() => 0);
  }
}
