/**
 * The log applier of a cluster node (docs/cluster.md "The log and what a node applies"): every
 * node (the owner too) consumes the whole stream in order with an ordered consumer from its last
 * applied position. For each entry it applies another node's rows (UPSERT/DELETE by primary key)
 * and records the position in one transaction, refreshes the affected parts of the realm's read
 * model and delivers the entry's events to its own queues; an entry this process wrote is in its
 * copy already (only its bookkeeping is recorded; the writer delivers its events at the append's
 * acknowledgement, or here, when the entry is met before that: log-writer.ts `inLog`). Either way
 * a node's queues get the log's events in log order.
 *
 * Also here: the log's position (one JetStream question shared by the callers that arrive while it
 * is under way), waiting until a position is applied, the read barrier, and the progress watch:
 * a node whose copy stays behind the log without applying anything for `stallMs` makes its
 * consumer again (the NATS server holding the old one died or froze, and nats.js's ordered
 * consumer does not always come back by itself), says so in its log and on /metrics, and stops
 * (for its supervisor) once such a stall has lasted `stallExitMs`.
 */
import { within } from '../lib/within.js';
import { trace, tracing } from './trace.js';
import {
  ConsumerEvents,
  Events,
  type ClusterInfo,
  type ConsumerMessages,
  type Subscription,
} from 'nats';
import type { EventQueues } from '../delivery/publisher.js';
import type { RealmRegistry } from '../../actors/registry.js';
import { unpack } from '../lib/pack.js';
import { log } from '../observability/log.js';
import {
  goneFiles,
  type GoneFiles,
  type Replication,
  type RowChange,
} from '../storage/replication.js';
import type { ClusterIds } from './id-blocks.js';
import {
  kick,
  packEntry,
  patiently,
  POSITION_SUBJECT,
  REASK_MS,
  reasked,
  STARTUP_PATIENCE_MS,
  type Entry,
  type Reasks,
} from './jetstream.js';
import type { ClusterLink } from './link.js';
import { passReadBarrier, DEFAULT_READ_BARRIER_MS } from './read-barrier.js';
import { refreshReadModel } from './refresh.js';

export const DEFAULT_STALL_MS = 2000;

/**
 * The log no longer holds the entries after this copy's position (trimmed behind a snapshot while
 * the node was away or starting: trim.ts), met while the node starts: its start fails with this,
 * before it serves, and src/cluster/main.ts starts it again from the newest snapshot in the same
 * process. A node that meets a gap once started stops instead (ApplierParts.die).
 */
export class TrimmedPastError extends Error {
  constructor(
    /** The copy's position. */
    readonly at: number,
    /** The first entry the log still holds after it. */
    readonly next: number,
  ) {
    super(`the log was trimmed past this copy (at ${at}, next entry ${next})`);
    this.name = 'TrimmedPastError';
  }
}

/**
 * How long each pull of the log consumer lasts (nats.js's `expires`; its default is 30 s). nats.js
 * derives two waits from it: its idle heartbeats (half of it: a consumer whose server went away is
 * made again after two missed ones) and the pause between attempts to create the consumer when one
 * fails (a random 0.5-1.5 times it). With the default, a consumer whose creation failed once at
 * start (the NATS cluster electing its meta leader) was asked again only 15-45 s later, the node's
 * start waiting meanwhile.
 */
export const CONSUMER_PULL_EXPIRES_MS = 5000;
export const DEFAULT_STALL_EXIT_MS = 120_000;
/** How long `close` waits for the log consumer to close before it goes on without. */
export const CLOSE_MS = 2000;
/** How often the progress watch looks. */
const WATCH_MS = 1000;
/**
 * For this long after the log stream elected a leader or the connection moved to another NATS
 * server (the consumer was made again), the progress watch looks every WATCH_TURBULENT_MS and
 * calls a stall after STALL_TURBULENT_MS: a consumer made right at an election was seen to hand on
 * nothing until the watch made another (2.7 s later, at the default stall time).
 */
const TURBULENT_MS = 10_000;
const WATCH_TURBULENT_MS = 250;
const STALL_TURBULENT_MS = 500;
/**
 * How often a consumer's creation still unanswered is asked again (besides at once when the log
 * stream elects a leader), and how long a creation under way holds back the progress watch from
 * asking for another: each creation that lands makes a consumer (JetStream's meta leader records
 * it), so creations lost in an outage are not piled up for its end.
 */
const CREATE_REASK_MS = 5000;
/**
 * How long a consumer's creation may go unanswered while the log holds entries this copy lacks
 * and nothing is applied before it is asked again beside the first (then twice as long, up to
 * CREATE_REASK_MS). JetStream's meta leader places a new consumer on one of the stream's servers;
 * right after a server's SIGKILL it still counts the dead one among them (it notices its loss only
 * later), and a consumer placed there is never answered: seen as 5 s of a node's reads and writes
 * waiting, 2026-12-04 (docs/cluster.md "Faults"). Each creation that lands makes a consumer (the
 * others are closed), so the wait doubles rather than piling creations up in a long outage.
 */
const CREATE_QUICK_MS = 1000;

/**
 * How many failed attempts nats.js may make to create an ordered consumer again after a reset
 * (`boundRecreation`) before the applier stops them and makes a consumer of its own.
 */
export const RECREATE_TRIES = 3;

/**
 * How many pulls answered "no responders" in a row a consumer's messages send again at once
 * (`repullOnNoResponders`); past them, nats.js's missed heartbeats and the progress watch act.
 */
export const NO_RESPONDERS_REPULLS = 5;

/**
 * How long the log's position goes unanswered before this node's connection is checked
 * (link.checkConnection: a ping, at most one every 2 s), as an append's is (APPEND_CHECK_AFTER_MS).
 */
export const POSITION_CHECK_MS = 300;

/**
 * The longest gap between two questions answered promptly by the confirmed leader (lastPosition)
 * over which its next prompt answer is still taken without a position mark. A leader replaced
 * after a freeze was silent for at least 3 s before its successor could acknowledge anything
 * (the followers' election timeout, 4-9 s, counts from their last heartbeat, at most 1 s before
 * the freeze; nats-server raft.go): a node whose questions were answered promptly at most 2 s
 * apart sent one during any such freeze, left unanswered past POSITION_CHECK_MS.
 */
export const VIGIL_MS = 2000;

/** What the applier tells the rest of the node. */
export type ApplierHooks = {
  /**
   * Removes this node's copies of files an applied entry stopped naming: uploads whose rows it
   * deleted, and uploaded icons of the realms whose row it wrote that the row no longer names.
   */
  filesGone?: (gone: GoneFiles) => void;
  /** An applied entry (this node's own too) wrote a realm export's row. */
  exportsChanged?: () => void;
};

export type ApplierParts = {
  link: ClusterLink;
  replication: Replication;
  ids: ClusterIds;
  queues: EventQueues;
  hooks: ApplierHooks;
  /** Whether this process wrote the entry (its rows are in this copy since their COMMIT). */
  mine: (e: Exclude<Entry, { k: 'mark' }>) => boolean;
  /**
   * An entry this process wrote, with this message id, is in the log: its events are delivered now
   * unless its append's acknowledgement delivered them already (LogWriter.inLog).
   */
  mineInLog: (msgId: string) => void;
  /**
   * An entry of the realm that is none of this process's batches is about to be applied: batches
   * committed here that the log has not been seen to hold never land, and are taken back from
   * this copy (LogWriter.displaced); what that wrote, or null.
   */
  displaced: (realmId: number) => { touched: Set<string>; restored: RowChange[] } | null;
  /** After each entry (a snapshot may be due). */
  applied: () => void;
  /**
   * A batch entry (this node's own too) names forwarded commands that ran, by id, with their
   * results: a later owner answers a repeat of one with it (forwarding.ts Forwarder.ranInLog).
   */
  forwardsRan?: (seq: number, ran: [string, unknown][]) => void;
  /** This node must stop: its copy cannot follow the log. */
  die: (reason: string) => void;
};

export type ApplierStatus = {
  applied: number;
  /** Whether the progress watch sees a stall now. */
  stalled: boolean;
  /** While stalled: seconds since this node last applied an entry (0 otherwise). */
  behindFor: number;
  /** Consumers made again after a stall, since start. */
  consumerRestarts: number;
};

/**
 * How recently a replicated stream's leader must have heard from enough of its replicas for its
 * answer to count (`doubtful`). nats-server 2.10's raft leader sends a heartbeat when it has sent
 * nothing for its 1 s interval, each answered, so a live leader has heard from a follower within
 * about 2 s even on an idle log; the followers elect another leader only after 4-9 s without it
 * (raft.go `minElectionTimeoutDefault`), so a leader that was frozen long enough to be replaced
 * has heard from none of them for at least that long.
 */
export const LEADER_CONTACT_MS = 3000;

/**
 * Why a stream info's `cluster` part (nats-server's `clusterInfo`) does not show a live leader, or
 * null when it does. For a replicated stream only its leader answers (or a member that sees the
 * group leaderless, naming none), from its own copy; `replicas[].active` is the time since that
 * server last heard from each other member of the group. A leader counts when it has heard, within
 * LEADER_CONTACT_MS, from as many others as make a quorum with it: a frozen and thawed leader still
 * takes itself for the leader until it hears its successor's higher term, and answers from its
 * copy without the writes acknowledged meanwhile. `copies` is the stream's configured replicas
 * (`config.num_replicas`): a stream of one copy (one server, or a one-replica stream) names none,
 * and its answering server is its only copy. A replicated stream's answer that names none is not
 * a stable leader's: nats-server before 2.10 lists a raft group's peers only while it leads
 * (raft.go `Peers`), so a server answering in the instant it steps down (a thawed leader told of
 * its successor) names none, with its old position; taken as a one-copy stream's before.
 */
export function doubtful(cluster: ClusterInfo | undefined, copies = 1): string | null {
  if (cluster === undefined) return copies > 1 ? 'the answer names no leader' : null;
  if (!cluster.leader) return 'the log stream has no leader';
  const replicas = cluster.replicas ?? [];
  if (copies <= 1 && replicas.length === 0) return null;
  if (replicas.length === 0)
    return `the log stream's leader (${cluster.leader}) names none of its ${copies - 1} replicas`;
  const needed = Math.floor(Math.max(copies, replicas.length + 1) / 2);
  const heard = replicas.filter((r) => r.active <= LEADER_CONTACT_MS * 1e6).length;
  if (heard >= needed) return null;
  return `the log stream's leader (${cluster.leader}) heard from ${heard} of its replicas within ${LEADER_CONTACT_MS} ms`;
}

/**
 * How long the log stream's leader may go without hearing from a replica before /metrics counts
 * that replica as away (`replicasAway`): a live follower answers the leader's heartbeat about every
 * second, so ten seconds of silence is a server that is down, frozen or cut off, or one that came
 * back without its copy of the stream (docs/cluster.md "Faults").
 */
export const REPLICA_AWAY_MS = 10_000;

/**
 * How many replicas of a stream its leader has not heard from within REPLICA_AWAY_MS, or marks
 * offline (from a stream info's `cluster` part); NaN without a leader to ask, 0 for a stream
 * without replicas.
 */
export function replicasAway(cluster: ClusterInfo | undefined): number {
  if (cluster === undefined) return 0;
  if (!cluster.leader) return NaN;
  return (cluster.replicas ?? []).filter((r) => r.offline || r.active > REPLICA_AWAY_MS * 1e6)
    .length;
}

export class LogApplier {
  private appliedSeq: number;
  private waiters: { seq: number; resolve: () => void }[] = [];
  /** Highest stream sequence seen per realm subject. */
  private readonly lastOfRealm = new Map<number, number>();
  /**
   * Realms being created here whose first entry is on its way to the log: their rows are not in
   * this copy yet (ClusterNode.addRealm), so that entry is applied here like another node's.
   */
  readonly unwritten = new Set<number>();
  private registry: RealmRegistry | null = null;
  private consumer: ConsumerMessages | null = null;
  /** Each consumer asked for gets the next; only the newest asked for is installed when made. */
  private generation = 0;
  /**
   * The generation of the consumer being applied from: the one before keeps applying until its
   * successor is made (a consumer made again while the log is electing a leader can take seconds).
   */
  private installed = 0;
  private advisories: Subscription | null = null;
  /** This node's questions to JetStream waiting for an answer, asked again at an election. */
  private readonly reasks: Reasks = new Set();
  private positionAsked: Promise<number> | null = null;
  private positionNext: Promise<number> | null = null;
  /** Whether a caller waiting for `positionNext` wants its position proven (lastPosition). */
  private positionNextProven = false;
  // What proves a prompt answer to be the live leader's (lastPosition).
  /** The log stream's leader proven live by a position mark, and watched since; null in doubt. */
  private confirmed: string | null = null;
  /** A position mark acknowledged since the last doubt: an answer that holds it confirms. */
  private proof = 0;
  /** When (performance.now) the newest mark, or question answered by the confirmed leader, was sent. */
  private heardAt = -Infinity;
  /** When the newest question for the position was sent. */
  private positionSentAt = -Infinity;
  private flushTimer: NodeJS.Timeout | null = null;
  private watchTimer: NodeJS.Timeout | null = null;
  private closed = false;
  // The progress watch.
  private watchedSeq = 0;
  /** When (performance.now) this copy was last seen applying, or caught up. */
  private progressAt = performance.now();
  private stalled = false;
  /**
   * Whether the watch's last look saw the log holding more with nothing applied since the look
   * before. The stall time counts from the first such look: from a look that saw progress it would
   * count time the log held nothing more (an entry taken 0.3 s after such a look and applied 0.3 s
   * later made a copy "stuck" 0.5 s after the look, in the turbulent time, while it applied every
   * entry).
   */
  private behind = false;
  private restartedAt = 0;
  /** Until when (performance.now) the watch looks closely (TURBULENT_MS). */
  private turbulentUntil = 0;
  private lastLook = 0;
  /** When the newest consumer was asked for. */
  private askedAt = 0;
  private restarts = 0;
  private lastEntryAt = performance.now();
  /** The progress watch's look under way. */
  private watching: Promise<void> | null = null;
  /** The newest consumer's creation while under way, to ask again (`kick`). */
  private readonly creating: Reasks = new Set();
  /** When the creation under way was last asked (first or again), and how long until the next. */
  private createAskedAt = 0;
  private createWait = CREATE_QUICK_MS;
  /**
   * Whether this copy is seen not catching up: the progress watch called a stall (the log holds
   * more, nothing applied for the stall time) and nothing was applied since. Read barriers answer
   * 503 at once meanwhile instead of each waiting out its budget (`onStuck`).
   */
  private stuck = false;
  private readonly stuckListeners = new Set<() => void>();
  /**
   * Consumers whose first creation is under way (`consume`). nats.js's ordered consumer asks for
   * its creation again by itself, up to `maxInitialReset` (30) times, a pull's `expires` (5 s,
   * jittered) apart, even once its connection is closed: one under way when the node stopped held
   * the process open for about 150 s after (test/cluster/stale-leader took 176 s, its subtest 14 s,
   * 2026-12-07). `close` ends those attempts at their next failure.
   */
  private readonly starting = new Set<object>();
  /** Each try at making a consumer (makeConsumer) gets the next: see boundRecreation. */
  private tries = 0;
  /**
   * Until the node's start has caught up (`started`), a gap in the log fails the start
   * (`trimmedPast` rejects) instead of stopping the process.
   */
  private startingUp = true;
  private failStart: (err: TrimmedPastError) => void = () => undefined;
  /** Rejects if the log is found trimmed past this copy before `started`; never resolves. */
  readonly trimmedPast = new Promise<never>((_, reject) => (this.failStart = reject));

  constructor(private readonly parts: ApplierParts) {
    this.appliedSeq = parts.replication.state().applied;
    // Only raced against the start (ClusterNode.start): unhandled otherwise.
    this.trimmedPast.catch(() => undefined);
  }

  /** The node's start caught up: a gap in the log stops the node from now on. */
  started(): void {
    this.startingUp = false;
  }

  get applied(): number {
    return this.appliedSeq;
  }

  /** Starts consuming the log from this copy's position, and the progress watch. */
  async start(registry: RealmRegistry, since = Date.now()): Promise<void> {
    this.registry = registry;
    await this.openConsumer(since);
    this.watchedSeq = this.appliedSeq;
    this.progressAt = performance.now();
    this.watchTimer = setInterval(() => void this.watch(), WATCH_TURBULENT_MS);
    this.watchTimer.unref();
    void this.followReconnects();
    this.followElections();
  }

  /**
   * When a NATS server becomes the log stream's leader (JetStream's advisory), this node's
   * questions still waiting for an answer are asked again at once (one sent during the election is
   * never answered), and the progress watch looks closely for a while: a consumer that does not
   * hand on what the log takes from then on (its server was the one lost, whose loss its heartbeats
   * tell only after 5 s; or one made before the election, seen to hand on new entries only at its
   * next pull, every CONSUMER_PULL_EXPIRES_MS) is made again after STALL_TURBULENT_MS instead of
   * the usual stall time, the old one applying until the new one is made. A consumer that works
   * is left alone: making every node's consumer again at each election piled consumer creations on
   * JetStream's meta leader just as it came back.
   */
  private followElections(): void {
    const { nc, names } = this.parts.link;
    this.advisories = nc.subscribe(`$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.${names.stream}`, {
      callback: (err) => {
        if (err || this.closed) return;
        trace('the log stream elected a leader: asking again, watching the consumer closely');
        kick(this.reasks);
        const now = performance.now();
        if (this.creating.size > 0) {
          this.createAskedAt = now;
          kick(this.creating);
        }
        this.turbulentUntil = now + TURBULENT_MS;
        // Nothing could be applied during the election: the idle time counts from its end.
        this.progressAt = now;
        this.watchedSeq = this.appliedSeq;
      },
    });
  }

  /**
   * After the connection moved to another NATS server (the last one died or froze), the consumer
   * is made again at once from the last applied entry, rather than after a stall: its server may
   * be the one gone.
   */
  private async followReconnects(): Promise<void> {
    const { nc } = this.parts.link;
    for await (const s of nc.status()) {
      if (this.closed) return;
      // A question may have been answered through the server left: the next is proven.
      if (s.type === Events.Disconnect || s.type === Events.Reconnect)
        this.doubt(`connection ${s.type}`);
      if (s.type !== Events.Reconnect) continue;
      log.warn(
        { server: nc.getServer(), applied: this.appliedSeq },
        'reconnected: making the log consumer again',
      );
      // A question sent through the server left (a frozen one) is never answered: asked again
      // now, through this one, not after REASK_MS (a request on this node waits for the log's
      // position in its read barrier).
      kick(this.reasks);
      this.restartedAt = performance.now();
      this.turbulentUntil = this.restartedAt + TURBULENT_MS;
      this.restarts++;
      void this.openConsumer().catch((err: unknown) => {
        if (!this.closed)
          log.error(
            { err },
            'making the log consumer again failed; the progress watch tries again',
          );
      });
    }
  }

  /**
   * Makes a consumer from the entry after the last applied, and applies from it once made (the
   * one before applying meanwhile). Its creation (requests to the stream's leader and JetStream's
   * meta leader) can be lost in an election like any question, or placed on a server that is gone:
   * it is asked again beside the first CREATE_REASK_MS, sooner while the log holds more and nothing
   * is applied (CREATE_QUICK_MS, doubling: the progress watch), and at once when the log stream
   * elects a leader, until one is made; any made later is closed.
   */
  private async openConsumer(since = Date.now()): Promise<void> {
    const gen = ++this.generation;
    this.askedAt = performance.now();
    this.createAskedAt = this.askedAt;
    this.createWait = CREATE_QUICK_MS;
    trace(`making the log consumer (gen ${gen}) from ${this.appliedSeq + 1}`);
    let made = false;
    const messages = await reasked(
      async () => {
        // A creation superseded by a newer one is not asked again (settles as not made).
        if (made || gen !== this.generation || this.closed) return null;
        const m = await this.makeConsumer(since, gen);
        if (made || gen !== this.generation || this.closed) {
          void m.close().catch(() => undefined);
          return null;
        }
        made = true;
        return m;
      },
      CREATE_REASK_MS,
      Math.ceil(STARTUP_PATIENCE_MS / CREATE_REASK_MS),
      this.creating,
    );
    if (messages === null) return;
    trace(`log consumer gen ${gen} made`);
    const old = this.consumer;
    this.consumer = messages;
    this.installed = gen;
    if (old) void old.close().catch(() => undefined);
    void this.loop(messages, gen);
  }

  private async makeConsumer(since: number, gen: number): Promise<ConsumerMessages> {
    const { js, names } = this.parts.link;
    const consumer = await patiently(
      () =>
        js.consumers.get(
          names.stream,
          this.appliedSeq > 0 ? { opt_start_seq: this.appliedSeq + 1 } : {},
        ),
      since,
    );
    if (this.closed) throw new Error('the log applier is closed');
    const running = this.boundRecreation(consumer, gen, ++this.tries);
    this.starting.add(consumer);
    try {
      const messages = await consumer.consume({
        max_messages: 100,
        expires: CONSUMER_PULL_EXPIRES_MS,
      });
      running(messages);
      this.repullOnNoResponders(messages, gen);
      return messages;
    } finally {
      this.starting.delete(consumer);
    }
  }

  /**
   * Sends a pull answered "no responders" again at once. A consumer is made on one of the log
   * stream's servers, often not the one this node is connected to, and JetStream answers its
   * creation before that server's interest in the consumer's pulls (`CONSUMER.MSG.NEXT`) has
   * reached this node's server: nats.js's first pull, sent as the answer comes, then finds no one
   * there, and the NATS server answers it 503. nats.js (2.29) only notes that (`no_responders`)
   * and waits for two missed idle heartbeats, half a pull's `expires` each, before it pulls again:
   * the consumer handed on nothing for about 5 s (7.5 s seen) with the log holding entries, and
   * the progress watch made another consumer after 2-3 s (seen in CI as a node's first consumer
   * delivering nothing for 2 s; reproduced with a 3-server NATS cluster, idle: about 1 new consumer
   * in 50, placed on another server than its client's; consumer info then said no pull waiting).
   * The pull is sent again through nats.js's own recovery (`resetPending`: the consumer's info,
   * then a new pull), at most NO_RESPONDERS_REPULLS times in a row without an entry between, one
   * at a time. It relies on nats.js's fields `src` and `resetPending` (not in its types); without
   * them, nothing changes.
   */
  private repullOnNoResponders(messages: ConsumerMessages, gen: number): void {
    type Source = { resetPending?: () => Promise<boolean> };
    const ordered = messages as unknown as { src?: Source };
    if (typeof ordered.src?.resetPending !== 'function') return;
    let inRow = 0;
    let appliedAt = this.appliedSeq;
    let under: Promise<unknown> | null = null;
    void (async () => {
      for await (const s of await messages.status()) {
        if (s.type !== ConsumerEvents.NoResponders) continue;
        // Closed, or a newer consumer installed: its messages are not applied from.
        if (this.closed || this.installed > gen) return;
        if (this.appliedSeq !== appliedAt) {
          appliedAt = this.appliedSeq;
          inRow = 0;
        }
        // The source now (nats.js replaces it when it makes the consumer again).
        const src = ordered.src;
        if (under !== null || inRow >= NO_RESPONDERS_REPULLS || !src?.resetPending) continue;
        inRow++;
        trace(`log consumer gen ${gen}: a pull answered "no responders", pulling again`);
        under = src
          .resetPending()
          .catch(() => undefined)
          .finally(() => (under = null));
      }
    })().catch(() => undefined);
  }

  /**
   * Bounds nats.js's own re-creation of a running ordered consumer (OrderedPullConsumerImpl
   * `resetConsumer`). After a reset (a gap in its sequence, or its heartbeats missed and the
   * consumer gone from its server), nats.js creates the consumer again under the same iterator.
   * `maxInitialReset` bounds only the first creation: a re-creation that fails is asked again a
   * pull's `expires` (5 s, jittered) later, without limit. It goes on after the iterator is closed,
   * after a newer consumer has replaced this one, and after the connection is closed, where each
   * attempt fails at once and its timer holds the process open. A re-creation that lands late
   * makes a consumer that pulls into a closed iterator.
   *
   * So its requests to create the consumer go through this wrapper, from the moment it has run
   * (`consume` answered with its messages, which the returned function is given). A re-creation
   * is not sent once this applier is closed, or its messages are not the ones applied from (a
   * newer consumer was installed, or this one was a duplicate, closed), nor after RECREATE_TRIES
   * failed in a row. Then the request is never answered: nats.js's loop waits on it with no
   * timer, and nothing more is sent. At the last failure the node says so in its log, closes the
   * consumer's messages (their missed heartbeats started another re-creation every few seconds:
   * seen in test/cluster/consumer-recreate), and makes a consumer of its own (`openConsumer`:
   * asked again until made, and the progress watch's stall if not). It does not stall silently.
   * The wrapper relies on nats.js's field `api` (not in its types); when that is missing (another
   * nats.js), nothing is bounded, as before.
   */
  private boundRecreation(
    consumer: object,
    gen: number,
    attempt: number,
  ): (m: ConsumerMessages) => void {
    const c = consumer as { api?: { add?: (...args: unknown[]) => Promise<unknown> } };
    const api = c.api;
    const add = api?.add;
    if (!api || typeof add !== 'function') return () => undefined;
    let mine: ConsumerMessages | null = null;
    let failures = 0;
    // Made and not installed yet (installed < gen), or installed: still the one applied from.
    const live = () => !this.closed && (this.consumer === mine || this.installed < gen);
    c.api = Object.assign(Object.create(api) as object, {
      add: (...args: unknown[]): Promise<unknown> => {
        if (mine === null) {
          // Its first creation. nats.js asks again after each failure, up to maxInitialReset
          // (30) times a pull's `expires` apart: only while this is the newest try (`tries`).
          // A try replaced by a newer one (asked again beside it: openConsumer), or whose
          // generation was installed or closed, sends no more: its attempt under way may still
          // land (the first made is taken), but each abandoned object asked on for up to 150 s.
          if (this.closed || this.tries !== attempt || this.installed >= gen) {
            trace(`log consumer gen ${gen} try ${attempt}: replaced, its creation not asked again`);
            this.starting.delete(consumer);
            return new Promise(() => undefined);
          }
          return add.apply(api, args);
        }
        if (!live() || failures >= RECREATE_TRIES) {
          trace(`log consumer gen ${gen}: nats.js's re-creation not sent (left)`);
          return new Promise(() => undefined);
        }
        trace(`log consumer gen ${gen}: nats.js makes it again after a reset`);
        return add.apply(api, args).then(
          (made) => {
            failures = 0;
            return made;
          },
          (err: unknown) => {
            // Once: attempts of several of nats.js's loops may fail together.
            if (++failures === RECREATE_TRIES && live()) {
              log.warn(
                { err, attempts: failures, applied: this.appliedSeq },
                'the log consumer could not be made again after a reset: making a new one',
              );
              this.restartedAt = performance.now();
              this.restarts++;
              // Its messages end now: nats.js would otherwise go on asking after the consumer at
              // each missed heartbeat, and start another re-creation each time it is not found.
              void mine?.close().catch(() => undefined);
              void this.openConsumer().catch((e: unknown) => {
                if (!this.closed)
                  log.error(
                    { err: e },
                    'making the log consumer again failed; the progress watch tries again',
                  );
              });
            }
            throw err;
          },
        );
      },
    });
    return (m) => void (mine = m);
  }

  private async loop(messages: ConsumerMessages, gen: number): Promise<void> {
    const prefix = this.parts.link.names.log.length + 1;
    try {
      for await (const m of messages) {
        if (gen !== this.installed) return;
        if (m.seq <= this.appliedSeq) continue;
        if (tracing && performance.now() - this.lastEntryAt > 500)
          trace(
            `applying ${m.seq} (gen ${gen}), the first for ${Math.round(performance.now() - this.lastEntryAt)} ms`,
          );
        this.lastEntryAt = performance.now();
        if (m.seq !== this.appliedSeq + 1) {
          // Entries this copy needs were trimmed away (it was gone too long, or another node
          // trimmed the log after this one checked its copy: trim.ts): it can only go on from a
          // snapshot. While the node starts (it serves nothing yet), its start fails and is made
          // again from the newest snapshot in this process (src/cluster/main.ts); once started,
          // the node stops and its supervisor starts it again.
          const err = new TrimmedPastError(this.appliedSeq, m.seq);
          if (this.startingUp) {
            this.startingUp = false;
            this.generation++;
            this.installed = -1;
            this.failStart(err);
          } else this.parts.die(err.message);
          return;
        }
        try {
          const msgId = m.headers?.get('Nats-Msg-Id') ?? '';
          this.onEntry(m.seq, Number(m.subject.slice(prefix)), unpack<Entry>(m.data), msgId);
        } catch (err) {
          // A node that cannot apply the log must not serve from a diverged copy.
          this.parts.die(`applying log entry ${m.seq} failed: ${String(err)}`);
          return;
        }
      }
    } catch (err) {
      if (gen === this.installed && !this.closed)
        log.error({ err }, 'the log consumer failed; the progress watch makes another');
    }
  }

  private onEntry(seq: number, realmId: number, e: Entry, msgId: string): void {
    if (e.k === 'mark') {
      // A position mark (lastPosition): a position, no realm's, nothing to apply.
      this.parts.replication.markApplied(seq, false);
      this.advanced(seq);
      return;
    }
    if (e.k === 'seed') {
      // The seeded database reaches other nodes as a snapshot at this position (seed.ts), so a
      // node applying the entry itself started without it: empty, before the seed.
      throw new Error(
        `the cluster was seeded from node ${e.node}'s database after this node started; ` +
          'start it again: it starts from the seeded snapshot',
      );
    }
    const { replication } = this.parts;
    this.lastOfRealm.set(realmId, seq);
    let mine = this.parts.mine(e);
    // A realm created here: its rows were written nowhere before the log took them (addRealm).
    if (mine && e.k === 'batch' && this.unwritten.delete(realmId)) mine = false;
    if (!mine || e.k === 'lease') {
      // In log order: this copy drops what the log did not take before it applies what it did.
      const undone = this.parts.displaced(realmId);
      if (undone) refreshReadModel(this.registry!, realmId, undone.restored, undone.touched);
    }
    if (e.k === 'lease') {
      replication.markApplied(seq, false);
    } else if (mine) {
      // Its rows are in this copy since its COMMIT; its bookkeeping waits until the append's ack
      // (usually right behind it) has been answered.
      replication.markAppliedLater(seq, e.changes.length > 0);
      if (this.closed) this.flushApplied();
      else this.flushAppliedSoon();
    } else {
      // Another node's rows, with the ids it gave them.
      const touched = this.parts.ids.withoutBlocksSync(() => replication.apply(seq, e.changes));
      refreshReadModel(this.registry!, realmId, e.changes, touched);
    }
    this.appliedSeq = seq;
    this.stuck = false;
    if (e.k === 'batch') {
      const { filesGone, exportsChanged } = this.parts.hooks;
      // Its own entries too: the request deleting an upload (or replacing an icon) may have come
      // through another node, which removed only its own copy and the bucket's.
      if (filesGone) {
        const gone = goneFiles(e.changes);
        if (gone.uploads.length > 0 || gone.realmIcons.length > 0) filesGone(gone);
      }
      if (exportsChanged && e.changes.some(([table]) => table === 'realm_exports'))
        exportsChanged();
    }
    if (e.k === 'batch' && e.fw) this.parts.forwardsRan?.(seq, e.fw);
    this.parts.applied();
    // This process's own entries: delivered by the writer, now unless their acknowledgement came
    // first (a late one must not put them after the entries that follow them here).
    if (e.k === 'batch' && mine) this.parts.mineInLog(msgId);
    else if (e.k === 'batch') {
      if (e.events.length > 0) this.parts.queues.publish(realmId, e.events);
      for (const users of e.ended) this.parts.queues.endSessions(realmId, users);
    }
    this.resolveWaiters(seq);
  }

  /** This copy has applied up to `seq`, an entry that changed nothing in it. */
  private advanced(seq: number): void {
    this.appliedSeq = seq;
    this.stuck = false;
    this.parts.applied();
    this.resolveWaiters(seq);
  }

  private resolveWaiters(seq: number): void {
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

  flushApplied(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    try {
      this.parts.replication.flushApplied();
    } catch (err) {
      this.parts.die(`recording the log position failed: ${String(err)}`);
    }
  }

  /** Resolves once this node has applied the log up to `seq`. */
  waitApplied(seq: number): Promise<void> {
    if (seq <= this.appliedSeq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** Resolves once everything the stream held when called is applied here. */
  async caughtUp(): Promise<void> {
    await this.waitApplied(await this.lastPosition());
  }

  /**
   * The log's last position (the stream's last sequence) as JetStream states it after this call.
   * One question serves every caller that arrives before it is sent; callers arriving while it
   * is under way share the next one, sent when it is answered (its answer may predate them).
   *
   * Only a live stream leader's answer counts (`doubtful`): a replicated stream's info answered
   * without a leader, or by a leader that has heard from too few replicas lately (a thawed leader
   * not yet told of its successor), or a position below what this copy held when the question was
   * sent (a thawed leader's, in the instant its replicas' contact still looks fresh), is refused:
   * asked again by the read barrier and startup, no verdict for the progress watch.
   *
   * `proven` (the read barrier, catching up): the answer must also be shown to be the live
   * leader's. A thawed leader, in the instant before it reads its successor's term, looks live when
   * its replicas' replies of before the freeze are read first: seen in CI (2026-12-05 and -06),
   * an answer at 5 while 8 was acknowledged, late, then prompt. So an answer is taken as it comes
   * only from the confirmed leader (`vouched`): one a position mark proved live (`markPosition`:
   * only the live leader commits one, above every entry acknowledged before it), answering
   * promptly, with no sign of trouble since. Anything else (the first answer, another leader's, a
   * late one, one after a doubt) is taken through a mark, whose acknowledgement then lets the next
   * prompt answer that holds it confirm its leader: a mark at start and after trouble, none in
   * steady state. The progress watch asks without proof: a stale answer is below the log's
   * position, which can only hide a stall until a later look; its answers still raise doubt and
   * confirm, and its looks keep the vigil (VIGIL_MS) on an idle node.
   */
  lastPosition(proven = true): Promise<number> {
    const { jsm, names } = this.parts.link;
    if (this.positionAsked === null) {
      // Asked again beside the first after a second without an answer: one sent during an
      // election is never answered (jetstream.ts REASK_MS).
      this.positionAsked = reasked(
        () => {
          // What this copy held when the question was sent: a live leader's answer is at least
          // that (this node applied it from the log, which serves only committed entries). It is
          // not compared with what the copy holds when the answer is read: entries appended
          // meanwhile reach this node's consumer as the answer does, often first.
          const floor = this.appliedSeq;
          const sent = performance.now();
          this.positionSentAt = sent;
          return jsm.streams.info(names.stream).then((info) => {
            const seq = info.state.last_seq;
            // The stream's own number of copies, not the answer's: a leader stepping down may
            // name no replicas (`doubtful`).
            const copies = info.config?.num_replicas ?? 1;
            const doubt =
              doubtful(info.cluster, copies) ??
              (seq < floor
                ? `below the ${floor} this copy held when asked: ${info.cluster?.leader ?? 'the'} leader's, stale`
                : null);
            if (doubt !== null) {
              this.doubt(`log position ${seq} not taken: ${doubt}`);
              // Coded as JetStream's own "no responders" so that callers retrying an unanswered
              // question (startup's `patiently`, the read barrier) retry this one too.
              throw Object.assign(new Error(doubt), { code: '503' });
            }
            // No mark on an empty log: the cluster's first entry (bootstrap, seed) expects one,
            // and a node that finds the log holding anything takes the cluster as started. Nor
            // for a stream without replicas (one server, one replica): its one copy has no
            // successor.
            if (copies <= 1 || seq === 0) return seq;
            if (this.vouched(info.cluster?.leader ?? '', seq, sent) || !proven) return seq;
            return this.markPosition(seq);
          });
        },
        REASK_MS,
        undefined,
        this.reasks,
      ).finally(() => {
        this.positionAsked = null;
        clearTimeout(check);
      });
      // Answered in milliseconds by a live server: one that does not answer may be frozen under
      // this node (a ping, and another server if none: the question is then asked again there),
      // or be the leader, frozen: whoever answers later is proven.
      const check = setTimeout(() => {
        this.doubt(`log position unanswered for ${POSITION_CHECK_MS} ms`);
        this.parts.link.checkConnection?.();
      }, POSITION_CHECK_MS);
      return this.positionAsked;
    }
    // The next question serves every caller waiting for it: proven if any of them wants it so.
    if (proven) this.positionNextProven = true;
    this.positionNext ??= this.positionAsked
      .catch(() => 0)
      .then(() => {
        this.positionNext = null;
        const next = this.positionNextProven;
        this.positionNextProven = false;
        return this.lastPosition(next);
      });
    return this.positionNext;
  }

  /**
   * Whether an answer (a replicated stream's, not doubtful, by `leader`, to a question sent at
   * `sent`) is the confirmed leader's, to be taken without a mark; raises doubt on a sign of
   * trouble, and confirms `leader` when its answer holds the last mark. A prompt answer from the
   * confirmed leader is current: it was proven live, and answered every question since within
   * POSITION_CHECK_MS, at most VIGIL_MS apart, so it was never silent long enough to be replaced.
   */
  private vouched(leader: string, seq: number, sent: number): boolean {
    const took = performance.now() - sent;
    if (took > POSITION_CHECK_MS) {
      this.doubt(`log position ${seq} answered late (${Math.round(took)} ms)`);
      return false;
    }
    if (sent - this.heardAt > VIGIL_MS)
      this.doubt(`no prompt answer for ${Math.round(sent - this.heardAt)} ms`);
    if (this.confirmed !== null && this.confirmed !== leader)
      this.doubt(`log position ${seq} answered by ${leader}, not ${this.confirmed}`);
    if (this.confirmed === null && this.proof > 0 && seq >= this.proof) {
      // It holds the mark, committed after the mark was sent: a leader whose copy had it then
      // cannot have been replaced since (VIGIL_MS).
      trace(`the log's leader ${leader} confirmed (position ${seq}, mark ${this.proof})`);
      this.confirmed = leader;
      this.proof = 0;
    }
    if (this.confirmed !== leader) return false;
    this.heardAt = sent;
    return true;
  }

  /** A sign that the log's servers stalled: the next answer is taken only through a mark. */
  private doubt(why: string): void {
    if (this.confirmed !== null || this.proof > 0) trace(`doubting the log's leader: ${why}`);
    this.confirmed = null;
    this.proof = 0;
  }

  /**
   * Appends a position mark and returns its position: every entry acknowledged before it was
   * appended lies below it. A failure is coded as JetStream's "no responders", so that callers
   * retrying a failed question retry this one too.
   */
  private async markPosition(answered: number): Promise<number> {
    const { js, names, opts } = this.parts.link;
    trace(`log position ${answered} not vouched for: appending a position mark`);
    const sent = performance.now();
    try {
      const ack = await js.publish(
        `${names.log}.${POSITION_SUBJECT}`,
        packEntry({ k: 'mark', node: opts.node }),
      );
      this.proof = ack.seq;
      this.heardAt = sent;
      return ack.seq;
    } catch (err) {
      throw Object.assign(new Error(`no position mark appended: ${String(err)}`), {
        code: '503',
      });
    }
  }

  /**
   * The read barrier (docs/cluster.md "Guarantees"): resolves once this node has applied
   * everything the log held when the request arrived; past the budget, a 503 (read-barrier.ts).
   */
  readBarrier(): Promise<void> {
    return passReadBarrier(
      {
        // A position below what this copy held when it was asked is a stale leader's, whatever
        // else it says (lastPosition): asked again, as a failed question is.
        position: () => this.lastPosition(),
        applied: (seq) => this.waitApplied(seq),
        stopped: () => this.closed,
        stuck: (f) => this.onStuck(f),
      },
      this.parts.link.opts.readBarrierMs ?? DEFAULT_READ_BARRIER_MS,
    );
  }

  /**
   * The log position of the realm's newest entry, applied by this node (0: the realm has none):
   * what a lease marker expects. Known from the entries applied since this node started; for a
   * realm with none since (a node restarted on its database, say the only node of a cluster), the
   * log says, and the node first applies up to it.
   */
  async newestOfRealm(realmId: number): Promise<number> {
    const known = this.lastOfRealm.get(realmId);
    if (known !== undefined) return known;
    const newest = await this.lastOnSubject(realmId);
    if (newest === 0) return 0;
    if (newest > this.appliedSeq) await this.waitApplied(newest);
    return this.lastOfRealm.get(realmId) ?? newest;
  }

  /** The log position of the newest entry on the realm's subject, as the log says (0: none). */
  async lastOnSubject(realmId: number): Promise<number> {
    const { jsm, names } = this.parts.link;
    const subject = `${names.log}.${realmId}`;
    const info = await reasked(
      () => jsm.streams.info(names.stream, { subjects_filter: subject }),
      REASK_MS,
      undefined,
      this.reasks,
    );
    if (!info.state.subjects?.[subject]) return 0;
    const last = await reasked(
      () => jsm.streams.getMessage(names.stream, { last_by_subj: subject }),
      REASK_MS,
      undefined,
      this.reasks,
    );
    return last.seq;
  }

  /**
   * Calls `f` once this copy is seen not catching up (`stuck`): at once if it is now, else when the
   * progress watch next calls a stall. Returns what stops listening.
   */
  onStuck(f: () => void): () => void {
    if (this.stuck) {
      f();
      return () => undefined;
    }
    this.stuckListeners.add(f);
    return () => this.stuckListeners.delete(f);
  }

  // ---- the progress watch -------------------------------------------------------------------

  private watch(): Promise<void> {
    // One look at a time: a look waiting for the log's answer is not joined by the next ones
    // (each would then make a consumer of its own once the answer came).
    if (this.watching !== null) return this.watching;
    this.watching = this.look().finally(() => (this.watching = null));
    return this.watching;
  }

  private async look(): Promise<void> {
    if (this.closed) return;
    const now = performance.now();
    const turbulent = now < this.turbulentUntil;
    if (!turbulent && now - this.lastLook < WATCH_MS - WATCH_TURBULENT_MS / 2) return;
    this.lastLook = now;
    if (this.appliedSeq !== this.watchedSeq) {
      this.watchedSeq = this.appliedSeq;
      this.progressAt = now;
      this.behind = false;
      // Applying: no question needed for progress, but one a second keeps the vigil on the
      // confirmed leader (VIGIL_MS), which otherwise lapses, the next read barrier then a mark.
      if (this.confirmed !== null && now - this.positionSentAt >= WATCH_MS)
        await this.lastPosition(false).catch(() => undefined);
      return;
    }
    let last: number;
    try {
      // Not proven (lastPosition): a stale answer is low, and only delays a stall's call.
      last = await this.lastPosition(false);
    } catch (err) {
      trace(`progress watch: no position (${String(err)})`);
      this.parts.link.checkConnection();
      return; // the log does not answer: nothing to tell about this node's progress
    }
    if (this.closed) return;
    if (last <= this.appliedSeq || this.appliedSeq !== this.watchedSeq) {
      this.progressAt = performance.now();
      this.behind = false;
      this.stuck = false;
      if (this.stalled) {
        this.stalled = false;
        log.warn({ applied: this.appliedSeq }, 'applying the log again');
      }
      return;
    }
    const opts = this.parts.link.opts;
    const stallMs = Math.min(
      opts.stallMs ?? DEFAULT_STALL_MS,
      turbulent ? STALL_TURBULENT_MS : Infinity,
    );
    if (!this.behind) {
      // First seen behind: the lag is known from this look's question on, not before.
      this.behind = true;
      this.progressAt = Math.max(this.progressAt, now);
      return;
    }
    const idle = now - this.progressAt;
    if (idle < stallMs) return;
    if (!this.stalled) {
      this.stalled = true;
      log.warn(
        { applied: this.appliedSeq, last, idleMs: Math.round(idle) },
        'applying the log stalled: making its consumer again',
      );
    }
    if (!this.stuck) {
      this.stuck = true;
      trace(
        `not catching up (applied ${this.appliedSeq}, the log at ${last}): barriers answer 503`,
      );
      const listeners = [...this.stuckListeners];
      this.stuckListeners.clear();
      for (const f of listeners) f();
    }
    if (idle >= (opts.stallExitMs ?? DEFAULT_STALL_EXIT_MS)) {
      this.parts.die(
        `applied nothing for ${Math.round(idle / 1000)} s while the log held ${last - this.appliedSeq} more entries`,
      );
      return;
    }
    if (now - this.restartedAt < stallMs) return;
    if (this.generation !== this.installed) {
      // A creation under way, unanswered while the log holds more and nothing is applied: it may
      // have been placed on a server that is gone (CREATE_QUICK_MS); asked again beside the first.
      if (now - this.createAskedAt >= this.createWait && this.creating.size > 0) {
        trace(
          `the consumer's creation (gen ${this.generation}) unanswered for ${Math.round(now - this.createAskedAt)} ms: asking again`,
        );
        this.createAskedAt = now;
        this.createWait = Math.min(2 * this.createWait, CREATE_REASK_MS);
        kick(this.creating);
      }
      // Another is asked for only once it has gone unanswered CREATE_REASK_MS.
      if (now - this.askedAt < CREATE_REASK_MS) return;
    }
    this.restartedAt = now;
    this.restarts++;
    // Not waited for: its creation is asked again until made, and a later look may ask anew.
    void this.openConsumer().catch((err: unknown) => {
      if (!this.closed) log.error({ err }, 'making the log consumer again failed; trying again');
    });
  }

  status(): ApplierStatus {
    return {
      applied: this.appliedSeq,
      stalled: this.stalled,
      behindFor: this.stalled ? (performance.now() - this.progressAt) / 1000 : 0,
      consumerRestarts: this.restarts,
    };
  }

  /** Stops applying (after `flushApplied`); waiters are let go. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.flushApplied();
    this.generation++;
    this.installed = -1;
    this.advisories?.unsubscribe();
    // nats.js's field (OrderedPullConsumerImpl.maxInitialReset), not in its types: 0 makes the
    // creation's next failure its last (`starting`).
    for (const c of this.starting) (c as { maxInitialReset?: number }).maxInitialReset = 0;
    // nats.js's ordered consumer ends its iterator at once; the wait is bounded all the same (a
    // node's stop must not hang on its NATS server), and said in the log when it is hit.
    const consumer = this.consumer;
    this.consumer = null;
    if (consumer) {
      if (!(await within(performance.now() + CLOSE_MS, consumer.close())))
        log.warn({ waitMs: CLOSE_MS }, 'stopping: the log consumer did not close in time; left');
    }
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }
}
