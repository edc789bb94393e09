/**
 * The server's side of the real web app (issue 30 Part A; docs/web.md), in chromium: the app
 * page's headers and policy with the app running under it (nothing blocked), a wrong password
 * shown as the app's error with no login dialog, the right one landing in the app, a reload
 * keeping the session, an upload loading as an <img> through the cookie, no API key anywhere a
 * script can read, nothing asked of an outside host (avatars included), and logout ending the
 * session so that a media URL then answers 401. test/browser/server-side.test.ts checks the same
 * server behaviour against a fixture page, whatever the client does.
 */
import t from 'tap';
import type { Request } from 'playwright-core';
import { assertSuccess } from '../helpers/api.js';
import { waitFor, waitLive } from '../helpers/app.js';
import {
  fetchInPage,
  fillLogin,
  launchBrowser,
  NO_CHROMIUM,
  screenshot,
  watchPage,
} from '../helpers/browser.js';
import { createChannel } from '../helpers/channels.js';
import { tinyPng } from '../helpers/images.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { upload } from '../helpers/uploads.js';

if (NO_CHROMIUM) t.plan(0, NO_CHROMIUM);

t.test('the real app: login, session, media, no key, no outside host, logout', async (t) => {
  if (NO_CHROMIUM) return;
  const browser = await launchBrowser(t);
  const { url, fx, api } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const everyone = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  const ch = await createChannel(api, 'othello', 'photos', { principals: everyone });
  const up = assertSuccess(
    t,
    await upload(api, 'othello', [{ filename: 'dot.png', data: tinyPng() }]),
  );
  const fileUrl = up.url as string;
  await sendChannelMessage(api, 'othello', ch, 'pictures', `A picture: [dot.png](${fileUrl})`);

  const page = await browser.newPage();
  const watch = await watchPage(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const origin = new URL(url).origin;
  const outside: string[] = [];
  const jsonBodies: Promise<string>[] = [];
  page.on('request', (req: Request) => {
    const u = new URL(req.url());
    if (u.protocol.startsWith('http') && u.origin !== origin) outside.push(req.url());
  });
  page.on('response', (res) => {
    if (new URL(res.url()).pathname.startsWith('/json/'))
      jsonBodies.push(res.text().catch(() => ''));
  });

  const response = await page.goto(`${url}/#narrow/channel/${ch}-photos`);
  const headers = response!.headers();
  t.match(headers['content-security-policy'], /^default-src 'none'; script-src 'self';/);
  t.equal(headers['cache-control'], 'no-cache');
  t.ok(headers.etag, 'an ETag');
  await page.waitForSelector('input[name="username"]');
  t.same(watch.consoleErrors, [], 'a first visit asks for its session and logs no error (no 401)');
  await screenshot(page, t, 'login');

  await fillLogin(page, hamlet.email, 'not the password');
  await page.waitForSelector('[role="alert"]');
  t.match(await page.textContent('[role="alert"]'), /password/i, 'the error, in the app');
  await screenshot(page, t, 'wrong-password');

  await fillLogin(page, hamlet.email, hamlet.password);
  await waitLive(page);
  await screenshot(page, t, 'logged-in');
  t.equal(
    (await page.context().cookies(url)).find((c) => c.name === 'confab_session')?.httpOnly,
    true,
    'an HttpOnly session cookie',
  );

  // The upload in the message loads through the cookie (its link, or its thumbnail).
  await waitFor(
    page,
    `[...document.querySelectorAll('.messages img')].some((i) => i.src.includes('/user_uploads/') && i.complete && i.naturalWidth > 0)`,
  );
  t.pass('an upload shown as an <img>, through the session cookie');

  await page.reload();
  await waitLive(page);
  t.pass('a reload keeps the session');

  const visible = await page.evaluate<string>(`JSON.stringify({
    cookie: document.cookie,
    local: { ...localStorage },
    session: { ...sessionStorage },
    html: document.documentElement.outerHTML,
  })`);
  t.notOk(visible.includes(hamlet.api_key), 'no API key in the page, its cookies or storage');
  const bodies = await Promise.all(jsonBodies);
  t.ok(bodies.length > 3, `${bodies.length} answers the page received`);
  t.notOk(
    bodies.some((b) => b.includes(hamlet.api_key)),
    'none of them holds the API key',
  );
  t.same(outside, [], 'nothing asked of another host (avatars, icons, fonts)');

  await page.click('.me');
  await page.click('text=Log out');
  await page.waitForSelector('input[name="username"]');
  await screenshot(page, t, 'logged-out');
  t.same(
    await fetchInPage(page, fileUrl),
    { status: 401, challenge: 'Session realm="confab"' },
    'after logout a media URL answers 401, with no Basic challenge',
  );
  await page.reload();
  await page.waitForSelector('input[name="username"]');
  t.pass('still logged out after a reload');

  t.same(dialogs, [], 'no dialog');
  // A failed login is a 401 (asking for the session before it is not).
  watch.assertClean(t, /status of 401|WebSocket/);
});

t.test('after a logout the app asks for no session: no 401 on the login page', async (t) => {
  if (NO_CHROMIUM) return;
  const browser = await launchBrowser(t);
  const { url, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const page = await browser.newPage();
  const watch = await watchPage(page);
  const asked: string[] = [];
  let settings = 0;
  page.on('request', (req: Request) => {
    const path = new URL(req.url()).pathname;
    if (path === '/json/session') asked.push(req.method());
    if (path === '/api/v1/server_settings') settings++;
  });

  await page.goto(url + '/');
  await page.waitForSelector('input[name="username"]');
  t.same(asked, ['GET'], 'a first visit asks (a session may predate what the browser recorded)');
  await waitFor(page, `document.querySelector('h1')?.textContent === 'Log in to Zulip Dev'`);
  t.equal(settings, 1, "the login form asks for the server's settings (the realm's name)");
  await fillLogin(page, hamlet.email, hamlet.password);
  await waitLive(page);
  // The app's are the login form's answer, not asked again (what a reload asks below).
  // (Live: registered, its request made long before.)
  t.equal(settings, 1, 'the app opened from the login form does not ask again');
  await page.reload();
  await waitLive(page);
  t.same(asked, ['GET', 'GET'], 'a reload asks, and keeps the session');
  t.equal(settings, 2, 'the app opened by the session asks for its own');

  await page.click('.me');
  await page.click('text=Log out');
  await page.waitForSelector('input[name="username"]');
  const errors = watch.consoleErrors.length;
  await page.reload();
  await page.waitForSelector('input[name="username"]');
  await page.goto(url + '/');
  await page.waitForSelector('input[name="username"]');
  t.same(asked, ['GET', 'GET'], 'after the logout, the login page asks nothing');
  t.same(watch.consoleErrors.slice(errors), [], 'and logs no error (no 401)');
  await screenshot(page, t, 'login-after-logout');

  await fillLogin(page, hamlet.email, hamlet.password);
  await waitLive(page);
  await page.reload();
  await waitLive(page);
  t.pass('logged in again: a reload keeps the session');
  watch.assertClean(t, /status of 401|WebSocket/);
});

t.test(
  'logged out from the settings, the next login opens the app, not the settings',
  async (t) => {
    if (NO_CHROMIUM) return;
    const browser = await launchBrowser(t);
    const { url, fx } = await startServer(t);
    const hamlet = fx.users.hamlet!;
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await page.goto(url + '/#narrow/is/starred');
    await fillLogin(page, hamlet.email, hamlet.password);
    await waitLive(page);
    await page.click('.sidebar-foot button[aria-label="Settings"]');
    await page.waitForSelector('.settings h3:has-text("Account")');
    await page.click('text=Log out');
    await page.waitForSelector('input[name="username"]');
    t.equal(await page.evaluate('location.hash'), '', 'the logout leaves no view in the address');

    // Someone else at the same browser logs in.
    const othello = fx.users.othello!;
    await fillLogin(page, othello.email, othello.password);
    await waitLive(page);
    t.equal(await page.locator('.settings').count(), 0, 'no settings open');
    t.equal(await page.evaluate('location.hash'), '', 'the app at its start');
    watch.assertClean(t, /status of 401|WebSocket/);
  },
);
