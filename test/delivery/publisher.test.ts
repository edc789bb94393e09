/**
 * The queues' bounds and policies (src/delivery/publisher.ts; docs/robustness.md "Event queues"), in
 * process on a clock the test moves: the per-user cap and who gives way, the per-queue bounds (never
 * below 5,000 events), the server-wide budget and the order it discards in, memory counted once per
 * shared event, and ending a deactivated user's or realm's queues.
 */
import t, { type Test } from 'tap';
import { SimulatedClock } from 'xstate';
import { chunkBytes } from '../../src/delivery/buffer.js';
import { CLOSE, type SocketConsumer } from '../../src/delivery/consumer.js';
import type { QueueHandle } from '../../src/delivery/queue.js';
import { EventQueues, type EventQueuesConfig } from '../../src/delivery/publisher.js';
import { QUEUE_MIN_EVENTS, TooManyQueuesError } from '../../src/delivery/limits.js';
import type { QueueSettings } from '../../src/delivery/filter.js';
import { queueSettings } from '../helpers/queue-settings.js';
import type { QueuedEvent } from '../../src/delivery/wire.js';
import { captureLog } from '../helpers/log.js';

const REALM = 1;
const IDLE_MS = 600_000;

function setup(t: Test, limits: Partial<EventQueuesConfig> = {}) {
  const clock = new SimulatedClock();
  const queues = new EventQueues(
    {
      clock: () => clock.now(),
      heartbeatMs: 3_600_000,
      heartbeatJitterMs: 0,
      queueIdleLifetimeMs: IDLE_MS,
      queueSweepMs: 3_600_000,
      ...limits,
    },
    undefined,
    clock,
  );
  t.teardown(() => queues.close());
  return { clock, queues };
}

function settings(userId: number, realmId = REALM): QueueSettings {
  return queueSettings(userId, realmId);
}

let seq = 0;
/** One event (distinct each call) for these users, of about `bytes` bytes. */
function publish(q: EventQueues, users: number[], bytes = 50, realmId = REALM): void {
  q.publish(realmId, [{ event: { type: 'note', n: seq++, pad: 'x'.repeat(bytes) }, users }]);
}

const GONE = { code: 'BAD_EVENT_QUEUE_ID' };
const TOO_MANY = { message: /^Too many event queues/ };

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A GET /events: acknowledges `lastEventId`, then attaches a poll answered through `answer`. */
function poll(
  q: EventQueues,
  rt: QueueHandle,
  lastEventId: number,
  dontBlock: boolean,
  answer: (events: readonly QueuedEvent[]) => void,
): void {
  q.acknowledge(rt, lastEventId);
  q.attach(rt, { kind: 'poll', dontBlock, deliver: answer });
}

t.test('a user may hold maxQueuesPerUser queues; an unused one gives way, else refused', (t) => {
  const { clock, queues } = setup(t, { maxQueuesPerUser: 3 });
  const [a, b, c] = [1, 2, 3].map(() => queues.register(settings(10)));
  t.throws(() => queues.register(settings(10)), new TooManyQueuesError(3), 'the fourth is refused');
  t.match(new TooManyQueuesError(3).message, /at most 3/, 'the message names the limit');
  t.ok(queues.register(settings(11)), 'other users are not affected');
  clock.increment(IDLE_MS / 2);
  poll(queues, b!, -1, false, () => {}); // b has a consumer: never the one to give way
  poll(queues, c!, -1, true, () => {}); // c was used recently
  clock.increment(IDLE_MS / 2);
  const d = queues.register(settings(10));
  t.throws(() => queues.access(10, a!.id), GONE, 'a, unused the longest, gave way');
  t.ok(queues.access(10, d.id));
  t.throws(() => queues.register(settings(10)), TOO_MANY, 'b and c are in use: refused');
  t.equal(queues.forUser(10).length, 3);
  t.end();
});

t.test('a queue past its event bound is discarded; never one under 5,000 events', async (t) => {
  const { queues } = setup(t, { queueMaxEvents: QUEUE_MIN_EVENTS });
  const held = queues.register(settings(1));
  const other = queues.register(settings(2));
  for (let i = 0; i < QUEUE_MIN_EVENTS; i++) publish(queues, [1, 2]);
  t.equal(held.queue.size, QUEUE_MIN_EVENTS, '5,000 unacknowledged events are kept');
  poll(queues, other, QUEUE_MIN_EVENTS - 1, false, () => {}); // user 2 acknowledges everything
  publish(queues, [1, 2]);
  t.throws(() => queues.access(1, held.id), GONE, 'the 5,001st discards it');
  t.equal(other.queue.size, 1, "the other user's queue is untouched");
  t.equal(queues.stats().discarded, 1);
  await tick();
  t.end();
});

t.test('a queue past its byte bound is discarded, once past 5,000 events', (t) => {
  const { queues } = setup(t, { queueMaxBytes: 1024 * 1024 });
  const rt = queues.register(settings(1));
  publish(queues, [1], 2 * 1024 * 1024);
  t.ok(queues.access(1, rt.id), 'one event over the byte bound: kept (under 5,000 events)');
  for (let i = 1; i < QUEUE_MIN_EVENTS; i++) publish(queues, [1], 10);
  t.equal(rt.queue.size, QUEUE_MIN_EVENTS);
  publish(queues, [1], 10);
  t.throws(() => queues.access(1, rt.id), GONE);
  t.equal(queues.stats().entries, 0, 'what it held is released');
  t.equal(queues.stats().bytes, 0);
  t.end();
});

t.test('an event many queues hold is counted once; acknowledging releases it', (t) => {
  const { queues } = setup(t);
  const rts = Array.from({ length: 100 }, (_, i) => queues.register(settings(i + 1)));
  const users = rts.map((rt) => rt.userId);
  publish(queues, users, 10_000);
  const s = queues.stats();
  t.equal(s.entries, 100);
  // Each queue holds its one entry in a first chunk of 8.
  t.ok(s.bytes < 2 * 10_000 + 500 + 100 * chunkBytes(8), `held once: ${s.bytes} bytes`);
  t.ok(s.bytes > 2 * 10_000, 'and counted');
  t.ok(rts[0]!.queue.bytes > 10_000, "each queue's own size counts the event as sent");
  for (const rt of rts) queues.acknowledge(rt, 0);
  t.same(queues.stats(), { ...s, entries: 0, bytes: 0 }, 'all released');
  t.end();
});

t.test('over the budget: queues without a consumer, least recently used first', async (t) => {
  const budget = 2 * 1024 * 1024;
  const { clock, queues } = setup(t, { queueMemoryBudgetBytes: budget });
  const oldest = queues.register(settings(1));
  clock.increment(1000);
  const recent = queues.register(settings(2));
  clock.increment(1000);
  const polling = queues.register(settings(3));
  const answers: (readonly QueuedEvent[])[] = [];
  const repoll = (events: readonly QueuedEvent[]) => {
    answers.push(events);
    const last = events[events.length - 1];
    if (last) poll(queues, polling, last.id, false, repoll);
  };
  poll(queues, polling, -1, false, repoll);
  for (let i = 0; i < 10; i++) publish(queues, [2], 100);
  // ~40 KB counted per event: the budget is passed after about 50 of them.
  for (let i = 0; i < 60; i++) {
    publish(queues, [1, 3], 20_000);
    await tick(); // the held poll is answered and polls again
  }
  t.throws(() => queues.access(1, oldest.id), GONE, 'the least recently used went');
  t.ok(queues.access(2, recent.id), 'that was enough: the next one stays');
  for (let i = 0; i < 60; i++) {
    publish(queues, [2, 3], 20_000);
    await tick();
  }
  t.throws(() => queues.access(2, recent.id), GONE, 'then, over again, the next');
  t.ok(queues.access(3, polling.id), 'a queue its client keeps polling stays');
  t.equal(answers.flat().length, 120, 'and got every event');
  t.ok(queues.stats().bytes <= budget, `under the budget: ${queues.stats().bytes}`);
  t.equal(queues.stats().discarded, 2);
});

t.test("deactivation ends the user's queues: polls answered, sockets closed 4003", async (t) => {
  const { queues } = setup(t);
  const held = queues.register(settings(1));
  const streamed = queues.register(settings(1));
  const bystander = queues.register(settings(2));
  const elsewhere = queues.register(settings(1, 2));
  let answered: readonly QueuedEvent[] | null = null;
  poll(queues, held, -1, false, (events) => (answered = events));
  let closed: number | null = null;
  const socket: SocketConsumer = {
    kind: 'socket',
    deliver: () => {},
    close: (code) => (closed = code),
  };
  queues.attach(streamed, socket);
  queues.endSessions(REALM, [1]);
  t.equal(closed, CLOSE.DEACTIVATED);
  await tick();
  t.same(answered, [], 'the held poll is answered');
  t.throws(() => queues.access(1, held.id), GONE);
  t.throws(() => queues.access(1, streamed.id), GONE);
  t.ok(queues.access(2, bystander.id), 'other users keep theirs');
  t.ok(queues.access(1, elsewhere.id), "the same user's queue in another realm stays");
  queues.endSessions(REALM, null);
  t.throws(() => queues.access(2, bystander.id), GONE, 'the realm: everyone');
  t.ok(queues.access(1, elsewhere.id), 'other realms are not affected');
});

t.test('heartbeats and expiry run on the server clock through the sweep timer', async (t) => {
  const HEARTBEAT = 45_000;
  const SWEEP = 60_000;
  const { clock, queues } = setup(t, { heartbeatMs: HEARTBEAT, queueSweepMs: SWEEP });
  t.equal(queues.serverGeneration, 0, 'server_generation is the clock at start, in seconds');
  const unused = queues.register(settings(1));
  const polled = queues.register(settings(2));
  const answers: (readonly QueuedEvent[])[] = [];
  const repoll = (lastEventId: number) =>
    poll(queues, polled, lastEventId, false, (events) => answers.push(events));
  repoll(-1);
  clock.increment(HEARTBEAT - 1);
  await tick();
  t.equal(answers.length, 0, 'held until the heartbeat is due');
  clock.increment(1);
  await tick();
  t.match(answers, [[{ id: 0, shared: { type: 'heartbeat' } }]], 'the held poll gets a heartbeat');
  // Time moves a minute at a time, so the sweep timer fires at each of its due times; the client
  // polls again after each answer (acknowledging the heartbeat it got: ids 0, 1, ...).
  for (let at = SWEEP; at < IDLE_MS; at += SWEEP) {
    if (!polled.hasConsumer) repoll(answers.length - 1);
    clock.set(at);
    await tick();
  }
  t.ok(queues.access(1, unused.id), 'idle for less than its lifetime: kept');
  clock.set(IDLE_MS);
  t.throws(() => queues.access(1, unused.id), GONE, 'the sweep collected the unused queue');
  t.ok(queues.access(2, polled.id), 'the queue whose client keeps polling stays');
  t.ok(answers.length >= IDLE_MS / SWEEP / 2, 'its polls kept being answered');
  t.match(
    answers,
    Array(answers.length).fill([{ shared: { type: 'heartbeat' } }]),
    'each by a heartbeat',
  );
});

t.test('attach: whether a consumer stays; a gone queue or a closing server lets it go', (t) => {
  const { queues } = setup(t);
  const socket = () => {
    const s = {
      kind: 'socket' as const,
      closed: null as number | null,
      deliver: () => {},
      close: (code: number) => void (s.closed = code),
    };
    return s;
  };
  const gone = queues.register(settings(1));
  queues.remove(gone);
  const late = socket();
  t.equal(queues.attach(gone, late), false);
  t.equal(late.closed, CLOSE.QUEUE_GONE, 'a socket whose queue went since its upgrade: 4001');

  const rt = queues.register(settings(1));
  let answered: readonly QueuedEvent[] | null = null;
  const held = {
    kind: 'poll' as const,
    dontBlock: false,
    deliver: (e: readonly QueuedEvent[]) => void (answered = e),
  };
  t.equal(queues.attach(rt, held), true, 'a held poll stays attached');
  t.equal(queues.consumers().waiting, 1);
  queues.detach(rt, held);
  t.equal(queues.consumers().waiting, 0, 'and detaches when its request goes away');
  t.equal(queues.attach(rt, held), true);
  publish(queues, [1]);
  t.equal(
    queues.attach(rt, { kind: 'poll', dontBlock: true, deliver: () => {} }),
    false,
    'answered at once: not attached',
  );
  t.equal(answered, null, 'the poll it replaced is answered after the handler');
  queues.beginShutdown();
  t.match(answered, [{ id: 0 }], 'by the shutdown at the latest');

  let atOnce: readonly QueuedEvent[] | null = null;
  t.equal(
    queues.attach(rt, { kind: 'poll', dontBlock: false, deliver: (e) => void (atOnce = e) }),
    false,
  );
  t.match(atOnce, [{ id: 0 }], 'closing: a poll is answered at once with what is pending');
  const s = socket();
  t.equal(queues.attach(rt, s), false);
  t.equal(s.closed, CLOSE.GOING_AWAY, 'and a socket closed with 1001');
  t.end();
});

t.test(
  "a queue whose flush throws does not keep the pass's other queues from theirs",
  async (t) => {
    const { queues } = setup(t);
    const a = queues.register(settings(1));
    const b = queues.register(settings(2));
    const got: Record<string, number> = { a: 0, b: 0 };
    const attach = (rt: QueueHandle, name: string) =>
      queues.attach(rt, { kind: 'poll', dontBlock: false, deliver: () => void got[name]!++ });
    attach(a, 'a');
    attach(b, 'b');
    const flush = a.flush.bind(a);
    let failures = 1;
    a.flush = () => {
      if (failures-- > 0) throw new Error('a broken queue');
      return flush();
    };
    const logged = captureLog(t);
    publish(queues, [1, 2]);
    await tick();
    await tick();
    t.same(got, { a: 0, b: 1 }, 'the queue after the broken one is flushed in the same pass');
    publish(queues, [1]);
    await tick();
    await tick();
    t.same(got, { a: 1, b: 1 }, 'the broken queue is flushed at its next event');
    t.match(logged, [{ msg: /flushing an event queue failed/ }], 'the failure is logged');
  },
);
