/**
 * A lease bucket played in memory for the fencing rules' unit tests (src/cluster/lease-keeper.ts):
 * each key's writes are compare-and-sets on one revision counter, as a JetStream key-value
 * bucket's; a node can be cut off (its writes unanswered, landing or not); the clock is simulated.
 */
import { LeaseKeeper, type LeaseRecord, type LeaseStore } from '../../src/cluster/lease-keeper.js';

export const LEASE = 3000;
export const MARGIN = 500;

/** One bucket shared by simulated nodes, and the simulated clock. */
export class World {
  now = 0;
  private revision = 0;
  readonly keys = new Map<number, { revision: number; holder: string }>();
  /** Nodes whose writes are not answered (they throw), and whether they landed anyway. */
  readonly cutOff = new Map<string, 'lost' | 'landed'>();
  /**
   * Nodes whose writes are sent while the bucket elects a leader: never answered (pending until
   * `timeOut`), and whether they landed anyway.
   */
  readonly electing = new Map<string, 'lost' | 'landed'>();
  /** The writes left unanswered by an election, to fail as their timeouts would. */
  private readonly pending: (() => void)[] = [];
  /** How many writes each node sent. */
  readonly sent = new Map<string, number>();

  /** The unanswered writes time out (they throw, as nats.js's request timeout). */
  timeOut(): void {
    for (const fail of this.pending.splice(0)) fail();
  }

  store(node: string): LeaseStore {
    const answer = <T>(landed: () => T): Promise<T> => {
      this.sent.set(node, (this.sent.get(node) ?? 0) + 1);
      const electing = this.electing.get(node);
      if (electing !== undefined) {
        if (electing === 'landed') landed();
        return new Promise<T>((_, reject) =>
          this.pending.push(() => reject(Object.assign(new Error('timeout'), { code: 'TIMEOUT' }))),
        );
      }
      const cut = this.cutOff.get(node);
      if (cut === 'landed') landed();
      if (cut !== undefined)
        return Promise.reject(Object.assign(new Error('timeout'), { code: 'TIMEOUT' }));
      return Promise.resolve(landed());
    };
    return {
      read: (realmId) =>
        answer((): LeaseRecord | null => {
          const k = this.keys.get(realmId);
          return k ? { revision: k.revision, mine: k.holder === node } : null;
        }),
      create: (realmId) =>
        answer(() => {
          if (this.keys.has(realmId)) return 0;
          this.keys.set(realmId, { revision: ++this.revision, holder: node });
          return this.revision;
        }),
      update: (realmId, revision) =>
        answer(() => {
          const k = this.keys.get(realmId);
          if (!k || k.revision !== revision) return 0;
          this.keys.set(realmId, { revision: ++this.revision, holder: node });
          return this.revision;
        }),
      remove: (realmId, revision) =>
        answer(() => {
          if (this.keys.get(realmId)?.revision === revision) this.keys.delete(realmId);
        }),
    };
  }

  /** A node's keeper on this bucket and clock; `lost` collects or is told its losses. */
  keeper(node: string, lost: string[] | ((realm: number, why: string) => void) = []): LeaseKeeper {
    return new LeaseKeeper(this.store(node), {
      leaseMs: LEASE,
      marginMs: MARGIN,
      clock: () => this.now,
      lost: Array.isArray(lost) ? (realm, why) => void lost.push(`${realm}: ${why}`) : lost,
    });
  }
}
