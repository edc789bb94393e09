/**
 * A node fetching an object from a replicated bucket whose chunks come from a replica behind the
 * others (src/cluster/objects.ts), with the bucket and its stream's leader played by hand.
 * nats.js reads the chunks through an ephemeral ordered consumer on any of the stream's servers;
 * on one that has not stored them all, the consumer counts nothing pending at the last chunk that
 * server has, and nats.js ends the read there with "received a corrupt object, digests do not
 * match" at once, which asking again beside it (`reasked`, for a frozen server) never saw: on the
 * code before, such a read answered the upload 404, and a detach or a snapshot restore failed.
 * Now a read that fails, comes back short, or stops is read again through the stream's leader
 * (STREAM.MSG.GET by sequence), checked against the description's size and digest, a bounded
 * number of times.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ObjectStore } from 'nats';
import { LEADER_READS, type NextMessage } from '../../src/cluster/objects.js';
import { fetchMissingUploads, ReplicatedUploadFiles } from '../../src/cluster/uploads.js';
import { UploadFiles } from '../../src/storage/upload-files.js';

const pathId = '2/ab/xyz/notes.txt';
const bucketName = 'confab_uploads';
const parts = ['the bucket ', 'holds ', 'this whole'].map((p) => new TextEncoder().encode(p));
const content = Buffer.concat(parts);
/** As nats.js writes it: base64url with its padding. */
const digest = `SHA-256=${crypto.createHash('sha256').update(content).digest('base64url')}=`;

function description(nuid: string) {
  return {
    name: pathId,
    bucket: bucketName,
    nuid,
    size: content.length,
    chunks: parts.length,
    digest,
    deleted: false,
    mtime: new Date().toISOString(),
    revision: 9,
  };
}

/** What nats.js's get gives when the consumer's server holds only the first `held` chunks. */
function behind(held: number) {
  return {
    info: description('N1'),
    data: new ReadableStream<Uint8Array>({
      start(c) {
        for (const p of parts.slice(0, held)) c.enqueue(p);
        c.error(new Error('received a corrupt object, digests do not match'));
      },
    }),
    // nats.js resolves it even so: the stream carries the error.
    error: Promise.resolve(null),
  };
}

/** A consumer that delivers the first chunk and then nothing (its server stopped taking them). */
function stopped() {
  return {
    info: description('N1'),
    data: new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(parts[0]!);
      },
    }),
    error: new Promise(() => undefined),
  };
}

/** A consumer whose stream ends early without an error. */
function short() {
  return {
    info: description('N1'),
    data: new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(parts[0]!);
        c.close();
      },
    }),
    error: Promise.resolve(null),
  };
}

/**
 * The stream as its leader holds it: the chunks of `nuid` at sequences 3, 5, 6, other objects'
 * between. `describe` gives the description each read of it finds (its nuid).
 */
function leader(describe: () => string | null) {
  const asked: string[] = [];
  const stored = new Map<number, { subject: string; data: Uint8Array }>();
  const put = (nuid: string, seqs: number[]) =>
    seqs.forEach((seq, i) =>
      stored.set(seq, { subject: `$O.${bucketName}.C.${nuid}`, data: parts[i]! }),
    );
  stored.set(4, { subject: `$O.${bucketName}.C.OTHER`, data: new Uint8Array([1, 2, 3]) });
  const next: NextMessage = (stream, subject, seq) => {
    asked.push(`${stream} ${subject} ${seq}`);
    const found = [...stored.entries()]
      .filter(([s, m]) => s >= seq && m.subject === subject)
      .sort((a, b) => a[0] - b[0])[0];
    return Promise.resolve(found ? { seq: found[0], data: found[1].data } : null);
  };
  const info = () => {
    const nuid = describe();
    return Promise.resolve(nuid === null ? null : description(nuid));
  };
  return { next, info, put, asked };
}

function bucket(get: () => unknown, info: () => Promise<unknown>): ObjectStore {
  return {
    get: () => Promise.resolve(get()),
    info,
  } as unknown as ObjectStore;
}

function dataDir(t: { teardown: (f: () => void) => void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-leader-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function content0f(files: ReplicatedUploadFiles, format?: string): Promise<string | null> {
  const opened = await files.open(pathId, format);
  if (!opened) return null;
  const buf = Buffer.alloc(opened.size);
  await opened.file.read(buf, 0, opened.size, 0);
  await opened.file.close();
  return buf.toString();
}

t.test(
  'a consumer on a replica behind: its digest error read again through the leader',
  async (t) => {
    const l = leader(() => 'N1');
    l.put('N1', [3, 5, 6]);
    const files = new ReplicatedUploadFiles(
      dataDir(t),
      bucket(() => behind(1), l.info),
      l.next,
    );
    t.equal(await content0f(files), 'the bucket holds this whole', 'served whole (not 404)');
    t.same(
      l.asked,
      [1, 4, 6].map((s) => `OBJ_${bucketName} $O.${bucketName}.C.N1 ${s}`),
      'each chunk asked of the stream leader by sequence, on its subject',
    );
    t.equal(await content0f(files), 'the bucket holds this whole', 'kept: served again');
    t.equal(l.asked.length, 3, 'from the node’s copy');
  },
);

t.test('a thumbnail read so, too', async (t) => {
  const l = leader(() => 'N1');
  l.put('N1', [3, 5, 6]);
  const files = new ReplicatedUploadFiles(
    dataDir(t),
    bucket(() => behind(2), l.info),
    l.next,
  );
  t.equal(await content0f(files, '840x560.webp'), 'the bucket holds this whole');
});

t.test('a consumer that ends short without an error: read through the leader', async (t) => {
  const l = leader(() => 'N1');
  l.put('N1', [3, 5, 6]);
  const files = new ReplicatedUploadFiles(dataDir(t), bucket(short, l.info), l.next);
  t.equal(await content0f(files), 'the bucket holds this whole');
});

t.test('a consumer that stops delivering: read through the leader after 2 s', async (t) => {
  const l = leader(() => 'N1');
  l.put('N1', [3, 5, 6]);
  const files = new ReplicatedUploadFiles(dataDir(t), bucket(stopped, l.info), l.next);
  t.equal(await content0f(files), 'the bucket holds this whole');
});

t.test('replaced meanwhile: read again from its new description', async (t) => {
  const nuids = ['N1', 'N2'];
  const l = leader(() => nuids.shift() ?? 'N2');
  // N1's chunks were purged when N2 replaced it.
  l.put('N2', [7, 8, 9]);
  const files = new ReplicatedUploadFiles(
    dataDir(t),
    bucket(() => behind(1), l.info),
    l.next,
  );
  t.equal(await content0f(files), 'the bucket holds this whole');
});

const unavailable = {
  message: 'The file could not be fetched; try again',
  httpStatus: 503,
  headers: { 'Retry-After': '1' },
};

t.test('a leader whose chunks never match: bounded, then not served', async (t) => {
  const l = leader(() => 'N1');
  l.put('N1', [3, 5]);
  const dir = dataDir(t);
  const files = new ReplicatedUploadFiles(
    dir,
    bucket(() => behind(1), l.info),
    l.next,
  );
  // The bucket holds it: 503 to be asked again (a 404 is final to clients), no partial file.
  await t.rejects(content0f(files), unavailable, 'not served: 503');
  t.equal(await new UploadFiles(dir).localFile(pathId), null, 'no partial file');
  t.equal(l.asked.length, LEADER_READS * 3, `${LEADER_READS} reads through the leader, no more`);
});

t.test('a wrong digest from the leader is not served', async (t) => {
  const l = leader(() => 'N1');
  l.put('N1', [3, 5, 6]);
  const bad = () => Promise.resolve({ ...description('N1'), digest: `SHA-256=${'A'.repeat(43)}=` });
  const files = new ReplicatedUploadFiles(
    dataDir(t),
    bucket(() => behind(1), bad),
    l.next,
  );
  await t.rejects(content0f(files), unavailable);
});

t.test('deleted meanwhile: not found', async (t) => {
  const l = leader(() => null);
  const files = new ReplicatedUploadFiles(
    dataDir(t),
    bucket(() => behind(1), l.info),
    l.next,
  );
  t.equal(await content0f(files), null);
  t.equal(l.asked.length, 0);
});

t.test('a detach fetching the upload likewise', async (t) => {
  const dir = dataDir(t);
  const l = leader(() => 'N1');
  l.put('N1', [3, 5, 6]);
  const fetched = await fetchMissingUploads(
    dir,
    bucket(() => behind(1), l.info),
    l.next,
    [{ pathId, size: content.length, thumbnails: [] }],
  );
  t.same(fetched.problems, []);
  t.equal(fetched.files, 1);
  t.equal(fetched.bytes, content.length);
});

t.test('a detach whose question for the description goes unanswered: asked again', async (t) => {
  const dir = dataDir(t);
  const l = leader(() => 'N1');
  l.put('N1', [3, 5, 6]);
  let infos = 0;
  // The first question is held by a frozen server until the client's timeout.
  const info = () =>
    ++infos === 1
      ? new Promise((_, reject) =>
          setTimeout(() => reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' })), 3000),
        )
      : l.info();
  const fetched = await fetchMissingUploads(
    dir,
    bucket(() => behind(3), info),
    l.next,
    [{ pathId, size: content.length, thumbnails: [] }],
  );
  t.same(fetched.problems, []);
  t.equal(fetched.files, 1);
});
