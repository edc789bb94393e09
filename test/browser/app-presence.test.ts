/**
 * The web app in chromium: presence. Two users, each in a browser context of their own: Othello
 * opening the app makes him active in Hamlet's people list (and on his direct messages' avatar)
 * at once, by the server's `presence` event, well within the ping interval; after he closed it
 * and the offline threshold passed, Hamlet's next ping brings the server's time and he shows
 * offline. The server's clock is the test's (TestClock) and Hamlet's page's is playwright's, so
 * that neither the threshold nor the ping interval is waited for. A click on a person, or Enter
 * in the filter, opens the direct messages with them. On a phone the people are a folded section
 * of the drawer. An organization that turned presence off has no people list (the reference's
 * web app hides its buddy list then): no column at 1280, the messages taking its room, and no
 * section in the drawer at 390; the Inbox and the card show everyone else offline (the
 * reference's circles then).
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, pluck, waitDrawerOpen, waitFor, waitForTitle } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { TestClock } from '../helpers/clock.js';
import { setRealmSettings } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';
import { assertSuccess } from '../helpers/api.js';
import {
  PRESENCE_OFFLINE_THRESHOLD_SECONDS,
  PRESENCE_PING_INTERVAL_SECONDS,
} from '../../src/lib/limits.js';

const { b } = browserSuite(t);

/** The status a person's row in the people list shows (null: no row). */
function personStatus(page: Page, id: number, list = '.people'): Promise<string | null> {
  return page.evaluate(
    `document.querySelector('${list} a.person[data-user-id="${id}"]')?.dataset.status ?? null`,
  );
}

/** Opens the card of the sender of the message with `text`: its presence dot and words. */
async function openCard(page: Page, text: string): Promise<{ dot: string; text: string }> {
  await page.locator('.msg', { hasText: text }).locator('.sender').click();
  await page.waitForSelector('.profile-card .card-presence');
  return page.evaluate(`({
    dot: document.querySelector('.profile-card .card-head .presence-dot')?.className ?? '',
    text: document.querySelector('.profile-card .card-presence').textContent.trim(),
  })`);
}

/** Closes the card (Esc), until it is gone. */
async function closeCard(page: Page): Promise<void> {
  await page.keyboard.press('Escape');
  await page.waitForSelector('.profile-card', { state: 'detached' });
}

function waitStatus(page: Page, id: number, status: string): Promise<void> {
  return waitFor(
    page,
    `document.querySelector('.people a.person[data-user-id="${id}"]')?.dataset.status === '${status}'`,
  );
}

t.test('a person comes online, goes offline, and is a click away', async (t) => {
  if (NO_CHROMIUM) return;
  const clock = new TestClock();
  // Heartbeats every 2 s: Hamlet's page's clock jumps a ping interval ahead below, and its
  // event socket's watchdog (the long-poll timeout since the last frame) must not think it lost.
  const ts = await startServer(t, { clock: clock.now, heartbeatMs: 2000, heartbeatJitterMs: 0 });
  const othello = ts.fx.users.othello!.id;
  const hamlet = await openApp(b, ts.url, ts.fx, 'hamlet', {
    setup: (page) => page.clock.install(),
  });
  const page = hamlet.page;
  await page.waitForSelector('.people a.person');
  t.equal(await personStatus(page, othello), 'offline', 'Othello is offline at first');
  t.equal(
    await page.getAttribute(
      `.people a.person[data-user-id="${ts.fx.users.hamlet!.id}"]`,
      'data-status',
    ),
    'active',
    'one is active oneself',
  );
  // A direct message from Othello (by the API: he is not here), for the sidebar's dot.
  await ts.api.post('othello', 'messages', {
    type: 'direct',
    to: JSON.stringify([ts.fx.users.hamlet!.id]),
    content: 'Are you there?',
  });
  const dmDot = `.sidebar .nav-item[href^="#narrow/dm/${othello}-"] .presence-dot`;
  await page.waitForSelector(dmDot);
  t.equal(await page.getAttribute(dmDot, 'class'), 'presence-dot offline');
  // A conversation with a bot has no dot: a bot has no presence.
  const botId = ts.fx.notificationBotId;
  await ts.api.post('hamlet', 'messages', {
    type: 'direct',
    to: JSON.stringify([botId]),
    content: 'Hello bot',
  });
  const botRow = `.sidebar .nav-item[href^="#narrow/dm/${botId}-"]`;
  await page.waitForSelector(botRow);
  t.equal(await page.locator(`${botRow} .presence-dot`).count(), 0, 'no dot for a bot');

  // Othello opens the app: active in Hamlet's list by the event, not by Hamlet's next ping.
  const opened = Date.now();
  const other = await openApp(b, ts.url, ts.fx, 'othello');
  await waitStatus(page, othello, 'active');
  t.ok(Date.now() - opened < PRESENCE_PING_INTERVAL_SECONDS * 1000, 'within the ping interval');
  await waitFor(
    page,
    `document.querySelector(${JSON.stringify(dmDot)}).classList.contains('active')`,
  );
  t.match(
    await page.textContent(`.people a.person[data-user-id="${othello}"]`),
    /Othello, active$/,
    'the status in words (for screen readers)',
  );
  const names = await pluck(page, '.people a.person .label');
  t.same(names.slice(0, 2), ['Hamlet (you)', 'Othello'], 'the active first (after oneself)');
  await screenshot(page, t, 'othello-active-1280');

  // A ping interval later Hamlet's page reports and fetches what changed since its snapshot
  // (Othello's coming): the next answer will not hold him.
  const fullPing = () =>
    page.waitForRequest(
      (r) => r.url().endsWith('/users/me/presence') && !!r.postData()?.includes('ping_only=false'),
    );
  let sent = fullPing();
  await page.clock.fastForward(PRESENCE_PING_INTERVAL_SECONDS * 1000);
  const first = new URLSearchParams((await sent).postData()!);
  t.same(
    {
      status: first.get('status'),
      new_user_input: first.get('new_user_input'),
      last_update_id: /^-?\d+$/.test(first.get('last_update_id') ?? ''),
    },
    // No input since the first report (register's, ping_only) took the page's opening as one.
    { status: 'active', new_user_input: 'false', last_update_id: true },
    "the reference's parameters: active, no input since the last report, register's id",
  );
  await (await sent).response();
  t.equal(await personStatus(page, othello), 'active');
  // His card (from his message) says it too: the same dot, and "Active now". (After that
  // report: the click is input, which the report just checked there was none of.)
  t.same(await openCard(page, 'Are you there?'), {
    dot: 'presence-dot active',
    text: 'Active now',
  });
  await screenshot(page, t, 'othello-card-active-1280');
  await closeCard(page);

  // He closes it. Nothing says so: Hamlet's page learns it from its next ping's answer, once
  // the offline threshold has passed (the server's time), and not before.
  await other.page.close();
  clock.advance(PRESENCE_OFFLINE_THRESHOLD_SECONDS + 1);
  t.equal(await personStatus(page, othello), 'active', 'still active until the next ping');
  sent = fullPing();
  await page.clock.fastForward(PRESENCE_PING_INTERVAL_SECONDS * 1000);
  const second = new URLSearchParams((await sent).postData()!);
  t.ok(
    Number(second.get('last_update_id')) > Number(first.get('last_update_id')),
    'from the last answer on',
  );
  await waitStatus(page, othello, 'offline');
  await waitFor(
    page,
    `document.querySelector(${JSON.stringify(dmDot)}).classList.contains('offline')`,
  );
  t.match(
    await page.textContent(`.people a.person[data-user-id="${othello}"]`),
    /Othello, offline$/,
  );
  t.equal(
    await personStatus(page, ts.fx.users.hamlet!.id),
    'active',
    'oneself still active (this page reported)',
  );
  await screenshot(page, t, 'othello-offline-1280');
  // His card: offline, and when he was last active (his last report, the server's time then;
  // two ping intervals of this page's clock ago, and the seconds the test took).
  const offline = await openCard(page, 'Are you there?');
  t.equal(offline.dot, 'presence-dot offline');
  t.match(offline.text, /^Active [23] minutes ago$/, 'when he was last active');
  await screenshot(page, t, 'othello-card-offline-1280');
  await closeCard(page);

  // A click on him opens the direct messages with him.
  t.equal(await page.textContent('.title'), 'All messages');
  await page.click(`.people a.person[data-user-id="${othello}"]`);
  await waitForTitle(page, 'Othello');
  t.match(await page.evaluate('location.hash'), new RegExp(`^#narrow/dm/${othello}-`));
  await page.waitForSelector('.messages .msg:has-text("Are you there?")');
  t.equal(
    await page.getAttribute(`.people a.person[data-user-id="${othello}"]`, 'aria-current'),
    'page',
    'his row is the current view',
  );

  // From the keyboard: the filter, and Enter opens the first one it leaves.
  await page.fill('.people-filter', 'cord');
  await waitFor(page, `document.querySelectorAll('.people a.person').length === 1`);
  await page.press('.people-filter', 'Enter');
  await waitForTitle(page, 'Cordelia');
  hamlet.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  '390: the people in the drawer, folded until opened; a tap opens the conversation',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    await ts.api.post('othello', 'users/me/presence', { status: 'active' });
    const othello = ts.fx.users.othello!.id;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { width: 390, height: 844 });
    t.equal(await page.locator('aside.people').count(), 0, 'no people column on a phone');
    await page.click('button[aria-label="Open the sidebar"]');
    await waitDrawerOpen(page);
    const fold = page.locator('.people-section button[aria-expanded]');
    t.equal(await fold.getAttribute('aria-expanded'), 'false', 'folded');
    t.equal(await page.locator('.people-section a.person').count(), 0);
    await fold.click();
    await page.waitForSelector(`.people-section a.person[data-user-id="${othello}"]`);
    t.equal(await personStatus(page, othello, '.people-section'), 'active');
    await screenshot(page, t, 'drawer-people-390');
    await page.click(`.people-section a.person[data-user-id="${othello}"]`);
    await waitForTitle(page, 'Othello');
    await waitFor(
      page,
      `getComputedStyle(document.querySelector('.sidebar')).visibility === 'hidden'`,
    );
    t.pass('the drawer closed on the conversation');
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test(
  'presence turned off: no people list; everyone else offline in the Inbox and the card',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    const othello = ts.fx.users.othello!.id;
    const hamlet = ts.fx.users.hamlet!.id;
    // Othello here and writing (his report the server keeps, but sends no one while it is off).
    t.equal((await ts.api.post('othello', 'users/me/presence', { status: 'active' })).status, 200);
    await ts.api.post('othello', 'messages', {
      type: 'direct',
      to: JSON.stringify([hamlet]),
      content: 'Are you there?',
    });
    setRealmSettings(ts, { presence_disabled: true });
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#narrow/is/starred',
    });
    await page.click('.sidebar a.nav-item[href="#inbox"]');
    await waitForTitle(page, 'Inbox');
    // The Inbox: the circle, offline (not an empty space), and its words.
    const dmDot = '.inbox-row.inbox-dm .inbox-mark > .presence-dot';
    await page.waitForSelector(dmDot);
    t.equal(await page.getAttribute(dmDot, 'class'), 'presence-dot offline', 'the Inbox: offline');
    t.equal(await page.textContent('.inbox-row.inbox-dm .sr-only'), ', offline', 'in words too');
    // No people list: no column, and the messages reach the window's right edge.
    t.equal(await page.locator('.people').count(), 0, 'no people column');
    t.equal(await page.locator(`a.person[data-user-id="${othello}"]`).count(), 0, 'no row of his');
    t.equal(await page.getAttribute('.app', 'data-people'), 'none');
    const mainRight = await page.evaluate<number>(
      `document.querySelector('main').getBoundingClientRect().right`,
    );
    t.ok(mainRight >= 1280 - 1, 'the messages take the column’s room', { mainRight });
    await screenshot(page, t, 'presence-off-inbox-1280');
    // His card, from his message: the same circle; no words (nothing is known of when).
    await page.click('.inbox-row.inbox-dm .inbox-open');
    await waitForTitle(page, 'Othello');
    await page.locator('.msg', { hasText: 'Are you there?' }).locator('.sender').click();
    await page.waitForSelector('.profile-card .card-head .presence-dot');
    t.equal(
      await page.getAttribute('.profile-card .card-head .presence-dot', 'class'),
      'presence-dot offline',
      'the card: offline',
    );
    t.equal(await page.locator('.profile-card .card-presence').count(), 0, 'no "last active"');
    await screenshot(page, t, 'presence-off-card-1280');
    await closeCard(page);

    watch.assertClean(t);

    // A phone: the drawer has no People section.
    const phone = await openApp(b, ts.url, ts.fx, 'hamlet', { width: 390, height: 844 });
    await phone.page.click('button[aria-label="Open the sidebar"]');
    await waitDrawerOpen(phone.page);
    await phone.page.waitForSelector('.sidebar .nav-heading');
    t.equal(await phone.page.locator('.people-section').count(), 0, 'no People in the drawer');
    t.equal(await phone.page.locator('#people-heading').count(), 0);
    await screenshot(phone.page, t, 'presence-off-drawer-390');
    phone.watch.assertClean(t);
  },
);

t.test('deactivated while active, reactivated soon after: offline, not "Active now"', async (t) => {
  if (NO_CHROMIUM) return;
  const clock = new TestClock();
  const ts = await startServer(t, { clock: clock.now, heartbeatMs: 2000, heartbeatJitterMs: 0 });
  const othello = ts.fx.users.othello!.id;
  const iago = await openApp(b, ts.url, ts.fx, 'iago', { setup: (page) => page.clock.install() });
  const page = iago.page;
  await page.waitForSelector('.people a.person');
  // Othello at work in his own page.
  const other = await openApp(b, ts.url, ts.fx, 'othello');
  await waitStatus(page, othello, 'active');
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.click('.settings nav a[href="#settings/users"]');
  const row = page.locator('.users-list li', { hasText: 'Othello' });
  await row.waitFor();
  t.match(await row.textContent(), /Active now/, 'the Users list: active now');

  // An administrator deactivates him (his page's session and event queue end), and soon after,
  // well within the offline threshold, reactivates him. He has not been active since.
  clock.advance(5);
  assertSuccess(t, await ts.api.delete('iago', `users/${othello}`));
  await page.waitForSelector(`.people a.person[data-user-id="${othello}"]`, { state: 'detached' });
  clock.advance(5);
  assertSuccess(t, await ts.api.post('iago', `users/${othello}/reactivate`));
  await waitStatus(page, othello, 'offline');
  t.pass('the people column: offline');
  await row.waitFor();
  t.notMatch(await row.textContent(), /Active now/, 'the Users list: not active now');
  t.match(await row.textContent(), /Active 0 minutes ago/, 'when he was last active');
  await screenshot(page, t, 'reactivated-offline-1280');

  // The next ping's answer (the server's record of him) keeps him offline.
  const sent = page.waitForRequest(
    (r) => r.url().endsWith('/users/me/presence') && !!r.postData()?.includes('ping_only=false'),
  );
  clock.advance(PRESENCE_PING_INTERVAL_SECONDS);
  await page.clock.fastForward(PRESENCE_PING_INTERVAL_SECONDS * 1000);
  const answer = (await (await (await sent).response())!.json()) as {
    presences: Record<string, { active_timestamp: number }>;
    server_timestamp: number;
  };
  t.ok(
    answer.server_timestamp - answer.presences[othello]!.active_timestamp >
      PRESENCE_OFFLINE_THRESHOLD_SECONDS,
    'the server says offline too',
  );
  t.equal(await personStatus(page, othello), 'offline');
  // A page opened now (register's snapshot) shows him offline too.
  const fresh = await openApp(b, ts.url, ts.fx, 'hamlet');
  await fresh.page.waitForSelector(`.people a.person[data-user-id="${othello}"]`);
  t.equal(await personStatus(fresh.page, othello), 'offline', 'a new page: offline');
  await other.page.close();
  iago.watch.assertClean(t, /WebSocket|status of 401/);
});
