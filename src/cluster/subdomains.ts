/**
 * Subdomains of the realms created on a cluster's nodes (docs/cluster.md "Creating realms"). Each
 * node checks a new realm's subdomain against its own copy, which may not hold yet a realm with
 * the same subdomain that another node is creating at the same moment: both would be created,
 * and every node would then stop on the second (the subdomain is unique). So a node first
 * reserves the subdomain in the lease bucket, under `subdomain-<subdomain>` (`subdomain-` alone
 * for the root domain), with a create, which only one node can win; the reservation names the
 * realm id it is for (the id the new realm's row is about to get). The loser is refused as the
 * single process refuses a taken subdomain, before it wrote anything.
 *
 * A reservation is never given up once its realm exists. One whose realm never appeared (its node
 * died between reserving and appending the realm's first entry, or never heard whether that
 * append landed) may be taken over after `timeoutMs`: the node taking it first makes sure the
 * realm can never appear, by appending a lease marker to the realm's subject expecting it empty
 * (node.ts voidRealm). The realm's first entry is appended expecting the same, so JetStream lets
 * exactly one of them in: either the realm exists, and the subdomain is taken, or it never will
 * (the log's trimming keeps every subject's newest entry, trim.ts, so the marker stays). The
 * timeout only decides when a reservation is given up on, never whether two realms can share a
 * subdomain (a creator slower than it is refused as a loser would be).
 */
import type { KV } from 'nats';
import { subdomainInUse } from '../mutations/realms.js';
import { isWrongLastSequence, reasked } from './jetstream.js';

/** Keys of the lease bucket holding reservations start with this; the subdomain follows. */
export const SUBDOMAIN_KEY_PREFIX = 'subdomain-';

/** How long a reservation whose realm has not appeared in the log is waited for (ms). */
export const DEFAULT_RESERVATION_TIMEOUT_MS = 60_000;

export function subdomainKey(subdomain: string): string {
  return SUBDOMAIN_KEY_PREFIX + subdomain;
}

/** A reservation's value: the realm it is for, and the node (and incarnation) that made it. */
export type Reservation = { realm: number; node: string; inc: string };

function parse(text: string): Reservation | null {
  try {
    const r = JSON.parse(text) as Partial<Reservation>;
    return typeof r.realm === 'number' ? (r as Reservation) : null;
  } catch {
    return null;
  }
}

export class SubdomainReservations {
  constructor(
    private readonly kv: KV,
    private readonly node: string,
    private readonly incarnation: string,
    private readonly timeoutMs: number,
    /**
     * Resolves true once the realm can never appear in the log (it has not), false when it exists.
     */
    private readonly voidRealm: (realmId: number) => Promise<boolean>,
  ) {}

  /**
   * Reserves `subdomain` for the realm `realmId` (about to be created here): resolves with the
   * reservation's revision, or rejects with subdomainInUse() when another realm has it or is being
   * created with it.
   */
  async reserve(subdomain: string, realmId: number): Promise<number> {
    const key = subdomainKey(subdomain);
    const value = JSON.stringify({
      realm: realmId,
      node: this.node,
      inc: this.incarnation,
    } satisfies Reservation);
    for (let attempt = 1; attempt <= 5; attempt++) {
      try {
        return await this.kv.create(key, value);
      } catch (err) {
        if (!isWrongLastSequence(err)) return this.landed(key, value, err);
      }
      const e = await this.kv.get(key);
      if (!e || e.operation !== 'PUT') continue; // given up meanwhile: create it again
      // Its realm is being created (or exists): the subdomain is taken.
      if (Date.now() - e.created.getTime() < this.timeoutMs) throw subdomainInUse();
      const held = parse(e.string());
      if (!held || !(await this.voidRealm(held.realm))) throw subdomainInUse();
      // Its realm never appeared and now never can: the reservation is free to take.
      try {
        return await this.kv.update(key, value, e.revision);
      } catch (err) {
        if (!isWrongLastSequence(err)) return this.landed(key, value, err);
        // Another node took it first: look again (it now names that node's realm).
      }
    }
    throw subdomainInUse();
  }

  /**
   * Gives up a reservation made here whose realm will never appear (its rows were refused before
   * they reached the log), at the revision it was made with: another node may create the
   * subdomain at once.
   */
  async release(subdomain: string, revision: number): Promise<void> {
    await this.kv.delete(subdomainKey(subdomain), { previousSeq: revision }).catch(() => undefined);
  }

  /**
   * After a write whose answer was lost: its revision if it landed all the same, else `err`. The
   * look is asked again beside the first while unanswered (`reasked`): a frozen server that held
   * the write's answer may hold this question's too.
   */
  private async landed(key: string, value: string, err: unknown): Promise<number> {
    const e = await reasked(() => this.kv.get(key)).catch(() => null);
    if (e && e.operation === 'PUT' && e.string() === value) return e.revision;
    throw err;
  }
}
