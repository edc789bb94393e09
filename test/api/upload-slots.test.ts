/**
 * What a request with files may hold (src/http/upload-slots.ts, src/http/router.ts): a request
 * to a route that takes files is authenticated before any of its body is read, so a client
 * without valid credentials gets its 401 at once and nothing of its file reaches the disk; a user
 * has at most MAX_UPLOADS_IN_PROGRESS_PER_USER such requests in progress, the next refused 429
 * before its body is read; a slot is given back however its request ends.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MAX_UPLOADS_IN_PROGRESS_PER_USER, uploadSlotsHeld } from '../../src/http/upload-slots.js';
import { assertSuccess, basicAuth } from '../helpers/api.js';
import { until } from '../helpers/events.js';
import { exchange, head } from '../helpers/raw-http.js';
import { startServer } from '../helpers/server.js';
import { streamingUpload, upload } from '../helpers/uploads.js';
import net from 'node:net';

function tmpFiles(dataDir: string): string[] {
  try {
    return fs.readdirSync(path.join(dataDir, 'tmp'));
  } catch {
    return [];
  }
}

t.test('an upload without valid credentials is refused before its body is read', async (t) => {
  const { api, dataDir } = await startServer(t);
  const size = 20 * 1024 * 1024;
  for (const who of [null, { ...api.fx.users.hamlet!, api_key: 'not-the-key' }]) {
    const r = await streamingUpload(api, who, size, { declareLength: true });
    t.equal(r.response.status, 401, `${who === null ? 'no' : 'wrong'} credentials: 401`);
    t.equal(r.response.body.code, 'UNAUTHORIZED');
    t.ok(r.bytesWritten < r.totalBytes / 2, `answered early (${r.bytesWritten} bytes sent)`);
    t.same(tmpFiles(dataDir), [], 'nothing of the file reached the disk');
  }
  assertSuccess(t, await upload(api, 'hamlet', [{ filename: 'a.txt', data: 'hello' }]));
});

t.test('a user has a bounded number of uploads in progress', async (t) => {
  const { url, api, server, fx, dataDir } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const auth = basicAuth(hamlet.email, hamlet.api_key);
  const boundary = 'slotsboundary';
  const partHead =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  const requestHead = head('POST', '/api/v1/user_uploads', {
    Authorization: auth,
    'Content-Type': `multipart/form-data; boundary=${boundary}`,
    'Content-Length': String(1024 * 1024),
  });
  // Uploads that have begun and go no further: each holds a slot.
  const { hostname, port } = new URL(url);
  const slow: net.Socket[] = [];
  for (let i = 0; i < MAX_UPLOADS_IN_PROGRESS_PER_USER; i++) {
    const s = net.connect(Number(port), hostname);
    s.on('error', () => undefined);
    s.write(requestHead + partHead + 'the first bytes');
    slow.push(s);
  }
  const server0 = server.context;
  await until(
    () => uploadSlotsHeld(server0, hamlet.id) === MAX_UPLOADS_IN_PROGRESS_PER_USER,
    'every slot is taken',
  );
  const refused = await upload(api, 'hamlet', [{ filename: 'b.txt', data: 'one too many' }]);
  t.equal(refused.status, 429, `upload ${MAX_UPLOADS_IN_PROGRESS_PER_USER + 1}: 429`);
  t.equal(refused.body.code, 'RATE_LIMIT_HIT');
  t.equal(refused.headers['retry-after'], '1', 'with Retry-After');
  assertSuccess(t, await upload(api, 'othello', [{ filename: 'c.txt', data: 'another user' }]));
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'other requests of the user are served');

  // A client that goes away gives its slot back.
  slow.pop()!.resetAndDestroy();
  await until(
    () => uploadSlotsHeld(server0, hamlet.id) === MAX_UPLOADS_IN_PROGRESS_PER_USER - 1,
    'the slot is given back',
  );
  assertSuccess(t, await upload(api, 'hamlet', [{ filename: 'd.txt', data: 'now it fits' }]));
  // So does an upload answered with an error (a cut body): declared at 40 bytes of a file part.
  const cut = await exchange(
    url,
    head('POST', '/api/v1/user_uploads', {
      Authorization: auth,
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      'Content-Length': String(partHead.length + 10),
    }),
    Buffer.from(partHead + 'ten bytes!'),
    'complete',
  );
  t.equal(cut.answer?.status, 400, 'a cut upload: 400');
  t.equal(uploadSlotsHeld(server0, hamlet.id), MAX_UPLOADS_IN_PROGRESS_PER_USER - 1);
  for (const s of slow) s.destroy();
  await until(() => uploadSlotsHeld(server0, hamlet.id) === 0, 'every slot is given back');
  await until(() => tmpFiles(dataDir).length === 0, 'no received part is left');
  t.equal(server.inflight, 0, 'nothing in flight');
});
