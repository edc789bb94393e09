/**
 * Feeding sockets in a fan-out's flush (src/delivery/queue.ts sendPending): each socket gets its
 * own frame — its queue's ids, its user's flags, everything it was not sent yet — and the one-event
 * case, a fan-out's usual flush, allocates nothing per socket in the queues' code; nor do the
 * fan-out's and the flush's loops over the queues while V8 runs them unoptimized (measured with
 * V8's sampling heap profiler, short-lived objects included).
 */
import inspector from 'node:inspector/promises';
import t, { type Test } from 'tap';
import { SimulatedClock } from 'xstate';
import type { SocketConsumer } from '../../src/delivery/consumer.js';
import { EventQueues } from '../../src/delivery/publisher.js';
import { eventJson, type QueuedEvent } from '../../src/delivery/wire.js';
import { queueSettings } from '../helpers/queue-settings.js';

const REALM = 1;
const tick = () => new Promise((resolve) => setImmediate(resolve));

function setup(t: Test) {
  const clock = new SimulatedClock();
  const queues = new EventQueues(
    {
      clock: () => clock.now(),
      heartbeatMs: 3_600_000,
      heartbeatJitterMs: 0,
      queueIdleLifetimeMs: 3_600_000,
      queueSweepMs: 3_600_000,
    },
    undefined,
    clock,
  );
  t.teardown(() => queues.close());
  return queues;
}

/** A socket that keeps each frame's events as JSON (read during the call, as a socket does). */
function recorder(): SocketConsumer & { frames: string[][] } {
  const s = {
    kind: 'socket' as const,
    frames: [] as string[][],
    deliver(events: readonly QueuedEvent[]) {
      s.frames.push(events.map(eventJson));
    },
    close() {},
  };
  return s;
}

const edit = (n: number, flags: Record<number, string[]>) => ({
  event: { type: 'update_message', message_id: 7, rendered_content: `<p>v${n}</p>` },
  users: [1, 2, 3],
  flags,
});

t.test('the fan-out and its flush step through queues without iterator garbage', async (t) => {
  const SOCKETS = 2000;
  const queues = setup(t);
  const consumer: SocketConsumer = { kind: 'socket', deliver() {}, close() {} };
  const users = Array.from({ length: SOCKETS }, (_, i) => i + 1);
  const handles = users.map((u) => queues.register(queueSettings(u, REALM)));
  for (const rt of handles) queues.attach(rt, consumer);
  const session = new inspector.Session();
  session.connect();
  t.teardown(() => session.disconnect());
  await session.post('HeapProfiler.enable');
  const sampled: number[] = [];
  for (let round = 0; round < 3; round++) {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 64,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as inspector.HeapProfiler.StartSamplingParameterType);
    queues.publish(REALM, [{ event: { type: 'note', round }, users }]);
    await tick();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    // What the iterator built-ins allocated (`for...of` in code V8 has not optimized yet, as
    // here, first in this file: a realm-wide event may be the first in a while).
    sampled.push(bytesIn(profile.head, /^$/, /^(?!next$|values$)/));
    for (const rt of handles) queues.acknowledge(rt, round);
  }
  // Before: an iterator result per user and per queue in the fan-out and per queue in the flush,
  // 660-800 KB sampled for 2,000 queues in a round run unoptimized (now under 1 KB).
  for (const bytes of sampled) {
    t.ok(bytes < SOCKETS * 8, `${bytes} bytes of iterators sampled for ${SOCKETS} queues`);
  }
});

t.test("each socket's frame has its own queue's id and its user's flags", async (t) => {
  const queues = setup(t);
  const early = queues.register(queueSettings(1, REALM));
  queues.publish(REALM, [{ event: { type: 'note', n: 0 }, users: [1] }]);
  queues.publish(REALM, [{ event: { type: 'note', n: 1 }, users: [1] }]);
  const late = queues.register(queueSettings(2, REALM));
  const behind = queues.register(queueSettings(3, REALM));
  const sockets = [recorder(), recorder(), recorder()];
  queues.acknowledge(early, 1);
  queues.attach(early, sockets[0]!);
  queues.attach(late, sockets[1]!);
  await tick();

  queues.publish(REALM, [edit(1, { 1: ['read'], 2: ['starred'] })]);
  await tick();
  t.match(sockets[0]!.frames[0]![0], /"flags":\["read"\],"id":2\}$/, 'user 1: id 2, read');
  t.match(sockets[1]!.frames[0]![0], /"flags":\["starred"\],"id":0\}$/, 'user 2: id 0, starred');

  // A socket attached when two events wait gets both in one frame, then one frame per event.
  queues.publish(REALM, [edit(2, { 3: ['mentioned'] })]);
  await tick();
  queues.attach(behind, sockets[2]!);
  t.equal(sockets[2]!.frames.length, 1);
  t.match(sockets[2]!.frames[0], [/<p>v1<\/p>.*"flags":\[\],"id":0\}$/, /<p>v2<\/p>.*"id":1\}$/]);
  queues.publish(REALM, [edit(3, { 3: ['read'] })]);
  await tick();
  t.match(sockets[2]!.frames[1], [/<p>v3<\/p>.*"flags":\["read"\],"id":2\}$/]);
  t.match(sockets[0]!.frames.at(-1), [/<p>v3<\/p>.*"flags":\[\],"id":4\}$/]);
  t.match(sockets[1]!.frames.at(-1), [/<p>v3<\/p>.*"flags":\[\],"id":2\}$/]);
  t.same(
    sockets.map((s) => s.frames.map((f) => f.length)),
    [
      [1, 1, 1],
      [1, 1, 1],
      [2, 1],
    ],
    'one frame per flush, nothing twice',
  );
});

t.test('a fan-out flush to many sockets allocates nothing per socket in the queues', async (t) => {
  const SOCKETS = 2000;
  const queues = setup(t);
  let frames = 0;
  let lastId = -1;
  const consumer: SocketConsumer = {
    kind: 'socket',
    deliver(events) {
      frames++;
      lastId = events[events.length - 1]!.id;
    },
    close() {},
  };
  const users = Array.from({ length: SOCKETS }, (_, i) => i + 1);
  const handles = users.map((u) => queues.register(queueSettings(u, REALM)));
  for (const rt of handles) queues.attach(rt, consumer);
  const session = new inspector.Session();
  session.connect();
  t.teardown(() => session.disconnect());
  await session.post('HeapProfiler.enable');
  const sampled: number[] = [];
  for (let round = 0; round < 4; round++) {
    queues.publish(REALM, [{ event: { type: 'note', round }, users }]);
    // Only the flush (the setImmediate after the publish) is sampled, not the fan-out.
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 64,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as inspector.HeapProfiler.StartSamplingParameterType);
    await tick();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    sampled.push(bytesIn(profile.head, /\/delivery\/(queue|buffer)\.js$/));
    for (const rt of handles) queues.acknowledge(rt, round);
  }
  t.equal(frames, 4 * SOCKETS, 'every socket got a frame each round');
  t.equal(lastId, 3);
  // Rounds 2-3: after the first flushes (code warm). Before, sendPending built an array, an
  // event object and a closure per socket: 680-730 KB sampled for 2,000 sockets (now 0-35 KB, by
  // how far V8 has optimized these functions when the rounds run).
  for (const bytes of sampled.slice(2)) {
    t.ok(
      bytes < SOCKETS * 64,
      `${bytes} bytes sampled in queue.js/buffer.js for ${SOCKETS} sockets`,
    );
  }
});

/**
 * Bytes the sampling profile attributes to functions of files matching `file`, but for functions
 * named as `except` says.
 */
function bytesIn(
  node: inspector.HeapProfiler.SamplingHeapProfileNode,
  file: RegExp,
  except?: RegExp,
): number {
  const counted = file.test(node.callFrame.url) && !except?.test(node.callFrame.functionName);
  let sum = counted ? node.selfSize : 0;
  for (const child of node.children) sum += bytesIn(child, file, except);
  return sum;
}
