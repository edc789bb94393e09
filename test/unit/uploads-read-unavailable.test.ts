/**
 * Reads from the replicated uploads bucket while JetStream does not answer (src/cluster/uploads.ts
 * `ReplicatedUploadFiles`), the bucket played by hand: its get and its description reject as
 * nats.js's do with the bucket stream leaderless (an election: JetStream's "temporarily
 * unavailable", code 503) or a request unanswered (TIMEOUT). On the code before, the read's
 * failure was taken as "the bucket lacks it" and an existing upload, thumbnail or emoji image was
 * answered 404, which clients take as final; now 503 with Retry-After. A 404 (null) only when the
 * bucket answers that it holds no such object. A thumbnail the bucket does not take is 503 too
 * (before: nats.js's raw error).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ObjectStore } from 'nats';
import { ReplicatedUploadFiles } from '../../src/cluster/uploads.js';

const fail = (code: string) => () =>
  Promise.reject(Object.assign(new Error(`nats ${code}`), { code }));
const leaderless = fail('503');
const timeout = fail('TIMEOUT');
const unanswered = {
  get: leaderless,
  info: leaderless,
  putBlob: timeout,
} as unknown as ObjectStore;
const absent = {
  get: () => Promise.resolve(null),
  info: () => Promise.resolve(null),
} as unknown as ObjectStore;
const noNext = () => Promise.reject(new Error('not read here'));

function dataDir(t: { teardown: (f: () => void) => void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-read-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const unavailable = {
  message: 'The file could not be fetched; try again',
  httpStatus: 503,
  headers: { 'Retry-After': '1' },
};
const pathId = '2/ab/xyz/notes.txt';

t.test('an upload read while the bucket is leaderless: 503, not 404', async (t) => {
  const files = new ReplicatedUploadFiles(dataDir(t), unanswered, noNext);
  await t.rejects(files.open(pathId), unavailable);
  await t.rejects(files.localFile(pathId), unavailable);
  await t.rejects(files.exists(pathId), unavailable, 'GET /user_uploads/… (temporary URL)');
  const timedOut = { get: timeout, info: timeout } as unknown as ObjectStore;
  await t.rejects(
    new ReplicatedUploadFiles(dataDir(t), timedOut, noNext).open(pathId),
    unavailable,
  );
});

t.test('a thumbnail and an emoji image likewise', async (t) => {
  const files = new ReplicatedUploadFiles(dataDir(t), unanswered, noNext);
  await t.rejects(files.open(pathId, '840x560.webp'), unavailable);
  await t.rejects(files.readEmoji(2, 'party.png'), unavailable);
});

t.test('an object the bucket answers it lacks: null (404)', async (t) => {
  const files = new ReplicatedUploadFiles(dataDir(t), absent, noNext);
  t.equal(await files.open(pathId), null);
  t.equal(await files.open(pathId, '840x560.webp'), null);
  t.equal(await files.localFile(pathId), null);
  t.equal(await files.exists(pathId), false);
  t.equal(await files.readEmoji(2, 'party.png'), null);
});

t.test('an object the bucket marks deleted does not exist (404)', async (t) => {
  // nats.js describes a deleted object (its description kept, its chunks purged) with `deleted`.
  const deleted = {
    info: (name: string) => Promise.resolve({ name, size: 0, chunks: 0, deleted: true }),
    get: () => Promise.resolve(null),
  } as unknown as ObjectStore;
  const files = new ReplicatedUploadFiles(dataDir(t), deleted, noNext);
  t.equal(await files.exists(pathId), false, 'GET /user_uploads/… (temporary URL): 404');
});

t.test('a thumbnail the bucket does not take: 503, not kept here', async (t) => {
  const files = new ReplicatedUploadFiles(dataDir(t), unanswered, noNext);
  await t.rejects(files.placeThumbnail(pathId, '840x560.webp', Buffer.from('webp')), {
    message: 'The file could not be stored; try again',
    httpStatus: 503,
    headers: { 'Retry-After': '1' },
  });
  await t.rejects(
    files.open(pathId, '840x560.webp'),
    unavailable,
    'not kept: read from the bucket',
  );
});
