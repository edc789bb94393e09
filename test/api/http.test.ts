/**
 * The HTTP layer against the real server: parameter sources and encodings, the response envelope,
 * and every error shape (401, 404, 405, 413, missing / invalid / malformed parameters, 500).
 */
import net from 'node:net';
import { once } from 'node:events';
import t from 'tap';
import { assertError, assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { captureLog } from '../helpers/log.js';
import { startServer } from '../helpers/server.js';

t.test('parameters arrive the same way from every encoding', async (t) => {
  const { api } = await startServer(t);
  let n = 0;
  for (const encoding of ['form', 'multipart', 'json', 'query'] as const) {
    n++;
    const res = await api.post(
      'iago',
      'users',
      { email: `enc${n}@zulip.com`, password: 'pw-123456', full_name: `Encoded ${encoding}` },
      { encoding },
    );
    const body = assertSuccess(t, res, `POST /users as ${encoding}`);
    t.type(body.user_id, 'number');
    const got = await api.get('iago', `users/${String(body.user_id)}`);
    t.equal((assertSuccess(t, got).user as { full_name: string }).full_name, `Encoded ${encoding}`);
  }
});

t.test(
  'query-string parameters are read on PATCH and DELETE too; the body wins on a clash',
  async (t) => {
    const { api, fx } = await startServer(t);
    // DELETE with its (path) parameter plus an unknown query parameter.
    const res = await api.delete(
      'iago',
      `users/${fx.users.prospero!.id}?flavor=mint`,
      {},
      { encoding: 'form' },
    );
    const body = assertSuccess(t, res);
    t.same(body.ignored_parameters_unsupported, ['flavor'], 'unknown query parameter reported');
    const after = await api.get('iago', `users/${fx.users.prospero!.id}`);
    t.equal((after.body.user as { is_active: boolean }).is_active, false, 'the DELETE took effect');

    // POST with parameters split between query string and body; the body's value wins.
    const split = await api.post(
      'iago',
      '/api/v1/users?email=from-query@zulip.com&password=pw-123456',
      { email: 'from-body@zulip.com', full_name: 'Split' },
    );
    const id = assertSuccess(t, split).user_id as number;
    const user = (await api.get('iago', `users/${id}`)).body.user as { email: string };
    t.equal(user.email, 'from-body@zulip.com');
  },
);

t.test('a multipart form without fields is an empty form (zulip-js sends one)', async (t) => {
  const { api } = await startServer(t);
  // The close delimiter alone: what form libraries make with nothing appended.
  const res = await api.post('hamlet', 'register', {}, { encoding: 'multipart' });
  t.equal(assertSuccess(t, res, 'register with an empty multipart form').result, 'success');
  const auth = basicAuth(api.fx.users.hamlet!.email, api.fx.users.hamlet!.api_key);
  // No bytes at all under a multipart type: what zulip-js sends for a call without parameters.
  const none = await rawRequest(api.baseUrl, {
    method: 'POST',
    path: '/api/v1/register',
    headers: {
      authorization: auth,
      'content-type': 'multipart/form-data;boundary=--------------------------847c91e3',
      'content-length': '0',
    },
    body: '',
  });
  t.equal(none.status, 200, 'an empty multipart body: an empty form');
  // A form cut off inside a part is still malformed.
  const cut = await rawRequest(api.baseUrl, {
    method: 'POST',
    path: '/api/v1/register',
    headers: {
      authorization: auth,
      'content-type': 'multipart/form-data; boundary=xyz',
    },
    body: '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue',
  });
  t.equal(cut.status, 400, 'cut off: 400');
  t.match(cut.body.msg, /^Malformed multipart body/);
});

t.test('ignored_parameters_unsupported lists unknown parameters only', async (t) => {
  const { api } = await startServer(t);
  const res = await api.get('hamlet', 'users', { client_extavatar: true, color: 'blue', size: 3 });
  const body = assertSuccess(t, res);
  t.same(body.ignored_parameters_unsupported, ['color', 'size']);
  const clean = await api.get('hamlet', 'users', { client_extavatar: false });
  t.notOk(
    'ignored_parameters_unsupported' in assertSuccess(t, clean),
    'absent when every parameter is known',
  );
});

t.test('missing, invalid and malformed parameters', async (t) => {
  const { api } = await startServer(t);
  const missing = await api.post('iago', 'users', { email: 'x@zulip.com', full_name: 'X' });
  assertError(t, missing, "Missing 'password' argument", { code: 'REQUEST_VARIABLE_MISSING' });
  t.equal(missing.body.var_name, 'password');

  const badJson = await api.get('hamlet', 'users', { client_extavatar: 'yes please' });
  assertError(t, badJson, 'client_extavatar is not valid JSON', { code: 'INVALID_JSON' });

  const wrongType = await api.get('hamlet', 'users', { include_custom_profile_fields: 12 });
  assertError(t, wrongType, 'include_custom_profile_fields is not a boolean');

  const wrongList = await api.get('hamlet', 'users', { user_ids: [1, 'two'] });
  assertError(t, wrongList, 'user_ids[1] is not an integer');

  const notList = await api.get('hamlet', 'users', { user_ids: { a: 1 } });
  assertError(t, notList, 'user_ids is not a list');

  const badPath = await api.get('hamlet', 'users/12abc/status');
  assertError(t, badPath, 'user_id is not an integer');
  // GET /users/{x} takes an address where an id goes, as the reference: not a number, no such user.
  assertError(t, await api.get('hamlet', 'users/12abc'), 'No such user');
});

t.test('authentication failures are 401 UNAUTHORIZED with a Basic challenge', async (t) => {
  const { api, fx, url } = await startServer(t);
  const check = (res: Awaited<ReturnType<typeof rawRequest>>, msg: string) => {
    assertError(t, res, msg, { status: 401, code: 'UNAUTHORIZED' });
    t.match(res.headers['www-authenticate'], /^Basic/, 'WWW-Authenticate: Basic');
  };
  check(
    await api.get(null, 'users/me'),
    'Not logged in: API authentication or user session required',
  );
  check(
    await api.get(null, 'users/me', {}, { headers: { authorization: 'Bearer abc' } }),
    'This endpoint requires HTTP basic authentication.',
  );
  check(
    await api.get(
      null,
      'users/me',
      {},
      { headers: { authorization: 'Basic ' + Buffer.from('no-colon').toString('base64') } },
    ),
    'Invalid authorization header for basic auth',
  );
  check(
    await api.get({ email: 'hamlet@zulip.com', api_key: 'wrong' }, 'users/me'),
    'Invalid API key',
  );
  check(
    await api.get({ email: 'othello@zulip.com', api_key: fx.users.hamlet!.api_key }, 'users/me'),
    'Invalid API key',
  );
  // Deactivated account.
  assertSuccess(t, await api.delete('iago', `users/${fx.users.cordelia!.id}`));
  check(await api.get('cordelia', 'users/me'), 'Account is deactivated');
  // A valid key presented on another realm's subdomain.
  const res = await rawRequest(url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: {
      host: 'other.testserver.local',
      authorization: basicAuth('hamlet@zulip.com', fx.users.hamlet!.api_key),
    },
  });
  check(res, 'Account is not associated with this subdomain');
});

t.test('unknown routes and methods answer JSON errors', async (t) => {
  const { api } = await startServer(t);
  const notFound = await api.get('hamlet', '/api/v1/no/such/route');
  assertError(t, notFound, 'Not Found', { status: 404, code: 'NOT_FOUND' });
  t.match(notFound.headers['content-type'], /application\/json/);
  const wrongMethod = await api.request('PUT', 'hamlet', 'server_settings');
  assertError(t, wrongMethod, 'Method Not Allowed (PUT)', {
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  });
  t.same(wrongMethod.body.allowed_methods, ['GET']);
});

t.test('bodies over the limit are refused with 413 before being buffered whole', async (t) => {
  const { api, url, fx } = await startServer(t, { maxRequestBytes: 1024 });
  const auth = basicAuth(fx.users.iago!.email, fx.users.iago!.api_key);
  // Declared too large: refused from the header alone (no body is sent at all).
  const declared = await rawRequest(url, {
    method: 'POST',
    path: '/api/v1/users',
    headers: {
      authorization: auth,
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': '5000000',
    },
  });
  assertError(t, declared, 'Request body too large (limit: 1024 bytes)', {
    status: 413,
    code: 'REQUEST_TOO_LARGE',
  });
  // Chunked, no declared length: cut off once it passes the limit.
  const streamed = await rawRequest(url, {
    method: 'POST',
    path: '/api/v1/users',
    headers: {
      authorization: auth,
      'content-type': 'application/x-www-form-urlencoded',
      'transfer-encoding': 'chunked',
    },
    body: 'full_name=' + 'x'.repeat(4096),
  });
  assertError(t, streamed, 'Request body too large (limit: 1024 bytes)', {
    status: 413,
    code: 'REQUEST_TOO_LARGE',
  });
  // Under the limit still works.
  assertSuccess(t, await api.get('hamlet', 'users/me'));
});

t.test('a handler that throws answers 500 JSON and the server keeps serving', async (t) => {
  const { api } = await startServer(t);
  const logged = captureLog(t);
  for (const method of ['GET', 'POST'] as const) {
    const res = await api.request(method, null, '/api/v1/__test/fail');
    t.equal(res.status, 500);
    t.same(res.body, {
      result: 'error',
      msg: 'Internal server error',
      code: 'INTERNAL_SERVER_ERROR',
    });
  }
  const failures = logged.filter((l) => l.level === 'error');
  t.equal(failures.length, 2, 'each failure was logged');
  t.match(failures[0], { err: { stack: /Error/ } }, 'with its stack');
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'still serving');
});

t.test('an unsupported content type is refused', async (t) => {
  const { url, fx } = await startServer(t);
  const res = await rawRequest(url, {
    method: 'POST',
    path: '/api/v1/users',
    headers: {
      authorization: basicAuth(fx.users.iago!.email, fx.users.iago!.api_key),
      'content-type': 'image/png',
    },
    body: 'x',
  });
  assertError(t, res, 'Unsupported content type: image/png', {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  });
});

t.test('a JSON body that is not an object is malformed', async (t) => {
  const { url, fx } = await startServer(t);
  const res = await rawRequest(url, {
    method: 'POST',
    path: '/api/v1/users',
    headers: {
      authorization: basicAuth(fx.users.iago!.email, fx.users.iago!.api_key),
      'content-type': 'application/json',
    },
    body: '[1,2',
  });
  assertError(t, res, 'Malformed JSON', { code: 'INVALID_JSON' });
});

t.test('a large answer reaches a slow reader whole, and its connection serves on', async (t) => {
  const { api, url, fx } = await startServer(t);
  // Twenty messages of 9,000 characters: the history below is about 200 KB of JSON, so it goes
  // out a slice at a time as the reader takes it (src/http/respond.ts sendInSlices).
  assertSuccess(
    t,
    await api.post('iago', 'users/me/subscriptions', { subscriptions: [{ name: 'big' }] }),
  );
  for (let i = 0; i < 20; i++) {
    const content = `${i} ${'abcdefghi '.repeat(900).trim()}`;
    assertSuccess(
      t,
      await api.post('iago', 'messages', { type: 'stream', to: 'big', topic: 't', content }),
    );
  }
  const iago = fx.users.iago!;
  const path = '/api/v1/messages?anchor=newest&num_before=50&num_after=0&apply_markdown=false';
  const head =
    `GET ${path} HTTP/1.1\r\nHost: x\r\n` +
    `Authorization: ${basicAuth(iago.email, iago.api_key)}\r\n\r\n`;
  const { port } = new URL(url);
  const sock = net.connect(Number(port), '127.0.0.1');
  t.teardown(() => sock.destroy());
  await once(sock, 'connect');
  sock.pause();
  let received = Buffer.alloc(0);
  /** Reads (slowly: a chunk every 5 ms) until one whole answer is in; returns its status and body. */
  const readAnswer = async (): Promise<{ status: number; body: string }> => {
    for (;;) {
      const end = received.indexOf('\r\n\r\n');
      if (end !== -1) {
        const headText = received.subarray(0, end).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(headText)?.[1] ?? 0);
        if (received.length >= end + 4 + length) {
          const body = received.subarray(end + 4, end + 4 + length).toString('utf8');
          received = Buffer.from(received.subarray(end + 4 + length));
          return { status: Number(headText.slice(9, 12)), body };
        }
      }
      await new Promise((r) => setTimeout(r, 5));
      const chunk =
        (sock.read() as Buffer | null) ?? (await once(sock, 'readable'), Buffer.alloc(0));
      received = Buffer.concat([received, chunk]);
    }
  };
  sock.write(head);
  const first = await readAnswer();
  t.equal(first.status, 200);
  t.ok(first.body.length > 150_000, `a large answer (${first.body.length} bytes)`);
  const messages = (JSON.parse(first.body) as { messages: { content: string }[] }).messages;
  t.equal(messages.length, 20, 'every message, intact');
  t.same(
    messages.map((m) => m.content),
    messages.map((_, i) => `${i} ${'abcdefghi '.repeat(900).trim()}`),
  );
  // The same connection answers the next request.
  sock.write(head.replace(path, '/api/v1/users/me'));
  const second = await readAnswer();
  t.equal(second.status, 200);
  t.equal((JSON.parse(second.body) as { email: string }).email, iago.email);
});

t.test('a large answer in a non-Latin script goes out whole', async (t) => {
  const { api } = await startServer(t);
  // Eight messages of 9,000 characters of three UTF-8 bytes each: over 64 KiB of characters, so
  // the answer goes out a slice at a time, and three times that in bytes.
  assertSuccess(
    t,
    await api.post('iago', 'users/me/subscriptions', { subscriptions: [{ name: 'wide' }] }),
  );
  const text = (i: number) => `${i} ${'日本語の文章'.repeat(1500)}`;
  for (let i = 0; i < 8; i++)
    assertSuccess(
      t,
      await api.post('iago', 'messages', {
        type: 'stream',
        to: 'wide',
        topic: 't',
        content: text(i),
      }),
    );
  const res = await api.get('iago', 'messages', {
    anchor: 'newest',
    num_before: 50,
    num_after: 0,
    apply_markdown: false,
    narrow: JSON.stringify([{ operator: 'channel', operand: 'wide' }]),
  });
  assertSuccess(t, res);
  t.ok(Buffer.byteLength(res.text) > 3 * 64 * 1024, `${Buffer.byteLength(res.text)} bytes`);
  t.same(
    (res.body.messages as { content: string }[]).map((m) => m.content),
    [0, 1, 2, 3, 4, 5, 6, 7].map(text),
    'every message, intact',
  );
  // The server serves on.
  assertSuccess(t, await api.get('iago', 'users/me'));
});
