/**
 * nats.js's own re-creation of a running log consumer is bounded (src/cluster/log-applier.ts
 * `boundRecreation`, RECREATE_TRIES). After a reset (the consumer gone from its server, its
 * heartbeats missed), nats.js's ordered consumer creates it again, and a failed attempt is asked
 * again about every 5 s, without limit (its `maxInitialReset` bounds only the first creation). One
 * nats-server and a stream that takes one consumer (`max_consumers: 1`). The applier's consumer is
 * deleted under it and another takes its place, so every re-creation is refused. nats.js's
 * attempts stop after RECREATE_TRIES, and the applier makes a consumer of its own, said in its
 * log and counted (consumerRestarts), that applies once the place is free. On the old code
 * nats.js asked again every few seconds, the applier saw nothing (an idle log: no stall), and
 * the wait for its own consumer ran out. Skipped when nats-server is not installed.
 */
import { connect, AckPolicy, type NatsConnection } from 'nats';
import t from 'tap';
import { packEntry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import { RECREATE_TRIES } from '../../src/cluster/log-applier.js';
import { missingEngines, sleep, waitFor } from '../../src/cluster/local.js';
import { stubbedApplier } from '../helpers/applier.js';
import { oneNatsServer } from '../helpers/one-nats.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

const entry = () => packEntry({ k: 'mark', node: 'test' });

t.test(
  'a running log consumer made again after a reset: bounded, then the node makes its own',
  async (t) => {
    if (missing) return;
    const url = await oneNatsServer(t, 'consumer-recreate');
    const conns: NatsConnection[] = [];
    t.teardown(() => Promise.all(conns.map((c) => c.close().catch(() => undefined))));
    const admin = await connect({ servers: url, reconnect: false });
    conns.push(admin);
    const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await jsm.streams.add({ name: 'Q', subjects: ['q.>'], max_consumers: 1 });
    for (let i = 0; i < 3; i++) await admin.jetstream().publish('q.x', entry());

    // Every request to create a consumer of Q, by consumer name (nats.js's ordered consumer names
    // its creations `<prefix>_<serial>`, one prefix for each consumer object).
    const creations: string[] = [];
    admin.subscribe('$JS.API.CONSUMER.CREATE.Q.>', {
      callback: (_err, m) => void creations.push(m.subject.split('.')[5] ?? ''),
    });
    await admin.flush();

    const nc = await connect({ servers: url, reconnect: false });
    conns.push(nc);
    const link = {
      nc,
      jsm: await nc.jetstreamManager({ checkAPI: false, timeout: 10_000 }),
      js: nc.jetstream({ timeout: 10_000 }),
      names: { stream: 'Q', log: 'q' },
      opts: { node: 'n1' },
      checkConnection: () => undefined,
    };
    const { applier, died } = stubbedApplier(link as unknown as ClusterLink);
    t.teardown(() => applier.close());
    await applier.start({} as never);
    await waitFor('the three entries applied', () => applier.applied === 3, 30_000);
    const [first] = await jsm.consumers.list('Q').next();
    t.ok(first, "the applier's consumer");
    const prefix = first!.name.replace(/_\d+$/, '');

    // Deleted under the running applier, its place taken: each re-creation is refused.
    await jsm.consumers.delete('Q', first!.name);
    await jsm.consumers.add('Q', { durable_name: 'filler', ack_policy: AckPolicy.None });
    const again = () => creations.filter((n) => n.startsWith(`${prefix}_`) && n !== first!.name);

    // nats.js sees the heartbeats missed (about 5 s), then asks about every 5 s (jittered).
    await waitFor(
      'the applier to make a consumer of its own',
      () => applier.status().consumerRestarts >= 1,
      60_000,
    ).catch((err: unknown) => t.fail(String(err)));
    t.equal(again().length, RECREATE_TRIES, `nats.js asked ${RECREATE_TRIES} times, then stopped`);
    // Past nats.js's longest pause (7.5 s): nothing more from that consumer object.
    await sleep(9000);
    t.equal(again().length, RECREATE_TRIES, 'and asks no more');

    // Once the place is free, the applier's own consumer is made and applies.
    await jsm.consumers.delete('Q', 'filler');
    await admin.jetstream().publish('q.x', entry());
    await waitFor('the new entry applied', () => applier.applied === 4, 60_000).catch(
      (err: unknown) => t.fail(String(err)),
    );
    t.equal(applier.applied, 4, 'applying again');
    t.same(died, [], 'the node did not stop');
    t.comment(`creation requests: ${creations.join(', ')}`);
  },
);
