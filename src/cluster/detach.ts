/**
 * Going back to one process (docs/cluster.md "Going back to one process"): `npm run cluster --
 * detach --data-dir DIR` turns a stopped cluster node's data directory into a single-process one,
 * which `npm start` serves and `manage` writes offline.
 *
 * A node's copy needs three things from the cluster besides its database: the uploads and
 * thumbnails it never served (they may be only in the uploads bucket), the cluster's image-proxy
 * key (external images in its messages were signed with it), and the log's every entry (a copy
 * behind it lacks writes the cluster acknowledged). So, in this order:
 *
 * 1. Refused, with the reason, before anything in DIR changes (the lock file included): a process
 *    holds DIR's lock (the node runs); DIR is not a cluster node's copy; the copy holds commits the
 *    log never acknowledged, or is behind (or past) the log's last position.
 * 2. Under DIR's lock, the checks again, then every upload and thumbnail the rows name that DIR
 *    lacks is fetched from the bucket (each checked against its row's size; any the bucket lacks
 *    refuse the whole), and the cluster's image-proxy key is written to DIR/image_proxy_key. The
 *    temporary-URL key is not: a single process makes its own at each start.
 * 3. Last, in one transaction, the copy's cluster markers go (`cluster_state`, the only one in the
 *    database; leases, ids, subdomains and positions live in NATS). A failure before leaves DIR a
 *    cluster copy, which its node starts on as before; the detach can be run again.
 *
 * Nothing in NATS changes: the cluster's other nodes, if they run on, go on without this copy.
 */
import fs from 'node:fs';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { openDatabase } from '../storage/db.js';
import { storeImageProxyKey } from '../storage/image-proxy-key.js';
import { DataDirLock, DataDirLockedError } from '../storage/data-lock.js';
import { appliedPosition, hasUnackedCommits, isClusterCopy } from '../storage/replication.js';
import Database from '../storage/sqlite.js';
import { storedThumbnails, formatName } from '../lib/thumbnail-formats.js';
import {
  clusterStreams,
  IMAGE_PROXY_KEY_NAME,
  JETSTREAM_TIMEOUT_MS,
  jetStreamErrorCode,
  patiently,
  type ClusterNames,
} from './jetstream.js';
import { nextThroughLeader } from './objects.js';
import {
  emojiNamedIn,
  fetchMissingEmoji,
  fetchMissingRealmIcons,
  fetchMissingUploads,
  realmIconsNamedIn,
  type NamedEmoji,
  type NamedRealmIcon,
  type NamedUpload,
} from './uploads.js';

/** A detach that was not done, and why (said as it is to the operator; DIR left as it was). */
export class DetachRefusedError extends Error {
  override name = 'DetachRefusedError';
}

export type DetachOptions = {
  servers: string[];
  names: ClusterNames;
  dataDir: string;
};

/** The one-line summary `detach` prints. */
export type DetachSummary = {
  data_dir: string;
  /** The log position the directory holds: the cluster's last when it was detached. */
  applied: number;
  uploads_fetched: number;
  thumbnails_fetched: number;
  emoji_fetched: number;
  bytes_fetched: number;
  /** The keys written to DIR (`image_proxy_key` when the cluster's differed from DIR's). */
  keys_written: string[];
};

/** What a data directory's database holds that the detach decides on, read without writing. */
type Copy = {
  cluster: boolean;
  applied: number;
  unacked: boolean;
  uploads: NamedUpload[];
  emoji: NamedEmoji[];
  /** The realms' uploaded icons. */
  icons: NamedRealmIcon[];
};

function readCopy(dataDir: string): Copy | null {
  const file = path.join(dataDir, 'confab.sqlite3');
  if (!fs.existsSync(file)) return null;
  // Opened for writing all the same, as seed.ts's inspectCopy: a read-only connection leaves its
  // -wal and -shm files behind.
  const db = new Database(file, { fileMustExist: true });
  try {
    const cluster = isClusterCopy(db);
    const has = (table: string) =>
      db
        .prepare<[string], number>('SELECT count(*) FROM sqlite_schema WHERE name = ?')
        .pluck()
        .get(table) === 1;
    const byPath = new Map<string, NamedUpload>();
    const named = (pathId: string) => {
      let u = byPath.get(pathId);
      if (!u) byPath.set(pathId, (u = { pathId, size: null, thumbnails: [] }));
      return u;
    };
    if (has('attachments')) {
      const rows = db
        .prepare<[], { path_id: string; size: number }>('SELECT path_id, size FROM attachments')
        .all();
      for (const r of rows) named(r.path_id).size = r.size;
    }
    if (has('image_attachments')) {
      const rows = db
        .prepare<[], { path_id: string; thumbnail_metadata: string }>(
          'SELECT path_id, thumbnail_metadata FROM image_attachments',
        )
        .all();
      for (const r of rows) {
        named(r.path_id).thumbnails = storedThumbnails(r).map((t) => ({
          format: formatName(t),
          size: t.byte_size,
        }));
      }
    }
    const emoji = has('realm_emoji') ? emojiNamedIn(db) : [];
    return {
      cluster,
      applied: appliedPosition(db),
      unacked: hasUnackedCommits(db),
      uploads: [...byPath.values()],
      emoji,
      icons: has('realms') ? realmIconsNamedIn(db) : [],
    };
  } finally {
    db.close();
  }
}

const CATCH_UP =
  'Start its node again (as before, with the cluster running), let it catch up ' +
  '(`confab_cluster_replication_lag_entries` 0 on its /metrics), stop it, and run the detach ' +
  'again.';

/** The refusals that depend on the copy and the log (the lock is checked before). */
function check(dataDir: string, copy: Copy | null, stream: string, last: number): Copy {
  const left = `${dataDir} was left as it was.`;
  if (copy === null) throw new DetachRefusedError(`${dataDir} holds no database. ${left}`);
  if (!copy.cluster) {
    throw new DetachRefusedError(
      `${dataDir} is not a cluster node's data directory (its database has no cluster_state): ` +
        `it is a single-process one already, and \`npm start\` serves it. ${left}`,
    );
  }
  if (copy.unacked) {
    throw new DetachRefusedError(
      `${dataDir} holds commits of its own that the log never acknowledged (its node stopped ` +
        "between a commit and the log's answer): it differs from the cluster's data. " +
        `${CATCH_UP} (Started, the node rebuilds its copy from the cluster's.) ${left}`,
    );
  }
  if (copy.applied > last) {
    throw new DetachRefusedError(
      `${dataDir} is at log position ${copy.applied}, but the log ${stream} ends at ${last}: it is ` +
        "another cluster's copy, or the log was removed since. Check CLUSTER_NATS and " +
        `CLUSTER_NAMESPACE. ${left}`,
    );
  }
  if (copy.applied < last) {
    throw new DetachRefusedError(
      `${dataDir} is at log position ${copy.applied}, and the log ${stream} holds entries up to ` +
        `${last}: it lacks ${last - copy.applied} of the cluster's writes. ${CATCH_UP} ${left}`,
    );
  }
  return copy;
}

/** The log's last position; refused when NATS has no such cluster. */
async function logEnd(nc: NatsConnection, names: ClusterNames): Promise<number> {
  // Without nats.js's API check ($JS.API.INFO), which answers 503 "JetStream system temporarily
  // unavailable" during a JetStream election; the questions below are asked again while
  // JetStream does not answer (`patiently`: an election, a busy machine).
  const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: JETSTREAM_TIMEOUT_MS });
  const since = Date.now();
  // Looked up, never made: a wrong namespace must not create an empty cluster.
  for (const stream of clusterStreams(names)) {
    if (stream === `OBJ_${names.snapshots}`) continue;
    await patiently(() => jsm.streams.info(stream), since).catch((err: unknown) => {
      // JetStream's "stream not found"; anything else (no answer in time) is passed on.
      if (jetStreamErrorCode(err) !== 10059) throw err;
      throw new DetachRefusedError(
        `no stream ${stream} on NATS: no cluster there by this name. Check CLUSTER_NATS and ` +
          'CLUSTER_NAMESPACE.',
      );
    });
  }
  return (await patiently(() => jsm.streams.info(names.stream), since)).state.last_seq;
}

export async function detach(opts: DetachOptions): Promise<DetachSummary> {
  const dataDir = path.resolve(opts.dataDir);
  const running = () =>
    new DetachRefusedError(
      `a process holds ${dataDir}'s lock (its node, or a server or admin tool on it): stop the ` +
        `node first (every node of the cluster, for a copy of all of it). ${dataDir} was left ` +
        'as it was.',
    );
  try {
    DataDirLock.assertFree(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw running();
    throw err;
  }
  const first = readCopy(dataDir);
  if (first === null || !first.cluster) check(dataDir, first, opts.names.stream, 0);
  const nc = await connect({ servers: opts.servers, name: 'confab-detach' }).catch(
    (err: unknown) => {
      throw new DetachRefusedError(
        `NATS does not answer at ${opts.servers.join(', ')} (${String(err)}): the cluster's NATS ` +
          `must run for the detach (its uploads and keys are there). ${dataDir} was left as it was.`,
      );
    },
  );
  try {
    check(dataDir, first, opts.names.stream, await logEnd(nc, opts.names));
    let lock: DataDirLock;
    try {
      lock = DataDirLock.acquire(dataDir, 'cluster detach');
    } catch (err) {
      if (err instanceof DataDirLockedError) throw running();
      throw err;
    }
    try {
      // Again under the lock: the node may have run between the first look and now.
      const last = await logEnd(nc, opts.names);
      const copy = check(dataDir, readCopy(dataDir), opts.names.stream, last);
      // Its views make their managers without the API check, as logEnd's.
      const js = nc.jetstream({ checkAPI: false, timeout: JETSTREAM_TIMEOUT_MS });
      const bucket = await js.views.os(opts.names.uploads);
      const next = nextThroughLeader(
        await nc.jetstreamManager({ checkAPI: false, timeout: JETSTREAM_TIMEOUT_MS }),
      );
      const fetched = await fetchMissingUploads(dataDir, bucket, next, copy.uploads);
      const emoji = await fetchMissingEmoji(dataDir, bucket, next, copy.emoji, fetched.problems);
      const icons = await fetchMissingRealmIcons(
        dataDir,
        bucket,
        next,
        copy.icons,
        fetched.problems,
      );
      if (fetched.problems.length > 0) {
        throw new DetachRefusedError(
          `${fetched.problems.length} uploaded file(s) the database names could not be got from ` +
            `the bucket ${opts.names.uploads}: ${fetched.problems.slice(0, 10).join('; ')}` +
            `${fetched.problems.length > 10 ? '; …' : ''}. ${dataDir} is still a cluster node's ` +
            `copy (${fetched.files + fetched.thumbnails + emoji.files + icons.files} other files were fetched ` +
            'into it).',
        );
      }
      const keys: string[] = [];
      const kv = await js.views.kv(opts.names.leases, { bindOnly: true });
      const stored = await kv.get(IMAGE_PROXY_KEY_NAME);
      if (stored && stored.operation === 'PUT') {
        if (storeImageProxyKey(dataDir, stored.string().trim())) keys.push('image_proxy_key');
      }
      // Last, and at once: the markers go in one transaction (openDatabase migrates the copy to
      // this build's schema first, as npm start would).
      const db = openDatabase(dataDir);
      try {
        db.transaction(() => {
          if (appliedPosition(db) !== copy.applied || hasUnackedCommits(db))
            throw new Error(`${dataDir}'s database changed during the detach`);
          db.exec('DROP TABLE cluster_state');
        })();
      } finally {
        db.close();
      }
      return {
        data_dir: dataDir,
        applied: copy.applied,
        uploads_fetched: fetched.files,
        thumbnails_fetched: fetched.thumbnails,
        emoji_fetched: emoji.files,
        bytes_fetched: fetched.bytes + emoji.bytes + icons.bytes,
        keys_written: keys,
      };
    } finally {
      lock.release();
    }
  } finally {
    await nc.close();
  }
}
