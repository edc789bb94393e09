/**
 * `npm run bench -- memory`: issue 29's memory scenario. 60 users each hold 100 event queues that
 * nobody reads (6,000 queues, registered over HTTP as clients do), then 10,000 messages go to a
 * channel all of them are in: every message is an event in every queue, far more than the queue
 * memory budget (QUEUE_MEMORY_BUDGET_MB, 1 GiB by default) holds, so the server discards queues to
 * stay under it. Reported: the process's RSS before the messages (the baseline) and at its peak,
 * the budget's estimate of what the queues hold beside it, and whether the peak stays within
 * (budget + baseline) × 1.25 — the issue's bound. Also what one queue entry really costs (the
 * heap after a full GC, over the entries held), against the estimate's figure.
 *
 * Options (environment): BENCH_USERS (60), BENCH_QUEUES (per user, 100), BENCH_MESSAGES
 * (10,000), BENCH_BUDGET_MB (1024). `--quick`: 10 users, 20 queues each, 1,500 messages, a 16 MiB
 * budget (its figures mean nothing). Run it with `node --expose-gc` for the per-entry cost (the
 * bench forces a GC before reading the heap; without the flag it reports what it can).
 */
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { HttpConn, httpRequest } from './lib/http-conn.js';
import { createChannel, serverWithUsers } from './lib/seed.js';

const MiB = 1024 * 1024;

function num(name: string, fallback: number): number {
  const v = process.env[name];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : fallback;
}

/** A full GC, when the runtime lets the bench ask for one (`--expose-gc`, or the V8 flag). */
function fullGc(): boolean {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    return true;
  }
  try {
    v8.setFlagsFromString('--expose-gc');
    (vm.runInNewContext('gc') as () => void)();
    return true;
  } catch {
    return false;
  }
}

export async function memoryBench(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const users = num('BENCH_USERS', quick ? 10 : 60);
  const perUser = num('BENCH_QUEUES', quick ? 20 : 100);
  const messages = num('BENCH_MESSAGES', quick ? 1500 : 10_000);
  const budgetMb = num('BENCH_BUDGET_MB', quick ? 16 : 1024);
  console.log(
    `memory: ${users} users × ${perUser} queues, ${messages} messages, budget ${budgetMb} MiB ` +
      `(${os.cpus().length} cores, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)})`,
  );
  const bs = await serverWithUsers(users, 'memory', {
    server: { queueMemoryBudgetBytes: budgetMb * MiB, maxQueuesPerUser: Math.max(100, perUser) },
  });
  const { server, users: people } = bs;
  const queues = server.context.queues;
  try {
    const channel = await createChannel(
      server,
      bs.realmId,
      people[0]!.id,
      'everyone',
      people.map((u) => u.id),
    );
    // Registered as clients do (POST /register: a snapshot each), 8 at a time.
    const conns = Array.from({ length: 8 }, () => new HttpConn(server.port));
    await Promise.all(conns.map((c) => c.connected()));
    let next = 0;
    const total = users * perUser;
    await Promise.all(
      conns.map(async (c) => {
        for (let i = next++; i < total; i = next++) {
          const u = people[i % users]!;
          const r = await c.request(
            httpRequest('POST', '/api/v1/register', u, 'event_types=%5B%22message%22%5D'),
          );
          if (r.status !== 200) throw new Error(`register: ${r.status} ${r.body.slice(0, 200)}`);
        }
      }),
    );
    const gc = fullGc();
    const baseline = process.memoryUsage();
    console.log(
      `  ${queues.stats().queues} queues registered; baseline RSS ${(baseline.rss / MiB).toFixed(0)} MiB, ` +
        `heap ${(baseline.heapUsed / MiB).toFixed(0)} MiB${gc ? ' (after a full GC)' : ''}`,
    );

    let peak = { rss: baseline.rss, estimate: 0, entries: 0, at: 0 };
    const sample = (sent: number) => {
      const rss = process.memoryUsage().rss;
      if (rss > peak.rss) {
        const s = queues.stats();
        peak = { rss, estimate: s.bytes, entries: s.entries, at: sent };
      }
    };
    let sent = 0;
    const sampler = setInterval(() => sample(sent), 50);
    const started = performance.now();
    // The messages, 4 connections at a time, every one to the channel of everyone.
    let k = 0;
    await Promise.all(
      conns.slice(0, 4).map(async (c) => {
        for (let i = k++; i < messages; i = k++) {
          const u = people[i % users]!;
          const form = new URLSearchParams({
            type: 'channel',
            to: String(channel),
            topic: `topic ${i % 20}`,
            content: `message ${i}: a line of text of ordinary length, with a **bit** of markdown`,
          }).toString();
          const r = await c.request(httpRequest('POST', '/api/v1/messages', u, form));
          if (r.status !== 200) throw new Error(`send: ${r.status} ${r.body.slice(0, 200)}`);
          sent++;
          if (sent % 500 === 0) sample(sent);
        }
      }),
    );
    clearInterval(sampler);
    sample(sent);
    const seconds = (performance.now() - started) / 1000;
    const stats = queues.stats();
    const held = process.memoryUsage();
    const gcAfter = fullGc();
    const after = process.memoryUsage();
    const bound = (budgetMb * MiB + baseline.rss) * 1.25;
    const perEntry =
      stats.entries > 0 && gcAfter ? (after.heapUsed - baseline.heapUsed) / stats.entries : NaN;
    console.log(
      `  ${sent} messages in ${seconds.toFixed(1)} s; ${stats.discarded} queues discarded`,
    );
    console.log(
      `  peak RSS ${(peak.rss / MiB).toFixed(0)} MiB (after ${peak.at} messages), the estimate ` +
        `then ${(peak.estimate / MiB).toFixed(0)} MiB for ${peak.entries} entries; ` +
        `bound (budget + baseline) × 1.25 = ${(bound / MiB).toFixed(0)} MiB: ` +
        (peak.rss <= bound ? 'within' : 'EXCEEDED') +
        ` (${((peak.rss / (budgetMb * MiB + baseline.rss)) * 100).toFixed(0)}% of budget + baseline)`,
    );
    console.log(
      `  at the end: ${stats.entries} entries, estimate ${(stats.bytes / MiB).toFixed(0)} MiB, ` +
        `RSS ${(held.rss / MiB).toFixed(0)} MiB, heap ${(held.heapUsed / MiB).toFixed(0)} MiB` +
        (gcAfter
          ? `; after a full GC heap ${(after.heapUsed / MiB).toFixed(0)} MiB: ` +
            `${perEntry.toFixed(1)} bytes of heap per entry held, the estimate counts ` +
            `${(stats.entries > 0 ? stats.bytes / stats.entries : 0).toFixed(1)}`
          : ''),
    );
    for (const c of conns) c.close();
  } finally {
    await bs.close();
  }
}
