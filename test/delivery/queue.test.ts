/**
 * One queue's consumer side on its own (src/delivery/queue.ts), on xstate's SimulatedClock: held
 * polls and their heartbeats, sockets and theirs, one consumer at a time, expiry by the sweep, the
 * ways a queue ends, shutdown — no real timer anywhere.
 */
import t, { type Test } from 'tap';
import { SimulatedClock } from 'xstate';
import { EventBuffer } from '../../src/delivery/buffer.js';
import { CLOSE, type PollConsumer, type SocketConsumer } from '../../src/delivery/consumer.js';
import { QueueFilter } from '../../src/delivery/filter.js';
import { queueSettings } from '../helpers/queue-settings.js';
import { Heartbeats } from '../../src/delivery/heartbeats.js';
import { QueueHandle } from '../../src/delivery/queue.js';
import { eventJson, SharedEvent, type QueuedEvent } from '../../src/delivery/wire.js';

const HEARTBEAT_MS = 1000;
const LIFESPAN_MS = 60_000;

const SETTINGS = queueSettings(1, 1);

function setup(t: Test) {
  const clock = new SimulatedClock();
  const queue = new EventBuffer();
  const deferred: (() => void)[] = [];
  const logged: string[] = [];
  const heartbeats = new Heartbeats(clock, () => clock.now());
  const hooks = {
    heartbeatDelay: () => HEARTBEAT_MS,
    heartbeatMinMs: HEARTBEAT_MS,
    defer: (fn: () => void) => void deferred.push(fn),
    now: () => clock.now(),
    log: (msg: string) => void logged.push(msg),
    heartbeats,
  };
  const rt = new QueueHandle('q1', SETTINGS, new QueueFilter(SETTINGS), queue, hooks, LIFESPAN_MS);
  t.teardown(() => heartbeats.clear());
  /** Runs what the queue deferred to "after the current handler". */
  const runDeferred = () => {
    for (const fn of deferred.splice(0)) fn();
  };
  const push = (type: string) => queue.push(SharedEvent.of({ type }));
  return { clock, queue, rt, runDeferred, push, logged, heartbeats };
}

function poll(dontBlock = false): PollConsumer & { got: string[][] | null } {
  const p = {
    kind: 'poll' as const,
    dontBlock,
    got: null as string[][] | null,
    deliver(events: readonly QueuedEvent[]) {
      (p.got ??= []).push(events.map(eventJson));
    },
  };
  return p;
}

function socket(): SocketConsumer & { frames: string[][]; closed: [number, string] | null } {
  const s = {
    kind: 'socket' as const,
    frames: [] as string[][],
    closed: null as [number, string] | null,
    deliver(events: readonly QueuedEvent[]) {
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
  const w = poll();
  m.rt.attach(w);
  t.equal(m.rt.state, 'waiting');
  t.equal(m.rt.consumer, w, 'the slot holds the poll');
  t.equal(m.heartbeats.size, 1, 'its heartbeat deadline is armed');
  m.clock.increment(HEARTBEAT_MS - 1);
  t.equal(w.got, null, 'not yet');
  m.clock.increment(1);
  t.equal(m.rt.state, 'idle');
  t.same(w.got, [['{"type":"heartbeat","id":0}']], 'a heartbeat answers it');
  t.equal(m.rt.consumer, null);

  const w2 = poll();
  m.queue.acknowledge(0);
  m.rt.attach(w2);
  t.equal(m.rt.flush(), false, 'a flush with nothing pending writes nothing');
  t.equal(m.rt.state, 'waiting', 'and keeps the poll held');
  m.push('x');
  t.equal(m.rt.flush(), true);
  t.equal(m.rt.state, 'idle', 'answered: it left the slot');
  t.same(w2.got, [['{"type":"x","id":1}']]);
  t.equal(m.heartbeats.size, 0, 'answered: its deadline is disarmed');
  m.clock.increment(10 * HEARTBEAT_MS);
  t.equal(m.queue.size, 1, 'no heartbeat once answered');
  t.same(w2.got, [['{"type":"x","id":1}']], 'and answered once');
  t.end();
});

t.test('a poll is answered at once when events are pending or with dont_block', (t) => {
  const m = setup(t);
  const w = poll(true);
  m.rt.attach(w);
  t.same(w.got, [[]], 'dont_block: answered empty');
  t.equal(m.rt.state, 'idle', 'and never held');
  m.push('x');
  const w2 = poll();
  m.rt.attach(w2);
  t.same(w2.got, [['{"type":"x","id":0}']]);
  t.equal(m.rt.state, 'idle');
  t.equal(m.heartbeats.size, 0);
  t.end();
});

t.test('a poll answered re-polls from inside its answer: the new one is held', (t) => {
  const m = setup(t);
  let second: ReturnType<typeof poll> | null = null;
  const first: PollConsumer = {
    kind: 'poll',
    dontBlock: false,
    deliver: (events) => {
      m.queue.acknowledge(events[events.length - 1]!.id);
      m.rt.attach((second = poll()));
    },
  };
  m.rt.attach(first);
  m.push('x');
  m.rt.flush();
  t.equal(m.rt.consumer, second, 'the poll made while answering is the one held');
  t.equal(m.rt.state, 'waiting');
  m.runDeferred();
  t.equal(second!.got, null, 'and the first is not answered again through it');
  t.end();
});

t.test(
  'one consumer at a time: a new poll finishes the held one; a stale abort is ignored',
  (t) => {
    const m = setup(t);
    const first = poll();
    const second = poll();
    m.rt.attach(first);
    m.clock.increment(HEARTBEAT_MS / 2);
    m.rt.attach(second);
    t.equal(m.rt.consumer, second);
    t.equal(first.got, null, 'finished after the current handler, not inside it');
    m.runDeferred();
    t.same(first.got, [[]], 'the first poll is finished with what is pending');
    m.rt.detach(first);
    t.equal(m.rt.state, 'waiting', 'the abort of a finished poll changes nothing');
    m.clock.increment(HEARTBEAT_MS / 2 + 1);
    t.equal(second.got, null, 'the heartbeat was re-armed for the second poll');
    t.equal(m.heartbeats.size, 1, 'one deadline: the first poll’s went with it');
    m.rt.detach(second);
    t.equal(m.rt.state, 'idle');
    t.equal(m.heartbeats.size, 0, 'aborted: disarmed');
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
  m.rt.attach(s);
  t.equal(m.rt.state, 'streaming');
  t.same(s.frames, [['{"type":"a","id":0}']], 'what was pending');
  m.clock.increment(600);
  m.push('b');
  t.equal(m.rt.flush(), true, 'a flush sends what was appended');
  t.same(s.frames[1], ['{"type":"b","id":1}']);
  t.equal(m.rt.flush(), false, 'and nothing twice');
  m.clock.increment(600);
  t.equal(s.frames.length, 2, 'busy 600 ms ago: no heartbeat yet');
  m.clock.increment(400);
  t.same(s.frames[2], ['{"type":"heartbeat","id":2}'], 'quiet for the heartbeat delay');
  m.clock.increment(HEARTBEAT_MS);
  t.same(s.frames[3], ['{"type":"heartbeat","id":3}'], 'and again');
  t.equal(m.heartbeats.size, 1, 'one deadline at a time');
  m.rt.detach(socket());
  t.equal(m.rt.state, 'streaming', 'another socket leaving changes nothing');
  m.rt.detach(s);
  t.equal(m.rt.state, 'idle');
  t.equal(m.rt.consumer, null);
  t.equal(m.heartbeats.size, 0, 'detached: its deadline is disarmed');
  m.clock.increment(10 * HEARTBEAT_MS);
  t.equal(s.frames.length, 4, 'no frame after detaching');
  t.equal(m.queue.size, 4, 'nothing acknowledged, nothing lost');
  t.end();
});

t.test('replacing consumers: socket by socket, socket by poll, poll by socket', (t) => {
  const m = setup(t);
  const s1 = socket();
  const s2 = socket();
  m.rt.attach(s1);
  m.rt.attach(s2);
  t.same(s1.closed, [CLOSE.REPLACED, 'replaced']);
  t.equal(m.rt.consumer, s2);
  const w = poll();
  m.rt.attach(w);
  t.same(s2.closed, [CLOSE.REPLACED, 'replaced']);
  t.equal(m.rt.state, 'waiting');
  const s3 = socket();
  m.push('x');
  m.rt.attach(s3);
  m.runDeferred();
  t.same(w.got, [['{"type":"x","id":0}']], 'the held poll is finished');
  t.same(s3.frames, [['{"type":"x","id":0}']], 'and the socket gets the same pending events');
  t.equal(m.rt.state, 'streaming');
  t.equal(m.heartbeats.size, 1, 'one deadline: the socket’s');
  t.end();
});

t.test('expiry: the sweep collects a queue idle for its lifetime, never one in use', (t) => {
  const m = setup(t);
  m.clock.increment(LIFESPAN_MS - 1);
  t.equal(m.rt.sweep(), false);
  t.equal(m.rt.state, 'idle', 'not yet');
  m.rt.attach(poll(true));
  m.clock.increment(LIFESPAN_MS - 1);
  m.rt.sweep();
  t.equal(m.rt.state, 'idle', 'a poll restarts the lifetime');
  const s = socket();
  m.rt.attach(s);
  m.clock.increment(5 * LIFESPAN_MS);
  m.rt.sweep();
  t.equal(m.rt.state, 'streaming', 'a queue with a consumer never expires');
  m.rt.detach(s);
  m.clock.increment(LIFESPAN_MS);
  t.equal(m.rt.sweep(), true);
  t.equal(m.rt.state, 'expired');
  t.ok(m.rt.ended);
  const late = poll();
  m.rt.attach(late);
  t.equal(m.rt.consumer, null, 'an expired queue takes no consumer');
  t.end();
});

t.test('how a queue ends: deleted, discarded, deactivated', (t) => {
  {
    const m = setup(t);
    const w = poll();
    m.rt.attach(w);
    m.push('x');
    m.rt.end('deleted');
    t.equal(m.rt.state, 'expired');
    t.equal(m.heartbeats.size, 0);
    m.queue.clear();
    m.runDeferred();
    t.same(w.got, [['{"type":"x","id":0}']], 'deleted: the held poll gets what was pending');
  }
  {
    const m = setup(t);
    const w = poll();
    m.rt.attach(w);
    m.push('x');
    m.rt.end('discarded');
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
    m.rt.attach(s);
    m.rt.end(reason);
    t.equal(s.closed?.[0], code, `${reason}: the socket is closed with ${code}`);
    t.equal(m.rt.state, 'expired');
  }
  t.end();
});

t.test('shutdown answers a held poll now and closes a socket with 1001', (t) => {
  const m = setup(t);
  const w = poll();
  m.rt.attach(w);
  m.rt.shutdown();
  t.same(w.got, [[]], 'answered at once (not inside a request handler)');
  t.equal(m.rt.state, 'idle');
  const s = socket();
  m.rt.attach(s);
  m.rt.shutdown();
  t.same(s.closed, [CLOSE.GOING_AWAY, 'server restarting']);
  t.equal(m.rt.state, 'idle', 'the queue stays, to be saved');
  t.equal(m.heartbeats.size, 0);
  t.end();
});

t.test('a consumer that throws is logged; the queue goes on', (t) => {
  const m = setup(t);
  m.rt.attach({
    kind: 'poll',
    dontBlock: true,
    deliver() {
      throw new Error('gone');
    },
  });
  t.match(m.logged, [/answering a poll failed/]);
  const w = poll(true);
  m.rt.attach(w);
  t.same(w.got, [[]], 'still serving');
  m.rt.attach({
    kind: 'socket',
    deliver() {
      throw new Error('gone');
    },
    close() {
      throw new Error('gone');
    },
  });
  m.push('x');
  m.rt.flush();
  m.rt.attach(socket());
  t.match(m.logged, [/poll failed/, /sending on a socket failed/, /closing a socket failed/]);
  t.equal(m.rt.state, 'streaming', 'still serving');
  t.end();
});
