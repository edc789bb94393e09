/**
 * Crash safety (docs/robustness.md): the real server as a child process (node dist/src/main.js) on
 * a temporary DATA_DIR, SIGKILLed in the middle of a write load (sends with and without an uploaded
 * file, reactions, flags, subscriptions). After a restart on the same data, every mutation
 * answered with success before the kill is there; the database passes integrity and foreign-key
 * checks; derived data agrees with what it derives from (per-user message rows, the search index,
 * unread counts, attachment claims and files); the server serves normally.
 * (SIGTERM: crash-safety-term.test.ts; damaged data on start: crash-safety-start.test.ts.)
 */
import t from 'tap';
import { startChild } from '../helpers/child-server.js';
import {
  checkAcknowledged,
  checkDatabase,
  checkServes,
  prepare,
  seed,
  writeLoad,
} from '../helpers/crash-load.js';

t.test('SIGKILL in the middle of a write load loses no acknowledged write', async (t) => {
  const dataDir = t.testdir();
  const users = seed(dataDir);
  const first = await startChild(dataDir);
  t.teardown(() => void first.kill('SIGKILL'));
  await prepare(first.url, users);
  const load = writeLoad(first.url, users, 8);
  await load.reached(300);
  const { signal } = await first.kill('SIGKILL'); // requests in flight: sent, not answered
  load.stop();
  await load.done;
  t.equal(signal, 'SIGKILL', 'killed');
  t.ok(load.errors.length > 0, 'requests were in flight when the server died');
  t.ok(load.acked.messages.size > 50, `${load.acked.messages.size} messages acknowledged`);

  const second = await startChild(dataDir);
  t.teardown(() => void second.kill('SIGKILL'));
  await checkAcknowledged(t, second.url, users, load.acked);
  await checkDatabase(t, dataDir, second.url, users);
  await checkServes(t, second.url, users[1]!);
  const { code } = await second.kill('SIGTERM');
  t.equal(code, 0, 'a clean shutdown afterwards');
});

/** Sends a request's head and the first half of its body; returns a function sending the rest. */
