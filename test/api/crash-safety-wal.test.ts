/**
 * Crash safety while the WAL is being emptied (src/storage/checkpointer.ts, "Restarting the WAL";
 * the other crash-safety tests: ./crash-safety-kill.test.ts): the real server as a child process,
 * four senders of long messages (each fills pages of the message table and the search index)
 * until its background checkpointer has emptied the WAL under a commit hold and started it afresh
 * with a commit of its own (`confab_wal_emptied_total`, `confab_wal_started_afresh_total` on
 * /metrics), then SIGKILL with sends in flight. After a restart on
 * the same data every acknowledged send is there and the database passes its checks.
 */
import t from 'tap';
import { startChild } from '../helpers/child-server.js';
import {
  checkAcknowledged,
  checkDatabase,
  client,
  ok,
  prepare,
  seed,
  type Acknowledged,
} from '../helpers/crash-load.js';

const SENDERS = 4;

/** A counter of the server's /metrics (loopback clients may read it). */
async function metric(url: string, name: string): Promise<number> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

t.test(
  'SIGKILL after the WAL was emptied under a commit hold and started afresh by the checkpointer loses no acknowledged send',
  async (t) => {
    const dataDir = t.testdir();
    const users = seed(dataDir);
    const first = await startChild(dataDir);
    t.teardown(() => void first.kill('SIGKILL'));
    await prepare(first.url, users);
    const api = client(first.url);
    const acked: Acknowledged = {
      messages: new Map(),
      reactions: [],
      starred: [],
      read: [],
      subscriptions: [],
    };
    let stopped = false;
    let serial = 0;
    const errors: unknown[] = [];
    const senders = Array.from({ length: SENDERS }, async (_, w) => {
      while (!stopped) {
        const n = serial++;
        const user = users[n % users.length]!;
        const token = `tok${w}x${n}`;
        const words = Array.from({ length: 600 }, (_, i) => `w${n.toString(36)}y${i.toString(36)}`);
        try {
          const res = ok(
            await api.post(user, 'messages', {
              type: 'stream',
              to: 'load',
              topic: `t${n % 5}`,
              content: `${token} ${words.join(' ')}`,
            }),
            'send',
          );
          acked.messages.set(res.id as number, { sender: user.id, token, attachment: null });
        } catch (err) {
          errors.push(err);
          return; // the server went away
        }
      }
    });
    for (const deadline = Date.now() + 300_000; ;) {
      if (errors.length > 0) throw errors[0];
      if (Date.now() > deadline)
        throw new Error('the WAL was never emptied and started afresh under a hold');
      if (
        (await metric(first.url, 'confab_wal_emptied_total')) >= 1 &&
        (await metric(first.url, 'confab_wal_started_afresh_total')) >= 1
      )
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const { signal } = await first.kill('SIGKILL'); // sends in flight: written, not answered
    stopped = true;
    await Promise.all(senders);
    t.equal(signal, 'SIGKILL', 'killed');
    t.ok(acked.messages.size > 100, `${acked.messages.size} messages acknowledged`);

    const second = await startChild(dataDir);
    t.teardown(() => void second.kill('SIGKILL'));
    await checkAcknowledged(t, second.url, users, acked);
    await checkDatabase(t, dataDir, second.url, users);
    const { code } = await second.kill('SIGTERM');
    t.equal(code, 0, 'a clean shutdown afterwards');
  },
);
