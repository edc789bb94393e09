/**
 * `npm run bench -- capacity` and `npm run bench -- soak` (issue #14): how many active users one
 * server holds under the reference's traffic mix, and whether it stays steady there.
 *
 * The realm: `--max-users` members (seeded at once; steps activate a prefix), in channels of
 * several sizes drawn from neighbouring users (so a prefix of N users is itself a realm of N with
 * whole channels): private teams of 10, channels of 30, public channels of 100 and 500. Each
 * active user is played by a client process (bench/lib/capacity-client.ts, `--clients` of them)
 * as a real client (`--gzip off`:
 * clients that do not send `Accept-Encoding: gzip, deflate`, which real ones do): an event queue
 * (`--ws-share` over WebSockets, the rest long-polling; the
 * server answers held polls with heartbeats), presence every 60 s, and Poisson-distributed sends,
 * direct messages, fetches, flag updates, reactions, typing, uploads and downloads at per-user
 * rates taken from the reference's published request mix (docs/benchmarks.md, "capacity").
 * Simulated time runs `--compress` times faster than real time (every per-user rate and the
 * server's heartbeat interval scaled alike).
 *
 * capacity: users grow by `--factor` from `--start` until a step misses an objective (delivery
 * p99, request p99, errors, server event-loop lag p99), then the interval is bisected
 * `--refine` times; each step runs `--warmup` then `--step` seconds. The answer is the largest
 * step that met every objective. A step where a client process was itself saturated is marked,
 * and the answer then says the clients, not the server, set the limit.
 *
 * soak: the same mix at `--load` (70%) of `--users`, or of the capacity in `--from <result.json>`,
 * or of a capacity search run first; `--minutes` (30) in windows of `--window` seconds; reports the
 * drift of p99 and of memory between the first and last thirds.
 *
 * Both write bench/results/<scenario>-<time>.json and .html (bench/lib/report.ts). With
 * BENCH_PROFILE=<dir>, the server's CPU profile of each measured window goes there.
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { ClientProcess } from './lib/client-process.js';
import {
  ACTIVITIES,
  KINDS,
  type CapacityClientOpts,
  type CapacityUser,
  type ClientStep,
  type ClientTick,
  type Kind,
  type Mix,
} from './lib/capacity-client.js';
import { merge, mergedSummary, summary, type LatencySummary } from './lib/hdr.js';
import { basicAuth } from './lib/http-conn.js';
import {
  capacityOf,
  DEFAULT_OBJECTIVES,
  missedObjectives,
  nextStep,
  type Objectives,
  type StepPlan,
} from './lib/open-loop.js';
import {
  printSoakTable,
  printStepTable,
  writeReport,
  type BenchResult,
  type SeriesPoint,
  type StepResult,
  type SoakWindow,
} from './lib/report.js';
import { createChannel, serverWithUsers, type BenchServer } from './lib/seed.js';
import { bucketQuantile, ServerProbe } from './lib/server-metrics.js';
import { fmt, machine } from './lib/stats.js';
import { profiled } from './lib/profile.js';
import { descriptors, type Descriptors } from './lib/descriptors.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Per-user rates per minute, from the reference's production mix (44% GET /events, 36% presence,
 * 5% downloads, 3% GET /messages, 1.5% flags, 0.5% sends): relative to one presence report a
 * minute. Direct messages are a third of the sends; reactions, typing and uploads, which the mix
 * does not list, are put at 1/2, 2 and 1/10 of a send.
 */
export const REFERENCE_MIX: Mix = {
  send: (0.5 / 36) * (2 / 3),
  dm: (0.5 / 36) * (1 / 3),
  fetch: 3 / 36,
  flags: 1.5 / 36,
  react: (0.5 / 36) * 0.5,
  typing: (0.5 / 36) * 2,
  upload: (0.5 / 36) * 0.1,
  download: 5 / 36,
};

/** Channel tiers: size and how many channels of that size each user is in. */
export const TIERS = [
  { size: 10, per: 1, private: true },
  { size: 30, per: 2, private: false },
  { size: 100, per: 2, private: false },
  { size: 500, per: 1, private: false },
] as const;

/**
 * Channels as contiguous ranges of user indexes: in layer l of a tier, users are cut into blocks
 * of the tier's size, shifted by l·size/per, so each user is in `per` channels of the tier, with
 * different neighbours in each. A prefix of N users holds whole channels (except at its edge).
 */
export function channelLayout(
  nUsers: number,
): { tier: number; members: [number, number]; private: boolean }[] {
  const out: { tier: number; members: [number, number]; private: boolean }[] = [];
  TIERS.forEach((t, tier) => {
    const size = Math.min(t.size, nUsers);
    for (let l = 0; l < t.per; l++) {
      const shift = Math.floor((l * size) / t.per);
      // Blocks [shift + k·size, shift + (k+1)·size), the first one starting at 0.
      const starts = [0];
      for (let s = shift === 0 ? size : shift; s < nUsers; s += size) starts.push(s);
      for (let i = 0; i < starts.length; i++) {
        const from = starts[i]!;
        const to = Math.min(nUsers, starts[i + 1] ?? nUsers);
        if (to - from >= 2) out.push({ tier, members: [from, to], private: t.private });
      }
    }
  });
  return out;
}

export type CapacityOptions = {
  quick: boolean;
  clients: number;
  start: number;
  factor: number;
  maxUsers: number;
  refine: number;
  stepSeconds: number;
  warmupSeconds: number;
  compress: number;
  wsShare: number;
  /** Clients send `Accept-Encoding: gzip, deflate`, as real ones do (on by default). */
  gzip: boolean;
  seed: number;
  out: string;
  objectives: Objectives;
  mix: Mix;
  // soak
  users: number | null;
  from: string | null;
  load: number;
  minutes: number;
  windowSeconds: number;
};

export function parseCapacityArgs(argv: string[]): CapacityOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      clients: { type: 'string' },
      start: { type: 'string' },
      factor: { type: 'string' },
      'max-users': { type: 'string' },
      refine: { type: 'string' },
      step: { type: 'string' },
      warmup: { type: 'string' },
      compress: { type: 'string' },
      'ws-share': { type: 'string' },
      gzip: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      users: { type: 'string' },
      from: { type: 'string' },
      load: { type: 'string' },
      minutes: { type: 'string' },
      window: { type: 'string' },
      'delivery-p99': { type: 'string' },
      'request-p99': { type: 'string' },
      'lag-p99': { type: 'string' },
    },
    allowPositionals: false,
  });
  const quick = values.quick ?? false;
  const num = (v: string | undefined, dflt: number, name: string) => {
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number`);
    return n;
  };
  return {
    quick,
    clients: num(values.clients, quick ? 1 : 2, 'clients'),
    start: num(values.start, quick ? 40 : 1000, 'start'),
    factor: num(values.factor, 2, 'factor'),
    maxUsers: num(values['max-users'], quick ? 80 : 16_000, 'max-users'),
    refine: num(values.refine, quick ? 0 : 2, 'refine'),
    stepSeconds: num(values.step, quick ? 2 : 60, 'step'),
    warmupSeconds: num(values.warmup, quick ? 1 : 10, 'warmup'),
    compress: num(values.compress, quick ? 60 : 1, 'compress'),
    wsShare: num(values['ws-share'], 0.5, 'ws-share'),
    gzip: values.gzip === undefined ? true : ['on', '1', 'true'].includes(values.gzip),
    seed: num(values.seed, 1, 'seed'),
    out: values.out ?? path.join(here, '..', '..', 'bench', 'results'),
    objectives: {
      ...DEFAULT_OBJECTIVES,
      deliveryP99Ms: num(values['delivery-p99'], DEFAULT_OBJECTIVES.deliveryP99Ms, 'delivery-p99'),
      requestP99Ms: num(values['request-p99'], DEFAULT_OBJECTIVES.requestP99Ms, 'request-p99'),
      loopLagP99Ms: num(values['lag-p99'], DEFAULT_OBJECTIVES.loopLagP99Ms, 'lag-p99'),
    },
    mix: REFERENCE_MIX,
    users: values.users === undefined ? null : num(values.users, 0, 'users'),
    from: values.from ?? null,
    load: num(values.load, 0.7, 'load'),
    minutes: num(values.minutes, quick ? 0.1 : 30, 'minutes'),
    windowSeconds: num(values.window, quick ? 2 : 60, 'window'),
  };
}

// ---- the realm ------------------------------------------------------------------------------------

type Realm = {
  bench: BenchServer;
  users: CapacityUser[];
  downloads: string[];
  seedSeconds: number;
};

async function seedRealm(o: CapacityOptions): Promise<Realm> {
  const t0 = performance.now();
  const n = o.maxUsers;
  const bench = await serverWithUsers(n, 'capacity', {
    server: {
      // The reference's heartbeat (a held poll answered after ~45-55 s), in simulated time.
      heartbeatMs: Math.round(45_000 / o.compress),
      heartbeatJitterMs: Math.round(10_000 / o.compress),
    },
  });
  const ids = bench.users.map((u) => u.id);
  const channelsOf: number[][] = ids.map(() => []);
  let c = 0;
  for (const ch of channelLayout(n)) {
    const members = ids.slice(ch.members[0], ch.members[1]);
    const id = await createChannel(
      bench.server,
      bench.realmId,
      members[0]!,
      `c${c++} tier ${ch.tier}`,
      members,
      ch.private,
    );
    for (let i = ch.members[0]; i < ch.members[1]; i++) channelsOf[i]!.push(id);
  }
  const users: CapacityUser[] = bench.users.map((u, index) => ({
    ...u,
    index,
    channels: channelsOf[index]!,
  }));
  const downloads = await seedDownloads(bench, users[0]!, channelsOf[0]!.at(-1)!);
  return { bench, users, downloads, seedSeconds: (performance.now() - t0) / 1000 };
}

/** Files everyone may download: uploaded by user 0 and linked in a public channel's message. */
async function seedDownloads(b: BenchServer, u: CapacityUser, channel: number): Promise<string[]> {
  const base = `http://127.0.0.1:${b.server.port}`;
  const headers = { authorization: basicAuth(u) };
  const urls: string[] = [];
  for (let i = 0; i < 8; i++) {
    const fd = new FormData();
    const bytes = new Uint8Array(4096 * (i + 1)).fill(0x41 + i);
    fd.append('file', new Blob([bytes], { type: 'image/png' }), `image${i}.png`);
    const res = await fetch(`${base}/api/v1/user_uploads`, { method: 'POST', headers, body: fd });
    const body = (await res.json()) as { url?: string; msg?: string };
    if (!body.url) throw new Error(`seeding an upload: ${body.msg ?? res.status}`);
    urls.push(body.url);
  }
  const content = urls.map((url, i) => `[image${i}.png](${url})`).join('\n');
  const res = await fetch(`${base}/api/v1/messages`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ type: 'stream', to: String(channel), topic: 'files', content }),
  });
  if (res.status !== 200) throw new Error(`seeding the files' message: ${await res.text()}`);
  return urls;
}

// ---- the clients ----------------------------------------------------------------------------------

class Clients {
  readonly procs: ClientProcess[] = [];
  /** Figures per second, merged over the processes (keyed by the second). */
  private readonly seconds = new Map<number, ClientTick[]>();
  onSecond: (at: number, ticks: ClientTick[]) => void = () => {};

  constructor(count: number) {
    for (let p = 0; p < count; p++) {
      this.procs.push(
        new ClientProcess(path.join(here, 'lib', 'capacity-client.js'), ['tick'], (m) =>
          this.onTick(m.tick as ClientTick),
        ),
      );
    }
  }

  private onTick(t: ClientTick): void {
    const key = Math.round(t.at / 1000);
    const list = this.seconds.get(key) ?? [];
    list.push(t);
    this.seconds.set(key, list);
    if (list.length === this.procs.length) {
      this.seconds.delete(key);
      this.onSecond(t.at, list);
    }
    // Ticks that never completed (a process slipped a second): dropped after a while.
    for (const k of this.seconds.keys()) if (k < key - 5) this.seconds.delete(k);
  }

  async start(o: CapacityOptions, realm: Realm): Promise<void> {
    const dmPeers = realm.users.map((u) => u.id);
    await Promise.all(
      this.procs.map(async (c, proc) => {
        const opts: CapacityClientOpts = {
          port: realm.bench.server.port,
          proc,
          seed: o.seed,
          wsShare: o.wsShare,
          gzip: o.gzip,
          compress: o.compress,
          mix: o.mix,
          downloads: realm.downloads,
          dmPeers,
          maxConnections: 256,
          uploadBytes: 24 * 1024,
        };
        await c.request({ type: 'start', opts }, 'a client process to start');
        const mine = realm.users.filter((u) => u.index % this.procs.length === proc);
        await c.request({ type: 'add', users: mine }, 'the users to be handed over');
      }),
    );
  }

  async activate(count: number): Promise<void> {
    await Promise.all(
      this.procs.map((c) =>
        c.request({ type: 'active', count }, `${count} users to register`, 600_000),
      ),
    );
  }

  async mark(): Promise<void> {
    await Promise.all(this.procs.map((c) => c.request({ type: 'mark' }, 'mark')));
  }

  async collect(): Promise<ClientStep[]> {
    const answers = await Promise.all(
      this.procs.map((c) => c.request({ type: 'collect' }, 'the step figures')),
    );
    return answers.map((a) => a.step as ClientStep);
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((c) => c.stop()));
  }
}

/** A client process is the bottleneck past these (it then says so). */
const CLIENT_CPU_LIMIT = 85;
const CLIENT_LAG_LIMIT_MS = 50;

// ---- running a load window ------------------------------------------------------------------------

type Live = {
  series: SeriesPoint[];
  t0: number;
  label: () => string;
  /** The server process's descriptors once the client processes were up, before any user. */
  base: Descriptors | null;
};

/** Collects the per-second series (clients' figures + the server's) and prints a progress line. */
function watch(clients: Clients, probe: ServerProbe, live: Live): void {
  clients.onSecond = (at, ticks) => {
    void probe.sample().then((s) => {
      const req = summary(merge(ticks.map((t) => t.requests)));
      const del = summary(merge(ticks.map((t) => t.deliveries)));
      const point: SeriesPoint = {
        t: (at - live.t0) / 1000,
        label: live.label(),
        requestsPerSecond: ticks.reduce((a, t) => a + t.done, 0),
        eventsPerSecond: ticks.reduce((a, t) => a + t.events, 0),
        errors: ticks.reduce((a, t) => a + t.errors, 0),
        request: { p50: req.p50, p90: req.p90, p99: req.p99, max: req.max },
        delivery: { p50: del.p50, p90: del.p90, p99: del.p99, max: del.max },
        server: s,
        clientCpu: Math.max(...ticks.map((t) => t.cpu)),
        clientLagP99: Math.max(...ticks.map((t) => t.loopP99)),
      };
      live.series.push(point);
      if (process.stdout.isTTY) {
        process.stdout.write(
          `\r\x1b[2K${live.label()} | ${fmt(point.requestsPerSecond, 0)} req/s, ` +
            `${fmt(point.eventsPerSecond, 0)} events/s, p99 req ${fmt(req.p99, 1)} ms, ` +
            `delivery ${fmt(del.p99, 1)} ms | errors ${point.errors} | server CPU ` +
            `${fmt(s.cpu, 0)}%, lag p99 ${fmt(s.loopP99, 1)} ms, RSS ${fmt(s.rssMb, 0)} MB`,
        );
      }
    });
  };
}

function endLive(): void {
  if (process.stdout.isTTY) process.stdout.write('\r\x1b[2K');
}

let windowCount = 0;

/**
 * The server's own figures of a window, from its /metrics histograms: its delivery time (a
 * commit's events to the answer or frame written) and its time for sends (arrival to answer),
 * which say how much of the clients' delivery p99 the server accounts for.
 */
const SERVER_HISTOGRAMS = [
  { name: 'confab_event_delivery_seconds' },
  {
    name: 'confab_http_request_duration_seconds',
    labels: { method: 'POST', route: '/api/v1/messages' },
  },
];

/** One measured window: mark, wait, collect, and the figures of the window. */
async function measure(
  clients: Clients,
  probe: ServerProbe,
  live: Live,
  users: number,
  seconds: number,
  o: CapacityOptions,
): Promise<StepResult> {
  const from = live.series.length;
  let histogramsBefore: [number, number][][] = [];
  let histogramsAfter: [number, number][][] = [];
  /** The q-quantile of the i-th server histogram over the window, in ms. */
  const serverMs = (i: number, q: number) =>
    bucketQuantile(histogramsBefore[i] ?? [], histogramsAfter[i] ?? [], q) * 1000;
  // BENCH_PROFILE=<dir>: the server's CPU profile of each measured window (bench/lib/profile.ts).
  // Starting the profiler stops the process for about half a second: the window is marked 2 s
  // after, so that stall and its backlog are not measured.
  await profiled(`window-${++windowCount}-${users}-users`, async () => {
    if (process.env.BENCH_PROFILE) await sleep(2000);
    histogramsBefore = await probe.buckets(SERVER_HISTOGRAMS);
    await clients.mark();
    await sleep(seconds * 1000);
    histogramsAfter = await probe.buckets(SERVER_HISTOGRAMS);
  });
  const fds = await descriptors();
  const steps = await clients.collect();
  const window = live.series.slice(from);
  const kinds = {} as Record<Kind, LatencySummary & { ok: number; errors: number; rate: number }>;
  const wall = Math.max(...steps.map((s) => s.seconds));
  let errors = 0;
  const requestParts: string[] = [];
  for (const k of KINDS) {
    const parts = steps.map((s) => s.kinds[k].hist);
    const ok = steps.reduce((a, s) => a + s.kinds[k].ok, 0);
    const errs = steps.reduce((a, s) => a + s.kinds[k].errors, 0);
    errors += errs;
    if (k !== 'register') requestParts.push(...parts);
    kinds[k] = { ...mergedSummary(parts), ok, errors: errs, rate: (ok + errs) / wall };
  }
  const request = mergedSummary(requestParts);
  const delivery = mergedSummary(steps.map((s) => s.deliveries));
  const lateness = mergedSummary(steps.map((s) => s.lateness));
  const serverPoints = window.map((p) => p.server);
  const avg = (xs: number[]) => {
    const ok = xs.filter((x) => Number.isFinite(x));
    return ok.length ? ok.reduce((a, x) => a + x, 0) / ok.length : NaN;
  };
  const maxOf = (xs: number[]) => {
    const ok = xs.filter((x) => Number.isFinite(x));
    return ok.length ? Math.max(...ok) : NaN;
  };
  // The server's lag p99 over the window: the worst second's p99 is too harsh, the mean too
  // lenient; the objective takes the 90th percentile of the per-second p99s.
  const lags = serverPoints
    .map((s) => s.loopP99)
    .filter((x) => Number.isFinite(x))
    .sort((a, b) => a - b);
  const loopLagP99 = lags.length
    ? lags[Math.min(lags.length - 1, Math.floor(lags.length * 0.9))]!
    : NaN;
  const clientCpu = Math.max(...steps.map((s) => s.cpu));
  const clientLag = Math.max(...steps.map((s) => s.loopP99));
  // Each active user holds one connection for its queue (a long-poll or a WebSocket); request
  // connections are pooled per client process.
  const queueConnections = steps.reduce((a, s) => a + s.activeUsers, 0);
  const connections = steps.reduce((a, s) => a + s.connections, 0);
  const socketsAdded = fds && live.base ? fds.sockets - live.base.sockets : NaN;
  const missed = missedObjectives(
    { deliveryP99: delivery.p99, requestP99: request.p99, errors, loopLagP99 },
    o.objectives,
  );
  return {
    users,
    seconds: wall,
    passed: missed.length === 0,
    missed,
    request,
    delivery,
    kinds,
    requestsPerSecond: Object.values(kinds).reduce((a, k) => a + k.rate, 0) - kinds.register.rate,
    eventsPerSecond: steps.reduce((a, s) => a + s.events, 0) / wall,
    errors,
    errorSamples: steps.flatMap((s) => s.errorSamples).slice(0, 10),
    server: {
      cpu: avg(serverPoints.map((s) => s.cpu)),
      rssMb: maxOf(serverPoints.map((s) => s.rssMb)),
      heapMb: maxOf(serverPoints.map((s) => s.heapMb)),
      loopLagP99,
      deliveryP50: serverMs(0, 0.5),
      deliveryP99: serverMs(0, 0.99),
      sendP99: serverMs(1, 0.99),
      openFiles: fds?.open ?? NaN,
      socketsPerConnection: socketsAdded / (queueConnections + connections),
    },
    clients: {
      cpu: clientCpu,
      loopLagP99: clientLag,
      latenessP99: lateness.p99,
      saturated: clientCpu > CLIENT_CPU_LIMIT || clientLag > CLIENT_LAG_LIMIT_MS,
      connections,
      queueConnections,
    },
  };
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: here,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${head} (modified)` : head;
  } catch {
    return 'unknown';
  }
}

function machineInfo() {
  return {
    description: machine(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryMb: Math.round(os.totalmem() / 2 ** 20),
    loadAverage: os.loadavg(),
    hostname: os.hostname(),
  };
}

function settingsOf(o: CapacityOptions, realm: Realm) {
  return {
    ...o,
    realmMembers: realm.users.length,
    channels: channelLayout(realm.users.length).length,
    tiers: TIERS,
    seedSeconds: realm.seedSeconds,
    heartbeatMs: Math.round(45_000 / o.compress),
    presenceIntervalSeconds: 60 / o.compress,
    perUserRequestsPerMinute:
      1 + ACTIVITIES.reduce((a, k) => a + o.mix[k], 0) /* presence + the activities */,
  };
}

async function withRealm<T>(
  o: CapacityOptions,
  fn: (realm: Realm, clients: Clients, probe: ServerProbe, live: Live) => Promise<T>,
): Promise<T> {
  const realm = await seedRealm(o);
  console.log(
    `seeded ${realm.users.length} members, ${channelLayout(realm.users.length).length} channels in ` +
      `${fmt(realm.seedSeconds, 1)} s`,
  );
  const clients = new Clients(o.clients);
  const probe = new ServerProbe(realm.bench.server.port);
  const live: Live = { series: [], t0: Date.now(), label: () => '', base: null };
  try {
    await clients.start(o, realm);
    live.base = await descriptors();
    watch(clients, probe, live);
    return await fn(realm, clients, probe, live);
  } finally {
    endLive();
    clients.onSecond = () => {};
    await clients.stop();
    probe.close();
    await realm.bench.close();
  }
}

// ---- capacity -------------------------------------------------------------------------------------

async function searchCapacity(o: CapacityOptions): Promise<BenchResult> {
  const plan: StepPlan = {
    start: o.start,
    factor: o.factor,
    max: o.maxUsers,
    refinements: o.refine,
    granularity: o.quick ? 10 : 100,
  };
  console.log(
    `capacity: ${machine()}, ${os.cpus().length} cores; ${o.clients} client processes; time ` +
      `compressed ${o.compress}x (presence every ${fmt(60 / o.compress, 1)} s); steps from ` +
      `${plan.start} users x${plan.factor} up to ${plan.max}, ${o.warmupSeconds} + ` +
      `${o.stepSeconds} s each`,
  );
  const started = new Date();
  return withRealm(o, async (realm, clients, probe, live) => {
    const steps: StepResult[] = [];
    for (let users = nextStep(plan, []); users !== null; users = nextStep(plan, steps)) {
      const n = users;
      live.label = () => `step ${steps.length + 1}: ${n} users`;
      await clients.activate(n);
      await sleep(o.warmupSeconds * 1000);
      const step = await measure(clients, probe, live, n, o.stepSeconds, o);
      steps.push(step);
      endLive();
      console.log(
        `step ${steps.length}: ${n} users: ${step.passed ? 'met' : 'missed: ' + step.missed.join('; ')}` +
          (step.clients.saturated ? ' (a client process was saturated)' : ''),
      );
    }
    const capacity = capacityOf(steps);
    const clientBound = steps.some(
      (s) => s.clients.saturated && s.users <= (capacity || Infinity) * 2,
    );
    const result: BenchResult = {
      scenario: 'capacity',
      date: started.toISOString(),
      commit: commit(),
      machine: machineInfo(),
      settings: settingsOf(o, realm),
      objectives: o.objectives,
      metricsSource: probe.source,
      capacity,
      capacityNote:
        capacity >= o.maxUsers
          ? `every step met the objectives up to --max-users ${o.maxUsers}: raise it`
          : clientBound
            ? 'a client process was saturated near the limit: the clients, not only the server, set it'
            : 'the server set the limit',
      steps,
      series: live.series,
      soak: null,
    };
    printStepTable(result);
    return result;
  });
}

export async function capacityBench(argv: string[] = []): Promise<void> {
  const o = parseCapacityArgs(argv);
  const result = await searchCapacity(o);
  const files = writeReport(result, o.out);
  console.log(`capacity: ${result.capacity} users (${result.capacityNote})`);
  console.log(`report: ${files.json}\n        ${files.html}`);
}

// ---- soak -----------------------------------------------------------------------------------------

export async function soakBench(argv: string[] = []): Promise<void> {
  const o = parseCapacityArgs(argv);
  let capacity = o.users;
  if (capacity === null && o.from) {
    const fs = await import('node:fs');
    capacity = (JSON.parse(fs.readFileSync(o.from, 'utf8')) as BenchResult).capacity;
  }
  if (capacity === null) {
    console.log('soak: no --users or --from: finding the capacity first');
    capacity = (await searchCapacity(o)).capacity;
  }
  const users = Math.max(o.quick ? 10 : 100, Math.round(capacity * o.load));
  const windows = Math.max(3, Math.round((o.minutes * 60) / o.windowSeconds));
  console.log(
    `soak: ${users} users (${Math.round(o.load * 100)}% of ${capacity}) for ${windows} windows of ` +
      `${o.windowSeconds} s; ${machine()}`,
  );
  o.maxUsers = Math.max(users, o.quick ? 10 : 100);
  const started = new Date();
  const result = await withRealm(o, async (realm, clients, probe, live) => {
    live.label = () => `soak: ${users} users`;
    await clients.activate(users);
    await sleep(o.warmupSeconds * 1000);
    const steps: StepResult[] = [];
    const soak: SoakWindow[] = [];
    for (let w = 0; w < windows; w++) {
      live.label = () => `soak window ${w + 1}/${windows}: ${users} users`;
      const step = await measure(clients, probe, live, users, o.windowSeconds, o);
      steps.push(step);
      soak.push({
        window: w + 1,
        minutes: ((w + 1) * o.windowSeconds) / 60,
        requestP99: step.request.p99,
        deliveryP99: step.delivery.p99,
        rssMb: step.server.rssMb,
        heapMb: step.server.heapMb,
        errors: step.errors,
      });
    }
    const r: BenchResult = {
      scenario: 'soak',
      date: started.toISOString(),
      commit: commit(),
      machine: machineInfo(),
      settings: settingsOf(o, realm),
      objectives: o.objectives,
      metricsSource: probe.source,
      capacity,
      capacityNote: `soak at ${Math.round(o.load * 100)}% of ${capacity} users`,
      steps,
      series: live.series,
      soak: { users, windows: soak, drift: drift(soak) },
    };
    return r;
  });
  printSoakTable(result);
  const files = writeReport(result, o.out);
  console.log(`report: ${files.json}\n        ${files.html}`);
}

/** Last third against first third of the windows: p99s as ratios, memory as MB per hour. */
export function drift(ws: readonly SoakWindow[]): {
  requestP99Ratio: number;
  deliveryP99Ratio: number;
  heapMbPerHour: number;
  rssMbPerHour: number;
} {
  const third = Math.max(1, Math.floor(ws.length / 3));
  const first = ws.slice(0, third);
  const last = ws.slice(-third);
  const mean = (xs: number[]) => {
    const ok = xs.filter((x) => Number.isFinite(x));
    return ok.length ? ok.reduce((a, x) => a + x, 0) / ok.length : NaN;
  };
  const slope = (key: 'heapMb' | 'rssMb') => {
    // Least squares over every window, in MB per hour.
    const pts = ws.filter((w) => Number.isFinite(w[key]));
    if (pts.length < 2) return NaN;
    const mx = mean(pts.map((w) => w.minutes));
    const my = mean(pts.map((w) => w[key]));
    let num = 0;
    let den = 0;
    for (const w of pts) {
      num += (w.minutes - mx) * (w[key] - my);
      den += (w.minutes - mx) ** 2;
    }
    return den === 0 ? NaN : (num / den) * 60;
  };
  return {
    requestP99Ratio: mean(last.map((w) => w.requestP99)) / mean(first.map((w) => w.requestP99)),
    deliveryP99Ratio: mean(last.map((w) => w.deliveryP99)) / mean(first.map((w) => w.deliveryP99)),
    heapMbPerHour: slope('heapMb'),
    rssMbPerHour: slope('rssMb'),
  };
}
