/**
 * The NATS JetStream side of a cluster node (src/cluster/node.ts): the names of the log stream
 * and the buckets, the format of log entries, opening them, and one fenced append to a realm's
 * subject.
 */
import crypto from 'node:crypto';
import {
  connect,
  Events,
  headers as natsHeaders,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type ObjectStore,
} from 'nats';
import { JsonableError } from '../lib/errors.js';
import type { OutboundEvent } from '../lib/events.js';
import { trace } from './trace.js';
import { pack } from '../lib/pack.js';
import type { RowChange } from '../storage/replication.js';

/**
 * The names a cluster uses in NATS: the log stream, the buckets and the subjects. A namespace
 * (CLUSTER_NAMESPACE; letters and digits) lets several clusters share one NATS cluster without
 * seeing each other (the tests run one per test server); the default, none, gives the names
 * docs/cluster.md lists.
 */
export type ClusterNames = {
  /** The log stream; its subjects are `<log>.<realm>`. */
  stream: string;
  log: string;
  leases: string;
  uploads: string;
  snapshots: string;
  /** Subject prefix of forwarded commands: `<cmd>.<realm>`. */
  cmd: string;
  /** Subject prefix of typing and presence events: `<ephemeral>.<realm>`. */
  ephemeral: string;
  /** Subject prefix of operations on a node's event queues: `<queues>.<node>`. */
  queues: string;
  /** Subject of the nodes' shared rate-limit charges (rate-share.ts). */
  rates: string;
};

export function clusterNames(namespace = ''): ClusterNames {
  if (namespace !== '' && !/^[a-z0-9]{1,32}$/.test(namespace))
    throw new Error(`bad cluster namespace ${namespace} (lowercase letters and digits)`);
  const root = namespace === '' ? 'confab' : `confab-${namespace}`;
  const suffix = namespace === '' ? '' : `_${namespace}`;
  return {
    stream: `CONFAB_LOG${suffix}`,
    log: `${root}.log`,
    leases: `confab_leases${suffix}`,
    uploads: `confab_uploads${suffix}`,
    snapshots: `confab_snapshots${suffix}`,
    cmd: `${root}.cmd`,
    ephemeral: `${root}.ephemeral`,
    queues: `${root}.queue`,
    rates: `${root}.rates`,
  };
}

/** The streams behind a cluster's log and buckets (to remove a namespace: tests). */
export function clusterStreams(names: ClusterNames): string[] {
  return [names.stream, `KV_${names.leases}`, `OBJ_${names.uploads}`, `OBJ_${names.snapshots}`];
}

/** The one object of the snapshot bucket: the newest copy; its description is its log position. */
export const SNAPSHOT_NAME = 'latest';

/**
 * The subject `<log>.0` carries the cluster's own entries, not a realm's (realm ids start at 1):
 * the seed (src/cluster/seed.ts). Trimming keeps a subject's newest entry, so it stays.
 */
export const CLUSTER_SUBJECT_REALM = 0;

/**
 * The subject `<log>.position` carries position marks (LogApplier.lastPosition): entries that
 * change nothing, appended to learn the log's position from a write the stream committed.
 */
export const POSITION_SUBJECT = 'position';

/**
 * One entry of the replicated log: a new owner's lease marker, a committed batch, or the seed: the
 * first entry of a cluster started from an existing database (src/cluster/seed.ts), whose rows
 * reach other nodes as a snapshot, not in the log; `realms` and `largest` (the largest id it held)
 * describe that database. A lease marker of term 0 on the subject of a realm that does not exist
 * voids that realm id: the realm's first entry (appended expecting an empty subject) can never
 * follow it (subdomains.ts).
 */
export type Entry =
  | { k: 'lease'; node: string; inc: string; term: number }
  /** A position mark (POSITION_SUBJECT): changes nothing; applied as a position only. */
  | { k: 'mark'; node: string }
  | { k: 'seed'; node: string; inc: string; realms: number[]; largest: number }
  | {
      k: 'batch';
      node: string;
      inc: string;
      term: number;
      changes: RowChange[];
      events: OutboundEvent[];
      ended: (readonly number[] | null)[];
      /**
       * The forwarded commands of the batch that ran, by their forwarding node's id, with their
       * results (forwarding.ts ForwardOutcomes.logged): absent when none.
       */
      fw?: [id: string, data: unknown][];
    };

/**
 * Room kept in a NATS message for an entry's headers (its message id and expected sequence, about
 * a hundred bytes): a packed entry may take the server's max_payload less this (entryLimit).
 */
export const ENTRY_HEADROOM = 1024;

/** NATS's default max_payload (1 MiB), for a connection that has not said the server's. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * The most bytes a packed log entry may take on this connection's server: its max_payload, never
 * taken below MIN_MAX_PAYLOAD. A node runs only where the first server reached is at or over the
 * floor (connectJetStream); one it reconnects to later may be under it (followPayloadFloor moves
 * on from it): an entry that server cannot carry is then refused by nats.js before it is sent
 * (MAX_PAYLOAD_EXCEEDED) and asked again (appendSurely) until the connection is on another
 * server, rather than refused as too large, which could leave a realm's set-up written halfway.
 */
export function entryLimit(nc: Pick<NatsConnection, 'info'>): number {
  return Math.max(nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD, MIN_MAX_PAYLOAD) - ENTRY_HEADROOM;
}

/** Entries packed once (packEntry): an append asked again sends the same bytes. */
const packedEntries = new WeakMap<Entry, Uint8Array>();

/** An entry as it goes to the log, packed at its first use and kept with it. */
export function packEntry(entry: Entry): Uint8Array {
  let data = packedEntries.get(entry);
  if (data === undefined) {
    data = pack(entry);
    packedEntries.set(entry, data);
  }
  return data;
}

/** A write no node could act on as the realm's owner now: 503, to be asked again in a second. */
export class NotOwnerError extends JsonableError {
  constructor() {
    super('This realm is moving to another server; try again', {
      code: 'BAD_REQUEST',
      status: 503,
      headers: { 'Retry-After': '1' },
    });
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type JetStreamHandles = {
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  files: ObjectStore;
  snapshots: ObjectStore;
};

/**
 * How long a JetStream API call or publish may wait for its answer (nats.js's default is 5 s). A
 * busy machine running the NATS servers beside the nodes (the local cluster on 2 cores, under a
 * test suite) answers stream requests later than that while the cluster settles; a node that
 * gave up would exit at start.
 */
export const JETSTREAM_TIMEOUT_MS = 15_000;

/**
 * How long a node that is starting keeps asking a JetStream that does not answer in time (a
 * NATS cluster just started, or a busy machine) before it gives up and exits.
 */
export const STARTUP_PATIENCE_MS = 90_000;

/** The JetStream API's error code of a refusal (`err_code`), if `err` is one. */
export function jetStreamErrorCode(err: unknown): number | undefined {
  return (err as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;
}

/**
 * Whether a JetStream publish was refused for its expected last sequence or revision (another
 * write got there first): a definite refusal, unlike a timeout, after which it may have landed.
 */
export function isWrongLastSequence(err: unknown): boolean {
  return jetStreamErrorCode(err) === 10071;
}

/** Whether a NATS call failed only for want of an answer in time (or of a responder yet). */
export function isNoAnswer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'TIMEOUT' || code === '503';
}

/** Whether JetStream refused to create a stream for want of enough servers to place it on. */
function isShortOfPeers(err: unknown): boolean {
  return jetStreamErrorCode(err) === 10005;
}

/**
 * Whether a NATS cluster places a stream of `replicas` copies: creates and removes a probe stream,
 * asking again while JetStream does not answer yet. False when it keeps answering that it has too
 * few servers for `shortFor` ms, or has not placed one within `patience` ms. Such a cluster does
 * not heal: nats-server 2.10's meta leader sometimes never takes in a server that started at the
 * same moment (about one start in thirty on loopback, two clusters starting at once); the server
 * follows the leader but is not a peer, so nothing replicated can use it.
 */
export async function placesReplicas(
  servers: string[],
  replicas: number,
  shortFor = 10_000,
  patience = 60_000,
): Promise<boolean> {
  const nc = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 5_000 });
    const name = `confab_probe_${crypto.randomBytes(6).toString('hex')}`;
    const since = Date.now();
    let shortSince: number | null = null;
    for (;;) {
      try {
        await jsm.streams.add({
          name,
          subjects: [`_confab_probe.${name}`],
          storage: StorageType.File,
          num_replicas: replicas,
        });
        await jsm.streams.delete(name).catch(() => undefined);
        return true;
      } catch (err) {
        const now = Date.now();
        shortSince = isShortOfPeers(err) ? (shortSince ?? now) : null;
        if (shortSince !== null && now - shortSince > shortFor) return false;
        if (now - since > patience) return false;
        await sleep(250);
      }
    }
  } finally {
    await nc.close();
  }
}

/**
 * How long a JetStream question whose answer is needed at once (the log's position for the read
 * barrier) waits before it is asked again beside the first (`reasked`), unless the log stream's
 * election is announced first (`kick`, which asks again at once). Kept long: during an outage
 * without a quorum every question asked again waits on the servers' routes, and all of them reach
 * the servers in one burst when they come back. A request sent while a stream or the JetStream meta group has no leader is
 * answered by no server, not even after the election: it waits out its whole timeout (15 s), and
 * every read barrier sharing it answered 503 after its 5 s budget (seen as 4-15 s of each
 * non-owner's requests after the log stream's election, 2026-12-04).
 */
export const REASK_MS = 3000;

/**
 * Callers waiting on `reasked` questions, to ask them again at once (`kick`): when the log stream
 * has just elected a leader, a question sent before is lost, and the next one is answered.
 */
export type Reasks = Set<() => void>;

/**
 * Asks `ask` now, and again every `everyMs` while no attempt has settled (at most `most`
 * attempts: by then the first has timed out, so no more than that many are in flight; an election
 * takes up to 9 s), and at once when `reasks` are kicked: the first attempt to settle decides.
 * Each attempt is a fresh question, sent after the call, so whatever it answers is as recent as
 * the first one's answer would have been.
 */
export function reasked<T>(
  ask: () => Promise<T>,
  everyMs = REASK_MS,
  most = Math.ceil(JETSTREAM_TIMEOUT_MS / REASK_MS),
  reasks?: Reasks,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let asked = 0;
    let timer: NodeJS.Timeout | undefined;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reasks?.delete(again);
      f();
    };
    const one = () => {
      asked++;
      if (asked > 1) trace(`no answer yet: asking again (${asked})`);
      Promise.resolve()
        .then(ask)
        .then(
          (v) => settle(() => resolve(v)),
          (err: unknown) =>
            settle(() => reject(err instanceof Error ? err : new Error(String(err)))),
        );
      if (asked < most) timer = setTimeout(one, everyMs);
    };
    const again = () => {
      if (settled || asked >= most) return;
      clearTimeout(timer);
      one();
    };
    reasks?.add(again);
    one();
  });
}

/** Asks every question waiting in `reasks` again now (the log stream just elected a leader). */
export function kick(reasks: Reasks): void {
  for (const again of [...reasks]) again();
}

/**
 * Runs a JetStream call of a node's start, again while it fails for want of an answer, until
 * STARTUP_PATIENCE_MS after `since`. Any other failure is passed on at once.
 */
export async function patiently<T>(fn: () => Promise<T>, since = Date.now()): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isNoAnswer(err) || Date.now() - since > STARTUP_PATIENCE_MS) throw err;
      await sleep(500);
    }
  }
}

/**
 * The lease bucket as a node reads it to decide (leases, export runners, id claims, subdomain
 * reservations, reported positions): every `get` is JetStream's STREAM.MSG.GET, which the server
 * leading the bucket's stream answers from what its raft group committed. nats.js (2.29) reads a
 * bucket it made (or found) with allow_direct on, as JetStream gives it by default, with direct
 * gets, which any replica answers, one that has not yet applied the newest writes among them: a
 * key read as missing or older than it is (a node's own export record read as given up right
 * after it was written). A bound view with allow_direct false reads through the leader; the
 * stream's own setting is left as it is (other clients may read it directly), so an existing
 * bucket needs no change. Binding sends nothing.
 */
export function leaderReads(js: JetStreamClient, names: ClusterNames): Promise<KV> {
  return js.views.kv(names.leases, { bindOnly: true, allow_direct: false });
}

/** Makes sure the log stream, the lease bucket and the object buckets exist; their handles. */
async function openJetStream(
  nc: NatsConnection,
  replicas: number,
  names: ClusterNames,
): Promise<JetStreamHandles> {
  // Without nats.js's API check ($JS.API.INFO): during a JetStream election it answers 503
  // "JetStream system temporarily unavailable". (The caller asks again on any failure anyway;
  // the streams' own questions follow at once.)
  const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: JETSTREAM_TIMEOUT_MS });
  try {
    await jsm.streams.info(names.stream);
  } catch {
    try {
      await jsm.streams.add({
        name: names.stream,
        subjects: [`${names.log}.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        num_replicas: replicas,
        discard: DiscardPolicy.New,
        duplicate_window: 120_000_000_000,
      });
    } catch (err) {
      // Another node created it at the same moment.
      await jsm.streams.info(names.stream).catch(() => {
        throw err;
      });
    }
  }
  // Its views (the buckets) make their own manager with the client's API check setting.
  const js = nc.jetstream({ checkAPI: false, timeout: JETSTREAM_TIMEOUT_MS });
  // Each is a replicated stream of its own: made (the first time) side by side.
  const [, files, snapshots] = await Promise.all([
    js.views.kv(names.leases, { history: 1, replicas }),
    js.views.os(names.uploads, { replicas }),
    js.views.os(names.snapshots, { replicas }),
  ]);
  return { js, jsm, kv: await leaderReads(js, names), files, snapshots };
}

/** The lease bucket's key holding the cluster's temporary-URL signing key. */
export const TEMPORARY_URL_KEY_NAME = 'temporary-url-key';

/**
 * The key that signs temporary upload URLs, one for the whole cluster so that a URL made by one
 * node works on every other: the first node to ask stores a random one in the lease bucket (a
 * create, which only one node's can win); every node reads the one stored.
 */
export async function sharedTemporaryUrlKey(kv: KV): Promise<Buffer> {
  const since = Date.now();
  for (;;) {
    const stored = await patiently(() => kv.get(TEMPORARY_URL_KEY_NAME), since);
    if (stored && stored.operation === 'PUT' && stored.value.length === 32)
      return Buffer.from(stored.value);
    // None yet: store one (another node's may win; the next read returns that).
    await patiently(
      () => kv.create(TEMPORARY_URL_KEY_NAME, crypto.randomBytes(32)).catch(() => 0),
      since,
    );
  }
}

/** The lease bucket's key holding the cluster's image-proxy key. */
export const IMAGE_PROXY_KEY_NAME = 'image-proxy-key';

/**
 * The key signing the image proxy's URLs (src/endpoints/external-content.ts), one for the whole
 * cluster: a message's external images are signed by the node that rendered it (its realm's
 * owner) and fetched through any node. The first node to ask stores its own (`local`, from
 * DATA_DIR/image_proxy_key); every node uses the one stored. A cluster seeded from an existing
 * database stores that database's (seed.ts): its messages were signed with it.
 */
export async function sharedImageProxyKey(kv: KV, local: string): Promise<string> {
  const since = Date.now();
  for (;;) {
    const stored = await patiently(() => kv.get(IMAGE_PROXY_KEY_NAME), since);
    if (stored && stored.operation === 'PUT') return stored.string();
    // None yet: store ours (another node's may win; the next read returns that).
    await patiently(() => kv.create(IMAGE_PROXY_KEY_NAME, local).catch(() => 0), since);
  }
}

/**
 * Raises the number the bucket holds under `key` to `atLeast` by a compare-and-set on the key's
 * revision (a create when it is absent), asked again while another node's write wins; leaves a
 * number already there or past. What the key holds then, and whether this call raised it.
 */
export async function raiseNumber(
  kv: KV,
  key: string,
  atLeast: number,
): Promise<{ value: number; raised: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const e = await kv.get(key);
    const held = e !== null && e.operation === 'PUT';
    const now = held ? Number(e.string()) || 0 : 0;
    if (held && now >= atLeast) return { value: now, raised: false };
    try {
      if (held) await kv.update(key, String(atLeast), e.revision);
      else await kv.create(key, String(atLeast));
      return { value: atLeast, raised: true };
    } catch (err) {
      if (!isWrongLastSequence(err) || attempt >= 100) throw err;
      await sleep(Math.random() * 5 * Math.min(attempt, 10));
    }
  }
}

/**
 * Writes what was published on `nc` to its socket now. nats.js (2.29) collects a connection's
 * outgoing commands and writes them at its next microtask, that is after all the synchronous work
 * of the current turn; an append that should travel while the node does that work (the COMMIT,
 * the read-model refresh, its own queues' fan-out) calls this. It uses the client's internal
 * `protocol.flushPending` (the pinned version has it; test/cluster/nats-write-now.test.ts checks
 * it), and does nothing where a client
 * lacks it: the bytes then go at the microtask, as before.
 */
export function writeNow(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol?: { flushPending?: () => void } }).protocol;
  if (typeof protocol?.flushPending === 'function') protocol.flushPending();
}

/** How often a node pings its NATS server (connectJetStream). */
export const PING_INTERVAL_MS = 1000;

/** How long connectionCheck waits for the server's answer to a ping. */
export const CHECK_ANSWER_MS = 750;
/**
 * A connectionCheck wait whose timer fires this much late (the event loop was held) is waited
 * again, at most CHECK_ROUNDS waits in all.
 */
const CHECK_LATE_MS = 150;
const CHECK_ROUNDS = 3;

/**
 * Moves the connection's server to the end of nats.js's list of servers, so that its next
 * reconnection dials another one first. nats.js (2.29) dials its current server again at the first
 * reconnection after its first connection (its list is rotated only from then on): a frozen
 * server accepts the TCP connection and answers nothing, and the client waited for its pings to
 * fail again (3 s) before trying another. Uses the client's internal `protocol.servers`; does
 * nothing where a client lacks it (test/cluster/nats-write-now.test.ts checks it is there).
 */
export function skipCurrentServer(nc: NatsConnection): void {
  const pool = (
    nc as unknown as { protocol?: { servers?: { servers?: unknown; currentServer?: unknown } } }
  ).protocol?.servers;
  if (!pool || !Array.isArray(pool.servers) || pool.servers.length < 2) return;
  const i = pool.servers.indexOf(pool.currentServer);
  if (i < 0) return;
  pool.servers.splice(i, 1);
  pool.servers.push(pool.currentServer);
}

/**
 * A check of the connection's server, for when a request went unanswered: it is pinged, and a
 * server that does not answer within CHECK_ANSWER_MS is left for another (nats.js `reconnect`) —
 * a server frozen or cut off keeps the connection open and answers nothing, and its pings would
 * take 2-3 s to say so. One check at a time, and at most one every 2 s.
 */
export function connectionCheck(nc: NatsConnection, say: (line: string) => void): () => void {
  let checking = false;
  let last = 0;
  return () => {
    if (checking || Date.now() - last < 2000 || nc.isClosed()) return;
    trace(`connection check of ${nc.info?.server_name ?? '?'}`);
    checking = true;
    last = Date.now();
    const server = nc.info?.server_name ?? '?';
    let timer: NodeJS.Timeout | undefined;
    const answered = nc.flush().then(() => true);
    // The wait counts only while this process runs its event loop: a timer that fires late (the
    // loop was held by a long task, or the machine starved it) waits again, and a verdict is
    // given only after the loop has read what came meanwhile (setImmediate runs after the poll
    // for I/O): a server that answered during the hold is not left for another.
    const unanswered = (ms: number, rounds: number): Promise<boolean> =>
      new Promise<boolean>((resolve) => {
        const due = performance.now() + ms;
        timer = setTimeout(
          () =>
            setImmediate(() => {
              const late = performance.now() - due;
              if (late > CHECK_LATE_MS && rounds > 1)
                resolve(Promise.race([answered, unanswered(CHECK_ANSWER_MS, rounds - 1)]));
              else resolve(false);
            }),
          ms,
        );
      });
    void Promise.race([answered, unanswered(CHECK_ANSWER_MS, CHECK_ROUNDS)])
      .then(async (answered) => {
        trace(`connection check: ${answered ? 'answered' : 'no answer'}`);
        if (answered || nc.isClosed()) return;
        say(`NATS server ${server} does not answer: connecting to another`);
        skipCurrentServer(nc);
        await nc.reconnect();
      })
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(timer);
        checking = false;
      });
  };
}

/** The oldest nats-server whose expected-last-sequence checks hold under concurrent writes. */
export const SAFE_NATS_VERSION = [2, 9, 21] as const;

/**
 * Whether a nats-server version (`2.9.10`, `2.10.27-RC.1`) is at least SAFE_NATS_VERSION. Older
 * ones may accept two concurrent writes to a replicated stream that both expect the same last
 * sequence on a subject (nats-server issue 4320): two nodes could then both win a lease, the same
 * id block, or both append after the same entry (docs/cluster.md "NATS version").
 */
export function natsVersionIsSafe(version: string): boolean {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!parts) return false;
  for (let i = 0; i < 3; i++) {
    const n = Number(parts[i + 1]);
    if (n !== SAFE_NATS_VERSION[i]) return n > SAFE_NATS_VERSION[i]!;
  }
  return true;
}

/**
 * A nats-server older than SAFE_NATS_VERSION, met without the operator's override
 * (CLUSTER_ALLOW_UNSAFE_NATS=1): the node refuses to start (src/cluster/main.ts, exit status 78).
 */
export class UnsafeNatsError extends Error {
  constructor(readonly version: string) {
    super(
      `nats-server ${version || '(unknown version)'} is older than ` +
        `${SAFE_NATS_VERSION.join('.')}: it can accept two concurrent writes that expect the same ` +
        "last sequence (nats-server issue 4320), so two nodes could both win a realm's lease or " +
        'both append after the same log entry, and a partition could leave two owners writing ' +
        '(docs/cluster.md "NATS version"). Upgrade the NATS servers to ' +
        `${SAFE_NATS_VERSION.join('.')} or later (\`npm run fetch-nats-server\` unpacks 2.10.27 ` +
        'into .cache/nats-server/ for a local cluster), or set CLUSTER_ALLOW_UNSAFE_NATS=1 to run ' +
        'on this one all the same.',
    );
    this.name = 'UnsafeNatsError';
  }
}

/**
 * Connects to NATS as a cluster node does: reconnecting for ever, pinging its server every second
 * (a frozen server is left within 2-3 s, sooner on connectionCheck), its first reconnection to
 * another server.
 */
export async function connectNode(servers: string[], node: string): Promise<NatsConnection> {
  const nc = await connect({
    servers,
    name: `confab-${node}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // Every request (each append is one) would otherwise build an error with a stack trace in
    // advance, for its timeout; it showed in a profile of sequential sends.
    noAsyncTraces: true,
    // A frozen server (its process stopped, its machine cut off) keeps the connection open and
    // answers nothing: without pings of our own (nats.js pings every 2 minutes) the node would
    // wait for it that long before connecting to another server. Two unanswered pings a second
    // apart: another server within 2-3 s (sooner when a request goes unanswered:
    // connectionCheck).
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: 2,
    // A frozen server in the list would hold a reconnection this long (nats.js's default: 20 s).
    timeout: 3000,
  });
  // Its first reconnection goes to another server (a frozen one would hold it 3 s).
  skipCurrentServer(nc);
  return nc;
}

/**
 * The least max_payload a node runs on (64 KiB; NATS's default is 1 MiB). A new realm is written
 * as several log entries that are not undone (its rows, then each transaction of its set-up:
 * default channels, settings, welcome messages; the cluster's first realm is one entry of all
 * that), each of which must fit in one NATS message (entryLimit): under this floor every one of
 * them does, with the largest inputs the server accepts (test/cluster/payload-floor.test.ts
 * measures them: the largest, the first realm's one entry, 12,647 bytes; a set-up transaction at
 * most 6,298), so no realm can be left in the log half set up. The node refuses to start below it
 * (PayloadTooSmallError).
 */
export const MIN_MAX_PAYLOAD = 64 * 1024;

/**
 * The NATS server's max_payload is below MIN_MAX_PAYLOAD: the node refuses to start
 * (src/cluster/main.ts, exit status 78), before anything is opened or created. One line.
 */
export class PayloadTooSmallError extends Error {
  constructor(readonly maxPayload: number) {
    super(
      `the NATS servers' max_payload is ${maxPayload} bytes, below the ${MIN_MAX_PAYLOAD} bytes ` +
        '(64 KiB) a cluster node needs: every log entry must fit in one NATS message, and a new ' +
        'realm\'s creation and set-up must fit whole (docs/cluster.md "Entry size"). Set ' +
        "max_payload to at least 64KB in every NATS server's configuration, or remove it: the " +
        'NATS default of 1 MB is fine.',
    );
    this.name = 'PayloadTooSmallError';
  }
}

/** A server under the floor is left at most this often (all of them under it: no busy loop). */
const PAYLOAD_HOP_MS = 2000;

/**
 * What a node does after each reconnection (openLink): connectJetStream checked max_payload only
 * on the server it first connected to, and the servers of a NATS cluster are configured one by
 * one. A server whose max_payload is below MIN_MAX_PAYLOAD is named in an error line, with its
 * max_payload and the fix, and left for another (skipCurrentServer, nats.js `reconnect`), at most
 * once every PAYLOAD_HOP_MS: an entry it cannot carry waits meanwhile (entryLimit), asked again
 * until the connection is on another server; every server under it, such an append gives up
 * after the writer's patience and the node stops writing that realm. The node does not stop: the
 * other servers may be fine (and a node that stopped would be refused at its next start only if
 * it first reached that server). Ends when the connection closes.
 */
export async function followPayloadFloor(
  nc: NatsConnection,
  say: (line: string) => void,
): Promise<void> {
  let hopped = 0;
  const below = () => (nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) < MIN_MAX_PAYLOAD;
  for await (const s of nc.status()) {
    if (s.type !== Events.Reconnect || !below()) continue;
    const server = nc.getServer();
    say(
      `ERROR: NATS server ${nc.info?.server_name ?? '?'} (${server}) has max_payload ` +
        `${nc.info?.max_payload} bytes, below the ${MIN_MAX_PAYLOAD} bytes (64 KiB) a cluster ` +
        'node needs (docs/cluster.md "Entry size"): connecting to another. Set max_payload to at ' +
        "least 64KB in that server's configuration, or remove it: the NATS default of 1 MB is fine.",
    );
    const wait = hopped + PAYLOAD_HOP_MS - Date.now();
    if (wait > 0) await sleep(wait);
    if (nc.isClosed() || nc.getServer() !== server || !below()) continue;
    hopped = Date.now();
    skipCurrentServer(nc);
    await nc.reconnect().catch(() => undefined);
  }
}

/**
 * Connects to NATS as node `node` and opens the log and the buckets, retrying while a NATS
 * cluster just started has no JetStream leader yet (up to STARTUP_PATIENCE_MS). A server older
 * than SAFE_NATS_VERSION is refused (UnsafeNatsError, nothing opened or created) unless
 * `allowUnsafeNats` (CLUSTER_ALLOW_UNSAFE_NATS=1): then the node only warns. A server whose
 * max_payload is below MIN_MAX_PAYLOAD is refused (PayloadTooSmallError, nothing opened or
 * created either).
 */
export async function connectJetStream(opts: {
  servers: string[];
  node: string;
  replicas: number;
  names: ClusterNames;
  allowUnsafeNats?: boolean;
}): Promise<JetStreamHandles & { nc: NatsConnection }> {
  const nc = await connectNode(opts.servers, opts.node);
  const maxPayload = nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  if (maxPayload < MIN_MAX_PAYLOAD) {
    await nc.close();
    throw new PayloadTooSmallError(maxPayload);
  }
  const version = nc.info?.version ?? '';
  if (!natsVersionIsSafe(version)) {
    if (!opts.allowUnsafeNats) {
      await nc.close();
      throw new UnsafeNatsError(version);
    }
    console.error(
      `cluster ${opts.node}: WARNING: nats-server ${version || '(unknown version)'} is older than ` +
        `${SAFE_NATS_VERSION.join('.')}: it may let two nodes win the same lease or append after ` +
        'the same log entry when they race (docs/cluster.md "NATS version"); running on it ' +
        'because CLUSTER_ALLOW_UNSAFE_NATS=1; upgrade it',
    );
  }
  try {
    // A NATS cluster just started has no JetStream leader for a few seconds.
    const deadline = Date.now() + STARTUP_PATIENCE_MS;
    for (;;) {
      try {
        return { nc, ...(await openJetStream(nc, opts.replicas, opts.names)) };
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

/**
 * JetStream answered a publish as a duplicate of an earlier one with the same message id. That is
 * not an acknowledgement: it does not say the log holds the entry. nats-server 2.10 (2.10.27, the
 * one the tests use, to 2.10.29) records a message id on the stream leader before it proposes the
 * message to the stream's raft group, with sequence 0 until the message is committed and applied
 * (`processClusteredInboundMsg` in server/jetstream_cluster.go: "we stage with zero"), and answers
 * a repeat meanwhile with `{"seq": 0, "duplicate": true}`. A leader frozen with such a proposal in
 * flight answers the repeats so when it thaws, while it still takes itself for the leader; the
 * proposal then commits, or the next leader's log drops it, and the staged id stays (2.11 answers
 * nothing instead). So the caller looks at the log (appendSurely, appendFirst).
 */
export class DuplicateAnswer extends Error {
  constructor(readonly seq: number) {
    super(`JetStream answered the append as a duplicate (sequence ${seq})`);
    this.name = 'DuplicateAnswer';
  }
}

/**
 * A refusal found in the log rather than answered by JetStream: the entry after the expected one
 * is another's (seen after a DuplicateAnswer), so this one never lands there. Carries the error
 * code of "wrong last sequence" (isWrongLastSequence), as JetStream's own refusal would.
 */
function takenBy(seq: number): Error {
  return Object.assign(new Error(`wrong last sequence: ${seq} holds another entry`), {
    api_error: { err_code: 10071, code: 400, description: 'wrong last sequence' },
  });
}

/**
 * Appends an entry to a realm's subject with JetStream's optimistic concurrency: `header` names
 * the expectation (the realm's last sequence, or the whole stream's) and `expectLast` its value.
 * Returns the entry's sequence; rejects when another append got there first. `msgId`, when given,
 * is the entry's `Nats-Msg-Id` (appendSurely); an answer that the id is a duplicate rejects with
 * DuplicateAnswer (it acknowledges nothing).
 */
export async function appendEntry(
  js: JetStreamClient,
  names: ClusterNames,
  realmId: number,
  entry: Entry,
  header: 'Nats-Expected-Last-Subject-Sequence' | 'Nats-Expected-Last-Sequence',
  expectLast: number,
  timeout?: number,
  msgId?: string,
): Promise<number> {
  const h = natsHeaders();
  h.set(header, String(expectLast));
  if (msgId !== undefined) h.set('Nats-Msg-Id', msgId);
  const ack = await js.publish(`${names.log}.${realmId}`, packEntry(entry), {
    headers: h,
    ...(timeout ? { timeout } : {}),
  });
  if (ack.duplicate) throw new DuplicateAnswer(ack.seq);
  return ack.seq;
}

/**
 * How long one attempt of appendSurely waits for JetStream's answer before asking again (and
 * checking the connection): a frozen server must be left well within a lease time, while the owner
 * can still get its appends in before another node takes the realm.
 */
export const APPEND_ATTEMPT_MS = 1000;

/**
 * How long an append attempt goes unanswered before the connection is checked (connectionCheck:
 * a ping answered within 0.75 s or another server), while the attempt itself still waits for its
 * answer: an append is answered in milliseconds, and a frozen server is left this much sooner than
 * at the attempt's timeout.
 */
export const APPEND_CHECK_AFTER_MS = 300;

/**
 * The entry that follows position `after` on a realm's subject, as the log says: its sequence and
 * message id, or null when there is none.
 */
export async function nextOnSubject(
  jsm: JetStreamManager,
  names: ClusterNames,
  realmId: number,
  after: number,
): Promise<{ seq: number; msgId: string } | null> {
  try {
    // The leader's answer (STREAM.MSG.GET; nats.js types it without `next_by_subj`, which
    // nats-server has taken since 2.10; direct gets may come from a lagging replica).
    const query = { next_by_subj: `${names.log}.${realmId}`, seq: after + 1 };
    const m = await jsm.streams.getMessage(names.stream, query);
    return { seq: m.seq, msgId: m.header?.get('Nats-Msg-Id') ?? '' };
  } catch (err) {
    if (jetStreamErrorCode(err) === 10037) return null; // no message found
    throw err;
  }
}

/**
 * How long listing a bucket's keys (`bucketKeys`) is asked again while JetStream does not answer
 * (no leader for the bucket's stream: 503, or no answer in time) before it fails.
 */
export const KEYS_PATIENCE_MS = 10_000;

/**
 * The keys of key-value bucket `bucket` matching `filter` (a NATS subject filter over the keys:
 * `export.*`; default all) that hold a message, a deleted key's marker too (callers read each key
 * and skip what is not a PUT): the subjects of the bucket stream's info, which its leader answers.
 *
 * Not nats.js's `kv.keys`: it lists them through an ordered push consumer whose re-creation, after
 * a gap or missed heartbeats, nats.js (2.29) asks for without limit while JetStream answers 503 or
 * nothing (JetStreamSubscriptionImpl `_resetOrderedConsumer`: `retries: -1`), its iterator not
 * ending meanwhile, and no handle to stop it is given to the caller: a node's start waited on it
 * silently, as did a snapshot's trim (and every later snapshot of the node). Here each question
 * is one request, asked again while unanswered for at most `patienceMs`; then this fails, saying
 * so, and the caller logs it and goes on.
 */
export async function bucketKeys(
  jsm: JetStreamManager,
  bucket: string,
  filter = '>',
  patienceMs = KEYS_PATIENCE_MS,
): Promise<string[]> {
  const prefix = `$KV.${bucket}.`;
  const since = performance.now();
  for (;;) {
    try {
      const info = await jsm.streams.info(`KV_${bucket}`, {
        subjects_filter: `${prefix}${filter}`,
      });
      return Object.keys(info.state.subjects ?? {}).map((s) => s.slice(prefix.length));
    } catch (err) {
      if (!isNoAnswer(err)) throw err;
      const waited = performance.now() - since;
      if (waited >= patienceMs)
        throw new Error(
          `the keys of bucket ${bucket} went unanswered for ${Math.round(waited)} ms (${String(err)})`,
          { cause: err },
        );
      await sleep(Math.min(500, patienceMs - waited));
    }
  }
}

/**
 * Whether the log still holds what follows position `applied` (a copy's): null when it does (it
 * holds the entry at `applied` + 1, or nothing after `applied`), else the position of the first
 * entry it still holds after `applied` (its last position + 1 when it holds none of them: all
 * trimmed). Trimming (trim.ts) removes entries at or below a snapshot's position but keeps each
 * realm's newest, so the log's first position says nothing about a copy in the middle: the entry
 * after the copy is looked for itself (STREAM.MSG.GET `next_by_subj`, answered by the leader).
 */
export async function gapAfter(
  jsm: JetStreamManager,
  names: ClusterNames,
  applied: number,
): Promise<number | null> {
  // The last position first: an entry the probe then does not find (or finds later than
  // `applied` + 1) at or below it was there, and is gone.
  const last = (await jsm.streams.info(names.stream)).state.last_seq;
  if (last <= applied) return null;
  try {
    const query = { next_by_subj: `${names.log}.>`, seq: applied + 1 };
    const m = await jsm.streams.getMessage(names.stream, query);
    return m.seq === applied + 1 ? null : m.seq;
  } catch (err) {
    if (jetStreamErrorCode(err) === 10037) return last + 1; // no message found
    throw err;
  }
}

/**
 * Appends the cluster's first entry (the first realm: ClusterNode.bootstrap) expecting the whole
 * stream at `expectLast`, with message id `msgId`. A cluster just started may not answer yet (its
 * stream electing a leader: a timeout, or "no responders" at once): the append is asked again with
 * the same expectation and id until STARTUP_PATIENCE_MS after `since`, instead of failing the
 * node's start. A refusal after an unanswered attempt is looked at: the entry after `expectLast`
 * with this id means the earlier attempt landed (its sequence is returned); another entry there
 * (another node's first realm) is the refusal. So is an answer that the id is a duplicate
 * (DuplicateAnswer), where nothing there yet means asking again. Other failures are passed on at
 * once.
 */
export async function appendFirst(
  js: JetStreamClient,
  jsm: JetStreamManager,
  names: ClusterNames,
  realmId: number,
  entry: Entry,
  expectLast: number,
  msgId: string,
  since = Date.now(),
  pauseMs = 250,
): Promise<number> {
  let unanswered = false;
  for (;;) {
    let failure: unknown;
    try {
      return await appendEntry(
        js,
        names,
        realmId,
        entry,
        'Nats-Expected-Last-Sequence',
        expectLast,
        undefined,
        msgId,
      );
    } catch (err) {
      failure = err;
    }
    // A duplicate answer acknowledges nothing (DuplicateAnswer): the log says.
    const duplicate = failure instanceof DuplicateAnswer;
    if ((isWrongLastSequence(failure) && unanswered) || duplicate) {
      const next = await patiently(
        () =>
          jsm.streams.getMessage(names.stream, { seq: expectLast + 1 }).then(
            (m) => m.header?.get('Nats-Msg-Id') ?? '',
            (err: unknown) => {
              if (jetStreamErrorCode(err) === 10037) return ''; // none there (trimmed? not yet)
              throw err;
            },
          ),
        since,
      );
      if (next === msgId) return expectLast + 1;
      if (!duplicate) throw failure;
      if (next !== '') throw takenBy(expectLast + 1);
      // Nothing there yet: the earlier attempt is proposed, not committed; asked again.
      if (Date.now() - since > STARTUP_PATIENCE_MS) throw failure;
    } else if (!isNoAnswer(failure) || Date.now() - since > STARTUP_PATIENCE_MS) throw failure;
    unanswered = true;
    await sleep(pauseMs);
  }
}

/**
 * Appends an entry after position `expect` of its realm's subject (appendEntry, with message id
 * `msgId`), and learns its fate when an attempt goes unanswered: a connection cut, a server frozen
 * or killed, a stream electing a leader. It asks again with the same expectation and id until the
 * log answers: the entry's sequence, whether this attempt or an earlier one landed it; or a
 * refusal (isWrongLastSequence) once the log holds another entry after `expect` — then it never
 * lands. (JetStream checks the expected sequence before the message id, so a repeat of an entry
 * that landed is refused like any other: the entry after `expect` is looked at, by its id.) A
 * repeat answered as a duplicate (DuplicateAnswer: nats-server 2.10 says so while the first
 * attempt is only proposed, with sequence 0) is no acknowledgement either: the log is looked at
 * the same way, and the append settles only on what the log holds.
 * `keepTrying` false gives up (rejecting with the last error: the entry's fate is unknown);
 * `onUnanswered` is told of each attempt still unanswered after APPEND_CHECK_AFTER_MS and again at
 * its timeout (connectionCheck, which checks at most once every 2 s).
 */
export async function appendSurely(
  js: JetStreamClient,
  jsm: JetStreamManager,
  names: ClusterNames,
  realmId: number,
  entry: Entry,
  expect: number,
  msgId: string,
  keepTrying: () => boolean,
  onUnanswered: () => void = () => undefined,
  attemptMs = APPEND_ATTEMPT_MS,
): Promise<number> {
  let unanswered = false;
  // Short pauses: during a leader election JetStream answers "no responders" at once, and the
  // first attempt after it should not wait long.
  for (let pause = 50; ; pause = Math.min(pause * 2, 250)) {
    let failure: unknown;
    const check = setTimeout(onUnanswered, Math.min(APPEND_CHECK_AFTER_MS, attemptMs));
    try {
      const seq = await appendEntry(
        js,
        names,
        realmId,
        entry,
        'Nats-Expected-Last-Subject-Sequence',
        expect,
        attemptMs,
        msgId,
      );
      if (unanswered) trace(`append ${msgId} (${entry.k}) landed at ${seq} after retries`);
      return seq;
    } catch (err) {
      failure = err;
    } finally {
      clearTimeout(check);
    }
    trace(`append ${msgId} after ${expect} failed: ${String(failure)}`);
    // A duplicate answer acknowledges nothing (DuplicateAnswer): only the log says whether the
    // entry is there. The entry that follows `expect` in the log is committed (a stream's
    // servers store, and answer reads from, only what its raft group committed): this one's id
    // there is its acknowledgement; another entry there is its refusal; none, ask again.
    const duplicate = failure instanceof DuplicateAnswer;
    if (isWrongLastSequence(failure) || duplicate) {
      if (!unanswered && !duplicate) throw failure;
      unanswered = true;
      // An earlier attempt may be the entry the log holds after `expect`.
      let next: { seq: number; msgId: string } | null | undefined;
      try {
        next = await nextOnSubject(jsm, names, realmId, expect);
      } catch {
        next = undefined; // not answered: ask again
      }
      if (next?.msgId === msgId) {
        trace(`append ${msgId} (${entry.k}) found in the log at ${next.seq}`);
        return next.seq;
      }
      if (next !== undefined && next !== null) throw duplicate ? takenBy(next.seq) : failure;
    } else {
      unanswered = true;
      onUnanswered();
    }
    if (!keepTrying()) throw failure;
    await sleep(pause);
  }
}
