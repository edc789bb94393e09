/**
 * `npm run bench -- load`: the load harness. A realm of LOAD_USERS users in LOAD_CHANNELS public
 * channels (each user in LOAD_CHANNELS_PER_USER of them), LOAD_HISTORY messages of history, every
 * user holding an event queue (LOAD_WS_SHARE of them over WebSockets, the rest long-polling), and
 * a client process (bench/lib/load-client.ts) playing a mix of what chat users do — send, direct
 * message, fetch, mark read, react, type — at each offered rate of LOAD_RATES (actions/s, open
 * loop) for LOAD_SECONDS each.
 *
 * For each rate it prints what was done (actions/s, refused = 4xx, failed = 5xx or dropped
 * connections, skipped = ticks when all LOAD_CONNECTIONS were busy), each action's latency
 * (p50/p99), the delivery latency of message events (send → a recipient's client reads it; every
 * delivery counted), events delivered per second, and the server's cost: CPU (% of one core),
 * event-loop delay p99 and resident memory. The rate where skips appear or p99s climb is the
 * server's capacity for this mix on this machine.
 *
 * Options (env): LOAD_USERS (500), LOAD_CHANNELS (25), LOAD_CHANNELS_PER_USER (5),
 * LOAD_HISTORY (20000), LOAD_RATES ("100,200,400,800"), LOAD_SECONDS (10), LOAD_WS_SHARE (0.5),
 * LOAD_CONNECTIONS (32), LOAD_MIX ("send=30,dm=10,fetch=25,read=20,react=10,typing=5"),
 * LOAD_SEED (1).
 */
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ClientProcess } from './lib/client-process.js';
import {
  ACTIONS,
  type Action,
  type LoadOpts,
  type LoadResult,
  type LoadUser,
} from './lib/load-client.js';
import { createChannel, serverWithUsers, type BenchServer } from './lib/seed.js';
import { fmt, machine, summarize } from './lib/stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));

function envInt(name: string, dflt: number): number {
  const v = process.env[name];
  const n = v === undefined ? dflt : Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
}

function parseMix(spec: string): Record<Action, number> {
  const mix = Object.fromEntries(ACTIONS.map((a) => [a, 0])) as Record<Action, number>;
  for (const part of spec.split(',')) {
    const [name, weight] = part.split('=');
    if (!ACTIONS.includes(name as Action) || !Number.isFinite(Number(weight))) {
      throw new Error(`LOAD_MIX: "${part}" is not <${ACTIONS.join('|')}>=<weight>`);
    }
    mix[name as Action] = Number(weight);
  }
  return mix;
}

/** History: `total` messages spread over the channels, received (and read) by each subscriber. */
function seedHistory(b: BenchServer, channels: { id: number; members: number[] }[], total: number) {
  const store = b.server.store;
  const date = Math.floor(Date.now() / 1000) - 86_400;
  const CHUNK = 5_000;
  for (let start = 0; start < total; start += CHUNK) {
    store.transaction(() => {
      for (let i = start; i < Math.min(total, start + CHUNK); i++) {
        const ch = channels[i % channels.length]!;
        const content = `history message ${i}`;
        const topic = `topic ${i % 7}`;
        const id = store.messages.insert({
          realm_id: b.realmId,
          sender_id: ch.members[i % ch.members.length]!,
          stream_id: ch.id,
          dm_group_id: null,
          topic,
          content,
          rendered_content: `<p>${content}</p>`,
          date_sent: date,
          has_attachment: 0,
          has_image: 0,
          has_link: 0,
          sending_client: 'seed',
        });
        store.messages.insertUserMessages(
          id,
          ch.members,
          ch.members.map(() => 1),
        );
        store.messages.index(id, topic, content);
      }
    });
  }
}

type Row = {
  rate: number;
  done: number;
  refused: number;
  failed: number;
  skipped: number;
  actions: Record<Action, { n: number; p50: number; p99: number }>;
  delivery: { n: number; p50: number; p99: number; max: number };
  eventsPerSecond: number;
  cpu: number;
  loopDelayP99: number;
  rssMb: number;
};

export async function loadBench(): Promise<void> {
  const nUsers = envInt('LOAD_USERS', 500);
  const nChannels = envInt('LOAD_CHANNELS', 25);
  const perUser = Math.min(envInt('LOAD_CHANNELS_PER_USER', 5), nChannels);
  const history = envInt('LOAD_HISTORY', 20_000);
  const seconds = envInt('LOAD_SECONDS', 10);
  const wsShare = Number(process.env.LOAD_WS_SHARE ?? 0.5);
  const connections = envInt('LOAD_CONNECTIONS', 32);
  const rates = (process.env.LOAD_RATES ?? '100,200,400,800').split(',').map(Number);
  const mix = parseMix(process.env.LOAD_MIX ?? 'send=30,dm=10,fetch=25,read=20,react=10,typing=5');
  const seed = envInt('LOAD_SEED', 1);
  console.log(
    `load bench: ${nUsers} users, ${nChannels} channels (${perUser} per user), ${history} ` +
      `messages of history, ${Math.round(wsShare * 100)}% WebSocket queues, ${connections} ` +
      `connections, mix ${ACTIONS.map((a) => `${a}=${mix[a]}`).join(',')}, ${seconds} s per ` +
      `rate; ${machine()}`,
  );

  const b = await serverWithUsers(nUsers, 'load');
  const client = new ClientProcess(path.join(here, 'lib', 'load-client.js'));
  try {
    const t0 = performance.now();
    // User i is in channels i, i + step, i + 2·step, … (mod nChannels): every channel gets about
    // nUsers · perUser / nChannels members, and users share channels in overlapping groups.
    const step = Math.max(1, Math.floor(nChannels / perUser));
    const memberships = b.users.map((_, i) =>
      Array.from({ length: perUser }, (_, k) => (i + k * step) % nChannels),
    );
    const channels: { id: number; members: number[] }[] = [];
    for (let c = 0; c < nChannels; c++) {
      const members = b.users.filter((_, i) => memberships[i]!.includes(c)).map((u) => u.id);
      const id = await createChannel(b.server, b.realmId, members[0]!, `channel ${c}`, members);
      channels.push({ id, members });
    }
    seedHistory(b, channels, history);
    const users: LoadUser[] = b.users.map((u, i) => ({
      ...u,
      channels: memberships[i]!.map((c) => channels[c]!.id),
    }));
    const opts: LoadOpts = { port: b.server.port, users, wsShare, connections, mix, seed };
    await client.request({ type: 'start', opts }, 'the clients to register', 300_000);
    console.log(`seeded and registered in ${fmt((performance.now() - t0) / 1000, 1)} s`);

    const rows: Row[] = [];
    for (const rate of rates) {
      const loop = monitorEventLoopDelay({ resolution: 5 });
      const warmupMs = 1000;
      const phase = { rate, durationMs: seconds * 1000, warmupMs };
      const done = client.request(
        { type: 'phase', phase },
        `rate ${rate}`,
        seconds * 1000 + 60_000,
      );
      // Server-side figures over the measured window only.
      await new Promise((r) => setTimeout(r, warmupMs));
      const cpu0 = process.cpuUsage();
      const wall0 = performance.now();
      loop.enable();
      const result = (await done).result as LoadResult;
      loop.disable();
      const cpu = process.cpuUsage(cpu0);
      const wall = performance.now() - wall0;
      const row: Row = {
        rate,
        done: 0,
        refused: 0,
        failed: 0,
        skipped: result.skipped,
        actions: {} as Row['actions'],
        delivery: summarize(result.deliveries),
        eventsPerSecond: result.events / result.seconds,
        cpu: ((cpu.user + cpu.system) / 1000 / wall) * 100,
        loopDelayP99: loop.percentile(99) / 1e6,
        rssMb: process.memoryUsage().rss / 2 ** 20,
      };
      for (const a of ACTIONS) {
        const f = result.actions[a];
        row.done += f.ok;
        row.refused += f.refused;
        row.failed += f.failed;
        const s = summarize(f.latencies);
        row.actions[a] = { n: s.n, p50: s.p50, p99: s.p99 };
      }
      rows.push(row);
      printRow(row, result.seconds);
    }
    console.log(
      JSON.stringify({
        bench: 'load',
        date: new Date().toISOString(),
        machine: machine(),
        users: nUsers,
        channels: nChannels,
        perUser,
        history,
        wsShare,
        connections,
        mix,
        seconds,
        rows,
      }),
    );
  } finally {
    await client.stop();
    await b.close();
  }
}

function printRow(r: Row, seconds: number): void {
  const lat = ACTIONS.filter((a) => r.actions[a].n > 0)
    .map((a) => `${a} ${fmt(r.actions[a].p50, 1)}/${fmt(r.actions[a].p99, 1)}`)
    .join('  ');
  console.log(
    `offered ${r.rate}/s: done ${fmt(r.done / seconds, 0)}/s (refused ${r.refused}, failed ` +
      `${r.failed}, skipped ${r.skipped}) | p50/p99 ms: ${lat} | delivery ${fmt(r.delivery.p50, 1)}/` +
      `${fmt(r.delivery.p99, 1)} (${r.delivery.n}) | ${fmt(r.eventsPerSecond, 0)} events/s | ` +
      `server CPU ${fmt(r.cpu, 0)}%, loop delay p99 ${fmt(r.loopDelayP99, 1)} ms, RSS ` +
      `${fmt(r.rssMb, 0)} MB`,
  );
}
