/**
 * A log consumer whose first pull is answered "no responders" (503), for real (one nats-server):
 * the node's connection sends that pull where no consumer listens, as happens when JetStream
 * answers a consumer's creation before its server's interest in the consumer's pulls has reached
 * the node's server (reproduced on a 3-server NATS cluster: about one new consumer in 50). nats.js
 * (2.29) only notes such an answer and pulls again after two missed idle heartbeats (about 5 s);
 * meanwhile the consumer handed on nothing, and the progress watch made another after its stall
 * time (2 s). Now the applier pulls again at once (log-applier.ts repullOnNoResponders).
 */
import { connect, type NatsConnection, type PublishOptions, type Payload } from 'nats';
import t from 'tap';
import { packEntry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import { DEFAULT_STALL_MS } from '../../src/cluster/log-applier.js';
import { missingEngines, waitFor } from '../../src/cluster/local.js';
import { stubbedApplier } from '../helpers/applier.js';
import { oneNatsServer } from '../helpers/one-nats.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

const entry = () => packEntry({ k: 'mark', node: 'test' });

t.test('a first pull answered "no responders" is sent again at once', async (t) => {
  if (missing) return;
  const url = await oneNatsServer(t, 'consumer-no-responders');
  const conns: NatsConnection[] = [];
  t.teardown(() => Promise.all(conns.map((c) => c.close().catch(() => undefined))));
  const admin = await connect({ servers: url, reconnect: false });
  conns.push(admin);
  const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
  await jsm.streams.add({ name: 'R', subjects: ['r.>'] });
  for (let i = 0; i < 3; i++) await admin.jetstream().publish('r.x', entry());

  const nc = await connect({ servers: url, reconnect: false });
  conns.push(nc);
  // The node's first pull goes where no consumer listens: the NATS server answers it 503.
  const pulls: string[] = [];
  const publish = nc.publish.bind(nc);
  nc.publish = (subject: string, data?: Payload, opts?: PublishOptions) => {
    if (subject.startsWith('$JS.API.CONSUMER.MSG.NEXT.R.')) {
      pulls.push(subject);
      if (pulls.length === 1) return publish('$JS.API.CONSUMER.MSG.NEXT.R.nobody', data, opts);
    }
    return publish(subject, data, opts);
  };
  const link = {
    nc,
    jsm: await nc.jetstreamManager({ checkAPI: false, timeout: 10_000 }),
    js: nc.jetstream({ timeout: 10_000 }),
    names: { stream: 'R', log: 'r' },
    opts: { node: 'n1' },
    checkConnection: () => undefined,
  };
  const { applier, died } = stubbedApplier(link as unknown as ClusterLink);
  t.teardown(() => applier.close());
  const started = performance.now();
  await applier.start({} as never);
  await waitFor('the three entries applied', () => applier.applied === 3, 30_000).catch(
    (err: unknown) => t.fail(String(err)),
  );
  const took = performance.now() - started;
  t.ok(pulls.length >= 2, `its first pull went unanswered, then it pulled again (${pulls.length})`);
  t.ok(
    took < DEFAULT_STALL_MS - 500,
    `applied in ${Math.round(took)} ms, well before the progress watch's stall (${DEFAULT_STALL_MS} ms)`,
  );
  t.equal(applier.status().consumerRestarts, 0, 'by the consumer it made first');
  t.same(died, [], 'the node did not stop');
});
