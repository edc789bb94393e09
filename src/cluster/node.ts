/**
 * A Confab node of a cluster (docs/cluster.md): NATS JetStream carries the replicated log (one
 * stream, a subject per realm), the realm leases (a key-value bucket) and the messages between
 * nodes. Loaded by createServer only when a cluster is configured; the single-process server never
 * imports this module.
 *
 * - Placement: a realm is owned by the node holding its lease (`realm-<id>` in the bucket). The
 *   owner renews it every third of the lease time with a compare-and-set on its revision; another
 *   node that sees the revision unchanged for a whole lease time takes it the same way, so at most
 *   one node wins each revision.
 * - The log: the owner's realm actor commits to its own SQLite file, then appends the batch's
 *   captured rows and events to `confab.log.<realm>` with JetStream's expected-last-subject-
 *   sequence, and answers only once JetStream acknowledged. A new owner first appends a lease
 *   marker the same way: from then on a deposed owner's appends are refused (fencing), and its
 *   client is never told "success".
 * - Every node applies the stream in order to its own SQLite copy (the owner skips the rows of its
 *   own entries, already written) and delivers each entry's events to its own queues.
 * - Writes arriving at another node are forwarded to the owner (request/reply on
 *   `confab.cmd.<realm>`), answered once this node has applied them (read-your-writes).
 *
 * - Ids: an owner gives new rows ids from blocks claimed for the realm alone (id-blocks.ts), so
 *   owners of different realms never give the same id.
 * - A realm created on a node reserves its subdomain in the lease bucket first (subdomains.ts),
 *   so two nodes never both create one.
 *
 * Beside it: jetstream.ts (stream, buckets, entry format, fenced append), leases.ts, forwarding.ts,
 * refresh.ts (read models after another node's rows), snapshot.ts, id-blocks.ts, subdomains.ts.
 */
import {
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type ObjectStore,
  type Subscription,
} from 'nats';
import crypto from 'node:crypto';
import type { EventQueues } from '../delivery/publisher.js';
import type { RealmPlacement, RealmRegistry } from '../../actors/registry.js';
import type { CommitLog } from '../../actors/realm.machine.js';
import type { EventPublisher, OutboundEvent } from '../lib/events.js';
import { observeAppend } from '../observability/metrics.js';
import { pack, unpack } from '../lib/pack.js';
import { subdomainInUse } from '../mutations/realms.js';
import { goneUploads, Replication, type RowChange } from '../storage/replication.js';
import type { Store } from '../storage/store.js';
import { answerForwarded, askOwner, FORWARD_DEADLINE_MS, fromWireError } from './forwarding.js';
import { ClusterIds, ID_BLOCK_SIZE, idClaimer, RealmIdBlocks, type ClaimIds } from './id-blocks.js';
import {
  appendEntry,
  clusterNames,
  isWrongLastSequence,
  NotOwnerError,
  connectJetStream,
  patiently,
  sharedTemporaryUrlKey,
  sleep,
  writeNow,
  type ClusterNames,
  type Entry,
} from './jetstream.js';
import { ExportRuns } from './export-runs.js';
import { DEFAULT_READ_BARRIER_MS, passReadBarrier } from './read-barrier.js';
import { LeaseBucket } from './leases.js';
import { refreshReadModel } from './refresh.js';
import { uploadSnapshot } from './snapshot.js';
import { DEFAULT_RESERVATION_TIMEOUT_MS, SubdomainReservations } from './subdomains.js';
import { DEFAULT_TRIM_GRACE_MS, POSITION_REPORT_MS, reportPosition, trimLog } from './trim.js';

export type ClusterOptions = {
  /** NATS server URLs (any of the cluster's servers). */
  servers: string[];
  /** This node's name: letters and digits; queue ids start with it. */
  node: string;
  /** JetStream replicas of the log and the lease bucket (the NATS cluster's size, at most 5). */
  replicas: number;
  /** Prefix of the stream, buckets and subjects (clusterNames); default none. */
  namespace?: string;
  /** Lease time (ms): how long an owner that stopped renewing keeps a realm. Default 3000. */
  leaseMs?: number;
  /** A node owning no realm writes a snapshot after this many log entries; default 10,000. */
  snapshotEvery?: number;
  /**
   * How long a request on a node that does not own its realm waits for this node to apply what the
   * log held when it arrived (the read barrier, read-barrier.ts) before it is answered 503;
   * default 5000 (CLUSTER_READ_BARRIER_MS).
   */
  readBarrierMs?: number;
  /** Where the snapshot file is written before it is uploaded (DATA_DIR/tmp). */
  tmpDir?: string;
  /**
   * How long the log keeps entries for a node that stopped reporting its position (docs/cluster.md
   * "Catch-up"); one away longer starts from a snapshot. Default 5 minutes.
   */
  trimGraceMs?: number;
  /** What to do when this node must stop (its database holds commits the log refused). */
  fatal?: (reason: string) => void;
  /**
   * Ids per block of a realm's new-row ids (id-blocks.ts); default 65,536. Nodes may differ
   * (claims count ids); small blocks are for tests.
   */
  idBlockSize?: number;
  /**
   * How long a subdomain reservation whose realm has not appeared in the log is waited for before
   * another node may take it over (subdomains.ts); default 60 s.
   */
  reservationTimeoutMs?: number;
  /**
   * Run on a nats-server older than 2.9.21 (CLUSTER_ALLOW_UNSAFE_NATS=1), whose expected-sequence
   * checks can let two racing writes through; without it the node refuses to join on one
   * (connectJetStream, docs/cluster.md "NATS version").
   */
  allowUnsafeNats?: boolean;
};

type Owned = {
  term: number;
  /** Sequence of the last entry appended for the realm (the next append expects it). */
  last: number;
  tail: Promise<void>;
  /** Batches sealed for the log whose appends have not settled yet. */
  inFlight: number;
  sub: Subscription;
  /** Where the realm's new rows get their ids. */
  ids: RealmIdBlocks;
};

/** A batch sealed for the log (ClusterNode.seal): what its append needs after the COMMIT. */
type Sealed = {
  events: OutboundEvent[];
  ended: (readonly number[] | null)[];
  /** Its append has gone to NATS. */
  sent: boolean;
  /** Its COMMIT failed before it went: it never goes. */
  cancelled: boolean;
  /** Resolves once the log holds it (and the realm's earlier batches). */
  step: Promise<void>;
};

export class ClusterNode implements RealmPlacement, CommitLog {
  /** This process's incarnation: entries it wrote carry it (a restarted node is another). */
  readonly incarnation = crypto.randomBytes(6).toString('hex');
  private readonly leaseMs: number;
  private readonly names: ClusterNames;
  private readonly leases: LeaseBucket;
  private readonly replication: Replication;
  /** The ids of new rows: this node's id source, and the guard's judge. */
  private readonly ids: ClusterIds;
  private readonly claimIds: ClaimIds;
  private readonly subdomains: SubdomainReservations;
  /** Which node runs each realm export under way (export-runs.ts). */
  readonly exportRuns: ExportRuns;
  /**
   * Realms being created here whose first entry is on its way to the log: their rows are not in
   * this copy yet (addRealm), so that entry is applied here like another node's.
   */
  private readonly unwritten = new Set<number>();
  private registry: RealmRegistry | null = null;
  private readonly owned = new Map<number, Owned>();
  private readonly acquiring = new Set<number>();
  /** Highest stream sequence seen per realm subject. */
  private readonly lastOfRealm = new Map<number, number>();
  private applied: number;
  private waiters: { seq: number; resolve: () => void }[] = [];
  /** The question for the log's last position under way, and the one to ask after it. */
  private positionAsked: Promise<number> | null = null;
  private positionNext: Promise<number> | null = null;
  private consumer: ConsumerMessages | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  /** Lease renewals in flight (a graceful stop waits for them before giving the leases up). */
  private readonly renewals = new Set<Promise<boolean>>();
  private ephemeral: Subscription | null = null;
  private closed = false;
  private dead = false;
  private bootstrapping = false;
  private snapshotting = false;
  private lastSnapshot = 0;
  /**
   * Removes this node's copies of uploads whose rows an applied entry deleted (set by the server:
   * src/cluster/uploads.ts removeLocal).
   */
  onUploadsGone: ((pathIds: string[]) => void) | null = null;
  /**
   * Told when an applied entry (this node's own too) writes a realm export's row: the server then
   * removes this node's copies of archives no longer served (src/admin/export-jobs.ts sweep).
   */
  onExportsChanged: (() => void) | null = null;
  /**
   * Fails, through the realm's actor, an export of a realm this node owns whose node is gone
   * (set by the server: src/admin/export-jobs.ts failOrphaned; export-runs.ts decides).
   */
  onExportOrphaned: ((realmId: number, id: number) => Promise<void>) | null = null;
  /** When this node last reported its applied position (trim.ts). */
  private lastReport = 0;

  private constructor(
    private readonly opts: ClusterOptions,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly kv: KV,
    /** Signs temporary upload URLs: the same on every node (sharedTemporaryUrlKey). */
    readonly temporaryUrlKey: Buffer,
    /** Uploaded files (src/cluster/uploads.ts). */
    readonly files: ObjectStore,
    private readonly snapshots: ObjectStore,
    private readonly store: Store,
    private readonly queues: EventQueues,
  ) {
    this.leaseMs = opts.leaseMs ?? 3000;
    this.names = clusterNames(opts.namespace);
    this.leases = new LeaseBucket(kv, opts.node, this.incarnation, this.leaseMs);
    this.replication = new Replication(store);
    this.applied = this.replication.state().applied;
    this.ids = new ClusterIds(store.db);
    store.ids.install(this.ids);
    this.claimIds = idClaimer(kv, store.db);
    this.subdomains = new SubdomainReservations(
      kv,
      opts.node,
      this.incarnation,
      opts.reservationTimeoutMs ?? DEFAULT_RESERVATION_TIMEOUT_MS,
      (realmId) => this.voidRealm(realmId),
    );
    this.exportRuns = new ExportRuns(kv, opts.node, this.incarnation, this.leaseMs);
  }

  /** Connects to NATS, makes sure the log stream and the lease bucket exist. */
  static async join(opts: ClusterOptions, store: Store, queues: EventQueues): Promise<ClusterNode> {
    if (!/^[a-z0-9]{1,16}$/i.test(opts.node)) throw new Error(`bad node name ${opts.node}`);
    const blockSize = opts.idBlockSize ?? ID_BLOCK_SIZE;
    if (!Number.isSafeInteger(blockSize) || blockSize < 1)
      throw new Error(`bad id block size ${opts.idBlockSize}`);
    const names = clusterNames(opts.namespace);
    const { nc, js, jsm, kv, files, snapshots } = await connectJetStream({ ...opts, names });
    let key: Buffer;
    try {
      key = await sharedTemporaryUrlKey(kv);
    } catch (err) {
      await nc.close();
      throw err;
    }
    return new ClusterNode(opts, nc, js, jsm, kv, key, files, snapshots, store, queues);
  }

  get log(): CommitLog {
    return this;
  }

  get nodeName(): string {
    return this.opts.node;
  }

  /** Log position applied here. */
  get appliedSeq(): number {
    return this.applied;
  }

  /** Starts applying the log and taking part in the leases. */
  async start(registry: RealmRegistry): Promise<void> {
    this.registry = registry;
    this.ephemeral = this.nc.subscribe(`${this.names.ephemeral}.>`, {
      callback: (err, msg) => {
        if (err) return;
        const realmId = Number(msg.subject.slice(this.names.ephemeral.length + 1));
        try {
          const [from, events] = unpack<[string, OutboundEvent[]]>(msg.data);
          if (from !== this.incarnation) this.queues.publish(realmId, events);
        } catch (e) {
          console.error('delivering ephemeral events failed', e);
        }
      },
    });
    const since = Date.now();
    const consumer = await patiently(
      () =>
        this.js.consumers.get(
          this.names.stream,
          this.applied > 0 ? { opt_start_seq: this.applied + 1 } : {},
        ),
      since,
    );
    this.consumer = await consumer.consume();
    void this.applyLoop(this.consumer);
    await patiently(() => this.caughtUp(), since);
    // What this node's previous process was exporting will not finish: its realms' owners fail it.
    await this.exportRuns.abandonPrevious().then(
      (n) => {
        if (n > 0) console.error(`cluster ${this.opts.node}: gave up ${n} interrupted export(s)`);
      },
      (err: unknown) => console.error(`cluster ${this.opts.node}: giving up exports failed`, err),
    );
    this.leaseTimer = setInterval(() => void this.leaseTick(), Math.max(100, this.leaseMs / 3));
    void this.leaseTick();
  }

  /** Resolves once everything the stream held when called is applied here. */
  async caughtUp(): Promise<void> {
    await this.waitApplied(await this.lastPosition());
  }

  /**
   * The log's last position (the stream's last sequence) as JetStream states it after this call.
   * One question serves every caller that arrives before it is sent; callers arriving while it
   * is under way share the next one, sent when it is answered (its answer may predate them).
   */
  private lastPosition(): Promise<number> {
    if (this.positionAsked === null) {
      this.positionAsked = this.jsm.streams
        .info(this.names.stream)
        .then((info) => info.state.last_seq)
        .finally(() => (this.positionAsked = null));
      return this.positionAsked;
    }
    this.positionNext ??= this.positionAsked
      .catch(() => 0)
      .then(() => {
        this.positionNext = null;
        return this.lastPosition();
      });
    return this.positionNext;
  }

  /**
   * The read barrier (docs/cluster.md "Guarantees"), run before every request on a node that
   * does not own the request's realm: resolves once this node has applied everything the log
   * held when the request arrived, so the request sees every write acknowledged before it, made
   * through any node. A failed question for the log's position is asked again; past
   * `readBarrierMs` (the log does not answer, or this node lags that far) it rejects with a 503:
   * the client asks again, perhaps another node (read-barrier.ts).
   */
  readBarrier(): Promise<void> {
    return passReadBarrier(
      {
        position: () => this.lastPosition(),
        applied: (seq) => this.waitApplied(seq),
        stopped: () => this.closed,
      },
      this.opts.readBarrierMs ?? DEFAULT_READ_BARRIER_MS,
    );
  }

  /**
   * What event-publishing code outside the realm actor uses (typing, presence): this node's
   * queues at once, every other node's over NATS (they reach them a moment later).
   */
  readonly publisher: EventPublisher = {
    publish: (realmId: number, events: readonly OutboundEvent[]) => {
      if (this.closed) return;
      this.queues.publish(realmId, events);
      this.nc.publish(`${this.names.ephemeral}.${realmId}`, pack([this.incarnation, events]));
    },
    delivered: () => (this.closed ? Promise.resolve() : this.nc.flush()),
  };

  // ---- applying the log ---------------------------------------------------------------------

  private async applyLoop(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      if (m.seq <= this.applied) continue;
      if (m.seq !== this.applied + 1) {
        // Entries this copy needs were trimmed away (it was gone too long): it can only start
        // again from a snapshot (src/cluster/main.ts discards it; trim.ts).
        this.die(`the log was trimmed past this copy (at ${this.applied}, next entry ${m.seq})`);
        return;
      }
      try {
        const realmId = Number(m.subject.slice(this.names.log.length + 1));
        this.onEntry(m.seq, realmId, unpack<Entry>(m.data));
      } catch (err) {
        // A node that cannot apply the log must not serve from a diverged copy.
        this.die(`applying log entry ${m.seq} failed: ${String(err)}`);
        return;
      }
    }
  }

  private onEntry(seq: number, realmId: number, e: Entry): void {
    if (e.k === 'seed') {
      // The seeded database reaches other nodes as a snapshot at this position (seed.ts), so a
      // node applying the entry itself started without it: empty, before the seed.
      throw new Error(
        `the cluster was seeded from node ${e.node}'s database after this node started; ` +
          'start it again: it starts from the seeded snapshot',
      );
    }
    this.lastOfRealm.set(realmId, seq);
    let mine = e.node === this.opts.node && e.inc === this.incarnation;
    // A realm created here: its rows were written nowhere before the log took them (addRealm).
    if (mine && e.k === 'batch' && this.unwritten.delete(realmId)) mine = false;
    if (e.k === 'lease') {
      this.replication.markApplied(seq, false);
    } else if (mine) {
      // Its rows are in this copy since its COMMIT; its bookkeeping waits until the append's ack
      // (usually right behind it) has been answered.
      this.replication.markAppliedLater(seq, e.changes.length > 0);
      if (this.closed) this.flushApplied();
      else this.flushAppliedSoon();
    } else {
      // Another node's rows, with the ids it gave them.
      const touched = this.ids.withoutBlocksSync(() => this.replication.apply(seq, e.changes));
      refreshReadModel(this.registry!, realmId, e.changes, touched);
    }
    this.applied = seq;
    if (e.k === 'batch' && this.onUploadsGone) {
      // Its own entries too: the request deleting an upload may have come through another node.
      const gone = goneUploads(e.changes);
      if (gone.length > 0) this.onUploadsGone(gone);
    }
    if (
      e.k === 'batch' &&
      this.onExportsChanged &&
      e.changes.some(([table]) => table === 'realm_exports')
    )
      this.onExportsChanged();
    this.maybeSnapshot();
    // This node delivered its own entries' events at their COMMIT (`append`).
    if (e.k === 'batch' && !mine) this.deliver(realmId, e.events, e.ended);
    if (this.waiters.length > 0) {
      const due = this.waiters.filter((w) => w.seq <= seq);
      this.waiters = this.waiters.filter((w) => w.seq > seq);
      for (const w of due) w.resolve();
    }
  }

  /**
   * Writes the own entries' deferred bookkeeping (Replication.markAppliedLater) a millisecond
   * from now: after the ack that follows the entry, and once for all entries of a busy moment.
   */
  private flushAppliedSoon(): void {
    if (this.flushTimer !== null) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushApplied();
    }, 1);
  }

  private flushApplied(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    try {
      this.replication.flushApplied();
    } catch (err) {
      this.die(`recording the log position failed: ${String(err)}`);
    }
  }

  /** A batch's events to this node's queues, then the sessions it ended. */
  private deliver(
    realmId: number,
    events: readonly OutboundEvent[],
    ended: readonly (readonly number[] | null)[],
  ): void {
    if (events.length > 0) this.queues.publish(realmId, events);
    for (const users of ended) this.queues.endSessions(realmId, users);
  }

  // ---- snapshots ----------------------------------------------------------------------------

  /**
   * Every `snapshotEvery` entries, a node that owns no realm (its copy holds nothing the log has
   * not acknowledged) uploads a copy of its database, for new nodes to start from
   * (`restoreSnapshot`, src/cluster/snapshot.ts).
   */
  private maybeSnapshot(): void {
    const every = this.opts.snapshotEvery ?? 10_000;
    if (this.snapshotting || !this.opts.tmpDir || this.owned.size > 0) return;
    if (this.applied - this.lastSnapshot < every) return;
    this.snapshotting = true;
    setImmediate(() => {
      this.writeSnapshot()
        .catch((err: unknown) => console.error(`cluster ${this.opts.node}: snapshot failed`, err))
        .finally(() => (this.snapshotting = false));
    });
  }

  /** Uploads a snapshot (if it is newer than the bucket's), then trims the log behind it. */
  async writeSnapshot(): Promise<number | null> {
    const seq = await uploadSnapshot(
      this.replication,
      this.snapshots,
      this.opts.tmpDir!,
      this.opts.node,
      (seq) => {
        this.lastSnapshot = seq;
      },
    );
    if (seq !== null) {
      await reportPosition(this.kv, this.opts.node, this.applied);
      const trimmed = await trimLog(
        this.jsm,
        this.kv,
        this.names,
        seq,
        this.opts.trimGraceMs ?? DEFAULT_TRIM_GRACE_MS,
      );
      if (trimmed !== null)
        console.error(`cluster ${this.opts.node}: log trimmed up to position ${trimmed}`);
    }
    return seq;
  }

  private waitApplied(seq: number): Promise<void> {
    if (seq <= this.applied) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  // ---- placement ----------------------------------------------------------------------------

  owns(realmId: number): boolean {
    return this.owned.has(realmId);
  }

  /** The realm's current owner, as the lease bucket says (for status and tests). */
  async ownerOf(realmId: number): Promise<string | null> {
    return this.leases.holderOf(realmId);
  }

  private async leaseTick(): Promise<void> {
    if (this.closed || this.dead || this.bootstrapping) return;
    if (Date.now() - this.lastReport >= POSITION_REPORT_MS) {
      this.lastReport = Date.now();
      void reportPosition(this.kv, this.opts.node, this.applied).catch(() => undefined);
    }
    const realmIds = this.store.realms.all().map((r) => r.id);
    await Promise.all([
      ...realmIds.map((id) => this.tickRealm(id).catch(() => undefined)),
      // Realm exports: this node's renewed, those of its realms whose node is gone failed.
      this.exportRuns.renew().catch(() => undefined),
      this.exportRuns
        .check(
          this.store.realmExports.unfinished(),
          (realmId) => this.owned.has(realmId) && this.onExportOrphaned !== null,
          (realmId, id) => this.onExportOrphaned!(realmId, id),
        )
        .catch(() => undefined),
    ]);
  }

  private async tickRealm(realmId: number): Promise<void> {
    const owned = this.owned.has(realmId);
    if (this.acquiring.has(realmId)) return;
    if (owned) {
      const renewal = this.leases.renew(realmId);
      this.renewals.add(renewal);
      try {
        if (!(await renewal)) this.lose(realmId, 'the lease was taken');
      } finally {
        this.renewals.delete(renewal);
      }
      return;
    }
    const rev = await this.leases.tryTake(realmId);
    if (rev > 0) await this.takeOver(realmId, rev);
  }

  /**
   * The log position of the realm's newest entry, applied by this node (0: the realm has none):
   * what a lease marker expects. Known from the entries applied since this node started; for a
   * realm with none since (a node restarted on its database, say the only node of a cluster), the
   * log says, and the node first applies up to it. Without this, such a node expected 0 and could
   * never take the realm's lease: its writes were refused for good.
   */
  private async newestOfRealm(realmId: number): Promise<number> {
    const known = this.lastOfRealm.get(realmId);
    if (known !== undefined) return known;
    const newest = await this.lastOnSubject(realmId);
    if (newest === 0) return 0;
    if (newest > this.applied) await this.waitApplied(newest);
    return this.lastOfRealm.get(realmId) ?? newest;
  }

  /** The log position of the newest entry on the realm's subject, as the log says (0: none). */
  private async lastOnSubject(realmId: number): Promise<number> {
    const subject = `${this.names.log}.${realmId}`;
    const info = await this.jsm.streams.info(this.names.stream, { subjects_filter: subject });
    if (!info.state.subjects?.[subject]) return 0;
    return (await this.jsm.streams.getMessage(this.names.stream, { last_by_subj: subject })).seq;
  }

  /**
   * Makes sure the realm `realmId` never appears unless it has already: false when it exists,
   * true once it never can. A realm's first entry is appended expecting its subject empty, so
   * any entry there before it voids the id: this node appends a lease marker of term 0 expecting
   * the same, unless the subject holds an entry already (the realm's first, or another void).
   * Taking over a subdomain reservation whose realm never appeared (subdomains.ts).
   */
  private async voidRealm(realmId: number): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      if (this.store.realms.byId(realmId)) return false;
      const last = await this.lastOnSubject(realmId);
      if (last > 0) {
        await this.waitApplied(last);
        return this.store.realms.byId(realmId) === undefined;
      }
      const marker: Entry = { k: 'lease', node: this.opts.node, inc: this.incarnation, term: 0 };
      try {
        await this.append1(realmId, marker, 0);
        console.error(`cluster ${this.opts.node}: voided realm id ${realmId} (never created)`);
        return true;
      } catch (err) {
        // Something landed on the subject first: look at it.
        if (!isWrongLastSequence(err) || attempt >= 5) throw err;
      }
    }
  }

  /** Claims the id blocks a realm's owner starts with (id-blocks.ts). */
  private claimRealmIds(): Promise<RealmIdBlocks> {
    return RealmIdBlocks.claimFor(this.claimIds, this.opts.idBlockSize ?? ID_BLOCK_SIZE);
  }

  /**
   * Holding the lease (revision `term`): applies everything the log holds, claims the realm's id
   * blocks (fresh ones: never a previous owner's; `ids` when the realm was just created here),
   * then appends a lease marker expecting the realm's last entry — which fences off any append
   * of the previous owner from then on — and serves the realm's writes.
   */
  private async takeOver(realmId: number, term: number, ids?: RealmIdBlocks): Promise<void> {
    this.acquiring.add(realmId);
    try {
      for (let attempt = 0; attempt < 20 && !this.closed; attempt++) {
        await this.caughtUp();
        // After catching up: a cluster's first claim starts above every id this copy holds.
        ids ??= await this.claimRealmIds();
        const expect = await this.newestOfRealm(realmId);
        const entry: Entry = { k: 'lease', node: this.opts.node, inc: this.incarnation, term };
        try {
          const ack = await this.append1(realmId, entry, expect);
          // Keep the lease alive while we were catching up: renew on the next tick.
          const sub = this.nc.subscribe(`${this.names.cmd}.${realmId}`, {
            queue: 'owner',
            callback: (err, msg) => {
              if (err) return;
              const run = (type: string, payload: unknown) =>
                this.runForwarded(realmId, type, payload);
              void answerForwarded(msg.data, run, (d) => msg.respond(d));
            },
          });
          this.owned.set(realmId, {
            term,
            last: ack,
            tail: Promise.resolve(),
            inFlight: 0,
            sub,
            ids,
          });
          this.registry?.get(realmId);
          console.error(`cluster ${this.opts.node}: owns realm ${realmId} (lease ${term})`);
          return;
        } catch {
          await sleep(50); // another append landed first: apply it and try again
        }
      }
    } finally {
      this.acquiring.delete(realmId);
    }
  }

  private lose(realmId: number, why: string): void {
    const o = this.owned.get(realmId);
    if (!o) return;
    this.owned.delete(realmId);
    o.sub.unsubscribe();
    o.ids.close();
    console.error(`cluster ${this.opts.node}: no longer owns realm ${realmId}: ${why}`);
    // Commits not yet in the log cannot be kept: the next append fails and the node rebuilds.
    if (this.replication.state().unacked > 0)
      this.die(`lost realm ${realmId} with unacknowledged commits`);
  }

  // ---- the log, as the realm actor sees it (CommitLog) ----------------------------------------

  writing<T>(realmId: number, body: () => T): T {
    return this.ids.writing(this.owned.get(realmId)?.ids, body);
  }

  /**
   * Inside the realm's transaction, just before its COMMIT: takes the captured rows and sends the
   * batch to the log now (the first of the realm's appends in flight; later ones wait their turn,
   * each expecting the sequence the one before it got), so that the log's round trip overlaps
   * the COMMIT, the read-model refresh and this node's own deliveries. Without the realm's lease
   * it throws, and the transaction is rolled back.
   */
  seal(realmId: number, events: OutboundEvent[], ended: (readonly number[] | null)[]): unknown {
    const changes = this.replication.seal();
    const o = this.owned.get(realmId);
    if (!o) throw new NotOwnerError();
    if (changes.length > 0) this.replication.noteUnacked(1);
    const sealed: Sealed = { events, ended, sent: false, cancelled: false, step: o.tail };
    // Nothing for the log: its answer still waits for the realm's earlier appends (o.tail).
    if (changes.length === 0 && events.length === 0 && ended.length === 0) return sealed;
    const entry: Entry = {
      k: 'batch',
      node: this.opts.node,
      inc: this.incarnation,
      term: o.term,
      changes,
      events,
      ended,
    };
    const send = () => {
      if (sealed.cancelled) return Promise.reject(new NotOwnerError());
      sealed.sent = true;
      return this.appendBatch(realmId, o, entry);
    };
    const first = o.inFlight === 0;
    o.inFlight++;
    sealed.step = (first ? send() : o.tail.then(send)).finally(() => o.inFlight--);
    o.tail = sealed.step.catch(() => undefined);
    return sealed;
  }

  /**
   * After the COMMIT: this node's own queues get the batch's events now, as in the
   * single-process server (a queue registered between the COMMIT and the entry's coming back
   * from the log would find the rows in its snapshot and then get their events too; other nodes
   * deliver them from the log, onEntry, where rows and events land together); resolves once the
   * log holds the batch.
   */
  append(realmId: number, sealed: unknown): Promise<void> {
    const s = sealed as Sealed;
    this.deliver(realmId, s.events, s.ended);
    return s.step;
  }

  /**
   * The COMMIT failed after `seal` (a full disk, an I/O error): a batch not sent yet is not sent;
   * one already sent may be in the log without being in this copy, so the node stops, and starts
   * again from the log (which then holds it or not, for every node alike).
   */
  commitFailed(realmId: number, sealed: unknown): void {
    const s = sealed as Sealed;
    s.cancelled = true;
    s.step.catch(() => undefined);
    if (s.sent) this.die(`realm ${realmId}: its COMMIT failed after its batch went to the log`);
  }

  /**
   * Appends one batch (after the realm's earlier ones), and writes it to NATS at once rather than
   * at nats.js's next microtask, after the rest of this turn's synchronous work. Rejects with
   * NotOwnerError when this node lost the realm; a refusal of a commit stops the node.
   */
  private async appendBatch(realmId: number, o: Owned, entry: Entry): Promise<void> {
    if (this.owned.get(realmId) !== o) throw new NotOwnerError();
    const started = performance.now();
    const acked = this.append1(realmId, entry, o.last);
    writeNow(this.nc);
    try {
      o.last = await acked;
      observeAppend(performance.now() - started);
    } catch (err) {
      this.lose(realmId, `the log refused an append (${String(err)})`);
      if (entry.k === 'batch' && entry.changes.length > 0)
        this.die(`realm ${realmId}: a commit the log refused`);
      throw new NotOwnerError();
    }
  }

  /** One append with JetStream's optimistic concurrency on the realm's subject; its sequence. */
  private async append1(realmId: number, entry: Entry, expectLast: number): Promise<number> {
    return appendEntry(
      this.js,
      this.names,
      realmId,
      entry,
      'Nats-Expected-Last-Subject-Sequence',
      expectLast,
      5000,
    );
  }

  // ---- forwarding ---------------------------------------------------------------------------

  async forward(realmId: number, type: string, payload: unknown): Promise<unknown> {
    const deadline = Date.now() + FORWARD_DEADLINE_MS;
    const body = pack({ type, payload });
    for (;;) {
      if (this.owned.has(realmId)) return this.registry!.get(realmId)!.askHere(type, payload);
      const reply = await askOwner(this.nc, `${this.names.cmd}.${realmId}`, body, deadline);
      if (!reply) continue;
      if (!reply.ok) throw fromWireError(reply.error);
      await this.waitApplied(reply.seq);
      return reply.data;
    }
  }

  /** Runs a command forwarded to this node as the realm's owner. */
  private async runForwarded(
    realmId: number,
    type: string,
    payload: unknown,
  ): Promise<{ data: unknown; seq: number }> {
    const rt = this.registry!.get(realmId);
    if (!rt || !this.owned.has(realmId)) throw new NotOwnerError();
    const result = await rt.askHere(type, payload);
    return { data: result, seq: this.owned.get(realmId)?.last ?? this.applied };
  }

  // ---- first realm, status, shutdown ----------------------------------------------------------

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
    const info = await patiently(() => this.jsm.streams.info(this.names.stream));
    if (info.state.last_seq > 0 || this.store.realms.all().length > 0) return null;
    this.bootstrapping = true;
    try {
      const created = await this.ids.withoutBlocks(create);
      if (!created) return null;
      const changes = this.replication.seal();
      this.replication.noteUnacked(1);
      const entry: Entry = {
        k: 'batch',
        node: this.opts.node,
        inc: this.incarnation,
        term: 0,
        changes,
        events: [],
        ended: [],
      };
      try {
        await appendEntry(
          this.js,
          this.names,
          created.realm_id,
          entry,
          'Nats-Expected-Last-Sequence',
          info.state.last_seq,
        );
      } catch (err) {
        this.die(`another node created the first realm (${String(err)})`);
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
   * 2. It reserves the subdomain for the realm's id in the lease bucket (subdomains.ts): only one
   *    node's reservation wins; the others are refused here, having written nothing.
   * 3. `create` writes the realm's rows in a transaction that is rolled back once they are
   *    captured: they reach this copy as they reach every other, from the log. A refusal of
   *    `create` gives the reservation up.
   * 4. It claims the realm's lease and appends the rows as the first entry of the realm's subject
   *    (expecting it empty: an entry there first voided the id, subdomains.ts), waits until it
   *    has applied that entry, and owns the realm from then on.
   *
   * Nothing is written to this copy before the log has the realm, so a refused or failed append
   * leaves this node as it was. If the append's answer is lost, the reservation and the lease
   * stay: the entry, should it have landed, is applied here and the lease taken at a lease tick;
   * otherwise the reservation is taken over after its timeout.
   */
  async addRealm<T extends { realm_id: number }>(subdomain: string, create: () => T): Promise<T> {
    await this.caughtUp();
    if (this.store.realms.byStringId(subdomain)) throw subdomainInUse();
    const ids = await this.claimRealmIds();
    const realmId = ids.peek('realms');
    let reserved = 0;
    let term = 0;
    /** Whether the realm's first entry is in the log: no, maybe (the answer was lost), yes. */
    let inLog: 'no' | 'maybe' | 'yes' = 'no';
    this.acquiring.add(realmId);
    try {
      reserved = await this.subdomains.reserve(subdomain, realmId);
      const { created, changes } = this.capture(ids, realmId, create);
      term = await this.leases.claim(realmId);
      if (term === 0) throw new Error(`realm ${realmId}: its lease is held already`);
      const entry: Entry = {
        k: 'batch',
        node: this.opts.node,
        inc: this.incarnation,
        term,
        changes,
        events: [],
        ended: [],
      };
      this.unwritten.add(realmId);
      let seq: number;
      try {
        seq = await appendEntry(
          this.js,
          this.names,
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
        this.unwritten.delete(realmId);
        throw subdomainInUse();
      }
      inLog = 'yes';
      await this.waitApplied(seq);
      return await this.ownNewRealm(realmId, term, ids, created);
    } catch (err) {
      ids.close();
      // The realm will never exist: what was taken for it is given up.
      if (inLog === 'no') {
        if (term > 0) await this.leases.release(realmId).catch(() => undefined);
        if (reserved > 0) await this.subdomains.release(subdomain, reserved);
      }
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

  /** A realm this node created, its first entry applied: this node owns it from now on. */
  private async ownNewRealm<T>(
    realmId: number,
    term: number,
    ids: RealmIdBlocks,
    created: T,
  ): Promise<T> {
    this.acquiring.delete(realmId);
    this.registry?.noteRealmCreated(realmId);
    await this.takeOver(realmId, term, ids);
    if (!this.owned.has(realmId)) throw new Error(`realm ${realmId}: its lease marker failed`);
    return created;
  }

  async status(): Promise<{
    node: string;
    applied: number;
    last: number;
    lag: number;
    owns: number[];
  }> {
    const info = await this.jsm.streams.info(this.names.stream);
    return {
      node: this.opts.node,
      applied: this.applied,
      last: info.state.last_seq,
      lag: Math.max(0, info.state.last_seq - this.applied),
      owns: [...this.owned.keys()],
    };
  }

  /** Stops renewing, gives the leases up (another node takes the realms at once) and disconnects. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Appends still in flight finish first: their clients are waiting. Then this node applies
    // them, so that the queues it saves (which had their events at COMMIT) and its log position
    // agree: started again, it does not deliver them a second time.
    await Promise.all([...this.owned.values()].map((o) => o.tail));
    const appended = Math.max(0, ...[...this.owned.values()].map((o) => o.last));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.waitApplied(appended),
      new Promise((resolve) => (timer = setTimeout(resolve, 5000))),
    ]);
    clearTimeout(timer);
    this.closed = true;
    this.flushApplied();
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    for (const o of this.owned.values()) o.sub.unsubscribe();
    // A renewal in flight would move the revision the release deletes at.
    await Promise.allSettled([...this.renewals]);
    const held = [...this.owned.keys()];
    for (const o of this.owned.values()) o.ids.close();
    this.owned.clear();
    // Nothing more is appended from here: the realms' next owners need not wait a lease time
    // (each fences this node off with its lease marker as usual).
    await Promise.all(held.map((id) => this.leases.release(id).catch(() => undefined)));
    this.ephemeral?.unsubscribe();
    await this.consumer?.close();
    await this.nc.drain().catch(() => undefined);
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }

  private die(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    console.error(`cluster ${this.opts.node}: stopping: ${reason}`);
    // What the log already holds of this node's own is recorded, if this copy still can.
    try {
      this.replication.flushApplied();
    } catch {
      // the copy is rebuilt from the log at the next start
    }
    (this.opts.fatal ?? (() => process.exit(75)))(reason);
  }
}
