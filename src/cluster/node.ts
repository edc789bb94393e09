/**
 * A Confab node of a cluster (docs/cluster.md): NATS JetStream carries the replicated log (one
 * stream, a subject per realm), the realm leases (a key-value bucket) and the messages between
 * nodes. Loaded by createServer only when a cluster is configured; the single-process server never
 * imports this module.
 *
 * This class composes the node's parts, each readable alone:
 * - link.ts: the connection, the names, the incarnation, the JetStream handles;
 * - lease-keeper.ts (over leases.ts): which realms' leases this node holds, and whether it may act
 *   as their owner right now (the fencing rules);
 * - log-writer.ts: the realm actor's commit strategy on an owner, and the realm's appends;
 * - log-applier.ts: the log applied to this node's copy, events delivered to its queues, the read
 *   barrier, the progress watch;
 * - forwarding.ts: writes forwarded to the owner, queue operations to the queue's node;
 * - rate-share.ts: the rate limits' counts shared with the other nodes;
 * and what it does itself: the lease tick and takeovers (a lease marker after catching up),
 * creating realms (subdomains.ts, id-blocks.ts), the first realm, snapshots (snapshot.ts,
 * trim.ts), typing and presence events to every node, status, and stopping.
 */
import { trace } from './trace.js';
import { log } from '../observability/log.js';
import { within } from '../lib/within.js';
import type { Subscription } from 'nats';
import type { EventQueues } from '../delivery/publisher.js';
import type { RealmPlacement, RealmRegistry } from '../../actors/registry.js';
import type { CommitStrategy } from '../../actors/realm.machine.js';
import type { EventPublisher, OutboundEvent } from '../lib/events.js';
import { pack, unpack } from '../lib/pack.js';
import { subdomainInUse } from '../mutations/realms.js';
import { Replication, type RowChange } from '../storage/replication.js';
import type { Store } from '../storage/store.js';
import { Forwarder, type QueueOp, type QueueOpReply } from './forwarding.js';
import { ClusterIds, ID_BLOCK_SIZE, idClaimer, RealmIdBlocks, type ClaimIds } from './id-blocks.js';
import {
  appendEntry,
  appendFirst,
  bucketKeys,
  gapAfter,
  isWrongLastSequence,
  patiently,
  sleep,
  type Entry,
} from './jetstream.js';
import { LeaseKeeper } from './lease-keeper.js';
import { LeaseBucket } from './leases.js';
import { openLink, type ClusterLink, type ClusterOptions } from './link.js';
import { LogApplier, replicasAway, TrimmedPastError, type ApplierHooks } from './log-applier.js';
import { LogWriter, type RealmTooLargeError } from './log-writer.js';
import { RateShare } from './rate-share.js';
import { uploadSnapshot } from './snapshot.js';
import { DEFAULT_RESERVATION_TIMEOUT_MS, SubdomainReservations } from './subdomains.js';
import { DEFAULT_TRIM_GRACE_MS, POSITION_REPORT_MS, reportPosition, trimLog } from './trim.js';

export type { ClusterOptions } from './link.js';

/** How often a lapsed lease is renewed between lease ticks (LeaseKeeper.renewLapsed). */
const LAPSED_RENEWAL_MS = 250;

/**
 * How long a stopping node waits, in all, for its NATS server to answer its last steps (giving its
 * leases up, draining its connection) before it closes the connection regardless, and says so in
 * its log: a frozen or overloaded server must not hold a node's stop. A live server answers them
 * in milliseconds; a lease not given up lapses after the lease time as after a crash.
 */
export const STOP_NATS_MS = 5000;

/** What the server tells the node when it makes it (nothing is wired afterwards). */
export type NodeHooks = ApplierHooks & {
  /**
   * Fails, through the realm's actor, an export of a realm this node owns whose node is gone
   * (src/admin/export-jobs.ts failOrphaned; export-runs.ts decides).
   */
  exportOrphaned?: (realmId: number, id: number) => Promise<void>;
  /**
   * This node now owns the realm (a takeover): work kept in the store for its owner (the mail
   * outbox, missed-message batches, outgoing-webhook calls) is looked at.
   */
  realmOwned?: (realmId: number) => void;
};

export class ClusterNode implements RealmPlacement {
  readonly link: ClusterLink;
  private readonly replication: Replication;
  /** The ids of new rows: this node's id source, and the guard's judge. */
  private readonly ids: ClusterIds;
  private readonly claimIds: ClaimIds;
  private readonly subdomains: SubdomainReservations;
  private readonly leases: LeaseBucket;
  private readonly keeper: LeaseKeeper;
  private readonly applier: LogApplier;
  private readonly writer: LogWriter;
  private readonly forwarder: Forwarder;
  /** The rate limits' counts, shared with the other nodes (rate-share.ts). */
  readonly sharedLimits: RateShare;
  private registry: RealmRegistry | null = null;
  /** Realms whose takeover (or creation) is under way here. */
  private readonly acquiring = new Set<number>();
  private leaseTimer: NodeJS.Timeout | null = null;
  private lapseTimer: NodeJS.Timeout | null = null;
  private ephemeral: Subscription | null = null;
  /** JetStream's advisories of the lease bucket's leader elected (LeaseKeeper.elected). */
  private leaseElections: Subscription | null = null;
  private closed = false;
  private dead = false;
  private bootstrapping = false;
  private snapshotting = false;
  private lastSnapshot = 0;
  /** When this node last reported its applied position (trim.ts). */
  private lastReport = 0;

  constructor(
    link: ClusterLink,
    private readonly store: Store,
    private readonly queues: EventQueues,
    private readonly hooks: NodeHooks = {},
  ) {
    this.link = link;
    const { opts, kv, node, incarnation } = link;
    this.replication = new Replication(store);
    this.ids = new ClusterIds(store.db);
    store.ids.install(this.ids);
    this.claimIds = idClaimer(kv, store.db);
    this.subdomains = new SubdomainReservations(
      kv,
      node,
      incarnation,
      opts.reservationTimeoutMs ?? DEFAULT_RESERVATION_TIMEOUT_MS,
      (realmId) => this.voidRealm(realmId),
    );
    this.leases = new LeaseBucket(link.leaseKv, node, incarnation);
    this.keeper = new LeaseKeeper(this.leases, {
      leaseMs: link.leaseMs,
      lost: (realmId, why) => this.lose(realmId, why),
      unanswered: link.checkConnection,
      log: (line) => {
        trace(line);
        console.error(`cluster ${node}: ${line}`);
      },
    });
    this.applier = new LogApplier({
      link,
      replication: this.replication,
      ids: this.ids,
      queues,
      hooks,
      mine: (e) => e.node === node && e.inc === incarnation,
      mineInLog: (msgId) => this.writer.inLog(msgId),
      displaced: (realmId) => this.writer.displaced(realmId),
      applied: () => this.maybeSnapshot(),
      forwardsRan: (seq, ran) => this.forwarder.ranInLog(seq, ran),
      die: (reason) => this.die(reason),
    });
    this.writer = new LogWriter({
      link,
      store,
      replication: this.replication,
      ids: this.ids,
      keeper: this.keeper,
      queues,
      die: (reason) => this.die(reason),
      deposed: (realmId, why) => this.lose(realmId, why),
    });
    this.sharedLimits = new RateShare(link);
    this.forwarder = new Forwarder({
      link,
      queues,
      owns: (realmId) => this.owns(realmId),
      runHere: (realmId, type, payload, id) => {
        const rt = this.registry?.get(realmId);
        if (!rt) return Promise.reject(new Error(`no realm ${realmId}`));
        return rt.askHere(type, payload, id);
      },
      position: (realmId) => this.writer.lastAppended(realmId) || this.applier.applied,
      waitApplied: (seq) => this.applier.waitApplied(seq),
      appliedWaitMs: link.opts.readBarrierMs,
      stuck: (f) => this.applier.onStuck(f),
      ackMs: opts.forwardAckMs,
    });
  }

  /** Connects to NATS (link.ts) and makes the node on it. */
  static async join(
    opts: ClusterOptions,
    store: Store,
    queues: EventQueues,
    hooks: NodeHooks = {},
  ): Promise<ClusterNode> {
    return new ClusterNode(await openLink(opts), store, queues, hooks);
  }

  /** Connects to NATS; the node is made on the link once what it needs exists (server.ts). */
  static connect(opts: ClusterOptions): Promise<ClusterLink> {
    return openLink(opts);
  }

  get commit(): CommitStrategy {
    return this.writer;
  }

  get nodeName(): string {
    return this.link.node;
  }

  get incarnation(): string {
    return this.link.incarnation;
  }

  get temporaryUrlKey(): Buffer {
    return this.link.temporaryUrlKey;
  }

  get files() {
    return this.link.files;
  }

  get exportRuns() {
    return this.link.exportRuns;
  }

  /** Log position applied here. */
  get appliedSeq(): number {
    return this.applier.applied;
  }

  /** Starts applying the log and taking part in the leases. */
  async start(registry: RealmRegistry): Promise<void> {
    this.registry = registry;
    const { nc, names, node } = this.link;
    this.ephemeral = nc.subscribe(`${names.ephemeral}.>`, {
      callback: (err, msg) => {
        if (err) return;
        const realmId = Number(msg.subject.slice(names.ephemeral.length + 1));
        try {
          const [from, events] = unpack<[string, OutboundEvent[]]>(msg.data);
          if (from !== this.link.incarnation) this.queues.publish(realmId, events);
        } catch (e) {
          console.error('delivering ephemeral events failed', e);
        }
      },
    });
    this.forwarder.serveQueues();
    const since = Date.now();
    // The log may have been trimmed past this copy since src/cluster/main.ts looked (another
    // node's trim in between): found before the consumer is made, which would hand on nothing
    // when the log holds no entry after the gap. One trimmed meanwhile is found by the applier
    // (`trimmedPast`). Either fails the start, which main.ts makes again from a snapshot.
    const at = this.applier.applied;
    const gap = await patiently(() => gapAfter(this.link.jsm, names, at), since);
    if (gap !== null) throw new TrimmedPastError(at, gap);
    await this.applier.start(registry, since);
    const caughtUp = patiently(() => this.applier.caughtUp(), since);
    // Left unsettled when the start fails (then closed): its late failure is nobody's.
    caughtUp.catch(() => undefined);
    await Promise.race([caughtUp, this.applier.trimmedPast]);
    this.applier.started();
    // What this node's previous process was exporting will not finish: its realms' owners fail it.
    // The keys' list is bounded (bucketKeys: KEYS_PATIENCE_MS while JetStream answers 503 or not
    // at all); past it the node says so and starts without: those exports' keys are no longer
    // renewed, and their realms' owners fail them after a lease time all the same.
    await this.link.exportRuns
      .abandonPrevious((filter) => bucketKeys(this.link.jsm, names.leases, filter))
      .then(
        (n) => {
          if (n > 0) console.error(`cluster ${node}: gave up ${n} interrupted export(s)`);
        },
        (err: unknown) =>
          console.error(
            `cluster ${node}: giving up its previous process's exports failed, starting without: ${err instanceof Error ? err.message : String(err)}`,
          ),
      );
    this.leaseTimer = setInterval(
      () => void this.leaseTick(),
      Math.max(100, this.link.leaseMs / 3),
    );
    // A renewal sent while the lease bucket elected a leader is never answered: asked again when
    // it has one (a frozen server that led it left the owner's lease lapsed seconds longer).
    this.leaseElections = nc.subscribe(
      `$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.KV_${names.leases}`,
      {
        callback: (err) => {
          if (!err && !this.closed && !this.dead) void this.keeper.elected().catch(() => undefined);
        },
      },
    );
    // A lapsed lease (renewals unanswered) is renewed every quarter second until it is valid again.
    this.lapseTimer = setInterval(() => {
      if (!this.closed && !this.dead) void this.keeper.renewLapsed().catch(() => undefined);
    }, LAPSED_RENEWAL_MS);
    void this.leaseTick();
  }

  /** Resolves once everything the stream held when called is applied here. */
  caughtUp(): Promise<void> {
    return this.applier.caughtUp();
  }

  /**
   * The read barrier (docs/cluster.md "Guarantees"), run before every request on a node that
   * does not act as the request's realm's owner (log-applier.ts, read-barrier.ts).
   */
  readBarrier(): Promise<void> {
    return this.applier.readBarrier();
  }

  /**
   * What event-publishing code outside the realm actor uses (typing, presence): this node's
   * queues at once, every other node's over NATS (they reach them a moment later).
   */
  readonly publisher: EventPublisher = {
    publish: (realmId: number, events: readonly OutboundEvent[]) => {
      if (this.closed) return;
      this.queues.publish(realmId, events);
      this.link.nc.publish(
        `${this.link.names.ephemeral}.${realmId}`,
        pack([this.link.incarnation, events]),
      );
    },
    delivered: () => (this.closed ? Promise.resolve() : this.link.nc.flush()),
  };

  /**
   * DELETE /events for a queue this node does not hold: done by the node the queue id names, over
   * NATS (forwarding.ts); null when no such node runs (its queues are gone).
   */
  queueOp(op: QueueOp): Promise<QueueOpReply | null> {
    return this.forwarder.queueOp(op);
  }

  // ---- placement ----------------------------------------------------------------------------

  /** Whether this node acts as the realm's owner now: it writes it, and its lease is valid. */
  owns(realmId: number): boolean {
    return this.writer.acts(realmId);
  }

  forward(realmId: number, type: string, payload: unknown): Promise<unknown> {
    return this.forwarder.forward(realmId, type, payload);
  }

  /** The realm's current owner, as the lease bucket says (for status and tests). */
  async ownerOf(realmId: number): Promise<string | null> {
    return this.leases.holderOf(realmId);
  }

  private async leaseTick(): Promise<void> {
    if (this.closed || this.dead || this.bootstrapping) return;
    const { kv, node, exportRuns } = this.link;
    if (Date.now() - this.lastReport >= POSITION_REPORT_MS) {
      this.lastReport = Date.now();
      void reportPosition(kv, node, this.applier.applied).catch(() => undefined);
    }
    const free = this.store.realms
      .all()
      .map((r) => r.id)
      .filter((id) => !this.keeper.holds(id) && !this.acquiring.has(id));
    await Promise.all([
      this.keeper.renewAll().catch(() => undefined),
      ...free.map((id) =>
        this.keeper.tryTake(id).then(
          (rev) => (rev > 0 ? void this.takeOver(id) : undefined),
          () => undefined,
        ),
      ),
      // Realm exports: this node's renewed, those of its realms whose node is gone failed.
      exportRuns.renew().catch(() => undefined),
      exportRuns
        .check(
          this.store.realmExports.unfinished(),
          (realmId) => this.owns(realmId) && this.hooks.exportOrphaned !== undefined,
          (realmId, id) => this.hooks.exportOrphaned!(realmId, id),
        )
        .catch(() => undefined),
    ]);
  }

  /**
   * Holding the lease (taken, being renewed at every tick meanwhile): applies everything the log
   * holds, claims the realm's id blocks (fresh ones: never a previous owner's; `ids` when the
   * realm was just created here), renews the lease once more and appends a lease marker of that
   * term expecting the realm's last entry — which fences off any append of the previous owner from
   * then on — and serves the realm's writes. A lease lost on the way ends the takeover.
   */
  private async takeOver(realmId: number, ids?: RealmIdBlocks): Promise<void> {
    if (this.acquiring.has(realmId)) return;
    this.acquiring.add(realmId);
    const { node } = this.link;
    try {
      for (let attempt = 0; attempt < 20 && !this.closed; attempt++) {
        if (!this.keeper.holds(realmId)) return;
        trace(`takeover of realm ${realmId}: catching up (attempt ${attempt})`);
        await this.applier.caughtUp();
        // After catching up: a cluster's first claim starts above every id this copy holds.
        ids ??= await this.claimRealmIds();
        const expect = await this.applier.newestOfRealm(realmId);
        trace(`takeover of realm ${realmId}: caught up, marker expects ${expect}; confirming`);
        const term = await this.keeper.confirm(realmId);
        if (term === 0) {
          console.error(`cluster ${node}: gave up taking realm ${realmId}: its lease is lost`);
          return;
        }
        let at: number;
        try {
          at = await this.writer.appendMarker(realmId, term, expect);
        } catch (err) {
          trace(`takeover of realm ${realmId}: marker failed: ${String(err)}`);
          await sleep(50); // another append landed first, or no answer: catch up and try again
          continue;
        }
        // Its own batches of an earlier term that the marker displaced are taken back from this
        // copy when the applier meets the marker (LogWriter.displaced): before any new batch.
        trace(`takeover of realm ${realmId}: marker at ${at}; applying it`);
        await this.applier.waitApplied(at);
        if (!this.keeper.holds(realmId)) return;
        this.writer.start(realmId, at, ids);
        ids = undefined; // the writer's now
        this.keeper.establish(realmId);
        this.forwarder.serve(realmId);
        this.registry?.get(realmId);
        trace(`owns realm ${realmId} (lease ${term})`);
        console.error(`cluster ${node}: owns realm ${realmId} (lease ${term})`);
        this.hooks.realmOwned?.(realmId);
        return;
      }
      // Given up: the lease goes back, for another node (or this one, at a later tick).
      await this.keeper.release(realmId).catch(() => this.keeper.forget(realmId));
    } catch (err) {
      console.error(`cluster ${node}: taking realm ${realmId} failed`, err);
      await this.keeper.release(realmId).catch(() => this.keeper.forget(realmId));
    } finally {
      this.acquiring.delete(realmId);
      ids?.close();
    }
  }

  /** This node no longer holds the realm (another node took its lease, or the log refused it). */
  private lose(realmId: number, why: string): void {
    const had = this.writer.writes(realmId) || this.keeper.holds(realmId);
    this.keeper.forget(realmId);
    this.writer.stop(realmId);
    this.forwarder.unserve(realmId);
    trace(`lose realm ${realmId}: ${why}`);
    if (had) console.error(`cluster ${this.link.node}: no longer owns realm ${realmId}: ${why}`);
  }

  /** Claims the id blocks a realm's owner starts with (id-blocks.ts). */
  private claimRealmIds(): Promise<RealmIdBlocks> {
    return RealmIdBlocks.claimFor(this.claimIds, this.link.opts.idBlockSize ?? ID_BLOCK_SIZE);
  }

  /**
   * Makes sure the realm `realmId` never appears unless it has already: false when it exists,
   * true once it never can. A realm's first entry is appended expecting its subject empty, so
   * any entry there before it voids the id: this node appends a lease marker of term 0 expecting
   * the same, unless the subject holds an entry already (the realm's first, or another void).
   * Taking over a subdomain reservation whose realm never appeared (subdomains.ts).
   */
  private async voidRealm(realmId: number): Promise<boolean> {
    const { js, names, node, incarnation } = this.link;
    for (let attempt = 1; ; attempt++) {
      if (this.store.realms.byId(realmId)) return false;
      const last = await this.applier.lastOnSubject(realmId);
      if (last > 0) {
        await this.applier.waitApplied(last);
        return this.store.realms.byId(realmId) === undefined;
      }
      const marker: Entry = { k: 'lease', node, inc: incarnation, term: 0 };
      try {
        await appendEntry(js, names, realmId, marker, 'Nats-Expected-Last-Subject-Sequence', 0);
        console.error(`cluster ${node}: voided realm id ${realmId} (never created)`);
        return true;
      } catch (err) {
        // Something landed on the subject first: look at it.
        if (!isWrongLastSequence(err) || attempt >= 5) throw err;
      }
    }
  }

  // ---- first realm, new realms --------------------------------------------------------------

  /**
   * On an empty cluster: `create` writes the first realm outside the realm actor (first boot),
   * and its rows become the log's first entry — refused if any entry got there first, in which
   * case this node stops (another node bootstrapped the cluster; this copy is discarded). Its
   * ids are SQLite's, as in a single process: no other realm exists to collide with, and the
   * first id block claimed starts above them.
   */
  async bootstrap<T extends { realm_id: number }>(
    create: () => Promise<T | null>,
  ): Promise<T | null> {
    const { js, jsm, names, node, incarnation } = this.link;
    const info = await patiently(() => jsm.streams.info(names.stream));
    if (info.state.last_seq > 0 || this.store.realms.all().length > 0) return null;
    this.bootstrapping = true;
    try {
      const created = await this.ids.withoutBlocks(create);
      if (!created) return null;
      const changes = this.replication.seal();
      this.replication.noteUnacked(1);
      const entry: Entry = {
        k: 'batch',
        node,
        inc: incarnation,
        term: 0,
        changes,
        events: [],
        ended: [],
      };
      try {
        this.writer.checkFirst(entry);
      } catch (err) {
        // Nothing went to the log; this copy, which holds the realm, is rebuilt at the next start
        // (noted unacknowledged above).
        const { bytes, most } = err as RealmTooLargeError;
        this.die(
          `the first realm's entry is not appended: its rows (the realm and its welcome ` +
            `messages) take ${bytes} bytes, more than one NATS message takes (${most}: the ` +
            "servers' max_payload less 1 KiB). Raise max_payload in the NATS servers' " +
            'configuration.',
        );
        throw err;
      }
      try {
        // Asked again while a cluster just started does not answer yet (appendFirst).
        await appendFirst(
          js,
          jsm,
          names,
          created.realm_id,
          entry,
          info.state.last_seq,
          this.writer.nextMsgId(),
        );
      } catch (err) {
        this.die(
          isWrongLastSequence(err)
            ? `another node created the first realm (${String(err)})`
            : `the first realm's entry was not appended (${String(err)})`,
        );
        throw err;
      }
      this.registry?.noteRealmCreated(created.realm_id);
      return created;
    } finally {
      this.bootstrapping = false;
    }
  }

  /**
   * A realm created on this node outside any realm actor (`manage create-realm` on its admin
   * socket, test fixtures; the first realm goes through `bootstrap`), at `subdomain`. Its rows,
   * the realm's own id included, get their ids from blocks claimed for it, which its owner then
   * goes on with. In order:
   *
   * 1. This node catches up with the log and refuses a subdomain its copy has (the first realm,
   *    which has no reservation, among them).
   * 2. `create` writes the realm's rows in a transaction that is rolled back once they are
   *    captured: they reach this copy as they reach every other, from the log. Rows that would
   *    not fit in one log entry (LogWriter.checkFirst: a very long name) are refused here
   *    (RealmTooLargeError, 400), as a refusal of `create` is, before anything goes to NATS.
   * 3. It reserves the subdomain for the realm's id in the lease bucket (subdomains.ts): only one
   *    node's reservation wins; the others are refused here, having written nothing.
   * 4. It claims the realm's lease and appends the rows as the first entry of the realm's subject
   *    (expecting it empty: an entry there first voided the id, subdomains.ts), waits until it
   *    has applied that entry, and owns the realm from then on (its lease marker, as a takeover).
   *
   * Nothing is written to this copy before the log has the realm, so a refused or failed append
   * leaves this node as it was. If the append's answer is lost, the reservation and the lease
   * stay: the entry, should it have landed, is applied here and the lease taken at a lease tick;
   * otherwise the reservation is taken over after its timeout.
   */
  async addRealm<T extends { realm_id: number }>(subdomain: string, create: () => T): Promise<T> {
    const { js, names, node, incarnation } = this.link;
    await this.applier.caughtUp();
    if (this.store.realms.byStringId(subdomain)) throw subdomainInUse();
    const ids = await this.claimRealmIds();
    const realmId = ids.peek('realms');
    let reserved = 0;
    let term = 0;
    /** Whether the realm's first entry is in the log: no, maybe (the answer was lost), yes. */
    let inLog = 'no' as 'no' | 'maybe' | 'yes';
    this.acquiring.add(realmId);
    try {
      const { created, changes } = this.capture(ids, realmId, create);
      const first = (t: number): Entry => ({
        k: 'batch',
        node,
        inc: incarnation,
        term: t,
        changes,
        events: [],
        ended: [],
      });
      // Sized with the largest term there can be: the entry appended takes no more.
      this.writer.checkFirst(first(Number.MAX_SAFE_INTEGER));
      reserved = await this.subdomains.reserve(subdomain, realmId);
      term = await this.keeper.claim(realmId);
      if (term === 0) throw new Error(`realm ${realmId}: its lease is held already`);
      const entry = first(term);
      this.applier.unwritten.add(realmId);
      let seq: number;
      try {
        seq = await appendEntry(
          js,
          names,
          realmId,
          entry,
          'Nats-Expected-Last-Subject-Sequence',
          0,
        );
      } catch (err) {
        if (!isWrongLastSequence(err)) {
          inLog = 'maybe'; // if it landed, its entry is applied here all the same
          throw err;
        }
        // The id was voided: another node took the reservation over (this one took too long).
        this.applier.unwritten.delete(realmId);
        throw subdomainInUse();
      }
      inLog = 'yes';
      await this.applier.waitApplied(seq);
      this.acquiring.delete(realmId);
      this.registry?.noteRealmCreated(realmId);
      await this.takeOver(realmId, ids);
      if (!this.writer.writes(realmId))
        throw new Error(`realm ${realmId}: its lease marker failed`);
      return created;
    } catch (err) {
      if (!this.writer.writes(realmId)) ids.close();
      // The realm will never exist: what was taken for it is given up.
      if (inLog === 'no') {
        if (term > 0) await this.keeper.release(realmId).catch(() => undefined);
        if (reserved > 0) await this.subdomains.release(subdomain, reserved);
      } else if (inLog === 'maybe') this.keeper.forget(realmId);
      throw err;
    } finally {
      this.acquiring.delete(realmId);
    }
  }

  /**
   * The rows `create` writes (a new realm's, with ids from `ids`; its row must get `realmId`), as
   * a log entry's changes, captured in a transaction that is then rolled back.
   */
  private capture<T extends { realm_id: number }>(
    ids: RealmIdBlocks,
    realmId: number,
    create: () => T,
  ): { created: T; changes: RowChange[] } {
    const out: { captured?: { created: T; changes: RowChange[] } } = {};
    const rollBack = new Error('rolled back');
    try {
      this.store.transaction(() => {
        const created = this.ids.writing(ids, create);
        if (created.realm_id !== realmId)
          throw new Error(`realm ${realmId} reserved, realm ${created.realm_id} created`);
        out.captured = { created, changes: this.replication.seal() };
        throw rollBack;
      });
    } catch (err) {
      if (err !== rollBack) throw err;
    }
    return out.captured!;
  }

  // ---- snapshots ----------------------------------------------------------------------------

  /**
   * Every `snapshotEvery` entries, a node that holds no realm's lease (its copy holds nothing the
   * log has not acknowledged) uploads a copy of its database, for new nodes to start from
   * (`restoreSnapshot`, src/cluster/snapshot.ts).
   */
  private maybeSnapshot(): void {
    const { opts } = this.link;
    const every = opts.snapshotEvery ?? 10_000;
    if (this.snapshotting || !opts.tmpDir || this.keeper.realms().length > 0) return;
    if (this.applier.applied - this.lastSnapshot < every) return;
    this.snapshotting = true;
    setImmediate(() => {
      this.writeSnapshot()
        .catch((err: unknown) => console.error(`cluster ${opts.node}: snapshot failed`, err))
        .finally(() => (this.snapshotting = false));
    });
  }

  /** Uploads a snapshot (if it is newer than the bucket's), then trims the log behind it. */
  async writeSnapshot(): Promise<number | null> {
    const { opts, snapshots, kv, jsm, names } = this.link;
    const seq = await uploadSnapshot(this.replication, snapshots, opts.tmpDir!, opts.node, (s) => {
      this.lastSnapshot = s;
    });
    if (seq !== null) {
      await reportPosition(kv, opts.node, this.applier.applied);
      const trimmed = await trimLog(jsm, kv, names, seq, opts.trimGraceMs ?? DEFAULT_TRIM_GRACE_MS);
      if (trimmed !== null)
        console.error(`cluster ${opts.node}: log trimmed up to position ${trimmed}`);
    }
    return seq;
  }

  // ---- status, shutdown ---------------------------------------------------------------------

  async status(): Promise<{
    node: string;
    applied: number;
    last: number;
    lag: number;
    /** The log stream's replicas its leader has not heard from lately (`replicasAway`). */
    replicasAway: number;
    owns: number[];
  }> {
    const info = await this.link.jsm.streams.info(this.link.names.stream);
    const applied = this.applier.applied;
    return {
      node: this.link.node,
      applied,
      last: info.state.last_seq,
      lag: Math.max(0, info.state.last_seq - applied),
      replicasAway: replicasAway(info.cluster),
      owns: this.keeper.realms().filter((id) => this.owns(id)),
    };
  }

  /**
   * What /metrics shows of this node without asking NATS: its position, whether applying the log
   * stalled, the leases it holds and those it acts on, the NATS server it is connected to.
   */
  localStatus() {
    const held = this.keeper.realms().filter((id) => this.writer.writes(id));
    return {
      ...this.applier.status(),
      held: held.length,
      acting: held.filter((id) => this.keeper.valid(id)).length,
      natsServer: this.link.nc.info?.server_name ?? '',
    };
  }

  /**
   * Stops renewing, gives the leases up (another node takes the realms at once) and disconnects.
   * Bounded: at most 5 s for this node's own appends to be applied, then at most STOP_NATS_MS for
   * giving up the leases and draining the connection, which is closed after that in any case.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    // Appends still in flight finish first: their clients are waiting. Then this node applies
    // them, so that the queues it saves and its log position agree: started again, it does not
    // deliver them a second time.
    const appended = await this.writer.settled();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.applier.waitApplied(appended),
      new Promise((resolve) => (timer = setTimeout(resolve, 5000))),
    ]);
    clearTimeout(timer);
    this.closed = true;
    this.applier.flushApplied();
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.lapseTimer) clearInterval(this.lapseTimer);
    this.leaseElections?.unsubscribe();
    this.forwarder.close();
    const held = this.keeper.realms();
    for (const id of held) this.writer.stop(id);
    // Nothing more is appended from here: the realms' next owners need not wait a lease time
    // (each fences this node off with its lease marker as usual). Each NATS step from here is
    // bounded by one deadline (STOP_NATS_MS): a lease not given up lapses on its own.
    const deadline = performance.now() + STOP_NATS_MS;
    const released = Promise.all(held.map((id) => this.keeper.release(id).catch(() => undefined)));
    if (!(await within(deadline, released)))
      log.warn(
        { waitMs: STOP_NATS_MS, leases: held.length },
        'stopping: giving up the leases went unanswered; they lapse instead',
      );
    this.ephemeral?.unsubscribe();
    this.sharedLimits.close();
    await this.applier.close();
    // Drained (what this node published is flushed, its subscriptions ended), within what is left
    // of the bound, then closed whatever the drain did: nats.js's drain waits for its server's
    // answer to a flush, and one that goes unanswered (a frozen server) ends the drain without
    // closing the connection, which kept reconnecting afterwards, holding the process open.
    if (
      !(await within(
        deadline,
        this.link.nc.drain().catch(() => undefined),
      ))
    )
      log.warn(
        { waitMs: STOP_NATS_MS, server: this.link.nc.getServer() },
        'stopping: the NATS server did not answer the drain in time; closing the connection',
      );
    await this.link.nc.close().catch(() => undefined);
  }

  private die(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    console.error(`cluster ${this.link.node}: stopping: ${reason}`);
    // What the log already holds of this node's own is recorded, if this copy still can.
    try {
      this.replication.flushApplied();
    } catch {
      // the copy is rebuilt from the log at the next start
    }
    (this.link.opts.fatal ?? (() => process.exit(75)))(reason);
  }
}
