/**
 * What a node checks of its data directory before it joins a cluster (`prepareCopy`, run by
 * src/cluster/main.ts before the server opens the database), and moving an existing server onto
 * a cluster: the seed (docs/cluster.md "Moving an existing server onto a cluster").
 *
 * A database a single process wrote holds realms no log entry holds: a node started on it as it
 * is would serve those realms alone, and their rows would never reach another node. So:
 *
 * - With CLUSTER_SEED=1, on a cluster whose log is empty, the node seeds the cluster from it. It
 *   appends the seed entry (`{k: 'seed'}`, on `<log>.0`) with JetStream's expected last sequence
 *   0 — only one first entry can land, so of two seeding nodes (or a seeding node and a
 *   CLUSTER_BOOTSTRAP one) one loses, its database left as it was —, records its database as
 *   being at that position, then finishes the seed: raises the id-blocks counter above every id
 *   the database holds or gave (so no realm's new rows reuse one), makes its image-proxy key the
 *   cluster's, puts its uploads in the uploads bucket, and uploads a snapshot of the database at
 *   the seed's position. A node with an
 *   empty data directory starts from that snapshot (it waits for it: restoreSnapshot); the
 *   realms' leases, lease markers, fencing and ids are then those of any realm. Should the
 *   seeding node stop before the snapshot is up, it finishes the seed when started again.
 * - Refused, with the reason, before anything touches the database: a database never part of a
 *   cluster (no log position) that holds realms, without CLUSTER_SEED; one with CLUSTER_SEED on a
 *   cluster whose log is not empty (another node seeded or bootstrapped it), or whose buckets hold
 *   an earlier cluster's snapshot or trimming; a cluster node's copy at a log position the
 *   cluster's log never reached (another cluster's copy: wrong CLUSTER_NATS or CLUSTER_NAMESPACE,
 *   or a log removed since), with or without CLUSTER_SEED; CLUSTER_SEED with no realms to move
 *   on an empty cluster. A cluster node's copy of its own cluster (the seeding node restarted
 *   among them) starts as usual, CLUSTER_SEED or not.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { unpack } from '../lib/pack.js';
import { openDatabase, type DB } from '../storage/db.js';
import { largestId } from '../storage/ids.js';
import { loadImageProxyKey } from '../storage/image-proxy-key.js';
import { appliedPosition, hasUnackedCommits, recordSeeded } from '../storage/replication.js';
import Database from '../storage/sqlite.js';
import { raiseIdCounter } from './id-blocks.js';
import {
  appendEntry,
  CLUSTER_SUBJECT_REALM,
  connectJetStream,
  gapAfter,
  IMAGE_PROXY_KEY_NAME,
  patiently,
  sharedImageProxyKey,
  SNAPSHOT_NAME,
  type ClusterNames,
  type Entry,
  type JetStreamHandles,
} from './jetstream.js';
import { uploadSnapshot } from './snapshot.js';
import { reportPosition, trimmedPosition } from './trim.js';
import {
  emojiNamedIn,
  putExistingEmoji,
  putExistingRealmIcons,
  putExistingUploads,
  realmIconsNamedIn,
} from './uploads.js';

/** A node that will not start on its data directory, and why (said as it is to the operator). */
export class CopyRefusedError extends Error {
  override name = 'CopyRefusedError';
}

/** What a data directory's database is, read without changing it. */
export type CopyState = {
  /** Whether there is a database at all. */
  exists: boolean;
  /** Its realms' ids. */
  realms: number[];
  /** The log position it holds (0: it was never part of a cluster's log). */
  applied: number;
  /** Whether it holds commits of its own the log never acknowledged. */
  unacked: boolean;
};

/**
 * Reads what a data directory's database is, changing nothing: no migration runs, and nothing is
 * written (opened for writing all the same: a read-only connection leaves its -wal and -shm
 * files behind, where the last writer's close removes them).
 */
export function inspectCopy(dataDir: string): CopyState {
  const file = path.join(dataDir, 'confab.sqlite3');
  if (!fs.existsSync(file)) return { exists: false, realms: [], applied: 0, unacked: false };
  const db = new Database(file, { fileMustExist: true });
  try {
    const hasRealms = db
      .prepare<[], number>(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'realms'",
      )
      .pluck()
      .get();
    const realms = hasRealms
      ? db.prepare<[], number>('SELECT id FROM realms ORDER BY id').pluck().all()
      : [];
    return { exists: true, realms, applied: appliedPosition(db), unacked: hasUnackedCommits(db) };
  } finally {
    db.close();
  }
}

/** A database that holds realms and was never part of a cluster: a single process's. */
function isSingleProcess(copy: CopyState): boolean {
  return copy.realms.length > 0 && copy.applied === 0 && !copy.unacked;
}

type SeedEntry = Extract<Entry, { k: 'seed' }>;

/** What the cluster holds that decides what a node may do with its copy. */
type ClusterView = {
  /** The log's last position (0: nothing was ever appended). */
  last: number;
  /** The seed entry, if the cluster was seeded. */
  seed: { seq: number; entry: SeedEntry } | null;
  /** The newest snapshot's position, or null when the bucket has none. */
  snapshot: number | null;
  /** Up to where the log was trimmed (0: never). */
  trimmed: number;
};

async function viewCluster(h: JetStreamHandles, names: ClusterNames): Promise<ClusterView> {
  const since = Date.now();
  const subject = `${names.log}.${CLUSTER_SUBJECT_REALM}`;
  const info = await patiently(
    () => h.jsm.streams.info(names.stream, { subjects_filter: subject }),
    since,
  );
  let seed: ClusterView['seed'] = null;
  if (info.state.subjects?.[subject]) {
    const m = await patiently(
      () => h.jsm.streams.getMessage(names.stream, { last_by_subj: subject }),
      since,
    );
    const entry = unpack<Entry>(m.data);
    if (entry.k === 'seed') seed = { seq: m.seq, entry };
  }
  const snap = await patiently(() => h.snapshots.info(SNAPSHOT_NAME), since);
  return {
    last: info.state.last_seq,
    seed,
    snapshot: snap && !snap.deleted ? Number(snap.description) : null,
    trimmed: await patiently(() => trimmedPosition(h.kv), since),
  };
}

export type PrepareOptions = {
  servers: string[];
  names: ClusterNames;
  node: string;
  replicas: number;
  dataDir: string;
  /** CLUSTER_SEED: move this data directory's single-process database onto the (empty) cluster. */
  seed: boolean;
  /** CLUSTER_ALLOW_UNSAFE_NATS: run on a nats-server too old for the fencing (connectJetStream). */
  allowUnsafeNats?: boolean;
};

/** What the node's start needs next (src/cluster/main.ts). */
export type Prepared = {
  /** Up to where the log was trimmed (0: never): an older copy is rebuilt. */
  trimmed: number;
  /**
   * The first entry the log holds after the copy's position when it no longer holds the one right
   * after it (trimmed: jetstream.ts gapAfter), else null: such a copy is rebuilt.
   */
  gap: number | null;
  /** The seed entry's position (0: the cluster was not seeded): an older copy is rebuilt. */
  seeded: number;
  /** The cluster's image-proxy key (sharedImageProxyKey), which the node signs with. */
  imageProxyKey: string;
};

/**
 * Checks the data directory's database against the cluster, refuses what the node cannot do
 * with it (CopyRefusedError, the database untouched), seeds the cluster from it with `seed`, and
 * finishes a seed its node left unfinished.
 */
export async function prepareCopy(opts: PrepareOptions): Promise<Prepared> {
  const copy = inspectCopy(opts.dataDir);
  const single = isSingleProcess(copy);
  if (single && !opts.seed) {
    throw new CopyRefusedError(
      `${opts.dataDir} holds a single-process database (${realmsOf(copy)}) that was never part ` +
        'of a cluster: a node started on it would serve its realms alone, and their rows would ' +
        'never reach the other nodes. To move it onto a new cluster, start this node alone with ' +
        'CLUSTER_SEED=1 against an empty cluster (docs/cluster.md, "Moving an existing server ' +
        'onto a cluster"); to join a cluster, start the node with an empty data directory. ' +
        'The database was left as it was.',
    );
  }
  const h = await connectJetStream({
    servers: opts.servers,
    node: opts.node,
    replicas: opts.replicas,
    names: opts.names,
    allowUnsafeNats: opts.allowUnsafeNats,
  });
  try {
    const view = await viewCluster(h, opts.names);
    if (copy.applied > view.last) {
      throw new CopyRefusedError(
        `${opts.dataDir} is a cluster node's copy at log position ${copy.applied}, but this ` +
          `cluster's log (${opts.names.stream}) ends at ${view.last}: it is another cluster's ` +
          'copy, or the log was removed since. Check CLUSTER_NATS and CLUSTER_NAMESPACE; a node ' +
          'joining this cluster starts with an empty data directory. The database was left as ' +
          'it was.',
      );
    }
    const imageProxyKey = () => sharedImageProxyKey(h.kv, loadImageProxyKey(opts.dataDir));
    if (single) {
      const seeded = await seedCluster(h, opts, copy, view);
      return { trimmed: 0, gap: null, seeded, imageProxyKey: await imageProxyKey() };
    }
    if (opts.seed) {
      if (copy.realms.length === 0 && view.last === 0) {
        throw new CopyRefusedError(
          `CLUSTER_SEED=1, but ${opts.dataDir} holds no realms to move onto the cluster ` +
            '(wrong DATA_DIR?).',
        );
      }
      console.error(
        `CLUSTER_SEED: ${opts.dataDir} ${copy.exists ? "is this cluster's copy" : 'is empty'}; ` +
          'nothing to seed, starting as usual (CLUSTER_SEED can be removed)',
      );
    }
    const seed = view.seed;
    if (seed && (view.snapshot ?? 0) < seed.seq && copy.applied >= seed.seq) {
      // Only the seeding node's copy is at the seed before its snapshot is up: it stopped
      // before finishing the seed.
      const db = openDatabase(opts.dataDir);
      try {
        await finishSeed(h, db, opts);
      } finally {
        db.close();
      }
    }
    let trimmed = view.trimmed;
    let gap: number | null = null;
    if (copy.applied > 0 && !copy.unacked) {
      // The copy's position is reported first, as a running node reports it (trim.ts): a trim
      // that reads the reports from then on keeps what follows it. Then what a trim before that
      // removed is looked at: the trimmed position again (a trim raises it before it removes
      // anything), and the entry after the copy itself (the log may have been trimmed by a trim
      // that raised the position after viewCluster read it).
      const since = Date.now();
      await patiently(() => reportPosition(h.kv, opts.node, copy.applied), since);
      trimmed = await patiently(() => trimmedPosition(h.kv), since);
      gap = await patiently(() => gapAfter(h.jsm, opts.names, copy.applied), since);
    }
    return { trimmed, gap, seeded: seed?.seq ?? 0, imageProxyKey: await imageProxyKey() };
  } finally {
    await h.nc.close();
  }
}

function realmsOf(copy: CopyState): string {
  const n = copy.realms.length;
  return `${n} realm${n === 1 ? '' : 's'}`;
}

/**
 * Seeds the cluster from this data directory's single-process database; the seed's position.
 * The seed entry is appended only to an empty log, and only one can land.
 */
async function seedCluster(
  h: JetStreamHandles,
  opts: PrepareOptions,
  copy: CopyState,
  view: ClusterView,
): Promise<number> {
  const left = `${opts.dataDir} was left as it was (${realmsOf(copy)})`;
  // This node appended the seed, then stopped before recording it in its database.
  const ours =
    view.seed !== null &&
    view.seed.entry.node === opts.node &&
    view.last === view.seed.seq &&
    view.snapshot === null;
  if (view.last > 0 && !ours) {
    const by = view.seed ? `seeded by node ${view.seed.entry.node}` : 'bootstrapped';
    throw new CopyRefusedError(
      `CLUSTER_SEED: the cluster's log is not empty (at position ${view.last}; ${by}), so this ` +
        `database cannot seed it. ${left}. A node joins the cluster with an empty data ` +
        'directory; a database that is to seed a cluster needs one whose log is empty.',
    );
  }
  if (view.last === 0 && (view.snapshot !== null || view.trimmed > 0)) {
    throw new CopyRefusedError(
      `CLUSTER_SEED: the cluster's log is empty, but its buckets hold an earlier cluster's state ` +
        `(a snapshot at log position ${view.snapshot ?? 0}, a log trimmed up to ${view.trimmed}). ` +
        `Remove the stream ${opts.names.stream} and the buckets ${opts.names.leases}, ` +
        `${opts.names.snapshots} and ${opts.names.uploads}, or use another CLUSTER_NAMESPACE. ` +
        `${left}.`,
    );
  }
  // Migrated to this build's schema, as the node would: the snapshot is what every node opens.
  const db = openDatabase(opts.dataDir);
  try {
    const realms = db.prepare<[], number>('SELECT id FROM realms ORDER BY id').pluck().all();
    const largest = largestId(db);
    let seq: number;
    if (ours) {
      const e = view.seed!.entry;
      if (e.largest !== largest || e.realms.join() !== realms.join()) {
        throw new CopyRefusedError(
          `CLUSTER_SEED: the cluster was seeded by this node (${opts.node}) from another ` +
            `database (realms ${e.realms.join(', ')}; ids up to ${e.largest}). ${left}.`,
        );
      }
      seq = view.seed!.seq;
    } else {
      const entry: SeedEntry = {
        k: 'seed',
        node: opts.node,
        inc: crypto.randomBytes(6).toString('hex'),
        realms,
        largest,
      };
      try {
        seq = await appendEntry(
          h.js,
          opts.names,
          CLUSTER_SUBJECT_REALM,
          entry,
          'Nats-Expected-Last-Sequence',
          0,
        );
      } catch (err) {
        // An append whose answer was lost may have landed all the same: the log says.
        const now = await viewCluster(h, opts.names);
        if (now.seed?.entry.inc !== entry.inc) {
          throw new CopyRefusedError(
            `CLUSTER_SEED: another node seeded or bootstrapped the cluster first (${String(err)}). ` +
              `${left}.`,
          );
        }
        seq = now.seed.seq;
      }
    }
    recordSeeded(db, seq);
    console.error(
      `seeded the cluster from ${opts.dataDir}: ${realmsOf(copy)}, ids up to ${largest}, ` +
        `log position ${seq}`,
    );
    await finishSeed(h, db, opts);
    return seq;
  } finally {
    db.close();
  }
}

/**
 * What follows the seed entry, each step again if it was done before (a seeding node started
 * again): the id counter above the database's ids, its image-proxy key as the cluster's (its
 * messages' external images were signed with it; no other node signed anything before the
 * seed), its uploads in the bucket, and last its snapshot, which the other nodes wait for.
 */
async function finishSeed(h: JetStreamHandles, db: DB, opts: PrepareOptions): Promise<void> {
  const counter = await patiently(() => raiseIdCounter(h.kv, largestId(db) + 1));
  const key = loadImageProxyKey(opts.dataDir);
  await patiently(() => h.kv.put(IMAGE_PROXY_KEY_NAME, key));
  const pathIds = db.prepare<[], string>('SELECT path_id FROM attachments').pluck().all();
  const put =
    (await putExistingUploads(opts.dataDir, h.files, pathIds)) +
    (await putExistingEmoji(opts.dataDir, h.files, emojiNamedIn(db))) +
    (await putExistingRealmIcons(opts.dataDir, h.files, realmIconsNamedIn(db)));
  const at = await uploadSnapshot(
    {
      snapshotTo: (file) => {
        if (hasUnackedCommits(db)) return null;
        db.prepare('VACUUM INTO ?').run(file);
        return appliedPosition(db);
      },
    },
    h.snapshots,
    path.join(opts.dataDir, 'tmp'),
    opts.node,
    () => undefined,
  );
  console.error(
    `seed finished: new ids from ${counter} on; ${put} uploaded files put in the bucket; ` +
      (at === null ? 'the bucket already has a snapshot as new' : `snapshot at ${at} uploaded`),
  );
}
