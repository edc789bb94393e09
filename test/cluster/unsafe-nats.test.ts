/**
 * A nats-server older than 2.9.21 (docs/cluster.md "NATS version"), for real: Debian 12's 2.9.10
 * (/usr/sbin/nats-server) with JetStream. connectJetStream, which every node's start goes through,
 * refuses it without the override (nothing created on it) and accepts it with the override, with
 * a warning; a node process (src/cluster/main.ts) refuses to start on it (exit status 78) unless
 * CLUSTER_ALLOW_UNSAFE_NATS=1; the local cluster's check of its binary (localNatsIsUnsafe) tells
 * that server from the fetched one. Skipped, with a note, where no such old server is installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import t, { type Test } from 'tap';
import { clusterNames, connectJetStream, UnsafeNatsError } from '../../src/cluster/jetstream.js';
import {
  alive,
  FETCHED_NATS_SERVER,
  listens,
  localNatsIsUnsafe,
  natsServerVersion,
  ports,
  sleep,
  startNatsServers,
  waitFor,
} from '../../src/cluster/local.js';
import { nodeProcess } from '../helpers/cluster-node.js';

/** Debian 12's nats-server, the old one this file is about. */
const OLD_NATS = '/usr/sbin/nats-server';
const oldVersion = fs.existsSync(OLD_NATS) ? natsServerVersion(OLD_NATS) : '';

if (!/^2\.9\.(\d|1\d|20)$/.test(oldVersion)) {
  t.plan(
    0,
    `no nats-server older than 2.9.21 at ${OLD_NATS} (${oldVersion || 'none'}; Debian 12's ` +
      'package has 2.9.10): skipped',
  );
} else {
  await run().catch((err: unknown) => t.error(err));
}

/** What a node's output says about the version, the reason, the fix and the override. */
function refusalNamesAll(t: Test, message: string): void {
  t.match(message, `nats-server ${oldVersion} is older than 2.9.21`, 'names the version');
  t.match(message, /nats-server issue 4320/, 'the reason');
  t.match(message, /both win a realm's lease/);
  t.match(message, /npm run fetch-nats-server/, 'how to get a recent one');
  t.match(message, /CLUSTER_ALLOW_UNSAFE_NATS=1/, 'and the override');
}

async function run(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'unsafe-nats-'));
  fs.mkdirSync(path.join(root, 'logs'));
  const [clientPort, routePort] = await ports(2);
  const [nats] = startNatsServers(root, [clientPort!], [routePort!], OLD_NATS);
  t.teardown(async () => {
    if (alive(nats!.pid)) process.kill(nats!.pid, 'SIGTERM');
    while (alive(nats!.pid)) await sleep(50);
    fs.rmSync(root, { recursive: true, force: true });
  });
  await waitFor('nats-server 2.9', () => listens(clientPort!), 20_000);
  const servers = [`nats://127.0.0.1:${clientPort}`];

  const streamNames = async () => {
    const nc = await connect({ servers });
    try {
      const jsm = await nc.jetstreamManager();
      return (await jsm.streams.names().next()).sort();
    } finally {
      await nc.close();
    }
  };

  t.test('connectJetStream refuses it without the override, before opening anything', async (t) => {
    const names = clusterNames('refused');
    const err = await connectJetStream({ servers, node: 'n1', replicas: 1, names }).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof UnsafeNatsError, 'refused');
    if (!(err instanceof UnsafeNatsError)) return;
    t.equal(err.version, oldVersion);
    refusalNamesAll(t, err.message);
    t.same(await streamNames(), [], 'no stream or bucket was created');
    const told = await connectJetStream({
      servers,
      node: 'n1',
      replicas: 1,
      names,
      allowUnsafeNats: false,
    }).then(
      () => 'accepted',
      (e: unknown) => (e instanceof UnsafeNatsError ? 'refused' : String(e)),
    );
    t.equal(told, 'refused', 'allowUnsafeNats: false is no override');
  });

  t.test('connectJetStream accepts it with the override, and warns', async (t) => {
    const names = clusterNames('allowed');
    const warnings: string[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
    let h: Awaited<ReturnType<typeof connectJetStream>>;
    try {
      h = await connectJetStream({
        servers,
        node: 'n1',
        replicas: 1,
        names,
        allowUnsafeNats: true,
      });
    } finally {
      console.error = error;
    }
    try {
      t.equal(h.nc.info?.version, oldVersion, `connected to ${oldVersion}`);
      t.equal((await h.jsm.streams.info(names.stream)).config.name, names.stream, 'the log opened');
      t.match(warnings.join('\n'), `WARNING: nats-server ${oldVersion} is older than 2.9.21`);
      t.match(warnings.join('\n'), /because CLUSTER_ALLOW_UNSAFE_NATS=1/, 'naming the override');
    } finally {
      await h.nc.close();
    }
  });

  t.test('a node process refuses to start on it unless CLUSTER_ALLOW_UNSAFE_NATS=1', async (t) => {
    const env = (name: string, allow: string) => ({
      CLUSTER_NODE: 'n1',
      CLUSTER_NATS: servers.join(','),
      CLUSTER_REPLICAS: '1',
      CLUSTER_NAMESPACE: 'node',
      CLUSTER_ALLOW_UNSAFE_NATS: allow,
      DATA_DIR: path.join(root, name),
      PORT: '0',
      HOST: '127.0.0.1',
    });
    const refused = await nodeProcess(env('refused', ''));
    t.equal(refused.code, 78, 'exit status 78 (EX_CONFIG)');
    t.match(refused.output, /refusing to start: nats-server/);
    refusalNamesAll(t, refused.output);
    t.notOk((await streamNames()).includes('CONFAB_LOG_node'), 'no log was created');

    const bad = await nodeProcess(env('bad', 'yes'));
    t.equal(bad.code, 78, 'a value other than 1 or 0 is refused (EX_CONFIG)');
    t.match(bad.output, /CLUSTER_ALLOW_UNSAFE_NATS must be 1 or 0/);

    const allowed = await nodeProcess(env('allowed', '1'), /listening on/);
    t.equal(allowed.code, null, 'with CLUSTER_ALLOW_UNSAFE_NATS=1 it serves');
    t.match(allowed.output, `WARNING: nats-server ${oldVersion} is older than 2.9.21`);
  });

  t.test('the local cluster tells the old binary from the fetched one, and says so', (t) => {
    const warnings: string[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
    try {
      t.equal(localNatsIsUnsafe(OLD_NATS), true, `${OLD_NATS} needs the override`);
      t.equal(localNatsIsUnsafe(OLD_NATS), true, 'asked again');
    } finally {
      console.error = error;
    }
    t.equal(warnings.length, 1, 'one warning');
    t.match(warnings[0], `${OLD_NATS}, is ${oldVersion}, older than 2.9.21`);
    t.match(warnings[0], /nodes run on it with CLUSTER_ALLOW_UNSAFE_NATS=1/);
    t.match(warnings[0], /npm run fetch-nats-server/);
    if (fs.existsSync(FETCHED_NATS_SERVER))
      t.equal(localNatsIsUnsafe(FETCHED_NATS_SERVER), false, 'the fetched one does not');
    t.end();
  });
}
