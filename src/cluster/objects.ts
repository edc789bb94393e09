/**
 * Reading an object whole from a JetStream object store bucket (uploads, snapshots), checked, and
 * asked again rather than failed by one server that is frozen or behind (docs/cluster.md
 * "Uploads").
 *
 * nats.js (2.29) reads an object's description from the bucket stream's leader (STREAM.MSG.GET)
 * and its chunks through a new ephemeral ordered consumer, which JetStream places on any of the
 * stream's servers. A frozen one never answers its creation (`reasked`: asked again beside it
 * after a second). A replica that is behind answers at once, from what it holds: the consumer
 * counts no chunk pending at the last one that replica has, and nats.js ends the read there with
 * its digest error ("received a corrupt object"); or the chunks come late, or stop. Asking the
 * same way again may land on the same replica. So a read that fails so, or stops for
 * OBJECT_STALL_MS, is read again through the stream's leader: the description, then each chunk
 * by sequence (STREAM.MSG.GET with `next_by_subj`), which the leader answers from what its raft
 * group committed, and whose size and SHA-256 are checked here. A read through the leader that
 * still does not match (the object replaced meanwhile, its old chunks purged) reads the
 * description again, at most LEADER_READS times.
 */
import crypto from 'node:crypto';
import type { JetStreamManager, MsgRequest, ObjectInfo, ObjectStore } from 'nats';
import { isNoAnswer, reasked } from './jetstream.js';
import { trace } from './trace.js';

/**
 * How long a read of the bucket goes unanswered before it is asked again beside the first.
 * nats.js's consumer on a frozen server is never answered, and the read failed only at the
 * client's timeout (15 s), where a node read an upload the bucket held as missing (404). Seen
 * with one server of three frozen: 4 of 12 gets (2026-12-04). An answer comes in milliseconds
 * otherwise.
 */
export const OBJECT_REASK_MS = 1000;
export const OBJECT_ASKS = 5;
/** A read through a consumer that delivers no chunk for this long is read through the leader. */
export const OBJECT_STALL_MS = 2000;
/** Reads through the leader of one object, each from its description. */
export const LEADER_READS = 3;

/**
 * The first message at or after `seq` on `subject` of the stream `stream`, asked of the stream's
 * leader (STREAM.MSG.GET); null when there is none.
 */
export type NextMessage = (
  stream: string,
  subject: string,
  seq: number,
) => Promise<{ seq: number; data: Uint8Array } | null>;

/** NextMessage through a JetStream manager (`next_by_subj`: nats-server 2.9 and later). */
export function nextThroughLeader(jsm: JetStreamManager): NextMessage {
  return async (stream, subject, seq) => {
    try {
      const query = { seq, next_by_subj: subject } as unknown as MsgRequest;
      const m = await jsm.streams.getMessage(stream, query);
      return { seq: m.seq, data: m.data };
    } catch (err) {
      if ((err as { code?: unknown }).code === '404') return null;
      throw err;
    }
  };
}

/** An object read whole: its description and what `take` made of its chunks. */
export type ObjectRead<T> = { info: ObjectInfo; value: T };

/**
 * Reads the object `name` whole: `take` is given its chunks (it is called again for each
 * attempt, and must start afresh: a file truncated, a buffer new). Null when the bucket does not
 * hold it; throws when it could not be read (a bucket unreachable, or every attempt failed).
 */
export async function readObject<T>(
  bucket: ObjectStore,
  next: NextMessage,
  name: string,
  take: (chunks: AsyncIterable<Uint8Array>) => Promise<T>,
): Promise<ObjectRead<T> | null> {
  let first: unknown;
  try {
    const r = await getObject(bucket, name);
    if (!r) return null;
    const stream = r.data;
    let bytes = 0;
    const value = await take(
      (async function* () {
        for await (const chunk of stalled(stream, OBJECT_STALL_MS)) {
          bytes += chunk.length;
          yield chunk;
        }
      })(),
    );
    const err = await r.error;
    if (err) throw err;
    if (bytes !== r.info.size) throw new Error(`${bytes} bytes read of ${r.info.size}`);
    return { info: r.info, value };
  } catch (err) {
    // nats.js's own answers that the object is not there come before any chunk.
    first = err;
    trace(`object ${name}: ${String(err)}; reading it through the stream leader`);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await readThroughLeader(bucket, next, name, take);
    } catch (err) {
      if (attempt >= LEADER_READS || isNoAnswer(err)) {
        throw new Error(`${name}: could not be read (${String(first)}; then ${String(err)})`, {
          cause: err,
        });
      }
      trace(`object ${name} through the stream leader: ${String(err)}; reading it again`);
    }
  }
}

/**
 * An object's description (`bucket.info`: STREAM.MSG.GET, answered by the stream's leader), asked
 * again beside the first while unanswered; null when the bucket does not hold it.
 */
export function objectInfo(bucket: ObjectStore, name: string): Promise<ObjectInfo | null> {
  return reasked(() => bucket.info(name), OBJECT_REASK_MS, OBJECT_ASKS);
}

/** readObject into memory. */
export async function readBlob(
  bucket: ObjectStore,
  next: NextMessage,
  name: string,
): Promise<Uint8Array | null> {
  const got = await readObject(bucket, next, name, async (chunks) => {
    const parts: Uint8Array[] = [];
    for await (const c of chunks) parts.push(c);
    return Buffer.concat(parts);
  });
  return got && got.value;
}

/**
 * `bucket.get(name)`, asked again each OBJECT_REASK_MS while unanswered; the first answer decides,
 * and a later one's stream is cancelled (its consumer closed).
 */
function getObject(bucket: ObjectStore, name: string) {
  let taken = false;
  return reasked(
    () =>
      bucket.get(name).then((r) => {
        if (taken) void r?.data.cancel().catch(() => undefined);
        taken = true;
        return r;
      }),
    OBJECT_REASK_MS,
    OBJECT_ASKS,
  );
}

/** A stream's chunks, failing when none comes for `ms` (the stream cancelled). */
async function* stalled(
  stream: ReadableStream<Uint8Array>,
  ms: number,
): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const stop = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no chunk for ${ms} ms`)), ms);
      });
      try {
        const { done, value } = await Promise.race([reader.read(), stop]);
        if (done) return;
        yield value;
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}

/** One read of the object through its stream's leader, checked against its description. */
async function readThroughLeader<T>(
  bucket: ObjectStore,
  next: NextMessage,
  name: string,
  take: (chunks: AsyncIterable<Uint8Array>) => Promise<T>,
): Promise<ObjectRead<T> | null> {
  const info = await objectInfo(bucket, name);
  if (info === null || info.deleted) return null;
  if (info.options?.link) throw new Error('a link (not used here)');
  const expected = parseDigest(info.digest);
  const stream = `OBJ_${info.bucket}`;
  const subject = `$O.${info.bucket}.C.${info.nuid}`;
  const sha = crypto.createHash('sha256');
  let bytes = 0;
  let seq = 1;
  const value = await take(
    (async function* () {
      while (bytes < info.size) {
        const from = seq;
        const m = await reasked(() => next(stream, subject, from), OBJECT_REASK_MS, OBJECT_ASKS);
        if (m === null) break;
        seq = m.seq + 1;
        if (m.data.length === 0) continue;
        sha.update(m.data);
        bytes += m.data.length;
        yield m.data;
      }
    })(),
  );
  if (bytes !== info.size) throw new Error(`${bytes} bytes read of ${info.size}`);
  if (!sha.digest().equals(expected)) throw new Error('its digest does not match');
  return { info, value };
}

/** An object description's digest (`SHA-256=` and base64, URL-safe or not; or hex). */
function parseDigest(digest: string): Buffer {
  const prefix = 'SHA-256=';
  if (!digest.startsWith(prefix)) throw new Error(`unknown digest ${digest}`);
  const s = digest.slice(prefix.length);
  if (/^[0-9a-f]{64}$/i.test(s)) return Buffer.from(s, 'hex');
  return Buffer.from(s.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, ''), 'base64url');
}
