/**
 * Uploads: POST /user_uploads (refusals, the size limit, file names), serving
 * /user_uploads/<path_id> to each kind of reader, path traversal and guessed ids, temporary URLs,
 * GET and DELETE /attachments, the `attachment` events, and claiming: a message sent through
 * POST /messages that links an upload claims it; deleting the message releases it. Ported in
 * spirit from the reference's zerver/tests/test_upload.py and test_attachments.py.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ApiClient, assertError, assertSuccess, basicAuth } from '../helpers/api.js';
import { createChannel, setRealmSettings } from '../helpers/channels.js';
import { fetchNarrow, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { register, until } from '../helpers/events.js';
import { seedRealm } from '../helpers/fixtures.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { CLUSTER_MODE, startServer, type TestServer } from '../helpers/server.js';
import {
  asApiResponse,
  download,
  multipartBody,
  request,
  streamingUpload,
  upload,
  type FilePart,
} from '../helpers/uploads.js';

const PATH_ID = /^\d+\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{24}\/[^/]+$/;

type Uploaded = { url: string; pathId: string; filename: string };

async function uploadOne(t: Test, api: ApiClient, who: string, file: FilePart): Promise<Uploaded> {
  const res = await upload(api, who, [file]);
  const body = assertSuccess(t, res, `upload ${file.filename}`);
  const url = body.url as string;
  return { url, pathId: url.slice('/user_uploads/'.length), filename: body.filename as string };
}

/**
 * Why checks of the test server's data directory are skipped in cluster mode: `dataDir` is n1's,
 * and the proxy may have given the request to another node.
 */
const OTHER_NODES_DISK =
  CLUSTER_MODE && "cluster mode: looks into n1's data directory; the request may be another node's";

/** A check of files in the test server's data directory; skipped in cluster mode. */
function onDisk(t: Test, what: string, check: () => void): void {
  if (OTHER_NODES_DISK) t.pass(what, { skip: OTHER_NODES_DISK });
  else check();
}

/**
 * Why some requests' statuses are skipped in cluster mode: nginx, in front of the nodes, answers
 * a path that climbs above the root or holds an encoded NUL with its own 400 before any node sees
 * it (nothing is served either way; their bodies are still checked).
 */
const PROXY_REFUSES = CLUSTER_MODE && 'cluster mode: nginx refuses this path itself with 400';

function storedFile(ts: TestServer, pathId: string): string {
  return path.join(ts.dataDir, 'uploads', pathId);
}

function tmpFiles(ts: TestServer): string[] {
  const dir = path.join(ts.dataDir, 'tmp');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/** Markdown linking each upload, the way clients write it after an upload. */
function links(...uploads: Uploaded[]): string {
  return uploads.map((u) => `[${u.filename}](${u.url})`).join('\n');
}

/** The ids of the messages that claimed an upload, from its owner's GET /attachments. */
async function claimedBy(t: Test, api: ApiClient, owner: string, pathId: string) {
  const list = assertSuccess(t, await api.get(owner, 'attachments')).attachments as {
    path_id: string;
    messages: { id: number }[];
  }[];
  return list.find((a) => a.path_id === pathId)?.messages.map((m) => m.id);
}

t.test('POST /user_uploads stores the file and answers url, uri and filename', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { queue_id } = await register(t, api, 'hamlet', { event_types: ['attachment'] });
  const content = 'zulip!\n';
  const res = await upload(api, 'hamlet', [
    { filename: 'zulip.txt', data: content, contentType: 'text/plain' },
  ]);
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/user_uploads', 'post', res.body);
  t.equal(body.url, body.uri, 'uri is the deprecated alias of url');
  t.equal(body.filename, 'zulip.txt');
  const pathId = (body.url as string).slice('/user_uploads/'.length);
  t.match(pathId, PATH_ID, 'path id: <realm id>/<xx>/<random>/<name>');
  t.ok(pathId.startsWith(`${fx.realmId}/`) && pathId.endsWith('/zulip.txt'));
  onDisk(t, 'stored under DATA_DIR/uploads', () => {
    t.equal(
      fs.readFileSync(storedFile(ts, pathId), 'utf8'),
      content,
      'stored under DATA_DIR/uploads',
    );
    t.same(tmpFiles(ts), [], 'nothing left in DATA_DIR/tmp');
  });

  // The owner's clients hear of it; the event and the list agree.
  const ev = await api.get('hamlet', 'events', { queue_id, last_event_id: -1 });
  assertMatchesOpenApi(t, '/events', 'get', ev.body);
  const events = assertSuccess(t, ev).events as Record<string, unknown>[];
  t.equal(events.length, 1);
  t.match(events[0], {
    type: 'attachment',
    op: 'add',
    attachment: { name: 'zulip.txt', path_id: pathId, size: content.length, messages: [] },
    upload_space_used: content.length,
  });
  t.same(
    ts.events.filter((e) => e.event.type === 'attachment').map((e) => e.users),
    [[fx.users.hamlet!.id]],
    'only to the owner',
  );
  const list = await api.get('hamlet', 'attachments');
  assertMatchesOpenApi(t, '/attachments', 'get', list.body);
  t.same(assertSuccess(t, list).attachments, [(events[0] as { attachment: unknown }).attachment]);
  t.equal(list.body.upload_space_used, content.length);

  // The uploader downloads it, byte for byte, with the reference's headers.
  const got = await download(api, 'hamlet', body.url as string);
  t.equal(got.status, 200);
  t.equal(got.body.toString('utf8'), content);
  t.equal(got.headers['content-type'], 'text/plain');
  t.equal(got.headers['content-length'], String(content.length));
  t.equal(got.headers['content-disposition'], 'attachment; filename="zulip.txt"');
  t.equal(got.headers['x-content-type-options'], 'nosniff');
  t.match(got.headers['content-security-policy'], /default-src 'none'/);
  t.equal(got.headers['cache-control'], 'private, immutable');
});

t.test('refusals: no file, two files, a form body, no credentials', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  assertError(
    t,
    await api.post('hamlet', 'user_uploads', { file: 'not a file' }),
    'You must specify a file to upload',
  );
  assertError(
    t,
    await api.post(
      'hamlet',
      'user_uploads',
      { file: 'field, not file' },
      { encoding: 'multipart' },
    ),
    'You must specify a file to upload',
  );
  assertError(t, await upload(api, 'hamlet', []), 'You must specify a file to upload');
  assertError(
    t,
    await upload(api, 'hamlet', [{ filename: '', data: 'nameless' }]),
    'You must specify a file to upload',
    {},
  );
  const two = await upload(api, 'hamlet', [
    { filename: 'a.txt', data: 'a' },
    { filename: 'b.txt', data: 'b', field: 'file2' },
  ]);
  assertError(t, two, 'You may only upload one file at a time');
  const three = await upload(api, 'hamlet', [
    { filename: 'a.txt', data: 'a' },
    { filename: 'b.txt', data: 'b' },
    { filename: 'c.txt', data: 'c' },
  ]);
  assertError(t, three, 'You may only upload one file at a time');
  assertError(
    t,
    await upload(api, null, [{ filename: 'a.txt', data: 'a' }]),
    'Not logged in: API authentication or user session required',
    { status: 401, code: 'UNAUTHORIZED' },
  );
  t.same(assertSuccess(t, await api.get('hamlet', 'attachments')).attachments, [], 'none stored');
  await until(() => tmpFiles(ts).length === 0, 'refused uploads removed from DATA_DIR/tmp');
  t.pass('no received file left behind');
});

t.test('MAX_FILE_UPLOAD_SIZE: refused with 413 before the file is stored whole', async (t) => {
  const limit = 1024 * 1024;
  const ts = await startServer(t, { maxFileUploadBytes: limit });
  const { api } = ts;
  const msg = "File is larger than this server's configured maximum upload size (1 MiB).";

  // Exactly at the limit: accepted.
  const atLimit = await upload(api, 'hamlet', [{ filename: 'max.bin', data: Buffer.alloc(limit) }]);
  assertSuccess(t, atLimit);

  // One byte over, length declared (within the multipart allowance): refused as the byte arrives.
  const over = await upload(api, 'hamlet', [
    { filename: 'over.bin', data: Buffer.alloc(limit + 1) },
  ]);
  assertError(t, over, msg, { status: 413, code: 'REQUEST_TOO_LARGE' });

  // A declared length far over the limit: refused from the headers, before any of the body.
  const declared = await request(api, 'POST', 'hamlet', '/api/v1/user_uploads', undefined, {
    'content-type': 'multipart/form-data; boundary=x',
    'content-length': String(64 * limit),
  });
  assertError(t, asApiResponse(declared), msg, { status: 413, code: 'REQUEST_TOO_LARGE' });

  // 64 MiB streamed without a declared length: answered long before the client got through it.
  // The rest of the body is read and dropped before the connection ends (src/http/linger.ts), so
  // the answer arrives whole, through the cluster's nginx too (it streams request bodies).
  const streamed = await streamingUpload(api, 'hamlet', 64 * limit);
  assertError(t, streamed.response, msg, { status: 413, code: 'REQUEST_TOO_LARGE' });
  t.ok(
    streamed.bytesWritten < streamed.totalBytes / 2,
    `answered after ${streamed.bytesWritten} of ${streamed.totalBytes} bytes`,
  );
  const declaredStream = await streamingUpload(api, 'hamlet', 2 * limit, { declareLength: true });
  assertError(t, declaredStream.response, msg, { status: 413, code: 'REQUEST_TOO_LARGE' });

  await until(() => tmpFiles(ts).length === 0, 'partial files removed');
  t.pass('no partial file left in DATA_DIR/tmp');
  const list = assertSuccess(t, await api.get('hamlet', 'attachments'));
  t.equal((list.attachments as unknown[]).length, 1, 'only the upload at the limit was kept');
  t.equal(list.upload_space_used, limit);
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'the server keeps serving');
});

t.test('uploads on one keep-alive connection: each answered, the connection reused', async (t) => {
  // Receiving a file pauses the socket while the disk catches up; it must be reading again for
  // the connection's next request.
  const ts = await startServer(t);
  const { api, fx } = ts;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  for (let i = 0; i < 5; i++) {
    const { body, contentType } = multipartBody([
      { filename: `k${i}.bin`, data: Buffer.alloc(300 * 1024 + i, i) },
    ]);
    const { status, reused } = await new Promise<{ status: number; reused: boolean }>(
      (resolve, reject) => {
        const r = http.request(
          new URL('/api/v1/user_uploads', api.baseUrl),
          {
            method: 'POST',
            agent,
            headers: {
              authorization: basicAuth(fx.users.hamlet!.email, fx.users.hamlet!.api_key),
              'content-type': contentType,
              'content-length': String(body.length),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: r.reusedSocket }));
          },
        );
        r.on('error', reject);
        r.end(body);
      },
    );
    t.equal(status, 200, `upload ${i}`);
    if (i > 0) t.ok(reused, `upload ${i} on the same connection`);
  }
  t.equal(
    (assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as unknown[]).length,
    5,
  );
});

t.test(
  'an upload the client abandons leaves no partial file',
  { skip: OTHER_NODES_DISK },
  async (t) => {
    const ts = await startServer(t);
    const { api, fx } = ts;
    const boundary = 'abandoned';
    const r = http.request(new URL(api.baseUrl), {
      method: 'POST',
      path: '/api/v1/user_uploads',
      agent: false,
      headers: {
        authorization: basicAuth(fx.users.hamlet!.email, fx.users.hamlet!.api_key),
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(10 * 1024 * 1024),
      },
    });
    r.on('error', () => {}); // destroyed on purpose
    r.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`,
    );
    r.write(Buffer.alloc(512 * 1024, 1));
    await until(() => tmpFiles(ts).length === 1, 'the partial file is being written');
    r.destroy();
    await until(() => tmpFiles(ts).length === 0, 'the partial file is removed');
    t.pass('removed after the client went away');
    t.same(assertSuccess(t, await api.get('hamlet', 'attachments')).attachments, []);
  },
);

t.test('file names: sanitized in the path, kept in filename; Unicode names', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const cases: [string, string, string][] = [
    // client name, `filename` answered, last path segment
    ['zulip.txt', 'zulip.txt', 'zulip.txt'],
    ['some file (1).txt', 'some file (1).txt', 'some-file-1.txt'],
    ['a<b>c|d?.txt', 'a<b>c|d?.txt', 'abcd.txt'],
    ['../../etc/passwd', 'passwd', 'passwd'],
    ['C:\\Users\\me\\report.pdf', 'report.pdf', 'report.pdf'],
    ['hello%20world.txt', 'hello world.txt', 'hello-world.txt'],
    ['%2E%2E', '..', 'uploaded-file'],
    ['$%^&*.png', '$%^&*.png', '.png'],
    ['été.pdf', 'été.pdf', 'été.pdf'],
    ['日本語 ファイル.txt', '日本語 ファイル.txt', '日本語-ファイル.txt'],
    ['🎉party.txt', '🎉party.txt', 'party.txt'],
    ['ＡＢＣ.txt', 'ＡＢＣ.txt', 'ABC.txt'],
  ];
  for (const [name, filename, segment] of cases) {
    const up = await uploadOne(t, api, 'hamlet', { filename: name, data: `content of ${name}` });
    t.equal(up.filename, filename, `filename of ${name}`);
    t.equal(up.pathId.split('/').pop(), segment, `stored name of ${name}`);
    t.match(up.pathId, PATH_ID);
    const got = await download(api, 'hamlet', up.url);
    t.equal(got.status, 200, `${name} downloads`);
    t.equal(got.body.toString('utf8'), `content of ${name}`);
  }
  const long = await uploadOne(t, api, 'hamlet', { filename: 'x'.repeat(300) + '.txt', data: 'l' });
  t.equal(Buffer.byteLength(long.pathId.split('/').pop()!), 255, 'cut to fit the file system');
  t.equal(long.filename, 'x'.repeat(300) + '.txt', 'the full name is kept');
  t.equal((await download(api, 'hamlet', long.url)).status, 200);

  // Names with no content left are no file at all, as the reference's multipart parser treats them.
  assertError(
    t,
    await upload(api, 'hamlet', [{ filename: '..', data: 'x' }]),
    'You must specify a file to upload',
  );

  // Unicode names: percent-encoded or raw UTF-8 in the request path; RFC 8187 in the header.
  const uni = await uploadOne(t, api, 'hamlet', {
    filename: 'été 2.png',
    data: 'PNG',
    contentType: 'image/png',
  });
  const viaEncoded = await download(api, 'hamlet', uni.url);
  t.equal(viaEncoded.status, 200);
  t.equal(
    viaEncoded.headers['content-disposition'],
    `inline; filename="_t_ 2.png"; filename*=utf-8''%C3%A9t%C3%A9%202.png`,
    'images inline, with the name as uploaded',
  );
  t.equal(viaEncoded.headers['content-type'], 'image/png');
  const list = assertSuccess(t, await api.get('hamlet', 'attachments'));
  t.ok(
    (list.attachments as { name: string; path_id: string }[]).some(
      (a) => a.name === 'été 2.png' && a.path_id === uni.pathId,
    ),
    'listed under the name as uploaded',
  );
});

t.test('content types: declared, guessed, inline only for safe ones', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const cases: [FilePart, string, 'inline' | 'attachment'][] = [
    [{ filename: 'a.png', data: 'x', contentType: 'image/png' }, 'image/png', 'inline'],
    [{ filename: 'b.jpg', data: 'x' }, 'image/jpeg', 'inline'],
    [
      { filename: 'c.pdf', data: 'x', contentType: 'application/octet-stream' },
      'application/pdf',
      'inline',
    ],
    [
      { filename: 'd.html', data: '<script>1</script>', contentType: 'text/html' },
      'text/html',
      'attachment',
    ],
    [
      { filename: 'e.svg', data: '<svg/>', contentType: 'image/svg+xml' },
      'image/svg+xml',
      'attachment',
    ],
    [{ filename: 'f.png', data: '<html>', contentType: 'text/html' }, 'text/html', 'attachment'],
    [
      { filename: 'g', data: 'x', contentType: 'application/octet-stream' },
      'application/octet-stream',
      'attachment',
    ],
  ];
  for (const [part, type, disposition] of cases) {
    const up = await uploadOne(t, api, 'hamlet', part);
    const got = await download(api, 'hamlet', up.url);
    t.equal(got.headers['content-type'], type, `${part.filename}: type`);
    t.ok(
      (got.headers['content-disposition'] ?? '').startsWith(`${disposition};`),
      `${part.filename}: ${disposition}`,
    );
  }
});

t.test('who may download: each kind of reader', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const [hamlet, othello, prospero, polonius] = ['hamlet', 'othello', 'prospero', 'polonius'].map(
    id,
  ) as [number, number, number, number];

  const pub = await createChannel(api, 'hamlet', 'pub', { principals: [hamlet, othello] });
  const shared = await createChannel(api, 'hamlet', 'shared', {
    invite_only: true,
    history_public_to_subscribers: true,
    principals: [hamlet, othello, polonius],
  });
  const protectedCh = await createChannel(api, 'hamlet', 'protected', {
    invite_only: true,
    principals: [hamlet, othello],
  });

  const files: Record<string, Uploaded> = {};
  for (const k of ['private', 'public', 'shared', 'protected', 'dm']) {
    files[k] = await uploadOne(t, api, 'hamlet', { filename: `${k}.txt`, data: `${k} data` });
  }
  const send = async (k: string, to: number | number[]) => {
    const content = links(files[k]!);
    const id =
      typeof to === 'number'
        ? await sendChannelMessage(api, 'hamlet', to, 't', content)
        : await sendDirectMessage(api, 'hamlet', to, content);
    t.same(await claimedBy(t, api, 'hamlet', files[k]!.pathId), [id], `${k}: claimed by sending`);
  };
  await send('public', pub);
  await send('shared', shared);
  await send('protected', protectedCh);
  await send('dm', [othello]);
  // Prospero joins both private channels after the messages: he received none of them.
  for (const name of ['shared', 'protected']) {
    assertSuccess(
      t,
      await api.post('hamlet', 'users/me/subscriptions', {
        subscriptions: [{ name }],
        principals: [prospero],
      }),
    );
  }

  const expect: Record<string, Record<string, boolean>> = {
    // file kind → reader → may download
    private: { hamlet: true, othello: false, cordelia: false, iago: false, polonius: false },
    public: { hamlet: true, othello: true, cordelia: true, iago: true, polonius: false },
    shared: {
      hamlet: true,
      othello: true,
      prospero: true,
      cordelia: false,
      iago: false,
      polonius: true,
    },
    protected: {
      hamlet: true,
      othello: true,
      prospero: false,
      cordelia: false,
      iago: false,
      polonius: false,
    },
    dm: { hamlet: true, othello: true, cordelia: false, iago: false, desdemona: false },
  };
  for (const [kind, readers] of Object.entries(expect)) {
    for (const [who, allowed] of Object.entries(readers)) {
      const got = await download(api, who, files[kind]!.url);
      if (allowed) {
        t.equal(got.status, 200, `${who} reads the ${kind} file`);
        t.equal(got.body.toString('utf8'), `${kind} data`);
      } else {
        t.equal(got.status, 404, `${who} may not read the ${kind} file`);
        t.equal(got.body.toString('utf8'), '<p>File not found.</p>', 'the same answer as no file');
      }
    }
  }

  // Shared history follows the channel: made protected, prospero (who received nothing) loses it.
  assertSuccess(
    t,
    await api.patch('hamlet', `streams/${shared}`, { history_public_to_subscribers: false }),
  );
  t.equal((await download(api, 'prospero', files.shared!.url)).status, 404);
  t.equal((await download(api, 'othello', files.shared!.url)).status, 200, 'a recipient keeps it');

  // Without credentials: a login challenge, the same whether or not the file exists; `Session`
  // (a browser's <img> must not open a password dialog), as the reference's.
  for (const url of [files.public!.url, '/user_uploads/1/ab/nothing/here.txt']) {
    const anon = asApiResponse(await download(api, null, url));
    assertError(t, anon, 'Not logged in: API authentication or user session required', {
      status: 401,
      code: 'UNAUTHORIZED',
    });
    t.equal(anon.headers['www-authenticate'], 'Session realm="confab"');
  }
  // Wrong credentials are refused as on the API, with its challenge.
  const wrong = asApiResponse(
    await download(api, { email: 'hamlet@zulip.com', api_key: 'wrong' }, files.private!.url),
  );
  assertError(t, wrong, 'Invalid API key', { status: 401, code: 'UNAUTHORIZED' });
  t.match(wrong.headers['www-authenticate'], /^Basic /);
});

t.test('web-public channels: spectators may download what is posted there', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  setRealmSettings(ts, { enable_spectator_access: true });
  const web = await createChannel(api, 'desdemona', 'web', { is_web_public: true });
  const posted = await uploadOne(t, api, 'desdemona', { filename: 'open.txt', data: 'open' });
  const kept = await uploadOne(t, api, 'desdemona', { filename: 'kept.txt', data: 'kept' });
  await sendChannelMessage(api, 'desdemona', web, 't', links(posted));
  const anon = await download(api, null, posted.url);
  t.equal(anon.status, 200);
  t.equal(anon.body.toString(), 'open');
  t.equal((await download(api, 'polonius', posted.url)).status, 200, 'guests too');
  t.equal((await download(api, null, kept.url)).status, 401, 'not posted: no');
  setRealmSettings(ts, { enable_spectator_access: false });
  t.equal((await download(api, null, posted.url)).status, 401, 'spectators turned off');
});

t.test('another realm: its users never see this realm’s files', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const otherFx = await seedRealm(ts.server, 'other');
  const other = new ApiClient(ts.url, otherFx, { host: 'other.testserver.local' });
  const mine = await uploadOne(t, api, 'hamlet', { filename: 'mine.txt', data: 'mine' });
  const theirs = await uploadOne(t, other, 'hamlet', { filename: 'theirs.txt', data: 'theirs' });
  t.ok(theirs.pathId.startsWith(`${otherFx.realmId}/`));
  t.equal((await download(other, 'hamlet', mine.url)).status, 404, 'on their own host');
  t.equal((await download(other, 'desdemona', mine.url)).status, 404, 'their owner either');
  t.equal((await download(api, 'hamlet', theirs.url)).status, 404, 'and the other way round');
  t.equal((await download(other, 'hamlet', theirs.url)).status, 200);
  const tmp = await other.get('hamlet', `/api/v1${mine.url}`);
  assertError(t, tmp, 'File not found.', { status: 404, code: 'NOT_FOUND' });
  // A valid key presented on the wrong host is refused before anything else.
  const crossHost = asApiResponse(await download(api, otherFx.users.hamlet!, mine.url));
  assertError(t, crossHost, 'Account is not associated with this subdomain', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  // Linking another realm's upload in a message of this realm claims nothing.
  const c = await createChannel(api, 'hamlet', 'c');
  const m = await sendChannelMessage(api, 'hamlet', c, 't', links(theirs));
  t.same(await claimedBy(t, other, 'hamlet', theirs.pathId), [], 'not claimed');
  t.notOk(
    (await fetchNarrow(api, 'hamlet', [['has', 'attachment']])).ids.includes(m),
    'the message does not count as having an attachment',
  );
});

t.test('path traversal, encoded dots, absolute paths and guessed ids: all 404', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const up = await uploadOne(t, api, 'hamlet', { filename: 'real.txt', data: 'real' });
  const [realm, xx, token, name] = up.pathId.split('/') as [string, string, string, string];
  fs.writeFileSync(path.join(ts.dataDir, 'secret.txt'), 'outside uploads');
  const attempts = [
    `/user_uploads/${realm}/../../secret.txt`,
    `/user_uploads/${realm}/${xx}/../../../secret.txt`,
    `/user_uploads/${realm}/%2e%2e/%2e%2e/secret.txt`,
    `/user_uploads/${realm}/%2E%2E%2F%2E%2E%2Fsecret.txt`,
    `/user_uploads/..%2f..%2fsecret.txt`, // nginx: above the root
    `/user_uploads/%2e%2e/%2e%2e/confab.sqlite3`, // nginx: above the root
    `/user_uploads/${realm}/${xx}/${token}/..%2F..%2F..%2F..%2Fsecret.txt`,
    `/user_uploads//etc/passwd`,
    `/user_uploads/%2Fetc%2Fpasswd`,
    `/user_uploads/${path.join(ts.dataDir, 'secret.txt')}`,
    `/user_uploads/${realm}/${xx}/${token}/${name}%00.png`, // nginx: a NUL
    `/user_uploads/${realm}\\..\\..\\secret.txt`,
    `/user_uploads/${realm}/${xx}/${token}`,
    `/user_uploads/${realm}/${xx}`,
    `/user_uploads/${realm}/${xx}/${token}/other.txt`,
    `/user_uploads/${realm}/${xx}/AAAAAAAAAAAAAAAAAAAAAAAA/${name}`,
    `/user_uploads/${fx.realmId + 1}/${xx}/${token}/${name}`,
    `/user_uploads/${realm}/${xx}/${token}/${name}/`,
    `/user_uploads/${realm}/${xx}/${token}/./${name}`,
    `/user_uploads/`,
    `/user_uploads`,
  ];
  const proxyRefuses = new Set([attempts[4], attempts[5], attempts[10]]);
  for (const p of attempts) {
    const got = await request(api, 'GET', 'hamlet', p);
    t.equal(got.status, 404, p, { skip: proxyRefuses.has(p) && PROXY_REFUSES });
    t.notMatch(got.body.toString(), /outside uploads|SQLite|at .*\.js|Error/, `${p}: no leak`);
  }
  const direct = await request(api, 'GET', 'hamlet', `/user_uploads/${up.pathId}`);
  t.equal(direct.status, 200, 'the real path still works');
  // The temporary-URL endpoint refuses the same way.
  for (const p of [
    `${realm}/../../secret.txt`,
    `${realm}/%2e%2e/%2e%2e/secret.txt`,
    `${realm}/${xx}/${token}/other.txt`,
    `${fx.realmId + 1}/${xx}/${token}/${name}`,
  ]) {
    const res = await api.get('hamlet', `/api/v1/user_uploads/${p}`);
    t.equal(res.status, 404, `temporary URL of ${p}`);
  }
});

t.test('temporary URLs: work without credentials until they expire', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const up = await uploadOne(t, api, 'hamlet', {
    filename: 'été.png',
    data: 'PNG data',
    contentType: 'image/png',
  });
  const res = await api.get('hamlet', `/api/v1${encodeURI(up.url)}`);
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/user_uploads/{realm_id_str}/{filename}', 'get', res.body);
  const url = res.body.url as string;
  t.match(
    url,
    /^\/user_uploads\/temporary\/[0-9a-z]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\/%C3%A9t%C3%A9\.png$/,
  );
  const got = await request(api, 'GET', null, url);
  t.equal(got.status, 200, 'no credentials needed');
  t.equal(got.body.toString(), 'PNG data');
  t.equal(got.headers['content-type'], 'image/png');

  // Only for files the caller may see.
  assertError(t, await api.get('othello', `/api/v1${encodeURI(up.url)}`), 'File not found.', {
    status: 404,
    code: 'NOT_FOUND',
  });
  const pub = await createChannel(api, 'hamlet', 'pub');
  await sendChannelMessage(api, 'hamlet', pub, 't', links(up));
  assertSuccess(t, await api.get('othello', `/api/v1${encodeURI(up.url)}`), 'once shared, yes');
  assertError(
    t,
    await api.get(null, `/api/v1${encodeURI(up.url)}`),
    'Not logged in: API authentication or user session required',
    { status: 401, code: 'UNAUTHORIZED' },
  );

  // Tampering: another file name, a forged or altered token.
  const [, , , token] = url.split('/') as [string, string, string, string];
  const tamper = async (p: string, msg: string) =>
    assertError(t, asApiResponse(await request(api, 'GET', null, p)), msg);
  await tamper(`/user_uploads/temporary/${token}/other.png`, 'Invalid filename');
  await tamper(`/user_uploads/temporary/x${token}/${url.split('/').pop()}`, 'Invalid token');
  // The signature's last two characters replaced by two others (a fixed "AA" was no change for
  // a signature ending so). The second-to-last is six bits of the HMAC, so the signature changes
  // (the last one holds four, and two bits that decoding ignores).
  const other = (c: string) => (c === 'A' ? 'B' : 'A');
  const altered = token.slice(0, -2) + other(token.at(-2)!) + other(token.at(-1)!);
  t.not(altered, token);
  await tamper(`/user_uploads/temporary/${altered}/${url.split('/').pop()}`, 'Invalid token');
  await tamper(`/user_uploads/temporary/garbage/x.png`, 'Invalid token');

  // Deleted: the URL leads nowhere.
  const id = (
    assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as { id: number }[]
  )[0]!.id;
  assertSuccess(t, await api.delete('hamlet', `attachments/${id}`));
  t.equal((await request(api, 'GET', null, url)).status, 404);
});

t.test('temporary URLs expire (lifetime shortened for the test)', async (t) => {
  // A lifetime of 0 ms: every URL is already expired when it is used.
  const ts = await startServer(t, { uploadUrlLifetimeMs: 0 });
  const { api } = ts;
  const up = await uploadOne(t, api, 'hamlet', { filename: 'soon.txt', data: 'gone' });
  const res = assertSuccess(t, await api.get('hamlet', `/api/v1${up.url}`));
  const expired = asApiResponse(await request(api, 'GET', null, res.url as string));
  assertError(t, expired, 'Invalid token');
  t.equal((await download(api, 'hamlet', up.url)).status, 200, 'the file itself is still there');
});

t.test('DELETE /attachments/{id}: the owner deletes file and row', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const a = await uploadOne(t, api, 'hamlet', { filename: 'a.txt', data: 'aaaa' });
  const b = await uploadOne(t, api, 'hamlet', { filename: 'b.txt', data: 'bb' });
  const pub = await createChannel(api, 'hamlet', 'pub');
  const m = await sendChannelMessage(api, 'hamlet', pub, 't', links(a));
  t.same(await claimedBy(t, api, 'hamlet', a.pathId), [m]);
  const list = assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as {
    id: number;
    path_id: string;
  }[];
  const idA = list.find((x) => x.path_id === a.pathId)!.id;
  const idB = list.find((x) => x.path_id === b.pathId)!.id;

  // Not the owner, unknown ids, bad ids.
  for (const who of ['othello', 'iago', 'desdemona']) {
    const r = await api.delete(who, `attachments/${idA}`);
    assertError(t, r, 'Invalid attachment');
    assertMatchesOpenApi(t, '/attachments/{attachment_id}', 'delete', r.body, { status: '400' });
  }
  assertError(t, await api.delete('hamlet', 'attachments/999999'), 'Invalid attachment');
  assertError(t, await api.delete('hamlet', 'attachments/abc'), 'attachment_id is not an integer');

  const { queue_id } = await register(t, api, 'hamlet', { event_types: ['attachment'] });
  const del = await api.delete('hamlet', `attachments/${idA}`);
  assertSuccess(t, del);
  assertMatchesOpenApi(t, '/attachments/{attachment_id}', 'delete', del.body);
  onDisk(t, 'the file and its directory are gone, the other stays', () => {
    t.notOk(fs.existsSync(storedFile(ts, a.pathId)), 'the file is gone');
    t.notOk(fs.existsSync(path.dirname(storedFile(ts, a.pathId))), 'and its own directory');
    t.ok(fs.existsSync(storedFile(ts, b.pathId)), 'the other upload stays');
  });
  t.equal((await download(api, 'hamlet', a.url)).status, 404);
  const after = assertSuccess(t, await api.get('hamlet', 'attachments'));
  t.same(
    (after.attachments as { id: number }[]).map((x) => x.id),
    [idB],
  );
  t.equal(after.upload_space_used, 2);
  const ev = await api.get('hamlet', 'events', { queue_id, last_event_id: -1 });
  assertMatchesOpenApi(t, '/events', 'get', ev.body);
  t.same(
    (assertSuccess(t, ev).events as Record<string, unknown>[]).map(({ id: _id, ...e }) => e),
    [{ type: 'attachment', op: 'remove', attachment: { id: idA }, upload_space_used: 2 }],
  );
  assertError(t, await api.delete('hamlet', `attachments/${idA}`), 'Invalid attachment', {});
  const again = await sendChannelMessage(api, 'hamlet', pub, 't', links(a));
  t.notOk(
    (await fetchNarrow(api, 'hamlet', [['has', 'attachment']])).ids.includes(again),
    'a deleted upload is not claimed',
  );
});

t.test('claiming: own uploads, re-sharing what one can see, nothing else', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(id) as [
    number,
    number,
    number,
  ];
  const pub = await createChannel(api, 'hamlet', 'pub', {
    principals: [hamlet, othello, cordelia],
  });
  const secret = await createChannel(api, 'othello', 'secret', {
    invite_only: true,
    principals: [othello, cordelia],
  });
  const shared = await uploadOne(t, api, 'hamlet', { filename: 'shared.txt', data: 's' });
  const unshared = await uploadOne(t, api, 'hamlet', { filename: 'unshared.txt', data: 'u' });

  const from = ts.events.length;
  const m1 = await sendChannelMessage(
    api,
    'hamlet',
    pub,
    't',
    `${links(shared, shared)}\n[x](/user_uploads/nonsense) [y](/user_uploads/1/xx/yy/zz.txt)`,
  );
  t.same(
    await claimedBy(t, api, 'hamlet', shared.pathId),
    [m1],
    'own upload claimed once; unknown path ids skipped',
  );
  const updates = ts.events.slice(from).filter((e) => e.event.type === 'attachment');
  t.equal(updates.length, 1);
  t.same(updates[0]!.users, [hamlet], 'the update goes to the owner');
  t.match(updates[0]!.event, {
    op: 'update',
    attachment: { path_id: shared.pathId, messages: [{ id: m1 }] },
  });

  // Othello can see `shared` (public channel) and re-shares it in a private channel; he cannot
  // share `unshared`, which he cannot see.
  const m2 = await sendChannelMessage(api, 'othello', secret, 't', links(shared, unshared));
  t.same(await claimedBy(t, api, 'hamlet', unshared.pathId), [], 'not his to share');
  t.equal((await download(api, 'cordelia', unshared.url)).status, 404);
  // Links may carry the path percent-encoded.
  const uni = await uploadOne(t, api, 'hamlet', { filename: 'ñ.txt', data: 'n' });
  const m3 = await sendChannelMessage(
    api,
    'hamlet',
    pub,
    't',
    `[n](/user_uploads/${encodeURI(uni.pathId)})`,
  );
  t.same(await claimedBy(t, api, 'hamlet', uni.pathId), [m3]);
  // A message whose only upload links name nothing claimable has no attachment.
  const m4 = await sendChannelMessage(api, 'hamlet', pub, 't', '[x](/user_uploads/1/ab/cd/x.txt)');
  const withAttachment = (await fetchNarrow(api, 'othello', [['has', 'attachment']])).ids;
  t.same(
    withAttachment.filter((id) => [m1, m2, m3, m4].includes(id)),
    [m1, m2, m3],
  );

  const list = assertSuccess(t, await api.get('hamlet', 'attachments'));
  assertMatchesOpenApi(t, '/attachments', 'get', list);
  const byPath = new Map(
    (list.attachments as { path_id: string; messages: { id: number; date_sent: number }[] }[]).map(
      (a) => [a.path_id, a],
    ),
  );
  t.same(
    byPath.get(shared.pathId)!.messages.map((m) => m.id),
    [m1, m2],
    'every message referencing it, whoever sent it',
  );
  for (const m of byPath.get(shared.pathId)!.messages) {
    t.ok(m.date_sent > 1_000_000_000_000, 'date_sent in milliseconds');
  }
  t.same(byPath.get(unshared.pathId)!.messages, []);
});

t.test('edits and deletions: detached_uploads for the message area', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const rt = ts.server.context.realms.get(fx.realmId)!;
  const pub = await createChannel(api, 'hamlet', 'pub', { principals: [hamlet, othello] });
  const a = await uploadOne(t, api, 'hamlet', { filename: 'a.txt', data: 'a' });
  const b = await uploadOne(t, api, 'hamlet', { filename: 'b.txt', data: 'b' });
  const c = await uploadOne(t, api, 'hamlet', { filename: 'c.txt', data: 'c' });
  const m1 = await sendChannelMessage(api, 'hamlet', pub, 't', links(a, b));
  const m2 = await sendChannelMessage(api, 'hamlet', pub, 't', links(b));

  // Edit m1: drop a and b, add c. a is referenced nowhere now (detached); b still by m2.
  const edit = await rt.ask('attachment.relink', {
    sender_id: hamlet,
    message_id: m1,
    path_ids: [c.pathId],
  });
  t.equal(edit.has_attachment, true);
  t.same(
    edit.detached_uploads.map((d) => d.path_id),
    [a.pathId],
  );
  t.match(edit.detached_uploads[0], { name: 'a.txt', size: 1, messages: [] });
  t.type(edit.detached_uploads[0]!.create_time, 'number');
  // The shape the message-edit response carries.
  assertMatchesOpenApi(t, '/messages/{message_id}', 'patch', {
    result: 'success',
    msg: '',
    detached_uploads: edit.detached_uploads,
  });
  // Removing every link: no attachment left on the message.
  const bare = await rt.ask('attachment.relink', {
    sender_id: hamlet,
    message_id: m1,
    path_ids: [],
  });
  t.same(bare, {
    has_attachment: false,
    detached_uploads: [await detail(c.pathId)],
  });

  // Deleting m2: b loses its last message.
  const from = ts.events.length;
  assertSuccess(t, await api.delete('hamlet', `messages/${m2}`));
  t.match(
    ts.events
      .slice(from)
      .map((e) => e.event)
      .filter((e) => e.type === 'attachment'),
    [{ type: 'attachment', op: 'update', attachment: { path_id: b.pathId, messages: [] } }],
  );
  t.same(await claimedBy(t, api, 'hamlet', b.pathId), []);
  // Still listed (and downloadable by its owner) until the owner deletes it.
  t.equal((await download(api, 'hamlet', b.url)).status, 200);
  t.equal((await download(api, 'othello', b.url)).status, 404, 'no message shares it any more');

  async function detail(pathId: string) {
    const list = assertSuccess(t, await api.get('hamlet', 'attachments')).attachments as {
      path_id: string;
    }[];
    return list.find((x) => x.path_id === pathId);
  }
});

t.test('large files are streamed whole to a reader that stalls', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const size = 24 * 1024 * 1024 + 123;
  const data = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4096) data.writeUInt32LE(i, i);
  const up = await uploadOne(t, api, 'hamlet', { filename: 'big.bin', data });
  // The reader stops after the first bytes while the server gets on with other requests (the
  // download fills the socket buffers and waits for onWritable), then reads the rest.
  const { res, firstChunk } = await new Promise<{ res: http.IncomingMessage; firstChunk: Buffer }>(
    (resolve, reject) => {
      const r = http.get(
        new URL(encodeURI(up.url), api.baseUrl),
        { agent: false, headers: { authorization: basicAuth(fx(ts).email, fx(ts).api_key) } },
        (res) => {
          res.once('data', (c: Buffer) => {
            res.pause();
            resolve({ res, firstChunk: c });
          });
          res.on('error', reject);
        },
      );
      r.on('error', reject);
    },
  );
  for (let i = 0; i < 30; i++)
    assertSuccess(t, await api.get('othello', 'users/me'), `request ${i}`);
  const rest = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [firstChunk];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
    res.resume();
  });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-length'], String(size));
  t.equal(rest.length, size);
  t.ok(rest.equals(data), 'every byte as uploaded');
});

function fx(ts: TestServer) {
  return ts.fx.users.hamlet!;
}
