/**
 * The realm leases of a cluster node as the `confab_leases` bucket holds them (the rules:
 * lease-keeper.ts): key `realm-<id>`, valued with the holder's node name and incarnation, written
 * only by compare-and-set on its revision (a create for a free key), so that each revision is one
 * node's.
 */
import type { KV } from 'nats';
import { isWrongLastSequence } from './jetstream.js';
import type { LeaseRecord, LeaseStore } from './lease-keeper.js';

const key = (realmId: number) => `realm-${realmId}`;

export class LeaseBucket implements LeaseStore {
  private readonly value: string;

  /**
   * `kv`: the bucket as the keeper writes it (a JetStream client whose requests time out within
   * the lease time: an answer later than that renews nothing).
   */
  constructor(
    private readonly kv: KV,
    node: string,
    incarnation: string,
  ) {
    this.value = JSON.stringify({ node, inc: incarnation });
  }

  async read(realmId: number): Promise<LeaseRecord | null> {
    const e = await this.kv.get(key(realmId));
    if (!e || e.operation !== 'PUT') return null;
    return { revision: e.revision, mine: e.string() === this.value };
  }

  async create(realmId: number): Promise<number> {
    try {
      return await this.kv.create(key(realmId), this.value);
    } catch (err) {
      if (isWrongLastSequence(err) || /exists/i.test(String(err))) return 0;
      throw err;
    }
  }

  async update(realmId: number, revision: number): Promise<number> {
    try {
      return await this.kv.update(key(realmId), this.value, revision);
    } catch (err) {
      if (isWrongLastSequence(err)) return 0;
      throw err;
    }
  }

  async remove(realmId: number, revision: number): Promise<void> {
    await this.kv.delete(key(realmId), { previousSeq: revision });
  }

  /** The realm's current holder, as the bucket says (status, tests). */
  async holderOf(realmId: number): Promise<string | null> {
    const e = await this.kv.get(key(realmId));
    if (!e || e.operation !== 'PUT') return null;
    return (JSON.parse(e.string()) as { node: string }).node;
  }
}
