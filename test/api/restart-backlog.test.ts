/**
 * A graceful restart keeps a large backlog (issue 10.2; docs/events.md "Restart without loss").
 * The real server as a child process: 1,100 queues, none polled, each holding 200 messages of
 * nearly 10,000 characters — more than 2 GiB if every queue's copy of every event were written
 * (the failure: one buffer over 2 GiB, `ERR_OUT_OF_RANGE`, no file, exit 0). SIGTERM:
 * the queues are written as a stream, each event once, and the process exits 0; after a restart
 * every queue is back, whole, with its `restart` event.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startChild } from '../helpers/child-server.js';
import { client, ok, prepare, seed, type User } from '../helpers/crash-load.js';

const QUEUES = 1_100;
const MESSAGES = 200;
const SIZE = 9_900;

async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>) {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A message body of SIZE characters that says which message it is. */
const body = (i: number) => `m${i}:`.padEnd(SIZE, 'abcdefghij');

t.test('SIGTERM with a backlog over 2 GiB: every queue restored whole', async (t) => {
  const dataDir = t.testdir();
  const users = seed(dataDir) as [User, User, User];
  const env = { MAX_QUEUES_PER_USER: String(QUEUES) };
  const first = await startChild(dataDir, env);
  t.teardown(() => void first.kill('SIGKILL'));
  await prepare(first.url, users);
  const api = client(first.url);
  const queues: { user: User; id: string }[] = [];
  await pool(QUEUES, 8, async (i) => {
    const user = users[i % 3]!;
    const reg = ok(await api.post(user, 'register', { event_types: ['message', 'restart'] }), 'q');
    queues.push({ user, id: reg.queue_id as string });
  });
  await pool(MESSAGES, 6, async (i) => {
    ok(
      await api.post(users[i % 3]!, 'messages', {
        type: 'stream',
        to: 'load',
        topic: 'backlog',
        content: body(i),
      }),
      `message ${i}`,
    );
  });
  const naive = queues.length * MESSAGES * SIZE;
  t.ok(naive > 2 ** 31, `every queue's copy of every event: ${(naive / 2 ** 30).toFixed(2)} GiB`);

  const { code } = await first.kill('SIGTERM');
  t.equal(code, 0, 'a clean exit');
  const saved = fs.statSync(path.join(dataDir, 'event-queues.msgpack')).size;
  t.ok(saved < naive / 100, `written once per event: ${(saved / 2 ** 20).toFixed(1)} MiB`);

  const second = await startChild(dataDir, env);
  t.teardown(() => void second.kill('SIGKILL'));
  const again = client(second.url);
  // Two queues read whole; every queue shown to hold its last message id (an acknowledgement
  // of an id a queue never had is refused) and its restart event after it.
  for (const q of [queues[0]!, queues[queues.length - 1]!]) {
    const res = ok(
      await again.get(q.user, 'events', { queue_id: q.id, last_event_id: -1, dont_block: true }),
      'a whole queue',
    );
    const events = res.events as { id: number; type: string; message?: { content: string } }[];
    t.equal(events.length, MESSAGES + 1);
    const contents = events.slice(0, MESSAGES).map((e) => e.message!.content);
    const order = contents.map((c) => Number(/^m(\d+):/.exec(c)![1]));
    t.same(
      [...order].sort((a, b) => a - b),
      Array.from({ length: MESSAGES }, (_, i) => i),
      'every message, once',
    );
    t.ok(
      contents.every((c, k) => c === body(order[k]!)),
      'each as it was sent',
    );
    t.match(events[MESSAGES], { type: 'restart', id: MESSAGES });
  }
  let whole = 0;
  await pool(queues.length, 8, async (k) => {
    const q = queues[k]!;
    const res = await again.get(q.user, 'events', {
      queue_id: q.id,
      last_event_id: MESSAGES - 1,
      dont_block: true,
    });
    const events = res.body.events as { type: string }[] | undefined;
    if (res.status === 200 && events?.length === 1 && events[0]!.type === 'restart') whole++;
  });
  t.equal(whole, queues.length, `all ${queues.length} queues restored whole`);
  t.equal((await second.kill('SIGTERM')).code, 0);
});
