/**
 * Trimming the log behind a snapshot (src/cluster/trim.ts) against a real nats-server: entries a
 * node heard from within the grace period has not applied are kept, and without such a node the
 * log goes up to the snapshot, each realm's newest entry kept. Skipped when nats-server is not
 * installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { clusterNames, connectJetStream } from '../../src/cluster/jetstream.js';
import {
  alive,
  localNatsIsUnsafe,
  missingEngines,
  ports,
  sleep,
  startNatsCluster,
} from '../../src/cluster/local.js';
import { reportPosition, trimLog, trimmedPosition } from '../../src/cluster/trim.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

t.test('trimming waits for the nodes heard from, and keeps each newest entry', async (t) => {
  if (missing) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trim-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  const [client, route] = await ports(2);
  const nats = await startNatsCluster(dir, [client!], [route!]);
  t.teardown(async () => {
    for (const n of nats) if (alive(n.pid)) process.kill(n.pid, 'SIGKILL');
    while (nats.some((n) => alive(n.pid))) await sleep(50);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const names = clusterNames('trimtest');
  const h = await connectJetStream({
    servers: [`nats://127.0.0.1:${client}`],
    node: 't',
    replicas: 1,
    names,
    allowUnsafeNats: localNatsIsUnsafe(),
  });
  t.teardown(() => h.nc.close());
  // Realm 1's entries at 1..20, realm 2's only entry at 21.
  for (let i = 1; i <= 20; i++) await h.js.publish(`${names.log}.1`, new Uint8Array([i]));
  await h.js.publish(`${names.log}.2`, new Uint8Array([21]));
  const firstSeq = async () => (await h.jsm.streams.info(names.stream)).state.first_seq;

  // A node heard from just now has applied up to 5: the snapshot at 15 trims up to 5 only.
  await reportPosition(h.kv, 'n2', 5);
  await h.kv.put('lease-1', 'n1'); // other keys of the bucket are not positions
  t.equal(await trimLog(h.jsm, h.kv, names, 15, 60_000), 5, 'up to the lagging node');
  t.equal(await firstSeq(), 6, 'its next entry is kept');
  t.equal(await trimmedPosition(h.kv), 5);

  await reportPosition(h.kv, 'n2', 12);
  t.equal(await trimLog(h.jsm, h.kv, names, 15, 60_000), 12, 'it moved on: so does trimming');
  t.equal(await firstSeq(), 13);
  t.equal(await trimLog(h.jsm, h.kv, names, 12, 60_000), null, 'nothing more to remove');

  // No node within the grace (0 ms: every report is too old): up to the snapshot, past realm 2's
  // only entry's position, which is kept as the newest of its subject.
  await sleep(20);
  t.equal(await trimLog(h.jsm, h.kv, names, 30, 0), 30, 'up to the snapshot');
  const info = await h.jsm.streams.info(names.stream, { subjects_filter: `${names.log}.>` });
  t.same(
    info.state.subjects,
    { [`${names.log}.1`]: 1, [`${names.log}.2`]: 1 },
    "each realm's newest entry is kept",
  );
});
