/**
 * src/cluster/reaper.ts, with stand-in processes: when the process it watches dies, it
 * stops every process the cluster's record names (supervisor, node, proxy, NATS server), and,
 * with no record yet (the watched process died inside `up`), every process with a file of the
 * cluster's directory open; stopped first (a teardown ran), it stops nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';

const reaper = new URL('../../src/cluster/reaper.js', import.meta.url).pathname;

const sleeper = () => spawn('sleep', ['120'], { stdio: 'ignore' });
const ended = (p: ChildProcess) =>
  new Promise<boolean>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve(true);
    const timer = setTimeout(() => resolve(false), 10_000);
    p.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

/** A record naming four stand-ins, the reaper watching a fifth. */
function cluster(t: Test) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reaper-'));
  const [parent, supervisor, node, proxy, nats] = [
    sleeper(),
    sleeper(),
    sleeper(),
    sleeper(),
    sleeper(),
  ];
  fs.mkdirSync(path.join(dir, 'logs'));
  fs.writeFileSync(path.join(dir, 'logs', 'n1.pid'), String(node.pid));
  const rec = {
    dir,
    nodes: [{ name: 'n1', pid: 0, supervisor: supervisor.pid }],
    proxyPid: proxy.pid,
    nats: [{ pid: nats.pid }],
  };
  fs.writeFileSync(path.join(dir, 'cluster.json'), JSON.stringify(rec));
  const watcher = spawn(process.execPath, [reaper, String(parent.pid), dir], { stdio: 'ignore' });
  t.teardown(() => {
    for (const p of [parent, supervisor, node, proxy, nats, watcher]) p.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir, parent, named: { supervisor, node, proxy, nats }, watcher };
}

t.test('the watched process dies: every process of the record is stopped', async (t) => {
  const c = cluster(t);
  c.parent.kill('SIGKILL');
  for (const [name, p] of Object.entries(c.named)) t.ok(await ended(p), `${name} stopped`);
  t.ok(await ended(c.watcher), 'the reaper exited');
});

t.test('stopped first (a teardown ran): the reaper exits, stopping nothing', async (t) => {
  const c = cluster(t);
  c.watcher.kill('SIGTERM');
  t.ok(await ended(c.watcher), 'the reaper exited');
  c.parent.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 1500));
  for (const [name, p] of Object.entries(c.named))
    t.equal(p.exitCode ?? p.signalCode, null, `${name} still runs`);
});

t.test(
  'no record yet: the processes writing into the directory are stopped, no other',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reaper-'));
    const log = fs.openSync(path.join(dir, 'out.log'), 'a');
    const parent = sleeper();
    const writer = spawn('sleep', ['120'], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    const other = sleeper();
    const watcher = spawn(process.execPath, [reaper, String(parent.pid), dir], {
      stdio: 'ignore',
    });
    t.teardown(() => {
      for (const p of [parent, writer, other, watcher]) p.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    });
    parent.kill('SIGKILL');
    t.ok(await ended(writer), 'the process writing into the directory stopped');
    t.ok(await ended(watcher), 'the reaper exited');
    t.equal(other.exitCode ?? other.signalCode, null, 'another process still runs');
  },
);
