/**
 * `npm run bench -- presence`: BENCH_USERS users (default 2000) each POST /users/me/presence once
 * per simulated minute, the minute compressed into a burst (BENCH_CONNECTIONS keep-alive
 * connections, default 64, from a separate client process). The server's presence clock is the
 * bench's, moved between bursts:
 *
 * 1. first contact: every user's first report (`ping_only`) — each is a new presence;
 * 2. a minute later: modern clients (`last_update_id` from their previous answer) — every active
 *    user's `last_active_time` moves, and each answer carries what changed since that client's
 *    last fetch;
 * 3. 30 s later (a second window of the same users): nothing stored changes.
 *
 * Prints requests/s, p50/p99, answer bytes and the `presence` events emitted for each burst (with
 * the default event limit of 100 users, and again with the limit lifted so the first-contact
 * events are counted), then the cost of writing the changed rows: one batched transaction (what
 * the server does) against one transaction per report (the alternative).
 *
 * Then presence at scale (BENCH_SCALE, default "1000,4000,16000" realm members; BENCH_ACTIVE,
 * default 500, of them active): every member has a presence from a day ago (offline), the active
 * users report twice a minute apart as modern clients, and the second burst's server CPU per
 * report and answer size are printed. The work a report requires is its answer (the presences
 * changed since that client's last fetch: here the active users'), so with a fixed number of
 * active users the cost per report should not grow with the realm.
 */
import { realmPresence } from '../src/queries/presence.js';
import type { PresenceRow } from '../src/storage/presence.js';
import { runChild } from './lib/child.js';
import { serverWithUsers } from './lib/seed.js';
import { fmt, machine } from './lib/stats.js';

type Result = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  bytes: number;
  lastIds: number[];
};

async function scenario(nUsers: number, connections: number, eventLimit: number): Promise<void> {
  const clock = { ms: Math.floor(Date.now() / 1000) * 1000 };
  let presenceEvents = 0;
  const bench = await serverWithUsers(nUsers, 'presence', {
    server: {
      clock: () => clock.ms,
      presenceEventUserLimit: eventLimit,
      presenceFlushMs: 3_600_000, // flushed by the bench below, to time it
      eventTap: (_realm, batch) => {
        for (const e of batch) if (e.event.type === 'presence') presenceEvents++;
      },
    },
  });
  const { server, users } = bench;
  try {
    const { realms } = server.context;
    const store = server.store;
    const rt = realms.get(bench.realmId)!;
    console.log(
      `presence: ${nUsers} users, ${connections} connections, event limit ${eventLimit} users (${machine()})`,
    );
    let lastIds: number[] | undefined;
    const burst = async (label: string, mode: 'modern' | 'ping_only') => {
      const before = presenceEvents;
      const r = await runChild<Result>(
        'presence-client.js',
        {
          port: server.port,
          users: users.length,
          connections,
          mode,
          ...(lastIds ? { lastIds } : {}),
        },
        120_000,
      );
      lastIds = r.lastIds;
      console.log(
        `  ${label.padEnd(38)} ${fmt(r.rps, 0).padStart(6)} req/s   p50 ${fmt(r.p50, 2)} ms   p99 ${fmt(r.p99, 2)} ms   ` +
          `${fmt(r.bytes / r.requests / 1024, 1)} KiB/answer   events ${presenceEvents - before}   errors ${r.errors}`,
      );
    };
    await burst('first contact (ping_only)', 'ping_only');
    clock.ms += 60_000;
    await burst('a minute later (last_update_id)', 'modern');
    clock.ms += 30_000;
    await burst('30 s later, second window', 'modern');

    // Writing the changed rows: one batch (the server's way) ...
    const t0 = performance.now();
    const flushed = await rt.ask('presence.flush', {});
    const batchMs = performance.now() - t0;
    // ... against one transaction per report (the same rows again).
    const rows: PresenceRow[] = store.presence.byRealm(bench.realmId);
    const t1 = performance.now();
    for (const row of rows) store.transaction(() => store.presence.upsertMany([row]));
    const eachMs = performance.now() - t1;
    console.log(
      `  write ${flushed.written} changed presences: one transaction ${fmt(batchMs, 1)} ms; ` +
        `one per report ${fmt(eachMs, 1)} ms (${fmt(rows.length / (eachMs / 1000), 0)} reports/s at most)`,
    );
  } finally {
    await bench.close();
  }
}

/** Server CPU per modern report when `active` of `members` users are online (see the header). */
async function scaling(members: number, active: number, connections: number): Promise<void> {
  const clock = { ms: Math.floor(Date.now() / 1000) * 1000 };
  const bench = await serverWithUsers(members, 'presence-scale', {
    server: { clock: () => clock.ms, presenceFlushMs: 3_600_000 },
  });
  try {
    const { server, users } = bench;
    const rt = server.context.realms.get(bench.realmId)!;
    const presence = realmPresence(server.context.store, rt.view);
    const dayAgo = Math.floor(clock.ms / 1000) - 86_400;
    for (const u of users) {
      presence.put(u.id, {
        last_active_time: dayAgo,
        last_connected_time: dayAgo,
        last_update_id: 0,
      });
    }
    let lastIds: number[] | undefined;
    const burst = async () => {
      const cpu0 = process.cpuUsage();
      const r = await runChild<Result>(
        'presence-client.js',
        {
          port: server.port,
          users: active,
          connections,
          mode: 'modern',
          ...(lastIds ? { lastIds } : {}),
        },
        120_000,
      );
      const cpu = process.cpuUsage(cpu0);
      lastIds = r.lastIds;
      return { r, cpuUs: (cpu.user + cpu.system) / r.requests };
    };
    await burst(); // first fetch: each client gets the whole realm's recent presence
    clock.ms += 60_000;
    const { r, cpuUs } = await burst();
    console.log(
      `  ${String(members).padStart(6)} members, ${active} active: ${fmt(cpuUs, 0).padStart(6)} µs ` +
        `server CPU per report, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms, ` +
        `${fmt(r.bytes / r.requests / 1024, 1)} KiB/answer, errors ${r.errors}`,
    );
  } finally {
    await bench.close();
  }
}

export async function presenceBench(): Promise<void> {
  const nUsers = Number(process.env.BENCH_USERS ?? 2000);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
  await scenario(nUsers, connections, 100);
  await scenario(nUsers, connections, nUsers + 1);
  const active = Number(process.env.BENCH_ACTIVE ?? 500);
  const sizes = (process.env.BENCH_SCALE ?? '1000,4000,16000').split(',').map(Number);
  console.log(`presence at scale: ${active} active users, realms of ${sizes.join(', ')} members`);
  for (const members of sizes) await scaling(Math.max(members, active), active, connections);
}
