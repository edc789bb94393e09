/**
 * Snapshots of a node's database in the `confab_snapshots` bucket, both sides. A node that owns
 * no realm uploads one every so many log entries (`uploadSnapshot`, from src/cluster/node.ts); a
 * node with no database (new, or discarded after diverging) starts from the newest one and then
 * applies the log from the snapshot's position on (`restoreSnapshot`; docs/cluster.md
 * "Catch-up"). Without a snapshot it replays the whole log — but for a cluster seeded from an
 * existing database (seed.ts), whose first snapshot the seeding node uploads: it waits for that.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { connect, type KV, type NatsConnection, type ObjectStore } from 'nats';
import type { Replication } from '../storage/replication.js';
import {
  isNoAnswer,
  isWrongLastSequence,
  JETSTREAM_TIMEOUT_MS,
  patiently,
  sleep,
  SNAPSHOT_NAME,
  type ClusterNames,
} from './jetstream.js';
import { nextThroughLeader, readObject } from './objects.js';
import { reportPosition } from './trim.js';

/**
 * Whether JetStream holds the stream `name` (a bucket's): asked again while the cluster does not
 * answer in time (`patiently`, from `since`); "no such stream" is an answer.
 */
async function streamExists(nc: NatsConnection, name: string, since: number): Promise<boolean> {
  const jsm = await patiently(() => nc.jetstreamManager({ timeout: JETSTREAM_TIMEOUT_MS }), since);
  return patiently(
    () =>
      jsm.streams.info(name).then(
        () => true,
        (err: unknown) => {
          if (isNoAnswer(err)) throw err;
          return false;
        },
      ),
    since,
  );
}

/**
 * Restores the newest snapshot into an empty data directory; its log position, or null. `seeded`:
 * the position of the cluster's seed entry (seed.ts), 0 if none: a seeded cluster's rows before it
 * are in no log entry, so the node waits for a snapshot at or past it (the seeding node uploads it
 * once its entry is appended) instead of replaying the log without them.
 *
 * `node`: the node's name, whose applied position (trim.ts `applied-<node>`) is then recorded as
 * the one it starts from — the snapshot's as soon as it is found (again if the one read is newer),
 * 0 with none — in place of what the lease bucket held for it: the position of a copy it has just
 * set aside (reported by prepareCopy) would hold every trim there until the node reports again,
 * seconds after it serves (test/cluster/trim-start.test.ts).
 */
export async function restoreSnapshot(
  servers: string[],
  names: ClusterNames,
  dataDir: string,
  seeded = 0,
  node?: string,
): Promise<number | null> {
  const file = path.join(dataDir, 'confab.sqlite3');
  if (fs.existsSync(file)) return null;
  const nc = await connect({ servers, name: 'confab-restore' });
  let leases: KV | null = null;
  let reported: number | null = null;
  const report = async (position: number): Promise<void> => {
    if (node === undefined || position === reported) return;
    reported = position;
    const since = Date.now();
    leases ??= await patiently(
      () =>
        nc.jetstream({ timeout: JETSTREAM_TIMEOUT_MS }).views.kv(names.leases, { bindOnly: true }),
      since,
    );
    const kv = leases;
    await patiently(() => reportPosition(kv, node, position), since);
  };
  try {
    // A cluster that does not answer in time is asked again (for want of a snapshot this node
    // would replay the whole log); one that answers "no such bucket" has no snapshot.
    let bucket: ObjectStore | null = null;
    let noted = 0;
    for (;;) {
      const since = Date.now();
      if (bucket === null && (await streamExists(nc, `OBJ_${names.snapshots}`, since))) {
        bucket = await patiently(
          () => nc.jetstream({ timeout: JETSTREAM_TIMEOUT_MS }).views.os(names.snapshots),
          since,
        );
      }
      const store = bucket;
      const info = store && (await patiently(() => store.info(SNAPSHOT_NAME), since));
      if (info && !info.deleted && Number(info.description) >= seeded) {
        await report(Number(info.description));
        break;
      }
      if (seeded === 0) {
        await report(0);
        return null;
      }
      if (Date.now() - noted >= 30_000) {
        noted = Date.now();
        console.error(
          `waiting for the snapshot of the database the cluster was seeded from (log position ${seeded}), which the seeding node uploads`,
        );
      }
      await sleep(1000);
    }
    const found = bucket!;
    const next = nextThroughLeader(
      await patiently(() =>
        nc.jetstreamManager({ checkAPI: false, timeout: JETSTREAM_TIMEOUT_MS }),
      ),
    );
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.restoring`;
    // A read that a replica behind the others answers short, or that stops, is read again
    // through the stream's leader (objects.ts), as is one replaced meanwhile (its old chunks
    // purged): from its new description. One that still fails stops the node's start.
    let result;
    try {
      result = await readObject(found, next, SNAPSHOT_NAME, (chunks) =>
        pipeline(Readable.from(chunks), fs.createWriteStream(tmp, { mode: 0o600 })),
      );
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    if (!result) {
      fs.rmSync(tmp, { force: true });
      // Gone meanwhile: the node replays the log from its start.
      await report(0);
      return null;
    }
    fs.renameSync(tmp, file);
    const restored = Number(result.info.description);
    // Replaced meanwhile (a newer snapshot read instead): the node starts from there.
    await report(restored);
    return restored;
  } finally {
    await nc.close();
  }
}

/**
 * Writes a copy of this node's database under `dir` and uploads it unless the bucket already
 * holds one as new; `taken` learns the copy's log position. The position uploaded, or null.
 *
 * The upload is a compare-and-set on the object's meta entry: the put expects the revision of the
 * older snapshot it found (JetStream's expected last subject sequence; 0: none yet), so when
 * another node's snapshot lands in between the put is refused, and the bucket is read again. An
 * older copy finishing after a newer one can thus never replace it: the bucket's snapshot never
 * moves backwards, and the log trimmed behind a snapshot this returned (trim.ts) is never
 * trimmed past what the bucket holds.
 */
export async function uploadSnapshot(
  replication: Pick<Replication, 'snapshotTo'>,
  bucket: Pick<ObjectStore, 'info' | 'put'>,
  dir: string,
  node: string,
  taken: (seq: number) => void,
): Promise<number | null> {
  await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `snapshot-${crypto.randomBytes(8).toString('hex')}.sqlite3`);
  try {
    const seq = replication.snapshotTo(file);
    if (seq === null) return null;
    taken(seq);
    for (let attempt = 1; ; attempt++) {
      // Asked again while the cluster does not answer in time; any other failure fails this
      // snapshot (counted as "none", the put would expect an empty subject).
      const current = await patiently(() => bucket.info(SNAPSHOT_NAME));
      if (current && !current.deleted && Number(current.description) >= seq) return null;
      const body = Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>;
      try {
        await bucket.put({ name: SNAPSHOT_NAME, description: String(seq) }, body, {
          previousRevision: current?.revision ?? 0,
        });
      } catch (err) {
        // Another snapshot landed since the read (nats.js removes the chunks this put sent).
        if (!isWrongLastSequence(err) || attempt >= 10) throw err;
        continue;
      }
      console.error(`cluster ${node}: snapshot at log position ${seq} uploaded`);
      return seq;
    }
  } finally {
    await fs.promises.rm(file, { force: true });
  }
}
