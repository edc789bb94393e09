/**
 * The capacity bench's simulated users, in a process of their own (forked with an IPC channel;
 * bench/capacity.bench.ts runs several). Each active user behaves like a real client:
 *
 * - holds an event queue (bench/lib/queue-receiver.ts): a share over WebSockets, the rest
 *   long-polling, re-polling at once after every answer, heartbeats included (the server answers a
 *   held poll with a heartbeat after its heartbeat interval, as the reference does);
 * - reports presence every 60 s (divided by the time compression), at a phase of its own, as a
 *   modern client (`last_update_id` of its previous answer, `slim_presence`);
 * - and, as independent Poisson processes whose rates are the mix's per-user rates: sends channel
 *   messages (one of its channels) and direct messages, fetches the newest 50 messages of a
 *   channel, marks messages read, adds or removes reactions, sends typing notifications, uploads
 *   a small file and downloads one of the realm's files.
 *
 * Requests are open loop (bench/lib/open-loop.ts): each has a scheduled time and its latency is
 * counted from it, whether it waited for a free connection or not. Latencies go into HdrHistograms
 * (bench/lib/hdr.ts): per action over the step (sent to the parent encoded, merged there across
 * processes) and, for the time series, all requests and all deliveries per one-second interval.
 * The process also watches its own event-loop delay and CPU, so a bench whose client is the
 * bottleneck says so.
 *
 * Parent → child: {type:'start', opts}, {type:'add', users}, {type:'active', count},
 * {type:'mark'}, {type:'collect'}, {type:'stop'}.
 * Child → parent: {type:'ready'}, {type:'added'}, {type:'tick', tick}, {type:'step', step},
 * {type:'error', msg}.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  channelMessage,
  directMessage,
  fetchNewest,
  form,
  markRead,
  reaction,
  typingStart,
} from './chat-requests.js';
import { encode, newHistogram, recordMs, type Histogram } from './hdr.js';
import {
  HttpConn,
  httpRequest,
  now,
  numberField,
  setAcceptEncoding,
  skipBody,
  type BodyReader,
} from './http-conn.js';
import { ArrivalSchedule, rng } from './open-loop.js';
import { pollReceiver, socketReceiver, type ReceiverOpts } from './queue-receiver.js';
import { WindowProfiles } from './profile.js';

export type CapacityUser = {
  index: number;
  id: number;
  email: string;
  api_key: string;
  channels: number[];
};

/** Per-user rates of each activity, per (uncompressed) minute. */
export type Mix = Record<Activity, number>;
export const ACTIVITIES = [
  'send',
  'dm',
  'fetch',
  'flags',
  'react',
  'typing',
  'upload',
  'download',
] as const;
export type Activity = (typeof ACTIVITIES)[number];
/** What is timed: the activities, presence and register. */
export type Kind = Activity | 'presence' | 'register';
export const KINDS: readonly Kind[] = [...ACTIVITIES, 'presence', 'register'];

export type CapacityClientOpts = {
  port: number;
  proc: number;
  seed: number;
  /** Share of users whose queue is read over a WebSocket. */
  wsShare: number;
  /** Whether requests send `Accept-Encoding: gzip, deflate`, as real clients do. */
  gzip: boolean;
  /** Simulated time runs this many times faster than real time. */
  compress: number;
  mix: Mix;
  /** Files users download (`/user_uploads/...`). */
  downloads: string[];
  /** Every user id in the realm (direct-message partners). */
  dmPeers: number[];
  maxConnections: number;
  uploadBytes: number;
};

export type ClientTick = {
  proc: number;
  /** The interval's end (epoch ms). */
  at: number;
  requests: string;
  deliveries: string;
  done: number;
  errors: number;
  events: number;
  cpu: number;
  loopP99: number;
};

export type ClientStep = {
  proc: number;
  seconds: number;
  kinds: Record<Kind, { ok: number; errors: number; hist: string }>;
  deliveries: string;
  events: number;
  /** How late requests were written after their scheduled time (client-side queueing). */
  lateness: string;
  cpu: number;
  loopP99: number;
  errorSamples: string[];
  activeUsers: number;
  connections: number;
};

let opts: CapacityClientOpts;
let stopping = false;
const report = (m: unknown) => process.send?.(m);
const fail = (err: unknown) => {
  if (!stopping) report({ type: 'error', msg: String(err) });
};
let random: () => number = Math.random;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

// ---- figures --------------------------------------------------------------------------------------

type KindFigures = { ok: number; errors: number; hist: Histogram };
const freshKinds = () =>
  Object.fromEntries(KINDS.map((k) => [k, { ok: 0, errors: 0, hist: newHistogram() }])) as Record<
    Kind,
    KindFigures
  >;
let kinds = freshKinds();
const stepDeliveries = newHistogram();
const stepLateness = newHistogram();
let stepEvents = 0;
let errorSamples: string[] = [];
const tickRequests = newHistogram();
const tickDeliveries = newHistogram();
let tickDone = 0;
let tickErrors = 0;
let tickEvents = 0;
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const stepLoop = monitorEventLoopDelay({ resolution: 10 });
stepLoop.enable();
let tickCpu = process.cpuUsage();
let tickWall = performance.now();
let stepCpu = process.cpuUsage();
let stepWall = performance.now();

function recordRequest(kind: Kind, scheduled: number, status: number, at: number, body: string) {
  const f = kinds[kind];
  const ms = at - scheduled;
  const ok = status >= 200 && status < 300;
  if (ok) f.ok++;
  else {
    f.errors++;
    tickErrors++;
    if (errorSamples.length < 10) errorSamples.push(`${kind} ${status}: ${body.slice(0, 160)}`);
  }
  recordMs(f.hist, ms);
  recordMs(tickRequests, ms);
  tickDone++;
}

/** A receiver's connection failed (reset, refused, or closed mid-poll): one error of the step. */
function connectionError(err: unknown): void {
  kinds.register.errors++;
  tickErrors++;
  if (errorSamples.length < 10) errorSamples.push(`receiver: ${String(err)}`);
}

const MARKER = /"content":"t([0-9]+\.?[0-9]*)"/g;

function onEventsBody(body: string, arrived: number): number {
  MARKER.lastIndex = 0;
  for (let m = MARKER.exec(body); m; m = MARKER.exec(body)) {
    const ms = arrived - Number(m[1]);
    recordMs(stepDeliveries, ms);
    recordMs(tickDeliveries, ms);
  }
  const n = body.split('"type":').length - 1;
  stepEvents += n;
  tickEvents += n;
  const at = body.lastIndexOf('"id":');
  return at < 0 ? -1 : parseInt(body.slice(at + 5), 10);
}

// ---- users ----------------------------------------------------------------------------------------

type SimUser = CapacityUser & {
  ws: boolean;
  active: boolean;
  closers: (() => void)[];
  presenceId: number;
  /** Next scheduled presence report (epoch ms). */
  nextPresence: number;
};
const users: SimUser[] = [];
let activeList: SimUser[] = [];
/**
 * The active users by their next presence report, soonest first from `presenceHead`: a user who
 * reports goes to the back, which keeps the order, every user's interval being the same. (Looking
 * through every active user for due reports, every 2 ms, took a client process 12% of a core at
 * 2,500 users.)
 */
let presenceQueue: SimUser[] = [];
let presenceHead = 0;
/** Recent message ids per channel (from send answers), for reading and reacting. */
const recent = new Map<number, number[]>();
const reacted = new Set<string>();
const EMOJI = ['octopus', 'rocket', 'tada', 'heart', 'smiley'];
const TOPICS = ['lunch', 'release', 'design', 'incidents', 'random'];
const presenceIntervalMs = () => 60_000 / opts.compress;

async function activate(u: SimUser): Promise<void> {
  u.active = true;
  u.closers = [];
  const ro: ReceiverOpts = {
    port: opts.port,
    register: 'apply_markdown=false&client_gravatar=true&slim_presence=true',
    onBody: onEventsBody,
    // A dropped connection is an error of the step (the objective "no errors"), not the end of
    // the bench: the user's queue is left unread, as a client would until it registered again.
    onError: (err) => {
      if (u.active && !stopping) connectionError(err);
    },
    stopping: () => stopping || !u.active,
    closers: u.closers,
  };
  const t = now();
  try {
    await (u.ws ? socketReceiver : pollReceiver)(u, ro);
  } catch (err) {
    // Registering (or opening the socket) failed: an error of the step; the user stays idle.
    deactivate(u);
    connectionError(err);
    return;
  }
  recordRequest('register', t, 200, now(), '');
}

function deactivate(u: SimUser): void {
  u.active = false;
  for (const c of u.closers) c();
  u.closers = [];
}

// ---- requests -------------------------------------------------------------------------------------

type Pending = { kind: Kind; scheduled: number; build: () => Req };
/** `read`: what of a successful answer's body `then` gets (all of it as text by default). */
type Req = { data: string | Buffer; read?: BodyReader; then?: (body: string) => void };
const free: HttpConn[] = [];
let connections = 0;
const backlog: Pending[] = [];

function issue(p: Pending): void {
  let conn = free.pop();
  if (!conn) {
    if (connections >= opts.maxConnections) {
      backlog.push(p);
      return;
    }
    connections++;
    // The request in flight is answered with status 0 when the socket closes (counted there).
    conn = new HttpConn(opts.port, (err) => {
      if (!stopping && errorSamples.length < 10) errorSamples.push(`connection: ${String(err)}`);
    });
  }
  const c = conn;
  const written = now();
  recordMs(stepLateness, written - p.scheduled);
  const req = p.build();
  void c.request(req.data, req.read ?? null).then((r) => {
    if (!stopping) {
      recordRequest(p.kind, p.scheduled, r.status, r.at, r.body);
      if (r.status === 200) req.then?.(r.body);
    }
    const next = backlog.shift();
    free.push(c);
    if (next) issue(next);
  });
}

function remember(channel: number, body: string): void {
  const m = /"id":(\d+)/.exec(body);
  if (!m) return;
  const ids = recent.get(channel) ?? [];
  ids.push(Number(m[1]));
  if (ids.length > 50) ids.shift();
  recent.set(channel, ids);
}

let uploadBody: Buffer | null = null;
const PRESENCE_ID = numberField('presence_last_update_id');
const BOUNDARY = 'capacityboundary0123456789';

function build(kind: Kind, u: SimUser): Req {
  const channel = u.channels.length ? pick(u.channels) : 0;
  switch (kind) {
    case 'send':
      return {
        data: channelMessage(u, channel, pick(TOPICS), 't' + now().toFixed(3)),
        then: (body) => remember(channel, body),
      };
    case 'dm': {
      let other = pick(opts.dmPeers);
      if (other === u.id) other = opts.dmPeers[0] === u.id ? opts.dmPeers[1]! : opts.dmPeers[0]!;
      return { data: directMessage(u, other, 't' + now().toFixed(3)) };
    }
    case 'fetch':
      // (Answers no simulated user reads are not decoded: http-conn.ts BodyReader.)
      return { data: fetchNewest(u, channel, '&apply_markdown=false'), read: skipBody };
    case 'flags':
      return { data: markRead(u, (recent.get(channel) ?? []).slice(-20)) };
    case 'react': {
      const ids = recent.get(channel) ?? [];
      if (ids.length === 0) return build('typing', u);
      const message = pick(ids);
      const emoji = pick(EMOJI);
      const key = `${u.id}:${message}:${emoji}`;
      const remove = reacted.has(key);
      if (remove) reacted.delete(key);
      else reacted.add(key);
      return { data: reaction(u, message, emoji, remove) };
    }
    case 'typing':
      return { data: typingStart(u, channel, pick(TOPICS)) };
    case 'upload': {
      uploadBody ??= Buffer.concat([
        Buffer.from(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="photo.png"\r\n` +
            'Content-Type: image/png\r\n\r\n',
        ),
        Buffer.alloc(opts.uploadBytes, 0x5a),
        Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
      ]);
      const head = httpRequest('POST', '/api/v1/user_uploads', u).slice(0, -2);
      return {
        data: Buffer.concat([
          Buffer.from(
            head +
              `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
              `Content-Length: ${uploadBody.length}\r\n\r\n`,
          ),
          uploadBody,
        ]),
      };
    }
    case 'download':
      return { data: httpRequest('GET', pick(opts.downloads), u), read: skipBody };
    case 'presence': {
      const body = form({ status: 'active', slim_presence: 'true', last_update_id: u.presenceId });
      return {
        data: httpRequest('POST', '/api/v1/users/me/presence', u, body),
        read: PRESENCE_ID,
        then: (id) => {
          if (id !== '') u.presenceId = Number(id);
        },
      };
    }
    case 'register':
      throw new Error('register is not scheduled');
  }
}

// ---- the schedule ---------------------------------------------------------------------------------

let schedules: { kind: Activity; schedule: ArrivalSchedule }[] = [];

/** One Poisson process per activity for all active users together (their superposition). */
function reschedule(): void {
  const t = now();
  schedules = ACTIVITIES.filter((a) => opts.mix[a] > 0).map((kind) => ({
    kind,
    schedule: new ArrivalSchedule(
      (opts.mix[kind] * opts.compress * activeList.length) / 60,
      t,
      random,
    ),
  }));
}

function pump(): void {
  if (stopping) return;
  const t = now();
  if (activeList.length > 0) {
    for (const { kind, schedule } of schedules) {
      for (const at of schedule.due(t)) {
        const u = pick(activeList);
        issue({ kind, scheduled: at, build: () => build(kind, u) });
      }
    }
    while (presenceHead < presenceQueue.length && presenceQueue[presenceHead]!.nextPresence <= t) {
      const u = presenceQueue[presenceHead++]!;
      if (!u.active) continue;
      const at = u.nextPresence;
      u.nextPresence += presenceIntervalMs();
      presenceQueue.push(u);
      issue({ kind: 'presence', scheduled: at, build: () => build('presence', u) });
    }
    if (presenceHead > 4096 && presenceHead * 2 > presenceQueue.length) {
      presenceQueue = presenceQueue.slice(presenceHead);
      presenceHead = 0;
    }
  }
  setTimeout(pump, 2);
}

function sendTick(): void {
  const cpu = process.cpuUsage(tickCpu);
  const wall = performance.now() - tickWall;
  tickCpu = process.cpuUsage();
  tickWall = performance.now();
  const tick: ClientTick = {
    proc: opts.proc,
    at: now(),
    requests: encode(tickRequests),
    deliveries: encode(tickDeliveries),
    done: tickDone,
    errors: tickErrors,
    events: tickEvents,
    cpu: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    loopP99: loop.percentile(99) / 1e6,
  };
  loop.reset();
  tickRequests.reset();
  tickDeliveries.reset();
  tickDone = tickErrors = tickEvents = 0;
  report({ type: 'tick', tick });
}

function collect(): ClientStep {
  const cpu = process.cpuUsage(stepCpu);
  const wall = performance.now() - stepWall;
  const step: ClientStep = {
    proc: opts.proc,
    seconds: wall / 1000,
    kinds: Object.fromEntries(
      KINDS.map((k) => [
        k,
        { ok: kinds[k].ok, errors: kinds[k].errors, hist: encode(kinds[k].hist) },
      ]),
    ) as ClientStep['kinds'],
    deliveries: encode(stepDeliveries),
    events: stepEvents,
    lateness: encode(stepLateness),
    cpu: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    loopP99: stepLoop.percentile(99) / 1e6,
    errorSamples,
    activeUsers: activeList.length,
    connections,
  };
  return step;
}

function mark(): void {
  for (const k of KINDS) kinds[k].hist.destroy();
  kinds = freshKinds();
  stepDeliveries.reset();
  stepLateness.reset();
  stepEvents = 0;
  errorSamples = [];
  stepLoop.reset();
  stepCpu = process.cpuUsage();
  stepWall = performance.now();
}

async function setActive(count: number): Promise<void> {
  const want = users.filter((u) => u.index < count);
  const drop = users.filter((u) => u.index >= count && u.active);
  for (const u of drop) deactivate(u);
  const start = want.filter((u) => !u.active);
  // Register in small batches: hundreds of simultaneous registers are not what is measured.
  for (let i = 0; i < start.length; i += 25)
    await Promise.all(start.slice(i, i + 25).map(activate));
  // Presence starts when the step's traffic does, spread over one interval: a schedule begun at
  // registration would, after a long activation, owe several pings per user scheduled minutes ago
  // (measured from their scheduled times, they would swamp the step's latencies).
  const t = now();
  for (const u of start) if (u.active) u.nextPresence = t + random() * presenceIntervalMs();
  activeList = users.filter((u) => u.active);
  presenceQueue = activeList.slice().sort((a, b) => a.nextPresence - b.nextPresence);
  presenceHead = 0;
  reschedule();
}

type Message =
  | { type: 'start'; opts: CapacityClientOpts }
  | { type: 'add'; users: CapacityUser[] }
  | { type: 'active'; count: number }
  | { type: 'mark' }
  | { type: 'collect' }
  | { type: 'stop' };

/** BENCH_PROFILE=<dir>: each client process's CPU profile of each measured window goes there too. */
const profiles = new WindowProfiles();

process.on('message', (m: Message) => {
  const guard = (p: Promise<void>) => p.catch(fail);
  switch (m.type) {
    case 'start':
      opts = m.opts;
      setAcceptEncoding(opts.gzip ? 'gzip, deflate' : '');
      random = rng(opts.seed * 1000 + opts.proc);
      setInterval(sendTick, 1000).unref();
      pump();
      report({ type: 'ready' });
      break;
    case 'add':
      for (const u of m.users) {
        users.push({
          ...u,
          ws: random() < opts.wsShare,
          active: false,
          closers: [],
          presenceId: -1,
          nextPresence: Infinity,
        });
      }
      report({ type: 'added' });
      break;
    case 'active':
      void guard(
        setActive(m.count).then(() => {
          report({ type: 'activated' });
        }),
      );
      break;
    case 'mark':
      mark();
      void guard(profiles.start());
      report({ type: 'marked' });
      break;
    case 'collect':
      report({ type: 'step', step: collect() });
      void guard(profiles.stop(`client-${opts.proc}`));
      break;
    case 'stop':
      stopping = true;
      for (const u of users) if (u.active) deactivate(u);
      process.exit(0);
  }
});
