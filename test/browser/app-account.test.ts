/**
 * The user's own API key in the web app (Settings → Account; web/app/settings.tsx, the server's
 * POST /json/fetch_api_key and POST /users/me/api_key/regenerate): shown only when asked for,
 * for the password (a wrong one said so), with a zuliprc to download; a new key made from the
 * app works and the old one stops, the page that made it stays logged in and the user's other
 * browser session ends (its toast shown above the settings dialog, at 1280 pixels and 390);
 * hidden again, the key is gone from the page. The name and the password changed there (a wrong
 * current password said so; the other session ends, the new password logs in). In chromium.
 */
import fs from 'node:fs';
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor } from '../helpers/app.js';
import { fillLogin, NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { assertSuccess } from '../helpers/api.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

const KEY = 'input[aria-label="Your API key"]';

/** Whether the first toast is what the page shows at its middle (nothing drawn over it). */
function toastOnTop(page: Page): Promise<boolean> {
  return page.evaluate<boolean>(`(() => {
    const r = document.querySelector('.toast').getBoundingClientRect();
    return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)?.closest('.toast') != null;
  })()`);
}

/**
 * Whether the toasts leave the open dialog's header clear: none overlaps its title or its close
 * button, and the close button is what a click at its middle reaches (after the layout settled).
 */
async function dialogClear(page: Page): Promise<boolean> {
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))`);
  return page.evaluate<boolean>(`(() => {
    const close = document.querySelector('.dialog .close');
    const title = document.querySelector('.dialog h2');
    const hit = (a, b) =>
      a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    for (const toast of document.querySelectorAll('.toast')) {
      const r = toast.getBoundingClientRect();
      if (hit(r, close.getBoundingClientRect()) || hit(r, title.getBoundingClientRect())) return false;
    }
    const c = close.getBoundingClientRect();
    return document.elementFromPoint(c.x + c.width / 2, c.y + c.height / 2)?.closest('.close') === close;
  })()`);
}

t.test('the API key: shown for the password, renewed, hidden', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  const other = await openApp(b, ts.url, ts.fx, 'hamlet');
  t.notOk((await page.content()).includes(hamlet.api_key), 'no key in the page at first');

  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.waitForSelector('.settings h3:has-text("Account")');
  await page.click('button:has-text("Show my API key")');
  await page.fill('input[aria-label="Your password"]', 'not my password');
  await page.click('button:has-text("Show the key")');
  await page.waitForSelector('.api-key [role="alert"]:has-text("Password is incorrect")');
  t.equal(await page.locator(KEY).count(), 0, 'a wrong password shows nothing');
  await page.fill('input[aria-label="Your password"]', hamlet.password);
  await page.click('button:has-text("Show the key")');
  await page.waitForSelector(KEY);
  t.equal(await page.inputValue(KEY), hamlet.api_key, 'the key, for the password');
  await screenshot(page, t, 'api-key-1280');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('a:has-text("Download zuliprc")'),
  ]);
  t.equal(download.suggestedFilename(), 'zuliprc');
  const file = fs.readFileSync(await download.path(), 'utf8');
  t.equal(
    file,
    `[api]\nemail=${hamlet.email}\nkey=${hamlet.api_key}\nsite=${new URL(ts.url).origin}\n`,
    'a zuliprc with the e-mail, the key and the site',
  );

  // Asked in the app's dialog, over the settings: Esc declines it (the settings stay open).
  const question = page.getByRole('alertdialog', { name: 'Make a new API key?' });
  await page.click('button:has-text("Make a new key")');
  await question.waitFor();
  await screenshot(page, t, 'confirm-api-key');
  await page.keyboard.press('Escape');
  await question.waitFor({ state: 'detached' });
  t.ok(await page.locator('.settings').isVisible(), 'declined: the settings still open');
  t.equal(await page.inputValue(KEY), hamlet.api_key, 'and the key unchanged');
  await page.click('.api-key button:has-text("Make a new key")');
  await question.getByRole('button', { name: 'Make a new key' }).click();
  await waitFor(
    page,
    `document.querySelector('${KEY}').value !== ${JSON.stringify(hamlet.api_key)}`,
  );
  const fresh = await page.inputValue(KEY);
  t.match(fresh, /^[A-Za-z0-9]{32}$/, 'a new key shown');
  // Its toast is shown above the settings dialog, at 1280 pixels and on a phone.
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    // The toast was there before the resize: waited for is the page at its new width.
    await waitFor(page, `innerWidth === ${width}`);
    await page.waitForSelector('.toast:has-text("A new API key was made.")');
    await page.evaluate(
      `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))`,
    );
    await screenshot(page, t, `toast-over-dialog-${width}`);
    t.ok(await toastOnTop(page), `the toast is above the dialog at ${width} pixels`);
    t.ok(await dialogClear(page), `and covers none of its header at ${width} pixels`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  t.equal((await ts.api.get('hamlet', 'users/me')).status, 401, 'the old key stopped working');
  assertSuccess(t, await ts.api.get({ ...hamlet, api_key: fresh }, 'users/me'), 'the new works');
  const status = (p: typeof page) =>
    p.evaluate<number>(`fetch('/json/session').then((r) => r.status)`);
  t.equal(await status(page), 200, 'this page is still logged in');
  t.equal(await status(other.page), 401, "the user's other browser session ended");

  await page.click('.api-key button:has-text("Hide")');
  await page.waitForSelector('button:has-text("Show my API key")');
  t.notOk((await page.content()).includes(fresh), 'hidden: the key is gone from the page');
  // The wrong password's answer (400) is logged by the browser.
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});

t.test('name and password changed from Settings → Account', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  const other = await openApp(b, ts.url, ts.fx, 'hamlet');
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.waitForSelector('.settings h3:has-text("Account")');

  await page.fill('input[aria-label="Your name"]', '  Hamlet, Prince of Denmark ');
  await page.press('input[aria-label="Your name"]', 'Enter');
  await waitFor(
    page,
    `document.querySelector('.sidebar-foot').textContent.includes('Hamlet, Prince of Denmark')`,
  );
  const me = await ts.api.get('hamlet', 'users/me');
  t.equal(me.body.full_name, 'Hamlet, Prince of Denmark', 'the name, trimmed, on the server');

  await page.click('button:has-text("Change my password")');
  await page.fill('input[aria-label="Current password"]', 'not my password');
  await page.fill('input[aria-label="New password"]', 'a much better one');
  await page.click('button:has-text("Change password")');
  await page.waitForSelector('.account-form [role="alert"]:has-text("Wrong password")');
  t.pass('a wrong current password said so');
  await page.fill('input[aria-label="Current password"]', hamlet.password);
  await page.click('button:has-text("Change password")');
  await page.waitForSelector('.toast:has-text("Your password was changed")');
  t.equal(await page.locator('input[aria-label="New password"]').count(), 0, 'the form closes');

  // This page stays logged in; the other session of the user ends; the new password logs in.
  await page.reload();
  await page.waitForSelector('.sidebar-foot');
  t.pass('this browser stays logged in');
  await other.page.reload();
  await other.page.waitForSelector('input[name="password"]');
  t.pass('the other session is logged out');
  await fillLogin(other.page, hamlet.email, 'a much better one');
  await other.page.waitForSelector('.sidebar-foot');
  t.pass('the new password logs in');
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});
