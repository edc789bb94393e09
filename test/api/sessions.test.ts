/**
 * Browser sessions (src/http/sessions.ts, src/endpoints/session.ts; docs/web.md "Sessions"):
 * POST /json/login and its cookie, GET /json/session, POST /json/logout; the /json/ mirror of the
 * API, by session only, with its CSRF defences; the media routes by session; and no Basic
 * challenge on any browser route. Against the real server, over real HTTP.
 */
import t from 'tap';
import { assertError, assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { tinyPng } from '../helpers/images.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { BrowserSession, sessionCookieValue } from '../helpers/session.js';
import { download, upload } from '../helpers/uploads.js';
import { withJsonMirror } from '../../src/http/json-mirror.js';
import { ENDPOINTS } from '../../src/endpoints/index.js';
import { sessionTokens } from '../../src/http/sessions.js';

t.test('login: the cookie, the answer, and wrong credentials', async (t) => {
  const { url, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;

  for (const [username, password] of [
    [hamlet.email, 'wrong'],
    ['nobody@zulip.com', 'secret-hamlet'],
    [hamlet.email, ''],
  ] as const) {
    const { response, session } = await BrowserSession.login(url, username, password);
    assertError(t, response, 'Your username or password is incorrect', {
      status: 401,
      code: 'AUTHENTICATION_FAILED',
    });
    t.equal(session, null);
    t.equal(response.headers['set-cookie'], undefined, 'no cookie');
    t.equal(response.headers['www-authenticate'], 'Session realm="confab"', 'never Basic');
  }

  const { response, session } = await BrowserSession.login(url, hamlet.email, hamlet.password);
  const body = assertSuccess(t, response, 'the right password');
  t.same(Object.keys(body).sort(), ['csrf_token', 'email', 'msg', 'result', 'user_id']);
  t.equal(body.user_id, hamlet.id);
  t.equal(body.email, hamlet.email);
  t.match(body.csrf_token, /^[A-Za-z0-9_-]{32}$/);
  t.notOk(response.text.includes(hamlet.api_key), 'the answer does not hold the API key');
  t.equal(response.headers['cache-control'], 'no-store');
  const cookie = String(response.headers['set-cookie']);
  t.match(
    cookie,
    /^confab_session=[A-Za-z0-9_-]{43}; Max-Age=1209600; Path=\/; HttpOnly; SameSite=Lax$/,
    'HttpOnly, SameSite=Lax, two weeks, not Secure over http',
  );
  t.not(session!.token, hamlet.api_key);
  t.not(session!.token, session!.csrfToken, 'the CSRF token is not the session');

  // Usernames are e-mail addresses, as fetch_api_key takes them (spaces around are forgiven).
  t.ok((await BrowserSession.login(url, ` ${hamlet.email} `, hamlet.password)).session);

  // GET /json/session: the same fields while the session lives.
  const again = assertSuccess(t, await session!.get('session'));
  t.same(again, body, 'GET /json/session answers as login did');
  const none = await rawRequest(url, { method: 'GET', path: '/json/session' });
  assertError(t, none, 'Not logged in: API authentication or user session required', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  t.equal(none.headers['www-authenticate'], 'Session realm="confab"');
  // optional=true: no session is an answer, not an error (what the app asks on load).
  const optional = { method: 'GET', path: '/json/session?optional=true' } as const;
  t.same(
    assertSuccess(t, await rawRequest(url, optional)),
    { result: 'success', msg: '', user_id: null, email: null, csrf_token: null },
    'optional=true without a session: 200, no user',
  );
  t.same(
    assertSuccess(t, await session!.get('session', { optional: true })),
    body,
    'optional=true with one: the same fields',
  );
  assertError(
    t,
    await rawRequest(url, { method: 'GET', path: '/json/session?optional=maybe' }),
    'optional is not valid JSON',
    { status: 400, code: 'INVALID_JSON' },
  );
  const noneAgain = await rawRequest(url, { method: 'GET', path: '/json/session?optional=false' });
  t.equal(noneAgain.status, 401, 'optional=false: a 401, as without it');
  const forged = await rawRequest(url, {
    method: 'GET',
    path: '/json/session',
    headers: { cookie: `confab_session=${'A'.repeat(43)}` },
  });
  t.equal(forged.status, 401, 'a made-up token');

  // A session of another realm's host is not one here.
  const ts2 = await startServer(t);
  const elsewhere = await rawRequest(ts2.url, {
    method: 'GET',
    path: '/json/session',
    headers: { cookie: `confab_session=${session!.token}` },
  });
  t.equal(elsewhere.status, 401, "another server's session");
});

t.test('login under https: a Secure cookie; realms and login methods', async (t) => {
  const { url, fx, server } = await startServer(t, { externalScheme: 'https' });
  const hamlet = fx.users.hamlet!;
  // The page's origin under https: what the Origin check compares with.
  const origin = { origin: `https://${new URL(url).host}` };
  const { response } = await BrowserSession.login(url, hamlet.email, hamlet.password, origin);
  assertSuccess(t, response);
  t.match(String(response.headers['set-cookie']), /; HttpOnly; SameSite=Lax; Secure$/);
  const plain = await BrowserSession.login(url, hamlet.email, hamlet.password);
  assertError(t, plain.response, /^CSRF error: Origin checking failed/, {
    status: 403,
    code: 'CSRF_FAILED',
  });

  const bad = await BrowserSession.login(url, hamlet.email, hamlet.password, {
    ...origin,
    host: 'nowhere.example.org',
  });
  t.equal(bad.response.status, 403, 'the page is not of this host');

  // The realm's login methods (GET /server_settings) decide: password login off.
  await server.context.realms.get(fx.realmId)!.ask('realm.update_settings', {
    acting_user_id: null,
    settings: { password_auth_enabled: false },
  });
  const off = await BrowserSession.login(url, hamlet.email, hamlet.password, origin);
  assertError(t, off.response, 'Password authentication is disabled in this organization', {
    status: 401,
    code: 'PASSWORD_AUTH_DISABLED',
  });
  t.equal(sessionCookieValue(off.response), null, 'no session');
});

t.test('/json/: every API endpoint, by session only', async (t) => {
  const { url, fx, api } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const session = await BrowserSession.must(url, hamlet);

  const me = assertSuccess(t, await session.get('users/me'));
  t.equal(me.user_id, hamlet.id);
  assertMatchesOpenApi(t, '/users/me', 'get', me);
  const viaApi = assertSuccess(t, await api.get('hamlet', 'users/me'));
  t.same(me, viaApi, 'the same answer as /api/v1');

  // The page registers a queue and polls it as the API's clients do.
  const reg = assertSuccess(
    t,
    await session.post('register', { event_types: ['message'], apply_markdown: true }),
  );
  t.ok(reg.queue_id, 'a queue');
  t.notOk(JSON.stringify(reg).includes(hamlet.api_key), 'register holds no API key');
  assertSuccess(
    t,
    await session.post('users/me/subscriptions', {
      subscriptions: JSON.stringify([{ name: 'Verona' }]),
    }),
    'a channel made from the page',
  );
  const sent = assertSuccess(
    t,
    await session.post('messages', {
      type: 'stream',
      to: 'Verona',
      topic: 'from the browser',
      content: 'hello from a session',
    }),
  );
  const polled = assertSuccess(
    t,
    await session.get('events', { queue_id: reg.queue_id, last_event_id: -1 }),
  );
  const events = polled.events as { type: string; message?: { id: number; content: string } }[];
  t.ok(
    events.some((e) => e.type === 'message' && e.message!.id === sent.id),
    'the message arrives on the queue',
  );

  // Basic never authenticates /json/, and its 401 never asks for it.
  const basic = await rawRequest(url, {
    method: 'GET',
    path: '/json/users/me',
    headers: { authorization: basicAuth(hamlet.email, hamlet.api_key) },
  });
  t.equal(basic.status, 401, 'the API key does not log in under /json/');
  t.equal(basic.headers['www-authenticate'], 'Session realm="confab"');
  // ... and the session cookie never authenticates /api/v1/, which keeps its challenge.
  const cookieOnApi = await rawRequest(url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { cookie: `confab_session=${session.token}` },
  });
  t.equal(cookieOnApi.status, 401);
  t.equal(cookieOnApi.headers['www-authenticate'], 'Basic realm="confab"', 'API clients: Basic');

  // Unknown paths and methods under /json/ are answered as under /api/v1/.
  const unknown = await session.get('no/such/thing');
  t.equal(unknown.status, 404);
  const wrongMethod = await session.request('PUT', 'users/me');
  t.equal(wrongMethod.status, 405);

  // Every /api/v1 endpoint has its /json/ twin (POST /json/fetch_api_key is its own).
  const mounted = withJsonMirror(ENDPOINTS);
  const routes = new Set(mounted.map((ep) => `${ep.method} ${ep.path}`));
  for (const ep of ENDPOINTS.filter((e) => e.path.startsWith('/api/v1/'))) {
    const twin = `${ep.method} /json/${ep.path.slice('/api/v1/'.length)}`;
    if (!routes.has(twin)) t.fail(`no ${twin}`);
  }
  // A twin's trailing `*name` is cut where its own path has it (/json/ is one segment shorter).
  for (const ep of mounted.filter((e) => e.wildcardDepth !== null))
    t.equal(ep.wildcardDepth, ep.path.split('/').length - 2, `${ep.path}: wildcard depth`);
  const twins = mounted.filter((ep) => ep.path.startsWith('/json/') && ep.sessionAuth === 'only');
  t.ok(twins.length > 100, `${twins.length} routes under /json/`);
  t.equal(
    mounted.find((ep) => ep.method === 'POST' && ep.path === '/json/fetch_api_key')?.auth,
    'user',
    "the browser's fetch_api_key needs the session",
  );
});

t.test('CSRF: unsafe methods need the token and the page itself', async (t) => {
  const { url, fx } = await startServer(t);
  const session = await BrowserSession.must(url, fx.users.hamlet!);
  const send = (opts: { headers?: Record<string, string>; csrf?: boolean }) =>
    session.post('users/me/status', { status_text: 'busy' }, opts);

  assertError(t, await send({ csrf: false }), 'CSRF error: CSRF token missing.', {
    status: 403,
    code: 'CSRF_FAILED',
  });
  assertError(
    t,
    await send({ headers: { 'x-csrf-token': 'x'.repeat(32) } }),
    'CSRF error: CSRF token incorrect.',
    { status: 403, code: 'CSRF_FAILED' },
  );
  const other = await BrowserSession.must(url, fx.users.othello!);
  t.equal(
    (await send({ headers: { 'x-csrf-token': other.csrfToken } })).status,
    403,
    "another session's token",
  );
  for (const site of ['cross-site', 'same-site']) {
    assertError(
      t,
      await send({ headers: { 'sec-fetch-site': site } }),
      'CSRF error: the request comes from another site.',
      { status: 403, code: 'CSRF_FAILED' },
    );
  }
  for (const origin of ['https://evil.example', 'null', 'http://127.0.0.1:1', 'not a url']) {
    const res = await send({ headers: { origin } });
    assertError(t, res, /^CSRF error: Origin checking failed/, {
      status: 403,
      code: 'CSRF_FAILED',
    });
  }
  assertSuccess(t, await send({}), 'the page, with its token');
  // A client that sends neither Origin nor Sec-Fetch-Site still needs the token.
  assertSuccess(
    t,
    await send({ headers: { origin: '', 'sec-fetch-site': '' } }),
    'no Origin, with the token',
  );
  // Safe methods need no token (a link or <img> may load them).
  assertSuccess(t, await session.get('users/me', {}, { headers: { 'sec-fetch-site': 'none' } }));

  // Logging in from another site is refused too (login CSRF); so is a cross-site logout.
  const hamlet = fx.users.hamlet!;
  const crossLogin = await BrowserSession.login(url, hamlet.email, hamlet.password, {
    origin: 'https://evil.example',
    'sec-fetch-site': 'cross-site',
  });
  assertError(t, crossLogin.response, 'CSRF error: the request comes from another site.', {
    status: 403,
    code: 'CSRF_FAILED',
  });
  t.equal(
    (await session.post('logout', {}, { headers: { 'sec-fetch-site': 'cross-site' } })).status,
    403,
  );
  assertSuccess(t, await session.get('session'), 'the session lives on');
});

t.test('logout ends the session; media by session; no Basic challenge', async (t) => {
  const { url, fx, api } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const up = assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'dot.png', data: tinyPng() }]),
  );
  const fileUrl = up.url as string;
  const session = await BrowserSession.must(url, hamlet);
  const cookie = { cookie: `confab_session=${session.token}` };

  const file = await download(api, null, fileUrl, cookie);
  t.equal(file.status, 200, 'an upload loads by the cookie, as an <img> does');
  t.same(file.body, tinyPng());
  const avatar = await download(api, null, `/avatar/${fx.users.othello!.id}`, cookie);
  t.equal(avatar.status, 302, 'an avatar');
  // A temporary URL (for a download link, a player), asked for by the session.
  const temporary = assertSuccess(
    t,
    await session.get(`user_uploads/${fileUrl.slice('/user_uploads/'.length)}`),
    'a temporary URL by session',
  );
  const byToken = await download(api, null, temporary.url as string);
  t.equal(byToken.status, 200, 'served without credentials');
  t.same(byToken.body, tinyPng());
  const viaKey = await download(api, 'hamlet', fileUrl);
  t.equal(viaKey.status, 200, 'API clients still use Basic on the same URL');
  // Its thumbnail (made in the background: waited for by the API key first).
  const thumbUrl = `/user_uploads/thumbnail/${fileUrl.slice('/user_uploads/'.length)}/840x560.webp`;
  for (let i = 0; (await download(api, 'hamlet', thumbUrl)).status !== 200; i++) {
    if (i > 600) throw new Error('no thumbnail made');
    await new Promise((r) => setTimeout(r, 50));
  }
  const thumb = await download(api, null, thumbUrl, cookie);
  t.equal(thumb.status, 200, 'a thumbnail loads by the cookie');
  t.equal(thumb.headers['content-type'], 'image/webp');
  const thumbAnon = await download(api, null, thumbUrl);
  t.equal(thumbAnon.status, 401, 'not without it');
  t.equal(thumbAnon.headers['www-authenticate'], 'Session realm="confab"');

  const withoutSession = await download(api, null, fileUrl);
  t.equal(withoutSession.status, 401);
  t.equal(withoutSession.headers['www-authenticate'], 'Session realm="confab"', 'no Basic dialog');
  const avatarAnon = await download(api, null, `/avatar/${hamlet.id}`);
  t.equal(avatarAnon.status, 401);
  t.equal(avatarAnon.headers['www-authenticate'], 'Session realm="confab"');
  const wrongKey = await download(api, { email: hamlet.email, api_key: 'wrong' }, fileUrl);
  t.equal(wrongKey.status, 401);
  t.equal(wrongKey.headers['www-authenticate'], 'Basic realm="confab"', 'an API client: Basic');

  const out = await session.post('logout');
  assertSuccess(t, out);
  t.equal(sessionCookieValue(out), '', 'the cookie is cleared');
  t.match(String(out.headers['set-cookie']), /Max-Age=0/);
  t.equal((await session.get('session')).status, 401, 'the old cookie no longer works');
  const after = await download(api, null, fileUrl, cookie);
  t.equal(after.status, 401, 'nor does it load a file');
  t.equal(after.headers['www-authenticate'], 'Session realm="confab"');
  // Logging out again, with a stale cookie or none, still answers success and clears it.
  assertSuccess(t, await session.post('logout'));
  assertSuccess(t, await session.post('logout', {}, { headers: { cookie: '' } }));
});

t.test('POST /json/fetch_api_key: the API key, for the password', async (t) => {
  const { url, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const session = await BrowserSession.must(url, hamlet);
  assertError(
    t,
    await session.post('fetch_api_key', { password: 'nope' }),
    'Password is incorrect.',
  );
  const key = assertSuccess(t, await session.post('fetch_api_key', { password: hamlet.password }));
  t.same(key, { result: 'success', msg: '', api_key: hamlet.api_key, email: hamlet.email });
  const anon = await rawRequest(url, { method: 'POST', path: '/json/fetch_api_key' });
  t.equal(anon.status, 401, 'needs the session');
});

t.test('the cookie header: the session among others', (t) => {
  const token = 'b'.repeat(43);
  t.same(sessionTokens(''), []);
  t.same(sessionTokens(`a=1; confab_session=${token}; z=2`), [token]);
  t.same(
    sessionTokens(`confab_session=short; confab_session=${token}`),
    [token],
    'malformed skipped',
  );
  t.same(sessionTokens(`xconfab_session=${token}`), [], 'another name');
  t.end();
});
