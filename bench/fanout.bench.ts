/**
 * `npm run bench -- fanout`: commit-to-delivery latency of one event reaching every user.
 *
 * For N users (BENCH_USERS, default "1000,5000"), each with one registered queue held by a client
 * in a separate process (BENCH_CLIENT_PROCS processes, default 1: on this 2-core machine, one core
 * for the server and one for the clients; bench/lib/fanout-client.ts), one sender changes a realm
 * setting (the `realm.update_settings` command), which reaches every user as a
 * `realm` update_dict event. Latency is measured from the commit (the moment the realm actor
 * publishes, seen through the server's event tap) to each client's receipt, over BENCH_ROUNDS
 * rounds (default 10, after 2 warm-up rounds); p50/p99/max over all deliveries.
 *
 * The same clients then run against a bare uWebSockets.js server that only holds requests (or
 * sockets) and pushes a fixed payload of the same size, corked, in a setImmediate — the physical
 * limit of this stack on this machine. Both are run for long-polling and for WebSockets. Target
 * (issue #3): Confab's p99 within 2x the bare server's.
 *
 * Also: the server's heap per idle queue (10,000 queues registered and left idle; target < 10 KB).
 *
 * Confab runs as a default server, against the same run's bare server (issue 31's target: p99
 * within 1.5x).
 *
 * Other options (env): BENCH_MODES ("poll,ws"), BENCH_BARE=0 (skip the bare server),
 * BENCH_PROFILE=<dir> (CPU profiles of each phase's rounds, server side).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { EventQueues } from '../src/delivery/publisher.js';
import { capabilitiesFrom, type QueueSettings } from '../src/delivery/filter.js';
import { eventsResponseJson } from '../src/delivery/wire.js';
import {
  closeListenSocket,
  createBareApp,
  DISABLED_COMPRESSION,
  listen,
  type HttpResponse,
  type WebSocket,
} from '../src/http/uws.js';
import { doCreateRealm } from '../src/mutations/realms.js';
import { createServer, type ConfabServer } from '../src/server.js';
import { fmt, machine, summarize } from './lib/stats.js';
import { profiled } from './lib/profile.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type User = { email: string; api_key: string };
type Mode = 'poll' | 'ws';
type Summary = { n: number; p50: number; p90: number; p99: number; max: number };

async function until(cond: () => boolean, what: string, limitMs = 120_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Client processes, each given a slice of the users. */
class Clients {
  private readonly children: ChildProcess[] = [];
  private readonly roundWaiters = new Map<
    number,
    { left: number; arrivals: number[]; done: () => void }
  >();
  private failure: string | null = null;

  constructor(procs: number, mode: Mode, target: 'confab' | 'bare', port: number, users: User[]) {
    const per = Math.ceil(users.length / procs);
    for (let i = 0; i < procs; i++) {
      const slice = users.slice(i * per, (i + 1) * per);
      if (slice.length === 0) continue;
      // The clients are the instrument: each collects its garbage between rounds (gc(), before it
      // reports a round), with a young generation of the size the server runs with (npm start),
      // so that its own collections do not land inside a round (bench/lib/fanout-client.ts).
      const child = fork(path.join(here, 'lib', 'fanout-client.js'), [], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        execArgv: [...process.execArgv, '--expose-gc', '--min-semi-space-size=16'],
      });
      child.on(
        'message',
        (m: { type: string; round?: number; arrivals?: number[]; msg?: string }) =>
          this.onMessage(m),
      );
      child.send({ type: 'start', opts: { mode, target, port, users: slice } });
      this.children.push(child);
    }
  }

  private readyCount = 0;

  private onMessage(m: { type: string; round?: number; arrivals?: number[]; msg?: string }): void {
    if (m.type === 'ready') this.readyCount++;
    else if (m.type === 'error') this.failure = m.msg ?? 'client error';
    else if (m.type === 'round') {
      const w = this.roundWaiters.get(m.round!);
      if (!w) return;
      w.arrivals.push(...m.arrivals!);
      if (--w.left === 0) w.done();
    }
  }

  async ready(): Promise<void> {
    await until(() => {
      if (this.failure) throw new Error(this.failure);
      return this.readyCount === this.children.length;
    }, 'clients ready');
  }

  /** Resolves with every arrival time of round `r` (register before triggering the round). */
  round(r: number): Promise<number[]> {
    return new Promise((resolve, reject) => {
      const w = {
        left: this.children.length,
        arrivals: [] as number[],
        done: () => resolve(w.arrivals),
      };
      this.roundWaiters.set(r, w);
      const timer = setTimeout(
        () => reject(new Error(`round ${r} timed out (${this.failure ?? ''})`)),
        120_000,
      );
      const orig = w.done;
      w.done = () => {
        clearTimeout(timer);
        orig();
      };
    });
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            c.once('exit', () => resolve());
            c.send({ type: 'stop' });
          }),
      ),
    );
  }
}

/** Runs warm-up + measured rounds; returns the latency summary of the measured ones. */
async function runRounds(
  clients: Clients,
  rounds: number,
  trigger: (r: number) => Promise<number>,
  ready: () => boolean,
  profileName?: string,
): Promise<Summary> {
  await clients.ready();
  await until(ready, 'every client attached');
  const latencies: number[] = [];
  const WARMUP = 2;
  await profiled(profileName, async () => {
    for (let r = 1; r <= WARMUP + rounds; r++) {
      const arrivalsP = clients.round(r);
      const t0 = await trigger(r);
      const arrivals = await arrivalsP;
      if (r > WARMUP) for (const a of arrivals) latencies.push(a - t0);
      // Rounds are independent: the next starts once every client is back (re-polled, or
      // acknowledged on its socket) and the server has had a moment to settle.
      await until(ready, 'every client re-attached');
      await sleep(20);
    }
  });
  return summarize(latencies);
}

// ---- Confab -------------------------------------------------------------------------------------

type ConfabSetup = {
  server: ConfabServer;
  users: User[];
  dataDir: string;
  t0: () => number;
  realmId: number;
};

async function confabWithUsers(n: number): Promise<ConfabSetup> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-fanout-'));
  let t0 = 0;
  const server = await createServer({
    port: 0,
    dataDir,
    scryptN: 1024,
    rateLimits: null,
    heartbeatMs: 3_600_000,
    heartbeatJitterMs: 0,
    eventTap: (_realmId, events) => {
      if (events.some((e) => e.event.type === 'realm')) t0 = now();
    },
  });
  const owner = doCreateRealm(server.store, {
    name: 'Bench',
    string_id: '',
    owner_email: 'owner@bench.example',
    owner_full_name: 'Owner',
    owner_password_hash: null,
    owner_can_create_users: true,
    now: Math.floor(Date.now() / 1000),
  });
  server.context.realms.noteRealmCreated(owner.realm_id);
  const realm = server.context.realms.get(owner.realm_id)!;
  const users: User[] = [];
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const email = `user${i}@bench.example`;
    const r = await realm.ask('user.create', {
      acting_user_id: null,
      email,
      full_name: `User ${i}`,
      password_hash: null, // no password: created through the mutation, no hashing cost
      role: 400,
      welcome: null, // set-up, not measured: no Welcome Bot messages
    });
    users.push({ email, api_key: r.api_key });
  }
  console.log(
    `  created ${n} users through user.create in ${fmt((performance.now() - started) / 1000, 1)} s`,
  );
  return { server, users, dataDir, t0: () => t0, realmId: owner.realm_id };
}

async function confabPhase(
  s: ConfabSetup,
  mode: Mode,
  rounds: number,
  procs: number,
): Promise<Summary> {
  const queues = s.server.context.queues;
  for (const rt of queues.list()) queues.remove(rt);
  const realm = s.server.context.realms.get(s.realmId)!;
  const clients = new Clients(procs, mode, 'confab', s.server.port, s.users);
  const n = s.users.length;
  // Checked every 10 ms between rounds, in the server's process: every queue acknowledged (one
  // counter) before the walk over the 5,000 queues, whose garbage (about 2 MB a round when it ran
  // on every check) brought the server's next scavenge sooner, often into a burst.
  const ready =
    mode === 'poll'
      ? () => queues.consumers().waiting === n
      : () => queues.stats().entries === 0 && queues.consumers().streaming === n;
  try {
    return await runRounds(
      clients,
      rounds,
      async (r) => {
        await realm.ask('realm.update_settings', {
          acting_user_id: null,
          settings: { default_code_block_language: `r${r}` },
        });
        return s.t0();
      },
      ready,
      `confab-${mode}-${n}`,
    );
  } finally {
    await clients.stop();
  }
}

// ---- bare uWebSockets.js ---------------------------------------------------------------------------

function barePayload(r: number): string {
  return (
    '{"result":"success","msg":"","events":[{"type":"realm","op":"update_dict","property":"default",' +
    `"data":{"default_code_block_language":"r${r}"},"id":${r + 1}}]}`
  );
}

async function barePhase(n: number, mode: Mode, rounds: number, procs: number): Promise<Summary> {
  const app = createBareApp();
  let held: { res: HttpResponse; aborted: boolean }[] = [];
  const sockets = new Set<WebSocket<unknown>>();
  app.get('/poll', (res) => {
    const h = { res, aborted: false };
    res.onAborted(() => (h.aborted = true));
    held.push(h);
  });
  app.ws('/ws', {
    compression: DISABLED_COMPRESSION,
    maxBackpressure: 1024 * 1024,
    idleTimeout: 120,
    open: (ws) => void sockets.add(ws),
    close: (ws) => void sockets.delete(ws),
  });
  const { socket, port } = await listen(app, '127.0.0.1', 0);
  const users = Array.from({ length: n }, (_, i) => ({
    email: `user${i}@bench.example`,
    api_key: 'x',
  }));
  const clients = new Clients(procs, mode, 'bare', port, users);
  const trigger = (r: number): Promise<number> => {
    const payload = barePayload(r);
    const t0 = now();
    if (mode === 'poll') {
      const list = held;
      held = [];
      setImmediate(() => {
        for (const h of list) {
          if (h.aborted) continue;
          h.res.cork(() => {
            h.res
              .writeStatus('200 OK')
              .writeHeader('Content-Type', 'application/json')
              .end(payload);
          });
        }
      });
    } else {
      setImmediate(() => {
        for (const ws of sockets) ws.cork(() => void ws.send(payload, false));
      });
    }
    return Promise.resolve(t0);
  };
  const ready = mode === 'poll' ? () => held.length === n : () => sockets.size === n;
  try {
    return await runRounds(clients, rounds, trigger, ready, `bare-${mode}-${n}`);
  } finally {
    await clients.stop();
    closeListenSocket(socket);
  }
}

// ---- memory ------------------------------------------------------------------------------------

function gcFunction(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** Event queues on their own, with no heartbeat, expiry or sweep due within a bench. */
function benchQueues(): EventQueues {
  return new EventQueues({
    clock: Date.now,
    heartbeatMs: 3_600_000,
    heartbeatJitterMs: 0,
    queueIdleLifetimeMs: 3_600_000,
    queueSweepMs: 3_600_000,
  });
}

/** A registration of user `userId` of realm 1, every event type, as `changes` says otherwise. */
function queueSettings(userId: number, changes: Partial<QueueSettings> = {}): QueueSettings {
  return {
    userId,
    realmId: 1,
    eventTypes: null,
    applyMarkdown: true,
    clientExtAvatar: true,
    slimPresence: false,
    allPublicStreams: false,
    narrow: [],
    capabilities: capabilitiesFrom({}),
    lifespanMs: null,
    ...changes,
  };
}

/** Heap bytes per idle registered queue (queue, its actor, the registry's indexes). */
function queueMemory(count: number): number {
  const gc = gcFunction();
  const queues = benchQueues();
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < count; i++) {
    queues.register(
      queueSettings(i + 1, {
        capabilities: capabilitiesFrom({
          notification_settings_null: true,
          bulk_message_deletion: true,
        }),
      }),
    );
  }
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  const perQueue = (after - before) / count;
  if (queues.size !== count) throw new Error('queues vanished');
  queues.close();
  return perQueue;
}

/**
 * The queues' own share of a long-poll delivery, in this process (no HTTP): `count` queues each
 * hold a poll (a consumer as GET /events attaches: src/delivery/consumer.ts), one event is
 * published to all of them, the flush answers every poll (building its JSON) and each queue polls
 * again. Per queue, µs: holding a poll, the flush up to the last answer, and the whole flush; the
 * time from the publish to the first answer (ms); and, with `count` sockets attached instead, the
 * whole flush per socket (building each frame's JSON).
 */
async function queueCycle(
  count: number,
  rounds: number,
): Promise<{
  pollUs: number;
  lastAnswerUs: number;
  flushUs: number;
  firstAnswerMs: number;
  socketFlushUs: number;
}> {
  const queues = benchQueues();
  const handles = [];
  for (let i = 0; i < count; i++) {
    handles.push(
      queues.register(queueSettings(i + 1, { applyMarkdown: false, slimPresence: true })),
    );
  }
  const users = handles.map((rt) => rt.userId);
  const acked = new Map<(typeof handles)[number], number>();
  let first = 0;
  let last = 0;
  const sums = { poll: 0, lastAnswer: 0, flush: 0, firstAnswer: 0 };
  for (let r = -2; r < rounds; r++) {
    const polled = performance.now();
    for (const rt of handles) {
      queues.acknowledge(rt, acked.get(rt) ?? -1);
      queues.attach(rt, {
        kind: 'poll',
        dontBlock: false,
        deliver: (events) => {
          last = performance.now();
          if (first === 0) first = last;
          eventsResponseJson(events);
          if (events.length > 0) acked.set(rt, events[events.length - 1]!.id);
        },
      });
    }
    const published = performance.now();
    first = 0;
    queues.publish(1, [{ event: { type: 'note', n: r, pad: 'x'.repeat(300) }, users }]);
    const start = performance.now();
    await new Promise((resolve) => setImmediate(resolve));
    const end = performance.now();
    if (r < 0) continue; // warm-up
    sums.poll += published - polled;
    sums.firstAnswer += first - start;
    sums.lastAnswer += last - start;
    sums.flush += end - start;
  }
  // The same queues with a socket each: every flush sends each one a frame.
  let socketFlush = 0;
  for (const rt of handles) {
    queues.attach(rt, {
      kind: 'socket',
      deliver: (events) => {
        eventsResponseJson(events);
        acked.set(rt, events[events.length - 1]!.id);
      },
      close: () => {},
    });
  }
  for (let r = -2; r < rounds; r++) {
    for (const rt of handles) queues.acknowledge(rt, acked.get(rt) ?? -1);
    queues.publish(1, [{ event: { type: 'note', n: r, pad: 'x'.repeat(300) }, users }]);
    const start = performance.now();
    await new Promise((resolve) => setImmediate(resolve));
    if (r >= 0) socketFlush += performance.now() - start;
  }
  queues.close();
  const perQueueUs = (ms: number) => (ms * 1000) / rounds / count;
  return {
    pollUs: perQueueUs(sums.poll),
    lastAnswerUs: perQueueUs(sums.lastAnswer),
    flushUs: perQueueUs(sums.flush),
    firstAnswerMs: sums.firstAnswer / rounds,
    socketFlushUs: perQueueUs(socketFlush),
  };
}

// ---- main --------------------------------------------------------------------------------------

export async function fanoutBench(): Promise<void> {
  const sizes = (process.env.BENCH_USERS ?? '1000,5000').split(',').map(Number);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
  const procs = Number(process.env.BENCH_CLIENT_PROCS ?? 1);
  const modes = (process.env.BENCH_MODES ?? 'poll,ws').split(',') as Mode[];
  const withBare = process.env.BENCH_BARE !== '0';
  console.log(
    `fanout bench: ${machine()}, ${os.cpus().length} cores, ${procs} client processes, ${rounds} rounds (+2 warm-up)`,
  );
  const perQueue = queueMemory(10_000);
  console.log(`heap per idle queue: ${fmt(perQueue / 1024, 2)} KB (target < 10 KB)`);
  const cycle = await queueCycle(500, Number(process.env.BENCH_CYCLE_ROUNDS ?? 400));
  console.log(
    `queues' share of a long-poll delivery (500 queues, in process): hold a poll ` +
      `${fmt(cycle.pollUs, 2)} µs, fan-out to the last answer ${fmt(cycle.lastAnswerUs, 2)} µs, ` +
      `whole pass ${fmt(cycle.flushUs, 2)} µs per queue; first answer ` +
      `${fmt(cycle.firstAnswerMs, 2)} ms after the publish; to sockets instead, whole pass ` +
      `${fmt(cycle.socketFlushUs, 2)} µs per socket`,
  );

  const row = (name: string, s: Summary) =>
    `  ${name.padEnd(26)} p50 ${fmt(s.p50, 2).padStart(8)} ms   p99 ${fmt(s.p99, 2).padStart(8)} ms   max ${fmt(s.max, 2).padStart(8)} ms   (${s.n} deliveries)`;
  const results: Record<string, unknown>[] = [];
  for (const n of sizes) {
    console.log(`N = ${n}`);
    const bare = new Map<Mode, Summary>();
    {
      const setup = await confabWithUsers(n);
      const server = 'Confab';
      try {
        for (const mode of modes) {
          const confab = await confabPhase(setup, mode, rounds, procs);
          const label = mode === 'poll' ? 'long-poll' : 'WebSocket';
          if (!withBare) {
            console.log(row(`${server} ${label}`, confab));
            continue;
          }
          // The bare server once per size and mode, compared with each Confab of the run.
          let b = bare.get(mode);
          if (!b) {
            bare.set(mode, (b = await barePhase(n, mode, rounds, procs)));
            console.log(row(`bare uWS ${label}`, b));
          }
          console.log(row(`${server} ${label}`, confab));
          console.log(
            `  ratio ${server} / bare p99: ${fmt(confab.p99 / b.p99, 2)}x (target <= 1.5x)`,
          );
          results.push({ n, mode, confab, bare: b, ratio_p99: confab.p99 / b.p99 });
        }
      } finally {
        await setup.server.close();
        fs.rmSync(setup.dataDir, { recursive: true, force: true });
      }
    }
  }
  console.log(
    JSON.stringify({
      bench: 'fanout',
      date: new Date().toISOString(),
      procs,
      rounds,
      heap_per_queue_bytes: perQueue,
      queue_cycle: cycle,
      results,
    }),
  );
}
