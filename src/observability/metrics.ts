/**
 * Prometheus metrics (prom-client), served by GET /metrics (src/http/ops-routes.ts). Everything
 * Confab measures is named here, in one module; the call sites hold one-line hooks:
 *
 *   HTTP router          observeRequest()        request duration by method, route, status; 429s
 *   realm actor          observeCommit()         commands per transaction, transaction time
 *   event queues         observeDelivery()       events queued to their poll answer or frame
 *   event queues         hot.eventsQueued++      events appended to queues
 *   render pool          hot.renders*++          inline and worker renders
 *   checkpointer thread  shared counters         checkpoints run, pages copied, WAL size
 *
 * Gauges of state that already exists somewhere (requests in flight, queues and their events, held
 * polls, open sockets, the render pool's backlog) are read when Prometheus scrapes, from the
 * running servers' sources (registerSource), so they cost nothing between scrapes.
 *
 * Cost on the hot path: a Map lookup and a histogram observe per request; a counter increment per
 * queued event (a plain number, read at scrape time). Labels are bounded: routes are patterns
 * (`/api/v1/messages/:message_id`), never paths.
 */
import fs from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DataFigures } from './data-stats.js';
import type { CheckpointStats } from '../storage/checkpointer.js';
import type { UnreadSettleFigures } from '../storage/store.js';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

// prom-client counts open file descriptors with a synchronous readdir of /proc/self/fd at every
// scrape: with 5,000 connections that held the event loop ~40 ms per scrape (a capacity bench's
// CPU profile). The same gauge, read without blocking (the directory is listed on libuv's pool).
if (registry.getSingleMetric('process_open_fds')) {
  registry.removeSingleMetric('process_open_fds');
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers: [registry],
    async collect() {
      try {
        // Less the descriptor the listing itself used.
        this.set((await fs.promises.readdir('/proc/self/fd')).length - 1);
      } catch {
        // not Linux, or /proc is not mounted: the gauge keeps its last value
      }
    },
  });
}

/** Counters bumped on hot paths: plain numbers, turned into metrics when scraped. */
export const hot = {
  eventsQueued: 0,
  rendersInline: 0,
  rendersInWorker: 0,
};

export type QueueFigures = {
  queues: number;
  events: number;
  bytes: number;
  /** The queue memory budget's estimate of what queued events hold, and the budget. */
  memory: number;
  budget: number;
  heldPolls: number;
  sockets: number;
};

/** What one running server reports when scraped. */
export type MetricsSource = {
  inflight(): number;
  queues(): QueueFigures;
  renderPool(): { queued: number; threads: number };
  checkpoints(): CheckpointStats;
  /** The unread index's settler (src/storage/store.ts); absent: reported as zeros. */
  unreadSettle?(): UnreadSettleFigures;
  /** A cluster node's place in its realm log (docs/cluster.md); absent for a single process. */
  replication?(): Promise<ReplicationFigures>;
  /** The mail outbox and its sender (src/mail/sender.ts); absent when the server sends no mail. */
  mail?(): MailFigures;
  /** What the server holds (./data-stats.ts): null while not measured yet. */
  data?(): Promise<DataFigures | null>;
};

/** See src/mail/sender.ts. */
export type MailFigures = {
  waiting: number;
  oldestSeconds: number;
  sent: number;
  retried: number;
  dropped: number;
  /** Messages waiting for a user's missed-message batch (src/mail/missed-messages.ts). */
  missedWaiting: number;
};

export type ReplicationFigures = {
  /** Log entries this node has applied to its copy. */
  applied: number;
  /** Entries in the log this node has not applied yet (NaN: the log did not answer). */
  lag: number;
  /**
   * The log stream's replicas its leader has not heard from for REPLICA_AWAY_MS (NaN: no leader
   * answered).
   */
  replicasAway: number;
  /** Realms whose lease this node holds. */
  owned: number;
  /** Realms this node acts as owner of now (their leases renewed in time). */
  acting: number;
  /** 1 while applying the log is stalled (behind the log, applying nothing). */
  stalled: number;
  /** How long the current stall has lasted (seconds; 0 without one). */
  stalledSeconds: number;
  /** Log consumers made again after a stall, since start. */
  consumerRestarts: number;
  /** The NATS server this node is connected to ('' when none). */
  natsServer: string;
};

const sources = new Set<MetricsSource>();

/** A server adds itself when it starts; the returned function removes it (at close). */
export function registerSource(source: MetricsSource): () => void {
  sources.add(source);
  if (source.replication !== undefined) addReplicationGauges();
  return () => sources.delete(source);
}

function sum(f: (s: MetricsSource) => number): number {
  let n = 0;
  for (const s of sources) n += f(s);
  return n;
}

// ---- HTTP -------------------------------------------------------------------------------------

/** One series of a FastHistogram: its labels and plain counts (not cumulative). */
type Series = {
  labels: Readonly<Record<string, string>>;
  /** Observations per bucket, the last one above every bound (+Inf). */
  counts: Float64Array;
  sum: number;
  count: number;
};

type MetricValues = Awaited<ReturnType<Histogram['get']>>;

const NO_LABELS = (): Record<string, string> => ({});

/**
 * A histogram observed on hot paths (once per request, once per delivery). prom-client's own
 * `observe` builds, validates and hashes a labels object on each call (about a microsecond, a
 * tenth of what a small authenticated request costs the main thread): here the caller finds its
 * series once (`series`, by a key of its own) and `observe` adds to plain numbers. Scrapes read
 * it in prom-client's shape, so the exposition is the same lines a prom-client Histogram writes
 * (`_bucket` cumulative with `le` first, `_sum`, `_count`; series in the order first observed; an
 * unlabelled one present from the start), and `resetMetrics` clears it.
 */
class FastHistogram extends Histogram<string> {
  private byKey = new Map<string, Series>();
  /** Every series, in the order they were first observed (the order of the exposition). */
  private all: Series[] = [];
  /** Counts resets: series a caller kept from an earlier generation are no longer this one's. */
  generation = 0;

  constructor(
    private readonly spec: {
      name: string;
      help: string;
      buckets: readonly number[];
      labelNames: readonly string[];
    },
  ) {
    super({
      name: spec.name,
      help: spec.help,
      labelNames: [...spec.labelNames],
      buckets: [...spec.buckets],
      registers: [registry],
    });
    this.reset();
    // An unlabelled histogram has its one series from the start, as prom-client's (not after a
    // reset: made again at the next observation).
    if (spec.labelNames.length === 0) this.series('', NO_LABELS);
  }

  /** The series of `key` (the caller's name for a set of label values), made with `labels`. */
  series(key: string, labels: () => Record<string, string>): Series {
    let s = this.byKey.get(key);
    if (s === undefined) {
      s = {
        labels: labels(),
        counts: new Float64Array(this.spec.buckets.length + 1),
        sum: 0,
        count: 0,
      };
      this.byKey.set(key, s);
      this.all.push(s);
    }
    return s;
  }

  /** Adds `value` to `s` (prom-client's bounds: the first bucket whose bound is ≥ value). */
  add(s: Series, value: number): void {
    const bounds = this.spec.buckets;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  override get(): Promise<MetricValues> {
    const values: MetricValues['values'] = [];
    const { name, buckets } = this.spec;
    for (const s of this.all) {
      let acc = 0;
      for (let i = 0; i < buckets.length; i++) {
        acc += s.counts[i]!;
        values.push({
          value: acc,
          metricName: `${name}_bucket`,
          exemplar: null,
          labels: { le: buckets[i]!, ...s.labels },
        } as MetricValues['values'][number]);
      }
      values.push(
        {
          value: s.count,
          metricName: `${name}_bucket`,
          exemplar: null,
          labels: { le: '+Inf', ...s.labels },
        } as MetricValues['values'][number],
        { value: s.sum, metricName: `${name}_sum`, labels: { ...s.labels } },
        { value: s.count, metricName: `${name}_count`, labels: { ...s.labels } },
      );
    }
    return Promise.resolve({
      name,
      help: this.spec.help,
      type: 'histogram',
      values,
      aggregator: 'sum',
    } as unknown as MetricValues);
  }

  /** What the registry reads for the text exposition (prom-client prefers it to `get`). */
  getForPromString(): Promise<MetricValues> {
    return this.get();
  }

  /** (Also called by prom-client's constructor, before this class's fields are set.) */
  override reset(): void {
    this.byKey = new Map();
    this.all = [];
    this.generation = (this.generation ?? 0) + 1;
  }
}

const requestDuration = new FastHistogram({
  name: 'confab_http_request_duration_seconds',
  help: 'Time from a request’s arrival to the end of its response (held long-polls included).',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90],
});

/** Request series by route, then by method and status (a handful per route), of a generation. */
let requestSeries = new Map<string, Map<string, Series>>();
let requestGeneration = requestDuration.generation;

const rateLimited = new Counter({
  name: 'confab_rate_limit_refusals_total',
  help: 'Requests refused by a rate limit (429).',
  registers: [registry],
});

const unexpectedErrors = new Counter({
  name: 'confab_unexpected_errors_total',
  help:
    'Exceptions no code expected, each logged as an error: answered 500 (or a socket closed 1011) ' +
    'by the HTTP layer, or caught by the process-level last resort; by where they were caught.',
  labelNames: ['where'] as const,
  registers: [registry],
});

/** Counts one unexpected exception; `where` is one of a few fixed names (src/http/unexpected.ts). */
export function countUnexpected(where: string): void {
  unexpectedErrors.labels(where).inc();
}

new Gauge({
  name: 'confab_http_requests_in_flight',
  help: 'Requests received and not yet answered (held long-polls included).',
  registers: [registry],
  collect() {
    this.set(sum((s) => s.inflight()));
  },
});

const loginFailures = new Counter({
  name: 'confab_login_failures_total',
  help: 'Failed logins: a wrong password (password), or a wrong API key or refused account (api_key).',
  labelNames: ['method'] as const,
  registers: [registry],
});
for (const m of ['password', 'api_key']) loginFailures.labels(m).inc(0);

/** One failed login or authentication. */
export function observeLoginFailure(method: 'password' | 'api_key'): void {
  loginFailures.labels(method).inc();
}

/** The router's hook: one call per finished request. `route` is the endpoint's pattern. */
export function observeRequest(method: string, route: string, status: number, ms: number): void {
  if (requestGeneration !== requestDuration.generation) {
    requestSeries = new Map();
    requestGeneration = requestDuration.generation;
  }
  let byRoute = requestSeries.get(route);
  if (byRoute === undefined) requestSeries.set(route, (byRoute = new Map<string, Series>()));
  const key = status === 200 ? method : `${method} ${status}`;
  let series = byRoute.get(key);
  if (series === undefined) {
    series = requestDuration.series(`${route}\n${key}`, () => ({
      method,
      route,
      status: String(status),
    }));
    byRoute.set(key, series);
  }
  requestDuration.add(series, ms / 1000);
  if (status === 429) rateLimited.inc();
}

// ---- commits ----------------------------------------------------------------------------------

const commitBatch = new Histogram({
  name: 'confab_commit_batch_size',
  help: 'Commands applied per SQLite transaction (group commit batches sends).',
  buckets: [1, 2, 4, 8, 16, 32, 64],
  registers: [registry],
});

const commitDuration = new Histogram({
  name: 'confab_commit_duration_seconds',
  help: 'Time to apply and commit one transaction of a realm actor.',
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  registers: [registry],
});

/** The realm actor's hook: one call per transaction (a single command or a group commit). */
export function observeCommit(commands: number, ms: number): void {
  commitBatch.observe(commands);
  commitDuration.observe(ms / 1000);
}

// ---- event delivery ---------------------------------------------------------------------------

const eventDelivery = new FastHistogram({
  labelNames: [],
  name: 'confab_event_delivery_seconds',
  help:
    'Time from events reaching a queue to the held poll answer or socket frame carrying them ' +
    'being written (deliveries pushed by the server; a poll finding events already waiting is ' +
    'not one).',
  buckets: [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5,
  ],
});

/** The event queues' hook: one call per held poll answered or socket fed by a fan-out. */
export function observeDelivery(ms: number): void {
  eventDelivery.add(
    eventDelivery.series('', () => ({})),
    ms / 1000,
  );
}

// ---- values read at scrape time ----------------------------------------------------------------

function scraped(name: string, help: string, read: () => number, kind: 'gauge' | 'counter') {
  if (kind === 'gauge') {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  } else {
    // A counter whose running total lives elsewhere: report the total as it is now.
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }
}

/** Queue figures of every source, computed once per scrape (they walk every queue). */
let queueSnapshot: { at: number; figures: QueueFigures } | null = null;
function queueFigures(): QueueFigures {
  const now = Date.now();
  if (queueSnapshot !== null && now - queueSnapshot.at < 1000) return queueSnapshot.figures;
  const figures: QueueFigures = {
    queues: 0,
    events: 0,
    bytes: 0,
    memory: 0,
    budget: 0,
    heldPolls: 0,
    sockets: 0,
  };
  for (const s of sources) {
    const q = s.queues();
    figures.queues += q.queues;
    figures.events += q.events;
    figures.bytes += q.bytes;
    figures.memory += q.memory;
    figures.budget += q.budget;
    figures.heldPolls += q.heldPolls;
    figures.sockets += q.sockets;
  }
  queueSnapshot = { at: now, figures };
  return figures;
}

scraped('confab_event_queues', 'Registered event queues.', () => queueFigures().queues, 'gauge');
scraped(
  'confab_event_queue_events',
  'Events waiting in queues (not yet acknowledged).',
  () => queueFigures().events,
  'gauge',
);
scraped(
  'confab_event_queue_bytes',
  'JSON size of the events waiting in queues.',
  () => queueFigures().bytes,
  'gauge',
);
scraped(
  'confab_event_queue_memory_bytes',
  'What queued events hold in memory as the queue memory budget estimates it (each event shared ' +
    'by many queues counted once, plus a measured cost per queue entry); compare with ' +
    'process_resident_memory_bytes.',
  () => queueFigures().memory,
  'gauge',
);
scraped(
  'confab_event_queue_memory_budget_bytes',
  'The queue memory budget (QUEUE_MEMORY_BUDGET_MB): past it, queues are discarded.',
  () => queueFigures().budget,
  'gauge',
);
scraped(
  'confab_long_polls_held',
  'GET /events requests being held.',
  () => queueFigures().heldPolls,
  'gauge',
);
scraped(
  'confab_websockets_open',
  'WebSockets attached to event queues.',
  () => queueFigures().sockets,
  'gauge',
);
scraped(
  'confab_events_delivered_total',
  'Events appended to event queues (one per queue reached).',
  () => hot.eventsQueued,
  'counter',
);
scraped(
  'confab_render_pool_queue',
  'Render tasks waiting for a worker thread.',
  () => sum((s) => s.renderPool().queued),
  'gauge',
);
scraped(
  'confab_render_pool_threads',
  'Render worker threads running.',
  () => sum((s) => s.renderPool().threads),
  'gauge',
);
scraped(
  'confab_renders_inline_total',
  'Markdown renders done on the main thread.',
  () => hot.rendersInline,
  'counter',
);
scraped(
  'confab_renders_worker_total',
  'Markdown renders sent to the worker pool.',
  () => hot.rendersInWorker,
  'counter',
);
scraped(
  'confab_checkpoints_total',
  'Background WAL checkpoints run.',
  () => sum((s) => s.checkpoints().runs),
  'counter',
);
scraped(
  'confab_checkpoint_pages_total',
  'WAL pages copied into the database file by background checkpoints.',
  () => sum((s) => s.checkpoints().pages),
  'counter',
);
scraped(
  'confab_wal_pages',
  'Pages in the write-ahead log at the last background checkpoint.',
  () => sum((s) => s.checkpoints().walPages),
  'gauge',
);
scraped(
  'confab_wal_commit_holds_total',
  'Times the background checkpointer held group commits to copy the last of the WAL.',
  () => sum((s) => s.checkpoints().holds),
  'counter',
);
scraped(
  'confab_wal_emptied_total',
  'Times the background checkpointer copied the whole WAL under such a hold (the next commit restarts it).',
  () => sum((s) => s.checkpoints().restarts),
  'counter',
);
scraped(
  'confab_wal_started_afresh_total',
  'Times the background checkpointer then started the emptied WAL afresh itself (else the next commit does, syncing the new WAL header on the main thread).',
  () => sum((s) => s.checkpoints().afresh),
  'counter',
);

scraped(
  'confab_unread_settle_failures_total',
  'Times moving the unread index watermark failed other than on a busy database (logged; unread reads slow down while it does not move).',
  () => sum((s) => s.unreadSettle?.().failures ?? 0),
  'counter',
);
scraped(
  'confab_unread_watermark_behind',
  'Message ids between the unread index watermark and the newest message (a few hundred while it keeps up; growing: it is stuck).',
  () => sum((s) => s.unreadSettle?.().behind ?? 0),
  'gauge',
);

// ---- outgoing mail (src/mail/sender.ts) ---------------------------------------------------------

function mailSum(read: (m: MailFigures) => number): number {
  let n = 0;
  for (const s of sources) if (s.mail) n += read(s.mail());
  return n;
}

scraped(
  'confab_mail_outbox',
  'Mail waiting in the outbox for the SMTP server.',
  () => mailSum((m) => m.waiting),
  'gauge',
);
scraped(
  'confab_mail_outbox_oldest_seconds',
  'Age of the oldest mail waiting in the outbox.',
  () => mailSum((m) => m.oldestSeconds),
  'gauge',
);
scraped(
  'confab_mail_sent_total',
  'Mail the SMTP server accepted.',
  () => mailSum((m) => m.sent),
  'counter',
);
scraped(
  'confab_mail_retries_total',
  'Failed deliveries that will be tried again.',
  () => mailSum((m) => m.retried),
  'counter',
);
scraped(
  'confab_mail_dropped_total',
  'Mail dropped after it kept failing or the SMTP server refused it (each logged).',
  () => mailSum((m) => m.dropped),
  'counter',
);
scraped(
  'confab_missed_message_mail_waiting',
  'Messages waiting for their missed-message mail batch to fall due.',
  () => mailSum((m) => m.missedWaiting),
  'gauge',
);

// ---- the build, and what the server holds ----------------------------------------------------

const buildInfo = new Gauge({
  name: 'confab_build_info',
  help: 'Always 1: the running build, its Node.js and its native builds, as labels.',
  labelNames: ['version', 'node', 'uws', 'sqlite'] as const,
  registers: [registry],
});

/** Called once the server has loaded its native builds (createServer). */
export function setBuildInfo(info: { version: string; uws: string; sqlite: string }): void {
  buildInfo.reset();
  buildInfo.labels(info.version, process.versions.node, info.uws, info.sqlite).set(1);
}

/** Every source's data figures, asked once per scrape (the first scrape waits for them). */
let dataSnapshot: { at: number; figures: Promise<DataFigures | null> } | null = null;
function dataFigures(): Promise<DataFigures | null> {
  const now = Date.now();
  if (dataSnapshot !== null && now - dataSnapshot.at < 1000) return dataSnapshot.figures;
  const figures = (async () => {
    for (const s of sources) {
      // One server's data directory: the first source that measures it.
      const f = s.data ? await s.data() : null;
      if (f !== null) return f;
    }
    return null;
  })();
  dataSnapshot = { at: now, figures };
  return figures;
}

function dataGauge(
  name: string,
  help: string,
  labels: readonly string[],
  read: (f: DataFigures) => [Record<string, string>, number][],
) {
  new Gauge({
    name,
    help,
    labelNames: labels,
    registers: [registry],
    async collect() {
      const f = await dataFigures();
      if (f === null) return;
      for (const [l, v] of read(f)) this.set(l, v);
    },
  });
}

dataGauge('confab_realms', 'Realms, by state.', ['state'], (f) => [
  [{ state: 'active' }, f.realms],
  [{ state: 'deactivated' }, f.realmsDeactivated],
]);
dataGauge(
  'confab_users',
  'User accounts: active people, active bots, deactivated.',
  ['kind'],
  (f) => [
    [{ kind: 'human' }, f.humans],
    [{ kind: 'bot' }, f.bots],
    [{ kind: 'deactivated' }, f.usersDeactivated],
  ],
);
dataGauge('confab_messages', 'Messages stored.', [], (f) => [[{}, f.messages]]);
dataGauge(
  'confab_database_bytes',
  'Size of the database on disk (its file and write-ahead log).',
  [],
  (f) => [[{}, f.databaseBytes]],
);
dataGauge(
  'confab_upload_bytes',
  'Size of the uploaded files on disk: uploads, and custom emoji.',
  ['kind'],
  (f) => [
    [{ kind: 'uploads' }, f.uploadBytes],
    [{ kind: 'emoji' }, f.emojiBytes],
  ],
);

// ---- a cluster node's replication (asked of JetStream once per scrape) ---------------------------

let replicationSnapshot: { at: number; figures: Promise<ReplicationFigures | null> } | null = null;
function replicationFigures(): Promise<ReplicationFigures | null> {
  const now = Date.now();
  if (replicationSnapshot !== null && now - replicationSnapshot.at < 1000) {
    return replicationSnapshot.figures;
  }
  const figures = (async () => {
    let total: ReplicationFigures | null = null;
    for (const s of sources) {
      if (s.replication === undefined) continue;
      // NATS unreachable: the figures are left out of this scrape rather than failing it.
      const r = await s.replication().catch(() => null);
      if (r === null) continue;
      total ??= {
        applied: 0,
        lag: 0,
        replicasAway: 0,
        owned: 0,
        acting: 0,
        stalled: 0,
        stalledSeconds: 0,
        consumerRestarts: 0,
        natsServer: r.natsServer,
      };
      total.applied += r.applied;
      total.lag += r.lag;
      // Every node sees the same stream: the most any of them reports.
      total.replicasAway = Math.max(total.replicasAway, r.replicasAway);
      total.owned += r.owned;
      total.acting += r.acting;
      total.stalled += r.stalled;
      total.stalledSeconds = Math.max(total.stalledSeconds, r.stalledSeconds);
      total.consumerRestarts += r.consumerRestarts;
    }
    return total;
  })();
  replicationSnapshot = { at: now, figures };
  return figures;
}

function replicationGauge(name: string, help: string, read: (r: ReplicationFigures) => number) {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const r = await replicationFigures();
      if (r === null) return;
      const v = read(r);
      if (Number.isFinite(v)) this.set(v);
    },
  });
}

/** A cluster owner's appends to the realm log: publish to JetStream's acknowledgement. */
let appendDuration: Histogram | null = null;

/** The cluster node's hook: one call per batch appended to the realm log. */
export function observeAppend(ms: number): void {
  appendDuration?.observe(ms / 1000);
}

/** Registered with the first cluster node's source: a single process shows none of them. */
let replicationGauges = false;
function addReplicationGauges(): void {
  if (replicationGauges) return;
  replicationGauges = true;
  appendDuration = new Histogram({
    name: 'confab_cluster_append_duration_seconds',
    help: 'Time from publishing a committed batch to the realm log to its acknowledgement.',
    buckets: [0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  replicationGauge(
    'confab_cluster_replication_lag_entries',
    'Entries of the realm log this cluster node has not yet applied to its copy.',
    (r) => r.lag,
  );
  replicationGauge(
    'confab_cluster_log_replicas_away',
    "Replicas of the realm log's stream that its leader has not heard from for 10 s or marks " +
      'offline: a NATS server down, frozen or cut off, or one back without its copy of the ' +
      'stream (docs/cluster.md "Faults"). The log goes on while a quorum of copies answers.',
    (r) => r.replicasAway,
  );
  replicationGauge(
    'confab_cluster_applied_entries',
    'Position in the realm log up to which this cluster node has applied.',
    (r) => r.applied,
  );
  replicationGauge(
    'confab_cluster_realms_owned',
    'Realms whose lease this cluster node holds.',
    (r) => r.owned,
  );
  replicationGauge(
    'confab_cluster_realms_acting',
    'Realms this cluster node acts as owner of now: its lease renewed within the lease time ' +
      'minus its margin (docs/cluster.md "Failover and fencing").',
    (r) => r.acting,
  );
  replicationGauge(
    'confab_cluster_apply_stalled',
    '1 while this cluster node is behind the realm log and has applied nothing for the stall ' +
      'time (its log consumer is being made again).',
    (r) => r.stalled,
  );
  replicationGauge(
    'confab_cluster_apply_stalled_seconds',
    'How long the current stall of this cluster node applying the realm log has lasted.',
    (r) => r.stalledSeconds,
  );
  replicationGauge(
    'confab_cluster_consumer_restarts',
    'Times this cluster node made its log consumer again after a stall, since it started.',
    (r) => r.consumerRestarts,
  );
  new Gauge({
    name: 'confab_cluster_nats_server_info',
    help: 'The NATS server this cluster node is connected to (the label; the value is 1).',
    labelNames: ['server'] as const,
    registers: [registry],
    async collect() {
      const r = await replicationFigures();
      this.reset();
      if (r !== null && r.natsServer !== '') this.labels(r.natsServer).set(1);
    },
  });
}

/**
 * The Prometheus text exposition of every metric, as UTF-8 bytes (a help text holds a non-ASCII
 * character; a node that has served many routes answers over 64 KiB, which once hung the
 * responder: src/http/respond.ts now measures strings in bytes).
 */
export async function metricsText(): Promise<Buffer> {
  return Buffer.from(await registry.metrics(), 'utf8');
}

export const METRICS_CONTENT_TYPE = registry.contentType;
