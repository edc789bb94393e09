/**
 * A thumbnail made on a read (src/media/thumbnailer.ts `ensure`, as GET /user_uploads/thumbnail/…
 * does for one not made yet) whose put into the cluster's uploads bucket is not taken in time
 * (src/cluster/uploads.ts `placeThumbnail`; nats.js's TIMEOUT played by hand). On the code before,
 * the put's raw error was logged by the thumbnailer and ensure() resolved, the thumbnail still
 * missing: the read answered 404, which clients take as final. Now ensure() throws the 503 with
 * Retry-After that the read answers, and the next read makes the thumbnail again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import type { ObjectStore } from 'nats';
import type { RealmRegistry } from '../../actors/registry.js';
import { ReplicatedUploadFiles } from '../../src/cluster/uploads.js';
import { Thumbnailer } from '../../src/media/thumbnailer.js';
import type { Store } from '../../src/storage/store.js';

t.test('a thumbnail put not taken: ensure() answers 503; the next one makes it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'thumb-put-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pathId = '2/ab/xyz/photo.png';
  let taking = false;
  const put: string[] = [];
  const bucket = {
    putBlob: ({ name }: { name: string }) => {
      if (!taking) return Promise.reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' }));
      put.push(name);
      return Promise.resolve({});
    },
  } as unknown as ObjectStore;
  const files = new ReplicatedUploadFiles(dir, bucket, () => Promise.reject(new Error('unused')));
  const original = files.filePath(pathId)!;
  fs.mkdirSync(path.dirname(original), { recursive: true });
  await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3a6' } })
    .png()
    .toFile(original);
  const row = {
    id: 7,
    realm_id: 2,
    path_id: pathId,
    original_width_px: 64,
    original_height_px: 48,
    frames: 1,
    content_type: 'image/png',
    thumbnail_metadata: '[]',
  };
  const asked: string[] = [];
  const store = {
    imageAttachments: { pending: () => [], byId: (id: number) => (id === row.id ? row : null) },
  } as unknown as Store;
  const realms = {
    get: () => ({
      ask: (kind: string) => {
        asked.push(kind);
        return Promise.resolve(null);
      },
    }),
  } as unknown as RealmRegistry;
  const thumbnailer = new Thumbnailer(store, realms, files);
  t.teardown(() => thumbnailer.close());

  await t.rejects(thumbnailer.ensure(row.id), {
    message: 'The file could not be stored; try again',
    httpStatus: 503,
    headers: { 'Retry-After': '1' },
  });
  t.same(asked, [], 'nothing recorded as made');

  taking = true;
  await thumbnailer.ensure(row.id);
  t.same(asked, ['thumbnail.done'], 'made on the next read');
  t.ok(
    put.length > 0 && put.every((n) => n.startsWith(`thumbnail/${pathId}/`)),
    'put into the bucket',
  );
});
