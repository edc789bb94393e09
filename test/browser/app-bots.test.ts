/**
 * The web app's Bots and Mail outbox settings panels in chromium (issue 33 part 6; web/app/bots.tsx):
 * a member creates an incoming-webhook bot, sees its API key once — the key works against the
 * API, and is gone once dismissed —, regenerates it (the old one stops working), deactivates and
 * reactivates the bot (each asked first), creates an outgoing-webhook bot; a member has no
 * outbox panel. An administrator sees every bot with its owner, and the mail a stopped SMTP
 * server left in the outbox (a real SMTP server on loopback), which is empty once the server is
 * back.
 */
import t from 'tap';
import { openApp, openSettings, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { check } from '../helpers/a11y.js';
import { assertSuccess } from '../helpers/api.js';
import { TestSmtp } from '../helpers/smtp.js';
import { startServer } from '../helpers/server.js';
import { TestClock } from '../helpers/clock.js';
import { DEFAULT_MAIL_LIMITS } from '../../src/config.js';

const { b } = browserSuite(t);

const KEY = 'input[aria-label="API key"]';

type Bot = { user_id: number; username: string; api_key: string; full_name: string };

t.test('a member creates and manages a bot; the key is shown once', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Bots');
  t.equal(
    await page.locator('.settings nav a:has-text("Mail outbox")').count(),
    0,
    'no outbox panel for a member',
  );
  await page.waitForSelector('text=No bots yet.');

  await page.fill('input[placeholder="Deploy notices"]', 'Deploy notices');
  await page.fill('input[placeholder="deploys"]', 'deploys');
  await page.selectOption('.bot-form select', { label: 'Incoming webhook' });
  await page.click('button:has-text("Add bot")');
  await page.waitForSelector(KEY);
  const shown = await page.inputValue(KEY);
  const bots = assertSuccess(t, await ts.api.get('hamlet', 'bots')).bots as Bot[];
  t.equal(bots.length, 1, 'the bot exists');
  const bot = bots[0]!;
  t.equal(bot.full_name, 'Deploy notices');
  t.equal(shown, bot.api_key, 'the key shown is the bot’s');
  t.match(await page.textContent('.bot-key'), bot.username, 'with the bot’s address');
  const me = assertSuccess(
    t,
    await ts.api.get({ email: bot.username, api_key: shown }, 'users/me'),
  );
  t.equal(me.user_id, bot.user_id, 'the key authenticates as the bot');
  await page.waitForSelector('.bot-list li:has-text("Deploy notices")');
  t.match(await page.textContent('.bot-list'), /Incoming webhook/);
  await screenshot(page, t, 'bots-key-1280');

  await page.click('.bot-key button:has-text("Done")');
  await waitFor(page, `!document.querySelector('${KEY}')`);
  t.notOk((await page.content()).includes(shown), 'once dismissed, the key is nowhere in the page');

  // A new key: shown once too, the old one stops working.
  await page.click('.bot-list li:has-text("Deploy notices") button:has-text("New key")');
  await page.waitForSelector(KEY);
  const renewed = await page.inputValue(KEY);
  t.not(renewed, shown, 'a different key');
  t.equal(
    (await ts.api.get({ email: bot.username, api_key: shown }, 'users/me')).status,
    401,
    'the old key no longer works',
  );
  assertSuccess(t, await ts.api.get({ email: bot.username, api_key: renewed }, 'users/me'));

  // Deactivation asks first (Cancel keeps the bot), naming the bot and what it loses.
  await page.click('.bot-list li:has-text("Deploy notices") button:has-text("Deactivate")');
  const ask = page.getByRole('alertdialog');
  await ask.waitFor();
  t.equal(await ask.locator('h2').textContent(), 'Deactivate Deploy notices?');
  t.match(await ask.textContent(), /cannot send messages/);
  t.match(await ask.textContent(), /You or an administrator can reactivate it/);
  await check(t, page, 'bots: deactivation asked');
  await screenshot(page, t, 'bots-deactivate-ask-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await check(t, page, 'bots: deactivation asked, 390');
  await screenshot(page, t, 'bots-deactivate-ask-390');
  await page.setViewportSize({ width: 1280, height: 800 });
  await ask.locator('button:has-text("Cancel")').click();
  await ask.waitFor({ state: 'detached' });
  t.equal(await page.locator('.bot-list li.inactive').count(), 0, 'Cancel deactivates nothing');
  assertSuccess(t, await ts.api.get({ email: bot.username, api_key: renewed }, 'users/me'));
  await page.click('.bot-list li:has-text("Deploy notices") button:has-text("Deactivate")');
  await ask.waitFor();
  await ask.locator('button:has-text("Deactivate")').click();
  await page.waitForSelector('.bot-list li.inactive:has-text("deactivated")');
  t.equal(await page.locator(KEY).count(), 0, 'the next action hides the key');
  t.equal(
    (await ts.api.get({ email: bot.username, api_key: renewed }, 'users/me')).status,
    401,
    'a deactivated bot cannot use the API',
  );
  // Reactivation asks first too, as the Users panel does (Cancel leaves the bot deactivated).
  await page.click('.bot-list li:has-text("Deploy notices") button:has-text("Reactivate")');
  await ask.waitFor();
  t.equal(await ask.locator('h2').textContent(), 'Reactivate Deploy notices?');
  t.match(await ask.textContent(), /Deploy notices can use the API again\./);
  await screenshot(page, t, 'bots-reactivate-ask-1280');
  await ask.locator('button:has-text("Cancel")').click();
  await ask.waitFor({ state: 'detached' });
  t.equal(await page.locator('.bot-list li.inactive').count(), 1, 'Cancel reactivates nothing');
  t.equal(
    (await ts.api.get({ email: bot.username, api_key: renewed }, 'users/me')).status,
    401,
    'still deactivated after Cancel',
  );
  await page.click('.bot-list li:has-text("Deploy notices") button:has-text("Reactivate")');
  await ask.waitFor();
  await ask.locator('button:has-text("Reactivate")').click();
  await page.waitForSelector('.bot-list li:not(.inactive):has-text("Deploy notices")');
  assertSuccess(t, await ts.api.get({ email: bot.username, api_key: renewed }, 'users/me'));

  // An outgoing-webhook bot needs its URL.
  await page.selectOption('.bot-form select', { label: 'Outgoing webhook' });
  await page.fill('input[placeholder="Deploy notices"]', 'Echo');
  await page.fill('input[placeholder="deploys"]', 'echo');
  await page.fill('input[type="url"]', 'https://bots.example.com/echo');
  await page.click('button:has-text("Add bot")');
  await page.waitForSelector('.bot-list li:has-text("Echo")');
  t.match(await page.textContent('.bot-list li:has-text("Echo")'), /Outgoing webhook/);
  const after = assertSuccess(t, await ts.api.get('hamlet', 'bots')).bots as Bot[];
  t.equal(after.length, 2);
  await screenshot(page, t, 'bots-list-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('an incoming-webhook bot comes with its webhook URL, which posts as the bot', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const sub = await ts.api.post('hamlet', 'users/me/subscriptions', {
    subscriptions: JSON.stringify([{ name: 'builds' }]),
  });
  t.equal(sub.status, 200, sub.text);
  const subs = assertSuccess(t, await ts.api.get('hamlet', 'users/me/subscriptions'))
    .subscriptions as { stream_id: number; name: string }[];
  const builds = subs.find((x) => x.name === 'builds')!.stream_id;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Bots');
  await page.fill('input[placeholder="Deploy notices"]', 'Repo watcher');
  await page.fill('input[placeholder="deploys"]', 'repo');
  await page.selectOption('.bot-form select', { label: 'Incoming webhook' });
  await page.click('button:has-text("Add bot")');
  await page.waitForSelector(KEY);
  const key = await page.inputValue(KEY);
  const URL_FIELD = 'input[aria-label="Webhook URL"]';
  // Before, the key alone: nothing said where a service should post.
  await page.waitForSelector(URL_FIELD);
  const dm = new URL(await page.inputValue(URL_FIELD));
  t.equal(dm.pathname, '/api/v1/external/json', 'the generic JSON integration first');
  t.equal(dm.searchParams.get('api_key'), key, 'with the key just shown');
  t.equal(dm.searchParams.get('stream'), null, 'no channel: to the owner');
  await page.selectOption('.bot-webhook select >> nth=0', { label: 'GitHub' });
  await page.selectOption('.bot-webhook select >> nth=1', { label: '#builds' });
  const url = await page.inputValue(URL_FIELD);
  const parsed = new URL(url);
  const realmUrl = assertSuccess(t, await ts.api.get('hamlet', 'server_settings'))
    .realm_url as string;
  t.equal(parsed.origin, new URL(realmUrl).origin, 'on the realm’s URL (its EXTERNAL_HOST)');
  t.equal(parsed.pathname, '/api/v1/external/github');
  t.equal(parsed.searchParams.get('stream'), String(builds), 'the channel chosen, by id');
  t.equal(parsed.searchParams.get('api_key'), key);
  await check(t, page, 'bots: webhook URL');
  await screenshot(page, t, 'bots-webhook-url-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator(URL_FIELD).scrollIntoViewIfNeeded();
  await check(t, page, 'bots: webhook URL, 390');
  await screenshot(page, t, 'bots-webhook-url-390');

  // The URL as copied works: GitHub's ping lands in #builds from the bot (sent to the test
  // server's own address, the realm's host name resolving nowhere here).
  const res = await fetch(ts.url + parsed.pathname + parsed.search, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'ping' },
    body: JSON.stringify({
      zen: 'Keep it logically awesome.',
      hook_id: 1,
      hook: { type: 'Repository' },
      repository: {
        name: 'confab',
        full_name: 'acme/confab',
        html_url: 'https://github.com/acme/confab',
      },
      sender: { login: 'ada', html_url: 'https://github.com/ada' },
    }),
  });
  t.equal(res.status, 200, await res.text());
  const last = assertSuccess(
    t,
    await ts.api.get('hamlet', 'messages', { anchor: 'newest', num_before: 1, num_after: 0 }),
  ).messages as { stream_id: number; sender_full_name: string }[];
  t.equal(last[0]!.stream_id, builds, 'posted to the channel chosen');
  t.equal(last[0]!.sender_full_name, 'Repo watcher', 'as the bot');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('an administrator sees every bot and the mail outbox', async (t) => {
  if (NO_CHROMIUM) return;
  const smtp = await TestSmtp.start(t);
  const clock = new TestClock();
  const ts = await startServer(t, { smtpUrl: smtp.url, clock: clock.now });
  await ts.server.context.mailer!.runDue(); // the fixture's welcome mails
  assertSuccess(
    t,
    await ts.api.post('hamlet', 'bots', {
      full_name: 'Hamlet’s helper',
      short_name: 'helper',
      bot_type: 1,
    }),
  );
  await smtp.stop();
  assertSuccess(
    t,
    await ts.api.post('iago', 'invites', { invitee_emails: 'dana@example.org', stream_ids: [] }),
  );
  await ts.server.context.mailer!.runDue(); // fails: the SMTP server is down

  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  await openSettings(page, 'Bots');
  await page.waitForSelector('.bot-list li:has-text("Hamlet’s helper")');
  t.match(await page.textContent('.bot-list'), /owner: Hamlet/, 'with its owner');
  t.notMatch(await page.textContent('.bot-list'), /Notification Bot/, 'not the system bots');

  await openSettings(page, 'Mail outbox');
  await page.waitForSelector('table.outbox');
  const row = await page.textContent('table.outbox tbody tr');
  t.match(row, /Invitation/);
  t.match(row, /dana@example\.org/);
  t.match(row, /ECONNREFUSED|connect/, 'the last error');
  t.match(await page.textContent('.settings section'), /1 mail waiting/);
  await screenshot(page, t, 'outbox-1280');

  await smtp.listen();
  clock.advance(DEFAULT_MAIL_LIMITS.retryBaseSeconds);
  await ts.server.context.mailer!.runDue();
  t.equal(smtp.to('dana@example.org').length, 1, 'delivered once the server is back');
  await page.click('button:has-text("Refresh")');
  await page.waitForSelector('text=The outbox is empty');
  watch.assertClean(t, /WebSocket|status of 401/);
});
