/**
 * startServer() in cluster mode (CONFAB_TEST_CLUSTER=1; docs/cluster.md "Tests"): the test's
 * server is node n1 of a three-node cluster, and `url`, `api` and `server.url`/`server.port` are
 * those of nginx in front of the three nodes, so the test's requests reach every node.
 *
 * - n1 runs in the test process (tests look into its store, realms, queues and event tap); it
 *   creates the fixture realm, whose rows go through the log (seedRealm, ClusterNode.addRealm),
 *   and owns it: its copy and its tap hold every acknowledged write.
 * - n2 and n3 run in two host processes (cluster-host.ts), forked once per test process, with the
 *   test's options (those that can cross a process: not `clock` or `eventTap`).
 * - NATS: three servers in one JetStream cluster, those CONFAB_TEST_NATS names (the cluster
 *   subset test starts them once for all its files) or, without it, started once per test
 *   process. Each test server gets its own namespace (CLUSTER_NAMESPACE), removed at teardown.
 * - CONFAB_TEST_CLUSTER_QUEUES=n1: new event queues all go to n1 (for tests that look into its
 *   queues); otherwise to any node, like everything but a queue's own requests.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import type { Test } from 'tap';
import { clusterNames, clusterStreams, connectJetStream } from '../../src/cluster/jetstream.js';
import {
  alive,
  localNatsIsUnsafe,
  ports,
  sleep,
  startNatsCluster,
  startProxy,
} from '../../src/cluster/local.js';
import type { ClusterOptions } from '../../src/cluster/node.js';
import { createServer, type ConfabServer, type ServerOptions } from '../../src/server.js';
import { ApiClient } from './api.js';
import type { HostCommand, HostReply } from './cluster-host.js';
import { seedRealm } from './fixtures.js';
import { plainFork } from './plain-node.js';
import { recordingTap, TEST_SERVER_OPTIONS, type TappedEvent, type TestServer } from './server.js';

const HOST_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cluster-host.js');

/**
 * Longer than the default (3 s): n1 shares the test process with the test, whose steps may keep
 * the event loop longer than a default lease; failover is not what these tests are about.
 */
const LEASE_MS = 60_000;

/**
 * The read barrier's budget: longer than the default (5 s), for the same reason. On the 2-core
 * machine running the whole suite (two tap jobs, each with its NATS servers and nodes) a node
 * answered an upload 503 "catching up", most plausibly its 5 s budget run out. A budget run out
 * under load is not what these tests are about; test/unit/read-barrier.test.ts tests it. A copy
 * whose progress watch calls it stalled still answers 503 at once, under this budget too
 * (docs/cluster.md "Guarantees": a loaded but live copy is not called so).
 */
const READ_BARRIER_MS = 30_000;
/**
 * How long a forwarded write waits for the owner to say it received it (default 1 s): a loaded
 * owner slower than that is not what these tests are about; test/cluster/forwarding.test.ts is.
 */
const FORWARD_ACK_MS = 30_000;

type Host = {
  name: string;
  ask(c: HostCommand): Promise<Extract<HostReply, { ok: true }>>;
  child: ChildProcess;
};

type Shared = {
  dir: string;
  natsUrls: string[];
  hosts: Host[];
  /** The processes to stop when this process ends (NATS servers, proxies). */
  pids: Set<number>;
};

let shared: Promise<Shared> | null = null;
let serial = 0;
/** The next test server's namespace, made while the current test runs (that takes seconds). */
let prepared: Promise<string> | null = null;

/** A new namespace with its stream and buckets made, as the first node to join would. */
async function prepareNamespace(natsUrls: string[]): Promise<string> {
  const namespace = `t${process.pid}x${++serial}`;
  const { nc } = await connectJetStream({
    servers: natsUrls,
    node: 'prepare',
    replicas: 3,
    names: clusterNames(namespace),
    allowUnsafeNats: localNatsIsUnsafe(),
  });
  await nc.close();
  return namespace;
}

/** Forks a node host; resolves once it is ready for commands. */
function forkHost(dir: string, name: string): Promise<Host> {
  const log = path.join(dir, 'logs', `${name}.log`);
  const fd = fs.openSync(log, 'a');
  const child = fork(HOST_SCRIPT, [], {
    ...plainFork(),
    stdio: ['ignore', fd, fd, 'ipc'],
    serialization: 'advanced',
  });
  fs.closeSync(fd);
  let waiting: { resolve: (r: HostReply) => void; reject: (e: Error) => void } | null = null;
  let gone: Error | null = null;
  // Idle, the host keeps nothing of the test process alive (its exit handler stops the host).
  const idle = () => {
    child.unref();
    child.channel?.unref();
  };
  child.on('message', (r: HostReply) => {
    const w = waiting;
    waiting = null;
    idle();
    w?.resolve(r);
  });
  child.on('exit', (code, signal) => {
    gone = new Error(`node host ${name} exited (${code ?? signal}); its log: ${log}`);
    waiting?.reject(gone);
    waiting = null;
  });
  const next = () =>
    new Promise<HostReply>((resolve, reject) => {
      if (gone) return reject(gone);
      waiting = { resolve, reject };
      child.ref();
      child.channel?.ref();
    });
  const ask = async (c: HostCommand) => {
    const reply = next();
    child.send(c);
    const r = await reply;
    if (!r.ok) throw new Error(`node host ${name}: ${r.error}`);
    return r;
  };
  return next().then(() => ({ name, ask, child }));
}

/** How long the proxy in front of a test's nodes has to answer server_settings with a 200. */
const PROXY_PATIENCE_MS = 45_000;

/** GET server_settings: the status, or what went wrong, with the body of an answer not a 200. */
async function serverSettings(base: string): Promise<string> {
  try {
    const r = await fetch(`${base}/api/v1/server_settings`, { signal: AbortSignal.timeout(2000) });
    const body = await r.text();
    return r.status === 200 ? '200' : `${r.status} ${body.slice(0, 200)}`;
  } catch (err) {
    return String((err as Error).cause ?? err);
  }
}

/**
 * The last lines of a log file, on one line ('(none)' when there is none): for a failure's
 * message, as the test's teardown removes the file.
 */
function tail(file: string, lines = 5): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join(' | ');
  } catch {
    return '(none)';
  }
}

async function startShared(): Promise<Shared> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-test-cluster-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  const pids = new Set<number>();
  const hosts: Host[] = [];
  const cleanup = () => {
    for (const h of hosts) h.child.kill('SIGKILL');
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  // Killed (a test runner's timeout): the same, then die of the signal as before.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      cleanup();
      process.kill(process.pid, signal);
    });
  let natsUrls = (process.env.CONFAB_TEST_NATS ?? '').split(',').filter((u) => u !== '');
  if (natsUrls.length === 0) {
    const nats = await startTestNats(dir);
    for (const pid of nats.pids) pids.add(pid);
    natsUrls = nats.urls;
  }
  hosts.push(...(await Promise.all(['n2', 'n3'].map((n) => forkHost(dir, n)))));
  return { dir, natsUrls, hosts, pids };
}

/**
 * Three NATS servers in one JetStream cluster on free ports (their files under `dir`, which has a
 * `logs` folder); resolves once they place three-replica streams.
 */
export async function startTestNats(dir: string): Promise<{ urls: string[]; pids: number[] }> {
  const p = await ports(6);
  const nats = await startNatsCluster(dir, p.slice(0, 3), p.slice(3));
  return { urls: nats.map((n) => `nats://127.0.0.1:${n.port}`), pids: nats.map((n) => n.pid) };
}

/** Removes a test server's stream and buckets from the NATS cluster. */
async function dropNamespace(natsUrls: string[], namespace: string): Promise<void> {
  const nc = await connect({ servers: natsUrls });
  try {
    // Without the API check, which answers 503 while JetStream elects a leader.
    const jsm = await nc.jetstreamManager({ checkAPI: false });
    for (const s of clusterStreams(clusterNames(namespace)))
      await jsm.streams.delete(s).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

export async function startClusterServer(t: Test, opts: ServerOptions): Promise<TestServer> {
  const sh = await (shared ??= startShared());
  const namespace = await (prepared ?? prepareNamespace(sh.natsUrls));
  prepared = prepareNamespace(sh.natsUrls);
  prepared.catch(() => undefined); // a failure shows when the next test server awaits it
  const dataDir = opts.dataDir ?? t.testdir();
  const events: TappedEvent[] = [];
  const common: ServerOptions = { ...TEST_SERVER_OPTIONS, trustedProxies: ['127.0.0.1'] };
  const cluster = (node: string): ClusterOptions => ({
    servers: sh.natsUrls,
    node,
    replicas: 3,
    namespace,
    leaseMs: LEASE_MS,
    readBarrierMs: READ_BARRIER_MS,
    forwardAckMs: FORWARD_ACK_MS,
    // Only where the fetched nats-server is missing and the PATH's is too old (it warns).
    allowUnsafeNats: localNatsIsUnsafe(),
  });
  // What the other nodes get of the test's options: all but functions and n1's own.
  const {
    clock: _clock,
    eventTap: _eventTap,
    verboseSql: _verboseSql,
    lock: _lock,
    dataDir: _dataDir,
    ...portable
  } = opts;
  const work = path.join(sh.dir, namespace);
  fs.mkdirSync(path.join(work, 'logs'), { recursive: true });
  /** n1, once made (the teardown closes it). */
  let made: ConfabServer | null = null;
  const started: Host[] = [];
  let proxyPid = 0;
  t.teardown(async () => {
    const proxy = proxyPid;
    if (proxy > 0 && alive(proxy)) process.kill(proxy, 'SIGTERM');
    sh.pids.delete(proxy);
    // The others first: n1 gives the realm's lease up as it stops, and a node still running
    // would take the realm over.
    await Promise.all(started.map((h) => h.ask({ cmd: 'stop' })));
    await made?.close();
    while (proxy > 0 && alive(proxy)) await sleep(20);
    fs.rmSync(work, { recursive: true, force: true });
    // In the background: the next test need not wait for it.
    dropNamespace(sh.natsUrls, namespace).catch(() => undefined);
  });
  // The nodes listen on ports the kernel gives them (port 0): free when taken, and never one that
  // ports() hands another test in the meantime (those are below the ephemeral range). A port
  // chosen ahead and taken by another process in between failed the node's start, or, before
  // listening was exclusive, shared the port with an unrelated server (src/http/uws.ts listen).
  // n1 creates the fixture realm (claiming its lease first) while the other nodes start: they
  // apply its log from wherever they join, and never hold the realm's lease.
  const [{ server, fx }, ...hostUrls] = await Promise.all([
    (async () => {
      const server = (made = await createServer({
        ...common,
        ...opts,
        port: 0,
        dataDir,
        queueIdPrefix: 'n1-',
        cluster: cluster('n1'),
        eventTap: recordingTap(events, opts.eventTap),
      }));
      return { server, fx: await seedRealm(server) };
    })(),
    ...sh.hosts.map(async (h) => {
      started.push(h);
      const r = await h.ask({
        cmd: 'start',
        options: {
          ...common,
          ...portable,
          port: 0,
          dataDir: path.join(work, h.name),
          queueIdPrefix: `${h.name}-`,
          cluster: cluster(h.name),
        },
      });
      return r.url!;
    }),
  ]);
  const nodes = [
    { name: 'n1', port: server.port },
    ...sh.hosts.map((h, i) => ({ name: h.name, port: Number(new URL(hostUrls[i]!).port) })),
  ];
  const queuesOn = process.env.CONFAB_TEST_CLUSTER_QUEUES || undefined;
  // nginx on a port chosen here: if another process took it meanwhile, nginx cannot listen and
  // exits; then again on another.
  let url = '';
  for (let attempt = 1; url === ''; attempt++) {
    const [proxyPort] = (await ports(1)) as [number];
    const pid = (proxyPid = startProxy(work, proxyPort, nodes, queuesOn));
    sh.pids.add(pid);
    const candidate = `http://127.0.0.1:${proxyPort}`;
    for (const deadline = Date.now() + PROXY_PATIENCE_MS; ; await sleep(20)) {
      const last = await serverSettings(candidate);
      if (last === '200') {
        url = candidate;
        break;
      }
      if (!alive(pid) && attempt < 3) break;
      if (Date.now() > deadline || !alive(pid))
        throw new Error(
          `the proxy did not answer 200 in ${PROXY_PATIENCE_MS / 1000} s ` +
            `(nginx ${alive(pid) ? 'running' : 'gone'}; last answer: ${last}; ` +
            `its error log ends: ${tail(path.join(work, 'logs', 'nginx.error.log'))})`,
        );
    }
    if (url === '') sh.pids.delete(pid);
  }
  const proxyPort = Number(new URL(url).port);
  // The test's server: n1, but addressed through the proxy.
  const front = Object.create(server, {
    url: { value: url },
    port: { value: proxyPort },
  }) as ConfabServer;
  return { server: front, url, api: new ApiClient(url, fx), fx, dataDir, events };
}
