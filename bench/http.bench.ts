/**
 * `npm run bench -- http`: authenticated GET /api/v1/users/me on the default server (every setting
 * its default, rate limiting on with a per-user rule far above the load so that none is refused,
 * per-address limits on) against a bare uWebSockets.js route answering the same JSON bytes, each
 * loaded by a separate load-generator process (bench/lib/loadgen.ts), in interleaved rounds: bare
 * and Confab with BENCH_CONNECTIONS connections (throughput), then bare and Confab on one
 * connection (latency). Prints each round and its ratios against the targets of issue 31:
 * Confab ≥ 75% of the bare route's throughput, ≤ +30 µs p50 on one connection. The rounds run
 * with the access log off (LOG_REQUESTS=0, the library default); `npm start` logs a line per
 * request, so one more run has it on, written to a file, against a bare run beside it. Then
 * Confab with rate limiting off, once, for the limiter's cost.
 *
 * Options (env): BENCH_SECONDS (default 8 per load), BENCH_CONNECTIONS (default 32), BENCH_ROUNDS
 * (default 3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBareApp, closeListenSocket, listen } from '../src/http/uws.js';
import { DEFAULT_RATE_LIMITS, type RateLimitRules } from '../src/config.js';
import { RateLimiter, type RateStatus } from '../src/lib/rate-limit.js';
import { doCreateRealm } from '../src/mutations/realms.js';
import { createServer, type ConfabServer } from '../src/server.js';
import { configureLogging } from '../src/observability/log.js';
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

type Round = {
  bare: LoadResult;
  confab: LoadResult & { mainUs: number };
  bareOne: LoadResult;
  confabOne: LoadResult;
  ratio: number;
  p50DeltaUs: number;
};

export async function httpBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-http-'));
  const load = (port: number, headers: Record<string, string>, n = connections) =>
    runChild<LoadResult>(
      'loadgen.js',
      {
        port,
        path: '/api/v1/users/me',
        headers,
        connections: n,
        durationMs: seconds * 1000,
        warmupMs: 1500,
      },
      (seconds + 30) * 1000,
    );

  const confab = await confabServer(dataDir, { ...DEFAULT_RATE_LIMITS, api_by_user: [[60, 1e12]] });
  // Bare uWS: the same bytes, no parsing, no auth, no lookup.
  const app = createBareApp();
  app.get('/api/v1/users/me', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(confab.body);
    });
  });
  const bare = await listen(app, '127.0.0.1', 0);
  console.log(
    `http bench: GET /api/v1/users/me, ${connections} connections and 1, ${seconds} s each, ${rounds} interleaved rounds, ${machine()}, ${os.cpus().length} cores`,
  );
  const row = (name: string, r: LoadResult & { mainUs?: number }) =>
    `  ${name.padEnd(30)} ${fmt(r.rps, 0).padStart(9)} req/s   p50 ${fmt(r.p50 * 1000, 0).padStart(5)} µs   p99 ${fmt(r.p99, 3)} ms   errors ${r.errors}` +
    (r.mainUs === undefined ? '' : `   main thread ${fmt(r.mainUs, 1)} µs/req`);
  const results: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    const b = await load(bare.port, confab.auth);
    const c = await confab.measure(() => load(confab.server.port, confab.auth));
    const b1 = await load(bare.port, confab.auth, 1);
    const c1 = await load(confab.server.port, confab.auth, 1);
    const r: Round = {
      bare: b,
      confab: c,
      bareOne: b1,
      confabOne: c1,
      ratio: c.rps / b.rps,
      p50DeltaUs: (c1.p50 - b1.p50) * 1000,
    };
    results.push(r);
    console.log(`round ${i + 1}`);
    console.log(row(`bare uWS, ${connections} connections`, b));
    console.log(row(`Confab, ${connections} connections`, c));
    console.log(row('bare uWS, 1 connection', b1));
    console.log(row('Confab, 1 connection', c1));
    console.log(
      `  Confab / bare: ${fmt(r.ratio * 100, 1)}% of the throughput (target ≥ 75%); ` +
        `p50 on one connection ${r.p50DeltaUs >= 0 ? '+' : ''}${fmt(r.p50DeltaUs, 0)} µs (target ≤ +30 µs)`,
    );
  }
  await confab.server.close();
  closeListenSocket(bare.socket);

  // The access log on, as `npm start` runs (a JSON line per request), into a file: once, against
  // a bare run right before it.
  const logFile = path.join(dataDir, 'access.log');
  const logFd = fs.openSync(logFile, 'w');
  configureLogging({ destination: logFd });
  const logged = await confabServer(
    path.join(dataDir, 'logged'),
    {
      ...DEFAULT_RATE_LIMITS,
      api_by_user: [[60, 1e12]],
    },
    true,
  );
  const bareApp = createBareApp();
  bareApp.get('/api/v1/users/me', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(logged.body);
    });
  });
  const bare2 = await listen(bareApp, '127.0.0.1', 0);
  const bareLogged = await load(bare2.port, logged.auth);
  const loggedLoad = await logged.measure(() => load(logged.server.port, logged.auth));
  const loggedOne = await load(logged.server.port, logged.auth, 1);
  const bareLoggedOne = await load(bare2.port, logged.auth, 1);
  await logged.server.close();
  closeListenSocket(bare2.socket);
  configureLogging({});
  fs.closeSync(logFd);
  const logLines = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"msg":"request"')).length;

  // Rate limiting off, once: what the limiter and its headers cost.
  const off = await confabServer(path.join(dataDir, 'off'), null);
  const offLoad = await off.measure(() => load(off.server.port, off.auth));
  await off.server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const limiter = limiterMicroBench();
  const lastOn = results[results.length - 1]!.confab;
  console.log('access log on (as npm start), to a file:');
  console.log(row(`bare uWS, ${connections} connections`, bareLogged));
  console.log(row(`Confab, ${connections} connections`, loggedLoad));
  console.log(row('bare uWS, 1 connection', bareLoggedOne));
  console.log(row('Confab, 1 connection', loggedOne));
  console.log(
    `  Confab / bare with the access log on: ${fmt((loggedLoad.rps / bareLogged.rps) * 100, 1)}% of the throughput; ` +
      `p50 on one connection +${fmt((loggedOne.p50 - bareLoggedOne.p50) * 1000, 0)} µs; ${logLines} request lines written`,
  );
  console.log(row('Confab, rate limiting off', offLoad));
  const ratios = results.map((r) => r.ratio).sort((x, y) => x - y);
  const deltas = results.map((r) => r.p50DeltaUs).sort((x, y) => x - y);
  console.log(
    `summary: Confab ${fmt(ratios[0]! * 100, 1)}–${fmt(ratios[ratios.length - 1]! * 100, 1)}% of the bare route's throughput; ` +
      `p50 on one connection +${fmt(deltas[0]!, 0)} to +${fmt(deltas[deltas.length - 1]!, 0)} µs`,
  );
  console.log(
    `rate limiting: on runs at ${fmt((lastOn.rps / offLoad.rps) * 100, 1)}% of the throughput of off (last round against the off run); ` +
      `the limiter alone: ${fmt(limiter.nsPerAttempt, 0)} ns per request (${limiter.keys} keys), headers ${fmt(limiter.nsPerHeaders, 0)} ns to format`,
  );
  console.log(
    JSON.stringify({
      bench: 'http',
      date: new Date().toISOString(),
      connections,
      seconds,
      rounds: results,
      confabRateLimitingOff: offLoad,
      accessLogOn: {
        bare: bareLogged,
        confab: loggedLoad,
        bareOne: bareLoggedOne,
        confabOne: loggedOne,
      },
      limiter,
    }),
  );
}

/**
 * A Confab server on a fresh data directory with a realm and one user: `measure` runs a load and
 * adds the main thread's busy time per request.
 */
async function confabServer(
  dataDir: string,
  rateLimits: RateLimitRules | null,
  logRequests = false,
): Promise<{
  server: ConfabServer;
  body: string;
  auth: Record<string, string>;
  measure: (run: () => Promise<LoadResult>) => Promise<LoadResult & { mainUs: number }>;
}> {
  const server = await createServer({
    port: 0,
    dataDir,
    scryptN: 1024,
    rateLimits,
    logRequests,
  });
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
  const measure = async (run: () => Promise<LoadResult>) => {
    const elu = performance.eventLoopUtilization();
    const r = await run();
    // The main thread's busy time per request (uWS, auth, the answer): its utilization over the
    // run (warm-up included, at the same load) over the measured rate.
    const mainUs = (performance.eventLoopUtilization(elu).utilization * 1e6) / r.rps;
    return { ...r, mainUs };
  };
  return { server, body, auth, measure };
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
