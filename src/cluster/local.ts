/**
 * A whole cluster on loopback, for trying it and for tests (docs/cluster.md "Running it"):
 * N NATS servers with JetStream in one NATS cluster, N Confab nodes, and nginx in front.
 * Everything it starts is recorded in DIR/cluster.json, logs go to DIR/logs.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  natsVersionIsSafe,
  placesReplicas,
  SAFE_NATS_VERSION,
  STARTUP_PATIENCE_MS,
} from './jetstream.js';
import { SERVER_NODE_FLAGS } from '../node-flags.js';

export type NodeRecord = {
  name: string;
  port: number;
  pid: number;
  dataDir: string;
  /** This node's own environment, on top of the cluster's (CLUSTER_SEED on the seeding node). */
  env?: Record<string, string>;
  /**
   * The pid of the node's supervisor (src/cluster/supervise.ts), which starts the node again when
   * it exits; absent: the node runs unsupervised. `pid` is then the node's pid when last started:
   * `nodePid` reads the current one.
   */
  supervisor?: number;
};

export type ClusterRecord = {
  dir: string;
  url: string;
  proxyPort: number;
  natsUrls: string[];
  nats: { pid: number; port: number }[];
  nodes: NodeRecord[];
  proxyPid: number;
  owner: { email: string; api_key: string; password: string };
  env: Record<string, string>;
  /** Whether its nodes run under supervisors (UpOptions.supervise). */
  supervised?: boolean;
};

export type UpOptions = {
  dir: string;
  nodes: number;
  /** How many NATS servers (the log's replicas, at most 3); default: one per node. */
  natsServers?: number;
  /** First of 2S+N+1 consecutive ports (S NATS servers); default: free ports the system picks. */
  basePort?: number;
  /** Extra environment for the Confab nodes. */
  env?: Record<string, string>;
  /**
   * Run each node under a supervisor that starts it again when it exits (src/cluster/supervise.ts;
   * `npm run cluster -- up` does). Default false: a node killed stays down until `startNodeAgain`.
   */
  supervise?: boolean;
  /**
   * A single-process data directory (stopped) to move onto the cluster: node 1 starts alone on a
   * copy of it with CLUSTER_SEED=1 (docs/cluster.md "Moving an existing server onto a cluster"),
   * the others once it serves; no first realm is created (the record's owner stays empty).
   */
  seedFrom?: string;
};

const NODE_MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.js');
const SUPERVISOR_MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'supervise.js');

/**
 * Where `npm run fetch-nats-server` (scripts/fetch-nats-server.mjs) puts a nats-server recent
 * enough for a cluster's fencing (docs/cluster.md "NATS version"): used before the PATH's.
 */
export const FETCHED_NATS_SERVER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  '.cache',
  'nats-server',
  'nats-server',
);

/** Whether this machine has what a local cluster needs (tests skip without it). */
export function missingEngines(): string | null {
  for (const bin of ['nats-server', 'nginx']) {
    if (bin === 'nats-server' && fs.existsSync(FETCHED_NATS_SERVER)) continue;
    const r = spawnSync('sh', ['-c', `command -v ${bin} || test -x /usr/sbin/${bin}`]);
    if (r.status !== 0) return bin;
  }
  return null;
}

export function binary(name: string): string {
  if (name === 'nats-server' && fs.existsSync(FETCHED_NATS_SERVER)) return FETCHED_NATS_SERVER;
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return found !== '' ? found : `/usr/sbin/${name}`;
}

/** The version a nats-server binary reports (`nats-server: v2.10.27`: `2.10.27`); '' if none. */
export function natsServerVersion(bin: string): string {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return /v?(\d+\.\d+\.\d+\S*)/.exec(`${r.stdout ?? ''}${r.stderr ?? ''}`)?.[1] ?? '';
}

/** localNatsIsUnsafe's answers, by binary: each is asked and warned about once per process. */
const unsafeBinaries = new Map<string, boolean>();

/**
 * Whether the nats-server binary a local cluster runs (`binary`: the fetched one, else the PATH's)
 * is older than SAFE_NATS_VERSION: the nodes of such a cluster (`up`, the tests' clusters) then
 * run only because they are given CLUSTER_ALLOW_UNSAFE_NATS=1 (allowUnsafeNats), and this says so
 * on stderr. It happens where `npm run fetch-nats-server` failed or never ran and only Debian
 * 12's 2.9.10 is installed; the cluster then works, without the fencing's guarantee.
 */
export function localNatsIsUnsafe(bin = binary('nats-server')): boolean {
  const known = unsafeBinaries.get(bin);
  if (known !== undefined) return known;
  const version = natsServerVersion(bin);
  const unsafe = !natsVersionIsSafe(version);
  unsafeBinaries.set(bin, unsafe);
  if (unsafe)
    console.error(
      `WARNING: the nats-server of local clusters, ${bin}, is ${version || 'of unknown version'}, ` +
        `older than ${SAFE_NATS_VERSION.join('.')}: two nodes may both win a lease or append ` +
        'after the same log entry (nats-server issue 4320; docs/cluster.md "NATS version"). The ' +
        "local cluster's nodes run on it with CLUSTER_ALLOW_UNSAFE_NATS=1; " +
        '`npm run fetch-nats-server` fetches 2.10.27 into .cache/nats-server/.',
    );
  return unsafe;
}

/** The environment a local cluster's node needs for its nats-server (see localNatsIsUnsafe). */
export function localNatsEnv(): Record<string, string> {
  return localNatsIsUnsafe() ? { CLUSTER_ALLOW_UNSAFE_NATS: '1' } : {};
}

/** Listens on `port` (0: any) on loopback and closes again; the port, or null if it is taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(null));
    s.listen(port, '127.0.0.1', () => {
      const bound = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(bound));
    });
  });
}

/** The range outgoing connections take their local ports from (Linux), or null if unknown. */
function ephemeralPorts(): [number, number] | null {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'latin1')
      .trim()
      .split(/\s+/)
      .map(Number);
    return low! > 0 && high! >= low! ? [low!, high!] : null;
  } catch {
    return null;
  }
}

/** Ports below the ephemeral range are picked from here up. */
const LOW_PORTS_FROM = 10_000;

/**
 * Where `ports` claims the ports it hands out, one file per port holding the claiming process's
 * pid, shared by every process of the machine (tests run two files at once, each starting NATS
 * servers, nodes and nginx on ports it picked). A port is free when nothing listens on it, but a
 * node binds its port only once it has caught up with the log, tens of seconds after the pick on a
 * loaded machine, and a killed node's port is free until it is started again: another process
 * picking it meanwhile took it (the node then never listened; its supervisor started it again and
 * again). A port claimed by a live process is not handed out again.
 */
export const PORT_CLAIMS_DIR = path.join(os.tmpdir(), 'confab-port-claims');

/** A claim older than this is void (its pid may be another process's by now). */
const CLAIM_VALID_MS = 24 * 60 * 60 * 1000;

/**
 * Claims `port` for this process (PORT_CLAIMS_DIR): false when a live process other than this one
 * holds a valid claim on it. A claim of a process that is gone is taken over. Where claims cannot
 * be written (the directory another user made, a read-only /tmp) the port is handed out unclaimed,
 * as before claims: they keep this machine's tests apart, they must not stop a cluster's start.
 * `test` (tests only): the claiming pid, and a call between judging a claim void and taking it over.
 */
export function claimPort(
  port: number,
  dir = PORT_CLAIMS_DIR,
  test: { pid?: number; judged?: () => void } = {},
): boolean {
  try {
    return claimPortIn(dir, port, test.pid ?? process.pid, test.judged);
  } catch {
    return true;
  }
}

function claimPortIn(dir: string, port: number, pid: number, judged?: () => void): boolean {
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir, { recursive: true });
    // Shared by every user's tests, as /tmp is: each removes only its own files.
    fs.chmodSync(dir, 0o1777);
  }
  const file = path.join(dir, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(pid), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let text: string;
    let age: number;
    try {
      text = fs.readFileSync(file, 'latin1');
      age = Date.now() - fs.statSync(file).mtimeMs;
    } catch {
      continue; // released meanwhile: claimed again
    }
    const holder = Number(text);
    if (holder === pid) return true;
    // Written but not yet read back whole (the write is not atomic): a live claim.
    if (!(holder > 0) && age < 1000) return false;
    if (holder > 0 && running(holder) && age < CLAIM_VALID_MS) return false;
    judged?.();
    return takeOver(file, text, pid);
  }
  return false;
}

/**
 * A takeover's lock held longer than this is void though its holder's pid runs (a process stopped
 * while taking over, or the pid another process's by now): taking over takes microseconds.
 */
const TAKEOVER_LOCK_VOID_MS = 10_000;

/**
 * Replaces the claim `file`, judged void while it held `stale`, by `pid`'s: false when another
 * process took it over first. Under a lock of its own (takeoverLock: held by one process only), in
 * which the claim is read again: two processes finding the same void claim each removed it and
 * wrote their own, the second removing the first's new claim, and both were handed the port.
 */
function takeOver(file: string, stale: string, pid: number): boolean {
  const release = takeoverLock(`${file}.takeover`, pid);
  if (release === null) return false; // another process is taking it over: another port
  try {
    let now: string | null;
    try {
      now = fs.readFileSync(file, 'latin1');
    } catch {
      now = null;
    }
    if (now !== null && now !== stale) return false;
    fs.rmSync(file, { force: true });
    fs.writeFileSync(file, String(pid), { flag: 'wx' });
    return true;
  } catch (err) {
    // Claimed afresh between the removal and the write.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    release();
  }
}

/**
 * Takes the takeover lock `lock` for `pid`: its release, or null when another process holds it.
 * The lock is a directory holding one entry named `<pid>.<nonce>`, its holder: made beside it with
 * its entry, then renamed into place, which fails while a lock with an entry is there. A lock whose
 * holder is gone (or held longer than TAKEOVER_LOCK_VOID_MS: a process stopped while taking over)
 * is cleared by moving that holder's entry out by its name, which fails once the lock is another
 * (a lock taken since has another entry): a stat then the removal of whatever lock was there
 * removed, when another process had cleared the void lock and taken it in between, that process's
 * lock, and a third then took it while it still held it. The lock left empty is replaced by the
 * next rename (or removed; a lock being taken is never empty). `judged` (tests only): called
 * between judging a lock void and clearing it.
 */
export function takeoverLock(lock: string, pid: number, judged?: () => void): (() => void) | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    const holder = `${pid}.${crypto.randomBytes(8).toString('hex')}`;
    const made = `${lock}.${holder}`;
    fs.mkdirSync(made);
    try {
      fs.writeFileSync(path.join(made, holder), '');
      fs.renameSync(made, lock);
      return () => {
        fs.rmSync(path.join(lock, holder), { force: true });
        removeEmptyDir(lock);
      };
    } catch (err) {
      fs.rmSync(made, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    }
    if (!clearVoidLock(lock, pid, judged)) return null;
  }
  return null;
}

/** Clears `lock` if its holder is gone: true when it may be taken now. */
function clearVoidLock(lock: string, pid: number, judged?: () => void): boolean {
  let holder: string | undefined;
  let age: number;
  try {
    holder = fs.readdirSync(lock)[0];
    if (holder === undefined) return true; // being cleared: the next rename replaces it
    age = Date.now() - fs.statSync(path.join(lock, holder)).mtimeMs;
  } catch {
    return true; // released meanwhile
  }
  if (running(Number(holder.split('.')[0])) && age <= TAKEOVER_LOCK_VOID_MS) return false;
  judged?.();
  const aside = `${lock}.void.${pid}.${crypto.randomBytes(8).toString('hex')}`;
  try {
    // That holder's entry only: gone when another process cleared the lock first.
    fs.renameSync(path.join(lock, holder), aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false; // another is on it
    throw err;
  }
  fs.rmSync(aside, { force: true });
  removeEmptyDir(lock);
  return true;
}

/** Removes directory `dir` if it is empty (a lock taken meanwhile is not). */
function removeEmptyDir(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // taken again (not empty), or removed meanwhile
  }
}

/** Whether a process exists (another user's too: signalling it is refused, not failed). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A free port below the ephemeral range where it can: a node killed and started again on its
 * port (failover drills, tests) must find it free, and any process's outgoing connection could
 * have taken a port of that range as its local port in between (EADDRINUSE; the node exits). It
 * is claimed for this process (claimPort), so that no other process picks it while this one's
 * servers have not bound it yet. `candidates` draws the ports to try (tests).
 */
async function freePort(
  candidates: () => number = () => {
    const range = ephemeralPorts();
    return range !== null && range[0] > LOW_PORTS_FROM + 1000
      ? LOW_PORTS_FROM + crypto.randomInt(range[0] - LOW_PORTS_FROM)
      : 0;
  },
  claimsDir = PORT_CLAIMS_DIR,
): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const want = candidates();
    if (want === 0) break;
    // Free now, and claimed by no other live process (its server may bind it later).
    if ((await tryPort(want)) !== null && claimPort(want, claimsDir)) return want;
  }
  const any = await tryPort(0);
  if (any === null) throw new Error('no free port');
  return any;
}

/**
 * `n` ports: `base` and the ones after it, or free ports (freePort), each claimed for this
 * process. `candidates` and `claimsDir`: for tests of the picking.
 */
export async function ports(
  n: number,
  base?: number,
  candidates?: () => number,
  claimsDir?: string,
): Promise<number[]> {
  if (base !== undefined) return Array.from({ length: n }, (_, i) => base + i);
  const out: number[] = [];
  while (out.length < n) {
    const p = await freePort(candidates, claimsDir);
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(
  what: string,
  ok: () => Promise<boolean> | boolean,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await ok()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function answers(url: string): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Starts a process in the background, its output appended to `log`; its pid. */
export function start(cmd: string, args: string[], log: string, env?: NodeJS.ProcessEnv): number {
  const fd = fs.openSync(log, 'a');
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd], env });
  fs.closeSync(fd);
  child.unref();
  return child.pid!;
}

/**
 * Stops the local cluster in `dir` if this process dies without stopping it (./reaper.ts): for
 * tests and benches, called before `up` (a process ended while `up` runs leaves what it started so
 * far). Its result stops the reaper (once the cluster is down) and resolves when it has exited.
 */
export function reapOnExit(dir: string): () => Promise<void> {
  const reaper = fileURLToPath(new URL('./reaper.js', import.meta.url));
  const child = spawn(process.execPath, [reaper, String(process.pid), path.resolve(dir)], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  const pid = child.pid!;
  return async () => {
    if (alive(pid)) process.kill(pid, 'SIGTERM');
    await waitFor('the reaper to exit', () => !alive(pid), 10_000);
  };
}

/**
 * The processes of a local cluster in `dir`, this process left out, found without its record:
 * those with a file under `dir` open (every process `start` spawns writes its output to a log
 * there, and so do the nodes a supervisor starts and nginx's workers) or naming `dir` in their
 * command line (the reaper). It finds what the record does not name: what `up` started before
 * writing it, a node a supervisor started again. Linux only (/proc); elsewhere it finds none.
 */
export function processesUsing(dir: string): { pid: number; command: string }[] {
  const d = path.resolve(dir);
  const under = (p: string) => p === d || p.startsWith(`${d}/`);
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  const found: { pid: number; command: string }[] = [];
  for (const e of entries) {
    const pid = Number(e);
    if (pid === process.pid) continue;
    try {
      const args = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
      const uses =
        args.some(under) ||
        fs.readdirSync(`/proc/${e}/fd`).some((fd) => {
          try {
            return under(fs.readlinkSync(`/proc/${e}/fd/${fd}`));
          } catch {
            return false; // closed meanwhile
          }
        });
      if (uses) found.push({ pid, command: args.join(' ').trim() });
    } catch {
      // gone meanwhile, or another user's
    }
  }
  return found;
}

/**
 * SIGKILLs every process of the cluster in `dir` (processesUsing), again while any is found (a
 * supervisor may have started its node in between), for at most `ms`; what it found first.
 */
export async function killProcessesUsing(
  dir: string,
  ms = 10_000,
): Promise<{ pid: number; command: string }[]> {
  const first = processesUsing(dir);
  let left = first;
  const deadline = Date.now() + ms;
  while (left.length > 0 && Date.now() < deadline) {
    for (const p of left) sendSignal(p.pid, 'SIGKILL');
    await sleep(100);
    left = processesUsing(dir);
  }
  return first;
}

/**
 * Sends `signal` to `pid`; one that exited meanwhile is no error (a node its supervisor reaped
 * between a look and the signal made `down` throw, leaving the rest of the cluster running).
 */
function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Whether a process is still there. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * One server's configuration. The cluster's name is its own (from its first client port): two
 * local clusters at once (tests in parallel) then refuse each other's routes should a port of one
 * ever reach the other, instead of merging into one JetStream cluster of same-named servers.
 */
function natsConfig(dir: string, i: number, clientPorts: number[], routePorts: number[]): string {
  const n = clientPorts.length;
  const routes = routePorts.map((p) => `nats-route://127.0.0.1:${p}`).join(', ');
  return `server_name: nats${i + 1}
listen: 127.0.0.1:${clientPorts[i]}
jetstream {
  store_dir: "${path.join(dir, 'nats', `nats${i + 1}`)}"
  max_memory_store: 64MB
  max_file_store: 2GB
}
${n > 1 ? `cluster {\n  name: confab-${clientPorts[0]}\n  listen: 127.0.0.1:${routePorts[i]}\n  routes: [${routes}]\n}\n` : ''}`;
}

/**
 * Starts the NATS servers of a cluster (one per client port, joined by the route ports, their
 * configuration, store and log under `dir`, which must have a `logs` folder), of the binary
 * `natsBin` (default: the fetched one, else the PATH's).
 */
export function startNatsServers(
  dir: string,
  clientPorts: number[],
  routePorts: number[],
  natsBin = binary('nats-server'),
): { pid: number; port: number }[] {
  fs.mkdirSync(path.join(dir, 'nats'), { recursive: true });
  return clientPorts.map((port, i) => {
    const conf = path.join(dir, 'nats', `nats${i + 1}.conf`);
    fs.writeFileSync(conf, natsConfig(dir, i, clientPorts, routePorts));
    return { pid: start(natsBin, ['-c', conf], path.join(dir, 'logs', `nats${i + 1}.log`)), port };
  });
}

/** Whether something accepts TCP connections on a loopback port. */
export function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** How many times startNatsCluster starts a cluster that does not place replicated streams. */
const NATS_CLUSTER_STARTS = 3;

/**
 * Starts a NATS cluster (startNatsServers) and resolves once it listens and places a stream with a
 * copy on every server. One that never will (placesReplicas: a server its meta leader left out) is
 * stopped and started again on the same ports from empty stores, up to `starts` times.
 * `places` is the check (tests replace it, and may allow more starts).
 */
export async function startNatsCluster(
  dir: string,
  clientPorts: number[],
  routePorts: number[],
  places: (servers: string[], replicas: number) => Promise<boolean> = placesReplicas,
  starts = NATS_CLUSTER_STARTS,
): Promise<{ pid: number; port: number }[]> {
  const urls = clientPorts.map((p) => `nats://127.0.0.1:${p}`);
  for (let attempt = 1; ; attempt++) {
    const nats = startNatsServers(dir, clientPorts, routePorts);
    const stop = async () => {
      for (const n of nats) if (alive(n.pid)) process.kill(n.pid, 'SIGKILL');
      await waitFor('the NATS servers to exit', () => nats.every((n) => !alive(n.pid)), 10_000);
    };
    try {
      await waitFor('the NATS servers', async () => {
        const gone = nats.findIndex((n) => !alive(n.pid));
        if (gone >= 0)
          throw new Error(`nats${gone + 1} exited (see ${dir}/logs/nats${gone + 1}.log)`);
        return (await Promise.all(nats.map((n) => listens(n.port)))).every(Boolean);
      });
      if (await places(urls, nats.length)) return nats;
    } catch (err) {
      await stop();
      throw err;
    }
    await stop();
    if (attempt >= starts)
      throw new Error(
        `the NATS cluster did not place ${nats.length}-replica streams in ${attempt} starts ` +
          `(see ${dir}/logs)`,
      );
    for (let i = 0; i < nats.length; i++)
      fs.rmSync(path.join(dir, 'nats', `nats${i + 1}`), { recursive: true, force: true });
  }
}

/**
 * Starts nginx in front of the nodes (its configuration, pid file and temporary files under `dir`,
 * which must have a `logs` folder); its pid. `queuesOn`: new event queues (POST /register, and
 * GET /events without a queue id) all go to that node — the API tests' cluster mode, whose tests
 * look into one node's queues.
 */
export function startProxy(
  dir: string,
  proxyPort: number,
  nodes: Pick<NodeRecord, 'name' | 'port'>[],
  queuesOn?: string,
): number {
  fs.mkdirSync(path.join(dir, 'nginx'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'nginx.conf'), nginxConfig(dir, proxyPort, nodes, queuesOn));
  return start(
    binary('nginx'),
    ['-c', path.join(dir, 'nginx.conf'), '-p', path.join(dir, 'nginx')],
    path.join(dir, 'logs', 'nginx.log'),
  );
}

/** How long nginx leaves out a node that failed (nginxConfig). */
const FAIL_TIMEOUT = 'fail_timeout=2s';

/** The local cluster's nginx configuration (startProxy). */
export function nginxConfig(
  dir: string,
  proxyPort: number,
  nodes: Pick<NodeRecord, 'name' | 'port'>[],
  queuesOn?: string,
): string {
  // Every server of every upstream: a node that refused a connection is left out for 2 s, not
  // nginx's default 10 s (max_fails=1 fail_timeout=10s). A node restarted is used again soon: in
  // its own upstream, its queues' requests went to a backup meanwhile (BAD_EVENT_QUEUE_ID, the
  // client registering again, for queues the node had saved and restored); in `all`, a node
  // stopped right after others were restarted does not leave every node left out at once ('no
  // live upstreams', a 502 for a write).
  const server = (port: number, backup = false) =>
    `server 127.0.0.1:${port} ${FAIL_TIMEOUT}${backup ? ' backup' : ''};`;
  // A queue's node first; when it is down, another node answers BAD_EVENT_QUEUE_ID and the client
  // registers again.
  const upstreams = nodes
    .map((n) => {
      const backups = nodes
        .filter((o) => o !== n)
        .map((o) => ` ${server(o.port, true)}`)
        .join('');
      return `  upstream ${n.name} { ${server(n.port)}${backups} }`;
    })
    .join('\n');
  const all = nodes.map((n) => server(n.port)).join(' ');
  const routes = nodes.map((n) => `    ~^${n.name}- ${n.name};`).join('\n');
  const tmp = path.join(dir, 'nginx');
  const queueRoutes = queuesOn
    ? `  map $arg_queue_id $confab_queue_node {\n${routes}\n    default ${queuesOn};\n  }\n`
    : '';
  const queueLocations = queuesOn
    ? `    location = /api/v1/register { proxy_pass http://${queuesOn}; }
    location = /api/v1/events { proxy_pass http://$confab_queue_node; }
`
    : '';
  return `daemon off;
worker_processes 1;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'logs', 'nginx.error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  client_max_body_size 100m;
  # An event queue's requests go to the node holding it (its id starts with the node's name).
  map $arg_queue_id $confab_node {
${routes}
    default all;
  }
${queueRoutes}  map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
${upstreams}
  upstream all { ${all} keepalive 64; }
  server {
    listen 127.0.0.1:${proxyPort};
    proxy_http_version 1.1;
    proxy_set_header Host $http_host;
    proxy_set_header X-Forwarded-For $remote_addr;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection $connection_upgrade;
    proxy_read_timeout 120s;
    proxy_buffering off;
    proxy_request_buffering off;
    location / { proxy_pass http://$confab_node; }
${queueLocations}  }
}
`;
}

function recordPath(dir: string): string {
  return path.join(dir, 'cluster.json');
}

export function readRecord(dir: string): ClusterRecord {
  return JSON.parse(fs.readFileSync(recordPath(dir), 'utf8')) as ClusterRecord;
}

function writeRecord(rec: ClusterRecord): void {
  fs.writeFileSync(recordPath(rec.dir), JSON.stringify(rec, null, 2), { mode: 0o600 });
}

function nodeEnv(rec: ClusterRecord, i: number): NodeJS.ProcessEnv {
  const n = rec.nodes[i]!;
  return {
    ...process.env,
    ...rec.env,
    ...n.env,
    PORT: String(n.port),
    HOST: '127.0.0.1',
    DATA_DIR: n.dataDir,
    CLUSTER_NODE: n.name,
    CLUSTER_NATS: rec.natsUrls.join(','),
    CLUSTER_REPLICAS: String(Math.min(rec.nats.length, 3)),
  };
}

/** Where each node's log ended when the node was last started (nodeReady reads from there). */
const logStarts = new Map<string, number>();

function startNode(rec: ClusterRecord, i: number, bootstrapFile?: string): void {
  const env = nodeEnv(rec, i);
  if (bootstrapFile) env.CLUSTER_BOOTSTRAP = bootstrapFile;
  const n = rec.nodes[i]!;
  const log = path.join(rec.dir, 'logs', `${n.name}.log`);
  logStarts.set(log, fs.existsSync(log) ? fs.statSync(log).size : 0);
  if (!rec.supervised) {
    n.pid = start(process.execPath, [...SERVER_NODE_FLAGS, NODE_MAIN], log, env);
    return;
  }
  const pidFile = nodePidFile(rec, i);
  fs.rmSync(pidFile, { force: true });
  env.CONFAB_SUPERVISE_PID_FILE = pidFile;
  n.supervisor = start(process.execPath, [SUPERVISOR_MAIN], log, env);
  n.pid = 0;
}

function nodePidFile(rec: ClusterRecord, i: number): string {
  return path.join(rec.dir, 'logs', `${rec.nodes[i]!.name}.pid`);
}

/**
 * The pid of node `i` (0-based) as it runs now: a supervised node's changes at each restart (its
 * supervisor writes it down); 0 while a supervised node has none.
 */
export function nodePid(rec: ClusterRecord, i: number): number {
  const n = rec.nodes[i]!;
  if (n.supervisor === undefined) return n.pid;
  try {
    return Number(fs.readFileSync(nodePidFile(rec, i), 'utf8')) || 0;
  } catch {
    return 0;
  }
}

/** A node could not listen on its port: another process took it after it was picked. */
class PortTakenError extends Error {}

async function nodeReady(rec: ClusterRecord, i: number): Promise<void> {
  const n = rec.nodes[i]!;
  // The log's end says why a node never answered: the directory may be gone by the time anyone
  // looks (a test's teardown, a CI machine).
  const log = path.join(rec.dir, 'logs', `${n.name}.log`);
  const tail = () =>
    fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').slice(-25).join('\n') : '';
  /** What the node wrote since it was started (startNode). */
  const since = () => {
    try {
      return fs
        .readFileSync(log)
        .subarray(logStarts.get(log) ?? 0)
        .toString('utf8');
    } catch {
      return '';
    }
  };
  try {
    await waitFor(
      `node ${n.name}`,
      () => {
        const pid = nodePid(rec, i);
        const gone = n.supervisor !== undefined ? !alive(n.supervisor) : !alive(pid);
        // Its supervisor would start it again and again on a port it never gets.
        if (since().includes(`cannot listen on 127.0.0.1:${n.port}`))
          throw new PortTakenError(`node ${n.name} cannot listen on port ${n.port}: taken`);
        if (gone) throw new Error(`node ${n.name} exited (see ${log}); its log ends:\n${tail()}`);
        return pid > 0 && answers(`http://127.0.0.1:${n.port}/api/v1/server_settings`);
      },
      // Longer than a node's own patience with a JetStream that does not answer in time.
      STARTUP_PATIENCE_MS + 30_000,
    );
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('timed out'))
      err.message += ` (port ${n.port}; see ${log}); its log ends:\n${tail()}`;
    throw err;
  }
}

/**
 * Waits until node `i` serves (nodeReady). One whose port another process took after it was
 * picked (its log says it cannot listen there) is stopped and started again on another free port,
 * up to three times: `up` starts the proxy only once its nodes serve, on the ports they have then.
 */
async function nodeServes(rec: ClusterRecord, i: number, bootstrapFile?: string): Promise<void> {
  for (let moves = 0; ; moves++) {
    try {
      await nodeReady(rec, i);
      return;
    } catch (err) {
      if (!(err instanceof PortTakenError) || moves >= 3) throw err;
    }
    const n = rec.nodes[i]!;
    await stopNode(rec, i);
    const taken = n.port;
    n.port = (await ports(1))[0]!;
    console.error(`node ${n.name}: port ${taken} was taken; starting it on ${n.port}`);
    startNode(rec, i, bootstrapFile);
    writeRecord(rec);
  }
}

/** Stops node `i` and its supervisor (SIGTERM, SIGKILL after 30 s); resolves once both are gone. */
async function stopNode(rec: ClusterRecord, i: number): Promise<void> {
  const n = rec.nodes[i]!;
  const pids = [n.supervisor ?? 0, nodePid(rec, i)].filter((p) => p > 0);
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && pids.some(alive)) await sleep(100);
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await waitFor(`node ${n.name} to stop`, () => !pids.some(alive), 10_000);
}

export async function up(opts: UpOptions): Promise<ClusterRecord> {
  const dir = path.resolve(opts.dir);
  if (fs.existsSync(recordPath(dir)))
    throw new Error(`${dir} already holds a cluster (down first)`);
  const n = opts.nodes;
  const servers = opts.natsServers ?? n;
  if (!Number.isInteger(servers) || servers < 1)
    throw new Error('natsServers: a whole number >= 1');
  for (const d of ['logs', 'nats', 'nginx']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const all = await ports(2 * servers + n + 1, opts.basePort);
  const proxyPort = all[0]!;
  const clientPorts = all.slice(1, servers + 1);
  const routePorts = all.slice(servers + 1, 2 * servers + 1);
  const nodePorts = all.slice(2 * servers + 1);
  const rec: ClusterRecord = {
    dir,
    url: `http://127.0.0.1:${proxyPort}`,
    proxyPort,
    natsUrls: clientPorts.map((p) => `nats://127.0.0.1:${p}`),
    nats: [],
    nodes: nodePorts.map((port, i) => ({
      name: `n${i + 1}`,
      port,
      pid: 0,
      dataDir: path.join(dir, `node${i + 1}`),
    })),
    proxyPid: 0,
    owner: { email: '', api_key: '', password: '' },
    supervised: opts.supervise ?? false,
    env: {
      EXTERNAL_HOST: `127.0.0.1:${proxyPort}`,
      TRUSTED_PROXIES: '127.0.0.1',
      // CLUSTER_ALLOW_UNSAFE_NATS=1 when the only nats-server found is too old (with a warning).
      ...localNatsEnv(),
      ...opts.env,
    },
  };
  try {
    rec.nats = await startNatsCluster(dir, clientPorts, routePorts);
    writeRecord(rec);
    if (opts.seedFrom !== undefined) {
      const seeding = rec.nodes[0]!;
      fs.cpSync(opts.seedFrom, seeding.dataDir, { recursive: true });
      seeding.env = { CLUSTER_SEED: '1' };
      startNode(rec, 0);
      writeRecord(rec);
      // Serving, it has put its snapshot up: the others start from it.
      await nodeServes(rec, 0);
      for (let i = 1; i < n; i++) startNode(rec, i);
      writeRecord(rec);
      for (let i = 1; i < n; i++) await nodeServes(rec, i);
    } else {
      const ownerFile = path.join(dir, 'owner.json');
      for (let i = 0; i < n; i++) startNode(rec, i, i === 0 ? ownerFile : undefined);
      writeRecord(rec);
      for (let i = 0; i < n; i++) await nodeServes(rec, i, i === 0 ? ownerFile : undefined);
      await waitFor('the first realm', () => fs.existsSync(ownerFile));
      rec.owner = JSON.parse(fs.readFileSync(ownerFile, 'utf8')) as ClusterRecord['owner'];
    }
    rec.proxyPid = startProxy(dir, proxyPort, rec.nodes);
    writeRecord(rec);
    await waitFor('the proxy', () => answers(`${rec.url}/api/v1/server_settings`));
    return rec;
  } catch (err) {
    writeRecord(rec);
    await down(dir);
    throw err;
  }
}

/**
 * SIGKILLs node N (1-based): a crash, for failover drills; or, with SIGTERM, a graceful stop.
 * Resolves once it is gone. A supervised node is started again by its supervisor after its
 * back-off (src/cluster/supervise.ts).
 */
export async function killNode(
  dir: string,
  n: number,
  signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL',
): Promise<NodeRecord> {
  const rec = readRecord(dir);
  const node = rec.nodes[n - 1];
  if (!node) throw new Error(`no node ${n}`);
  const pid = nodePid(rec, n - 1);
  if (pid > 0 && alive(pid)) process.kill(pid, signal);
  await waitFor(
    `node ${n} to exit`,
    () => pid === 0 || !alive(pid),
    signal === 'SIGKILL' ? 10_000 : 60_000,
  );
  return node;
}

/**
 * Sends SIGSTOP (frozen: its connections stay open, it answers nothing) or SIGCONT to node N's
 * process (fault drills).
 */
export function signalNode(dir: string, n: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
  const rec = readRecord(dir);
  if (!rec.nodes[n - 1]) throw new Error(`no node ${n}`);
  const pid = nodePid(rec, n - 1);
  if (pid > 0 && alive(pid)) process.kill(pid, signal);
}

/** Starts node N again (after kill-node), `empty`: with its data directory removed first. */
export async function startNodeAgain(dir: string, n: number, empty = false): Promise<NodeRecord> {
  const rec = readRecord(dir);
  const node = rec.nodes[n - 1];
  if (!node) throw new Error(`no node ${n}`);
  const pid = nodePid(rec, n - 1);
  if ((pid > 0 && alive(pid)) || (node.supervisor !== undefined && alive(node.supervisor)))
    throw new Error(`node ${n} is running`);
  if (empty) fs.rmSync(node.dataDir, { recursive: true, force: true });
  startNode(rec, n - 1);
  writeRecord(rec);
  await nodeReady(rec, n - 1);
  return rec.nodes[n - 1]!;
}

/**
 * Whether every thread of process `pid` is stopped (SIGSTOP): `kill` returns before the threads
 * have stopped, each as it next runs, so a drill that must not be answered after the freeze waits
 * for this (Linux's /proc; elsewhere taken as stopped).
 */
export function frozen(pid: number): boolean {
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return tasks.every((task) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      // "pid (comm) S ...": the state follows the command's closing parenthesis.
      const state = stat[stat.lastIndexOf(')') + 2];
      return state === 'T' || state === 't';
    } catch {
      return true; // the thread has ended
    }
  });
}

/**
 * Sends a signal to NATS server N (1-based) of the cluster: SIGKILL (and waits until it is gone),
 * SIGSTOP (frozen: its connections stay open, it answers nothing; waits until its threads have
 * stopped) or SIGCONT (fault drills).
 */
export async function signalNats(
  dir: string,
  n: number,
  signal: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP' | 'SIGCONT',
): Promise<void> {
  const rec = readRecord(dir);
  const server = rec.nats[n - 1];
  if (!server) throw new Error(`no NATS server ${n}`);
  if (!alive(server.pid)) return;
  process.kill(server.pid, signal);
  if (signal === 'SIGSTOP') await waitFor(`nats${n} to stop`, () => frozen(server.pid), 10_000);
  if (signal === 'SIGKILL' || signal === 'SIGTERM')
    await waitFor(
      `nats${n} to exit`,
      () => !alive(server.pid),
      signal === 'SIGKILL' ? 10_000 : 30_000,
    );
}

/**
 * Starts NATS server N (1-based) again on its configuration and store (after a SIGKILL); resolves
 * once it listens.
 */
export async function startNatsAgain(dir: string, n: number): Promise<void> {
  const rec = readRecord(dir);
  const server = rec.nats[n - 1];
  if (!server) throw new Error(`no NATS server ${n}`);
  if (alive(server.pid)) throw new Error(`nats${n} is running`);
  const conf = path.join(rec.dir, 'nats', `nats${n}.conf`);
  server.pid = start(
    binary('nats-server'),
    ['-c', conf],
    path.join(rec.dir, 'logs', `nats${n}.log`),
  );
  writeRecord(rec);
  await waitFor(`nats${n}`, async () => {
    if (!alive(server.pid)) throw new Error(`nats${n} exited (see ${rec.dir}/logs/nats${n}.log)`);
    return listens(server.port);
  });
}

/** Stops everything `up` started (SIGTERM, then SIGKILL after 10 s) and forgets the record. */
export async function down(dir: string): Promise<void> {
  const d = path.resolve(dir);
  if (!fs.existsSync(recordPath(d))) return;
  const rec = readRecord(d);
  // A supervisor stops its node, then itself; the nodes' own pids too (one may be between two).
  const nodes = rec.nodes.flatMap((n, i) =>
    n.supervisor !== undefined ? [n.supervisor, nodePid(rec, i)] : [n.pid],
  );
  const pids = [rec.proxyPid, ...nodes, ...rec.nats.map((s) => s.pid)];
  const stopAll = async (group: number[]) => {
    for (const pid of group)
      if (pid > 0 && alive(pid)) {
        sendSignal(pid, 'SIGTERM');
        sendSignal(pid, 'SIGCONT'); // a frozen one (fault drills) would not hear it
      }
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && group.some((p) => p > 0 && alive(p))) await sleep(100);
    for (const pid of group) if (pid > 0) sendSignal(pid, 'SIGKILL');
  };
  // The proxy and the nodes first (they finish their appends), then NATS.
  await stopAll(pids.slice(0, 1 + nodes.length));
  await stopAll(pids.slice(1 + nodes.length));
  fs.rmSync(recordPath(d), { force: true });
}
