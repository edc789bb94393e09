/**
 * Stops a local cluster (./local.ts) when the process that started it dies without stopping it: a
 * test file that outruns its time limit (tap ends it with SIGALRM, which runs no teardown) or a
 * bench stopped with Ctrl-C. The cluster's supervisors (which start their nodes again), nodes,
 * proxy and NATS servers would otherwise go on loading the machine (seen 2026-12-05: a timed-out
 * faults-nats-kill left nine processes running for an hour). Started detached by `reapOnExit`
 * (./local.ts) as `node reaper.js <pid> <dir>`; exits by itself once the cluster's record is gone
 * (`down` removes it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { alive, nodePid, readRecord } from './local.js';

const parent = Number(process.argv[2]);
const dir = process.argv[3] ?? '';
const record = path.join(dir, 'cluster.json');

const timer = setInterval(() => {
  if (!fs.existsSync(record)) return void clearInterval(timer);
  if (alive(parent)) return;
  clearInterval(timer);
  try {
    const rec = readRecord(dir);
    // Supervisors first (else they start their node again), then what they ran.
    for (const n of rec.nodes) if (n.supervisor !== undefined) kill(n.supervisor, 'SIGKILL');
    for (const [i] of rec.nodes.entries()) kill(nodePid(rec, i), 'SIGKILL');
    // nginx's master stops its workers on SIGTERM; on SIGKILL they would stay.
    kill(rec.proxyPid, 'SIGTERM');
    for (const s of rec.nats) kill(s.pid, 'SIGKILL');
  } catch {
    // The record went away meanwhile: a teardown ran after all.
  }
}, 1000);

function kill(pid: number, signal: NodeJS.Signals): void {
  if (pid > 0 && alive(pid)) process.kill(pid, signal);
}
