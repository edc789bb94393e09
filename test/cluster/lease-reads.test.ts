/**
 * A cluster node reads the lease bucket through the bucket's stream leader, never as a direct get
 * (src/cluster/jetstream.ts leaderReads). JetStream answers a direct get from any replica, one that
 * has not yet applied the newest writes among them, so a key written a moment ago may read as
 * missing or older than it is, and the node decides on that (a realm's lease, an export's runner,
 * an id claim, a reported position). Against a real nats-server (skipped when none is installed),
 * a connection of its own watching the JetStream API's subjects: every read the node's handles
 * make of the bucket is a STREAM.MSG.GET, none a DIRECT.GET. (On the code before, the node's
 * usual handle of the bucket read every key by direct get.)
 */
import { connect } from 'nats';
import t from 'tap';
import { claimIds } from '../../src/cluster/id-blocks.js';
import { LeaseBucket } from '../../src/cluster/leases.js';
import { openLink } from '../../src/cluster/link.js';
import { missingEngines } from '../../src/cluster/local.js';
import { trimmedPosition } from '../../src/cluster/trim.js';
import { oneNatsServer } from '../helpers/one-nats.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

t.test('every read of the lease bucket goes through its stream leader', async (t) => {
  if (missing) return;
  const url = await oneNatsServer(t, 'lease-reads');
  const link = await openLink({ servers: [url], node: 'n1', replicas: 1, namespace: 'reads' });
  t.teardown(() => link.nc.close());
  const stream = `KV_${link.names.leases}`;
  // The bucket as JetStream makes it by default, and as clusters made before hold it: direct gets
  // allowed. The node reads through the leader all the same (nothing to change in the bucket).
  const info = await link.jsm.streams.info(stream);
  t.equal(info.config.allow_direct, true, 'the bucket allows direct gets');

  const spy = await connect({ servers: url });
  t.teardown(() => spy.close());
  const seen = { direct: 0, leader: 0 };
  spy.subscribe(`$JS.API.DIRECT.GET.${stream}.>`, { callback: () => seen.direct++ });
  spy.subscribe(`$JS.API.DIRECT.GET.${stream}`, { callback: () => seen.direct++ });
  spy.subscribe(`$JS.API.STREAM.MSG.GET.${stream}`, { callback: () => seen.leader++ });
  await spy.flush();

  // The reads a node decides on: a realm's lease (taking it, a refused renewal), an export's
  // runner (claimed, renewed, judged), the id counter, the trimmed position, a plain get.
  const leases = new LeaseBucket(link.leaseKv, 'n1', link.incarnation);
  t.equal(await leases.read(1), null, 'a free lease reads as free');
  const rev = await leases.create(1);
  t.same(await leases.read(1), { revision: rev, mine: true }, 'the lease just taken');
  t.equal(await leases.holderOf(1), 'n1', 'its holder');
  t.ok(await link.exportRuns.claim(7), 'an export claimed');
  await link.exportRuns.renew();
  await link.exportRuns.check(
    [{ id: 8, realm_id: 1 }],
    () => false,
    () => Promise.resolve(),
  );
  t.ok((await claimIds(link.kv, 10, () => 1)) >= 1, 'ids claimed');
  t.equal(await trimmedPosition(link.kv), 0, 'never trimmed');
  t.not(await link.kv.get('temporary-url-key'), null, 'the temporary-URL key');

  await spy.flush();
  await link.nc.flush();
  t.equal(seen.direct, 0, 'no direct get (any replica answers those)');
  t.ok(seen.leader >= 8, `every read asked of the leader (STREAM.MSG.GET: ${seen.leader})`);
});
