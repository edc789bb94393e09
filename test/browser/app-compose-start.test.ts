/**
 * The web app in chromium, starting a conversation where no compose box shows, and where the box
 * points after a narrow: the Inbox and Recent conversations have the reference's bar at the
 * bottom ("Start new conversation", "New direct message"; keys c and x), which opens the compose
 * box over All messages, the channel (or the person) to choose; a search, a view of no single
 * conversation, leaves the box addressed to nobody (the reference's compose defaults), not to the
 * conversation viewed before; a channel's view shows the channel's description next to its
 * name, on one line, hidden on a phone. At 1280 and 390 pixels.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitForTitle } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

const EVERYONE = ['hamlet', 'othello', 'iago'];
let general = 0;
const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'iago', members: EVERYONE },
    design: { by: 'iago', members: EVERYONE },
  },
  seed: async ({ ts, channels }) => {
    general = channels.general;
    const res = await ts.api.patch('iago', `streams/${general}`, {
      description: 'Where **everyone** talks about everything under the sun, at length',
    });
    if (res.status !== 200) throw new Error(`description: ${res.text}`);
    await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'Lunch at noon?');
    await sendDirectMessage(ts.api, 'othello', [ts.fx.users['hamlet']!.id], 'Are you there?');
  },
});

/** Where the compose box points: `channel:<id or ''>/<topic>` or `dm:<names>`, or 'hidden'. */
async function composeTarget(page: Page): Promise<string> {
  if (!(await page.isVisible('.compose-area .compose'))) return 'hidden';
  const kind = await page.textContent('.to-kind button[aria-pressed="true"]');
  if (kind?.trim() === 'Channel') {
    const ch = await page.inputValue('select.to-channel');
    const topic = await page.inputValue('#compose-topic');
    return `channel:${ch}/${topic}`;
  }
  // Each pill's name, without its remove button's ×.
  const pills = await page.evaluate<string[]>(
    `[...document.querySelectorAll('.compose .pills .pill')].map((e) => (e.firstChild?.textContent ?? '').trim())`,
  );
  return `dm:${pills.join(',')}`;
}

const focusedId = (page: Page) =>
  page.evaluate(
    `document.activeElement ? document.activeElement.id || document.activeElement.className : ''`,
  );

/** Nothing focused: the keys go to the view, not a field. */
const blur = (page: Page) => page.evaluate(`document.activeElement?.blur()`);

for (const width of [1280, 390]) {
  t.test(`the Inbox and Recent conversations start a conversation, at ${width} px`, async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#inbox',
      width,
      height: width === 390 ? 844 : 800,
    });
    for (const view of ['inbox', 'recent']) {
      await page.goto(ts.url + '/#' + view);
      await page.waitForSelector(`.${view}-view`);
      const bar = page.locator('.compose-closed');
      await bar.waitFor({ state: 'visible' });
      t.equal(await composeTarget(page), 'hidden', `${view}: no compose box`);
      const buttons = await bar.locator('button').allTextContents();
      t.same(
        buttons.map((x) => x.trim()),
        ['Compose message', 'Start new conversation', 'New direct message'],
        `${view}: the bar's buttons (no row focused: the standard words)`,
      );
      // On screen, not under the fold or covered.
      const box = (await bar.boundingBox())!;
      t.ok(box.y + box.height <= (width === 390 ? 844 : 800) + 1, `${view}: the bar is on screen`);
      const overflowing = await page.evaluate<string[]>(
        `[...document.querySelectorAll('.compose-closed button')].filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)`,
      );
      t.same(overflowing, [], `${view}: the buttons' words fit in them`);
      await screenshot(page, t, `${view}-bar-${width}`);

      // A channel message: All messages, with the channel to choose (two channels: no default).
      await page.click('.compose-closed button:has-text("Start new conversation")');
      await waitFor(page, `location.hash === '#feed'`);
      await waitFor(page, `document.activeElement?.classList.contains('to-channel') === true`);
      t.equal(await composeTarget(page), 'channel:/', `${view}: a channel message, to choose`);
      t.equal(await page.isVisible('.compose-closed'), false, `${view}: the bar is gone`);
      await screenshot(page, t, `${view}-started-${width}`);

      // A direct message: the person to choose.
      await page.goto(ts.url + '/#' + view);
      await page.waitForSelector('.compose-closed');
      await page.click('.compose-closed button:has-text("New direct message")');
      await waitFor(page, `document.activeElement?.id === 'compose-dm'`);
      t.equal(await composeTarget(page), 'dm:', `${view}: a direct message, to choose`);
      t.equal(await focusedId(page), 'compose-dm', `${view}: the recipient field has the focus`);
    }
    // The keys, from the Inbox: x for a direct message, c for a channel message.
    await page.goto(ts.url + '/#inbox');
    await page.waitForSelector('.compose-closed');
    await blur(page);
    await page.keyboard.press('x');
    await waitFor(page, `document.activeElement?.id === 'compose-dm'`);
    t.equal(await composeTarget(page), 'dm:', 'x: a direct message');
    await page.goto(ts.url + '/#recent');
    await page.waitForSelector('.compose-closed');
    await blur(page);
    await page.keyboard.press('c');
    await waitFor(page, `document.activeElement?.classList.contains('to-channel') === true`);
    t.equal(await composeTarget(page), 'channel:/', 'c: a channel message');
    // The sidebar's "New direct message" (+) from the Inbox opens the box too.
    await page.goto(ts.url + '/#inbox');
    await page.waitForSelector('.compose-closed');
    if (width === 390) {
      await page.click('.menu-btn');
      await page.waitForSelector('.app[data-drawer="open"]');
    }
    await page.click('.nav-heading button[aria-label="New direct message"]');
    await waitFor(page, `document.activeElement?.id === 'compose-dm'`);
    t.equal(await composeTarget(page), 'dm:', 'the sidebar’s + from the Inbox');
    watch.assertClean(t, /WebSocket|status of 401/);
  });

  t.test(`a search readdresses the compose box to nobody, at ${width} px`, async (t) => {
    if (NO_CHROMIUM) return;
    const othello = ts.fx.users['othello']!.id;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/dm/${othello}-Othello`,
      width,
      height: width === 390 ? 844 : 800,
    });
    await page.waitForSelector('.compose .pills .pill');
    t.equal(await composeTarget(page), 'dm:Othello', 'the conversation viewed: to Othello');
    await page.fill('#search', 'lunch');
    await page.press('#search', 'Enter');
    await waitFor(page, `location.hash.startsWith('#narrow/search/')`);
    await page.waitForSelector('.messages .msg');
    await page.waitForSelector('.compose select.to-channel');
    t.equal(await composeTarget(page), 'channel:/', 'a search: addressed to nobody');
    await screenshot(page, t, `search-compose-${width}`);
    // Back in the conversation: to Othello again; then All messages, no conversation either.
    await page.goto(ts.url + `/#narrow/dm/${othello}-Othello`);
    await page.waitForSelector('.compose .pills .pill');
    t.equal(await composeTarget(page), 'dm:Othello', 'back: to Othello');
    await page.goto(ts.url + '/#feed');
    await page.waitForSelector('.compose select.to-channel');
    t.equal(await composeTarget(page), 'channel:/', 'All messages: addressed to nobody');
    // A channel's view addresses it (its topic to choose).
    await page.goto(ts.url + `/#narrow/channel/${general}-general`);
    await waitForTitle(page, 'general');
    await waitFor(page, `document.querySelector('select.to-channel')?.value === '${general}'`);
    t.equal(await composeTarget(page), `channel:${general}/`, 'a channel: addressed to it');
    // Something typed stays where it is going, as in the reference (its has_message_content).
    await page.goto(ts.url + `/#narrow/dm/${othello}-Othello`);
    await page.waitForSelector('.compose .pills .pill');
    await page.fill('.compose textarea', 'Half a thought');
    await page.fill('#search', 'noon');
    await page.press('#search', 'Enter');
    await waitFor(page, `location.hash.startsWith('#narrow/search/noon')`);
    await page.waitForSelector('.messages .msg');
    t.equal(await composeTarget(page), 'dm:Othello', 'with text typed: still to Othello');
    t.equal(await page.inputValue('.compose textarea'), 'Half a thought', 'the text stays');
    await page.fill('.compose textarea', '');
    watch.assertClean(t, /WebSocket|status of 401/);
  });

  t.test(`a channel's description in the header, at ${width} px`, async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${general}-general`,
      width,
      height: width === 390 ? 844 : 800,
    });
    await waitForTitle(page, 'general');
    const desc = page.locator('.topbar .narrow-description');
    if (width === 390) {
      // A phone: the name only (the reference hides the description there).
      await page.waitForSelector('.messages .msg');
      t.equal(await desc.isVisible(), false, 'hidden on a phone');
      // The name takes the room left: the search stays at the bar's end.
      const search = (await page.locator('.topbar .search').boundingBox())!;
      t.ok(search.x + search.width >= 390 - 16, 'the search at the end of the bar');
      await screenshot(page, t, `description-${width}`);
      watch.assertClean(t, /WebSocket|status of 401/);
      return;
    }
    await desc.waitFor({ state: 'visible' });
    t.equal(
      (await desc.textContent())?.trim(),
      'Where everyone talks about everything under the sun, at length',
      'the description, rendered',
    );
    t.equal(await desc.locator('strong').textContent(), 'everyone', 'its markup, rendered');
    const style = await desc.evaluate((el) => {
      const cs = el.ownerDocument.defaultView!.getComputedStyle(el);
      return { ws: cs.whiteSpace, overflow: cs.overflow, ellipsis: cs.textOverflow };
    });
    t.same(style, { ws: 'nowrap', overflow: 'hidden', ellipsis: 'ellipsis' }, 'one line');
    const box = (await desc.boundingBox())!;
    const search = (await page.locator('.topbar .search').boundingBox())!;
    t.ok(box.x + box.width <= search.x + 1, 'it leaves the search room');
    await screenshot(page, t, `description-${width}`);
    // A topic's view: the channel, the topic, and still the description.
    await page.goto(ts.url + `/#narrow/channel/${general}-general/topic/lunch`);
    await page.waitForSelector('.topbar .topic-crumb');
    await desc.waitFor({ state: 'visible' });
    t.pass('a topic: the description too');
    // Changed: the header follows (an event).
    const res = await ts.api.patch('iago', `streams/${general}`, { description: 'Now short' });
    t.equal(res.status, 200);
    await waitFor(
      page,
      `document.querySelector('.topbar .narrow-description')?.textContent.trim() === 'Now short'`,
    );
    t.pass('a new description shows at once');
    const back = await ts.api.patch('iago', `streams/${general}`, {
      description: 'Where **everyone** talks about everything under the sun, at length',
    });
    t.equal(back.status, 200);
    // A search: none.
    await page.goto(ts.url + '/#narrow/search/lunch');
    await page.waitForSelector('.messages .msg');
    t.equal(await desc.count(), 0, 'a search: no description');
    watch.assertClean(t, /WebSocket|status of 401/);
  });
}
