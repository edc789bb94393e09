/**
 * An upload or a custom emoji image the replicated bucket does not take (src/cluster/uploads.ts
 * `ReplicatedUploadFiles`), the bucket played by hand: its put fails as nats.js's does when NATS
 * does not answer in time (a frozen stream leader, an election). On the code before, the put's
 * error went up as it was and the request was answered 500; now it is 503 with Retry-After (the
 * client sends the file again), and the file is not kept on this node.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ObjectStore } from 'nats';
import { ReplicatedUploadFiles } from '../../src/cluster/uploads.js';

const timeout = () => Promise.reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' }));
const bucket = { put: timeout, putBlob: timeout } as unknown as ObjectStore;
const noLeader = () => Promise.reject(new Error('not read here'));

function dataDir(t: { teardown: (f: () => void) => void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-put-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('an upload the bucket does not take: 503, not kept here', async (t) => {
  const dir = dataDir(t);
  const tmp = path.join(dir, 'upload.tmp');
  fs.writeFileSync(tmp, 'some bytes');
  const files = new ReplicatedUploadFiles(dir, bucket, noLeader);
  await t.rejects(files.place(tmp, '2/ab/xyz/notes.txt'), {
    message: 'The file could not be stored; try again',
    httpStatus: 503,
    headers: { 'Retry-After': '1' },
  });
  t.equal(await files.localFile('2/ab/xyz/notes.txt').catch(() => null), null, 'not kept');
});

t.test('an emoji image likewise', async (t) => {
  const dir = dataDir(t);
  const tmp = path.join(dir, 'emoji.tmp');
  fs.writeFileSync(tmp, 'png bytes');
  const files = new ReplicatedUploadFiles(dir, bucket, noLeader);
  await t.rejects(files.placeEmoji(tmp, 2, 'party.png'), {
    message: 'The file could not be stored; try again',
    httpStatus: 503,
  });
});
