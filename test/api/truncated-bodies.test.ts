/**
 * Bodies that end early. A multipart body cut inside a file part, sent without credentials, ended
 * the process (busboy fails the part's stream, which had no error listener); it must be answered
 * 400 with the partial file removed (401 without credentials on a route that takes files: its
 * body is then not read at all), and the server must go on serving.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { until } from '../helpers/events.js';
import { restartServer, startServer } from '../helpers/server.js';

/**
 * Sends `head` + `body` on a fresh connection (kept open for writing: uWS takes a half-closed
 * connection for a gone client) and resolves with everything read until the server closes it.
 */
function rawRequest(url: string, head: string, body: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect(Number(port), hostname, () => s.write(head + body));
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const BOUNDARY = 'confabtestboundary';
/** A multipart body that stops inside its file part: no closing boundary. */
const CUT_BODY =
  `--${BOUNDARY}\r\n` +
  'Content-Disposition: form-data; name="file"; filename="notes.txt"\r\n' +
  'Content-Type: text/plain\r\n\r\n' +
  'the first bytes of a file that never ends';

function cutHead(target: string, length = CUT_BODY.length): string {
  return (
    `POST ${target} HTTP/1.1\r\nHost: testserver.local\r\nConnection: close\r\n` +
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`
  );
}

function tmpFiles(dataDir: string): string[] {
  try {
    return fs.readdirSync(path.join(dataDir, 'tmp'));
  } catch {
    return [];
  }
}

t.test('a multipart body cut inside a file part is a 400, not a crash', async (t) => {
  const { url, api, dataDir } = await startServer(t);
  // Without credentials, routes that take files refuse before reading the body (nothing of it
  // reaches the disk); a route that takes none reads (drains) it and finds it cut.
  for (const target of ['/api/v1/user_uploads', '/api/v1/realm/emoji/green_tick']) {
    const answer = await rawRequest(url, cutHead(target), CUT_BODY);
    t.match(answer, /^HTTP\/1\.1 401 /, `${target}: answered 401`);
    t.match(answer, /"code":"UNAUTHORIZED"/, `${target}: in the API's error format`);
  }
  const drained = await rawRequest(url, cutHead('/api/v1/messages'), CUT_BODY);
  t.match(drained, /^HTTP\/1\.1 400 /, '/api/v1/messages: answered 400');
  t.match(drained, /"code":"BAD_REQUEST"/, "in the API's error format");
  t.match(drained, /Malformed multipart body/, 'saying what was wrong');
  // Authenticated too.
  const auth = Buffer.from(`hamlet@zulip.com:${api.fx.users.hamlet!.api_key}`).toString('base64');
  const withAuth = cutHead('/api/v1/user_uploads').replace(
    'Connection: close\r\n',
    `Connection: close\r\nAuthorization: Basic ${auth}\r\n`,
  );
  const asMember = await rawRequest(url, withAuth, CUT_BODY);
  t.match(asMember, /^HTTP\/1\.1 400 /, 'as a member: 400');
  t.match(asMember, /Malformed multipart body/, 'saying what was wrong');
  const emoji = cutHead('/api/v1/realm/emoji/green_tick').replace(
    'Connection: close\r\n',
    `Connection: close\r\nAuthorization: Basic ${auth}\r\n`,
  );
  t.match(await rawRequest(url, emoji, CUT_BODY), /^HTTP\/1\.1 400 /, 'an emoji as a member: 400');
  // The body also ends before its declared length: the client goes away mid-file.
  await new Promise<void>((resolve) => {
    const { hostname, port } = new URL(url);
    const s = net.connect(Number(port), hostname, () => {
      s.write(cutHead('/api/v1/user_uploads', CUT_BODY.length + 1000) + CUT_BODY);
      setTimeout(() => s.destroy(), 100);
    });
    s.on('close', () => resolve());
  });

  assertSuccess(t, await api.get('hamlet', 'users/me'), 'the server still serves');
  // Removal is asynchronous, and on a loaded machine the server may take in the cut upload
  // after the request above was answered: wait for the directory to empty (bounded), not 200 ms.
  await until(() => tmpFiles(dataDir).length === 0, 'the partial files are removed');
  t.same(tmpFiles(dataDir), [], 'no partial file is left behind');
});

t.test('partial uploads left by an earlier process are removed at start', async (t) => {
  const { server, dataDir, fx } = await startServer(t);
  await server.close();
  const tmp = path.join(dataDir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const stray = path.join(tmp, '0123456789abcdef0123456789abcdef');
  fs.writeFileSync(stray, 'half a file');
  const other = path.join(tmp, 'import-keep');
  fs.mkdirSync(other);
  const { api } = await restartServer(t, dataDir, fx);
  assertSuccess(t, await api.get('hamlet', 'users/me'));
  t.notOk(fs.existsSync(stray), 'the stray part is gone');
  t.ok(fs.existsSync(other), 'what is not a received part is left alone');
});
