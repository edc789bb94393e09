/**
 * A new realm's first log entry (its creation's rows, ClusterNode.addRealm; the cluster's first
 * realm, ClusterNode.bootstrap) is bounded as a batch's entry is (docs/cluster.md "Writes on any
 * node": one NATS message, the server's max_payload less 1 KiB), on one real nats-server:
 *
 * - a realm whose rows pack to more than that (a name of 700,000 characters: it is in the realm's
 *   row and in its audit row) is refused, 400 "too large to be replicated", before anything of it
 *   goes to NATS: the log is as it was, and the subdomain is free for a realm that fits, at once.
 *   On the code before, the append went to nats.js as it was: refused there (MAX_PAYLOAD_EXCEEDED,
 *   not a 400), the subdomain left reserved (a second realm there: "already in use");
 * - the first realm of an empty cluster (its rows and its welcome messages, one entry) whose
 *   name is 600,000 characters: the node stops (its `fatal`) saying why and what to raise, and
 *   the log stays empty. On the code before 7cecd43, the entry went to NATS as it was.
 *
 * Nodes run only on NATS servers whose max_payload is at least 64 KiB (MIN_MAX_PAYLOAD), under
 * which every entry of a realm made with the inputs `manage create-realm` accepts fits
 * (test/cluster/payload-floor.test.ts): so these refusals are reached here with names far beyond
 * those bounds, as a caller that skipped them would pass. (They were reached with smaller names
 * under a test-only bound, maxEntryBytes, of 800 and 4,000 bytes; that bound is gone: one under
 * the floor would let a realm's rows in and refuse its set-up after them.)
 */
import t from 'tap';
import { connect } from 'nats';
import { ensureFirstRealm } from '../../src/bootstrap.js';
import { clusterNames } from '../../src/cluster/jetstream.js';
import { missingEngines } from '../../src/cluster/local.js';
import type { ClusterOptions } from '../../src/cluster/node.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { nodeInProcess } from '../helpers/cluster-node.js';
import { oneNatsServer } from '../helpers/one-nats.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

t.test(
  'a new realm too large for one log entry is refused before anything is written',
  async (t) => {
    if (missing) return;
    const url = await oneNatsServer(t, 'first-entry-size');
    const dir = t.testdir();
    const nc = await connect({ servers: url });
    t.teardown(() => nc.close());
    const jsm = await nc.jetstreamManager();

    let serial = 0;
    const node = async (extra: Partial<ClusterOptions>) => {
      const namespace = `fes${process.pid}n${++serial}`;
      const { server, dataDir } = await nodeInProcess(t, { url, dir, serial, namespace, extra });
      const names = clusterNames(namespace);
      const lastSeq = async () => (await jsm.streams.info(names.stream)).state.last_seq;
      return { server, lastSeq, dataDir };
    };
    const params = (sub: string, name: string) =>
      ({
        name,
        string_id: sub,
        owner_email: `owner@${sub || 'root'}.example.com`,
        owner_full_name: 'Owner',
        owner_password_hash: null,
        owner_can_create_users: true,
        now: Math.floor(Date.now() / 1000),
      }) as const;

    await t.test('the real bound: one NATS message', async (t) => {
      const { server, lastSeq } = await node({});
      const { realms } = server.context;
      const before = await lastSeq();
      const huge = params('huge', 'x'.repeat(700_000));
      const err = await realms
        .createRealm('huge', () => doCreateRealm(server.store, huge))
        .then(
          () => null,
          (e: unknown) => e as { message: string; httpStatus?: number },
        );
      t.ok(err, 'refused');
      t.match(err?.message, /too large to be replicated/, String(err?.message).slice(0, 300));
      t.equal(err?.httpStatus, 400, '400, as a batch too large');
      t.equal(await lastSeq(), before, 'nothing went to the log');
      t.equal(server.store.realms.byStringId('huge'), undefined, 'no realm in the copy');

      // The subdomain is free at once (no reservation left behind), for a realm that fits.
      const fits = params('huge', 'Fits');
      const made = await realms.createRealm('huge', () => doCreateRealm(server.store, fits));
      t.equal(server.store.realms.byId(made.realm_id)?.name, 'Fits', 'a realm that fits is made');
      t.ok(server.cluster!.owns(made.realm_id), 'and owned by the node that made it');
      t.ok((await lastSeq()) > before, 'its entries are in the log');
    });

    await t.test('the first realm of an empty cluster: the node stops saying why', async (t) => {
      const reasons: string[] = [];
      const { server, lastSeq } = await node({ fatal: (reason) => reasons.push(reason) });
      // A name far beyond the 40 characters a first realm's settings accept (the cluster's is
      // Confab's default, whose entry is some 11 KB): twice in the rows, over 1 MiB.
      const settings = {
        realmName: 'x'.repeat(600_000),
        ownerEmail: 'owner@example.com',
        ownerFullName: 'Organization Owner',
      };
      const err = await server
        .cluster!.bootstrap(() =>
          ensureFirstRealm(server.store, { ...server.context.config }, settings),
        )
        .then(
          () => null,
          (e: unknown) => e as Error,
        );
      t.match(err?.message, /too large to be replicated/, 'bootstrap refused');
      t.equal(reasons.length, 1, 'the node stops');
      t.match(reasons[0], /first realm's entry is not appended.*max_payload/s, String(reasons[0]));
      t.equal(await lastSeq(), 0, 'the log is still empty');
    });
  },
);
