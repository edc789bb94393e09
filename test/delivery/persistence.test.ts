/**
 * Saving and restoring queues (src/delivery/persistence.ts), in process: everything comes
 * back as it was (ids, pending events with their per-queue parts, JSON and msgpack alike, the
 * registration — including fields this code does not know), events shared by many queues are
 * written once and held once again, a cut file gives back the queues before the cut, the previous
 * format is still read, and a save that cannot be written throws and leaves the old file alone.
 * The whole server across a real SIGTERM: test/api/restart-backlog.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { restoreQueues, saveQueues } from '../../src/delivery/persistence.js';
import type { QueueHandle } from '../../src/delivery/queue.js';
import { EventQueues } from '../../src/delivery/publisher.js';
import type { QueueSettings } from '../../src/delivery/filter.js';
import { queueSettings } from '../helpers/queue-settings.js';
import { eventJson, eventsResponsePacked } from '../../src/delivery/wire.js';
import type { OutboundEvent } from '../../src/lib/events.js';
import { pack } from '../../src/lib/pack.js';
import { captureLog } from '../helpers/log.js';

const REALM = 1;
const INFO = { service_version: '1.0', service_merge_base: 'x', service_feature_level: 1 };

function makeQueues(t: Test): EventQueues {
  const q = new EventQueues({
    clock: Date.now,
    heartbeatMs: 3_600_000,
    heartbeatJitterMs: 0,
    queueIdleLifetimeMs: 3_600_000,
    queueSweepMs: 3_600_000,
  });
  t.teardown(() => q.close());
  return q;
}

function settings(userId: number, o: Partial<QueueSettings> = {}): QueueSettings {
  return queueSettings(userId, REALM, o);
}

function message(id: number, users: number[], senderQueueId?: string): OutboundEvent {
  return {
    event: {
      type: 'message',
      message: {
        id,
        type: 'stream',
        display_recipient: 'Denmark',
        stream_id: 3,
        subject: 'ç',
        content: `<p>message ${id} ${'z'.repeat(2000)}</p>`,
        content_type: 'text/html',
        sender_id: 1,
        sender_email: 'a@x.com',
        recipient_id: 7,
      },
    },
    users,
    flags: { 1: ['read'], 2: ['mentioned'] },
    message: {
      rawContent: `message ${id}`,
      senderAvatarIsExternal: false,
      publicChannel: true,
      ...(senderQueueId ? { senderQueueId, localId: `l${id}` } : {}),
    },
  };
}

const contentsOf = (rt: QueueHandle) => rt.queue.contents().map(eventJson);

t.test('queues come back as they were, shared events written and held once', (t) => {
  const dir = t.testdir();
  const before = makeQueues(t);
  const a = before.register(settings(1));
  const b = before.register(settings(2, { applyMarkdown: false }));
  const c = before.register({ ...settings(2), laterSetting: 'future' } as QueueSettings);
  const more = [1, 2, 3, 4].map(() => before.register(settings(1)));
  for (let i = 0; i < 20; i++) {
    before.publish(REALM, [message(i, [1, 2], i % 2 ? a.id : undefined)]);
    before.publish(REALM, [{ event: { type: 'note', n: i }, users: [1, 2] }]);
  }
  before.acknowledge(a, 4);
  before.acknowledge(c, 39);
  const { bytes } = saveQueues(before, dir);
  const naive = [a, b, c, ...more].reduce((n, rt) => n + rt.queue.bytes, 0);
  t.ok(bytes < naive / 2, `each shared event written once: ${bytes} bytes, ${naive} naively`);

  const after = makeQueues(t);
  t.equal(
    restoreQueues(after, dir, INFO, () => true),
    7,
  );
  t.ok(fs.existsSync(path.join(dir, 'event-queues.msgpack.last')), 'the file is moved aside');
  for (const rt of [a, b, c, ...more]) {
    const back = after.get(rt.id)!;
    t.same(back.settings, rt.settings, 'the registration as it was');
    t.equal(back.queue.newestPrunedId, rt.queue.newestPrunedId);
    const restored = contentsOf(back);
    t.same(restored.slice(0, -1), contentsOf(rt), 'every pending event, per-queue parts included');
    t.match(restored[restored.length - 1], /^\{"type":"restart",/, 'then a restart event');
    const packed = eventsResponsePacked(back.queue.contents().slice(0, -1));
    t.same(packed, eventsResponsePacked(rt.queue.contents()), 'msgpack frames alike');
  }
  t.equal((after.get(c.id)!.settings as { laterSetting?: string }).laterSetting, 'future');
  const [a0, b0] = [after.get(a.id)!, after.get(c.id)!].map((rt) => rt.queue.contents());
  t.equal(
    a0![a0!.length - 2]!.shared,
    after.get(b.id)!.queue.contents().slice(-2)[0]!.shared,
    'an event two queues hold is one object again',
  );
  t.equal(b0!.length, 1, 'an acknowledged queue holds only its restart event');
  t.ok(
    after.stats().bytes <= before.stats().bytes + 2000,
    `memory as before: ${after.stats().bytes} vs ${before.stats().bytes}`,
  );
  t.end();
});

t.test('a file cut short gives back the queues before the cut', (t) => {
  const dir = t.testdir();
  const before = makeQueues(t);
  const ids = Array.from({ length: 5 }, (_, i) => before.register(settings(i + 1)).id);
  for (let i = 0; i < 5; i++) before.publish(REALM, [message(i, [1, 2, 3, 4, 5])]);
  saveQueues(before, dir);
  const file = path.join(dir, 'event-queues.msgpack');
  const whole = fs.readFileSync(file);
  fs.writeFileSync(file, whole.subarray(0, whole.length - 30));
  const after = makeQueues(t);
  const logged = captureLog(t);
  const n = restoreQueues(after, dir, INFO, () => true);
  t.equal(n, 4, 'all but the last');
  t.same(
    ids.map((id) => after.has(id)),
    [true, true, true, true, false],
  );
  t.match(JSON.stringify(logged), /could not read the rest of the saved event queues/);
  t.end();
});

t.test('a file of the previous format is read, equal events held once', (t) => {
  const dir = t.testdir();
  const json = '{"type":"note","n":1}';
  const queue = (id: string, userId: number) => ({
    id,
    settings: settings(userId),
    events: {
      nextEventId: 3,
      newestPrunedId: 0,
      events: [
        [1, json],
        [2, '{"type":"x"}'],
      ],
    },
  });
  fs.writeFileSync(
    path.join(dir, 'event-queues.msgpack'),
    pack({ version: 1, savedAt: 0, queues: [queue('q1', 1), queue('q2', 2), { id: 7 }] }),
  );
  const after = makeQueues(t);
  t.equal(
    restoreQueues(after, dir, INFO, () => true),
    2,
  );
  const [e1, e2] = ['q1', 'q2'].map((id) => after.get(id)!.queue.contents());
  t.same(e1!.map(eventJson), [
    '{"type":"note","n":1,"id":1}',
    '{"type":"x","id":2}',
    e1!.map(eventJson)[2],
  ]);
  t.equal(e1![0]!.shared, e2![0]!.shared);
  t.end();
});

t.test('a save that cannot be written throws and leaves the previous file', (t) => {
  const dir = t.testdir();
  const q = makeQueues(t);
  q.register(settings(1));
  saveQueues(q, dir);
  const file = path.join(dir, 'event-queues.msgpack');
  const previous = fs.readFileSync(file);
  fs.mkdirSync(`${file}.tmp`);
  q.register(settings(2));
  t.throws(() => saveQueues(q, dir), { code: 'EISDIR' });
  t.same(fs.readFileSync(file), previous);
  t.end();
});
