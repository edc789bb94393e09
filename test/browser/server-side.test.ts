/**
 * The server's side of the browser app, in Debian's chromium (issue 30 Part A; docs/web.md):
 * the page's headers and Content-Security-Policy as the browser enforces them, a wrong password
 * shown as an error with no login dialog (nor for a failed <img> or fetch), the session cookie
 * (HttpOnly, SameSite=Lax) surviving a reload and ended by logout, media loading through the
 * cookie and refused after logout, no API key anywhere a script can read, and a page of another
 * site unable to act with the session. Against a fixture build (test/helpers/fixture-app.ts), so
 * that these hold whatever the client does; the client's own tests drive the real app.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { assertSuccess } from '../helpers/api.js';
import { waitFor } from '../helpers/app.js';
import { until } from '../helpers/events.js';
import {
  fetchInPage,
  fillLogin,
  NO_CHROMIUM,
  screenshot,
  watchPage,
  type PageWatch,
} from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import type { Fixture } from '../helpers/fixtures.js';
import { writeFixtureApp } from '../helpers/fixture-app.js';
import { tinyPng } from '../helpers/images.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { upload } from '../helpers/uploads.js';

/** The real server serving the fixture build, on a port of its own, with a fresh data dir. */
async function serverWithApp(t: Test): Promise<TestServer> {
  const root = t.testdir();
  const webDir = writeFixtureApp(path.join(root, 'web'));
  return startServer(t, { webDir, dataDir: path.join(root, 'data') });
}

/**
 * A page of another site than the app's (localhost is not 127.0.0.1), without the app's policy
 * (a JSON answer), so that what it may do is decided by the server alone.
 */
function crossSitePage(url: string): string {
  return `${url.replace('127.0.0.1', 'localhost')}/api/v1/server_settings`;
}

async function state(page: Page, want: string): Promise<void> {
  await page.waitForSelector(`body[data-state="${want}"]`);
}

/** Loads `src` as an <img> in the page: its natural width, or -1 when it failed. */
function loadImage(page: Page, src: string): Promise<number> {
  return page.evaluate(`new Promise((resolve) => {
    const img = document.createElement('img');
    img.onload = () => resolve(img.naturalWidth);
    img.onerror = () => resolve(-1);
    img.src = ${JSON.stringify(src)};
    document.body.append(img);
  })`);
}

const { b } = browserSuite(t);

/** A page of its own context, logged in as hamlet on `url`'s fixture app, and its watch. */
async function loggedIn(url: string, fx: Fixture): Promise<{ page: Page; watch: PageWatch }> {
  const page = await b.newPage();
  const watch = await watchPage(page);
  await page.goto(url);
  await state(page, 'login');
  await fillLogin(page, fx.users.hamlet!.email, fx.users.hamlet!.password);
  await state(page, 'app');
  return { page, watch };
}

t.test('in chromium: the page, login, media, reload, logout', async (t) => {
  if (NO_CHROMIUM) return;
  const { url, fx, api } = await serverWithApp(t);
  const hamlet = fx.users.hamlet!;
  const up = assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'dot.png', data: tinyPng() }]),
  );
  const fileUrl = up.url as string;

  const page = await b.newPage();
  const watch = await watchPage(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const jsonBodies: string[] = [];
  page.on('response', (res) => {
    if (new URL(res.url()).pathname.startsWith('/json/'))
      void res.text().then(
        (text) => jsonBodies.push(text),
        () => undefined,
      );
  });

  const response = await page.goto(url);
  t.equal(response!.status(), 200);
  const headers = response!.headers();
  t.match(headers['content-security-policy'], /script-src 'self';/);
  t.equal(headers['referrer-policy'], 'same-origin');
  t.equal(headers['x-content-type-options'], 'nosniff');
  await state(page, 'login');
  t.equal(
    await page.evaluate('getComputedStyle(document.body).fontFamily'),
    'sans-serif',
    "the build's stylesheet applies",
  );
  await screenshot(page, t, 'login');

  // Not logged in: a failed <img> and a failed fetch of browser routes ask for no password.
  t.equal(await loadImage(page, fileUrl), -1, 'an upload without the session fails');
  t.same(await fetchInPage(page, '/json/users/me'), {
    status: 401,
    challenge: 'Session realm="confab"',
  });
  t.equal(await loadImage(page, `/avatar/${hamlet.id}`), -1, 'an avatar without the session');

  await fillLogin(page, hamlet.email, 'not the password');
  await state(page, 'error');
  t.equal(await page.textContent('#error'), 'Your username or password is incorrect');
  await screenshot(page, t, 'wrong-password');

  await fillLogin(page, hamlet.email, hamlet.password);
  await state(page, 'app');
  t.equal(await page.textContent('#who'), hamlet.email);
  await screenshot(page, t, 'logged-in');

  const cookies = await page.context().cookies(url);
  const session = cookies.find((c) => c.name === 'confab_session');
  t.ok(session, 'the session cookie');
  t.equal(session!.httpOnly, true, 'HttpOnly');
  t.equal(session!.sameSite, 'Lax', 'SameSite=Lax');
  t.equal(session!.path, '/');
  t.ok(session!.expires > Date.now() / 1000 + 13 * 86400, 'two weeks');

  // Nothing a script can read holds the API key or the session's secret.
  const visible = await page.evaluate<string>(`JSON.stringify({
    cookie: document.cookie,
    local: { ...localStorage },
    session: { ...sessionStorage },
    html: document.documentElement.outerHTML,
  })`);
  t.notOk(visible.includes(hamlet.api_key), 'no API key in the page, its cookies or storage');
  t.notOk(visible.includes(session!.value), 'the session cookie is not readable by script');
  t.ok(jsonBodies.length >= 3, `${jsonBodies.length} answers seen`);
  t.notOk(
    jsonBodies.some((b) => b.includes(hamlet.api_key)),
    'no answer the page received holds the API key',
  );

  // Media through the cookie.
  t.equal(await loadImage(page, fileUrl), 1, 'an upload loads as an <img>');
  const me = await fetchInPage(page, '/json/users/me');
  t.equal(me.status, 200, 'the API by session');

  await page.reload();
  await state(page, 'app');
  t.equal(await page.textContent('#who'), hamlet.email, 'a reload keeps the session');

  await page.click('#logout');
  await state(page, 'login');
  await screenshot(page, t, 'logged-out');
  t.same(
    await fetchInPage(page, fileUrl),
    { status: 401, challenge: 'Session realm="confab"' },
    'after logout a media URL answers 401',
  );
  t.equal(await loadImage(page, fileUrl), -1);
  const after = await page.context().cookies(url);
  t.notOk(
    after.some((c) => c.name === 'confab_session'),
    'the cookie is gone',
  );

  t.same(dialogs, [], 'no dialog opened');
  // Chromium reports each failed load (the 401s above) on the console.
  watch.assertClean(t, /status of 401/);
});

t.test('in chromium: the Content-Security-Policy holds against message HTML', async (t) => {
  if (NO_CHROMIUM) return;
  const { url, fx } = await serverWithApp(t);
  const { page, watch } = await loggedIn(url, fx);

  // HTML as a message could carry it, inserted as the client inserts the server's HTML.
  await page.evaluate(`(() => {
    document.getElementById('content').innerHTML =
      '<p>x<img src="/nothing.png" onerror="window.pwned = 1"></p>' +
      '<span id="tex" class="katex" style="color: rgb(200, 0, 0)">TeX</span>' +
      '<img id="outside" src="https://outside.example/track.png">';
    const s = document.createElement('script');
    s.textContent = 'window.pwned = 2';
    document.body.append(s);
  })()`);
  // The reports are asynchronous: wait for the three kinds.
  const kinds = ['script-src-attr', 'script-src-elem', 'img-src https://outside.example'];
  await until(
    () => kinds.every((k) => watch.cspViolations.some((v) => v.startsWith(k))),
    'the violations are reported',
  );
  t.equal(await page.evaluate('window.pwned === undefined'), true, 'no inline script ran');
  t.equal(
    await page.evaluate(`getComputedStyle(document.getElementById('tex')).color`),
    'rgb(200, 0, 0)',
    "a style attribute (KaTeX's) applies",
  );
  const blocked = watch.cspViolations.join('\n');
  t.match(blocked, /script-src-attr/, 'the onerror handler was blocked');
  t.match(blocked, /script-src-elem/, 'the inline <script> was blocked');
  t.match(blocked, /img-src https:\/\/outside\.example/, 'an outside image was blocked');
  t.notOk(blocked.includes('style-src'), 'no style attribute was blocked');
  await screenshot(page, t, 'message-html');
});

t.test('in chromium: a page of another site cannot act with the session', async (t) => {
  if (NO_CHROMIUM) return;
  const { url, fx, api } = await serverWithApp(t);
  const hamlet = fx.users.hamlet!;
  const { page } = await loggedIn(url, fx);

  // Another site (localhost is not 127.0.0.1) in the same browser, posting to the server: from
  // a page of that origin without our policy (a JSON answer), so that only the server decides.
  const other = await page.context().newPage();
  await other.goto(crossSitePage(url));
  const target = `${url}/json/users/me/status`;
  const answers: number[] = [];
  other.on('response', (res) => {
    if (res.url() === target) answers.push(res.status());
  });
  await other.evaluate(`fetch(${JSON.stringify(target)}, {
    method: 'POST',
    mode: 'no-cors',
    credentials: 'include',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'status_text=pwned',
  }).catch(() => undefined)`);
  // A form posted from there (a top-level navigation) too.
  const navigation = other.waitForNavigation();
  await other.evaluate(`(() => {
    const f = document.createElement('form');
    f.method = 'POST';
    f.action = ${JSON.stringify(target)};
    const i = document.createElement('input');
    i.name = 'status_text';
    i.value = 'pwned by form';
    f.append(i);
    document.body.append(f);
    f.submit();
  })()`);
  const landed = await navigation;
  t.equal(landed?.status(), 403, 'the form post is refused');
  t.same(answers, [403, 403], 'both reached the server and were refused');
  const status = assertSuccess(t, await api.get('hamlet', `users/${hamlet.id}/status`));
  t.notMatch(JSON.stringify(status), /pwned/, 'the status was not changed');
  t.equal(await page.textContent('#who'), hamlet.email, 'the session lives on');
});

t.test('in chromium: the event WebSocket by session, from the page only', async (t) => {
  if (NO_CHROMIUM) return;
  const { url, fx, api } = await serverWithApp(t);
  const hamlet = fx.users.hamlet!;
  const { page, watch } = await loggedIn(url, fx);

  // The page registers a queue (with its CSRF token) and opens the socket as a browser does.
  const queueId = await page.evaluate<string>(`fetch('/json/register', {
    method: 'POST',
    headers: { 'X-CSRF-Token': window.fixtureCsrf() },
    body: new URLSearchParams({ event_types: '["message"]' }),
  }).then((r) => r.json()).then((b) => b.queue_id)`);
  t.ok(queueId, 'a queue');
  const socketUrl = `${url.replace(/^http/, 'ws')}/json/events/socket?queue_id=${encodeURIComponent(queueId)}&last_event_id=-1`;
  await page.evaluate(`new Promise((resolve, reject) => {
    const ws = new WebSocket(${JSON.stringify(socketUrl)}, ['json']);
    window.socketFrames = [];
    ws.onmessage = (e) => window.socketFrames.push(JSON.parse(e.data));
    ws.onopen = () => resolve(true);
    ws.onerror = () => reject(new Error('the socket failed'));
  })`);
  const sent = assertSuccess(
    t,
    await api.post('othello', 'messages', { type: 'private', to: [hamlet.id], content: 'ping' }),
  );
  // Polled from here (app.ts waitFor): page.waitForFunction's own polling evaluates a string in
  // the page, which its Content-Security-Policy refuses (a violation on the console whenever the
  // first look comes too early).
  await waitFor(
    page,
    `window.socketFrames.some((f) => f.events.some((e) => e.type === 'message'))`,
  );
  const ids = await page.evaluate<number[]>(
    `window.socketFrames.flatMap((f) => f.events).filter((e) => e.type === 'message').map((e) => e.message.id)`,
  );
  t.same(ids, [sent.id], 'the message arrives over the socket');

  // A page of another site cannot open one with the session.
  const other = await page.context().newPage();
  await other.goto(crossSitePage(url));
  const opened = await other.evaluate<string>(`new Promise((resolve) => {
    const ws = new WebSocket(${JSON.stringify(socketUrl)});
    ws.onopen = () => resolve('open');
    ws.onclose = () => resolve('refused');
  })`);
  t.equal(opened, 'refused', 'refused from another site');
  // (The fixture asks GET /json/session before logging in: a 401 on the console.)
  watch.assertClean(t, /status of 401/);
});
