/**
 * Which node runs each realm export under way, and whether it still does (docs/cluster.md
 * "Exports whose node stopped"). An export runs on the node that took its request
 * (src/admin/export-jobs.ts); its row is written through the realm's owner like any other. A
 * single process fails the exports its previous process left unfinished at its start; on a
 * cluster the node running an export is told apart by a key of the lease bucket:
 *
 * - `export.<id>`, valued `{node, inc}`, is created by the node that took the request, before it
 *   answers it, and renewed by that node (a compare-and-set on its revision) every third of the
 *   lease time, as a realm's lease is, until the export has succeeded or failed; then deleted.
 * - Every node watches the keys of the unfinished exports its copy holds. The owner of the
 *   export's realm gives an export up when its key's revision stayed the same for a whole lease
 *   time (its node stopped renewing: killed, stopped or cut off; the owner's own process too,
 *   for a key it does not renew: a claim it took for refused), when the key names an earlier
 *   process of the owner's own node, or when no key appeared within UNCLAIMED_GRACE_MS (its node
 *   stopped before it recorded it, or is of an earlier version). Giving up is a compare-and-set
 *   of the key to `{…, abandoned: true}` at the revision watched (a `create` for a missing key),
 *   so a runner that renewed meanwhile keeps it; only then does the owner mark the export failed,
 *   through its realm's actor (a write like any other, in the log, seen by every node).
 * - A node starting gives up the keys its previous process left (`abandonPrevious`); one stopping
 *   gracefully gives up those of the exports it had queued but not started. The owner fails
 *   either at its next tick.
 *
 * A runner whose key was given up (cut off from NATS for a lease time, say) finds its renewal
 * refused; its export's later updates are refused by the realm (an export that failed never
 * succeeds: src/mutations/realm-exports.ts), and it removes its archive.
 */
import type { KV } from 'nats';
import { log } from '../observability/log.js';
import { isWrongLastSequence, reasked } from './jetstream.js';

/** Keys of the lease bucket naming an export's runner: `export.<id>`. */
export const EXPORT_KEY_PREFIX = 'export.';

/**
 * How long an unfinished export with no key is waited for before its realm's owner gives it up:
 * the moment between the request's commit and its node's recording of it, however loaded.
 */
export const UNCLAIMED_GRACE_MS = 30_000;

export function exportKey(id: number): string {
  return `${EXPORT_KEY_PREFIX}${id}`;
}

/** A key's value: the node (and process) running the export; `abandoned` once given up. */
type Runner = { node: string | null; inc: string | null; abandoned?: true };

function parse(text: string): Runner | null {
  try {
    const r = JSON.parse(text) as Partial<Runner> | null;
    if (!r || typeof r !== 'object') return null;
    return {
      node: typeof r.node === 'string' ? r.node : null,
      inc: typeof r.inc === 'string' ? r.inc : null,
      ...(r.abandoned === true ? { abandoned: true } : {}),
    };
  } catch {
    return null;
  }
}

function abandoned(r: Runner | null): string {
  return JSON.stringify({ node: r?.node ?? null, inc: r?.inc ?? null, abandoned: true });
}

/** An unfinished export, as this node's copy holds it. */
export type UnfinishedExport = { id: number; realm_id: number };

export class ExportRuns {
  /** The exports this process runs (or has queued): the keys it renews. */
  private readonly held = new Set<number>();
  /** The exports this process is recording itself as the runner of (`claim` under way). */
  private readonly claiming = new Set<number>();
  /** The revision last seen of each other export's key (0: none), and since when. */
  private readonly watching = new Map<number, { rev: number; since: number }>();
  private readonly value: string;
  private renewing = false;
  private checking = false;

  constructor(
    private readonly kv: KV,
    private readonly node: string,
    private readonly inc: string,
    private readonly leaseMs: number,
    private readonly unclaimedGraceMs = UNCLAIMED_GRACE_MS,
    private readonly clock: () => number = Date.now,
  ) {
    this.value = JSON.stringify({ node, inc } satisfies Runner);
  }

  /**
   * Records this process as export `id`'s runner: false when it may not run it (given up
   * already, or NATS did not take the record; its realm's owner then fails it).
   */
  async claim(id: number): Promise<boolean> {
    const key = exportKey(id);
    this.claiming.add(id);
    try {
      await this.kv.create(key, this.value);
    } catch (err) {
      if (isWrongLastSequence(err)) return false;
      // The answer was lost: ours if it landed all the same. Asked again beside the first while
      // unanswered (`reasked`): a frozen server that held the create's answer may hold this
      // question's too, and an export claimed but read as not would be failed by its owner.
      const e = await reasked(() => this.kv.get(key)).catch(() => null);
      if (!e || e.operation !== 'PUT' || e.string() !== this.value) return false;
    } finally {
      this.claiming.delete(id);
    }
    this.held.add(id);
    return true;
  }

  /** Export `id` succeeded or failed here: its key goes (at the revision this process holds). */
  async finish(id: number): Promise<void> {
    this.held.delete(id);
    await this.ownKey(id, (key, rev) => this.kv.delete(key, { previousSeq: rev }));
  }

  /** Export `id` will not run here (a graceful stop): its realm's owner fails it at once. */
  async giveUp(id: number): Promise<void> {
    this.held.delete(id);
    await this.ownKey(id, (key, rev) => this.kv.update(key, abandoned(parse(this.value)), rev));
  }

  /**
   * Writes export `id`'s key (`write`, a compare-and-set at the revision read) while it names
   * this process; read again when it moved meanwhile. It moves under this process's own renewal
   * that was under way when `held` lost the export (a read before, its update after): without
   * the second look, the key of a finished export stayed forever (a run of cluster-exports).
   * No renewal starts once `held` lost it, so one more look finds it still.
   */
  private async ownKey(id: number, write: (key: string, rev: number) => Promise<unknown>) {
    const key = exportKey(id);
    for (let attempt = 1; ; attempt++) {
      const e = await this.kv.get(key);
      if (!e || e.operation !== 'PUT' || e.string() !== this.value) return;
      try {
        await write(key, e.revision);
        return;
      } catch (err) {
        if (!isWrongLastSequence(err) || attempt >= 3) throw err;
      }
    }
  }

  /**
   * At start: gives up the exports this node's previous process was running. `keys` lists the
   * bucket's keys under a filter: a node's start passes a bounded one (jetstream.ts bucketKeys),
   * which fails rather than waiting on JetStream without end as nats.js's `kv.keys` may.
   */
  async abandonPrevious(
    keys: (filter: string) => Promise<Iterable<string> | AsyncIterable<string>>,
  ): Promise<number> {
    let n = 0;
    for await (const key of await keys(`${EXPORT_KEY_PREFIX}*`)) {
      const e = await this.kv.get(key);
      if (!e || e.operation !== 'PUT') continue;
      const r = parse(e.string());
      if (!r || r.abandoned || r.node !== this.node || r.inc === this.inc) continue;
      await this.kv.update(key, abandoned(r), e.revision).then(
        () => n++,
        () => undefined, // renewed meanwhile: not ours after all, or given up already
      );
    }
    return n;
  }

  /**
   * At each lease tick, apart from `renew`: looks at every unfinished export of this node's copy;
   * those of realms this node owns (`owns`) whose runner is gone are given up and failed (`fail`,
   * through the realm's actor).
   */
  async check(
    unfinished: readonly UnfinishedExport[],
    owns: (realmId: number) => boolean,
    fail: (realmId: number, id: number) => Promise<void>,
  ): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const current = new Set(unfinished.map((x) => x.id));
      for (const id of this.watching.keys()) if (!current.has(id)) this.watching.delete(id);
      for (const x of unfinished) {
        if (this.held.has(x.id) || this.claiming.has(x.id)) continue;
        const rev = await this.judge(x.id, owns(x.realm_id)).catch(() => null);
        if (rev === null) continue;
        try {
          await fail(x.realm_id, x.id);
          await this.kv.delete(exportKey(x.id), { previousSeq: rev }).catch(() => undefined);
          this.watching.delete(x.id);
        } catch (err) {
          log.error({ err, exportId: x.id }, 'failing a realm export whose node is gone failed');
        }
      }
    } finally {
      this.checking = false;
    }
  }

  /** At each lease tick: renews the keys of the exports this process runs or has queued. */
  async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      await this.renewAll();
    } finally {
      this.renewing = false;
    }
  }

  private async renewAll(): Promise<void> {
    for (const id of [...this.held]) {
      // Finished or given up since this renewal began: `finish` and `giveUp` write its key.
      if (!this.held.has(id)) continue;
      const key = exportKey(id);
      try {
        const e = await this.kv.get(key);
        if (!this.held.has(id)) continue;
        if (!e || e.operation !== 'PUT' || e.string() !== this.value) {
          this.held.delete(id);
          log.error({ exportId: id }, 'a realm export running here was given up by the cluster');
          continue;
        }
        await this.kv.update(key, this.value, e.revision);
      } catch {
        // NATS did not answer (or the key changed meanwhile): the next tick looks again.
      }
    }
  }

  /**
   * Whether export `id`'s runner is gone: the revision of its key, given up now, when this node
   * (`act`: it owns the export's realm) is to fail it; null otherwise.
   */
  private async judge(id: number, act: boolean): Promise<number | null> {
    const key = exportKey(id);
    const e = await this.kv.get(key);
    // Once read: a revision is known to have stood since then at the latest.
    const now = this.clock();
    const w = this.watching.get(id);
    if (!e || e.operation !== 'PUT') {
      if (!w || w.rev !== 0) {
        this.watching.set(id, { rev: 0, since: now });
        return null;
      }
      if (!act || now - w.since < this.unclaimedGraceMs) return null;
      return this.kv.create(key, abandoned(null)).catch(() => null);
    }
    const r = parse(e.string());
    if (r?.abandoned) return act ? e.revision : null;
    const mine = r?.node === this.node && r.inc === this.inc;
    // This process's own, and it runs it: claimed while this look was under way (the owner took
    // the request itself; `held` and `claiming` were read before).
    if (mine && (this.held.has(id) || this.claiming.has(id))) return null;
    // An earlier process of this node is gone for sure, and this one does not run it (it is not
    // among its own); another node, once its key stood still for a lease time; so does a key of
    // this very process that it does not renew (a claim whose answer was lost and that it took
    // for refused, not running the export; on the code before, never given up by its owner).
    if (r?.node !== this.node || mine) {
      if (!w || w.rev !== e.revision) {
        this.watching.set(id, { rev: e.revision, since: now });
        return null;
      }
      if (now - w.since < this.leaseMs) return null;
    }
    if (!act) return null;
    return this.kv.update(key, abandoned(r), e.revision).catch(() => null);
  }
}
