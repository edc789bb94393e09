/**
 * The load harness's clients, in a process of their own (forked with an IPC channel; see
 * bench/load.bench.ts). Every user holds an event queue — a share of them over WebSockets, the
 * rest long-polling — and a pool of connections plays the users' actions at a paced, open-loop
 * rate: each tick picks a user and an action by the mix's weights and sends it on a free
 * connection (a tick with no free connection is counted as skipped, never queued, so a slow
 * server shows up as latency and skips rather than as a slower offered rate).
 *
 * Actions: `send` (a message to one of the user's channels, one of five topics), `dm` (a direct
 * message to another user), `fetch` (GET /messages: the newest 50 of one of the user's channels),
 * `read` (POST /messages/flags: mark the channel's latest messages read), `react` (add a reaction
 * to a recent message, or remove it if this user added it) and `typing` (channel typing start).
 * Message content is `t<send time>` and queues use `apply_markdown: false`, so each delivery of a
 * message event carries its send time: delivery latency = arrival − send time.
 *
 * Parent → child: {type: 'start', opts}, {type: 'phase', phase}, {type: 'stop'}.
 * Child → parent: {type: 'ready'}, {type: 'phase-done', result}, {type: 'error', msg}.
 */
import {
  channelMessage,
  directMessage,
  fetchNewest,
  markRead,
  reaction,
  typingStart,
} from './chat-requests.js';
import { HttpConn, now, type HttpAnswer } from './http-conn.js';
import { rng } from './open-loop.js';
import { pollReceiver, socketReceiver, type ReceiverOpts } from './queue-receiver.js';

export type LoadUser = { id: number; email: string; api_key: string; channels: number[] };
export type Action = 'send' | 'dm' | 'fetch' | 'read' | 'react' | 'typing';
export const ACTIONS: readonly Action[] = ['send', 'dm', 'fetch', 'read', 'react', 'typing'];

export type LoadOpts = {
  port: number;
  users: LoadUser[];
  /** Share of users whose queue is read over a WebSocket (the rest long-poll). */
  wsShare: number;
  connections: number;
  mix: Record<Action, number>;
  seed: number;
};
export type LoadPhase = { rate: number; durationMs: number; warmupMs: number };
export type ActionFigures = { ok: number; refused: number; failed: number; latencies: number[] };
export type LoadResult = {
  offered: number;
  skipped: number;
  seconds: number;
  actions: Record<Action, ActionFigures>;
  /** Message-event deliveries of messages sent in the measured window. */
  deliveries: number[];
  /** Events of every kind received in the window. */
  events: number;
};

let opts: LoadOpts;
let stopping = false;
const report = (m: unknown) => process.send?.(m);
const fail = (err: unknown) => {
  if (!stopping) report({ type: 'error', msg: String(err) });
};
const closers: (() => void)[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let random: () => number = Math.random;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

// ---- receiving ----------------------------------------------------------------------------------

let window = { from: Infinity, to: -Infinity };
let deliveries: number[] = [];
let eventCount = 0;

const MARKER = /"content":"t([0-9]+\.?[0-9]*)"/g;

function onEventsBody(body: string, arrived: number): number {
  MARKER.lastIndex = 0;
  for (let m = MARKER.exec(body); m; m = MARKER.exec(body)) {
    const sent = Number(m[1]);
    if (sent >= window.from && sent <= window.to) deliveries.push(arrived - sent);
  }
  if (arrived >= window.from) eventCount += body.split('"type":').length - 1;
  const at = body.lastIndexOf('"id":');
  return at < 0 ? -1 : parseInt(body.slice(at + 5), 10);
}

// ---- acting -------------------------------------------------------------------------------------

/** Recent message ids per channel (from send answers), for reading and reacting. */
const recent = new Map<number, number[]>();
const RECENT = 50;
/** Reactions this client added and has not removed: `user:message:emoji`. */
const reacted = new Set<string>();
const EMOJI = ['octopus', 'rocket', 'tada', 'heart', 'smiley', 'laughing'];
const TOPICS = ['lunch', 'release', 'design', 'incidents', 'random'];

function remember(channel: number, body: string): void {
  const m = /"id":(\d+)/.exec(body);
  if (!m) return;
  const ids = recent.get(channel) ?? [];
  ids.push(Number(m[1]));
  if (ids.length > RECENT) ids.shift();
  recent.set(channel, ids);
}

/** Plays one action; answers the HTTP result and a follow-up to run on success. */
function act(action: Action, u: LoadUser): { req: string; then?: (r: HttpAnswer) => void } {
  const channel = pick(u.channels);
  switch (action) {
    case 'send':
      return {
        req: channelMessage(u, channel, pick(TOPICS), 't' + now().toFixed(3)),
        then: (r) => remember(channel, r.body),
      };
    case 'dm': {
      let other = pick(opts.users);
      if (other.id === u.id)
        other = opts.users[(opts.users.indexOf(other) + 1) % opts.users.length]!;
      return { req: directMessage(u, other.id, 't' + now().toFixed(3)) };
    }
    case 'fetch':
      return { req: fetchNewest(u, channel) };
    case 'read':
      return { req: markRead(u, (recent.get(channel) ?? []).slice(-20)) };
    case 'react': {
      const ids = recent.get(channel) ?? [];
      if (ids.length === 0) return act('send', u);
      const message = pick(ids);
      const emoji = pick(EMOJI);
      const key = `${u.id}:${message}:${emoji}`;
      const remove = reacted.has(key);
      return {
        req: reaction(u, message, emoji, remove),
        then: () => (remove ? reacted.delete(key) : reacted.add(key)),
      };
    }
    case 'typing':
      return { req: typingStart(u, channel, pick(TOPICS)) };
  }
}

const pool: HttpConn[] = [];

function chooser(): () => Action {
  const total = ACTIONS.reduce((s, a) => s + opts.mix[a], 0);
  return () => {
    let x = random() * total;
    for (const a of ACTIONS) {
      x -= opts.mix[a];
      if (x < 0) return a;
    }
    return 'send';
  };
}

async function runPhase(phase: LoadPhase): Promise<LoadResult> {
  const actions = Object.fromEntries(
    ACTIONS.map((a) => [a, { ok: 0, refused: 0, failed: 0, latencies: [] as number[] }]),
  ) as Record<Action, ActionFigures>;
  const start = now();
  const from = start + phase.warmupMs;
  const to = from + phase.durationMs;
  window = { from, to };
  deliveries = [];
  eventCount = 0;
  let offered = 0;
  let skipped = 0;
  const choose = chooser();
  const free = [...pool];
  const interval = 1000 / phase.rate;
  let next = now();
  while (now() < to) {
    // Sleeps until the next action is due (a timer may be a millisecond late; the actions due by
    // then go at once). Spinning the last millisecond in setImmediate kept a core busy.
    const wait = next - now();
    if (wait > 0) await sleep(wait);
    if (now() < next) continue;
    next += interval;
    const measured = next >= from && next <= to;
    const conn = free.pop();
    if (!conn) {
      if (measured) skipped++;
      continue;
    }
    const action = choose();
    const { req, then } = act(action, pick(opts.users));
    const sentAt = now();
    if (measured) offered++;
    void conn.request(req).then((r) => {
      free.push(conn);
      if (r.status === 200) then?.(r);
      if (!measured) return;
      const f = actions[action];
      if (r.status === 200) f.ok++;
      else if (r.status >= 400 && r.status < 500) f.refused++;
      else f.failed++;
      f.latencies.push(r.at - sentAt);
    });
  }
  while (free.length < pool.length) await sleep(5);
  await sleep(300); // the last deliveries
  return {
    offered,
    skipped,
    seconds: phase.durationMs / 1000,
    actions,
    deliveries,
    events: eventCount,
  };
}

async function main(): Promise<void> {
  random = rng(opts.seed);
  const receiver: ReceiverOpts = {
    port: opts.port,
    register: 'apply_markdown=false&client_gravatar=true',
    onBody: onEventsBody,
    onError: fail,
    stopping: () => stopping,
    closers,
  };
  const wsCount = Math.round(opts.users.length * opts.wsShare);
  // Register in small batches: hundreds of simultaneous registers are not what is measured.
  for (let i = 0; i < opts.users.length; i += 20) {
    await Promise.all(
      opts.users
        .slice(i, i + 20)
        .map((u, k) => (i + k < wsCount ? socketReceiver : pollReceiver)(u, receiver)),
    );
  }
  for (let i = 0; i < opts.connections; i++) {
    const c = new HttpConn(opts.port, fail);
    closers.push(() => c.close());
    await c.connected();
    pool.push(c);
  }
  report({ type: 'ready' });
}

process.on('message', (m: { type: string; opts?: LoadOpts; phase?: LoadPhase }) => {
  if (m.type === 'start' && m.opts) {
    opts = m.opts;
    main().catch((err: unknown) => {
      fail(err);
      process.exit(1);
    });
  } else if (m.type === 'phase' && m.phase) {
    runPhase(m.phase).then((result) => report({ type: 'phase-done', result }), fail);
  } else if (m.type === 'stop') {
    stopping = true;
    for (const c of closers) c();
    process.exit(0);
  }
});
