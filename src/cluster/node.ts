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
 */
import {
  connect,
  headers as natsHeaders,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type ObjectStore,
  type Subscription,
} from 'nats';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { EventQueues } from '../../actors/event-queues.js';
import type { RealmPlacement, RealmRegistry } from '../../actors/registry.js';
import type { CommitLog } from '../../actors/realm.machine.js';
import { JsonableError, type ErrorCode } from '../lib/errors.js';
import type { EventPublisher, OutboundEvent } from '../lib/events.js';
import { pack, unpack } from '../lib/pack.js';
import { Replication, type RowChange } from '../storage/replication.js';
import type { Store } from '../storage/store.js';

export type ClusterOptions = {
  /** NATS server URLs (any of the cluster's servers). */
  servers: string[];
  /** This node's name: letters and digits; queue ids start with it. */
  node: string;
  /** JetStream replicas of the log and the lease bucket (the NATS cluster's size, at most 5). */
  replicas: number;
  /** Lease time (ms): how long an owner that stopped renewing keeps a realm. Default 3000. */
  leaseMs?: number;
  /** A node owning no realm writes a snapshot after this many log entries; default 10,000. */
  snapshotEvery?: number;
  /** Where the snapshot file is written before it is uploaded (DATA_DIR/tmp). */
  tmpDir?: string;
  /** What to do when this node must stop (its database holds commits the log refused). */
  fatal?: (reason: string) => void;
};

export const STREAM = 'CONFAB_LOG';
export const LEASES = 'confab_leases';
export const UPLOADS = 'confab_uploads';
export const SNAPSHOTS = 'confab_snapshots';
/** The one object of the snapshot bucket: the newest copy; its description is its log position. */
export const SNAPSHOT_NAME = 'latest';
const LOG_SUBJECT = 'confab.log';
const FORWARD_DEADLINE_MS = 10_000;

type Entry =
  | { k: 'lease'; node: string; inc: string; term: number }
  | {
      k: 'batch';
      node: string;
      inc: string;
      term: number;
      changes: RowChange[];
      events: OutboundEvent[];
      ended: (readonly number[] | null)[];
    };

type WireReply =
  | { ok: true; data: unknown; seq: number }
  | {
      ok: false;
      error: {
        msg: string;
        code?: ErrorCode;
        status?: number;
        extra?: Record<string, unknown>;
        headers?: Record<string, string>;
      };
    };

type Owned = {
  term: number;
  /** Sequence of the last entry appended for the realm (the next append expects it). */
  last: number;
  tail: Promise<void>;
  sub: Subscription;
};

type Watch = { rev: number; since: number };

export class NotOwnerError extends JsonableError {
  constructor() {
    super('This realm is moving to another server; try again', {
      code: 'BAD_REQUEST',
      status: 503,
    });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function toWireError(err: unknown): Extract<WireReply, { ok: false }>['error'] {
  if (err instanceof JsonableError)
    return {
      msg: err.message,
      code: err.code,
      status: err.httpStatus,
      extra: { ...err.extra },
      headers: { ...err.headers },
    };
  console.error('forwarded command failed', err);
  return { msg: 'Internal server error', code: 'BAD_REQUEST', status: 500 };
}

export class ClusterNode implements RealmPlacement, CommitLog {
  /** This process's incarnation: entries it wrote carry it (a restarted node is another). */
  readonly incarnation = crypto.randomBytes(6).toString('hex');
  private readonly leaseMs: number;
  private readonly replication: Replication;
  private registry: RealmRegistry | null = null;
  private readonly owned = new Map<number, Owned>();
  private readonly acquiring = new Set<number>();
  private readonly watching = new Map<number, Watch>();
  /** Highest stream sequence seen per realm subject. */
  private readonly lastOfRealm = new Map<number, number>();
  private applied: number;
  private waiters: { seq: number; resolve: () => void }[] = [];
  private consumer: ConsumerMessages | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  private ephemeral: Subscription | null = null;
  private closed = false;
  private dead = false;
  private bootstrapping = false;
  private snapshotting = false;
  private lastSnapshot = 0;

  private constructor(
    private readonly opts: ClusterOptions,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly kv: KV,
    /** Uploaded files (src/cluster/uploads.ts). */
    readonly files: ObjectStore,
    private readonly snapshots: ObjectStore,
    private readonly store: Store,
    private readonly queues: EventQueues,
  ) {
    this.leaseMs = opts.leaseMs ?? 3000;
    this.replication = new Replication(store);
    this.applied = this.replication.state().applied;
  }

  /** Connects to NATS, makes sure the log stream and the lease bucket exist. */
  static async join(opts: ClusterOptions, store: Store, queues: EventQueues): Promise<ClusterNode> {
    if (!/^[a-z0-9]{1,16}$/i.test(opts.node)) throw new Error(`bad node name ${opts.node}`);
    const nc = await connect({
      servers: opts.servers,
      name: `confab-${opts.node}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    try {
      // A NATS cluster just started has no JetStream leader for a few seconds.
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          return await ClusterNode.prepare(opts, nc, store, queues);
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await sleep(500);
        }
      }
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  private static async prepare(
    opts: ClusterOptions,
    nc: NatsConnection,
    store: Store,
    queues: EventQueues,
  ): Promise<ClusterNode> {
    {
      const jsm = await nc.jetstreamManager();
      try {
        await jsm.streams.info(STREAM);
      } catch {
        try {
          await jsm.streams.add({
            name: STREAM,
            subjects: [`${LOG_SUBJECT}.>`],
            retention: RetentionPolicy.Limits,
            storage: StorageType.File,
            num_replicas: opts.replicas,
            discard: DiscardPolicy.New,
            duplicate_window: 120_000_000_000,
          });
        } catch (err) {
          // Another node created it at the same moment.
          await jsm.streams.info(STREAM).catch(() => {
            throw err;
          });
        }
      }
      const js = nc.jetstream();
      const kv = await js.views.kv(LEASES, { history: 1, replicas: opts.replicas });
      const files = await js.views.os(UPLOADS, { replicas: opts.replicas });
      const snapshots = await js.views.os(SNAPSHOTS, { replicas: opts.replicas });
      return new ClusterNode(opts, nc, js, jsm, kv, files, snapshots, store, queues);
    }
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
    this.ephemeral = this.nc.subscribe(`confab.ephemeral.>`, {
      callback: (err, msg) => {
        if (err) return;
        const realmId = Number(msg.subject.split('.')[2]);
        try {
          this.queues.publish(realmId, unpack<OutboundEvent[]>(msg.data));
        } catch (e) {
          console.error('delivering ephemeral events failed', e);
        }
      },
    });
    const consumer = await this.js.consumers.get(
      STREAM,
      this.applied > 0 ? { opt_start_seq: this.applied + 1 } : {},
    );
    this.consumer = await consumer.consume();
    void this.applyLoop(this.consumer);
    await this.caughtUp();
    this.leaseTimer = setInterval(() => void this.leaseTick(), Math.max(100, this.leaseMs / 3));
    void this.leaseTick();
  }

  /** Resolves once everything the stream held when called is applied here. */
  async caughtUp(): Promise<void> {
    const info = await this.jsm.streams.info(STREAM);
    await this.waitApplied(info.state.last_seq);
  }

  /** What event-publishing code outside the realm actor uses (typing, presence): every node's queues. */
  readonly publisher: EventPublisher = {
    publish: (realmId: number, events: readonly OutboundEvent[]) => {
      if (this.closed) return;
      this.nc.publish(`confab.ephemeral.${realmId}`, pack(events));
    },
  };

  // ---- applying the log ---------------------------------------------------------------------

  private async applyLoop(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      if (m.seq <= this.applied) continue;
      try {
        this.onEntry(m.seq, Number(m.subject.slice(LOG_SUBJECT.length + 1)), unpack<Entry>(m.data));
      } catch (err) {
        // A node that cannot apply the log must not serve from a diverged copy.
        this.die(`applying log entry ${m.seq} failed: ${String(err)}`);
        return;
      }
    }
  }

  private onEntry(seq: number, realmId: number, e: Entry): void {
    this.lastOfRealm.set(realmId, seq);
    const mine = e.node === this.opts.node && e.inc === this.incarnation;
    if (e.k === 'lease') {
      this.replication.markApplied(seq, false);
    } else if (mine) {
      this.replication.markApplied(seq, e.changes.length > 0);
    } else {
      const touched = this.replication.apply(seq, e.changes);
      this.refresh(realmId, e.changes, touched);
    }
    this.applied = seq;
    this.maybeSnapshot();
    if (e.k === 'batch') {
      if (e.events.length > 0) this.queues.publish(realmId, e.events);
      for (const users of e.ended) this.queues.endSessions(realmId, users);
    }
    if (this.waiters.length > 0) {
      const due = this.waiters.filter((w) => w.seq <= seq);
      this.waiters = this.waiters.filter((w) => w.seq > seq);
      for (const w of due) w.resolve();
    }
  }

  /** Brings the read model of a realm loaded here up to date with rows another node wrote. */
  private refresh(realmId: number, changes: readonly RowChange[], touched: Set<string>): void {
    const registry = this.registry!;
    if (touched.has('realms')) {
      for (const [table, op, v] of changes)
        if (table === 'realms' && op === 'u') registry.noteRealmCreated(v[0] as number);
    }
    const rt = registry.loaded().find((r) => r.id === realmId);
    if (!rt) return;
    const view = rt.view;
    const has = (...tables: string[]) => tables.some((t) => touched.has(t));
    if (has('users')) {
      for (const [table, op, v] of changes)
        if (table === 'users' && op === 'u') view.reloadUser(v[0] as number);
    }
    if (has('user_groups', 'user_group_members', 'user_group_subgroups')) view.reloadGroups();
    if (has('streams', 'subscriptions', 'default_streams', 'channel_folders'))
      view.channels.reloadAll();
    if (has('custom_profile_fields', 'custom_profile_field_values')) view.invalidateProfiles();
    const messageOnly = new Set([
      'messages',
      'messages_fts',
      'user_messages',
      'reactions',
      'attachment_messages',
      'attachments',
      'drafts',
      'user_topics',
      'user_presence',
      'user_status',
      'scheduled_messages',
      'direct_message_groups',
      'direct_message_group_members',
    ]);
    // Anything else (realm row, emoji, linkifiers, ...) may feed caches keyed by the view's version.
    if ([...touched].some((t) => !messageOnly.has(t))) view.reloadRealm();
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

  async writeSnapshot(): Promise<number | null> {
    const dir = this.opts.tmpDir!;
    await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `snapshot-${crypto.randomBytes(8).toString('hex')}.sqlite3`);
    try {
      const seq = this.replication.snapshotTo(file);
      if (seq === null) return null;
      this.lastSnapshot = seq;
      const current = await this.snapshots.info(SNAPSHOT_NAME).catch(() => null);
      if (current && Number(current.description) >= seq) return null;
      const body = Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>;
      await this.snapshots.put({ name: SNAPSHOT_NAME, description: String(seq) }, body);
      console.error(`cluster ${this.opts.node}: snapshot at log position ${seq} uploaded`);
      return seq;
    } finally {
      await fs.promises.rm(file, { force: true });
    }
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
    const e = await this.kv.get(`realm-${realmId}`);
    if (!e || e.operation !== 'PUT') return null;
    return (JSON.parse(e.string()) as { node: string }).node;
  }

  private leaseValue(): string {
    return JSON.stringify({ node: this.opts.node, inc: this.incarnation });
  }

  private async leaseTick(): Promise<void> {
    if (this.closed || this.dead || this.bootstrapping) return;
    const realmIds = this.store.realms.all().map((r) => r.id);
    await Promise.all(realmIds.map((id) => this.tickRealm(id).catch(() => undefined)));
  }

  private async tickRealm(realmId: number): Promise<void> {
    const key = `realm-${realmId}`;
    const owned = this.owned.get(realmId);
    if (this.acquiring.has(realmId)) return;
    const e = await this.kv.get(key);
    if (owned) {
      try {
        if (!e || e.operation !== 'PUT' || e.string() !== this.leaseValue())
          throw new Error('lost');
        await this.kv.update(key, this.leaseValue(), e.revision);
      } catch {
        this.lose(realmId, 'the lease was taken');
      }
      return;
    }
    const now = Date.now();
    let rev: number;
    if (!e || e.operation !== 'PUT') {
      rev = await this.kv.create(key, this.leaseValue()).catch(() => 0);
    } else {
      const w = this.watching.get(realmId);
      if (!w || w.rev !== e.revision) {
        this.watching.set(realmId, { rev: e.revision, since: now });
        return;
      }
      if (now - w.since < this.leaseMs) return;
      rev = await this.kv.update(key, this.leaseValue(), e.revision).catch(() => 0);
    }
    if (rev > 0) await this.takeOver(realmId, rev);
  }

  /**
   * Holding the lease (revision `term`): applies everything the log holds, then appends a lease
   * marker expecting the realm's last entry — which fences off any append of the previous owner
   * from then on — and serves the realm's writes.
   */
  private async takeOver(realmId: number, term: number): Promise<void> {
    this.acquiring.add(realmId);
    try {
      for (let attempt = 0; attempt < 20 && !this.closed; attempt++) {
        await this.caughtUp();
        const expect = this.lastOfRealm.get(realmId) ?? 0;
        const entry: Entry = { k: 'lease', node: this.opts.node, inc: this.incarnation, term };
        try {
          const ack = await this.append1(realmId, entry, expect);
          // Keep the lease alive while we were catching up: renew on the next tick.
          const sub = this.nc.subscribe(`confab.cmd.${realmId}`, {
            queue: 'owner',
            callback: (err, msg) => {
              if (!err) void this.serveForwarded(realmId, msg.data, (d) => msg.respond(d));
            },
          });
          this.owned.set(realmId, { term, last: ack, tail: Promise.resolve(), sub });
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
    console.error(`cluster ${this.opts.node}: no longer owns realm ${realmId}: ${why}`);
    // Commits not yet in the log cannot be kept: the next append fails and the node rebuilds.
    if (this.replication.state().unacked > 0)
      this.die(`lost realm ${realmId} with unacknowledged commits`);
  }

  // ---- the log, as the realm actor sees it (CommitLog) ----------------------------------------

  seal(): unknown {
    const changes = this.replication.seal();
    if (changes.length > 0) this.replication.noteUnacked(1);
    return changes;
  }

  append(
    realmId: number,
    sealed: unknown,
    events: OutboundEvent[],
    ended: (readonly number[] | null)[],
  ): Promise<void> {
    const changes = sealed as RowChange[];
    const o = this.owned.get(realmId);
    if (!o) {
      if (changes.length > 0) this.die(`committed realm ${realmId} without its lease`);
      return Promise.reject(new NotOwnerError());
    }
    const empty = changes.length === 0 && events.length === 0 && ended.length === 0;
    const step = o.tail.then(async () => {
      if (empty) return;
      if (this.owned.get(realmId) !== o) throw new NotOwnerError();
      const entry: Entry = {
        k: 'batch',
        node: this.opts.node,
        inc: this.incarnation,
        term: o.term,
        changes,
        events,
        ended,
      };
      try {
        o.last = await this.append1(realmId, entry, o.last);
      } catch (err) {
        this.lose(realmId, `the log refused an append (${String(err)})`);
        if (changes.length > 0) this.die(`realm ${realmId}: a commit the log refused`);
        throw new NotOwnerError();
      }
    });
    o.tail = step.catch(() => undefined);
    return step;
  }

  /** One append with JetStream's optimistic concurrency on the realm's subject; its sequence. */
  private async append1(realmId: number, entry: Entry, expectLast: number): Promise<number> {
    const h = natsHeaders();
    h.set('Nats-Expected-Last-Subject-Sequence', String(expectLast));
    const ack = await this.js.publish(`${LOG_SUBJECT}.${realmId}`, pack(entry), {
      headers: h,
      timeout: 5000,
    });
    return ack.seq;
  }

  // ---- forwarding ---------------------------------------------------------------------------

  async forward(realmId: number, type: string, payload: unknown): Promise<unknown> {
    const deadline = Date.now() + FORWARD_DEADLINE_MS;
    const body = pack({ type, payload });
    for (;;) {
      if (this.owned.has(realmId)) return this.registry!.get(realmId)!.askHere(type, payload);
      let data: Uint8Array;
      try {
        data = (await this.nc.request(`confab.cmd.${realmId}`, body, { timeout: 8000 })).data;
      } catch (err) {
        // No owner right now (failover): wait for one. A timeout leaves the outcome unknown.
        const noOwner = (err as { code?: string }).code === '503';
        if (!noOwner || Date.now() > deadline) throw new NotOwnerError();
        await sleep(100);
        continue;
      }
      const reply = unpack<WireReply>(data);
      if (!reply.ok) {
        const { msg, code, status, extra, headers } = reply.error;
        throw new JsonableError(msg, {
          ...(code ? { code } : {}),
          ...(status ? { status } : {}),
          ...(extra ? { extra } : {}),
          ...(headers ? { headers } : {}),
        });
      }
      await this.waitApplied(reply.seq);
      return reply.data;
    }
  }

  private async serveForwarded(
    realmId: number,
    data: Uint8Array,
    respond: (d: Uint8Array) => void,
  ): Promise<void> {
    let reply: WireReply;
    try {
      const { type, payload } = unpack<{ type: string; payload: unknown }>(data);
      const rt = this.registry!.get(realmId);
      if (!rt || !this.owned.has(realmId)) throw new NotOwnerError();
      const result = await rt.askHere(type, payload);
      reply = { ok: true, data: result, seq: this.owned.get(realmId)?.last ?? this.applied };
    } catch (err) {
      reply = { ok: false, error: toWireError(err) };
    }
    try {
      respond(pack(reply));
    } catch (err) {
      console.error('answering a forwarded command failed', err);
    }
  }

  // ---- first realm, status, shutdown ----------------------------------------------------------

  /**
   * On an empty cluster: `create` writes the first realm outside the realm actor (first boot),
   * and its rows become the log's first entry — refused if any entry got there first, in which
   * case this node stops (another node bootstrapped the cluster; this copy is discarded).
   */
  async bootstrap<T extends { realm_id: number }>(
    create: () => Promise<T | null>,
  ): Promise<T | null> {
    const info = await this.jsm.streams.info(STREAM);
    if (info.state.last_seq > 0 || this.store.realms.all().length > 0) return null;
    this.bootstrapping = true;
    try {
      const created = await create();
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
      const h = natsHeaders();
      h.set('Nats-Expected-Last-Sequence', String(info.state.last_seq));
      try {
        await this.js.publish(`${LOG_SUBJECT}.${created.realm_id}`, pack(entry), { headers: h });
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

  async status(): Promise<{
    node: string;
    applied: number;
    last: number;
    lag: number;
    owns: number[];
  }> {
    const info = await this.jsm.streams.info(STREAM);
    return {
      node: this.opts.node,
      applied: this.applied,
      last: info.state.last_seq,
      lag: Math.max(0, info.state.last_seq - this.applied),
      owns: [...this.owned.keys()],
    };
  }

  /** Stops renewing (another node takes the realms after the lease time) and disconnects. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Appends still in flight finish first: their clients are waiting.
    await Promise.all([...this.owned.values()].map((o) => o.tail));
    this.closed = true;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    for (const o of this.owned.values()) o.sub.unsubscribe();
    this.owned.clear();
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
    (this.opts.fatal ?? (() => process.exit(75)))(reason);
  }
}
