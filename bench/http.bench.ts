/**
 * `npm run bench -- http`: authenticated GET /api/v1/users/me on Confab against a bare
 * uWebSockets.js route that answers the same JSON bytes, one after the other, each loaded by a
 * separate load-generator process (bench/lib/loadgen.ts). Prints requests/s and p50/p99 latency for
 * both and their ratio (target, issue #2: Confab ≥ 60% of the bare route's throughput).
 *
 * Options (env): BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 32).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBareApp, closeListenSocket, listen } from '../src/http/uws.js';
import { DEFAULT_RATE_LIMITS, type RateLimitRules } from '../src/config.js';
import { RateLimiter, type RateStatus } from '../src/lib/rate-limit.js';
import { doCreateRealm } from '../src/mutations/realms.js';
import { createServer } from '../src/server.js';
import { runChild } from './lib/child.js';
import { fmt, machine } from './lib/stats.js';

type LoadResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
};

export async function httpBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-http-'));
  const load = (port: number, headers: Record<string, string>) =>
    runChild<LoadResult>(
      'loadgen.js',
      {
        port,
        path: '/api/v1/users/me',
        headers,
        connections,
        durationMs: seconds * 1000,
        warmupMs: 1500,
      },
      (seconds + 30) * 1000,
    );

  // Confab, with a realm and one user: rate limits off, then on (a rule far above the load, so
  // every request pays for the limiter and its headers and none is refused).
  const off = await confabRun(dataDir, null, load);
  const on = await confabRun(
    path.join(dataDir, 'on'),
    { ...DEFAULT_RATE_LIMITS, api_by_user: [[60, 1e12]] },
    load,
  );
  const { confab, body, auth } = off;

  // Bare uWS: the same bytes, no parsing, no auth, no lookup.
  const app = createBareApp();
  app.get('/api/v1/users/me', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
    });
  });
  const bare = await listen(app, '127.0.0.1', 0);
  const baseline = await load(bare.port, auth);
  closeListenSocket(bare.socket);
  fs.rmSync(dataDir, { recursive: true, force: true });
  const limiter = limiterMicroBench();

  const ratio = confab.rps / baseline.rps;
  const row = (name: string, r: LoadResult & { mainUs?: number }) =>
    `${name.padEnd(34)} ${fmt(r.rps, 0).padStart(9)} req/s   p50 ${fmt(r.p50, 3)} ms   p99 ${fmt(r.p99, 3)} ms   errors ${r.errors}` +
    (r.mainUs === undefined ? '' : `   main thread ${fmt(r.mainUs, 1)} µs/req`);
  console.log(
    `http bench: GET /api/v1/users/me, ${connections} connections, ${seconds} s each, ${machine()}, ${os.cpus().length} cores`,
  );
  console.log(row('bare uWebSockets.js route', baseline));
  console.log(row('Confab (auth + realm view)', confab));
  console.log(row('Confab with rate limiting on', on.confab));
  console.log(
    `ratio Confab / bare: ${fmt(ratio * 100, 1)}% of the bare route's throughput (target ≥ 60%)`,
  );
  console.log(
    `rate limiting: ${fmt((on.confab.rps / confab.rps) * 100, 1)}% of the throughput without it; ` +
      `${fmt(1e6 / on.confab.rps - 1e6 / confab.rps, 2)} µs more per request (server and load generator share the cores); ` +
      `the limiter alone: ${fmt(limiter.nsPerAttempt, 0)} ns per request (${limiter.keys} keys), headers ${fmt(limiter.nsPerHeaders, 0)} ns to format`,
  );
  console.log(
    JSON.stringify({
      bench: 'http',
      date: new Date().toISOString(),
      connections,
      seconds,
      bare: baseline,
      confab,
      confabRateLimited: on.confab,
      ratio,
      limiter,
    }),
  );
}

/** One Confab run: a fresh server and data directory, a realm with one user, the load. */
async function confabRun(
  dataDir: string,
  rateLimits: RateLimitRules | null,
  load: (port: number, headers: Record<string, string>) => Promise<LoadResult>,
): Promise<{
  confab: LoadResult & { mainUs: number };
  body: string;
  auth: Record<string, string>;
}> {
  const server = await createServer({ port: 0, dataDir, scryptN: 1024, rateLimits });
  const owner = doCreateRealm(server.store, {
    name: 'Bench',
    string_id: '',
    owner_email: 'bench@example.com',
    owner_full_name: 'Bench Owner',
    owner_password_hash: null,
    owner_can_create_users: false,
    now: Math.floor(Date.now() / 1000),
  });
  server.context.realms.noteRealmCreated(owner.realm_id);
  const auth = {
    Authorization: 'Basic ' + Buffer.from(`${owner.email}:${owner.api_key}`).toString('base64'),
  };
  const sample = await fetch(`${server.url}/api/v1/users/me`, { headers: auth });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`GET /users/me answered ${sample.status}: ${body}`);
  const elu = performance.eventLoopUtilization();
  const confab = await load(server.port, auth);
  // The main thread's busy time per request (uWS, auth, the answer): its
  // utilization over the run (warm-up included, at the same load) over the measured rate.
  const mainUs = (performance.eventLoopUtilization(elu).utilization * 1e6) / confab.rps;
  await server.close();
  return { confab: { ...confab, mainUs }, body, auth };
}

/** The limiter's own cost per request, and formatting its three headers, in process. */
function limiterMicroBench(): { nsPerAttempt: number; nsPerHeaders: number; keys: number } {
  const keys = 10_000;
  const limiter = new RateLimiter<number>([[60, 1e12]], () => performance.now());
  const status: RateStatus = { limit: 0, remaining: 0, resetSeconds: 0 };
  const rounds = 2_000_000;
  for (let i = 0; i < 200_000; i++) limiter.attempt(i % keys, status); // warm-up
  let t0 = performance.now();
  for (let i = 0; i < rounds; i++) limiter.attempt(i % keys, status);
  const nsPerAttempt = ((performance.now() - t0) * 1e6) / rounds;
  let sink = 0;
  t0 = performance.now();
  for (let i = 0; i < rounds; i++) {
    sink +=
      String(status.limit).length +
      String(status.remaining + (i & 7)).length +
      String(Math.floor(Date.now() / 1000 + status.resetSeconds)).length;
  }
  const nsPerHeaders = ((performance.now() - t0) * 1e6) / rounds;
  if (sink === 0) console.log('');
  return { nsPerAttempt, nsPerHeaders, keys };
}
