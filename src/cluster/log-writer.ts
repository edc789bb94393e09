/**
 * The log writer of a cluster node (docs/cluster.md "The log and what a node applies"): the
 * realm actor's commit strategy on a node acting as a realm's owner, and the realm's appends.
 *
 * - Inside the transaction, just before its COMMIT, the batch's captured rows are sealed into an
 *   entry carrying the lease revision this node holds now (its term) and sent to the log at once,
 *   expecting the realm's previous entry (`Nats-Expected-Last-Subject-Sequence`), so that the
 *   log's round trip overlaps the COMMIT and the read-model refresh. A node that may not act as
 *   the realm's owner at this moment (lease-keeper.ts `valid`) refuses here: the transaction is
 *   rolled back.
 * - Appends of a realm are sequential: a batch sealed while an earlier one is in flight goes once
 *   that one is settled.
 * - An append that goes unanswered (a NATS server killed or frozen, a stream electing a leader)
 *   is asked again with the same expectation and message id until the log answers
 *   (jetstream.ts `appendSurely`): the entry is in the log, or another entry took its place.
 * - Only once the log holds the batch are its events delivered to this node's queues, and its
 *   commands answered: no client sees an event, or hears "success", for a write the log might
 *   refuse. A queue registered on this node between the COMMIT and the acknowledgement does not
 *   get the batch's events: its snapshot, read after the COMMIT, holds the batch already.
 * - The events go at the append's acknowledgement or when the log applier meets the entry in the
 *   log (`inLog`), whichever comes first, once: the applier delivers every entry after it (other
 *   nodes' too) in log order, so an acknowledgement that comes late (the node frozen with the
 *   append unanswered, its lease taken meanwhile, the entry found by its message id after the
 *   thaw) must not deliver the batch after the new owner's entries that follow it in the log.
 * - A batch the log refused (another node's lease marker took its place, or this node's own
 *   marker of a later term) was committed here and is in no other copy: the node stops acting as
 *   the realm's owner, answers its commands 503 (never "success"), and takes the batch back from
 *   its copy with the rows' state before it (`displaced`, Replication.undo) when its log applier
 *   meets the entry that took its place — before applying that entry, so the copy follows the log
 *   in log order. The node goes on as a non-owner. Which of the two happened (landed or refused)
 *   is decided there, by the log's order, also for an append whose answer never came.
 */
import { trace } from './trace.js';
import type { EventQueues } from '../delivery/publisher.js';
import type { QueueHandle } from '../delivery/queue.js';
import {
  BatchTooLargeError,
  type BatchEffects,
  type CommitStrategy,
  type Committed,
} from '../../actors/realm.machine.js';
import type { OutboundEvent } from '../lib/events.js';
import { observeAppend } from '../observability/metrics.js';
import type { Replication, RowChange } from '../storage/replication.js';
import type { Store } from '../storage/store.js';
import type { ClusterIds, RealmIdBlocks } from './id-blocks.js';
import { JsonableError } from '../lib/errors.js';
import { pack } from '../lib/pack.js';
import {
  appendSurely,
  entryLimit,
  NotOwnerError,
  packEntry,
  writeNow,
  type Entry,
} from './jetstream.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { ClusterLink } from './link.js';

/**
 * How long an append whose fate is unknown is asked again before the node gives up on it and
 * stops (its copy may hold a batch the log will never have): longer than any NATS election.
 */
export const APPEND_PATIENCE_MS = 120_000;

/**
 * A forwarded command whose result packs to more than this is not named in its batch's entry
 * (LogWriter.fit): results are ids and short lists, and a few large ones would take room the
 * batch's rows need in one NATS message.
 */
export const FORWARD_RESULT_MOST = 4096;

/**
 * A new realm whose first entry (its creation's rows) would not fit in one NATS message
 * (LogWriter.checkFirst): refused before anything of it is written, answered 400 like a batch
 * too large (BatchTooLargeError).
 */
export class RealmTooLargeError extends JsonableError {
  constructor(
    readonly bytes: number,
    readonly most: number,
  ) {
    super(
      `This realm is too large to be replicated: its creation's rows take ${bytes} bytes in the ` +
        `cluster's log, at most ${most} (one NATS message: the servers' max_payload less 1 KiB). ` +
        'A shorter realm name makes it smaller.',
      { code: 'BAD_REQUEST', status: 400 },
    );
  }
}

/** A batch committed here whose append has not settled. */
type Sealed = {
  realmId: number;
  /** Its entry's message id ('': nothing went to the log). */
  msgId: string;
  /** Its events were delivered (at the acknowledgement, or by the applier: `inLog`). */
  delivered: boolean;
  /** Its rows, and their state before it (Replication.sealWithUndo). */
  changes: RowChange[];
  undo: RowChange[];
  events: OutboundEvent[];
  ended: (readonly number[] | null)[];
  /** Its append has gone to NATS. */
  sent: boolean;
  /** Its COMMIT failed before it went: it never goes. */
  cancelled: boolean;
  /** Resolves once the log holds it (and the realm's earlier batches). */
  step: Promise<void>;
  /** Queues registered here after its COMMIT (their snapshots hold it). */
  except: Set<QueueHandle> | null;
};

/** A realm this node writes. */
type Writing = {
  /** Sequence of the last entry appended for the realm (the next append expects it). */
  last: number;
  tail: Promise<void>;
  /** Batches sealed whose appends have not settled yet. */
  inFlight: number;
  /** Where the realm's new rows get their ids. */
  ids: RealmIdBlocks;
  /** An append of this term was refused or given up: later batches are not sent. */
  failed: boolean;
};

export type WriterParts = {
  link: ClusterLink;
  store: Store;
  replication: Replication;
  ids: ClusterIds;
  keeper: LeaseKeeper;
  queues: EventQueues;
  /** This node must stop (its copy holds a commit the log refused). */
  die: (reason: string) => void;
  /** The log refused an append of the realm: another node owns it now. */
  deposed: (realmId: number, why: string) => void;
};

export class LogWriter implements CommitStrategy {
  private readonly realms = new Map<number, Writing>();
  private serial = 0;
  private closing = false;
  /**
   * Batches committed here whose entries' events are not delivered yet, by message id, in order;
   * kept after the node stops writing their realm (their appends go on).
   */
  private readonly undelivered = new Map<string, Sealed>();
  /**
   * Batches committed here whose entries the log has not been seen to hold (by their
   * acknowledgement or by the applier), by message id, in commit order: each is either met in
   * the log or displaced by another entry of its realm (`displaced`).
   */
  private readonly unlanded = new Map<string, Sealed>();

  constructor(private readonly parts: WriterParts) {
    parts.queues.watchRegistrations((rt) => {
      for (const s of this.undelivered.values())
        if (s.realmId === rt.realmId) (s.except ??= new Set()).add(rt);
    });
  }

  /** The realm's lease marker is in the log at `last`: this node writes the realm from now on. */
  start(realmId: number, last: number, ids: RealmIdBlocks): void {
    this.realms.set(realmId, { last, tail: Promise.resolve(), inFlight: 0, ids, failed: false });
  }

  /**
   * This node no longer writes the realm: later batches are refused. Appends in flight go on (the
   * log decides each: one that lands is answered as any other).
   */
  stop(realmId: number): void {
    const w = this.realms.get(realmId);
    if (!w) return;
    this.realms.delete(realmId);
    w.ids.close();
  }

  writes(realmId: number): boolean {
    return this.realms.has(realmId);
  }

  /**
   * Whether this node acts as the realm's owner now (lease-keeper.ts rule 4): it writes the realm
   * and its lease is valid. Only then does a batch go to the log, and does a request on this node
   * skip the read barrier (ClusterNode.owns): an owner cut off from the lease bucket (its NATS
   * server frozen) stops answering reads from its own copy once its last renewal is older than the
   * lease time minus the margin, before another node can take the realm.
   */
  acts(realmId: number): boolean {
    return this.realms.has(realmId) && this.parts.keeper.valid(realmId);
  }

  /** Sequence of the realm's last entry this node appended (0: none). */
  lastAppended(realmId: number): number {
    return this.realms.get(realmId)?.last ?? 0;
  }

  /** The realms' appends in flight, settled (a graceful stop waits for them). */
  async settled(): Promise<number> {
    this.closing = true;
    const all = [...this.realms.values()];
    await Promise.all(all.map((w) => w.tail));
    return Math.max(0, ...all.map((w) => w.last));
  }

  /** A unique message id for an entry this process appends (JetStream's deduplication). */
  nextMsgId(): string {
    return `${this.parts.link.incarnation}.${++this.serial}`;
  }

  // ---- the commit strategy ------------------------------------------------------------------

  commit(realmId: number, body: () => BatchEffects): Committed {
    const { store, ids } = this.parts;
    const w = this.realms.get(realmId);
    let sealed: Sealed | null = null;
    try {
      store.transaction(() =>
        ids.writing(w?.ids, () => {
          const effects = body();
          sealed = this.seal(realmId, w, effects);
        }),
      );
    } catch (err) {
      if (sealed !== null) this.commitFailed(realmId, sealed);
      throw err;
    }
    const s = sealed as unknown as Sealed;
    // Committed: its events wait for the log (delivered in order: each step follows the last, and
    // the applier meets the realm's entries in log order).
    if (s.msgId !== '') {
      this.undelivered.set(s.msgId, s);
      this.unlanded.set(s.msgId, s);
    }
    // A refused (or unanswered) append: its events wait for the applier's verdict (inLog: the log
    // holds it after all; displaced: it never lands).
    const settled = s.step.then(() => {
      this.unlanded.delete(s.msgId);
      this.deliver(s);
    });
    return { settled };
  }

  /**
   * The log applier met the entry this process appended with message id `msgId` (log-applier.ts):
   * the log holds it, so its batch's events are delivered now if its acknowledgement has not
   * delivered them yet — before the applier delivers any entry that follows it in the log.
   */
  inLog(msgId: string): void {
    this.unlanded.delete(msgId);
    const s = this.undelivered.get(msgId);
    if (s) this.deliver(s);
  }

  /**
   * The log applier is about to apply an entry of the realm that is not one of this process's
   * batches (another node's entry, or a lease marker): every batch of the realm committed here
   * that the log has not been seen to hold never lands (each expects the entry before it, and
   * this entry is there now). They are taken back from this copy (Replication.undo), newest
   * first, and their events dropped. Returns what the undo wrote (for the read model), or null.
   */
  displaced(realmId: number): { touched: Set<string>; restored: RowChange[] } | null {
    const gone = [...this.unlanded.values()].filter((s) => s.realmId === realmId);
    if (gone.length === 0) return null;
    // Queues registered here after such a batch's COMMIT hold it in their snapshots (their events
    // skip it): they are deleted, so their clients register again (BAD_EVENT_QUEUE_ID) and get
    // the state the log holds.
    const stale = new Set<QueueHandle>();
    for (const s of gone) {
      this.unlanded.delete(s.msgId);
      this.undelivered.delete(s.msgId);
      s.delivered = true; // never delivered: a late answer finds it settled
      for (const q of s.except ?? []) stale.add(q);
    }
    const w = this.realms.get(realmId);
    if (w) w.failed = true;
    const result = this.parts.replication.undo(gone);
    for (const q of stale) this.parts.queues.remove(q);
    console.error(
      `cluster ${this.parts.link.node}: realm ${realmId}: took back ${gone.length} batch(es) ` +
        'committed here that the log did not take (another entry took their place)',
    );
    return result;
  }

  /** Delivers a batch's events and ended sessions to this node's queues, once. */
  private deliver(s: Sealed): void {
    if (s.delivered) return;
    s.delivered = true;
    this.undelivered.delete(s.msgId);
    if (s.events.length > 0) this.parts.queues.publish(s.realmId, s.events, s.except ?? undefined);
    for (const users of s.ended) this.parts.queues.endSessions(s.realmId, users);
  }

  /**
   * Inside the realm's transaction, just before its COMMIT: takes the captured rows and sends the
   * batch to the log now (the first of the realm's appends in flight; later ones wait their turn,
   * each expecting the sequence the one before it got). Throws NotOwnerError, rolling the
   * transaction back, when this node may not act as the realm's owner now.
   */
  private seal(realmId: number, w: Writing | undefined, effects: BatchEffects): Sealed {
    const { replication, keeper } = this.parts;
    const { changes, undo } = replication.sealWithUndo();
    if (!w || w.failed || !this.acts(realmId)) {
      trace(
        `realm ${realmId}: batch refused (writes ${w !== undefined}, failed ${w?.failed}, valid ${keeper.valid(realmId)})`,
      );
      throw new NotOwnerError();
    }
    const { events, ended } = effects;
    const sealed: Sealed = {
      realmId,
      msgId: '',
      delivered: false,
      changes,
      undo,
      events,
      ended,
      sent: false,
      cancelled: false,
      step: w.tail,
      except: null,
    };
    // Nothing for the log: its answer still waits for the realm's earlier appends (w.tail).
    if (changes.length === 0 && events.length === 0 && ended.length === 0) return sealed;
    const entry = this.fit(
      {
        k: 'batch',
        node: this.parts.link.node,
        inc: this.parts.link.incarnation,
        term: keeper.term(realmId),
        changes,
        events,
        ended,
      },
      effects.forwarded ?? [],
    );
    if (changes.length > 0) replication.noteUnacked(1);
    const msgId = this.nextMsgId();
    sealed.msgId = msgId;
    const send = () => {
      if (sealed.cancelled || w.failed) return Promise.reject(new NotOwnerError());
      sealed.sent = true;
      return this.appendBatch(realmId, w, entry, msgId);
    };
    const first = w.inFlight === 0;
    w.inFlight++;
    sealed.step = (first ? send() : w.tail.then(send)).finally(() => w.inFlight--);
    w.tail = sealed.step.catch(() => undefined);
    return sealed;
  }

  /**
   * The batch's entry with what of its forwarded commands (`fw`) fits, packed (packEntry) within
   * the most one NATS message takes (entryLimit): a command whose result packs to more than
   * FORWARD_RESULT_MOST bytes is left out, and so are the last ones while the entry is over the
   * limit. A command left out is not known to a later owner by its id (docs/cluster.md "Writes on
   * any node": sent again to it after a handover, it runs again). Throws BatchTooLargeError
   * (nothing committed: the realm actor runs the batch again in halves) when the entry is over
   * the limit without any.
   */
  private fit(
    base: Extract<Entry, { k: 'batch' }>,
    forwarded: readonly [string, unknown][],
  ): Entry {
    const most = this.mostBytes();
    const small = forwarded.filter(([, data]) => pack(data).length <= FORWARD_RESULT_MOST);
    if (small.length > 0) {
      const entry: Entry = { ...base, fw: small };
      if (packEntry(entry).length <= most) return entry;
    }
    const bare = packEntry(base).length;
    if (bare > most) throw new BatchTooLargeError(bare, most);
    // Each [id, result] pair packs to its own bytes plus at most 5 of the list's and key's.
    let room = most - bare - 8;
    const kept: [string, unknown][] = [];
    for (const f of small) {
      const size = pack(f).length;
      if (size > room) break;
      room -= size;
      kept.push(f);
    }
    if (kept.length === 0) return base;
    const entry: Entry = { ...base, fw: kept };
    return packEntry(entry).length <= most ? entry : base;
  }

  /**
   * The most bytes a packed entry may take: entryLimit, never under MIN_MAX_PAYLOAD less 1 KiB,
   * where a realm's creation and set-up fit (on a server below it, reached by a reconnection, a
   * larger entry waits for another server: it is not refused).
   */
  mostBytes(): number {
    return entryLimit(this.parts.link.nc);
  }

  /**
   * Refuses a realm's first entry (ClusterNode.addRealm, bootstrap) that packs to more than one
   * NATS message takes (the bound `fit` keeps a batch's entries within): its rows are written
   * outside the realm actor, in one transaction that cannot be run again in halves as a batch is,
   * and sent as they are, a NATS refusal would leave the realm's subdomain reserved and its fate
   * unknown (the first realm: the node stopped with a NATS error). Throws RealmTooLargeError,
   * before anything of the realm goes to the log. On NATS servers at or over MIN_MAX_PAYLOAD (a
   * node runs on no other) only a realm name far longer than the 40 characters `manage
   * create-realm` accepts gets here: a guard for callers that skip that check.
   */
  checkFirst(entry: Entry): void {
    const most = this.mostBytes();
    const bytes = pack(entry).length;
    if (bytes > most) throw new RealmTooLargeError(bytes, most);
  }

  /**
   * The COMMIT failed after `seal` (a full disk, an I/O error): a batch not sent yet is not sent;
   * one already sent may be in the log without being in this copy, so the node stops, and starts
   * again from the log (which then holds it or not, for every node alike).
   */
  private commitFailed(realmId: number, s: Sealed): void {
    s.cancelled = true;
    s.step.catch(() => undefined);
    if (s.sent)
      this.parts.die(`realm ${realmId}: its COMMIT failed after its batch went to the log`);
  }

  /**
   * Appends one batch (after the realm's earlier ones), written to NATS at once rather than at
   * nats.js's next microtask. Rejects with NotOwnerError when the log refused it (another entry is
   * there) or did not answer in time: the node stops writing the realm, and its applier settles
   * the batch by the log's order (`inLog` or `displaced`).
   */
  private async appendBatch(realmId: number, w: Writing, entry: Entry, msgId: string) {
    const { link } = this.parts;
    const started = performance.now();
    const acked = appendSurely(
      link.js,
      link.jsm,
      link.names,
      realmId,
      entry,
      w.last,
      msgId,
      () => performance.now() - started < APPEND_PATIENCE_MS,
      link.checkConnection,
    );
    writeNow(link.nc);
    try {
      w.last = await acked;
      observeAppend(performance.now() - started);
    } catch (err) {
      w.failed = true;
      this.parts.deposed(realmId, `the log refused an append (${String(err)})`);
      throw new NotOwnerError();
    }
  }

  /**
   * Appends a lease marker of term `term` after the realm's entry `expect` (the takeover, once
   * caught up): its sequence. Rejects when another entry is there first (apply it and try again),
   * or when the log did not answer in time.
   */
  appendMarker(realmId: number, term: number, expect: number): Promise<number> {
    const { link } = this.parts;
    const entry: Entry = { k: 'lease', node: link.node, inc: link.incarnation, term };
    const started = performance.now();
    return appendSurely(
      link.js,
      link.jsm,
      link.names,
      realmId,
      entry,
      expect,
      this.nextMsgId(),
      () => !this.closing && performance.now() - started < link.leaseMs,
      link.checkConnection,
    );
  }
}
