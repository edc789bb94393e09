/**
 * Graceful shutdown under load (docs/robustness.md): the real server as a child process gets
 * SIGTERM while a write load runs and a request is half received. That request is finished and
 * answered, the held poll is answered, the queues are saved and the process exits 0; after a
 * restart the queue is back with a `restart` event and every acknowledged message in it, and the
 * data passes the same checks as after a crash.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { startChild } from '../helpers/child-server.js';
import {
  checkAcknowledged,
  checkDatabase,
  client,
  ok,
  prepare,
  seed,
  writeLoad,
  type User,
} from '../helpers/crash-load.js';

function halfSentRequest(url: string, user: User, body: string) {
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  const auth = 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64');
  const head =
    `POST /api/v1/messages HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: ${auth}\r\n` +
    `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Connection: close\r\n\r\n`;
  const half = Math.floor(body.length / 2);
  let answer = '';
  sock.on('data', (c: Buffer) => (answer += c.toString()));
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  sock.on('error', () => {});
  const connected = new Promise<void>((resolve) => sock.on('connect', () => resolve()));
  return connected.then(() => {
    sock.write(head + body.slice(0, half));
    return {
      finish: async () => {
        sock.write(body.slice(half));
        await closed;
        return answer;
      },
    };
  });
}

t.test(
  'SIGTERM in the middle of a write load: in-flight requests finish, queues are saved, restart event',
  async (t) => {
    const dataDir = t.testdir();
    const users = seed(dataDir);
    const first = await startChild(dataDir);
    t.teardown(() => void first.kill('SIGKILL'));
    await prepare(first.url, users);
    const api = client(first.url);
    const reg = ok(
      await api.post(users[1]!, 'register', { event_types: ['message', 'restart'] }),
      'register',
    );
    const queueId = reg.queue_id as string;
    const held = api.get(users[1]!, 'events', { queue_id: queueId, last_event_id: -1 });
    const load = writeLoad(first.url, users, 6);
    await load.reached(100);
    // A request whose head and half its body have arrived: in flight when the signal comes.
    const inflight = await halfSentRequest(
      first.url,
      users[2]!,
      new URLSearchParams({
        type: 'stream',
        to: 'load',
        topic: 'late',
        content: 'in flight qwert',
      }).toString(),
    );
    // Everything sent before this answer has been read by the server (one thread, in order).
    ok(await api.get(users[0]!, 'users/me'), 'barrier');
    first.child.kill('SIGTERM');
    await first.waitFor(/SIGTERM: shutting down/);
    load.stop();
    const answer = await inflight.finish();
    t.match(answer, /^HTTP\/1\.1 200 /, 'the request in flight was answered with success');
    const lateId = Number(/"id":(\d+)/.exec(answer)?.[1]);
    t.ok(lateId > 0, 'with its message id');
    const heldRes = await held;
    t.equal(heldRes.status, 200, 'the held poll was answered');
    const { code } = await first.exited;
    t.equal(code, 0, 'exit code 0');
    await load.done;
    for (const err of load.errors) {
      // Only 503s (during the shutdown's grace) and refused connections (after it), never a
      // broken answer.
      t.match(
        String(err),
        /: 503 .*shutting down|ECONNREFUSED|ECONNRESET|socket hang up/,
        'a load request after the signal',
      );
    }
    t.ok(fs.existsSync(path.join(dataDir, 'event-queues.msgpack')), 'queues saved');

    const second = await startChild(dataDir);
    t.teardown(() => void second.kill('SIGKILL'));
    const api2 = client(second.url);
    const seenBefore = (heldRes.body.events as { id: number }[]).map((e) => e.id);
    const lastSeen = seenBefore.length > 0 ? Math.max(...seenBefore) : -1;
    const after = ok(
      await api2.get(users[1]!, 'events', {
        queue_id: queueId,
        last_event_id: lastSeen,
        dont_block: true,
      }),
      'the queue after the restart',
    );
    const evs = after.events as { type: string; message?: { id: number } }[];
    t.ok(
      evs.some((e) => e.type === 'restart'),
      'the restored queue has a restart event',
    );
    const delivered = new Set(
      [...(heldRes.body.events as { message?: { id: number } }[]), ...evs]
        .map((e) => e.message?.id)
        .filter((id) => id !== undefined),
    );
    const lost = [...load.acked.messages.keys(), lateId].filter((id) => !delivered.has(id));
    t.same(lost, [], 'every acknowledged message reached the queue (before or after the restart)');
    await checkAcknowledged(t, second.url, users, load.acked);
    await checkDatabase(t, dataDir, second.url, users);
    await second.kill('SIGTERM');
  },
);
