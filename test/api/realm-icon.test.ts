/**
 * The organization's icon: POST and DELETE /realm/icon, the `realm` update_dict `icon` event,
 * register's realm_icon_url, server_settings' realm_icon, and the uploaded image served at its
 * URL. Reference: zerver/tests/test_upload.py (RealmIconTest), views/realm_icon.py.
 */
import sharp from 'sharp';
import t from 'tap';
import {
  assertError,
  assertSuccess,
  basicAuth,
  rawRequest,
  type ApiResponse,
} from '../helpers/api.js';
import { applyEvents } from '../helpers/apply-events.js';
import { events, register } from '../helpers/events.js';
import { multipartWithFile, tinyPng } from '../helpers/images.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';

type File = { name: string; type: string; data: Buffer };

function call(ts: TestServer, who: string, method: string, files: File[]): Promise<ApiResponse> {
  const u = ts.fx.users[who]!;
  const mp = multipartWithFile(files[0] ?? null, {}, files.slice(1));
  return rawRequest(ts.url, {
    method,
    path: '/api/v1/realm/icon',
    headers: { authorization: basicAuth(u.email, u.api_key), 'content-type': mp.contentType },
    body: method === 'DELETE' ? '' : mp.body,
  });
}

async function bytesAt(ts: TestServer, path: string): Promise<{ status: number; data: Buffer }> {
  const res = await fetch(new URL(path, ts.url));
  return { status: res.status, data: Buffer.from(await res.arrayBuffer()) };
}

/** A 300×200 JPEG, red on the left half and blue on the right. */
async function wideJpeg(): Promise<Buffer> {
  const half = (r: number, b: number) =>
    sharp({ create: { width: 150, height: 200, channels: 3, background: { r, g: 0, b } } })
      .png()
      .toBuffer();
  return sharp({ create: { width: 300, height: 200, channels: 3, background: '#ffffff' } })
    .composite([
      { input: await half(255, 0), left: 0, top: 0 },
      { input: await half(0, 255), left: 150, top: 0 },
    ])
    .jpeg()
    .toBuffer();
}

const ICON_PATH = /^\/user_avatars\/\d+\/realm\/icon-[0-9a-f]{16}\.png$/;

t.test('an administrator uploads and deletes the icon', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const q = await register(t, api, 'othello', { event_types: ['realm'] });
  const before = assertSuccess(t, await api.post('hamlet', 'register', {}));
  t.equal(before.realm_icon_source, 'G');
  t.equal(before.realm_icon_url, '/static/images/default-realm-icon.png');

  const up = assertSuccess(
    t,
    await call(ts, 'iago', 'POST', [
      { name: 'logo.jpg', type: 'image/jpeg', data: await wideJpeg() },
    ]),
  );
  const url = up.icon_url as string;
  t.match(url, ICON_PATH);
  t.ok(url.startsWith(`/user_avatars/${fx.realmId}/realm/`), 'under the realm');

  // Served: a 100×100 PNG, the centre of the image (red and blue halves both there).
  const img = await bytesAt(ts, url);
  t.equal(img.status, 200);
  const meta = await sharp(img.data).metadata();
  t.match(meta, { format: 'png', width: 100, height: 100 });
  const { data: px } = await sharp(img.data)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => [...px.subarray((y * 100 + x) * 3, (y * 100 + x) * 3 + 3)];
  t.ok(at(10, 50)[0]! > 200 && at(10, 50)[2]! < 60, 'left: red');
  t.ok(at(90, 50)[2]! > 200 && at(90, 50)[0]! < 60, 'right: blue');
  const head = await fetch(new URL(url, ts.url));
  t.equal(head.headers.get('content-type'), 'image/png');
  t.equal(
    (await bytesAt(ts, `/user_avatars/${fx.realmId}/realm/icon-0000000000000000.png`)).status,
    404,
  );
  t.equal(
    (await bytesAt(ts, `/user_avatars/${fx.realmId}/realm/..%2F..%2Fconfab.sqlite3`)).status,
    404,
  );

  // Everyone is told, as the reference tells them.
  const evs = await events(t, api, 'othello', q.queue_id, -1, true);
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });
  t.same(
    evs.map((e) => ({ ...e, id: undefined })),
    [
      {
        type: 'realm',
        op: 'update_dict',
        property: 'icon',
        data: { icon_url: url, icon_source: 'U' },
        id: undefined,
      },
    ],
  );

  // A new register and server_settings show it.
  const reg = assertSuccess(t, await api.post('hamlet', 'register', {}));
  t.equal(reg.realm_icon_url, url);
  t.equal(reg.realm_icon_source, 'U');
  t.notOk('realm_icon_file' in reg, 'the file name is not a register field');
  const applied = structuredClone(before);
  applyEvents(applied, evs);
  t.same(
    [applied.realm_icon_url, applied.realm_icon_source],
    [reg.realm_icon_url, reg.realm_icon_source],
    'the event brings an earlier snapshot to the new one',
  );
  const settings = assertSuccess(t, await api.get(null, 'server_settings'));
  t.equal(settings.realm_icon, url);

  // A second upload replaces it: a new URL, the old file gone.
  const again = assertSuccess(
    t,
    await call(ts, 'desdemona', 'POST', [{ name: 'i.png', type: 'image/png', data: tinyPng() }]),
  );
  const url2 = again.icon_url as string;
  t.match(url2, ICON_PATH);
  t.not(url2, url);
  t.equal((await bytesAt(ts, url2)).status, 200);
  t.equal((await bytesAt(ts, url)).status, 404, 'the replaced icon is removed');

  // Deleted: back to the default.
  const del = assertSuccess(t, await call(ts, 'iago', 'DELETE', []));
  t.equal(del.icon_url, '/static/images/default-realm-icon.png');
  const after = await events(t, api, 'othello', q.queue_id, evs.at(-1)!.id, true);
  t.match(
    after.map((e) => [e.type, e.op, e.property, e.data]),
    [
      ['realm', 'update_dict', 'icon', { icon_url: url2, icon_source: 'U' }],
      [
        'realm',
        'update_dict',
        'icon',
        { icon_url: '/static/images/default-realm-icon.png', icon_source: 'G' },
      ],
    ],
  );
  const reg2 = assertSuccess(t, await api.post('hamlet', 'register', {}));
  t.equal(reg2.realm_icon_url, '/static/images/default-realm-icon.png');
  t.equal(reg2.realm_icon_source, 'G');
  t.equal(
    assertSuccess(t, await api.get(null, 'server_settings')).realm_icon,
    '/static/images/default-realm-icon.png',
  );
  t.equal((await bytesAt(ts, url2)).status, 404, 'the deleted icon is removed');

  // Deleted again, the default already: still answered and announced, as the reference's
  // do_change_icon_source does on every call.
  const del2 = assertSuccess(t, await call(ts, 'desdemona', 'DELETE', []));
  t.equal(del2.icon_url, '/static/images/default-realm-icon.png');
  const again2 = await events(t, api, 'othello', q.queue_id, after.at(-1)!.id, true);
  t.same(
    again2.map((e) => [e.type, e.op, e.property, e.data]),
    [
      [
        'realm',
        'update_dict',
        'icon',
        { icon_url: '/static/images/default-realm-icon.png', icon_source: 'G' },
      ],
    ],
    'the default icon announced again',
  );
});

t.test('refusals', async (t) => {
  const ts = await startServer(t);
  const png = (): File => ({ name: 'i.png', type: 'image/png', data: tinyPng() });
  for (const who of ['hamlet', 'shiva', 'polonius']) {
    assertError(t, await call(ts, who, 'POST', [png()]), 'Must be an organization administrator', {
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
    assertError(t, await call(ts, who, 'DELETE', []), 'Must be an organization administrator', {
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
  }
  assertError(t, await call(ts, 'iago', 'POST', []), 'You must upload exactly one icon.');
  assertError(
    t,
    await call(ts, 'iago', 'POST', [png(), png()]),
    'You must upload exactly one icon.',
  );
  assertError(
    t,
    await call(ts, 'iago', 'POST', [
      { name: 'a.png', type: 'image/png', data: Buffer.from('not an image') },
    ]),
    'Invalid image format',
    { code: 'BAD_IMAGE' },
  );
  // The bytes of a PNG's signature, then nothing a decoder can read.
  const broken = Buffer.concat([tinyPng().subarray(0, 40), Buffer.alloc(64, 7)]);
  assertError(
    t,
    await call(ts, 'iago', 'POST', [{ name: 'b.png', type: 'image/png', data: broken }]),
    'Could not decode image; did you upload an image file?',
    { code: 'BAD_IMAGE' },
  );
  const big = Buffer.concat([tinyPng(), Buffer.alloc(5 * 1024 * 1024)]);
  assertError(
    t,
    await call(ts, 'iago', 'POST', [{ name: 'b.png', type: 'image/png', data: big }]),
    'Uploaded file is larger than the allowed limit of 5 MiB',
  );
  // Nothing changed.
  const reg = assertSuccess(t, await ts.api.post('hamlet', 'register', {}));
  t.equal(reg.realm_icon_source, 'G');
  t.equal(reg.realm_icon_url, '/static/images/default-realm-icon.png');
});
