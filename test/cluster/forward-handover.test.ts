/**
 * A forwarded write sent again to the realm's next owner after a handover (docs/cluster.md
 * "Writes on any node"), with two real nodes in this process on one real nats-server: n1 owns the
 * realm and runs a forwarded command (sent here as a forwarding node sends it: its id, asking to be
 * told it was received); n1 stops, handing the realm over, and n2 takes it; the same command, its
 * id the same, reaches n2, as a forwarding node's repeat does when the first owner's answers were
 * lost. On the code before, n2 did not know the id and ran the command again (a second channel
 * folder of the same name: refused, "already exists"); now the log entry named it, and n2 answers
 * with what it came to on n1. Bounded: 60 s for the handover.
 */
import { connect, createInbox, type NatsConnection } from 'nats';
import path from 'node:path';
import t from 'tap';
import { clusterNames } from '../../src/cluster/jetstream.js';
import { localNatsIsUnsafe, missingEngines, sleep } from '../../src/cluster/local.js';
import type { ClusterOptions } from '../../src/cluster/node.js';
import { pack, unpack } from '../../src/lib/pack.js';
import { createServer } from '../../src/server.js';
import { seedRealm } from '../helpers/fixtures.js';
import { oneNatsServer } from '../helpers/one-nats.js';
import { TEST_SERVER_OPTIONS } from '../helpers/server.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

/** Sends `body` on `subject` with a reply inbox: its replies (received, then the result). */
function ask(nc: NatsConnection, subject: string, body: Uint8Array, ms = 20_000) {
  return new Promise<unknown[]>((resolve) => {
    const inbox = createInbox();
    const replies: unknown[] = [];
    const done = () => {
      clearTimeout(timer);
      sub.unsubscribe();
      resolve(replies);
    };
    const timer = setTimeout(done, ms);
    const sub = nc.subscribe(inbox, {
      callback: (_err, m) => {
        const r = m.data.length === 0 ? { status: m.headers?.code } : unpack(m.data);
        replies.push(r);
        if (!(r && typeof r === 'object' && 'received' in r)) done();
      },
    });
    nc.publish(subject, body, { reply: inbox });
  });
}

t.test('a repeat reaching the next owner is answered from the log, not run again', async (t) => {
  if (missing) return;
  const url = await oneNatsServer(t, 'forward-handover');
  const namespace = `fh${process.pid}`;
  const names = clusterNames(namespace);
  const cluster = (node: string): ClusterOptions => ({
    servers: [url],
    node,
    replicas: 1,
    namespace,
    leaseMs: 2000,
    readBarrierMs: 30_000,
    allowUnsafeNats: localNatsIsUnsafe(),
  });
  const dir = t.testdir();
  const server = (node: string) =>
    createServer({
      ...TEST_SERVER_OPTIONS,
      port: 0,
      dataDir: path.join(dir, node),
      queueIdPrefix: `${node}-`,
      cluster: cluster(node),
    });
  const n1 = await server('n1');
  let n1Open = true;
  t.teardown(() => (n1Open ? n1.close() : undefined));
  const fx = await seedRealm(n1);
  const n2 = await server('n2');
  t.teardown(() => n2.close());
  const nc = await connect({ servers: url });
  t.teardown(() => nc.close());

  const subject = `${names.cmd}.${fx.realmId}`;
  const body = pack({
    type: 'channel_folder.create',
    payload: {
      acting_user_id: fx.users.desdemona!.id,
      name: 'Once',
      description: '',
      rendered_description: '',
    },
    id: 'probe.1',
    ack: true,
  });
  t.ok(n1.cluster!.owns(fx.realmId), 'n1 owns the realm');
  // An owner subscribes to its realm's commands once it owns it: the server has taken the
  // subscription when a round trip on the owner's own connection is answered (a command sent on
  // another connection before that finds no responder, and `ask` takes that for the answer).
  await n1.cluster!.link.nc.flush();
  const first = await ask(nc, subject, body);
  t.match(
    first,
    [{ received: true }, { ok: true, data: { channel_folder_id: Number } }],
    'ran on n1',
  );
  const folder = (first[1] as { data: { channel_folder_id: number } }).data.channel_folder_id;

  // n1 stops: it gives the realm's lease up, and n2 takes the realm.
  n1Open = false;
  await n1.close();
  for (const deadline = Date.now() + 60_000; !n2.cluster!.owns(fx.realmId); await sleep(50))
    if (Date.now() > deadline) throw new Error('n2 did not take the realm within 60 s');
  await n2.cluster!.link.nc.flush();

  const again = await ask(nc, subject, body);
  t.match(
    again,
    [{ received: true }, { ok: true, data: { channel_folder_id: folder } }],
    'n2 answers with what it came to on n1',
  );
  const folders = n2.store.db
    .prepare('SELECT count(*) AS n FROM channel_folders WHERE realm_id = ? AND name = ?')
    .get(fx.realmId, 'Once') as { n: number };
  t.equal(folders.n, 1, 'one folder: run once');
});
