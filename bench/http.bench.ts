/**
 * `npm run bench -- http`: authenticated GET /api/v1/users/me on the default server (every setting
 * its default, rate limiting on with a per-user rule far above the load so that none is refused,
 * per-address limits on) against a bare uWebSockets.js route answering the same JSON bytes, each
 * loaded by a separate load-generator process (bench/lib/loadgen.ts), in interleaved rounds. Each
 * round loads, with BENCH_CONNECTIONS connections (throughput) and then on one connection
 * (latency): the bare route; Confab as `npm start` runs it (LOG_REQUESTS=errors: a line for each
 * failed or slow request, none here, and a summary line each minute); Confab with a line for
 * every request (LOG_REQUESTS=all); and Confab with no access log (LOG_REQUESTS=off, the library
 * default). Log lines go to a file where npm start writes to stdout. Prints each round and each
 * server's ratios against the targets of issue 31: Confab ≥ 75% of the bare route's throughput,
 * ≤ +30 µs p50 on one connection, and each server's CPU time per request (the bench process's:
 * the load generators are processes of their own). Then Confab with rate limiting off, once, for
 * the limiter's cost.
 *
 * Options (env): BENCH_SECONDS (default 8 per load), BENCH_CONNECTIONS (default 32), BENCH_ROUNDS
 * (default 3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBareApp, closeListenSocket, listen } from '../src/http/uws.js';
import { DEFAULT_RATE_LIMITS, type LogRequests, type RateLimitRules } from '../src/config.js';
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
  load: Measured;
  one: LoadResult;
  ratio: number;
  p50DeltaUs: number;
};

/** A load's result, with the server's main-thread busy time and process CPU time per request. */
type Measured = LoadResult & { mainUs: number; cpuUs: number };

type Round = {
  bare: Measured;
  bareOne: LoadResult;
  /** LOG_REQUESTS=errors, as `npm start` runs. */
  deflt: Side;
  /** LOG_REQUESTS=all. */
  logged: Side;
  /** LOG_REQUESTS=off. */
  quiet: Side;
};

/** Each load's warm-up, at the same load, before its measured part. */
const WARMUP_MS = 1500;

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
        warmupMs: WARMUP_MS,
      },
      (seconds + 30) * 1000,
    );

  // The process logger writes to a file, as `npm start`'s does to stdout; only the server with
  // LOG_REQUESTS=all writes request lines (the default's are for errors and slow requests).
  const logFile = path.join(dataDir, 'access.log');
  const logFd = fs.openSync(logFile, 'w');
  configureLogging({ destination: logFd });
  const noRefusals: RateLimitRules = { ...DEFAULT_RATE_LIMITS, api_by_user: [[60, 1e12]] };
  const deflt = await confabServer(path.join(dataDir, 'default'), noRefusals, 'errors');
  const logged = await confabServer(path.join(dataDir, 'logged'), noRefusals, 'all');
  const quiet = await confabServer(path.join(dataDir, 'quiet'), noRefusals, 'off');
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
  const row = (name: string, r: LoadResult & { mainUs?: number; cpuUs?: number }) =>
    `  ${name.padEnd(44)} ${fmt(r.rps, 0).padStart(9)} req/s   p50 ${fmt(r.p50 * 1000, 0).padStart(5)} µs   p99 ${fmt(r.p99, 3)} ms   errors ${r.errors}` +
    (r.mainUs === undefined ? '' : `   main thread ${fmt(r.mainUs, 1)} µs/req`) +
    (r.cpuUs === undefined ? '' : `   CPU ${fmt(r.cpuUs, 1)} µs/req`);
  const signed = (us: number) => `${us >= 0 ? '+' : ''}${fmt(us, 0)} µs`;
  const verdict = (name: string, side: Side, bareCpuUs: number) =>
    `  ${name}: ${fmt(side.ratio * 100, 1)}% of the bare route's throughput (target ≥ 75%); ` +
    `p50 on one connection ${signed(side.p50DeltaUs)} (target ≤ +30 µs); ` +
    `bare's CPU per request ${fmt((bareCpuUs / side.load.cpuUs) * 100, 1)}% of its`;
  const results: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    const b = await measure(() => load(bare.port, quiet.auth));
    const cd = await measure(() => load(deflt.server.port, deflt.auth));
    const cl = await measure(() => load(logged.server.port, logged.auth));
    const cq = await measure(() => load(quiet.server.port, quiet.auth));
    const b1 = await load(bare.port, quiet.auth, 1);
    const cd1 = await load(deflt.server.port, deflt.auth, 1);
    const cl1 = await load(logged.server.port, logged.auth, 1);
    const cq1 = await load(quiet.server.port, quiet.auth, 1);
    const side = (c: Measured, one: LoadResult): Side => ({
      load: c,
      one,
      ratio: c.rps / b.rps,
      p50DeltaUs: (one.p50 - b1.p50) * 1000,
    });
    const r: Round = {
      bare: b,
      bareOne: b1,
      deflt: side(cd, cd1),
      logged: side(cl, cl1),
      quiet: side(cq, cq1),
    };
    results.push(r);
    console.log(`round ${i + 1}`);
    console.log(row(`bare uWS, ${connections} connections`, b));
    console.log(row(`Confab default (errors), ${connections} conn.`, cd));
    console.log(row(`Confab LOG_REQUESTS=all, ${connections} conn.`, cl));
    console.log(row(`Confab LOG_REQUESTS=off, ${connections} conn.`, cq));
    console.log(row('bare uWS, 1 connection', b1));
    console.log(row('Confab default (errors), 1 conn.', cd1));
    console.log(row('Confab LOG_REQUESTS=all, 1 conn.', cl1));
    console.log(row('Confab LOG_REQUESTS=off, 1 conn.', cq1));
    console.log(verdict('default (LOG_REQUESTS=errors)', r.deflt, b.cpuUs));
    console.log(verdict('LOG_REQUESTS=all', r.logged, b.cpuUs));
    console.log(verdict('LOG_REQUESTS=off', r.quiet, b.cpuUs));
  }
  await deflt.server.close();
  await logged.server.close();
  await quiet.server.close();
  closeListenSocket(bare.socket);
  flushLogs();
  const logLines = countInFile(logFile, '"msg":"request"');
  configureLogging({});
  fs.closeSync(logFd);

  // Rate limiting off, once: what the limiter and its headers cost.
  const off = await confabServer(path.join(dataDir, 'off'), null);
  const offLoad = await measure(() => load(off.server.port, off.auth));
  await off.server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const limiter = limiterMicroBench();
  const lastOn = results[results.length - 1]!.quiet.load;
  console.log(row('Confab LOG_REQUESTS=off, rate limiting off', offLoad));
  const range = (xs: number[], f: (x: number) => string) => {
    const s = [...xs].sort((x, y) => x - y);
    return `${f(s[0]!)} to ${f(s[s.length - 1]!)}`;
  };
  const summary = (name: string, pick: (r: Round) => Side) =>
    `summary, ${name}: ${range(
      results.map((r) => pick(r).ratio * 100),
      (x) => `${fmt(x, 1)}%`,
    )} of the bare route's throughput; ` +
    `p50 on one connection ${range(
      results.map((r) => pick(r).p50DeltaUs),
      signed,
    )}; ` +
    `main thread ${range(
      results.map((r) => pick(r).load.mainUs),
      (x) => fmt(x, 1),
    )} µs/req; ` +
    `CPU ${range(
      results.map((r) => pick(r).load.cpuUs),
      (x) => fmt(x, 1),
    )} µs/req (bare's ${range(
      results.map((r) => (r.bare.cpuUs / pick(r).load.cpuUs) * 100),
      (x) => `${fmt(x, 1)}%`,
    )} of it)`;
  console.log(
    `summary, bare uWS: CPU ${range(
      results.map((r) => r.bare.cpuUs),
      (x) => fmt(x, 1),
    )} µs/req`,
  );
  console.log(summary('Confab default (LOG_REQUESTS=errors, as npm start)', (r) => r.deflt));
  console.log(summary('Confab LOG_REQUESTS=all', (r) => r.logged));
  console.log(summary('Confab LOG_REQUESTS=off', (r) => r.quiet));
  console.log(`  access log: ${logLines} request lines written (LOG_REQUESTS=all's)`);
  console.log(
    `rate limiting: on runs at ${fmt((lastOn.rps / offLoad.rps) * 100, 1)}% of the throughput of off (last round's LOG_REQUESTS=off run against the off run); ` +
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
  logRequests: LogRequests = 'off',
): Promise<{
  server: ConfabServer;
  body: string;
  auth: Record<string, string>;
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
  return { server, body, auth };
}

/**
 * Runs a load on one of this process's servers (the others idle) and adds the server's costs per
 * request: the main thread's busy time (uWS, auth, the answer) and the process's CPU time (every
 * thread's: the garbage collector's helpers too), each over the run's requests, the warm-up's
 * included (the measured rate over the warm-up and the measured part). CPU per request, unlike
 * throughput, depends little on what else the machine runs or on the load generator's speed.
 */
async function measure(run: () => Promise<LoadResult>): Promise<Measured> {
  const elu = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const r = await run();
  const used = process.cpuUsage(cpu);
  const requests = r.rps * (r.seconds + WARMUP_MS / 1000);
  const mainUs = (performance.eventLoopUtilization(elu).active * 1000) / requests;
  const cpuUs = (used.user + used.system) / requests;
  return { ...r, mainUs, cpuUs };
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

/**
 * How many times `needle` occurs in the file, read a slice at a time: the access log of three
 * rounds at LOG_REQUESTS=all outgrows the longest string V8 makes (512 MB) on a fast machine.
 */
function countInFile(file: string, needle: string): number {
  const pattern = Buffer.from(needle);
  const fd = fs.openSync(file, 'r');
  const slice = Buffer.alloc(1 << 22);
  let count = 0;
  let carry = 0; // bytes kept from the slice before: a match may straddle two reads
  try {
    for (;;) {
      const n = fs.readSync(fd, slice, carry, slice.length - carry, null);
      const end = carry + n;
      let at = 0;
      for (;;) {
        const i = slice.indexOf(pattern, at);
        if (i === -1 || i + pattern.length > end) break;
        count++;
        at = i + pattern.length;
      }
      if (n === 0) break;
      carry = Math.min(pattern.length - 1, end - at);
      slice.copy(slice, 0, end - carry, end);
    }
  } finally {
    fs.closeSync(fd);
  }
  return count;
}
