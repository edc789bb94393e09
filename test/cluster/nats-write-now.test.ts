/**
 * writeNow (src/cluster/jetstream.ts), against a real nats-server: a publish made on a connection
 * is on its socket when writeNow returns, not at nats.js's next microtask, and a subscriber on
 * another connection gets it. This rests on an internal of
 * the pinned nats.js (`protocol.flushPending` and its outbound buffer): an upgrade that changes
 * them fails here. So does skipCurrentServer's (the client's list of servers, `protocol.servers`).
 * Skipped when nats-server is not installed.
 */
import { connect, type NatsConnection } from 'nats';
import t from 'tap';
import { skipCurrentServer, writeNow } from '../../src/cluster/jetstream.js';
import { missingEngines, waitFor } from '../../src/cluster/local.js';
import { oneNatsServer } from '../helpers/one-nats.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

/** What the connection holds unwritten, in bytes (nats.js's outbound buffer). */
function unwritten(nc: NatsConnection): number {
  const p = (nc as unknown as { protocol: { outbound: { size(): number } } }).protocol;
  return p.outbound.size();
}

t.test('a publish is on the wire when writeNow returns', async (t) => {
  if (missing) return;
  const url = await oneNatsServer(t, 'nats-write-now');
  const publisher = await connect({ servers: url });
  const subscriber = await connect({ servers: url });
  t.teardown(() => Promise.all([publisher.close(), subscriber.close()]));
  const got: number[] = [];
  const sub = subscriber.subscribe('write-now', { callback: (_e, m) => got.push(m.data[0]!) });
  await subscriber.flush();

  publisher.publish('write-now', new Uint8Array([1]));
  t.ok(unwritten(publisher) > 0, 'without it, the publish waits in the buffer');
  writeNow(publisher);
  t.equal(unwritten(publisher), 0, 'with it, nothing is left unwritten');
  writeNow(publisher);
  t.equal(unwritten(publisher), 0, 'with nothing to write, it does nothing');

  publisher.publish('write-now', new Uint8Array([2]));
  writeNow(publisher);
  await waitFor('both messages', () => got.length === 2, 5000);
  t.same(got, [1, 2], 'delivered, in order');
  sub.unsubscribe();

  // skipCurrentServer: the server connected to goes to the end of the client's list, so that the
  // first reconnection dials another one (nats.js dials its first server again otherwise).
  const two = await connect({ servers: [url, 'nats://127.0.0.1:1'], noRandomize: true });
  t.teardown(() => two.close());
  type Pool = { servers: unknown[]; currentServer: unknown };
  const pool = (two as unknown as { protocol: { servers: Pool } }).protocol.servers;
  t.equal(pool.servers.length, 2, 'the client lists both servers');
  t.equal(pool.servers[0], pool.currentServer, 'connected to the first');
  skipCurrentServer(two);
  t.equal(pool.servers[1], pool.currentServer, 'which is now the last');
});
