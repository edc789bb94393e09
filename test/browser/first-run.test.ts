/**
 * The issue's "done when", end to end as a new user meets it: the server started as `npm start`
 * starts it (node dist/src/main.js on a fresh data directory, its own defaults but the port),
 * the URL its banner prints opened in chromium, the owner logged in with the first-start
 * credentials, a colleague invited through the app's own flow (an invitation link made in the
 * settings, opened in a second browser context), the colleague signing up on the invitation page
 * and landing in the app, and the two chatting: each message shown to the other after arriving as
 * a frame of the browsers' event WebSocket (/json/events/socket).
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { waitFor, waitForTitle, waitLive, waitMessage } from '../helpers/app.js';
import {
  fillLogin,
  launchBrowser,
  NO_CHROMIUM,
  screenshot,
  watchPage,
} from '../helpers/browser.js';
import { firstOwner, startChild } from '../helpers/child-server.js';

if (NO_CHROMIUM) t.plan(0, NO_CHROMIUM);

/** The texts of every frame a page received on its event WebSocket (JSON or MessagePack). */
function socketFrames(page: Page): string[] {
  const frames: string[] = [];
  page.on('websocket', (ws) => {
    if (!new URL(ws.url()).pathname.endsWith('/json/events/socket')) return;
    ws.on('framereceived', (f) =>
      frames.push(typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8')),
    );
  });
  return frames;
}

/** Until a frame of the page's event socket carried `text`. */
async function viaSocket(frames: string[], text: string): Promise<void> {
  for (let i = 0; !frames.some((f) => f.includes(text)); i++) {
    if (i > 600) throw new Error(`no socket frame carried ${JSON.stringify(text)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('first start to two colleagues chatting live in two browsers', async (t) => {
  if (NO_CHROMIUM) return;
  const dataDir = t.testdir();
  // As `npm start` runs: its defaults (rate limits on, the built app in dist/web), port 0.
  const server = await startChild(dataDir, { RATE_LIMITING: 'on' });
  t.teardown(() => server.kill('SIGKILL'));
  const banner = await server.waitFor(/Confab is ready: open (\S+) in a browser\./);
  const url = banner[1]!;
  const owner = firstOwner(dataDir);
  t.equal(url, owner.realmUrl, 'the banner prints the realm’s URL');

  const b = await launchBrowser(t);
  const open = async () => {
    const page = await b.newPage();
    const watch = await watchPage(page);
    return { page, watch, frames: socketFrames(page) };
  };

  // The owner opens the printed URL and logs in with the printed credentials.
  const own = await open();
  await own.page.goto(url);
  await own.page.waitForSelector('input[name="username"]');
  await fillLogin(own.page, owner.email, owner.password);
  await waitLive(own.page);
  t.match(await own.page.textContent('.me'), /Organization Owner/, 'the owner, in the app');

  // An invitation link, made in the app's settings.
  await own.page.click('.sidebar-foot button[aria-label="Settings"]');
  await own.page.click('.settings nav a:has-text("Invite people")');
  await own.page.click('text=Create an invitation link');
  await own.page.waitForSelector('input[aria-label="Invitation link"]');
  const link = await own.page.inputValue('input[aria-label="Invitation link"]');
  t.ok(link.startsWith(`${url}/join/`), `a link on the server's URL: ${link}`);
  await screenshot(own.page, t, 'owner-invites');
  await own.page.keyboard.press('Escape');

  // The colleague, in a browser context of their own, signs up on it and lands in the app.
  const col = await open();
  await col.page.goto(link);
  await col.page.fill('input[name="email"]', 'ada@example.com');
  await col.page.fill('input[name="full_name"]', 'Ada Lovelace');
  await col.page.fill('input[name="password"]', 'analytical-engine');
  await screenshot(col.page, t, 'colleague-signs-up');
  await col.page.click('button[type="submit"]');
  await col.page.waitForSelector('.app[data-status="live"] .inbox-view');
  t.equal(new URL(col.page.url()).pathname, '/', 'the sign-up ends in the app (the Inbox)');
  // All messages, where the compose box is.
  await col.page.click('.sidebar .nav-item:has-text("All messages")');
  await waitForTitle(col.page, 'All messages');
  await waitLive(col.page);
  t.match(await col.page.textContent('.me'), /Ada Lovelace/, 'logged in as the new colleague');

  // The colleague writes to the owner; the owner answers. Each message reaches the other's
  // browser as a frame of its event socket, and shows.
  await col.page.click('button[aria-label="New direct message"]');
  await col.page.waitForSelector('#compose-dm:focus');
  await col.page.keyboard.type('Organization');
  // The realm's people arrive just after the first screen: the name is taken from its
  // suggestion, and the second Enter (on to the message) only once it is a recipient (else the
  // message would be typed into the recipient field).
  await col.page.waitForSelector('[role="option"]:has-text("Organization Owner")');
  await col.page.keyboard.press('Enter');
  await col.page.waitForSelector('.pill >> text=Organization Owner');
  await col.page.keyboard.press('Enter');
  await col.page.keyboard.type('Hello from Ada');
  await col.page.keyboard.press('Enter');
  await viaSocket(own.frames, 'Hello from Ada');
  t.pass('the owner’s browser received it on its WebSocket');
  await waitFor(
    own.page,
    `[...document.querySelectorAll('.sidebar .nav-item .label')].some((e) => e.textContent === 'Ada Lovelace')`,
  );
  // The conversation waited for by its title: the view clicked from (all messages) shows Ada's
  // message too, and an answer typed there would not go to her.
  await own.page.click('.sidebar a.nav-item:has-text("Ada Lovelace")');
  await waitForTitle(own.page, 'Ada Lovelace');
  await waitMessage(own.page, 'Hello from Ada');
  await own.page.click('#compose-text');
  await own.page.keyboard.type('Welcome aboard, Ada');
  await own.page.keyboard.press('Enter');
  await viaSocket(col.frames, 'Welcome aboard, Ada');
  t.pass('the colleague’s browser received the answer on its WebSocket');
  await col.page.click('.sidebar a.nav-item:has-text("Organization Owner")');
  await waitForTitle(col.page, 'Organization Owner');
  await waitMessage(col.page, 'Welcome aboard, Ada');
  await screenshot(own.page, t, 'owner-chats');
  await screenshot(col.page, t, 'colleague-chats');
  // The owner's page asked for its session before logging in: no session, and no error.
  own.watch.assertClean(t);
  col.watch.assertClean(t);
});
