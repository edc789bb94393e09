/**
 * Stops a local cluster (./local.ts) when the process that started it dies without stopping it: a
 * test file that outruns its time limit (tap ends it with SIGALRM, which runs no teardown), a tap
 * run ended by CI's job time limit (SIGTERM) or a bench stopped with Ctrl-C. The cluster's
 * supervisors (which start their nodes again), nodes, proxy and NATS servers would otherwise go on
 * loading the machine (seen 2026-12-05: a timed-out faults-nats-kill left nine processes running
 * for an hour; faults-stall, ended by CI's time limit while its cluster started, nine for two
 * hours). Started detached by `reapOnExit` (./local.ts) as `node reaper.js <pid> <dir>` before the
 * cluster is started; stopped by its starter (SIGTERM) once the cluster is down.
 */
import fs from 'node:fs';
import path from 'node:path';
import { alive, killProcessesUsing, nodePid, readRecord } from './local.js';

const parent = Number(process.argv[2]);
const dir = process.argv[3] ?? '';

const timer = setInterval(() => {
  if (alive(parent)) return;
  clearInterval(timer);
  void reap();
}, 1000);

async function reap(): Promise<void> {
  if (fs.existsSync(path.join(dir, 'cluster.json'))) {
    try {
      const rec = readRecord(dir);
      // Supervisors first (else they start their node again), then what they ran.
      for (const n of rec.nodes) if (n.supervisor !== undefined) kill(n.supervisor, 'SIGKILL');
      for (const [i] of rec.nodes.entries()) kill(nodePid(rec, i), 'SIGKILL');
      // nginx's master stops its workers on SIGTERM; on SIGKILL they would stay.
      kill(rec.proxyPid, 'SIGTERM');
      for (const s of rec.nats) kill(s.pid, 'SIGKILL');
    } catch {
      // The record went away or is being written: what it names is found below.
    }
  }
  // What the record does not name (or not yet: the parent died inside `up`): every process with a
  // file of the cluster open.
  await killProcessesUsing(dir);
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    if (pid > 0 && alive(pid)) process.kill(pid, signal);
  } catch {
    // exited meanwhile
  }
}
