/**
 * `npm run bench -- http`: authenticated GET /api/v1/users/me on the default server (every setting
 * its default, rate limiting on with a per-user rule far above the load so that none is refused,
 * per-address limits on) against a bare uWebSockets.js route answering the same JSON bytes, each
 * loaded by a separate load-generator process (bench/lib/loadgen.ts), in interleaved rounds. Each
 * round loads, with BENCH_CONNECTIONS connections (throughput) and then on one connection
 * (latency): the bare route; Confab as `npm start` runs it, its access log on (a JSON line per
 * request, here to a file where npm start writes to stdout); and Confab with the access log off
 * (LOG_REQUESTS=0, the library default). Prints each round and both servers' ratios against the
 * targets of issue 31: Confab ≥ 75% of the bare route's throughput, ≤ +30 µs p50 on one
 * connection. Then Confab with rate limiting off, once, for the limiter's cost.
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
import { configureLogging, flushLogs } from '../src/observability/log.js';
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

/** One Confab server's loads in a round, and its ratios to the bare route's of the same round. */
type Side = {
  load: LoadResult & { mainUs: number };
  one: LoadResult;
  ratio: number;
  p50DeltaUs: number;
};

type Round = {
  bare: LoadResult;
  bareOne: LoadResult;
  /** Access log on, as `npm start` runs. */
  logged: Side;
  /** LOG_REQUESTS=0. */
  quiet: Side;
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

  // The process logger writes to a file, as `npm start`'s does to stdout; only the server with
  // the access log on writes request lines.
  const logFile = path.join(dataDir, 'access.log');
  const logFd = fs.openSync(logFile, 'w');
  configureLogging({ destination: logFd });
  const noRefusals: RateLimitRules = { ...DEFAULT_RATE_LIMITS, api_by_user: [[60, 1e12]] };
  const logged = await confabServer(path.join(dataDir, 'logged'), noRefusals, true);
  const quiet = await confabServer(path.join(dataDir, 'quiet'), noRefusals, false);
  // Bare uWS: the same bytes, no parsing, no auth, no lookup.
  const app = createBareApp();
  app.get('/api/v1/users/me', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(quiet.body);
    });
  });
  const bare = await listen(app, '127.0.0.1', 0);
  console.log(
    `http bench: GET /api/v1/users/me, ${connections} connections and 1, ${seconds} s each, ${rounds} interleaved rounds, ${machine()}, ${os.cpus().length} cores`,
  );
  const row = (name: string, r: LoadResult & { mainUs?: number }) =>
    `  ${name.padEnd(42)} ${fmt(r.rps, 0).padStart(9)} req/s   p50 ${fmt(r.p50 * 1000, 0).padStart(5)} µs   p99 ${fmt(r.p99, 3)} ms   errors ${r.errors}` +
    (r.mainUs === undefined ? '' : `   main thread ${fmt(r.mainUs, 1)} µs/req`);
  const signed = (us: number) => `${us >= 0 ? '+' : ''}${fmt(us, 0)} µs`;
  const verdict = (name: string, side: Side) =>
    `  ${name}: ${fmt(side.ratio * 100, 1)}% of the bare route's throughput (target ≥ 75%); ` +
    `p50 on one connection ${signed(side.p50DeltaUs)} (target ≤ +30 µs)`;
  const results: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    const b = await load(bare.port, quiet.auth);
    const cl = await logged.measure(() => load(logged.server.port, logged.auth));
    const cq = await quiet.measure(() => load(quiet.server.port, quiet.auth));
    const b1 = await load(bare.port, quiet.auth, 1);
    const cl1 = await load(logged.server.port, logged.auth, 1);
    const cq1 = await load(quiet.server.port, quiet.auth, 1);
    const side = (c: LoadResult & { mainUs: number }, one: LoadResult): Side => ({
      load: c,
      one,
      ratio: c.rps / b.rps,
      p50DeltaUs: (one.p50 - b1.p50) * 1000,
    });
    const r: Round = { bare: b, bareOne: b1, logged: side(cl, cl1), quiet: side(cq, cq1) };
    results.push(r);
    console.log(`round ${i + 1}`);
    console.log(row(`bare uWS, ${connections} connections`, b));
    console.log(row(`Confab default (access log on), ${connections} conn.`, cl));
    console.log(row(`Confab LOG_REQUESTS=0, ${connections} conn.`, cq));
    console.log(row('bare uWS, 1 connection', b1));
    console.log(row('Confab default (access log on), 1 conn.', cl1));
    console.log(row('Confab LOG_REQUESTS=0, 1 conn.', cq1));
    console.log(verdict('default (access log on)', r.logged));
    console.log(verdict('LOG_REQUESTS=0', r.quiet));
  }
  await logged.server.close();
  await quiet.server.close();
  closeListenSocket(bare.socket);
  flushLogs();
  const logLines = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"msg":"request"')).length;
  configureLogging({});
  fs.closeSync(logFd);

  // Rate limiting off, once: what the limiter and its headers cost.
  const off = await confabServer(path.join(dataDir, 'off'), null);
  const offLoad = await off.measure(() => load(off.server.port, off.auth));
  await off.server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const limiter = limiterMicroBench();
  const lastOn = results[results.length - 1]!.quiet.load;
  console.log(row('Confab LOG_REQUESTS=0, rate limiting off', offLoad));
  const summary = (name: string, pick: (r: Round) => Side) => {
    const ratios = results.map((r) => pick(r).ratio).sort((x, y) => x - y);
    const deltas = results.map((r) => pick(r).p50DeltaUs).sort((x, y) => x - y);
    const main = results.map((r) => pick(r).load.mainUs).sort((x, y) => x - y);
    return (
      `summary, ${name}: ${fmt(ratios[0]! * 100, 1)}–${fmt(ratios[ratios.length - 1]! * 100, 1)}% of the bare route's throughput; ` +
      `p50 on one connection ${signed(deltas[0]!)} to ${signed(deltas[deltas.length - 1]!)}; ` +
      `main thread ${fmt(main[0]!, 1)}–${fmt(main[main.length - 1]!, 1)} µs/req`
    );
  };
  console.log(summary('Confab default (access log on, as npm start)', (r) => r.logged));
  console.log(summary('Confab LOG_REQUESTS=0', (r) => r.quiet));
  console.log(`  access log: ${logLines} request lines written`);
  console.log(
    `rate limiting: on runs at ${fmt((lastOn.rps / offLoad.rps) * 100, 1)}% of the throughput of off (last round's LOG_REQUESTS=0 run against the off run); ` +
      `the limiter alone: ${fmt(limiter.nsPerAttempt, 0)} ns per request (${limiter.keys} keys), headers ${fmt(limiter.nsPerHeaders, 0)} ns to format`,
  );
  console.log(
    JSON.stringify({
      bench: 'http',
      date: new Date().toISOString(),
      connections,
      seconds,
      rounds: results,
      accessLogLines: logLines,
      confabRateLimitingOff: offLoad,
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
