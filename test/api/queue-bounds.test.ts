/**
 * One member cannot exhaust the server's memory with event queues (issue 10.1; docs/robustness.md
 * "Event queues"). The real server as a child process, its V8 heap capped at 256 MiB: one member
 * asks for 3,000 queues and never polls them while others send 1,000 messages and 9,100 typing
 * notifications to them. Unbounded, that is over 3,000 × 10,000 queued entries (the issue's
 * crash, at about 300 bytes each); bounded, the member gets 100 queues and a clear refusal for
 * the rest, every event is held once however many queues hold it, and each queue is discarded
 * once past 10,000 unacknowledged events (its client told BAD_EVENT_QUEUE_ID). The server keeps
 * serving, and its peak resident memory (/proc) stays far under what the load would take.
 */
import fs from 'node:fs';
import t from 'tap';
import { startChild } from '../helpers/child-server.js';
import { client, ok, prepare, seed, type User } from '../helpers/crash-load.js';

const HEAP_MIB = 256;

/** Runs `n` calls of `fn` with `concurrency` in flight. */
async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>) {
  const out: T[] = new Array<T>(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

t.test('many never-polled queues and many events: bounded, and the server serves', async (t) => {
  const dataDir = t.testdir();
  const [owner, ann, bob] = seed(dataDir) as [User, User, User];
  const server = await startChild(dataDir, { NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}` });
  t.teardown(() => void server.kill('SIGKILL'));
  await prepare(server.url, [owner, ann, bob]);
  const api = client(server.url);
  const before = memoryOf(server.child.pid!);

  const regs = await pool(3000, 8, () =>
    api.post(ann, 'register', { event_types: ['message', 'typing'] }),
  );
  const accepted = regs.filter((r) => r.status === 200).map((r) => r.body.queue_id as string);
  t.equal(accepted.length, 100, 'the first 100 queues are created');
  const refused = regs.filter((r) => r.status !== 200);
  t.equal(refused.length, 2900, 'the rest are refused');
  t.match(refused[0]!.body, {
    result: 'error',
    code: 'BAD_REQUEST',
    msg: /^Too many event queues: a user may have at most 100 at once/,
  });
  t.equal(refused[0]!.status, 400);

  await pool(1000, 8, (i) =>
    api.post(i % 2 ? owner : bob, 'messages', {
      type: 'stream',
      to: 'load',
      topic: 'flood',
      content: `short message ${i}`,
    }),
  ).then((rs) =>
    t.ok(
      rs.every((r) => r.status === 200),
      '1,000 messages sent',
    ),
  );
  const sample = ok(
    await api.get(ann, 'events', { queue_id: accepted[7], last_event_id: -1, dont_block: true }),
    'a queue',
  );
  t.equal((sample.events as unknown[]).length, 1000, 'each queue holds every message');
  ok(
    await api.get(ann, 'events', { queue_id: accepted[7], last_event_id: 999, dont_block: true }),
    'one queue acknowledges them',
  );

  // 9,001 more events reach 10,001 in the queues that acknowledged nothing.
  await pool(9100, 8, (i) =>
    api.post(bob, 'typing', { op: i % 2 ? 'stop' : 'start', to: JSON.stringify([ann.id]) }),
  ).then((rs) =>
    t.ok(
      rs.every((r) => r.status === 200),
      '9,100 typing notifications sent',
    ),
  );
  const gone = await api.get(ann, 'events', { queue_id: accepted[0], last_event_id: -1 });
  t.equal(gone.status, 400, 'a queue past 10,000 unacknowledged events is discarded');
  t.match(gone.body, { code: 'BAD_EVENT_QUEUE_ID', queue_id: accepted[0] });
  const kept = ok(
    await api.get(ann, 'events', {
      queue_id: accepted[7],
      last_event_id: 999,
      dont_block: true,
    }),
    'the queue that acknowledged its messages',
  );
  t.equal((kept.events as unknown[]).length, 9100, 'is under the bound and kept');

  const again = await api.post(ann, 'register', { event_types: ['message'] });
  t.equal(again.status, 200, 'the member can register again once queues are discarded');
  ok(await api.get(owner, 'users/me'), 'the server serves');
  const after = memoryOf(server.child.pid!);
  t.comment(
    `resident memory: ${before.rssMiB.toFixed(0)} MiB at start, peak ${after.peakMiB.toFixed(0)} MiB`,
  );
  t.ok(
    after.peakMiB < before.rssMiB + HEAP_MIB,
    `peak resident memory ${after.peakMiB.toFixed(0)} MiB stays bounded`,
  );
  t.notMatch(server.output(), /heap out of memory/);
  t.equal(server.child.exitCode, null, 'still running');
});
