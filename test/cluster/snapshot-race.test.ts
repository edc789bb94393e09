/**
 * Snapshots and trimming under nodes that snapshot at the same moment (src/cluster/snapshot.ts
 * uploadSnapshot, src/cluster/trim.ts trimLog), against a real nats-server: an older snapshot
 * whose upload finishes after a newer one's never replaces it, so the log trimmed behind the newer
 * one is never trimmed past the bucket's snapshot (a node starting empty would restore the older
 * one and find the entries after it gone); and two trims at once never lower the recorded trimmed
 * position below what was removed. Each race is staged: the older side has read the bucket before
 * the newer side writes, and writes only after it. Skipped when nats-server is not installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ObjectStore } from 'nats';
import t from 'tap';
import { clusterNames, connectJetStream, SNAPSHOT_NAME } from '../../src/cluster/jetstream.js';
import {
  alive,
  localNatsIsUnsafe,
  missingEngines,
  ports,
  sleep,
  startNatsCluster,
} from '../../src/cluster/local.js';
import { restoreSnapshot, uploadSnapshot } from '../../src/cluster/snapshot.js';
import { TRIMMED_KEY, trimLog, trimmedPosition } from '../../src/cluster/trim.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

/** A promise and the function that resolves it. */
function signal(): { done: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const done = new Promise<void>((r) => (fire = r));
  return { done, fire };
}

/** A node's database as uploadSnapshot sees it: a copy at log position `seq`. */
const copyAt = (seq: number) => ({
  snapshotTo: (file: string) => {
    fs.writeFileSync(file, `copy at ${seq}`);
    return seq;
  },
});

t.test('racing snapshots and trims', async (t) => {
  if (missing) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snaprace-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  const [client, route] = await ports(2);
  const nats = await startNatsCluster(dir, [client!], [route!]);
  t.teardown(async () => {
    for (const n of nats) if (alive(n.pid)) process.kill(n.pid, 'SIGKILL');
    while (nats.some((n) => alive(n.pid))) await sleep(50);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const servers = [`nats://127.0.0.1:${client}`];

  /** A namespace's handles, its log holding realm 1's entries at 1..60 and realm 2's at 61. */
  const cluster = async (namespace: string) => {
    const names = clusterNames(namespace);
    const h = await connectJetStream({
      servers,
      node: 't',
      replicas: 1,
      names,
      allowUnsafeNats: localNatsIsUnsafe(),
    });
    t.teardown(() => h.nc.close());
    for (let i = 1; i <= 60; i++) await h.js.publish(`${names.log}.1`, new Uint8Array([i]));
    await h.js.publish(`${names.log}.2`, new Uint8Array([61]));
    const firstSeq = async () => (await h.jsm.streams.info(names.stream)).state.first_seq;
    return { names, h, firstSeq };
  };

  t.test('an older snapshot finishing after a newer one does not replace it', async (t) => {
    const { names, h, firstSeq } = await cluster('uploadrace');
    const tmp = path.join(dir, 'tmp');
    // What a node does after a snapshot (ClusterNode.writeSnapshot); no node is waited for.
    const snapshotAndTrim = async (seq: number, bucket: Pick<ObjectStore, 'info' | 'put'>) => {
      const up = await uploadSnapshot(copyAt(seq), bucket, tmp, `n${seq}`, () => undefined);
      if (up !== null) await trimLog(h.jsm, h.kv, names, up, 0);
      return up;
    };

    // The slower node (its copy at 50) reads the bucket, empty, then waits before its put...
    const read = signal();
    const newerDone = signal();
    let held = false;
    const slow: Pick<ObjectStore, 'info' | 'put'> = {
      info: async (name) => {
        const info = await h.snapshots.info(name);
        read.fire();
        return info;
      },
      put: async (meta, rs, opts) => {
        if (!held) {
          held = true;
          await newerDone.done;
        }
        return h.snapshots.put(meta, rs, opts);
      },
    };
    const older = snapshotAndTrim(50, slow);
    await read.done;
    // ...while the faster one (at 53) uploads and trims the log behind its snapshot.
    t.equal(await snapshotAndTrim(53, h.snapshots), 53, 'the newer snapshot is uploaded');
    t.equal(await trimmedPosition(h.kv), 53, 'and the log trimmed behind it');
    newerDone.fire();
    t.equal(await older, null, 'the older one, finishing last, is not put');

    const info = await h.snapshots.info(SNAPSHOT_NAME);
    t.equal(info?.description, '53', 'the bucket holds the newer snapshot');
    const trimmed = await trimmedPosition(h.kv);
    t.ok(trimmed <= Number(info?.description), `trimmed (${trimmed}) not past the snapshot`);
    t.ok((await firstSeq()) - 1 <= Number(info?.description), 'nor the log itself');

    // A node starting empty restores the newer snapshot: the log holds what follows it.
    const empty = path.join(dir, 'empty');
    t.equal(await restoreSnapshot(servers, names, empty), 53, 'restored at 53');
    t.equal(fs.readFileSync(path.join(empty, 'confab.sqlite3'), 'utf8'), 'copy at 53');
    t.ok((await firstSeq()) <= 54, 'entry 54 is still in the log');

    // And the other way round: the newer one finishing last replaces the older.
    t.equal(await snapshotAndTrim(57, h.snapshots), 57, 'a newer snapshot still goes up');
    t.equal((await h.snapshots.info(SNAPSHOT_NAME))?.description, '57');
    t.equal(await snapshotAndTrim(55, h.snapshots), null, 'an older one does not');
    t.equal((await h.snapshots.info(SNAPSHOT_NAME))?.description, '57');
  });

  t.test('two trims at once never lower the trimmed position', async (t) => {
    const { names, h, firstSeq } = await cluster('trimrace');
    // The trim behind the older snapshot (50) reads the trimmed position, then waits before it
    // writes it...
    const arrived = signal();
    const release = signal();
    let held = false;
    const gated = new Proxy(h.kv, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const fn = value as (...args: unknown[]) => unknown;
        if (prop !== 'put' && prop !== 'update' && prop !== 'create') return fn.bind(target);
        return async (key: unknown, ...rest: unknown[]) => {
          if (key === TRIMMED_KEY && !held) {
            held = true;
            arrived.fire();
            await release.done;
          }
          return fn.call(target, key, ...rest);
        };
      },
    });
    const older = trimLog(h.jsm, gated, names, 50, 0);
    await arrived.done;
    // ...while the trim behind the newer one (53) records its position and removes the entries.
    t.equal(await trimLog(h.jsm, h.kv, names, 53, 0), 53, 'the newer trim');
    t.equal(await firstSeq(), 54, 'entries up to 53 are gone');
    release.fire();
    t.equal(await older, null, 'the older trim, finishing last, records nothing');
    t.equal(await trimmedPosition(h.kv), 53, 'the trimmed position says what is gone');
  });
});
