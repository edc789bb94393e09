/**
 * The messages bench's clients, in a process of their own (forked with an IPC channel):
 * `receivers` hold every subscriber's event queue by long-polling (or a WebSocket, `mode: 'ws'`)
 * over raw keep-alive connections; `senders` POST /messages over their own connections. One
 * process plays both roles (`both`, the default: on a 2-core machine, one core for the server and
 * one for the clients), or each role has its own.
 *
 * Each message's content is `t<send time>` (epoch ms with microseconds, taken just before the
 * request is written; comparable across processes on one host). Queues are registered with
 * `apply_markdown: false`, so every delivery carries that marker as its content: a delivery's
 * latency is its arrival time minus the marker. Bodies are scanned, not parsed.
 *
 * The latencies stay here: the bench's process is the server's, and half a million of them sent
 * to it after each phase (a JSON message of ~9 MB, parsed into arrays and sorted there) would be
 * garbage in the server's heap when the next phase begins; the percentiles are computed here, and
 * each delivery is kept in preallocated typed arrays, not in arrays that grow by copying.
 *
 * Parent → child: {type: 'start', opts}, {type: 'phase', phase} (senders),
 * {type: 'collect', from, to} (receivers: keeps the latencies of messages sent in [from, to] that
 * arrived since the last collection), {type: 'summary'} (receivers: their percentiles, then
 * forgets them), {type: 'waits'} (either role: this process's major page faults, blocks read
 * from disk and involuntary context switches so far, ./trace.ts `waits`), {type: 'stop'}.
 * Child → parent: {type: 'ready'}, {type: 'phase-done', result} (senders),
 * {type: 'collected', deliveries} (receivers: how many are kept), {type: 'summary', latency},
 * {type: 'waits', waits}, {type: 'error', msg}.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { basicAuth, HttpConn, now } from './http-conn.js';
import { pollReceiver, socketReceiver, type ReceiverOpts } from './queue-receiver.js';
import { summarize } from './stats.js';
import { GcLog, Trace, waits, type GcFigures } from './trace.js';

type User = { email: string; api_key: string };
type Opts = {
  role: 'receivers' | 'senders' | 'both';
  port: number;
  mode: 'poll' | 'ws';
  receivers: User[];
  sender: User;
  channelId: number;
  /** Connections of the closed-loop phase; the paced phase uses `pacedConnections`. */
  connections: number;
  pacedConnections: number;
};
export type Phase =
  /** Closed loop: each connection sends its next message when the previous one is answered. */
  | { kind: 'max'; durationMs: number; warmupMs: number }
  /** Open loop: one message every 1000/rate ms, on whichever connection is free. */
  | { kind: 'paced'; rate: number; durationMs: number; warmupMs: number };
export type SendResult = {
  sent: number;
  errors: number;
  seconds: number;
  /** Sends the pacer could not start because every connection was busy. */
  skipped: number;
  /** The measurement window (send times, epoch ms). */
  from: number;
  to: number;
  /**
   * This process's own event-loop delay over the window (ms, sampled every 5 ms): a stall here
   * delays the sends it paces and the deliveries it reads, and is the bench's, not the server's.
   */
  clientLoop: { p99: number; max: number };
  /** This process's CPU time (user and system, µs) over the window, and the sends answered in it. */
  clientCpu: { us: number; sends: number };
  /** This process's garbage collections that began in the window (a pause here is the bench's). */
  clientGc: GcFigures;
};

let opts: Opts;
/** BENCH_TIMELINE: this process's timeline, and each paced send's write and answer times. */
const trace = new Trace();
let answers: [sent: number, answered: number][] = [];
let collections = 0;
const gcLog = new GcLog();
const report = (m: unknown) => process.send?.(m);
let stopping = false;

// ---- receiving ----------------------------------------------------------------------------------

/** Numbers kept in chunks of typed arrays: appending never copies what is kept. */
class Column {
  private static readonly CHUNK = 1 << 16;
  private chunks: Float64Array[] = [];
  length = 0;

  push(x: number): void {
    const i = this.length % Column.CHUNK;
    if (i === 0) this.chunks.push(new Float64Array(Column.CHUNK));
    this.chunks[this.chunks.length - 1]![i] = x;
    this.length++;
  }

  at(i: number): number {
    return this.chunks[Math.floor(i / Column.CHUNK)]![i % Column.CHUNK]!;
  }

  /** What is kept, in one array. */
  all(): Float64Array {
    const out = new Float64Array(this.length);
    for (let i = 0; i < this.chunks.length; i++) {
      const c = this.chunks[i]!;
      const n = Math.min(Column.CHUNK, this.length - i * Column.CHUNK);
      out.set(n === Column.CHUNK ? c : c.subarray(0, n), i * Column.CHUNK);
    }
    return out;
  }

  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}

/** Every delivery since the last collection: the message's send time and its arrival. */
const sentTimes = new Column();
const arrivals = new Column();
/** The latencies of the phase being collected (ms). */
const latencies = new Column();

const MARKER = /"content":"t([0-9]+\.?[0-9]*)"/g;

function onEventsBody(body: string, arrived: number): number {
  MARKER.lastIndex = 0;
  for (let m = MARKER.exec(body); m; m = MARKER.exec(body)) {
    sentTimes.push(Number(m[1]));
    arrivals.push(arrived);
  }
  // The last event's id closes the body: `...,"id":N}]}`.
  const at = body.lastIndexOf('"id":');
  return at < 0 ? -1 : parseInt(body.slice(at + 5), 10);
}

const closers: (() => void)[] = [];
const auth = basicAuth;
const onSocketError = (err: unknown) => {
  if (!stopping) report({ type: 'error', msg: String(err) });
};

const receiver = (): ReceiverOpts => ({
  port: opts.port,
  register: 'event_types=%5B%22message%22%5D&apply_markdown=false',
  onBody: onEventsBody,
  onError: onSocketError,
  stopping: () => stopping,
  closers,
});

// ---- sending ------------------------------------------------------------------------------------

const senders: HttpConn[] = [];

function sendOne(conn: HttpConn): Promise<{ status: number; at: number }> {
  const content = 't' + now().toFixed(3);
  const body = `type=stream&to=${opts.channelId}&topic=bench&content=${content}`;
  return conn.request(
    `POST /api/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth(opts.sender)}\r\n` +
      `User-Agent: ConfabBench/1\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runPhase(phase: Phase): Promise<SendResult> {
  let sent = 0;
  let errors = 0;
  let skipped = 0;
  let measuring = false;
  let running = true;
  const start = now();
  const measureFrom = start + phase.warmupMs;
  const measureTo = measureFrom + phase.durationMs;
  const count = (status: number, sentAt: number) => {
    if (sentAt >= measureFrom && sentAt <= measureTo) {
      if (status === 200) sent++;
      else errors++;
    }
  };
  const loop = monitorEventLoopDelay({ resolution: 5 });
  gcLog.entries = [];
  let cpu0 = process.cpuUsage();
  let cpuUs = 0;
  setTimeout(() => {
    measuring = true;
    loop.enable();
    cpu0 = process.cpuUsage();
  }, phase.warmupMs);
  setTimeout(() => {
    running = false;
    loop.disable();
    const used = process.cpuUsage(cpu0);
    cpuUs = used.user + used.system;
  }, phase.warmupMs + phase.durationMs);

  if (phase.kind === 'max') {
    await Promise.all(
      senders.slice(0, opts.connections).map(async (conn) => {
        while (running) {
          const t = now();
          const r = await sendOne(conn);
          count(r.status, t);
        }
      }),
    );
  } else {
    const free = [...senders];
    const interval = 1000 / phase.rate;
    let next = now();
    while (running) {
      // Sleeps until the next send is due (a timer: up to a millisecond late, then the sends due
      // by then go at once). Waiting the last millisecond in a loop of setImmediate, as this did,
      // kept the process busy (~20% of a core at 600 sends/s) on a machine whose other core runs
      // the server under test.
      const wait = next - now();
      if (wait > 0) await sleep(wait);
      if (now() < next) continue;
      next += interval;
      const conn = free.pop();
      if (!conn) {
        if (measuring) skipped++;
        continue;
      }
      const t = now();
      void sendOne(conn).then((r) => {
        if (trace.on) answers.push([t, r.at]);
        count(r.status, t);
        free.push(conn);
      });
    }
    while (free.length < senders.length) await sleep(5);
  }
  return {
    sent,
    errors,
    seconds: phase.durationMs / 1000,
    skipped,
    from: measureFrom,
    to: measureTo,
    clientLoop: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
    clientCpu: { us: cpuUs, sends: sent + errors },
    clientGc: gcLog.figures(measureFrom, measureTo),
  };
}

function collect(from: number, to: number): { deliveries: number } {
  for (let i = 0; i < sentTimes.length; i++) {
    const t = sentTimes.at(i);
    if (t >= from && t <= to) latencies.push(arrivals.at(i) - t);
  }
  if (trace.on && sentTimes.length > 0) {
    trace.write(`client-${Math.round(from)}-${++collections}`, {
      from,
      to,
      sentTimes: [...sentTimes.all()],
      arrivals: [...arrivals.all()],
      answers,
    });
    answers = [];
  }
  sentTimes.clear();
  arrivals.clear();
  return { deliveries: latencies.length };
}

async function main(): Promise<void> {
  if (opts.role !== 'senders') {
    const start = opts.mode === 'ws' ? socketReceiver : pollReceiver;
    await Promise.all(opts.receivers.map((u) => start(u, receiver())));
  }
  if (opts.role !== 'receivers') {
    for (let i = 0; i < Math.max(opts.connections, opts.pacedConnections); i++) {
      const c = new HttpConn(opts.port, onSocketError);
      closers.push(() => c.close());
      await c.connected();
      senders.push(c);
    }
  }
  gcLog.start();
  trace.start();
  report({ type: 'ready' });
}

process.on(
  'message',
  (m: { type: string; opts?: Opts; phase?: Phase; from?: number; to?: number }) => {
    if (m.type === 'start' && m.opts) {
      opts = m.opts;
      main().catch((err: unknown) => {
        report({ type: 'error', msg: String(err) });
        process.exit(1);
      });
    } else if (m.type === 'phase' && m.phase) {
      runPhase(m.phase).then(
        (result) => report({ type: 'phase-done', result }),
        (err: unknown) => report({ type: 'error', msg: String(err) }),
      );
    } else if (m.type === 'collect') {
      report({ type: 'collected', ...collect(m.from!, m.to!) });
    } else if (m.type === 'summary') {
      report({ type: 'summary', latency: summarize(latencies.all()) });
      latencies.clear();
    } else if (m.type === 'waits') {
      report({ type: 'waits', waits: waits() });
    } else if (m.type === 'stop') {
      stopping = true;
      for (const c of closers) c();
      process.exit(0);
    }
  },
);
