/**
 * The event-queue machine on its own (actors/event-queue.machine.ts), on xstate's SimulatedClock:
 * held polls and their heartbeats, sockets and theirs, one consumer at a time, expiry by the
 * sweep, the ways a queue ends, shutdown — no real timer anywhere.
 */
import t, { type Test } from 'tap';
import { createActor, SimulatedClock } from 'xstate';
import { EventQueue } from '../../src/delivery/buffer.js';
import { PollHeartbeats } from '../../src/delivery/heartbeats.js';
import {
  CLOSE,
  queueMachine,
  sendPending,
  type QueueEvent,
  type SocketSink,
  type Waiter,
} from '../../src/delivery/queue.js';
import { eventJson, SharedEvent, type QueuedEvent } from '../../src/delivery/wire.js';

const HEARTBEAT_MS = 1000;
const LIFESPAN_MS = 60_000;

function setup(t: Test) {
  const clock = new SimulatedClock();
  const queue = new EventQueue();
  const deferred: (() => void)[] = [];
  const logged: string[] = [];
  const hooks = {
    heartbeatDelay: () => HEARTBEAT_MS,
    heartbeatMinMs: HEARTBEAT_MS,
    defer: (fn: () => void) => void deferred.push(fn),
    now: () => clock.now(),
    log: (msg: string) => void logged.push(msg),
    heartbeats: new PollHeartbeats(clock, () => clock.now()),
  };
  const actor = createActor(queueMachine, {
    input: { id: 'q1', queue, hooks, lifespanMs: LIFESPAN_MS },
    clock,
  });
  actor.start();
  t.teardown(() => actor.stop());
  const send = (e: QueueEvent) => actor.send(e);
  const state = () => actor.getSnapshot().value;
  const context = () => actor.getSnapshot().context;
  /** Runs what the machine deferred to "after the current handler". */
  const runDeferred = () => {
    for (const fn of deferred.splice(0)) fn();
  };
  const push = (type: string) => queue.push(SharedEvent.of({ type }));
  return {
    clock,
    queue,
    actor,
    send,
    state,
    context,
    runDeferred,
    push,
    logged,
    heartbeats: hooks.heartbeats,
  };
}

function waiter(): Waiter & { got: string[][] | null } {
  const w = {
    got: null as string[][] | null,
    respond(events: QueuedEvent[]) {
      (w.got ??= []).push(events.map(eventJson));
    },
  };
  return w;
}

function socket(): SocketSink & { frames: string[][]; closed: [number, string] | null } {
  const s = {
    frames: [] as string[][],
    closed: null as [number, string] | null,
    send(events: readonly QueuedEvent[]) {
      s.frames.push(events.map(eventJson));
    },
    close(code: number, reason: string) {
      s.closed = [code, reason];
    },
  };
  return s;
}

t.test('a held poll: answered by appended events, or by a heartbeat when nothing comes', (t) => {
  const m = setup(t);
  const w = waiter();
  m.send({ type: 'POLL', waiter: w, dontBlock: false });
  t.equal(m.state(), 'waiting');
  t.equal(m.context().waiter, w, 'the context names the held poll');
  t.equal(m.heartbeats.size, 1, 'its heartbeat deadline is armed');
  m.clock.increment(HEARTBEAT_MS - 1);
  t.equal(w.got, null, 'not yet');
  m.clock.increment(1);
  t.equal(m.state(), 'idle');
  t.same(w.got, [['{"type":"heartbeat","id":0}']], 'a heartbeat answers it');
  t.equal(m.context().waiter, null);

  const w2 = waiter();
  m.queue.acknowledge(0);
  m.send({ type: 'POLL', waiter: w2, dontBlock: false });
  m.send({ type: 'FLUSH' });
  t.equal(m.state(), 'waiting', 'FLUSH with nothing pending keeps it held');
  m.push('x');
  m.send({ type: 'FLUSH' });
  t.equal(m.state(), 'idle');
  t.same(w2.got, [['{"type":"x","id":1}']]);
  t.equal(m.heartbeats.size, 0, 'answered: its deadline is disarmed');
  m.clock.increment(10 * HEARTBEAT_MS);
  t.equal(m.queue.size, 1, 'no heartbeat once answered: the timer went with the state');
  t.end();
});

t.test('a poll is answered at once when events are pending or with dont_block', (t) => {
  const m = setup(t);
  const w = waiter();
  m.send({ type: 'POLL', waiter: w, dontBlock: true });
  t.same(w.got, [[]], 'dont_block: answered empty');
  m.push('x');
  const w2 = waiter();
  m.send({ type: 'POLL', waiter: w2, dontBlock: false });
  t.same(w2.got, [['{"type":"x","id":0}']]);
  t.equal(m.state(), 'idle');
  t.end();
});

t.test(
  'one consumer at a time: a new poll finishes the held one; a stale abort is ignored',
  (t) => {
    const m = setup(t);
    const first = waiter();
    const second = waiter();
    m.send({ type: 'POLL', waiter: first, dontBlock: false });
    m.clock.increment(HEARTBEAT_MS / 2);
    m.send({ type: 'POLL', waiter: second, dontBlock: false });
    t.equal(m.context().waiter, second);
    t.equal(first.got, null, 'finished after the current handler, not inside it');
    m.runDeferred();
    t.same(first.got, [[]], 'the first poll is finished with what is pending');
    m.send({ type: 'ABORT', waiter: first });
    t.equal(m.state(), 'waiting', 'the abort of a finished poll changes nothing');
    m.clock.increment(HEARTBEAT_MS / 2 + 1);
    t.equal(second.got, null, 'the heartbeat was re-armed for the second poll');
    t.equal(m.heartbeats.size, 1, 'one deadline: the first poll’s went with it');
    m.send({ type: 'ABORT', waiter: second });
    t.equal(m.state(), 'idle');
    t.equal(m.heartbeats.size, 0, 'aborted: disarmed');
    m.send({ type: 'HEARTBEAT', waiter: second });
    t.equal(m.queue.size, 0, 'a heartbeat for a poll no longer held changes nothing');
    m.clock.increment(10 * HEARTBEAT_MS);
    t.equal(second.got, null, 'an aborted poll is never answered');
    t.equal(m.queue.size, 0, 'and no heartbeat is queued for it');
    t.end();
  },
);

t.test('a socket: pending events at once, heartbeats only when quiet', (t) => {
  const m = setup(t);
  m.push('a');
  const s = socket();
  m.send({ type: 'ATTACH', sink: s });
  t.equal(m.state(), 'streaming');
  t.same(s.frames, [['{"type":"a","id":0}']], 'what was pending');
  // The fan-out feeds the socket as events come (a data operation on the attachment).
  m.clock.increment(600);
  m.push('b');
  sendPending(m.context(), m.context().socket!);
  t.same(s.frames[1], ['{"type":"b","id":1}']);
  m.clock.increment(600);
  t.equal(s.frames.length, 2, 'busy 600 ms ago: no heartbeat yet');
  m.clock.increment(400);
  t.same(s.frames[2], ['{"type":"heartbeat","id":2}'], 'quiet for the heartbeat delay');
  m.clock.increment(HEARTBEAT_MS);
  t.same(s.frames[3], ['{"type":"heartbeat","id":3}'], 'and again');
  m.send({ type: 'DETACH', sink: socket() });
  t.equal(m.state(), 'streaming', 'another socket leaving changes nothing');
  m.send({ type: 'DETACH', sink: s });
  t.equal(m.state(), 'idle');
  t.equal(m.context().socket, null);
  m.clock.increment(10 * HEARTBEAT_MS);
  t.equal(s.frames.length, 4, 'no frame after detaching');
  t.equal(m.queue.size, 4, 'nothing acknowledged, nothing lost');
  t.end();
});

t.test('replacing consumers: socket by socket, socket by poll, poll by socket', (t) => {
  const m = setup(t);
  const s1 = socket();
  const s2 = socket();
  m.send({ type: 'ATTACH', sink: s1 });
  m.send({ type: 'ATTACH', sink: s2 });
  t.same(s1.closed, [CLOSE.REPLACED, 'replaced']);
  t.equal(m.context().socket?.sink, s2);
  const w = waiter();
  m.send({ type: 'POLL', waiter: w, dontBlock: false });
  t.same(s2.closed, [CLOSE.REPLACED, 'replaced']);
  t.equal(m.state(), 'waiting');
  const s3 = socket();
  m.push('x');
  m.send({ type: 'ATTACH', sink: s3 });
  m.runDeferred();
  t.same(w.got, [['{"type":"x","id":0}']], 'the held poll is finished');
  t.same(s3.frames, [['{"type":"x","id":0}']], 'and the socket gets the same pending events');
  t.equal(m.state(), 'streaming');
  t.end();
});

t.test('expiry: the sweep collects a queue idle for its lifetime, never one in use', (t) => {
  const m = setup(t);
  m.clock.increment(LIFESPAN_MS - 1);
  m.send({ type: 'SWEEP' });
  t.equal(m.state(), 'idle', 'not yet');
  const w = waiter();
  m.send({ type: 'POLL', waiter: w, dontBlock: true });
  m.clock.increment(LIFESPAN_MS - 1);
  m.send({ type: 'SWEEP' });
  t.equal(m.state(), 'idle', 'a poll restarts the lifetime');
  const s = socket();
  m.send({ type: 'ATTACH', sink: s });
  m.clock.increment(5 * LIFESPAN_MS);
  m.send({ type: 'SWEEP' });
  t.equal(m.state(), 'streaming', 'a queue with a consumer never expires');
  m.send({ type: 'DETACH', sink: s });
  m.clock.increment(LIFESPAN_MS);
  m.send({ type: 'SWEEP' });
  t.equal(m.state(), 'expired');
  t.equal(m.actor.getSnapshot().status, 'done');
  t.end();
});

t.test('how a queue ends: deleted, discarded, deactivated', (t) => {
  {
    const m = setup(t);
    const w = waiter();
    m.send({ type: 'POLL', waiter: w, dontBlock: false });
    m.push('x');
    m.send({ type: 'END', reason: 'deleted' });
    t.equal(m.state(), 'expired');
    m.runDeferred();
    t.same(w.got, [['{"type":"x","id":0}']], 'deleted: the held poll gets what is pending');
  }
  {
    const m = setup(t);
    const w = waiter();
    m.send({ type: 'POLL', waiter: w, dontBlock: false });
    m.push('x');
    m.send({ type: 'END', reason: 'discarded' });
    m.runDeferred();
    t.same(w.got, [[]], 'discarded: answered empty (the next poll is refused)');
  }
  for (const [reason, code] of [
    ['deleted', CLOSE.QUEUE_GONE],
    ['discarded', CLOSE.QUEUE_GONE],
    ['deactivated', CLOSE.DEACTIVATED],
  ] as const) {
    const m = setup(t);
    const s = socket();
    m.send({ type: 'ATTACH', sink: s });
    m.send({ type: 'END', reason });
    t.equal(s.closed?.[0], code, `${reason}: the socket is closed with ${code}`);
    t.equal(m.state(), 'expired');
  }
  t.end();
});

t.test('shutdown answers a held poll now and closes a socket with 1001', (t) => {
  const m = setup(t);
  const w = waiter();
  m.send({ type: 'POLL', waiter: w, dontBlock: false });
  m.send({ type: 'SHUTDOWN' });
  t.same(w.got, [[]], 'answered at once (not inside a request handler)');
  t.equal(m.state(), 'idle');
  const s = socket();
  m.send({ type: 'ATTACH', sink: s });
  m.send({ type: 'SHUTDOWN' });
  t.same(s.closed, [CLOSE.GOING_AWAY, 'server restarting']);
  t.equal(m.state(), 'idle', 'the queue stays, to be saved');
  t.end();
});

t.test('a consumer that throws is logged; the machine goes on', (t) => {
  const m = setup(t);
  const bad: Waiter = {
    respond() {
      throw new Error('gone');
    },
  };
  m.send({ type: 'POLL', waiter: bad, dontBlock: true });
  t.match(m.logged, [/answering a poll failed/]);
  const w = waiter();
  m.send({ type: 'POLL', waiter: w, dontBlock: true });
  t.same(w.got, [[]], 'still serving');
  t.end();
});
