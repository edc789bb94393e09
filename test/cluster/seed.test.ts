/**
 * The seed's recovery paths and refusals (src/cluster/seed.ts), against one real NATS server with
 * JetStream (each test its own CLUSTER_NAMESPACE): a seeding node that stopped between its seed
 * entry and the rest finishes the seed when started again, while an empty node waits for the
 * seed's snapshot; a node started empty before the seed stops at the seed entry and starts again
 * from the snapshot (src/cluster/main.ts as a process); what is refused, each database left byte
 * for byte as it was. test/cluster/cluster-seed.test.ts moves a real server's data onto a real
 * three-node cluster. Skipped when nats-server is not installed.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import t from 'tap';
import { ID_BLOCKS_KEY } from '../../src/cluster/id-blocks.js';
import {
  appendEntry,
  CLUSTER_SUBJECT_REALM,
  clusterNames,
  connectJetStream,
  SNAPSHOT_NAME,
  type ClusterNames,
} from '../../src/cluster/jetstream.js';
import {
  alive,
  localNatsEnv,
  localNatsIsUnsafe,
  missingEngines,
  ports,
  sleep,
  startNatsServers,
} from '../../src/cluster/local.js';
import { inspectCopy, prepareCopy } from '../../src/cluster/seed.js';
import { restoreSnapshot } from '../../src/cluster/snapshot.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { openDatabase } from '../../src/storage/db.js';
import { largestId } from '../../src/storage/ids.js';
import { Store } from '../../src/storage/store.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';

const missing = missingEngines();
if (missing) {
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);
} else {
  await run().catch((err: unknown) => t.error(err));
}

async function run(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'seed-'));
  fs.mkdirSync(path.join(root, 'logs'));
  const [clientPort, routePort] = await ports(2);
  const [nats] = startNatsServers(root, [clientPort!], [routePort!]);
  t.teardown(async () => {
    if (alive(nats!.pid)) process.kill(nats!.pid, 'SIGTERM');
    while (alive(nats!.pid)) await sleep(50);
    fs.rmSync(root, { recursive: true, force: true });
  });
  const servers = [`nats://127.0.0.1:${clientPort}`];
  // Up to a minute for its start (a bound on a broken start; a loaded machine is slow).
  for (const deadline = Date.now() + 60_000; ;) {
    const nc = await connect({ servers }).catch(() => null);
    if (nc) {
      await nc.close();
      break;
    }
    if (Date.now() > deadline) throw new Error('nats-server did not start');
    await sleep(100);
  }
  const dirOf = (name: string) => path.join(root, name);
  const opts = (ns: string, dataDir: string, seed: boolean, node = 'n1') => ({
    servers,
    names: clusterNames(ns),
    node,
    replicas: 1,
    dataDir,
    seed,
    allowUnsafeNats: localNatsIsUnsafe(),
  });
  const single = dirOf('single');
  singleProcessDatabase(single, ['', 'two']);
  const other = dirOf('other');
  singleProcessDatabase(other, ['']);
  const hashOf = (dir: string) =>
    crypto
      .createHash('sha256')
      .update(fs.readFileSync(path.join(dir, 'confab.sqlite3')))
      .digest('hex');
  const copyOf = (from: string, name: string) => {
    fs.cpSync(from, dirOf(name), { recursive: true });
    return dirOf(name);
  };

  t.test('a single-process database without CLUSTER_SEED: refused before NATS', async (t) => {
    const before = hashOf(single);
    await t.rejects(
      prepareCopy(opts('a', single, false)),
      { name: 'CopyRefusedError', message: /holds a single-process database \(2 realms\)/ },
      'refused',
    );
    t.equal(hashOf(single), before, 'the database is as it was');
    t.notOk(await streamExists(servers, clusterNames('a').stream), 'no log was even created');
  });

  t.test(
    'a seeding node stopped after its seed entry finishes the seed; an empty node waits for it',
    async (t) => {
      const names = clusterNames('b');
      const seeding = copyOf(single, 'b-seeding');
      const db = openDatabase(seeding);
      const realms = db.prepare<[], number>('SELECT id FROM realms ORDER BY id').pluck().all();
      const largest = largestId(db);
      db.close();
      // What the seeding node did before it stopped: the entry, not yet its own record of it.
      await append(servers, names, { realms, largest });
      let restored: number | null | undefined;
      const empty = dirOf('b-empty');
      const restoring = restoreSnapshot(servers, names, empty, 1).then((seq) => (restored = seq));
      await sleep(2500);
      t.equal(restored, undefined, 'the empty node waits for the seed’s snapshot');

      const finished = await prepareCopy(opts('b', seeding, true));
      t.match(finished, { trimmed: 0, seeded: 1 }, 'finished');
      t.equal(
        finished.imageProxyKey,
        fs.readFileSync(path.join(seeding, 'image_proxy_key'), 'utf8').trim(),
        'the image-proxy key of the database seeded is the cluster’s',
      );
      await restoring;
      t.equal(restored, 1, 'the empty node restored the snapshot at the seed');
      t.same(
        inspectCopy(empty),
        { exists: true, realms, applied: 1, unacked: false },
        'its copy: the seeded realms, at the seed',
      );
      t.equal(await kvValue(servers, names, ID_BLOCKS_KEY), String(largest + 1), 'ids from above');

      // Started again with CLUSTER_SEED still set: its copy is the cluster's; nothing to do.
      t.match(
        await prepareCopy(opts('b', seeding, true)),
        { trimmed: 0, seeded: 1, imageProxyKey: finished.imageProxyKey },
        'started again with CLUSTER_SEED: starts as usual',
      );
      const joining = await prepareCopy(opts('b', dirOf('b-joining'), false, 'n3'));
      t.equal(joining.imageProxyKey, finished.imageProxyKey, 'a joining node signs with it too');
      t.not(
        fs.readFileSync(path.join(dirOf('b-joining'), 'image_proxy_key'), 'utf8').trim(),
        finished.imageProxyKey,
        'not with its own',
      );
      // The same database seeding by another node's name: the log is not empty.
      const again = copyOf(single, 'b-again');
      const before = hashOf(again);
      await t.rejects(
        prepareCopy(opts('b', again, true, 'n2')),
        { message: /log is not empty \(at position \d+; seeded by node n1\)/ },
        'the same database seeding as another node: refused',
      );
      t.equal(hashOf(again), before, 'the refused database is as it was');
    },
  );

  t.test(
    'a node started empty before the seed stops at the seed entry, then starts from its snapshot',
    async (t) => {
      const env = {
        CLUSTER_NODE: 'n2',
        CLUSTER_NATS: servers.join(','),
        CLUSTER_REPLICAS: '1',
        CLUSTER_NAMESPACE: 'c',
        DATA_DIR: dirOf('c-empty'),
        PORT: '0',
        HOST: '127.0.0.1',
      };
      const early = clusterNode(env);
      await early.waitFor(/listening on/);
      const seq = await prepareCopy(opts('c', copyOf(single, 'c-seeding'), true));
      t.equal(seq.seeded, 1, 'seeded while it runs');
      const stopped = await early.exited;
      t.equal(stopped.code, 75, 'it stops');
      t.match(
        early.output(),
        /seeded from node n1's database after this node started/,
        'and says why',
      );

      const next = clusterNode(env);
      await next.waitFor(/listening on/);
      t.match(next.output(), /seeded at 1; rebuilding/, 'its copy from before the seed goes');
      t.match(next.output(), /started from the snapshot at log position 1/, 'the seed’s snapshot');
      t.same(inspectCopy(dirOf('c-empty')).realms, [1, 2], 'with the seeded realms');
      next.child.kill('SIGTERM');
      t.equal((await next.exited).code, 0, 'stopped gracefully');
    },
  );

  t.test('what cannot be done safely is refused, nothing changed', async (t) => {
    const refused = async (ns: string, dir: string, seed: boolean, message: RegExp) => {
      const before = fs.existsSync(path.join(dir, 'confab.sqlite3')) ? hashOf(dir) : null;
      await t.rejects(
        prepareCopy(opts(ns, dir, seed, 'n9')),
        { name: 'CopyRefusedError', message },
        `${seed ? 'with' : 'without'} CLUSTER_SEED: ${String(message)}`,
      );
      if (before !== null) t.equal(hashOf(dir), before, `${path.basename(dir)} is as it was`);
    };
    // A cluster node's copy (at position 1 of namespace c) against a log that never got there.
    await refused('d', dirOf('c-empty'), false, /at log position \d+, but this cluster's log/);
    await refused('d', dirOf('c-empty'), true, /another cluster's copy/);
    // Nothing to seed with.
    await refused('e', dirOf('nothing'), true, /holds no realms to move onto the cluster/);
    t.notOk(fs.existsSync(path.join(dirOf('nothing'), 'confab.sqlite3')), 'no database made');
    // An earlier cluster's snapshot in the buckets of an empty log.
    const h = await connectJetStream({
      servers,
      node: 't',
      replicas: 1,
      names: clusterNames('f'),
      allowUnsafeNats: localNatsIsUnsafe(),
    });
    await h.snapshots.putBlob({ name: SNAPSHOT_NAME, description: '5' }, Buffer.from('old'));
    await h.nc.close();
    await refused('f', other, true, /buckets hold an earlier cluster's state/);
    // The cluster seeded from another database.
    await refused('c', other, true, /log is not empty .*seeded by node n1/);
    await refused('c', other, false, /single-process database \(1 realm\)/);
  });
}

/** A single process's database: realms with these subdomains. */
function singleProcessDatabase(dir: string, subdomains: string[]): void {
  const store = Store.open(dir, { backgroundCheckpoint: false });
  for (const sub of subdomains)
    doCreateRealm(store, {
      name: `Realm ${sub}`,
      string_id: sub,
      owner_email: `owner@${sub || 'root'}.example.com`,
      owner_full_name: 'Owner',
      owner_password_hash: null,
      owner_can_create_users: true,
      now: 1_700_000_000,
    });
  store.close();
}

/** Appends a seed entry as node n1 (its first step) to an empty log. */
async function append(
  servers: string[],
  names: ClusterNames,
  db: { realms: number[]; largest: number },
): Promise<void> {
  const h = await connectJetStream({
    servers,
    node: 'n1',
    replicas: 1,
    names,
    allowUnsafeNats: localNatsIsUnsafe(),
  });
  try {
    const entry = { k: 'seed' as const, node: 'n1', inc: 'earlier', ...db };
    await appendEntry(h.js, names, CLUSTER_SUBJECT_REALM, entry, 'Nats-Expected-Last-Sequence', 0);
  } finally {
    await h.nc.close();
  }
}

async function streamExists(servers: string[], stream: string): Promise<boolean> {
  const nc = await connect({ servers });
  try {
    const jsm = await nc.jetstreamManager();
    return await jsm.streams.info(stream).then(
      () => true,
      () => false,
    );
  } finally {
    await nc.close();
  }
}

async function kvValue(servers: string[], names: ClusterNames, key: string): Promise<string> {
  const nc = await connect({ servers });
  try {
    const kv = await nc.jetstream().views.kv(names.leases);
    return (await kv.get(key))?.string() ?? '';
  } finally {
    await nc.close();
  }
}

/** A cluster node process (src/cluster/main.ts): its output as it comes, and its exit. */
function clusterNode(env: Record<string, string>) {
  const node = plainNode([path.join(DIST_SRC, 'cluster', 'main.js')], {
    ...localNatsEnv(),
    ...env,
  });
  const child = spawn(node.file, node.args, { env: node.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null }>((resolve) =>
    child.on('exit', (code) => resolve({ code })),
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  void exited.then(() => clearTimeout(timer));
  return {
    child,
    exited,
    output: () => out,
    waitFor: async (re: RegExp) => {
      for (let done = false; !re.test(out); await sleep(50)) {
        if (done) throw new Error(`exited before ${String(re)}:\n${out}`);
        done = child.exitCode !== null;
      }
    },
  };
}
