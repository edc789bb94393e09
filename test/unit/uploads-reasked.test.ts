/**
 * A node fetching an upload it lacks from the replicated bucket (src/cluster/uploads.ts
 * `ReplicatedUploadFiles`), with the bucket played by hand. nats.js reads an object's chunks
 * through a new ephemeral consumer, which JetStream's meta leader places on any of the stream's
 * servers (20 made on a 3-server cluster, 2026-12-04: 7, 8 and 5 on each); with one of them
 * frozen, 4 of 12 gets of an object the bucket held failed with TIMEOUT after the client's
 * timeout (15 s for a node). On the code before, such a get made the upload answer 404 after that
 * wait; now a get unanswered for a second is asked again beside the first, and the first answer
 * decides.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ObjectStore } from 'nats';
import { ReplicatedUploadFiles } from '../../src/cluster/uploads.js';

const pathId = '2/ab/xyz/notes.txt';
const content = new TextEncoder().encode('the bucket holds this');

function result() {
  return {
    info: { size: content.length, name: pathId },
    data: new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(content);
        c.close();
      },
    }),
    error: Promise.resolve(null),
  };
}

/** A bucket whose first `lost` gets and blob gets time out after `failAfterMs` (a frozen server). */
function bucket(lost: number, failAfterMs: number) {
  let gets = 0;
  const timeout = () =>
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' })),
        failAfterMs,
      ),
    );
  const b = {
    get: () => (++gets <= lost ? timeout() : Promise.resolve(result())),
    getBlob: () => (++gets <= lost ? timeout() : Promise.resolve(content)),
  };
  return { b: b as unknown as ObjectStore, gets: () => gets };
}

/** These reads are answered whole: none is read again through the stream's leader. */
const noLeader = () => Promise.reject(new Error('not asked of the leader here'));

function dataDir(t: { teardown: (f: () => void) => void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-reasked-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('an upload whose first get goes unanswered: asked again, served', async (t) => {
  const { b, gets } = bucket(1, 4000);
  const files = new ReplicatedUploadFiles(dataDir(t), b, noLeader);
  const opened = await files.open(pathId);
  t.ok(opened, 'found (not 404)');
  if (opened) {
    const buf = Buffer.alloc(opened.size);
    await opened.file.read(buf, 0, opened.size, 0);
    await opened.file.close();
    t.equal(buf.toString(), 'the bucket holds this', 'its content');
  }
  t.equal(gets(), 2, 'asked twice');
});

t.test('a thumbnail and an emoji image likewise', async (t) => {
  const dir = dataDir(t);
  const thumb = bucket(1, 4000);
  const opened = await new ReplicatedUploadFiles(dir, thumb.b, noLeader).open(
    pathId,
    '840x560.webp',
  );
  t.ok(opened, 'the thumbnail found');
  await opened?.file.close();
  const emoji = bucket(1, 4000);
  const data = await new ReplicatedUploadFiles(dir, emoji.b, noLeader).readEmoji(2, 'party.png');
  t.equal(data?.toString(), 'the bucket holds this', 'the emoji image found');
});

t.test('a bucket that lacks it: still not found', async (t) => {
  const b = {
    get: () => Promise.resolve(null),
    getBlob: () => Promise.resolve(null),
  } as unknown as ObjectStore;
  const files = new ReplicatedUploadFiles(dataDir(t), b, noLeader);
  t.equal(await files.open(pathId), null);
});
