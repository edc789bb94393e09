/**
 * connectionCheck (src/cluster/jetstream.ts) against a real nats-server, on a busy event loop: a
 * server that answered the ping while this process was not running its loop (a long synchronous
 * task, a CPU-starved machine) is not taken for a frozen one. On the code before, the check's
 * timer fired before the loop read the waiting answer, and the node left a live server for
 * another (on a loaded cluster, thrashing between servers at every forward or append not answered
 * within a few hundred ms). A server that does not answer at all is still left. Skipped when
 * nats-server is not installed.
 */
import { connect } from 'nats';
import t from 'tap';
import { CHECK_ANSWER_MS, connectionCheck } from '../../src/cluster/jetstream.js';
import { missingEngines } from '../../src/cluster/local.js';
import { oneNatsServer } from '../helpers/one-nats.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

/** Holds the thread for `ms` (the event loop runs nothing meanwhile). */
function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // busy
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a ping answered while the loop was busy: the server is kept', async (t) => {
  if (missing) return;
  const url = await oneNatsServer(t, 'connection-check');
  for (const where of ['after the ping went out', 'in the turn that pinged'] as const) {
    const nc = await connect({ servers: url, reconnectTimeWait: 100 });
    const said: string[] = [];
    const check = connectionCheck(nc, (line) => said.push(line));
    if (where === 'after the ping went out') {
      check();
      // The ping is written at the next microtask; the loop is then held past the check's wait
      // (the answer comes meanwhile and waits in the socket).
      await new Promise<void>((r) =>
        setImmediate(() => {
          busy(CHECK_ANSWER_MS + 500);
          r();
        }),
      );
    } else {
      check();
      busy(CHECK_ANSWER_MS + 500);
    }
    await sleep(CHECK_ANSWER_MS + 500);
    t.same(said, [], `${where}: no move to another server`);
    await nc.close();
  }
});

t.test('a server that does not answer is still left', async (t) => {
  // A connection whose ping is never answered (a frozen server), played by hand.
  let reconnected = 0;
  const nc = {
    isClosed: () => false,
    info: { server_name: 'frozen' },
    flush: () => new Promise<void>(() => undefined),
    reconnect: () => {
      reconnected++;
      return Promise.resolve();
    },
  } as unknown as Parameters<typeof connectionCheck>[0];
  const said: string[] = [];
  connectionCheck(nc, (line) => said.push(line))();
  // Up to three waits of CHECK_ANSWER_MS, each waited again when its timer fired late (a loaded
  // machine): until it has spoken, bounded.
  for (const until = Date.now() + 60_000; said.length === 0 && Date.now() < until;) await sleep(50);
  t.equal(said.length, 1, 'said so');
  t.equal(reconnected, 1, 'connected to another');
});
