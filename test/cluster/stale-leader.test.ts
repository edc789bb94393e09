/**
 * The log's position against a real frozen and thawed stream leader (nats-server, three servers,
 * a three-replica stream; src/cluster/log-applier.ts `lastPosition`, docs/cluster.md
 * "Guarantees"). Four nodes, each one log applier on its own connection to one server, as a real
 * node has: a busy one (asking the position through the freeze) and an idle one (only its
 * progress watch asks) on the leader's server, and the same two on a follower's. Each has read
 * the position before the freeze (a mark proved the leader: the confirmed leader). The stream's
 * leader is frozen (SIGSTOP); the two others elect a new leader, which acknowledges three more
 * entries; the frozen server is thawed. It answers from its own copy while it still takes itself
 * for the leader: an old last sequence, which no node may take. Every position taken from the
 * thaw on holds every acknowledged entry. Skipped when nats-server is not installed. No timing is
 * asserted: the waits are for states (an election, an answer), with generous limits.
 *
 * CI, 2026-12-05: one of five questions held through the freeze took 5 while 8 was acknowledged
 * (the thawed leader had read a follower's reply of before the freeze, which made it look live);
 * 2026-12-06: a question asked right after the thaw, answered at once, took 5 (a fresh applier:
 * that answer was not late, so no mark proved it). Now a prompt answer is taken as it comes only
 * from the confirmed leader with no sign of trouble since; each node here saw one during the
 * freeze (an unanswered question, its watch's on the idle nodes, or another leader's answer).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import t from 'tap';
import { packEntry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import type { LogApplier } from '../../src/cluster/log-applier.js';
import { CatchingUpError } from '../../src/cluster/read-barrier.js';
import { alive, missingEngines, ports, sleep, startNatsCluster } from '../../src/cluster/local.js';
import { stubbedApplier } from '../helpers/applier.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

/** An entry of the stream `P` (log subjects `p.*`) that every node applies as a position. */
const entry = () => packEntry({ k: 'mark', node: 'test' });

/** How many position marks the nodes appended (entries on `p.position`). */
async function marks(jsm: JetStreamManager): Promise<number> {
  const info = await jsm.streams.info('P', { subjects_filter: 'p.position' });
  return info.state.subjects?.['p.position'] ?? 0;
}

type Node = { name: string; nc: NatsConnection; applier: LogApplier; died: string[] };

/** A node's log applier on its own connection to `port`'s server, started (its watch runs). */
async function node(name: string, port: number): Promise<Node> {
  const nc = await connect({ servers: `nats://127.0.0.1:${port}`, reconnect: false });
  const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 60_000 });
  const js = nc.jetstream({ timeout: 10_000 });
  const link = {
    nc,
    jsm,
    js,
    names: { stream: 'P', log: 'p' },
    opts: { node: name },
    // Kept on its server: the frozen one's questions wait there.
    checkConnection: () => undefined,
  };
  const { applier, died } = stubbedApplier(link as unknown as ClusterLink);
  await applier.start({} as never);
  return { name, nc, applier, died };
}

/** The 503s (read barrier: "catching up") the nodes' reads were answered and retried. */
const refused: string[] = [];

/**
 * A read on `n` as a client makes it: the read barrier, and after a 503 "catching up" (a copy
 * seen not catching up, or the budget spent) the same read again after its Retry-After, a few
 * times. CI, 2026-12-07 (a loaded machine): a node's first log consumer handed on nothing for 2 s
 * (applied 0 while the log held 8), its progress watch called the stall and made it again, and
 * the read waiting at the barrier was answered 503 then, as designed (read-barrier.ts): the test
 * took that for a failure. Once passed, the read sees every entry acknowledged before it began
 * (`holds`): no stale read.
 */
async function read(n: Node, holds: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await n.applier.readBarrier();
      break;
    } catch (err) {
      if (!(err instanceof CatchingUpError) || attempt >= 10) throw err;
      refused.push(`${n.name} (applied ${n.applier.applied})`);
      await sleep(1000 * Number(err.headers['Retry-After'] ?? 1));
    }
  }
  if (n.applier.applied < holds)
    throw new Error(`${n.name} passed its read barrier at ${n.applier.applied}, below ${holds}`);
}

/** The positions `n` takes, asking `times` times in a row (a refused answer is asked again). */
async function positions(n: Node, times: number): Promise<number[]> {
  const taken: number[] = [];
  for (const deadline = Date.now() + 60_000; taken.length < times;) {
    if (Date.now() > deadline) throw new Error(`${n.name}: no position taken after the thaw`);
    const seq = await n.applier.lastPosition().catch(() => null);
    if (seq === null) await sleep(100);
    else taken.push(seq);
  }
  return taken;
}

t.test('no node takes a thawed stream leader’s old position', async (t) => {
  if (missing) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stale-leader-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  const p = await ports(6);
  const nats = await startNatsCluster(dir, p.slice(0, 3), p.slice(3));
  const nodes: Node[] = [];
  let admin: NatsConnection | null = null;
  t.teardown(async () => {
    // The nodes at once, each stop bounded (LogApplier.close), and the time of each step on
    // stderr when the whole took long. CI saw this file take 148 s past its subtest (2026-12-07):
    // the process outlived the teardown, held by nats.js retrying a consumer's creation under way
    // at the close (ended by LogApplier.close since), not by the teardown itself.
    const start = performance.now();
    const steps: string[] = [];
    const step = (what: string) =>
      steps.push(`${what} ${Math.round(performance.now() - start)} ms`);
    await Promise.all(nodes.map((n) => n.applier.close().then(() => step(`${n.name} closed`))));
    await Promise.all(nodes.map((n) => n.nc.close().catch(() => undefined)));
    await admin?.close().catch(() => undefined);
    step('connections closed');
    for (const n of nats) if (alive(n.pid)) process.kill(n.pid, 'SIGKILL');
    while (nats.some((n) => alive(n.pid))) await sleep(50);
    step('NATS servers gone');
    fs.rmSync(dir, { recursive: true, force: true });
    if (performance.now() - start > 5000)
      console.error(`stale-leader teardown: ${steps.join(', ')}`);
  });
  admin = await connect({ servers: `nats://127.0.0.1:${nats[0]!.port}`, reconnect: false });
  const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 60_000 });
  await jsm.streams.add({ name: 'P', subjects: ['p.>'], num_replicas: 3 });
  for (let i = 0; i < 5; i++) await admin.jetstream().publish('p.x', entry());

  const leader = (await jsm.streams.info('P')).cluster!.leader!;
  const li = nats.findIndex((_, i) => leader === `nats${i + 1}`);
  t.ok(li >= 0, `the stream's leader is ${leader}`);
  const fi = (li + 1) % 3; // a follower: the nodes on it
  const wi = (li + 2) % 3; // the other follower: the writes during the freeze
  const busyOnLeader = await node('busyleader', nats[li]!.port);
  const idleOnLeader = await node('idleleader', nats[li]!.port);
  const busyOnFollower = await node('busyfollower', nats[fi]!.port);
  const idleOnFollower = await node('idlefollower', nats[fi]!.port);
  nodes.push(busyOnLeader, idleOnLeader, busyOnFollower, idleOnFollower);

  // Each node reads: its first read takes a mark, its next answer confirms the leader; then
  // reads in steady state take none.
  for (const n of nodes) await read(n, 5);
  const started = await marks(jsm);
  t.ok(started >= 4, `a mark for each node's first read (${started})`);
  for (let i = 0; i < 25; i++) {
    const { seq } = await admin.jetstream().publish('p.x', entry());
    await Promise.all(nodes.map((n) => read(n, seq)));
  }
  const steady = (await marks(jsm)) - started;
  // None on an idle machine; a late answer (a loaded one) is a doubt, and the next read marks.
  t.ok(steady <= 10, `100 reads in steady state appended ${steady} marks (not one per read)`);
  const before = (await jsm.streams.info('P')).state.last_seq;

  process.kill(nats[li]!.pid, 'SIGSTOP');
  t.teardown(() => {
    if (alive(nats[li]!.pid)) process.kill(nats[li]!.pid, 'SIGCONT');
  });

  // The busy nodes ask through the freeze; the idle ones do not (their watches do).
  // Settled as they come (a refusal is no failure of the test).
  const heldAtLeader = Promise.allSettled(
    [0, 1, 2, 3, 4].map(() => busyOnLeader.applier.lastPosition()),
  );
  const duringFreeze: number[] = [];
  let frozen = true;
  const followerAsking = (async () => {
    while (frozen) {
      const seq = await busyOnFollower.applier.lastPosition().catch(() => null);
      if (seq !== null) duringFreeze.push(seq);
      await sleep(200);
    }
  })();

  // The two others elect a leader (4-9 s) and acknowledge three more entries.
  const nc = await connect({ servers: `nats://127.0.0.1:${nats[wi]!.port}`, reconnect: false });
  t.teardown(() => nc.close().catch(() => undefined));
  const js = nc.jetstream({ timeout: 2000 });
  let acked = before;
  for (const deadline = Date.now() + 120_000; acked < before + 3;) {
    if (Date.now() > deadline) throw new Error('no write acknowledged without the frozen leader');
    acked = await js.publish('p.x', entry()).then(
      (a) => a.seq,
      () => sleep(200).then(() => acked),
    );
  }
  t.ok(acked >= before + 3, `the new leader acknowledged entries ${before + 1}-${acked}`);
  // The node on a follower reads through the new leader meanwhile.
  const seen = duringFreeze.length;
  for (const deadline = Date.now() + 60_000; duringFreeze.length === seen; await sleep(50))
    if (Date.now() > deadline) throw new Error('no position taken on the follower');
  const heard = duringFreeze.at(-1)!;
  t.ok(heard >= acked, `the node on a follower took ${heard} during the freeze`);

  await sleep(500);
  process.kill(nats[li]!.pid, 'SIGCONT');
  frozen = false;
  // A fresh question from each node at once (the 2026-12-06 failure's), and a few after.
  const fresh = await Promise.all(nodes.map((n) => positions(n, 5)));
  const held = await heldAtLeader;
  await followerAsking;
  const heldTaken = held.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  t.comment(`held through the freeze: ${heldTaken.length} of 5 taken: ${heldTaken.join(', ')}`);
  // Asked before the new leader acknowledged anything, they owe it nothing (one may even be
  // answered as the freeze takes hold): what they take holds what was acknowledged before them.
  for (const seq of heldTaken)
    t.ok(seq >= before, `a held question's position (${seq}) holds ${before}`);
  for (const [i, n] of nodes.entries()) {
    const low = fresh[i]!.filter((seq) => seq < acked);
    t.same(
      low,
      [],
      `${n.name}: the positions after the thaw (${fresh[i]!.join(', ')}) hold ${acked}`,
    );
    t.same(n.died, [], `${n.name} kept applying`);
  }
  t.comment(`reads answered 503 and retried: ${refused.length} ${refused.join(', ')}`);
  t.comment(
    `marks: ${started} at the start, ${steady} in steady state, ${await marks(jsm)} in all`,
  );
});
