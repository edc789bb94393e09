/**
 * Trimming the log (docs/cluster.md "Catch-up"): without it the stream would keep every entry
 * ever appended. Each node reports the position it has applied in the lease bucket every few
 * seconds (`reportPosition`). A node that has just uploaded a snapshot at position P removes the
 * entries no one needs any more (`trimLog`): those at or below P that every node heard from within
 * the grace period has applied. A node that was away longer (or whose copy is older than the
 * trimmed position for any reason) no longer finds in the stream what comes after its copy: it
 * notices the gap, discards its copy and starts from the newest snapshot (`copyIsTrimmedPast`,
 * used by src/cluster/main.ts).
 *
 * Each realm's newest entry is kept, whatever its age: the owner's next append names it
 * (JetStream's expected last subject sequence), and a realm's subject with no entry left would
 * refuse that append. Position marks (jetstream.ts POSITION_SUBJECT) are not: no append names
 * them, and since 2026-12-06 every node appends one at its first read.
 */
import type { JetStreamManager, KV } from 'nats';
import { bucketKeys, POSITION_SUBJECT, raiseNumber, type ClusterNames } from './jetstream.js';

/** The lease bucket's key holding the position at or below which entries may be gone. */
export const TRIMMED_KEY = 'log-trimmed';

/** How often a node reports its applied position. */
export const POSITION_REPORT_MS = 5000;

/** By default, a node not heard from for this long is not waited for (it will restore). */
export const DEFAULT_TRIM_GRACE_MS = 5 * 60_000;

const POSITION_PREFIX = 'applied-';

/** Records `node`'s applied position (the bucket's server time says when). */
export async function reportPosition(kv: KV, node: string, applied: number): Promise<void> {
  await kv.put(`${POSITION_PREFIX}${node}`, String(applied));
}

/** The position at or below which the log may have lost entries (0: never trimmed). */
export async function trimmedPosition(kv: KV): Promise<number> {
  const e = await kv.get(TRIMMED_KEY);
  return e && e.operation === 'PUT' ? Number(e.string()) || 0 : 0;
}

/**
 * Removes the entries at or below min(`snapshotSeq`, every recently heard node's position), but
 * never a realm's newest; records the new trimmed position first. Returns it, or null when there
 * was nothing to remove. `snapshotSeq` must be the position of a snapshot this node has just
 * put in the bucket (snapshot.ts uploadSnapshot): the bucket's snapshot never moves backwards, so
 * the log is never trimmed past it.
 */
export async function trimLog(
  jsm: JetStreamManager,
  kv: KV,
  names: ClusterNames,
  snapshotSeq: number,
  graceMs: number,
): Promise<number | null> {
  let upTo = snapshotSeq;
  const now = Date.now();
  // Every key, filtered here: a NATS wildcard is a whole token (`applied-*` matches no key).
  // Bounded (bucketKeys): a list that goes unanswered fails this trim, and the snapshot says so.
  for (const key of await bucketKeys(jsm, names.leases)) {
    if (!key.startsWith(POSITION_PREFIX)) continue;
    const e = await kv.get(key);
    if (!e || e.operation !== 'PUT' || now - e.created.getTime() > graceMs) continue;
    const seq = Number(e.string());
    if (Number.isFinite(seq)) upTo = Math.min(upTo, seq);
  }
  // First the position, then the removal: a node that checks the position before starting never
  // misses the entries it needs without knowing. A compare-and-set: two nodes trimming at once
  // never leave it below what the further of them removes.
  if (upTo <= 0 || !(await raiseNumber(kv, TRIMMED_KEY, upTo)).raised) return null;
  const info = await jsm.streams.info(names.stream, { subjects_filter: `${names.log}.>` });
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    // Position marks name nothing an append expects: none of them is kept.
    const marks = subject === `${names.log}.${POSITION_SUBJECT}`;
    const newest = marks
      ? null
      : await jsm.streams.getMessage(names.stream, { last_by_subj: subject });
    // Purging "up to seq" keeps seq itself: the realm's newest entry at the least.
    await jsm.streams.purge(names.stream, {
      filter: subject,
      seq: newest === null ? upTo + 1 : Math.min(upTo + 1, newest.seq),
    });
  }
  return upTo;
}
