/**
 * The web app in chromium, inviting (issue 30 Part B 13, and the "done when"): an
 * administrator creates an invitation link in the app's settings; the invited person opens it in
 * another browser, signs up, and lands in the app logged in; the two then chat, live, each in
 * their browser. With a mail server, the settings also send e-mail invitations (a real SMTP
 * server on loopback), whose link signs the person up the same way. A member who may not invite
 * is told so, with nothing to fill in.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  openApp,
  openSettings,
  waitFor,
  waitForTitle,
  waitLive,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { linkIn, TestSmtp } from '../helpers/smtp.js';
import { startServer } from '../helpers/server.js';
import { createChannel } from '../helpers/channels.js';

const { b } = browserSuite(t);

/** The path (and query) of a link the server wrote with its external host. */
const pathOf = (link: string) => {
  const u = new URL(link);
  return u.pathname + u.search;
};

/**
 * Signs up on an invitation page and waits for the app: its home view (the Inbox, the default
 * web_home_view), then All messages from the sidebar (where the compose box is).
 */
async function signUp(
  page: Page,
  fields: { email?: string; name: string; password: string },
): Promise<void> {
  if (fields.email !== undefined) await page.fill('input[name="email"]', fields.email);
  await page.fill('input[name="full_name"]', fields.name);
  await page.fill('input[name="password"]', fields.password);
  await page.click('button[type="submit"]');
  await page.waitForSelector('.app[data-status="live"] .inbox-view');
  await page.click('.sidebar .nav-item:has-text("All messages")');
  await waitForTitle(page, 'All messages');
  await waitLive(page);
}

t.test(
  'an invitation link from the app; the new colleague lands in the app; they chat live',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    const admin = await openApp(b, ts.url, ts.fx, 'desdemona');
    await openSettings(admin.page, 'Invite people');
    t.equal(
      await admin.page.locator('text=E-mail addresses').count(),
      0,
      'no e-mail form: this server sends no mail',
    );
    await admin.page.click('text=Create an invitation link');
    await admin.page.waitForSelector('input[aria-label="Invitation link"]');
    const link = await admin.page.inputValue('input[aria-label="Invitation link"]');
    t.match(link, /\/join\/[a-z0-9]+\/$/, 'a link');
    await screenshot(admin.page, t, 'invite-link-1280');
    await admin.page.keyboard.press('Escape');

    const guest = await b.newPage();
    const watch = await watchPage(guest);
    // A browser where someone logged out before (the app then asks for no session on its own,
    // main.tsx): the invitation form's login still lands in the app.
    await guest.goto(ts.url + '/');
    await guest.waitForSelector('input[name="username"]');
    await guest.evaluate(`localStorage.setItem('confab.session', '0')`);
    await guest.goto(ts.url + pathOf(link));
    await signUp(guest, {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      password: 'analytical-engine',
    });
    t.match(await guest.textContent('.me'), /Ada Lovelace/, 'signed up, in the app, logged in');
    await guest.reload();
    await waitLive(guest);
    t.pass('still logged in after a reload');

    // Ada writes to Desdemona; each sees the other's message live.
    await guest.click('button[aria-label="New direct message"]');
    await guest.waitForSelector('#compose-dm:focus');
    await guest.keyboard.type('Desdem');
    // The suggestion (the realm's people arrive just after the first screen).
    await guest.waitForSelector('[role="option"]:has-text("Desdemona")');
    await guest.keyboard.press('Enter');
    await guest.keyboard.press('Enter');
    await guest.keyboard.type('Hello, thanks for the invitation!');
    await guest.keyboard.press('Enter');
    await waitFor(
      admin.page,
      `[...document.querySelectorAll('.sidebar .nav-item .label')].some((e) => e.textContent === 'Ada Lovelace')`,
    );
    // The conversation waited for by its title: the view clicked from (all messages) shows
    // Ada's message too, and a reply typed there would not go to her.
    await admin.page.click('.sidebar a.nav-item:has-text("Ada Lovelace")');
    await waitForTitle(admin.page, 'Ada Lovelace');
    await waitMessage(admin.page, 'Hello, thanks for the invitation!');
    await admin.page.click('#compose-text');
    await admin.page.keyboard.type('Welcome, Ada!');
    await admin.page.keyboard.press('Enter');
    await guest.click('.sidebar a.nav-item:has-text("Desdemona")');
    await waitForTitle(guest, 'Desdemona');
    await waitMessage(guest, 'Welcome, Ada!');
    t.pass('a conversation, live, in two browsers');
    await screenshot(guest, t, 'new-colleague-1280');
    watch.assertClean(t, /WebSocket|status of 401/);
    admin.watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test("a new colleague's feed starts with the recent messages of their channels", async (t) => {
  // As the reference's add_new_user_history (src/mutations/new-user-history.ts): the invited
  // person lands in the app with the recent messages of the channels they joined (the first
  // start's welcome messages, in the default channels, are for them too), not "No messages here
  // yet. Start the conversation below."
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const lobby = await createChannel(ts.api, 'iago', 'lobby');
  await createChannel(ts.api, 'iago', 'backroom');
  await ts.api.post('iago', 'default_streams', { stream_id: lobby });
  for (let i = 1; i <= 22; i++)
    await ts.api.post('iago', 'messages', {
      type: 'stream',
      to: i === 5 ? 'backroom' : 'lobby',
      topic: 'news',
      content: `news ${i}`,
    });
  const res = await ts.api.post('iago', 'invites/multiuse', {
    invite_expires_in_minutes: 60,
    include_realm_default_subscriptions: true,
  });
  const guest = await b.newPage();
  const watch = await watchPage(guest);
  await guest.goto(ts.url + pathOf(res.body.invite_link as string));
  await signUp(guest, { email: 'ada@example.com', name: 'Ada Lovelace', password: 'engine-ada' });
  await waitMessage(guest, 'news 22');
  t.equal(await guest.locator('text=No messages here yet').count(), 0, 'no empty feed');
  // What the account received, as the server keeps it (the page's session; GET needs no token).
  const got = await guest.evaluate<string[]>(
    `fetch('/json/messages?anchor=oldest&num_before=0&num_after=100&narrow=[]')
      .then((r) => r.json())
      .then((b) => b.messages.map((m) => m.content.replace(/<[^>]*>/g, '')))`,
  );
  // Then the Welcome Bot's direct message, which every new account gets (src/lib/welcome.ts).
  t.same(
    got.slice(0, -1),
    Array.from({ length: 22 }, (_, i) => `news ${i + 1}`).filter((x) => x !== 'news 5'),
    "the lobby's messages, none of the channel not joined",
  );
  t.match(got.at(-1), /^Hi, and welcome!/, "and the Welcome Bot's message, last");
  await screenshot(guest, t, 'new-colleague-feed-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('e-mail invitations, when the server sends mail', async (t) => {
  if (NO_CHROMIUM) return;
  const smtp = await TestSmtp.start(t);
  const ts = await startServer(t, { smtpUrl: smtp.url });
  const admin = await openApp(b, ts.url, ts.fx, 'iago');
  await openSettings(admin.page, 'Invite people');
  await admin.page.fill('input[placeholder*="ada@example.com"]', 'grace@example.com');
  await admin.page.click('button:has-text("Send invitations")');
  await admin.page.waitForSelector('text=Invitations sent to grace@example.com.');
  await ts.server.context.mailer!.runDue();
  const mail = smtp.to('grace@example.com').at(-1);
  t.ok(mail, 'the invitation was mailed');
  const link = mail ? linkIn(mail, 'http://testserver.local/accounts/do_confirm/') : null;
  t.match(link, /\/accounts\/do_confirm\//, 'with its link');
  const guest = await b.newPage();
  await guest.goto(ts.url + pathOf(link!));
  await signUp(guest, { name: 'Grace Hopper', password: 'compiler-first' });
  t.match(await guest.textContent('.me'), /Grace Hopper/, 'signed up from the mail, in the app');
  admin.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a member who may not invite is told so, with no invitation form', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Invite people');
  await page.waitForSelector('text=Only administrators can invite people');
  t.equal(await page.locator('.settings select').count(), 0, 'no "Join as" or "Valid for" to set');
  t.equal(
    await page.locator('text=They join the organization').count(),
    0,
    'no invitation described',
  );
  await screenshot(page, t, 'invite-not-allowed-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});
