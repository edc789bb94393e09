/**
 * The process-level guarantee (docs/robustness.md "Unexpected exceptions"): an exception nobody
 * expected, at any step of a request — on arrival, reading the body, handing the body on, a
 * synchronous or asynchronous handler, writing the answer, a held answer, streaming a file, a
 * WebSocket callback — is answered 500 in the API's error format when an answer is still
 * possible (else the connection or socket is closed), logged with the request's id, releases
 * what the request held, and the server goes on serving. Outside any request, the process-level
 * last resort logs it and the process lives on; only a fatal condition stops it, saying why.
 * The test-only routes of src/endpoints/testing.ts fail at each step.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import WebSocket from 'ws';
import { streamCloses } from '../../src/endpoints/testing.js';
import { metricsText } from '../../src/observability/metrics.js';
import { assertSuccess } from '../helpers/api.js';
import { startChild } from '../helpers/child-server.js';
import { until } from '../helpers/events.js';
import { captureLog } from '../helpers/log.js';
import { DIST_SRC } from '../helpers/plain-node.js';
import { startServer } from '../helpers/server.js';
import { multipartBody, upload } from '../helpers/uploads.js';

const INTERNAL = { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' };

type Answer = { status: number; body: unknown; bytes: number; complete: boolean; error?: string };

/** One request on its own connection; resolves with what came back, however it ended. */
function send(
  base: string,
  method: string,
  target: string,
  body?: { data: Buffer; contentType: string },
): Promise<Answer> {
  return new Promise((resolve) => {
    const r = http.request(
      new URL(target, base),
      {
        method,
        agent: false,
        headers: body
          ? { 'content-type': body.contentType, 'content-length': String(body.data.length) }
          : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('close', () => {
          const text = Buffer.concat(chunks);
          let parsed: unknown;
          try {
            parsed = JSON.parse(text.toString('utf8'));
          } catch {
            parsed = null;
          }
          resolve({
            status: res.statusCode ?? 0,
            body: parsed,
            bytes: text.length,
            complete: res.complete,
          });
        });
      },
    );
    r.on('error', (err) =>
      resolve({ status: 0, body: null, bytes: 0, complete: false, error: err.message }),
    );
    if (body) r.write(body.data);
    r.end();
  });
}

function tmpFiles(dataDir: string): string[] {
  try {
    return fs.readdirSync(path.join(dataDir, 'tmp'));
  } catch {
    return [];
  }
}

t.test('each step of a request answers an unexpected exception with a 500', async (t) => {
  const ts = await startServer(t);
  const { url, api, dataDir, server } = ts;
  const logged = captureLog(t);
  const stillServing = async (what: string) =>
    assertSuccess(t, await api.get('hamlet', 'users/me'), `${what}: the server still serves`);
  /** The error line logged for the last failure: with the request's id and the step. */
  const loggedFailure = (where: string) =>
    logged.filter((l) => l.msg === 'internal server error' && l.where === where).pop();

  const form = { data: Buffer.from('a=1'), contentType: 'application/x-www-form-urlencoded' };
  const arrival = await send(url, 'POST', '/api/v1/__test/fail/arrival', form);
  t.equal(arrival.status, 500, 'on arrival (before the request is set up): 500');
  t.same(arrival.body, INTERNAL, 'in the API error format');
  t.match(loggedFailure('route'), { level: 'error', route: '/api/v1/__test/fail/arrival' });
  await stillServing('on arrival');

  // A 2 MB file: the body arrives in several chunks, the first part of the file on disk already.
  const big = multipartBody([{ filename: 'big.bin', data: Buffer.alloc(2 * 1024 * 1024, 7) }]);
  const chunk = await send(url, 'POST', '/api/v1/__test/fail/body-chunk', {
    data: big.body,
    contentType: big.contentType,
  });
  t.equal(chunk.status, 500, `reading the body: 500 (${chunk.error ?? 'answered'})`);
  t.same(chunk.body, INTERNAL);
  t.match(loggedFailure('body'), { level: 'error', reqId: /^[a-z0-9]+-[a-z0-9]+$/ });
  await stillServing('reading the body');

  const small = multipartBody([{ filename: 'notes.txt', data: 'hello' }]);
  const end = await send(url, 'POST', '/api/v1/__test/fail/body-end', {
    data: small.body,
    contentType: small.contentType,
  });
  t.equal(end.status, 500, 'handing the parsed body on: 500');
  t.same(end.body, INTERNAL);
  await stillServing('handing the body on');
  await until(() => tmpFiles(dataDir).length === 0, 'the received files are removed');
  t.same(tmpFiles(dataDir), [], 'no received file is left behind');

  for (const mode of ['sync', 'async']) {
    const r = await send(url, 'GET', `/api/v1/__test/fail/respond?mode=${mode}`);
    t.equal(r.status, 500, `a value that cannot be written (${mode}): 500`);
    t.same(r.body, INTERNAL);
  }
  t.match(loggedFailure('respond'), { level: 'error', reqId: /./, err: { stack: /serializ/ } });

  const held = await send(url, 'GET', '/api/v1/__test/fail/held');
  t.equal(held.status, 500, 'a held answer that cannot be written: 500');
  t.same(held.body, INTERNAL);
  await stillServing('a held answer');

  for (const mode of ['reject', 'throw']) {
    const closes = streamCloses.count;
    const r = await send(url, 'GET', `/api/v1/__test/fail/stream?mode=${mode}`);
    t.equal(r.status, 200, `streaming a file (${mode}): its headers were out`);
    t.notOk(r.complete, 'then the connection is closed short of the declared length');
    t.ok(r.bytes < 256 * 1024, `only part of the file came (${r.bytes} bytes)`);
    await until(() => streamCloses.count === closes + 1, 'the file is closed');
    await stillServing(`streaming (${mode})`);
  }
  t.match(loggedFailure('stream'), { level: 'error', reqId: /./ });

  await until(() => server.inflight === 0, 'every request has left');
  t.equal(server.inflight, 0, 'no request is left in flight');
  const metrics = (await metricsText()).toString('utf8');
  for (const where of ['route', 'body', 'respond', 'stream']) {
    t.match(
      metrics,
      new RegExp(`confab_unexpected_errors_total\\{where="${where}"\\} [1-9]`),
      `counted in /metrics (${where})`,
    );
  }
});

t.test('a real failure while reading a body: no place for received files', async (t) => {
  const { api, dataDir } = await startServer(t);
  captureLog(t);
  // DATA_DIR/tmp, where received file parts go, is a file: making the directory fails inside the
  // multipart parser (this ended the process before: the exception left uWS's data callback).
  fs.rmSync(path.join(dataDir, 'tmp'), { recursive: true, force: true });
  fs.writeFileSync(path.join(dataDir, 'tmp'), 'not a directory');
  const res = await upload(api, 'hamlet', [{ filename: 'a.txt', data: 'hello' }]);
  t.equal(res.status, 500, 'answered 500');
  t.same(res.body, INTERNAL, 'in the API error format');
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'the server still serves');
  fs.rmSync(path.join(dataDir, 'tmp'));
  assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'a.txt', data: 'hello' }]),
    'uploads work again once the directory can be made',
  );
});

t.test('a WebSocket whose callbacks throw is closed with 1011; the server goes on', async (t) => {
  const { url, api } = await startServer(t);
  const logged = captureLog(t);
  const wsUrl = url.replace(/^http/, 'ws') + '/api/v1/__test/socket';

  const upgrade = await new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`${wsUrl}?at=upgrade`);
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => reject(new Error('opened')));
    ws.on('error', () => undefined);
  });
  t.equal(upgrade, 500, 'an upgrade that throws is answered 500');

  const closeCode = (at: string, frame: boolean) =>
    new Promise<number>((resolve) => {
      const ws = new WebSocket(`${wsUrl}?at=${at}`);
      ws.on('open', () => {
        if (frame) ws.send('{"x":1}');
      });
      ws.on('close', (code) => resolve(code));
      ws.on('error', () => undefined);
    });
  t.equal(await closeCode('open', false), 1011, 'an open callback that throws: closed 1011');
  t.equal(await closeCode('', true), 1011, 'a message callback that throws: closed 1011');
  await until(
    () => logged.filter((l) => l.where === 'socket').length >= 4,
    'open, message and close failures are logged',
  );
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'the server still serves');
});

const TEST_ROUTES_MAIN = path.join(DIST_SRC, '../test/helpers/test-routes-main.js');

t.test('outside any request: logged, and the process goes on', async (t) => {
  const dir = t.testdir();
  const child = await startChild(dir, {}, TEST_ROUTES_MAIN);
  t.teardown(() => child.kill('SIGKILL'));
  const r = await send(child.url, 'GET', '/api/v1/__test/fail/later?mode=error');
  t.equal(r.status, 200, 'the request itself is answered');
  await child.waitFor(/deliberate failure in a timer/);
  await child.waitFor(/deliberate unhandled rejection/);
  const ok = await send(child.url, 'GET', '/api/v1/server_settings');
  t.equal(ok.status, 200, 'the process still serves');
  const lines = child
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const caught = lines.filter((l) => l.where === 'process');
  t.equal(caught.length, 2, 'both were logged by the last resort');
  t.match(caught[0], { level: 'error', msg: /outside any request/ });
  // The documented 500s of a request still work in this process.
  const failing = await send(child.url, 'GET', '/api/v1/__test/fail');
  t.same(failing.body, INTERNAL);
  t.equal((await send(child.url, 'GET', '/api/v1/server_settings')).status, 200);
});

t.test('a fatal condition stops the process, saying why', async (t) => {
  const dir = t.testdir();
  const child = await startChild(dir, {}, TEST_ROUTES_MAIN);
  t.teardown(() => child.kill('SIGKILL'));
  await send(child.url, 'GET', '/api/v1/__test/fail/later?mode=fatal');
  const { code } = await child.exited;
  t.equal(code, 70, 'exit code 70');
  t.match(child.output(), /"level":"fatal".*stopping: the database is corrupt \(SQLITE_CORRUPT\)/);
});
