/**
 * The web app in chromium with a realm of three thousand people, all in one channel: the
 * channel's settings draw its first 100 members (sorted by name), then a hundred more at a time
 * (never all at once; the focus goes on from the last page's button), and a filter finds anyone (by the words of a name or the start of an e-mail address; Esc empties it,
 * the dialog stays); the people list draws its first 100 too, then a hundred more at a time
 * (never all at once; a filter starts again at the first page). Each wait is for what the action
 * brings.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, pluck, waitDrawerOpen, waitFor, waitForTitle } from '../helpers/app.js';
import { launchBrowser, NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { createChannel } from '../helpers/channels.js';
import { insertMembers } from '../helpers/fixtures.js';
import { startServer } from '../helpers/server.js';

if (NO_CHROMIUM) t.plan(0, NO_CHROMIUM);

const SETTINGS = '[role="dialog"][aria-labelledby="channel-settings-title"]';
const PEOPLE = 3000;

/** How many rows the member list draws. */
const rows = (page: Page) => page.$$eval('.member-list li', (els) => els.length);

t.test('a channel of three thousand: its first members, a page at a time, a filter', async (t) => {
  if (NO_CHROMIUM) return;
  const b = await launchBrowser(t);
  const ts = await startServer(t);
  const made = insertMembers(ts.server, ts.fx.realmId, PEOPLE);
  const ids = ['hamlet', 'iago'].map((n) => ts.fx.users[n]!.id);
  await createChannel(ts.api, 'iago', 'town', { principals: [...ids, ...made] });
  const total = PEOPLE + 2;

  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/town',
  });
  await waitForTitle(page, 'town');
  // The people column draws its first rows; the page itself stays the window's height (their
  // screen readers' words once made it 3,300 px tall, out of the column's scrolling).
  await page.waitForSelector('.people a.person');
  t.equal(
    await page.evaluate('document.documentElement.scrollHeight - window.innerHeight'),
    0,
    'the page no taller than the window',
  );
  await page.click('button[aria-label="Settings of #town"]');
  await page.waitForSelector(SETTINGS);
  await waitFor(
    page,
    `document.querySelector('#channel-members-title')?.textContent === 'Members (${total})'`,
  );
  await page.waitForSelector('.member-list li');
  t.equal(await rows(page), 100, 'the first 100 drawn');
  const names = await pluck(page, '.member-list .member-name');
  t.same(names.slice(0, 3), ['Hamlet (you)', 'Iago', 'Member 0'], 'sorted by name');
  t.equal(
    await page.textContent(`${SETTINGS} .member-more`),
    `Show 100 more (100 of ${total.toLocaleString('en-US')} shown)`,
    'the rest a page at a time, as the people list',
  );
  await page.locator('input[aria-label="Filter members"]').scrollIntoViewIfNeeded();
  await screenshot(page, t, 'members-first-1280');

  // A filter: the words of a name, or the start of an e-mail address.
  await page.fill('input[aria-label="Filter members"]', 'member 299');
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 11`);
  t.same(
    (await pluck(page, '.member-list .member-name')).slice(0, 2),
    ['Member 299', 'Member 2990'],
    '"member 299": 299 and 2990–2999',
  );
  t.notOk(await page.$(`${SETTINGS} .member-more`), 'all of them shown: no "Show more"');
  await page.fill('input[aria-label="Filter members"]', 'member1234@');
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 1`);
  t.same(await pluck(page, '.member-list .member-name'), ['Member 1234'], 'by e-mail');
  await page.fill('input[aria-label="Filter members"]', 'nobody at all');
  await page.waitForSelector(`${SETTINGS} p:has-text("No member matches.")`);
  t.pass('none: said so');
  await page.fill('input[aria-label="Filter members"]', 'member 1');
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 100`);
  t.equal(
    await page.textContent(`${SETTINGS} .member-more`),
    'Show 100 more (100 of 1,111 shown)',
    'more matching than drawn: 1, 10–19, 100–199, 1000–1999',
  );
  await page.click(`${SETTINGS} .member-more`);
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 200`);
  t.equal(
    await page.textContent(`${SETTINGS} .member-more`),
    'Show 100 more (200 of 1,111 shown)',
    'another hundred, never all at once',
  );

  // Esc empties the filter (and starts again at the first page); the dialog stays.
  await page.press('input[aria-label="Filter members"]', 'Escape');
  await waitFor(page, `document.querySelector('input[aria-label="Filter members"]').value === ''`);
  t.ok(await page.$(SETTINGS), 'the dialog still open');
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 100`);
  t.equal(
    await page.textContent(`${SETTINGS} .member-more`),
    `Show 100 more (100 of ${total.toLocaleString('en-US')} shown)`,
  );
  await page.click(`${SETTINGS} .member-more`);
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 200`);
  t.pass('the next hundred of everyone');

  // The last page: its button goes, the focus stays in the dialog (on the first row it added
  // when that row has a button, else on the filter).
  await page.fill('input[aria-label="Filter members"]', 'member 29');
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 100`);
  t.equal(await page.textContent(`${SETTINGS} .member-more`), 'Show 11 more (100 of 111 shown)');
  await page.focus(`${SETTINGS} .member-more`);
  await page.keyboard.press('Enter');
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 111`);
  t.notOk(await page.$(`${SETTINGS} .member-more`), 'all 111 drawn: no button');
  // The focus moves in an effect after the rows are drawn: wait for it, not for the rows alone.
  await waitFor(
    page,
    `(() => {
      const row = document.querySelectorAll('.member-list li')[100];
      const want = row.querySelector('button') ?? document.querySelector('input[aria-label="Filter members"]');
      return document.activeElement === want;
    })()`,
    5_000,
  );
  t.pass('the focus went on, within the dialog');
  await page.locator(`${SETTINGS} .member-list li`).nth(100).scrollIntoViewIfNeeded();
  await screenshot(page, t, 'members-paged-1280');
  await page.click('button[aria-label="Close channel settings"]');
  await waitFor(page, `!document.querySelector('${SETTINGS}')`);

  // The people list: the first 100 too.
  await waitFor(page, `document.querySelectorAll('.people-list a.person').length > 0`);
  t.equal(
    await page.$$eval('.people-list a.person', (els) => els.length),
    100,
    'the people list draws 100',
  );
  const more = (await page.textContent('.people-list .more')) ?? '';
  const people = Number(/of ([\d,]+) shown/.exec(more)?.[1]?.replace(/,/g, ''));
  t.ok(people > PEOPLE, 'every active person counted');
  t.equal(
    await page.textContent('.people-list .more'),
    `Show 100 more (100 of ${people.toLocaleString('en-US')} shown)`,
    'the rest a page at a time, as the Users panel',
  );
  await page.locator('.people-list .more').scrollIntoViewIfNeeded();
  await screenshot(page, t, 'people-more-1280');
  await page.click('.people-list .more');
  await waitFor(page, `document.querySelectorAll('.people-list a.person').length === 200`);
  t.equal(
    await page.textContent('.people-list .more'),
    `Show 100 more (200 of ${people.toLocaleString('en-US')} shown)`,
    'another hundred, never all at once',
  );
  // A filter starts again at the first page; the last page's button gives the focus on.
  await page.fill('input[aria-label="Filter people"]', 'member 29');
  await waitFor(page, `document.querySelectorAll('.people-list a.person').length === 100`);
  t.equal(await page.textContent('.people-list .more'), 'Show 11 more (100 of 111 shown)');
  await page.focus('.people-list .more');
  await page.keyboard.press('Enter');
  await waitFor(page, `document.querySelectorAll('.people-list a.person').length === 111`);
  t.notOk(await page.$('.people-list .more'), 'all 111 drawn: no button');
  await waitFor(
    page,
    `[...document.querySelectorAll('.people-list a.person')].indexOf(document.activeElement) === 100`,
    5_000,
  );
  t.pass('the focus on the first person the last page added');
  await screenshot(page, t, 'people-paged-1280');
  watch.assertClean(t, /WebSocket/);
  await page.close();

  // A phone's width: the same list in the dialog.
  const phone = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/town',
    width: 390,
    height: 844,
  });
  await waitForTitle(phone.page, 'town');
  await phone.page.click('button[aria-label="Settings of #town"]');
  await phone.page.waitForSelector('.member-list li');
  t.equal(await rows(phone.page), 100, 'at 390: the first 100');
  await phone.page.locator('input[aria-label="Filter members"]').scrollIntoViewIfNeeded();
  await screenshot(phone.page, t, 'members-first-390');
  await phone.page.evaluate(
    `document.querySelector('${SETTINGS} .member-more').scrollIntoView({ block: 'center' })`,
  );
  await screenshot(phone.page, t, 'members-more-390');
  await phone.page.keyboard.press('Escape');
  await waitFor(phone.page, `!document.querySelector('${SETTINGS}')`);

  // The drawer's people section pages the same way.
  await phone.page.click('button[aria-label="Open the sidebar"]');
  await waitDrawerOpen(phone.page);
  await phone.page.click('.people-section button[aria-expanded]');
  await phone.page.waitForSelector('.people-section .more');
  t.equal(await phone.page.locator('.people-section a.person').count(), 100, 'at 390: 100 people');
  await phone.page.click('.people-section .more');
  await waitFor(phone.page, `document.querySelectorAll('.people-section a.person').length === 200`);
  t.match(await phone.page.textContent('.people-section .more'), /^Show 100 more \(200 of /);
  await phone.page.locator('.people-section .more').scrollIntoViewIfNeeded();
  await screenshot(phone.page, t, 'people-more-390');
  phone.watch.assertClean(t, /WebSocket/);
});
