/**
 * `npm run bench -- messages`: the message path end to end.
 *
 * 1. raw: the SQLite ceiling — a bare better-sqlite3 loop (same database settings and schema as
 *    the server) inserting exactly what one send stores: the message row, one user_messages row
 *    per subscriber, the full-text entry; one message per transaction, and the unread index's
 *    entries for those rows in transactions of their own, as the server writes them
 *    (src/storage/unread.ts, since migration 0030). Measured twice: with
 *    SQLite's own checkpoints, and with the server's background checkpointer; the higher of the
 *    two is the ceiling.
 * 2. send: POST /messages to a channel of BENCH_SUBSCRIBERS (50) subscribers, every subscriber
 *    holding an event queue — long-polled, then over WebSockets (BENCH_MODE, default "poll,ws")
 *    — in a client process (bench/lib/messages-client.ts) that also runs the senders
 *    (BENCH_CONNECTIONS connections, default 8; BENCH_SPLIT_CLIENTS=1 runs them in a process of
 *    their own). First as fast as the server answers (closed loop): sends/s, compared with the
 *    raw ceiling measured in the same run; then paced at half that rate (and at each rate of
 *    BENCH_EXTRA_RATES): send-to-delivery latency over every delivery (send = the client writes
 *    the request, delivery = a subscriber's client reads the event).
 * 3. fetch: GET /messages of 100 messages in a channel narrow in a realm of BENCH_FETCH_MESSAGES
 *    (1,000,000) messages over 10 channels, seeded in bulk through the store by a process of its
 *    own (./lib/fetch-seed.ts); then the server starts on that data directory as its own process,
 *    as `npm start` runs it (default configuration), and is loaded from the load-generator
 *    process: the newest 100 and 100 before an anchor in the middle, 1 and 4 connections; with
 *    the server's heap allocation, CPU and event-loop delay per fetch over the newest 100 on one
 *    connection, measured inside it by ./lib/server-probe.ts (preloaded).
 * 4. pages (only when BENCH_PARTS names it): what a send's commit writes to the WAL, page by page,
 *    named by table or index (bench/lib/wal-pages.ts), after BENCH_PAGES_WARM (2000) sends, over
 *    BENCH_PAGES_ROUNDS (100) commits of each of BENCH_PAGES_BATCH ("1,2,4") sends at once.
 *    Not a timing: it can run on a busy machine.
 *
 * Each send phase also prints how many sends the server's commits held on average (group commit
 * and its spacing, actors/realm.machine.ts), the sending client process's own event-loop
 * delay over the window (p99, max: a stall there is the bench's, not the server's), the server's
 * (it runs in this process), both processes' garbage-collection pauses in the window, and the
 * WAL's holds (and how long they held the sends in all), emptyings and restarts by the
 * checkpointer, and the major page faults, blocks read from disk and involuntary context
 * switches of the server's process and the client process(es) over the phase, read at its start
 * and end (./lib/trace.ts `waits`: pages read back from disk after the kernel gave them up, e.g.
 * to DAMON reclaim; CPU taken by other processes). The bench runs in a process started with the
 * Node flags `npm start` gives the server (src/node-flags.ts; it starts itself again with them if
 * need be), and so do its client processes; the latencies stay in the client process, which
 * computes their percentiles, so that none of the bench's own garbage lands in the server's heap.
 *
 * Parts 1 and 2 run once per durability mode (BENCH_DURABILITY, default "normal,full": SQLite's
 * synchronous=NORMAL, the default, and FULL, DURABILITY=full), so the cost of syncing every commit
 * is read within one run.
 *
 * Targets (issue 31; issue #5's were 60% and 10 ms): sends/s ≥ the raw ceiling; p99
 * send-to-delivery < 20 ms at half the maximum rate; fetch of the newest 100 on one connection p99
 * < 1.5 ms, printed beside a bare uWS route answering the same bytes in the same run.
 * Options (env): BENCH_SECONDS (5), BENCH_PARTS ("raw,send,fetch"), BENCH_DURABILITY, BENCH_SUBSCRIBERS, BENCH_CONNECTIONS, BENCH_MODE, BENCH_SPLIT_CLIENTS,
 * BENCH_EXTRA_RATES (comma-separated messages/s), BENCH_SPACING (comma-separated group commit
 * spacings in ms, COMMIT_SPACING_MS: the send phases once for each), BENCH_FETCH_MESSAGES,
 * BENCH_FETCH_LOADS=newest (of the fetch part only the newest 100 on one connection, beside the
 * bare route: with BENCH_PARTS=fetch, a short check of that target), BENCH_PROFILE=<dir>
 * (server CPU profiles of the send phases, and of the fetch server's whole life),
 * BENCH_TIMELINE=<dir> (each send phase's timeline, ./lib/trace.ts: every delivery's send and
 * arrival times and each paced send's answer, both processes' collections and event-loop stalls,
 * as JSON files, for lining a run's slow deliveries up with what happened meanwhile).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { closeListenSocket, createBareApp, listen } from '../src/http/uws.js';
import { registry } from '../src/observability/metrics.js';
import { Checkpointer } from '../src/storage/checkpointer.js';
import { openDatabase, type Durability } from '../src/storage/db.js';
import {
  UNREAD_SETTLE_MIN_ROWS,
  UNREAD_SETTLE_MS,
  UNREAD_SETTLE_ROWS,
} from '../src/storage/store.js';
import { unreadStatements } from '../src/storage/unread.js';
import { runChild } from './lib/child.js';
import { ClientProcess } from './lib/client-process.js';
import type { Phase, SendResult } from './lib/messages-client.js';
import { createChannel, serverWithUsers } from './lib/seed.js';
import { fmt, machine } from './lib/stats.js';
import { profiled } from './lib/profile.js';
import type { ProbeFigures } from './lib/server-probe.js';
import { PageOwners, WalCommits } from './lib/wal-pages.js';
import { GcLog, Trace, waits, type GcFigures, type Waits } from './lib/trace.js';
import type { ServerOptions } from '../src/server.js';
import { SERVER_NODE_FLAGS } from '../src/node-flags.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- 1. the raw ceiling -------------------------------------------------------------------------

function rawCeiling(
  seconds: number,
  subscribers: number,
  backgroundCheckpoint: boolean,
  durability: Durability,
): { rate: number; messages: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-raw-'));
  const db = openDatabase(dir, { durability });
  const checkpointer = backgroundCheckpoint ? new Checkpointer(db) : null;
  try {
    db.prepare(`INSERT INTO realms (string_id, name, date_created) VALUES ('', 'raw', 0)`).run();
    const users: number[] = [];
    const insUser = db.prepare(
      `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key, date_joined)
       VALUES (1, ?, ?, 'u', ?, 0)`,
    );
    for (let i = 0; i < subscribers; i++) {
      users.push(Number(insUser.run(`u${i}@raw`, `u${i}@raw`, `key${i}`).lastInsertRowid));
    }
    const insMsg = db.prepare(
      `INSERT INTO messages (realm_id, sender_id, stream_id, dm_group_id, topic, content,
         rendered_content, date_sent, has_attachment, has_image, has_link, sending_client)
       VALUES (1, ?, 1, NULL, 'bench', ?, ?, ?, 0, 0, 0, 'ConfabBench')`,
    );
    const insUm = db.prepare(
      'INSERT INTO user_messages (user_id, message_id, flags) VALUES (?, ?, 0)',
    );
    const insFts = db.prepare('INSERT INTO messages_fts (rowid, topic, body) VALUES (?, ?, ?)');
    db.pragma('foreign_keys = OFF'); // no streams row: the server's check is not what is measured
    const send = db.transaction(() => {
      const content = 't' + (performance.timeOrigin + performance.now()).toFixed(3);
      const id = Number(
        insMsg.run(users[0], content, `<p>${content}</p>`, Math.floor(Date.now() / 1000))
          .lastInsertRowid,
      );
      for (const u of users) insUm.run(u, id);
      insFts.run(id, 'bench', content);
    });
    // The unread index's entries, written as the server writes them: in transactions of their
    // own, whenever UNREAD_SETTLE_MIN_ROWS rows wait (src/storage/store.ts, ./unread.ts).
    const unread = unreadStatements(db);
    const settle = db.transaction(() => unread.moveWatermark(UNREAD_SETTLE_ROWS));
    let settleAt = performance.now() + UNREAD_SETTLE_MS;
    const sendAndSettle = () => {
      send();
      const now = performance.now();
      if (now >= settleAt) {
        if (unread.waiting(UNREAD_SETTLE_MIN_ROWS)) settle.immediate();
        settleAt = now + UNREAD_SETTLE_MS;
      }
    };
    const warmUntil = performance.now() + 1000;
    while (performance.now() < warmUntil) sendAndSettle();
    let n = 0;
    const t0 = performance.now();
    const until = t0 + seconds * 1000;
    while (performance.now() < until) {
      sendAndSettle();
      n++;
    }
    return { rate: n / ((performance.now() - t0) / 1000), messages: n };
  } finally {
    checkpointer?.stop();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * CPU time of the calling thread (µs): Linux's /proc/thread-self/schedstat (its first field, run
 * time in ns); NaN where it cannot be read. Called from the main thread, it is the main thread's.
 */
function mainThreadCpuUs(): number {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1000;
  } catch {
    return NaN;
  }
}

/**
 * The growth of this process's old generation (old space and large objects, bytes) from now until
 * `stop`: its used size sampled every 10 ms, every rise summed (a collection's fall is not
 * subtracted, so what was promoted and then collected counts).
 */
function oldGenerationGrowth(): { stop(): number } {
  const used = () => {
    let n = 0;
    for (const s of v8.getHeapSpaceStatistics())
      if (s.space_name === 'old_space' || s.space_name === 'large_object_space')
        n += s.space_used_size;
    return n;
  };
  let last = used();
  let grown = 0;
  const sample = () => {
    const now = used();
    if (now > last) grown += now - last;
    last = now;
  };
  const timer = setInterval(sample, 10);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return grown;
    },
  };
}

/** The realm actor's commits so far and the commands they ran (confab_commit_batch_size). */
async function commitCounters(): Promise<{ commits: number; commands: number }> {
  const metric = registry.getSingleMetric('confab_commit_batch_size');
  const values = (metric ? (await metric.get()).values : []) as {
    metricName?: string;
    value: number;
  }[];
  const of = (suffix: string) => values.find((v) => v.metricName?.endsWith(suffix))?.value ?? 0;
  return { commits: of('_count'), commands: of('_sum') };
}

// ---- setup: bench/lib/seed.ts --------------------------------------------------------------

// ---- 2. sending ---------------------------------------------------------------------------------

export type PhaseResult = SendResult & {
  deliveries: number;
  expectedDeliveries: number;
  /** The server's commits in the phase (warm-up included) and the sends they held. */
  commits: { commits: number; sends: number };
  /**
   * The server's own event-loop delay over the phase (ms, sampled every 5 ms; the server runs in
   * this process), and what its checkpointer did meanwhile: holds of the batches, the WAL emptied
   * under them, started afresh by the thread, and how long the sends waited for holds in all
   * (src/storage/checkpointer.ts). A long stall here
   * with restarts not made by the thread points at a WAL-header sync on the main thread.
   */
  serverLoop: { p99: number; max: number };
  wal: { holds: number; emptied: number; afresh: number; heldMs: number };
  /**
   * CPU time per send (µs) over the phase, warm-up included: the server's process (every thread:
   * the main one, the checkpointer's, the render pool's) and its main thread alone (Linux:
   * /proc/thread-self/schedstat; NaN elsewhere), per send the server committed; the client
   * process's, per send over the measured window (the senders and the 50 receivers).
   */
  cpuPerSend: { server: number; serverMain: number; client: number };
  latency: { n: number; p50: number; p90: number; p99: number; max: number };
  /**
   * The server's process's garbage collections that began in the measured window (young and old
   * generation: count, total and longest pause, ms); the client's are `clientGc`.
   */
  serverGc: GcFigures;
  /**
   * How much the old generation of the server's process grew per send it committed over the
   * phase (bytes, warm-up included): what outlived the young generation, which brings the next
   * old-generation collection nearer (docs/benchmarks.md "What a send leaves in the old
   * generation").
   */
  oldGrowthPerSend: number;
  /**
   * Major page faults, blocks read from disk and involuntary context switches (./lib/trace.ts
   * `waits`) over the phase, warm-up included, read at its start and end only: the server's
   * process (this one, every thread; the bench's own bookkeeping in it is little) and each client
   * process (the one of both roles; with BENCH_SPLIT_CLIENTS=1 the receivers' then the senders').
   * A fault or a block is a read from disk the process waited for (a mapped page such as code, or
   * a file read with pread such as the database, given up by the kernel, e.g. to DAMON reclaim);
   * a switch, the CPU taken by another process or thread.
   */
  waits: { server: Waits; clients: Waits[] };
};

type SendFigures = {
  max: PhaseResult;
  half: PhaseResult;
  rate: number;
  /** BENCH_EXTRA_RATES: more paced phases (messages/s), for latency at other loads. */
  extra: { rate: number; result: PhaseResult }[];
};

type ChildMessage = {
  type: string;
  result?: SendResult;
  waits?: Waits;
  latency?: PhaseResult['latency'];
  deliveries?: number;
  msg?: string;
};

const clientScript = path.join(here, 'lib', 'messages-client.js');

/** A bench server whose `subscribers` users are all subscribed to one channel, `bench`. */
async function serverWithChannel(subscribers: number, tag: string, options: ServerOptions = {}) {
  const bench = await serverWithUsers(subscribers, tag, { server: options });
  try {
    const { server, users, realmId } = bench;
    const ids = users.map((u) => u.id);
    const channelId = await createChannel(server, realmId, ids[0]!, 'bench', ids);
    return { ...bench, channelId };
  } catch (err) {
    await bench.close();
    throw err;
  }
}

async function sendBench(
  seconds: number,
  subscribers: number,
  connections: number,
  mode: 'poll' | 'ws',
  durability: Durability,
  /** The server's group commit spacing (ms); undefined: its default. */
  commitSpacingMs: number | undefined,
): Promise<SendFigures> {
  const { server, users, dataDir, channelId } = await serverWithChannel(subscribers, 'send', {
    durability,
    ...(commitSpacingMs !== undefined ? { commitSpacingMs } : {}),
  });
  try {
    const base = {
      port: server.port,
      mode,
      receivers: users,
      sender: users[0],
      channelId,
      connections,
      pacedConnections: 64,
    };
    // BENCH_SPLIT_CLIENTS=1: senders and receivers in two processes (default: one for both).
    const split = process.env.BENCH_SPLIT_CLIENTS === '1';
    // The clients are the instrument: a scavenge there pauses every receiver, and the deliveries
    // read after it are stamped late and counted as the server's latency. With a young generation
    // of the server's size (npm start's flags) they come about four times less often.
    const client = () =>
      new ClientProcess<ChildMessage>(clientScript, [], undefined, [
        ...new Set([...process.execArgv, ...SERVER_NODE_FLAGS]),
      ]);
    const receivers = client();
    const senders = split ? client() : receivers;
    await receivers.request(
      { type: 'start', opts: { ...base, role: split ? 'receivers' : 'both' } },
      'receivers',
    );
    if (split)
      await senders.request({ type: 'start', opts: { ...base, role: 'senders' } }, 'senders');
    const queues = server.context.queues;
    const attached = () =>
      mode === 'poll'
        ? queues.consumers().waiting === subscribers
        : queues.consumers().streaming === subscribers;
    for (let i = 0; i < 500 && !attached(); i++) await sleep(10);

    const clients = split ? [receivers, senders] : [receivers];
    const clientWaits = () =>
      Promise.all(clients.map(async (c) => (await c.request({ type: 'waits' }, 'waits')).waits!));
    const phase = async (p: Phase, name: string): Promise<PhaseResult> => {
      const clientWaits0 = await clientWaits();
      const before = await commitCounters();
      const ck0 = server.store.checkpointStats;
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const old = oldGenerationGrowth();
      const gc = new GcLog();
      gc.start();
      const trace = new Trace();
      trace.start();
      const cpu0 = process.cpuUsage();
      const main0 = mainThreadCpuUs();
      const waits0 = waits();
      const sent = (await senders.request({ type: 'phase', phase: p }, name)).result!;
      const serverWaits = waits(waits0);
      const cpu = process.cpuUsage(cpu0);
      const mainUs = mainThreadCpuUs() - main0;
      const clientWaits1 = await clientWaits();
      loop.disable();
      gc.stop();
      const oldGrowth = old.stop();
      trace.stop();
      trace.write(`server-${mode}-${p.kind}-${Math.round(sent.from)}`, {
        from: sent.from,
        to: sent.to,
      });
      const ck1 = server.store.checkpointStats;
      const after = await commitCounters();
      const commits = {
        commits: after.commits - before.commits,
        sends: after.commands - before.commands,
      };
      const cpuPerSend = {
        server: (cpu.user + cpu.system) / commits.sends,
        serverMain: mainUs / commits.sends,
        client: sent.clientCpu.us / sent.clientCpu.sends,
      };
      const expected = sent.sent * subscribers;
      // The latencies stay in the client process, which computes their percentiles: received here
      // (half a million of them after a closed loop), they would be garbage in the server's heap
      // as the next phase begins (./lib/messages-client.ts).
      const deadline = performance.now() + 5000;
      const collect = async () => {
        await sleep(300);
        const c = await receivers.request(
          { type: 'collect', from: sent.from, to: sent.to },
          'deliveries',
        );
        return c.deliveries!;
      };
      let deliveries = await collect();
      while (deliveries < expected && performance.now() < deadline) deliveries = await collect();
      const { latency } = await receivers.request({ type: 'summary' }, 'latencies');
      return {
        ...sent,
        deliveries,
        expectedDeliveries: expected,
        commits,
        serverLoop: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
        cpuPerSend,
        wal: {
          holds: ck1.holds - ck0.holds,
          emptied: ck1.restarts - ck0.restarts,
          afresh: ck1.afresh - ck0.afresh,
          heldMs: ck1.heldMs - ck0.heldMs,
        },
        serverGc: gc.figures(sent.from, sent.to),
        oldGrowthPerSend: oldGrowth / commits.sends,
        waits: {
          server: serverWaits,
          clients: clientWaits1.map((w, i) => ({
            majorFaults: w.majorFaults - clientWaits0[i]!.majorFaults,
            diskBlocks: w.diskBlocks - clientWaits0[i]!.diskBlocks,
            involuntarySwitches: w.involuntarySwitches - clientWaits0[i]!.involuntarySwitches,
          })),
        },
        latency: latency!,
      };
    };
    const max = await profiled('send-max', () =>
      phase({ kind: 'max', durationMs: seconds * 1000, warmupMs: 1000 }, 'max rate'),
    );
    const rate = max.sent / max.seconds;
    const half = await profiled('send-half', () =>
      phase(
        { kind: 'paced', rate: rate / 2, durationMs: seconds * 1000, warmupMs: 1000 },
        'half rate',
      ),
    );
    const extra: { rate: number; result: PhaseResult }[] = [];
    for (const r of (process.env.BENCH_EXTRA_RATES ?? '').split(',').filter((x) => x !== '')) {
      const result = await phase(
        { kind: 'paced', rate: Number(r), durationMs: seconds * 1000, warmupMs: 1000 },
        `rate ${r}`,
      );
      extra.push({ rate: Number(r), result });
    }
    if (split) await senders.stop();
    await receivers.stop();
    return { max, half, rate, extra };
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- 4. pages: what a send's commit writes ------------------------------------------------------

type PagesFigures = {
  /** Sends per commit asked for (sent at once, so the realm actor commits them together). */
  batch: number;
  commits: number;
  pagesPerCommit: number;
  /** Mean pages per commit, by b-tree, largest first. */
  byBtree: [string, number][];
  /**
   * Pages per send of the commits that moved the unread index's watermark (transactions of
   * their own: src/storage/store.ts, ./unread.ts) during the rounds, which ran back to back.
   */
  unreadPerSend: number;
};

/**
 * After `warm` single sends (so that every subscriber's rows fill pages of their own), `rounds`
 * commits of `batch` sends each, POSTed at once: after each commit, the pages of the commits
 * written since the last, by b-tree (./lib/wal-pages.ts); the unread index's own commits apart.
 */
async function pagesBench(
  subscribers: number,
  warm: number,
  rounds: number,
  batches: number[],
): Promise<PagesFigures[]> {
  const { server, users, dataDir, channelId } = await serverWithChannel(subscribers, 'pages');
  try {
    const sender = users[0]!;
    const auth = 'Basic ' + Buffer.from(`${sender.email}:${sender.api_key}`).toString('base64');
    let n = 0;
    const send = async () => {
      const content = `t${Date.now()}.${n++} a message of a few words, number ${n}`;
      const r = await fetch(`http://127.0.0.1:${server.port}/api/v1/messages`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: `type=stream&to=${channelId}&topic=bench&content=${encodeURIComponent(content)}`,
      });
      if (r.status !== 200) throw new Error(`send: ${r.status} ${await r.text()}`);
    };
    for (let i = 0; i < warm; i++) await send();
    const file = path.join(dataDir, 'confab.sqlite3');
    const owners = new PageOwners(file);
    const wal = new WalCommits(`${file}-wal`);
    const out: PagesFigures[] = [];
    try {
      for (const batch of batches) {
        const tally = new Map<string, number>();
        let pages = 0;
        let commits = 0;
        let unreadPages = 0;
        wal.read();
        for (let i = 0; i < rounds; i++) {
          await Promise.all(Array.from({ length: batch }, send));
          if (i % 20 === 0) owners.refresh();
          // Every commit since the last round: the sends' (one, unless a WAL restart hid it),
          // the unread index's (they write its watermark), the checkpointer's (the header page).
          for (const commit of wal.read()) {
            const names = commit.map((page) => owners.of(page));
            if (names.includes('unread_watermark')) {
              unreadPages += commit.length;
            } else if (!commit.every((page) => page === 1)) {
              commits++;
              pages += commit.length;
              for (const name of names) tally.set(name, (tally.get(name) ?? 0) + 1);
            }
          }
        }
        out.push({
          batch,
          commits,
          pagesPerCommit: pages / commits,
          byBtree: [...tally]
            .sort((a, b) => b[1] - a[1])
            .map(([name, count]) => [name, count / commits]),
          unreadPerSend: unreadPages / (rounds * batch),
        });
      }
    } finally {
      owners.close();
    }
    return out;
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- 3. fetching --------------------------------------------------------------------------------

type LoadResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  /** Responses over the whole load, warm-up included. */
  answered: number;
};

type Seeded = {
  seedSeconds: number;
  reader: { email: string; api_key: string };
  target: number;
  middle: number;
};

/** The flags `npm start` gives Node (package.json's start script: `node [flags] dist/src/main.js`). */
function npmStartFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(here, '..', '..', 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = (pkg.scripts.start ?? '').split(/\s+/);
  const script = words.indexOf('dist/src/main.js');
  if (words[0] !== 'node' || script === -1)
    throw new Error(
      `package.json's start script is not node … dist/src/main.js: ${pkg.scripts.start}`,
    );
  return words.slice(1, script);
}

/**
 * The server under test as a process of its own, as `npm start` runs it on `dataDir` (its Node
 * flags, default configuration; rate limiting on, with a per-user rule far above the load so that
 * none is refused, as in the http bench), listening on a port the system picks, with
 * ./lib/server-probe.ts preloaded to measure it from inside on the bench's word.
 */
async function serverProcess(dataDir: string) {
  const main = path.join(here, '..', 'src', 'main.js');
  const probe = pathToFileURL(path.join(here, 'lib', 'server-probe.js')).href;
  // BENCH_PROFILE=<dir>: a CPU profile of the server's whole life (its fetches, after the seeding).
  const dir = process.env.BENCH_PROFILE;
  const profile = dir
    ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-name=fetch-server.cpuprofile']
    : [];
  const child = spawn(process.execPath, [...npmStartFlags(), ...profile, '--import', probe, main], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMITING_RULES: JSON.stringify({ api_by_user: [[60, 1e12]] }),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const deadline = performance.now() + 60_000;
    let m: RegExpExecArray | null = null;
    while (!(m = /Confab listening on http:\/\/[^:/]+:(\d+)/.exec(out))) {
      if (child.exitCode !== null || performance.now() > deadline)
        throw new Error(`the server did not start:\n${out}`);
      await sleep(50);
    }
    const port = Number(m[1]);
    const probeFigures = (type: 'start' | 'stop') =>
      new Promise<ProbeFigures>((resolve) => {
        if (type === 'start') {
          child.send({ type }, () => resolve(undefined as unknown as ProbeFigures));
          return;
        }
        child.once('message', (f: ProbeFigures) => resolve(f));
        child.send({ type });
      });
    return { port, probe: probeFigures, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

type FetchFigures = {
  seedSeconds: number;
  newest: LoadResult[];
  middle: LoadResult[];
  /** A bare uWS route answering the newest 100's bytes, on one connection: the same-run floor. */
  bareNewest: LoadResult;
  /**
   * What the server's process allocated on its heap per newest-100 fetch over the one-connection
   * load (warm-up included), and the collections meanwhile; its CPU time per fetch (user and
   * system, all its threads) and its event loop's delay.
   */
  allocation: ProbeFigures & { fetches: number; bytesPerFetch: number; cpuPerFetchUs: number };
};

async function fetchBench(
  seconds: number,
  total: number,
  /** BENCH_FETCH_LOADS: "all" (default), or "newest" for the newest 100 on one connection only. */
  loads: 'all' | 'newest',
): Promise<FetchFigures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-fetch-'));
  try {
    // Seeded by a process of its own; the server under test starts on the data directory after.
    const seeded = await runChild<Seeded>('fetch-seed.js', { dataDir, total }, 3_600_000);
    const server = await serverProcess(dataDir);
    try {
      const { reader } = seeded;
      const narrow = encodeURIComponent(
        JSON.stringify([{ operator: 'channel', operand: seeded.target }]),
      );
      const auth = {
        Authorization:
          'Basic ' + Buffer.from(`${reader.email}:${reader.api_key}`).toString('base64'),
      };
      const pathOf = (anchor: string) =>
        `/api/v1/messages?anchor=${anchor}&num_before=100&num_after=0&narrow=${narrow}`;
      const load = (anchor: string, connections: number, port = server.port, s = seconds) =>
        runChild<LoadResult>(
          'loadgen.js',
          {
            port,
            path: pathOf(anchor),
            headers: auth,
            connections,
            durationMs: s * 1000,
            warmupMs: 1000,
          },
          (s + 30) * 1000,
        );
      const middle = String(seeded.middle);
      // A server that has just started is still compiling its request path and finishing its
      // start's old-generation collections (one fell in a measured window): it serves the same
      // load unmeasured for a few seconds first, as a server in use has long done.
      await load('newest', 1, server.port, 4);
      let allocation: FetchFigures['allocation'] | undefined;
      // The floor of this transport on this machine, in the same run: a bare uWS route answering
      // the same bytes (no parsing, no auth, no query), one connection, just before Confab's.
      const answer = await fetch(`http://127.0.0.1:${server.port}${pathOf('newest')}`, {
        headers: auth,
      });
      if (answer.status !== 200) throw new Error(`fetch: ${answer.status} ${await answer.text()}`);
      const bytes = Buffer.from(await answer.arrayBuffer());
      const app = createBareApp();
      app.get('/api/v1/messages', (res) => {
        res.cork(() => {
          res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(bytes);
        });
      });
      const bare = await listen(app, '127.0.0.1', 0);
      let bareNewest: LoadResult;
      try {
        bareNewest = await load('newest', 1, bare.port);
      } finally {
        closeListenSocket(bare.socket);
      }
      const newest = await (async () => {
        await server.probe('start');
        const one = await load('newest', 1);
        const figures = await server.probe('stop');
        const fetches = one.answered;
        allocation = {
          ...figures,
          fetches,
          bytesPerFetch: figures.bytes / fetches,
          cpuPerFetchUs: figures.cpuUs / fetches,
        };
        return loads === 'all' ? [one, await load('newest', 4)] : [one];
      })();
      const mid = loads === 'all' ? [await load(middle, 1), await load(middle, 4)] : [];
      return {
        seedSeconds: seeded.seedSeconds,
        newest,
        middle: mid,
        bareNewest,
        allocation: allocation!,
      };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- the bench ----------------------------------------------------------------------------------

/** "12 young (longest 1.9 ms), 1 old (longest 14.2 ms)". */
const gcText = (g: GcFigures) =>
  `${g.minor.n} young (longest ${fmt(g.minor.max)} ms), ${g.major.n} old (longest ${fmt(g.major.max)} ms)`;

export async function messagesBench(): Promise<void> {
  // The send part's server runs in this process: it runs with the Node flags `npm start` gives the
  // server (src/node-flags.ts: its young generation), as the fetch part's server does. Started
  // without them, the bench runs again in a process that has them.
  if (!SERVER_NODE_FLAGS.every((f) => process.execArgv.includes(f))) {
    const again = spawn(
      process.execPath,
      [...process.execArgv, ...SERVER_NODE_FLAGS, ...process.argv.slice(1)],
      { stdio: 'inherit' },
    );
    const code = await new Promise<number | null>((r) => again.once('exit', (c) => r(c)));
    if (code !== 0)
      throw new Error(`the messages bench with the server's flags exited with ${code}`);
    return;
  }
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const subscribers = Number(process.env.BENCH_SUBSCRIBERS ?? 50);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
  const modes = (process.env.BENCH_MODE ?? 'poll,ws')
    .split(',')
    .filter((m): m is 'poll' | 'ws' => m === 'poll' || m === 'ws');
  const fetchTotal = Number(process.env.BENCH_FETCH_MESSAGES ?? 1_000_000);
  const parts = new Set((process.env.BENCH_PARTS ?? 'raw,send,fetch').split(','));
  // BENCH_SPACING=5,0: the send phases once per group commit spacing (ms), in one run.
  const spacings: (number | undefined)[] =
    process.env.BENCH_SPACING === undefined
      ? [undefined]
      : process.env.BENCH_SPACING.split(',').map(Number);
  const durabilities = (process.env.BENCH_DURABILITY ?? 'normal,full')
    .split(',')
    .filter((d): d is Durability => d === 'normal' || d === 'full');
  console.log(
    `messages bench: ${subscribers} subscribers (${modes.join(', ')}), ${connections} sending connections, durability ${durabilities.join(' and ')}, ${seconds} s per figure, ${machine()}, ${os.cpus().length} cores`,
  );
  const out: Record<string, unknown> = {
    bench: 'messages',
    date: new Date().toISOString(),
    subscribers,
    connections,
  };

  for (const durability of durabilities) {
    const tag = durabilities.length > 1 ? ` [${durability}]` : '';
    const key = durability === 'normal' ? '' : `_${durability}`;
    let ceiling: number | null = null;
    if (parts.has('raw')) {
      const raw = rawCeiling(seconds, subscribers, false, durability);
      const rawBg = rawCeiling(seconds, subscribers, true, durability);
      ceiling = Math.max(raw.rate, rawBg.rate);
      console.log(
        `raw SQLite ceiling${tag} (1 message + ${subscribers} rows + index entry per transaction): ${fmt(raw.rate, 0)} messages/s` +
          ` (${fmt(rawBg.rate, 0)}/s with the server's background checkpoints)`,
      );
      out[`raw${key}`] = raw;
      out[`rawBackgroundCheckpoint${key}`] = rawBg;
    }
    if (parts.has('send')) {
      for (const [mode, spacing] of modes.flatMap((m) => spacings.map((sp) => [m, sp] as const))) {
        const s = await sendBench(seconds, subscribers, connections, mode, durability, spacing);
        const row = (name: string, r: PhaseResult) =>
          `${name.padEnd(30)} ${fmt(r.sent / r.seconds, 0).padStart(6)} sends/s  ${fmt(r.deliveries / r.seconds, 0).padStart(7)} deliveries/s  ` +
          `p50 ${fmt(r.latency.p50)} ms  p99 ${fmt(r.latency.p99)} ms  max ${fmt(r.latency.max)} ms  ` +
          `(errors ${r.errors}, delivered ${r.deliveries}/${r.expectedDeliveries}${r.skipped ? `, pacer skipped ${r.skipped}` : ''}; ` +
          `${fmt(r.commits.sends / r.commits.commits, 2)} sends per commit; ` +
          `client loop delay p99 ${fmt(r.clientLoop.p99)} ms, max ${fmt(r.clientLoop.max)} ms; ` +
          `server loop delay p99 ${fmt(r.serverLoop.p99)} ms, max ${fmt(r.serverLoop.max)} ms; ` +
          `GC pauses: server ${gcText(r.serverGc)}, client ${gcText(r.clientGc)}; ` +
          `major page faults: server ${r.waits.server.majorFaults}, client ${r.waits.clients.map((w) => w.majorFaults).join(' + ')}; ` +
          `blocks read from disk: server ${r.waits.server.diskBlocks}, client ${r.waits.clients.map((w) => w.diskBlocks).join(' + ')}; ` +
          `involuntary context switches: server ${r.waits.server.involuntarySwitches}, client ${r.waits.clients.map((w) => w.involuntarySwitches).join(' + ')}; ` +
          `server's old generation +${fmt(r.oldGrowthPerSend / 1024, 2)} KB per send; ` +
          `CPU per send: server ${fmt(r.cpuPerSend.server, 0)} µs (main thread ${fmt(r.cpuPerSend.serverMain, 0)}), client ${fmt(r.cpuPerSend.client, 0)} µs; ` +
          `WAL held ${r.wal.holds} (${fmt(r.wal.heldMs, 1)} ms in all), emptied ${r.wal.emptied}, started afresh by the checkpointer ${r.wal.afresh})`;
        const label =
          (mode === 'ws' ? 'WebSocket' : 'long-poll') +
          tag +
          (spacing !== undefined ? ` [spacing ${spacing} ms]` : '');
        console.log(row(`${label}: max rate (closed loop)`, s.max));
        console.log(row(`${label}: half rate (${fmt(s.rate / 2, 0)}/s)`, s.half));
        for (const x of s.extra) console.log(row(`${label}: paced at ${x.rate}/s`, x.result));
        if (ceiling) {
          console.log(
            `${label}: sends/s vs raw ceiling (${fmt(ceiling, 0)}/s) ${fmt((100 * s.rate) / ceiling, 1)}% (target ≥ 100%, issue 31); ` +
              `p99 send-to-delivery at half rate ${fmt(s.half.latency.p99)} ms (target < 20 ms)`,
          );
        }
        out[`send_${mode}${key}${spacing !== undefined ? `_spacing${spacing}` : ''}`] = s;
      }
    }
  }
  if (parts.has('pages')) {
    const warm = Number(process.env.BENCH_PAGES_WARM ?? 2000);
    const rounds = Number(process.env.BENCH_PAGES_ROUNDS ?? 100);
    const batches = (process.env.BENCH_PAGES_BATCH ?? '1,2,4').split(',').map(Number);
    const figures = await pagesBench(subscribers, warm, rounds, batches);
    for (const f of figures) {
      console.log(
        `pages: ${f.batch} send(s) per commit to ${subscribers} subscribers (after ${warm} sends): ` +
          `${fmt(f.pagesPerCommit, 1)} pages per commit (${fmt(f.pagesPerCommit / f.batch, 1)} per send), ` +
          `${f.commits} commits: ` +
          f.byBtree.map(([name, mean]) => `${name} ${fmt(mean, 1)}`).join(', ') +
          `; + ${fmt(f.unreadPerSend, 1)} per send in the unread index's own commits`,
      );
    }
    out.pages = figures;
  }
  if (parts.has('fetch')) {
    const f = await fetchBench(
      seconds,
      fetchTotal,
      process.env.BENCH_FETCH_LOADS === 'newest' ? 'newest' : 'all',
    );
    console.log(
      `fetch: seeded ${fetchTotal.toLocaleString('en-US')} messages through the store in ${fmt(f.seedSeconds, 1)} s (a process of its own), then started the server on them as its own process`,
    );
    const row = (name: string, r: LoadResult, c: number) =>
      `${name.padEnd(34)} ${String(c).padStart(2)} conn  ${fmt(r.rps, 0).padStart(6)} req/s  p50 ${fmt(r.p50)} ms  p99 ${fmt(r.p99)} ms  max ${fmt(r.max)} ms  errors ${r.errors}`;
    console.log(row('bare uWS, the same bytes', f.bareNewest, 1));
    console.log(row('GET /messages newest 100', f.newest[0]!, 1));
    console.log(
      `  newest 100 on one connection: p99 ${fmt(f.newest[0]!.p99)} ms (target < 1.5 ms, issue 31), ` +
        `bare route p99 ${fmt(f.bareNewest.p99)} ms in the same run`,
    );
    const a = f.allocation;
    console.log(
      `  server per newest-100 fetch: ${fmt(a.cpuPerFetchUs, 0)} µs of CPU, ${fmt(a.bytesPerFetch / 1024, 1)} KB of heap allocated ` +
        `(${a.fetches} fetches; ${a.scavenges} young-generation collections, one per ${fmt(a.fetches / Math.max(1, a.scavenges), 0)} fetches, ` +
        `${fmt(a.gcMs)} ms in all collections, the longest ${fmt(a.gcMaxMs)} ms; ${a.others} others); ` +
        `its event loop's delay p99 ${fmt(a.loop.p99)} ms, max ${fmt(a.loop.max)} ms; ` +
        `young generation ${fmt(a.newSpaceMb.start, 0)} MB at the start, ${fmt(a.newSpaceMb.end, 0)} MB at the end`,
    );
    if (f.newest[1]) console.log(row('GET /messages newest 100', f.newest[1], 4));
    if (f.middle[0]) console.log(row('GET /messages 100 before a middle anchor', f.middle[0], 1));
    if (f.middle[1]) console.log(row('GET /messages 100 before a middle anchor', f.middle[1], 4));
    out.fetch = f;
  }
  console.log(JSON.stringify(out));
}
