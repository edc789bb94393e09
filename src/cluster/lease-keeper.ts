/**
 * The lease keeper of a cluster node (docs/cluster.md "Failover and fencing"): which realms' leases
 * this node holds, and whether it may act as their owner at this moment. The rules:
 *
 * 1. A lease is a key of the lease bucket (`realm-<id>`); every write of it is a compare-and-set on
 *    its revision, so each revision is written by one node. The revision a node holds is its term:
 *    the term of its lease marker and of every entry it appends.
 * 2. A node takes a lease that is free, or whose revision it has seen unchanged for a whole lease
 *    time (its holder stopped renewing). It then catches up with the log; meanwhile it renews the
 *    lease every third of the lease time like an owner (`tick`), however long the catch-up takes.
 * 3. Right before its lease marker it renews once more (`confirm`): the marker carries that
 *    revision, and a node that cannot renew (another took the key) does not append it.
 * 4. A node acts as owner (writes, reads without the read barrier) only while its last successful
 *    renewal was sent less than the lease time minus a margin ago (`valid`): another node takes the
 *    lease only after seeing one revision unchanged for a whole lease time, counted from after that
 *    revision was written, so their times as owner never overlap. A renewal's time is when it was
 *    sent, not when it was answered.
 * 5. A renewal refused because the key moved loses the lease, unless the key holds this node's own
 *    value (a renewal of its own that timed out had landed): the node adopts that revision.
 *
 * A renewal sent while the bucket elects a leader (its NATS server died or froze) is never
 * answered, not even after the election: it would wait out its whole timeout. So a renewal still
 * unanswered is asked again beside the first (`reasked`, jetstream.ts) at once when the bucket has
 * elected a leader (`elected`, at JetStream's advisory), at each quarter-second look at a lapsed
 * lease (`renewLapsed`), and after REASK_MS; the first attempt to settle decides, and a renewal
 * counts from the sending of the attempt that answered. Attempts are compare-and-sets on one
 * revision: at most one lands, and a later one refused because an earlier one landed is rule 5.
 *
 * The bucket and the clock are given (LeaseStore, `clock`), so that the rules are tested with a
 * simulated clock (test/unit/lease-keeper.test.ts).
 */
import { kick, reasked, REASK_MS, type Reasks } from './jetstream.js';
import { trace, tracing } from './trace.js';

/** At most this many attempts of one renewal are in flight (`reasked`). */
export const RENEWAL_ATTEMPTS = 4;

/** The key of a realm's lease as the bucket holds it: its revision, and whether this node wrote it. */
export type LeaseRecord = { revision: number; mine: boolean };

/** The lease bucket as the keeper uses it (src/cluster/leases.ts over NATS). */
export interface LeaseStore {
  /** The key now (null: absent or deleted). Throws when the bucket does not answer. */
  read(realmId: number): Promise<LeaseRecord | null>;
  /** Creates the key with this node's value: its revision, or 0 when it exists. */
  create(realmId: number): Promise<number>;
  /** Writes this node's value at `revision`: the new revision, or 0 when the key has moved. */
  update(realmId: number, revision: number): Promise<number>;
  /** Deletes the key at `revision` (a graceful stop). */
  remove(realmId: number, revision: number): Promise<void>;
}

type Lease = {
  /** Taken and catching up (not acting as owner yet), or held (its marker is in the log). */
  phase: 'acquiring' | 'held';
  /** The revision this node wrote last: its term. */
  revision: number;
  /** Until when (clock) this node may act as owner: the last renewal's send + lease - margin. */
  validUntil: number;
  /** The write of the key under way (renewals of one lease never overlap). */
  busy: Promise<boolean> | null;
  /** Whether its lapse (validity past, lease still held) has been logged. */
  lapseLogged: boolean;
  /** The renewal under way, to ask again at once (`kick`): the bucket elected a leader. */
  reasks: Reasks;
};

export type KeeperOptions = {
  leaseMs: number;
  /** How long before the lease time a node stops acting as owner; default a sixth of it. */
  marginMs?: number;
  /** Monotonic milliseconds (performance.now by default). */
  clock?: () => number;
  /** Told when a lease this node held or was taking is lost (another node has the key). */
  lost?: (realmId: number, why: string) => void;
  /** Told when the bucket does not answer a write (the connection may be to a frozen server). */
  unanswered?: () => void;
  log?: (line: string) => void;
};

export class LeaseKeeper {
  private readonly leases = new Map<number, Lease>();
  /** The revision last seen of each lease another node holds, and since when (clock). */
  private readonly watching = new Map<number, { revision: number; since: number }>();
  readonly leaseMs: number;
  readonly marginMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly store: LeaseStore,
    private readonly opts: KeeperOptions,
  ) {
    this.leaseMs = opts.leaseMs;
    this.marginMs = opts.marginMs ?? Math.floor(opts.leaseMs / 6);
    this.clock = opts.clock ?? (() => performance.now());
  }

  /** Whether this node may act as the realm's owner now (rule 4). */
  valid(realmId: number): boolean {
    const l = this.leases.get(realmId);
    return l !== undefined && l.phase === 'held' && this.clock() < l.validUntil;
  }

  /** Whether this node holds or is taking the realm's lease (valid or not). */
  holds(realmId: number): boolean {
    return this.leases.has(realmId);
  }

  /** The revision this node holds (its term), or 0. */
  term(realmId: number): number {
    return this.leases.get(realmId)?.revision ?? 0;
  }

  /** The realms whose leases this node holds or is taking. */
  realms(): number[] {
    return [...this.leases.keys()];
  }

  /**
   * Takes the realm's lease if it is free, or if its revision has stayed the same for a whole lease
   * time since this node first saw it (rule 2): the revision now held (the lease is then
   * `acquiring`), or 0. A node holding it already gets 0.
   */
  async tryTake(realmId: number): Promise<number> {
    if (this.leases.has(realmId)) return 0;
    const sent = this.clock();
    const e = await this.store.read(realmId);
    let revision: number;
    if (e === null) {
      revision = await this.store.create(realmId);
    } else {
      const now = this.clock();
      const w = this.watching.get(realmId);
      if (!w || w.revision !== e.revision) {
        this.watching.set(realmId, { revision: e.revision, since: now });
        return 0;
      }
      if (now - w.since < this.leaseMs) return 0;
      trace(`realm ${realmId}: lease ${e.revision} unchanged for a lease time: taking it`);
      revision = await this.store.update(realmId, e.revision);
      trace(`realm ${realmId}: taking lease ${e.revision}: ${revision}`);
    }
    if (revision === 0 || this.leases.has(realmId)) return 0;
    this.watching.delete(realmId);
    return this.taking(realmId, revision, sent);
  }

  /**
   * Takes a lease nobody holds (a realm this node creates): the revision, or 0. It is `acquiring`
   * until `establish`.
   */
  async claim(realmId: number): Promise<number> {
    const sent = this.clock();
    const revision = await this.store.create(realmId).catch(() => 0);
    if (revision === 0) return 0;
    return this.taking(realmId, revision, sent);
  }

  /** Records a lease just written at `sent` as `acquiring`; its revision. */
  private taking(realmId: number, revision: number, sent: number): number {
    this.leases.set(realmId, {
      phase: 'acquiring',
      revision,
      validUntil: this.validFrom(sent),
      busy: null,
      lapseLogged: false,
      reasks: new Set(),
    });
    return revision;
  }

  /** Until when a lease written (or renewed) at `sent` lets this node act as owner. */
  private validFrom(sent: number): number {
    return sent + this.leaseMs - this.marginMs;
  }

  /**
   * Renews a lease this node holds or is taking by a compare-and-set on its revision: true once
   * renewed; false when it is lost (rule 5) or the bucket did not answer (the lease is kept, its
   * validity runs out). Renewals of one lease run one at a time: a call while one is under way
   * waits for it and renews again.
   */
  async renew(realmId: number): Promise<boolean> {
    let l = this.leases.get(realmId);
    while (l?.busy) {
      await l.busy.catch(() => false);
      l = this.leases.get(realmId);
    }
    if (!l) return false;
    const lease = l;
    const run = this.write(realmId, lease);
    lease.busy = run;
    try {
      return await run;
    } finally {
      if (lease.busy === run) lease.busy = null;
    }
  }

  private async write(realmId: number, l: Lease): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      let revision: number;
      let sent: number;
      const expected = l.revision;
      // The first attempt counts from this call; one asked again, from its own sending.
      let at: number | null = this.clock();
      try {
        ({ revision, sent } = await reasked(
          () => {
            const from = at ?? this.clock();
            at = null;
            return this.store
              .update(realmId, expected)
              .then((rev) => ({ revision: rev, sent: from }));
          },
          REASK_MS,
          RENEWAL_ATTEMPTS,
          l.reasks,
        ));
      } catch (err) {
        trace(
          `renewal of realm ${realmId} at ${l.revision} (${l.phase}) unanswered: ${String(err)}`,
        );
        this.opts.unanswered?.();
        return false; // no answer: kept, and valid only until its time runs out
      }
      if (tracing && (revision === 0 || l.lapseLogged || sent >= l.validUntil))
        trace(`renewal of realm ${realmId} at ${l.revision} (${l.phase}) answered: ${revision}`);
      if (this.leases.get(realmId) !== l) return false;
      if (revision > 0) {
        l.revision = revision;
        l.validUntil = Math.max(l.validUntil, this.validFrom(sent));
        if (l.lapseLogged && this.clock() < l.validUntil) {
          l.lapseLogged = false;
          this.opts.log?.(`acts as owner of realm ${realmId} again (lease ${revision} renewed)`);
        }
        return true;
      }
      // The key moved: another node's, or a write of this node's own that was not answered.
      let now: LeaseRecord | null;
      try {
        now = await this.store.read(realmId);
      } catch {
        return false;
      }
      if (this.leases.get(realmId) !== l) return false;
      if (now === null || !now.mine) {
        this.leases.delete(realmId);
        this.opts.lost?.(realmId, now === null ? 'its lease was deleted' : 'another node took it');
        return false;
      }
      l.revision = now.revision; // adopted; validity only from the next write answered
    }
    return false;
  }

  /**
   * Right before a lease marker (rule 3): renews the lease being taken, and returns the revision
   * the marker carries, or 0 when this node no longer holds it (the takeover then aborts).
   */
  async confirm(realmId: number): Promise<number> {
    if (!(await this.renew(realmId))) return 0;
    return this.term(realmId);
  }

  /** The lease marker is in the log: this node acts as owner while the lease stays valid. */
  establish(realmId: number): void {
    const l = this.leases.get(realmId);
    if (l) l.phase = 'held';
  }

  /** Stops holding a lease without writing the key (a takeover that failed; a loss seen elsewhere). */
  forget(realmId: number): void {
    this.leases.delete(realmId);
  }

  /**
   * One tick (every third of the lease time): renews every lease held or being taken whose
   * renewal is not under way, and logs a lapse (a lease held but past its validity). Resolves once
   * the renewals settled.
   */
  async renewAll(): Promise<void> {
    const now = this.clock();
    await Promise.all(
      [...this.leases].map(([realmId, l]) => {
        if (l.phase === 'held' && now >= l.validUntil && !l.lapseLogged) {
          trace(`realm ${realmId}: lease lapsed`);
          l.lapseLogged = true;
          this.opts.log?.(
            `stopped acting as owner of realm ${realmId}: its lease was last renewed ` +
              `${Math.round(now - l.validUntil + this.leaseMs - this.marginMs)} ms ago`,
          );
        }
        return l.busy ? l.busy : this.renew(realmId);
      }),
    );
  }

  /**
   * Between ticks: renews at once the leases held whose validity has lapsed (their renewals went
   * unanswered), so that an owner acts again as soon as the bucket answers (after a NATS leader
   * election), not at its next tick.
   */
  async renewLapsed(): Promise<void> {
    const now = this.clock();
    const lapsed = [...this.leases].filter(([, l]) => l.phase === 'held' && now >= l.validUntil);
    // One under way for a while may have been sent during an election: asked again beside it.
    for (const [, l] of lapsed) if (l.busy) kick(l.reasks);
    await Promise.all(lapsed.filter(([, l]) => !l.busy).map(([realmId]) => this.renew(realmId)));
  }

  /**
   * The lease bucket has just elected a leader (JetStream's advisory): a renewal sent before is
   * never answered, so every renewal under way is asked again at once, and a lapsed lease with
   * none under way is renewed now. Resolves once those renewals settled.
   */
  async elected(): Promise<void> {
    trace('the lease bucket elected a leader: renewing again');
    for (const l of this.leases.values()) kick(l.reasks);
    await this.renewLapsed();
  }

  /**
   * Gives up a lease (a graceful stop): deletes the key at the revision held, once no renewal is
   * under way, so that another node takes the realm at its next tick.
   */
  async release(realmId: number): Promise<void> {
    const l = this.leases.get(realmId);
    if (!l) return;
    if (l.busy) await l.busy.catch(() => false);
    this.leases.delete(realmId);
    await this.store.remove(realmId, l.revision);
  }
}
