/**
 * `npm run bench -- cluster` (docs/cluster.md, docs/benchmarks.md "cluster"): the cluster
 * deployment against the single-process server, on real processes (src/cluster/local.ts).
 *
 * 1. Write latency: sequential sends (one at a time) to the realm's owner node (found from the
 *    nodes' /metrics), p50/p99, for one node on three NATS servers (the replicated append without
 *    other nodes applying each entry on the same two cores) and for clusters of 1, 2 and 3 nodes,
 *    each taking turns with sends to a single-process server that runs for the whole bench (its
 *    figures from the same turns are the baseline: the machine's drift over a run falls on both),
 *    into a channel only the sender reads, before the fan-out's users exist. Beside them, from the
 *    same run, a bare JetStream publish of a log entry's size to a stream of the same replicas on
 *    the cluster's NATS, paced like the sends (the append's floor on this machine), and for 2 and
 *    3 nodes the same sends through a node that does not own the realm (forwarded, then
 *    read-your-writes). The servers' own means of the same sends (their /metrics: request,
 *    commit, and on a cluster the append's publish-to-acknowledgement) say where the time goes.
 * 2. Fan-out: BENCH_USERS users (default 200; --quick 20), each with one long-poll queue,
 *    registered round-robin on the cluster's nodes; BENCH_ROUNDS messages to a channel they all
 *    read; send-to-delivery p50/p99 and the servers' CPU (all node processes, /proc) per
 *    delivered event, for 1, 2 and 3 nodes.
 * 3. Failover: the owner (found from /metrics) SIGKILLed; the time until a send through the
 *    proxy succeeds again.
 * 4. Write pauses (3 nodes, docs/cluster.md "Faults"): three senders through the proxy, each
 *    asking again with the same local id after any failure, while a fault is injected and
 *    repaired; the longest gap between two acknowledgements from the fault on: the NATS server
 *    leading the log stream SIGKILLed (and started again 10 s later), a NATS server leading
 *    neither the log nor the lease bucket SIGKILLed, the owner's NATS server frozen (SIGSTOP) for
 *    10 s, the owner node SIGKILLed (its supervisor starts it again). BENCH_PAUSES runs of each
 *    (default 3; --quick 1). `--pauses` runs only this part (on a 3-node cluster, no baseline);
 *    BENCH_FAULTS picks faults by name (comma-separated: leader, other, frozen, owner; default
 *    all). With CLUSTER_TRACE=1 the nodes write their failover timeline (src/cluster/trace.ts) and
 *    the cluster's logs are kept in a directory the bench names.
 * BENCH_BASE_PORT (default: the single-process server on 9790, the clusters' on free ports the
 * system picks) puts the single-process server on that port and each cluster on the ports after it.
 * Every process the bench starts is stopped by a reaper (src/cluster/reaper.ts) if the bench ends
 * without stopping it (SIGTERM, Ctrl-C, a crash): its clusters' and its single-process server.
 * On one 2-core machine every process shares the same cores: see docs/cluster.md for what the
 * figures can and cannot show.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, headers as natsHeaders } from 'nats';
import { clusterNames } from '../src/cluster/jetstream.js';
import {
  down,
  killNode,
  missingEngines,
  nodePid,
  reapOnExit,
  readRecord,
  signalNats,
  startNatsAgain,
  up,
  type ClusterRecord,
} from '../src/cluster/local.js';
import { fmt, machine, summarize } from './lib/stats.js';

type User = { email: string; api_key: string };

const quick = process.argv.includes('--quick');
const USERS = Number(process.env.BENCH_USERS ?? (quick ? 20 : 200));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (quick ? 5 : 30));
const SENDS = quick ? 30 : 300;
const PAUSE_RUNS = Number(process.env.BENCH_PAUSES ?? (quick ? 1 : 3));
const PAUSES_ONLY = process.argv.includes('--pauses');
const FAULTS = new Set(
  (process.env.BENCH_FAULTS ?? 'leader,other,frozen,owner').split(',').map((f) => f.trim()),
);
const TRACE = process.env.CLUSTER_TRACE === '1';
const BASE_PORT = process.env.BENCH_BASE_PORT ? Number(process.env.BENCH_BASE_PORT) : null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const auth = (u: User) => 'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64');

async function call(
  base: string,
  u: User | null,
  method: string,
  p: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    sp.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  const url = `${base}/api/v1/${p}${method === 'GET' ? `?${sp.toString()}` : ''}`;
  const r = await fetch(url, {
    method,
    headers: {
      ...(u ? { authorization: auth(u) } : {}),
      ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(method === 'GET' ? {} : { body: sp.toString() }),
  });
  const body = (await r.json()) as Record<string, unknown>;
  if (r.status !== 200) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(body)}`);
  return body;
}

/** Sequential sends; their latencies (ms). */
async function sendLatencies(base: string, u: User, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call(base, u, 'POST', 'messages', {
      type: 'stream',
      to: 'bench',
      topic: 'latency',
      content: `m ${i}`,
    });
    out.push(performance.now() - t0);
  }
  return out;
}

/** Sums and counts of the server's own timings of a send (its /metrics), to take differences of. */
type SendTimings = Record<'request' | 'commit' | 'append', { sum: number; count: number }>;

const TIMED: Record<keyof SendTimings, string> = {
  request:
    'confab_http_request_duration_seconds_{}{method="POST",route="/api/v1/messages",status="200"}',
  commit: 'confab_commit_duration_seconds_{}',
  append: 'confab_cluster_append_duration_seconds_{}',
};

async function sendTimings(base: string): Promise<SendTimings> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };
  const out = {} as SendTimings;
  for (const [k, pattern] of Object.entries(TIMED) as [keyof SendTimings, string][])
    out[k] = {
      sum: value(pattern.replace('{}', 'sum')),
      count: value(pattern.replace('{}', 'count')),
    };
  return out;
}

/** The mean of each server-side timing between two readings, in ms ('-' where none). */
function timingMeans(a: SendTimings, b: SendTimings): string {
  const mean = (k: keyof SendTimings) => {
    const n = b[k].count - a[k].count;
    return n > 0 ? `${fmt(((b[k].sum - a[k].sum) * 1000) / n)} ms` : '-';
  };
  return `request ${mean('request')}, commit ${mean('commit')}, append ${mean('append')}`;
}

/** CPU time (ms) a process has used so far. */
function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
}

type Target = { base: string; u: User };

/** The single-process server, kept running for the whole bench (the same-run baseline). */
async function startSingleProcess(): Promise<Target & { stop: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-bench-single-'));
  const port = BASE_PORT ?? 9790;
  // As for the clusters: a bench ended by a signal runs no `stop`, and the server (its database
  // open in `dir`) would go on running, holding its port.
  const stopReaper = reapOnExit(dir);
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { ...process.env, DATA_DIR: dir, PORT: String(port), RATE_LIMITING: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    await stopReaper();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The first realm's credentials are in the data directory once the server says it listens.
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    while (!/listening/.test(out)) await sleep(50);
    const creds = fs.readFileSync(path.join(dir, 'first-owner.txt'), 'utf8');
    const email = /^email=(\S+)$/m.exec(creds)![1]!;
    const api_key = /^api_key=(\S+)$/m.exec(creds)![1]!;
    const base = `http://127.0.0.1:${port}`;
    const u = { email, api_key };
    await call(base, u, 'POST', 'users/me/subscriptions', { subscriptions: [{ name: 'bench' }] });
    await sendLatencies(base, u, 20);
    return { base, u, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * `n` sends to each target, one at a time, taking turns (a, b, a, b, ...): drift of the machine
 * over the minutes of a run falls on every target alike, so differences between them are the
 * deployments' own. Their latencies and the servers' own means of the same sends.
 */
async function interleavedSends(
  targets: Target[],
  n: number,
): Promise<{ latencies: number[]; server: string }[]> {
  const before = await Promise.all(targets.map((t) => sendTimings(t.base)));
  const latencies = targets.map((): number[] => []);
  for (let i = 0; i < n; i++)
    for (const [k, t] of targets.entries()) {
      const t0 = performance.now();
      await call(t.base, t.u, 'POST', 'messages', {
        type: 'stream',
        to: 'bench',
        topic: 'latency',
        content: `m ${i}`,
      });
      latencies[k]!.push(performance.now() - t0);
    }
  const after = await Promise.all(targets.map((t) => sendTimings(t.base)));
  return targets.map((_, k) => ({
    latencies: latencies[k]!,
    server: timingMeans(before[k]!, after[k]!),
  }));
}

/**
 * Which node owns the cluster's one realm: the one whose /metrics says it owns a realm (the first
 * node bootstraps it, but any node may win its lease).
 */
async function ownerIndex(rec: ClusterRecord): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const owned = await Promise.all(
      rec.nodes.map(async (n) => {
        const r = await fetch(`http://127.0.0.1:${n.port}/metrics`).catch(() => null);
        const text = r ? await r.text() : '';
        return Number(/^confab_cluster_realms_owned (\d+)/m.exec(text)?.[1] ?? 0);
      }),
    );
    const owners = owned.flatMap((c, i) => (c > 0 ? [i] : []));
    if (owners.length === 1) return owners[0]!;
    if (Date.now() > deadline) throw new Error(`no single owner (${owned.join(', ')})`);
    await sleep(200);
  }
}

/**
 * The append's floor on this machine: `n` sequential JetStream publishes of a log entry's size
 * (700 bytes) with the expected-last-subject-sequence header, to a scratch stream of `replicas`
 * on the cluster's NATS, each after a pause of `gapMs` (the time a client takes to send the next
 * request, so the processes are as idle between publishes as in the sends); their latencies.
 */
async function barePublishes(
  rec: ClusterRecord,
  replicas: number,
  n: number,
  gapMs: number,
): Promise<number[]> {
  const nc = await connect({ servers: rec.natsUrls });
  const name = 'BENCH_FLOOR';
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name, subjects: [`bench-floor.>`], num_replicas: replicas });
    const js = nc.jetstream();
    const body = new Uint8Array(700);
    const out: number[] = [];
    let last = 0;
    for (let i = 0; i < n; i++) {
      await sleep(gapMs);
      const h = natsHeaders();
      h.set('Nats-Expected-Last-Subject-Sequence', String(last));
      const t0 = performance.now();
      last = (await js.publish('bench-floor.1', body, { headers: h })).seq;
      out.push(performance.now() - t0);
    }
    await jsm.streams.delete(name);
    return out;
  } finally {
    await nc.close();
  }
}

async function makeUsers(rec: ClusterRecord, owner: User): Promise<User[]> {
  const users: User[] = [];
  for (let i = 0; i < USERS; i++) {
    const email = `bench${i}@example.com`;
    const password = `secret-bench-${i}`;
    await call(rec.url, owner, 'POST', 'users', { email, password, full_name: `Bench ${i}` });
    const k = await call(rec.url, null, 'POST', 'fetch_api_key', { username: email, password });
    users.push({ email, api_key: k.api_key as string });
  }
  await call(rec.url, owner, 'POST', 'users/me/subscriptions', {
    subscriptions: [{ name: 'bench' }],
    principals: [owner.email, ...users.map((u) => u.email)],
  });
  return users;
}

async function fanout(rec: ClusterRecord, owner: User, users: User[]) {
  const nodes = rec.nodes.map((n) => `http://127.0.0.1:${n.port}`);
  const queues = await Promise.all(
    users.map(async (u, i) => {
      const base = nodes[i % nodes.length]!;
      const r = await call(base, u, 'POST', 'register', { event_types: ['message'] });
      return { u, base, id: r.queue_id as string, last: r.last_event_id as number };
    }),
  );
  const latencies: number[] = [];
  let sentAt = 0;
  let stop = false;
  let delivered = 0;
  const pollers = queues.map(async (q) => {
    while (!stop) {
      const r = await call(q.base, q.u, 'GET', 'events', {
        queue_id: q.id,
        last_event_id: q.last,
      }).catch(() => null);
      if (!r) continue;
      for (const e of r.events as { id: number; type: string }[]) {
        q.last = e.id;
        if (e.type === 'message') {
          latencies.push(performance.now() - sentAt);
          delivered++;
        }
      }
    }
  });
  await sleep(500);
  const pids = rec.nodes.map((_, i) => nodePid(readRecord(rec.dir), i));
  const cpu0 = pids.reduce((s, p) => s + cpuMs(p), 0);
  for (let i = 0; i < ROUNDS; i++) {
    const want = delivered + users.length;
    sentAt = performance.now();
    await call(nodes[0]!, owner, 'POST', 'messages', {
      type: 'stream',
      to: 'bench',
      topic: 'fanout',
      content: `round ${i}`,
    });
    const deadline = Date.now() + 30_000;
    while (delivered < want && Date.now() < deadline) await sleep(2);
  }
  const cpu = pids.reduce((s, p) => s + cpuMs(p), 0) - cpu0;
  stop = true;
  // Wake the held polls: one more message, then let them end.
  await call(nodes[0]!, owner, 'POST', 'messages', {
    type: 'stream',
    to: 'bench',
    topic: 'fanout',
    content: 'end',
  });
  await Promise.race([Promise.all(pollers), sleep(5000)]);
  return { lat: summarize(latencies), cpuPerEventUs: (cpu * 1000) / Math.max(1, delivered) };
}

async function failover(rec: ClusterRecord, dir: string, owner: User): Promise<number> {
  await sendLatencies(rec.url, owner, 5);
  await killNode(dir, (await ownerIndex(rec)) + 1);
  const t0 = performance.now();
  for (;;) {
    try {
      await call(rec.url, owner, 'POST', 'messages', {
        type: 'stream',
        to: 'bench',
        topic: 'failover',
        content: 'after',
      });
      return performance.now() - t0;
    } catch {
      await sleep(20);
    }
  }
}

/** The NATS server (1-based) leading a stream, as JetStream says (asked until it has one). */
async function leaderOf(rec: ClusterRecord, stream: string): Promise<number> {
  const nc = await connect({ servers: rec.natsUrls, maxReconnectAttempts: -1 });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(250)) {
      const leader = await jsm.streams.info(stream).then(
        (i) => i.cluster?.leader ?? '',
        () => '',
      );
      const n = Number(/^nats(\d+)$/.exec(leader)?.[1] ?? 0);
      if (n > 0) return n;
    }
    throw new Error(`no leader for ${stream}`);
  } finally {
    await nc.close();
  }
}

/** Until every node answers and every stream of the cluster has its replicas current. */
async function whole(rec: ClusterRecord): Promise<void> {
  const names = clusterNames();
  const nc = await connect({ servers: rec.natsUrls, maxReconnectAttempts: -1 });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    for (const deadline = Date.now() + 180_000; ; await sleep(250)) {
      if (Date.now() > deadline) throw new Error('the cluster did not become whole again');
      const nodes = await Promise.all(
        rec.nodes.map((n) =>
          fetch(`http://127.0.0.1:${n.port}/api/v1/server_settings`, {
            signal: AbortSignal.timeout(3000),
          }).then(
            (r) => r.status === 200,
            () => false,
          ),
        ),
      );
      if (!nodes.every(Boolean)) continue;
      const streams = await Promise.all(
        [names.stream, `KV_${names.leases}`].map((st) =>
          jsm.streams.info(st).then(
            (i) => !!i.cluster?.leader && (i.cluster.replicas ?? []).every((r) => r.current),
            () => false,
          ),
        ),
      );
      if (streams.every(Boolean)) return;
    }
  } finally {
    await nc.close();
  }
}

/** The NATS server (1-based) a node is connected to, by its /metrics. */
async function natsServerOfNode(rec: ClusterRecord, i: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${rec.nodes[i]!.port}/metrics`)).text();
  return Number(/^confab_cluster_nats_server_info\{server="nats(\d+)"\} 1$/m.exec(text)?.[1] ?? 0);
}

/**
 * What JetStream's own election takes of a pause: while NATS server `faulted` (1-based) is down or
 * frozen, listens on the other servers for JetStream's advisories of a stream leader elected; for
 * each of the log stream and the lease bucket that `faulted` led when the watch began, the moment
 * (performance.now) the advisory of another server leading it arrived. (Asking the servers for the
 * streams' leaders instead saw elections late: a question sent while a stream has no leader is never
 * answered.) `stop` ends the watch and returns them (null: it led neither).
 */
function watchElections(
  rec: ClusterRecord,
  faulted: number,
): { begin: () => Promise<void>; stop: () => Promise<{ log?: number; leases?: number } | null> } {
  const names = clusterNames();
  const streams = { log: names.stream, leases: `KV_${names.leases}` } as const;
  const led: (keyof typeof streams)[] = [];
  const elected: { log?: number; leases?: number } = {};
  let nc: Awaited<ReturnType<typeof connect>> | null = null;
  return {
    begin: async () => {
      for (const k of Object.keys(streams) as (keyof typeof streams)[])
        if ((await leaderOf(rec, streams[k])) === faulted) led.push(k);
      if (led.length === 0) return;
      // Only the servers left: a frozen one would hold the watch's connection.
      nc = await connect({
        servers: rec.natsUrls.filter((_, i) => i + 1 !== faulted),
        maxReconnectAttempts: -1,
      });
      nc.subscribe('$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.*', {
        callback: (err, m) => {
          if (err) return;
          const at = performance.now();
          const a = m.json<{ stream?: string; leader?: string }>();
          for (const k of led)
            if (
              a.stream === streams[k] &&
              a.leader !== `nats${faulted}` &&
              elected[k] === undefined
            )
              elected[k] = at;
        },
      });
      await nc.flush();
    },
    stop: async () => {
      await nc?.close();
      return led.length === 0 ? null : elected;
    },
  };
}

/** A write pause, and what of it JetStream's election of new leaders took (watchElections). */
type Pause = {
  ms: number;
  /** From the fault to a new leader of the log stream / the lease bucket, if the server led it. */
  logElectionMs?: number;
  leasesElectionMs?: number;
  /** From each of those elections to the next acknowledged send: what of the pause is Confab's. */
  afterLogMs?: number;
  afterLeasesMs?: number;
};

/**
 * The longest gap (ms) between two acknowledged sends from the fault on (from the repair when
 * `fromRepair`): three senders through the proxy, each asking again with the same local id after
 * any failure (10 s without an answer is one), `inject` after 2 s of sends, `repair` after
 * `holdMs`, sends going on until ten more are acknowledged after the repair.
 */
async function writePause(
  rec: ClusterRecord,
  owner: User,
  inject: () => Promise<void>,
  repair: () => Promise<void>,
  holdMs: number,
  faulted: number | null = null,
): Promise<Pause> {
  const elections = faulted === null ? null : watchElections(rec, faulted);
  await elections?.begin();
  const acks: number[] = [];
  let running = true;
  const sender = async (s: number) => {
    const q = await call(rec.url, owner, 'POST', 'register', { event_types: ['message'] });
    for (let n = 0; running; n++) {
      for (;;) {
        const ok = await fetch(`${rec.url}/api/v1/messages`, {
          method: 'POST',
          headers: {
            authorization: auth(owner),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({
            type: 'stream',
            to: 'bench',
            topic: 'pauses',
            content: `pause ${s}.${n}`,
            queue_id: q.queue_id as string,
            local_id: `${s}.${n}`,
          }).toString(),
          signal: AbortSignal.timeout(10_000),
        }).then(
          async (r) => r.status === 200 && (await r.arrayBuffer()) !== null,
          () => false,
        );
        if (ok) {
          acks.push(performance.now());
          break;
        }
        if (!running) break;
        await sleep(50);
      }
    }
  };
  const senders = [0, 1, 2].map((s) => sender(s));
  await sleep(2000);
  const faultAt = performance.now();
  if (TRACE) console.log(`  fault at ${new Date().toISOString()}`);
  await inject();
  await sleep(holdMs);
  await repair();
  const before = acks.length;
  for (const deadline = Date.now() + 120_000; acks.length < before + 10 && Date.now() < deadline;)
    await sleep(100);
  running = false;
  await Promise.all(senders);
  let longest = 0;
  let prev = faultAt;
  for (const at of acks.filter((a) => a >= faultAt)) {
    longest = Math.max(longest, at - prev);
    prev = at;
  }
  const out: Pause = { ms: longest };
  const elected = await elections?.stop();
  if (elected) {
    if (elected.log !== undefined) out.logElectionMs = elected.log - faultAt;
    if (elected.leases !== undefined) out.leasesElectionMs = elected.leases - faultAt;
    const after = (at: number | undefined) => {
      const next = at === undefined ? undefined : acks.find((a) => a >= at);
      return next === undefined ? undefined : next - at!;
    };
    out.afterLogMs = after(elected.log);
    out.afterLeasesMs = after(elected.leases);
  }
  return out;
}

/** The write pauses of docs/cluster.md "Faults", PAUSE_RUNS runs each, on a 3-node cluster. */
async function writePauses(rec: ClusterRecord, dir: string, owner: User): Promise<void> {
  const names = clusterNames();
  const s1 = (ms: number | undefined) => (ms === undefined ? '-' : `${fmt(ms / 1000, 1)} s`);
  const report = (what: string, pauses: Pause[]) => {
    const sorted = pauses.map((p) => p.ms).sort((a, b) => a - b);
    console.log(
      `3 nodes: write pause after ${what}: ${sorted.map((p) => fmt(p / 1000, 1)).join(', ')} s ` +
        `(median ${fmt(sorted[Math.floor(sorted.length / 2)]! / 1000, 1)} s)`,
    );
    // What JetStream's elections took of each run's pause, when the server led the log stream or
    // the lease bucket; the rest is Confab's (detection, retries, renewal, takeover).
    for (const p of pauses)
      if (p.logElectionMs !== undefined || p.leasesElectionMs !== undefined)
        console.log(
          `  pause ${s1(p.ms)}: new leader of the log after ${s1(p.logElectionMs)} (next write ` +
            `${s1(p.afterLogMs)} later), of the lease bucket after ${s1(p.leasesElectionMs)} ` +
            `(next write ${s1(p.afterLeasesMs)} later)`,
        );
  };
  const runs = async (fault: string, what: string, one: () => Promise<Pause | null>) => {
    if (!FAULTS.has(fault)) return;
    const pauses: Pause[] = [];
    for (let i = 0; i < PAUSE_RUNS; i++) {
      await whole(rec);
      const p = await one();
      if (p !== null) pauses.push(p);
    }
    if (pauses.length > 0) report(what, pauses);
    else console.log(`3 nodes: write pause after ${what}: no such server in this run`);
  };
  const killNats = (pick: () => Promise<number | null>) => async () => {
    const n = await pick();
    if (n === null) return null;
    return writePause(
      rec,
      owner,
      () => signalNats(dir, n, 'SIGKILL'),
      () => startNatsAgain(dir, n),
      10_000,
      n,
    );
  };
  await runs(
    'leader',
    "SIGKILL of the log stream leader's NATS server",
    killNats(() => leaderOf(rec, names.stream)),
  );
  await runs(
    'other',
    'SIGKILL of a NATS server leading neither the log nor the lease bucket',
    killNats(async () => {
      const leaders = [
        await leaderOf(rec, names.stream),
        await leaderOf(rec, `KV_${names.leases}`),
      ];
      return [1, 2, 3].find((n) => !leaders.includes(n)) ?? null;
    }),
  );
  await runs('frozen', "SIGSTOP of the owner's NATS server (10 s)", async () => {
    const n = await natsServerOfNode(rec, await ownerIndex(rec));
    if (n === 0) return null;
    return writePause(
      rec,
      owner,
      () => signalNats(dir, n, 'SIGSTOP'),
      () => signalNats(dir, n, 'SIGCONT'),
      10_000,
      n,
    );
  });
  await runs('owner', 'SIGKILL of the owner node (supervised)', async () => {
    const at = await ownerIndex(rec);
    return writePause(
      rec,
      owner,
      () => killNode(dir, at + 1).then(() => undefined),
      async () => {
        // Its supervisor starts it again (src/cluster/supervise.ts).
        for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(200)) {
          const pid = nodePid(readRecord(dir), at);
          if (pid > 0) return;
        }
      },
      3000,
    );
  });
}

export async function clusterBench(): Promise<void> {
  const missing = missingEngines();
  if (missing) throw new Error(`${missing} is not installed`);
  console.log(`# cluster bench ${quick ? '(quick) ' : ''}on ${machine()}`);
  console.log(`users ${USERS}, fan-out rounds ${ROUNDS}, sequential sends ${SENDS}`);
  const single = PAUSES_ONLY ? null : await startSingleProcess();
  // One node on three NATS servers: the replicated (R3) append without other nodes applying each
  // entry on the same cores; then 1, 2 and 3 nodes, one NATS server each. Each deployment's sends
  // to its owner take turns with sends to the single process, whose figures of the same turns
  // are the baseline.
  const deployments = PAUSES_ONLY
    ? [{ n: 3, servers: 3 }]
    : [
        { n: 1, servers: 3 },
        { n: 1, servers: 1 },
        { n: 2, servers: 2 },
        { n: 3, servers: 3 },
      ];
  try {
    for (const { n, servers } of deployments) {
      const alone = n === 1 && servers > 1;
      const label = alone ? `1 node on ${servers} NATS servers` : `${n} node(s)`;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-bench-'));
      // Before `up`: a bench stopped with Ctrl-C runs no `finally`, in `up` too.
      const stopReaper = reapOnExit(dir);
      try {
        const rec = await up({
          dir,
          nodes: n,
          natsServers: servers,
          ...(BASE_PORT === null ? {} : { basePort: BASE_PORT + 1 }),
          env: { RATE_LIMITING: 'off', ...(TRACE ? { CLUSTER_TRACE: '1' } : {}) },
          supervise: true,
        });
        const owner = { email: rec.owner.email, api_key: rec.owner.api_key };
        if (PAUSES_ONLY) {
          await call(rec.url, owner, 'POST', 'users/me/subscriptions', {
            subscriptions: [{ name: 'bench' }],
          });
          await writePauses(rec, dir, owner);
          continue;
        }
        const at = await ownerIndex(rec);
        const ownerUrl = `http://127.0.0.1:${rec.nodes[at]!.port}`;
        await call(ownerUrl, owner, 'POST', 'users/me/subscriptions', {
          subscriptions: [{ name: 'bench' }],
        });
        await sendLatencies(ownerUrl, owner, 20);
        const [singleRun, ownerRun] = await interleavedSends(
          [single!, { base: ownerUrl, u: owner }],
          SENDS,
        );
        const base = summarize(singleRun!.latencies);
        const w = summarize(ownerRun!.latencies);
        const replicas = Math.min(servers, 3);
        const floor = summarize(
          await barePublishes(rec, replicas, SENDS, Math.max(1, base.p50 - 1)),
        );
        console.log(
          `${label}: send to the owner (node ${at + 1}) p50 ${fmt(w.p50)} ms ` +
            `(+${fmt(w.p50 - base.p50)} over single), p99 ${fmt(w.p99)} ms; the single process ` +
            `in the same turns p50 ${fmt(base.p50)} ms, p99 ${fmt(base.p99)} ms; ` +
            `bare JetStream publish (R${replicas}) p50 ${fmt(floor.p50)} ms, p99 ${fmt(floor.p99)} ms`,
        );
        console.log(`${label}: server-side means per send: single ${singleRun!.server}`);
        console.log(`${label}: server-side means per send: owner ${ownerRun!.server}`);
        if (alone) continue;
        if (n > 1) {
          const otherUrl = `http://127.0.0.1:${rec.nodes[(at + 1) % n]!.port}`;
          await sendLatencies(otherUrl, owner, 20);
          const f = summarize(await sendLatencies(otherUrl, owner, SENDS));
          console.log(
            `${n} nodes: send through a node that does not own the realm p50 ${fmt(f.p50)} ms, p99 ${fmt(f.p99)} ms`,
          );
        }
        const users = await makeUsers(rec, owner);
        const f = await fanout(rec, owner, users);
        console.log(
          `${n} node(s): fan-out to ${USERS} queues: p50 ${fmt(f.lat.p50)} ms, p99 ${fmt(f.lat.p99)} ms, ` +
            `server CPU ${fmt(f.cpuPerEventUs, 1)} µs per delivered event (all nodes)`,
        );
        if (n > 1)
          console.log(
            `${n} nodes: failover (owner SIGKILLed): writes again after ${fmt(await failover(rec, dir, owner), 0)} ms`,
          );
        if (n === 3) await writePauses(rec, dir, owner);
      } finally {
        await down(dir);
        await stopReaper();
        if (TRACE) {
          const kept = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-bench-logs-'));
          fs.cpSync(path.join(dir, 'logs'), kept, { recursive: true });
          console.log(`the cluster's logs: ${kept}`);
        }
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await single?.stop();
  }
}
