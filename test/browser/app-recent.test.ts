/**
 * The web app in chromium, the Recent conversations view (#recent, web/app/recent.tsx): rows from
 * the existing messages, newest first (a topic muted as such left out, a direct-message
 * conversation in); a message sent through the API takes its row to the top, live, with its
 * count and the mention marked; a read elsewhere drops the count; the filters (Unread, Include
 * DMs, Participated, the words, All topics); a click on a row and the keys (↓ from the filter
 * field, Enter) open the conversation; `t` and Esc come back; the home view
 * (`web_home_view`) honoured on load, All messages and the Inbox for the others, and the
 * sidebar's entries then (the home view first, with the unread count); the headers sort the rows
 * (Time, newest first, by default; kept while the page lives, not over a reload); `r` on a row
 * opens it with the compose box addressed, `c` All messages with a channel to choose. Screenshots
 * at 1280 and 390 pixels (the columns collapse: no horizontal scrolling, the topics readable).
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  openApp,
  pluck,
  sidebarCount,
  waitFor,
  waitForTitle,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

const EVERYONE = ['hamlet', 'othello', 'iago'];
let lunch = 0;
let generalId = 0;
const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'othello', members: EVERYONE },
    design: { by: 'iago', members: EVERYONE },
  },
  seed: async ({ ts, channels }) => {
    const api = ts.api;
    generalId = channels.general;
    lunch = await sendChannelMessage(api, 'othello', 'general', 'lunch', 'Lunch at noon?');
    await sendChannelMessage(api, 'iago', 'design', 'logo', 'A round logo.');
    await sendDirectMessage(api, 'othello', [ts.fx.users['hamlet']!.id], 'Are you there?');
    await sendChannelMessage(api, 'iago', 'general', 'gossip', 'Whispers nobody needs.');
    await sendChannelMessage(api, 'hamlet', 'general', 'plans', 'My plans for the week.', {
      read_by_sender: true,
    });
    const muted = await api.post('hamlet', 'user_topics', {
      stream_id: channels.general,
      topic: 'gossip',
      visibility_policy: 1,
    });
    if (muted.status !== 200) throw new Error(`muting: ${muted.text}`);
  },
});

/** The rows' conversations, in order, as the view shows them. */
const rows = (page: Page) => pluck(page, '.recent-row .recent-open');

/** Until the rows are exactly these. */
function waitRows(page: Page, want: string[]): Promise<void> {
  return waitFor(
    page,
    `JSON.stringify([...document.querySelectorAll('.recent-row .recent-open')].map((e) => e.textContent.trim())) === ${JSON.stringify(JSON.stringify(want))}`,
  );
}

/** A row's unread count (0 when none) and whether it is marked as a mention. */
async function rowCount(page: Page, name: string): Promise<[number, boolean]> {
  return page.evaluate(`(() => {
    for (const r of document.querySelectorAll('.recent-row')) {
      if (r.querySelector('.recent-open').textContent.trim() !== ${JSON.stringify(name)}) continue;
      const b = r.querySelector('.recent-unread .badge');
      return [b ? Number(b.textContent) : 0, !!b && b.classList.contains('mention')];
    }
    return [-1, false];
  })()`);
}

async function waitRowCount(page: Page, name: string, n: number): Promise<void> {
  await waitFor(
    page,
    `(() => {
      for (const r of document.querySelectorAll('.recent-row')) {
        if (r.querySelector('.recent-open').textContent.trim() !== ${JSON.stringify(name)}) continue;
        const b = r.querySelector('.recent-unread .badge');
        return (b ? Number(b.textContent) : 0) === ${n};
      }
      return false;
    })()`,
  );
}

/** The login form, then the app live with the Recent view shown (no message list to wait for). */
async function openAtHome(page: Page, who: string): Promise<void> {
  await page.goto(ts.url + '/');
  await page.fill('input[name="username"]', ts.fx.users[who]!.email);
  await page.fill('input[name="password"]', ts.fx.users[who]!.password);
  await page.click('button[type="submit"]');
  await page.waitForSelector('.app[data-status="live"]');
}

t.test('rows, live moves and counts, filters, click and keys', async (t) => {
  if (NO_CHROMIUM) return;
  // Opened on Starred (a list to wait for, that reads nothing), then the view from the sidebar.
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/is/starred',
  });
  await page.click('.sidebar a.nav-item[href="#recent"]');
  await waitForTitle(page, 'Recent conversations');
  await waitRows(page, ['plans', 'Othello', 'logo', 'lunch']);
  t.pass('newest activity first; the muted topic left out; the conversation with Othello in');
  t.equal(
    await page.getAttribute('.sidebar a.nav-item[href="#recent"]', 'aria-current'),
    'page',
    'the sidebar marks the view',
  );
  t.same(await rowCount(page, 'lunch'), [1, false]);
  t.same(await rowCount(page, 'Othello'), [1, false]);
  t.same(await rowCount(page, 'plans'), [0, false], 'one’s own message is read');
  t.match(
    await page.locator('.recent-row', { hasText: 'plans' }).locator('.recent-channel').innerText(),
    /general/,
    'the channel beside its topic',
  );
  await screenshot(page, t, 'recent-1280');

  // A message through the API: its row to the top, live, its count up, the mention marked.
  const noon = await sendChannelMessage(
    ts.api,
    'othello',
    'general',
    'lunch',
    'Still hungry, @**Hamlet**?',
  );
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);
  await waitRowCount(page, 'lunch', 2);
  t.same(await rowCount(page, 'lunch'), [2, true], 'a mention marked');
  t.pass('a new message took its row to the top');

  // Read elsewhere (the API, as another device): the count drops.
  const read = await ts.api.post('hamlet', 'messages/flags', {
    messages: JSON.stringify([lunch, noon]),
    op: 'add',
    flag: 'read',
  });
  t.equal(read.status, 200);
  await waitRowCount(page, 'lunch', 0);
  t.pass('read elsewhere: the count went');

  // The filters.
  const toggle = (name: string) => page.click(`.recent-toggle:has-text("${name}")`);
  await toggle('Unread');
  await waitRows(page, ['Othello', 'logo']);
  t.equal(
    await page.getAttribute('.recent-toggle:has-text("Unread")', 'aria-pressed'),
    'true',
    'the toggle says it is on',
  );
  await toggle('Unread');
  await toggle('Include DMs');
  await waitRows(page, ['lunch', 'plans', 'logo']);
  await toggle('Include DMs');
  await toggle('Participated');
  await waitRows(page, ['plans']);
  await toggle('Participated');
  await page.fill('.recent-search', 'desi');
  await waitRows(page, ['logo']);
  await page.fill('.recent-search', 'gen lun');
  await waitRows(page, ['lunch']);
  await page.fill('.recent-search', '');
  await page.selectOption('.recent-topics', 'all');
  await waitRows(page, ['lunch', 'plans', 'gossip', 'Othello', 'logo']);
  t.ok(
    await page.locator('.recent-row.muted', { hasText: 'gossip' }).count(),
    'All topics: the muted one too, marked',
  );
  await page.selectOption('.recent-topics', 'unmuted');
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);
  t.pass('Unread, Include DMs, Participated, words, which topics');

  // The filters stay (this browser), the words not.
  await toggle('Include DMs');
  await page.reload();
  await page.waitForSelector('.recent-row');
  await waitRows(page, ['lunch', 'plans', 'logo']);
  await toggle('Include DMs');
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);
  t.pass('the filters kept over a reload');

  // A click opens the conversation.
  await page.click('.recent-row .recent-open:text-is("logo")');
  await waitFor(page, `location.hash.endsWith('/topic/logo')`);
  await waitForTitle(page, 'logo');
  await waitMessage(page, 'A round logo.');
  t.pass('a click opened the topic');

  // `t` back to the view; the keys: ↓ from the filter field, ↓, Enter.
  await page.locator('.messages').focus();
  await page.keyboard.press('t');
  await page.waitForSelector('.recent-row');
  t.equal(await page.evaluate('location.hash'), '#recent');
  await page.focus('.recent-search');
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'lunch'`);
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'plans'`);
  await page.keyboard.press('End');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'logo'`);
  await page.keyboard.press('ArrowUp');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'Othello'`);
  t.equal(
    await page.evaluate(`document.querySelectorAll('.recent-open[tabindex="0"]').length`),
    1,
    'one Tab stop in the rows (roving)',
  );
  await page.keyboard.press('Enter');
  await waitFor(page, `location.hash.startsWith('#narrow/dm/')`);
  await waitMessage(page, 'Are you there?');
  t.pass('the keys opened the conversation');

  // Esc, nothing else open: the home view (the Inbox for this user, the default).
  await page.locator('.messages').focus();
  await page.keyboard.press('Escape');
  await waitForTitle(page, 'Inbox');
  t.equal(await page.evaluate('location.hash'), '#inbox');
  t.pass('Esc went to the home view');
  watch.assertClean(t);
  await page.close();
});

t.test('the home view on load, and Esc back to it', async (t) => {
  if (NO_CHROMIUM) return;
  const set = (v: string) => ts.api.patch('othello', 'settings', { web_home_view: v });
  t.equal((await set('recent_topics')).status, 200);
  const page = await b.newPage({ viewport: { width: 1280, height: 800 } });
  const watch = await watchPage(page);
  await openAtHome(page, 'othello');
  await page.waitForSelector('.recent-row');
  await waitForTitle(page, 'Recent conversations');
  t.equal(await page.evaluate('location.hash'), '', 'no view named: the home view');
  t.ok((await rows(page)).includes('gossip'), 'Othello did not mute that topic');
  // The sidebar: Recent conversations first, with the unread count (not the Inbox nor All
  // messages), as the reference's home view entry.
  t.same(
    (await pluck(page, '.sidebar-scroll > .nav-list > li .label')).slice(0, 3),
    ['Recent conversations', 'Inbox', 'All messages'],
    'the home view first',
  );
  await waitFor(page, `document.querySelector('.sidebar a[href="#recent"] .badge') !== null`);
  t.ok((await sidebarCount(page, 'Recent conversations')) > 0, 'its entry: the unread count');
  t.equal(await sidebarCount(page, 'Inbox'), 0, 'the Inbox: no count when not the home view');
  t.equal(await sidebarCount(page, 'All messages'), 0, 'All messages neither');

  // A topic, then Esc: back to Recent conversations.
  await page.click('.recent-row .recent-open:text-is("logo")');
  await waitMessage(page, 'A round logo.');
  await page.locator('.messages').focus();
  await page.keyboard.press('Escape');
  await page.waitForSelector('.recent-row');
  await waitForTitle(page, 'Recent conversations');
  t.pass('Esc: back to the home view');

  // The sidebar's All messages from there (the fragment was empty: it must change).
  await page.goto(ts.url + '/');
  await page.waitForSelector('.recent-row');
  await page.click('.sidebar .nav-item:has-text("All messages")');
  await waitForTitle(page, 'All messages');
  await waitMessage(page, 'Lunch at noon?');
  t.pass('All messages from the home view');

  // The choice in Settings › Display.
  await page.goto(ts.url + '/#settings/display');
  await page.waitForSelector('#setting-web_home_view');
  t.equal(await page.inputValue('#setting-web_home_view'), 'recent_topics');
  const saved = page.waitForResponse(
    (r) => new URL(r.url()).pathname === '/json/settings' && r.request().method() === 'PATCH',
  );
  await page.selectOption('#setting-web_home_view', 'all_messages');
  t.equal((await saved).status(), 200, 'saved');
  // All messages on the next load.
  await page.goto('about:blank');
  await page.goto(ts.url + '/');
  await page.waitForSelector('.app[data-status="live"] .messages[aria-busy="false"]');
  await waitForTitle(page, 'All messages');
  t.equal(await page.locator('.recent-view').count(), 0, 'all_messages: All messages');
  t.pass('the setting changed from Display, honoured on load');

  // Inbox: the Inbox (app-inbox tests it further).
  t.equal((await set('inbox')).status, 200);
  await page.reload();
  await page.waitForSelector('.app[data-status="live"] .inbox-view');
  await waitForTitle(page, 'Inbox');
  t.pass('inbox: the Inbox');
  watch.assertClean(t);
  await page.close();
});

t.test('390 pixels: the columns collapse', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    width: 390,
    height: 844,
    hash: '#narrow/is/starred',
  });
  await page.evaluate(`location.hash = '#recent'`);
  // Lunch on top since the first test's message.
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);
  t.ok(
    await page.evaluate('document.documentElement.scrollWidth <= 390'),
    'no horizontal scrolling',
  );
  const boxes = await page.$$eval('.recent-row .recent-open', (els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { left: r.left, right: r.right, width: r.width };
    }),
  );
  t.ok(boxes.length >= 3, 'rows shown');
  t.ok(
    boxes.every((r) => r.left >= 0 && r.right <= 390 && r.width > 20),
    'each topic in the screen, readable',
  );
  t.equal(
    await page.locator('.recent-head-people').isVisible(),
    false,
    'on a phone the header keeps only its sorting buttons',
  );
  t.equal(await page.locator('.recent-sort:visible').count(), 4);
  await screenshot(page, t, 'recent-390');
  watch.assertClean(t);
  await page.close();
});

t.test('the headers sort the rows; r and c on a row', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/is/starred',
  });
  await page.evaluate(`location.hash = '#recent'`);
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);
  const pressed = () => pluck(page, '.recent-sort[aria-pressed="true"]');
  t.same(await pressed(), ['Time ↓, descending'], 'by time, newest first, at first');

  await page.click('.recent-sort:has-text("Topic")');
  await waitRows(page, ['logo', 'lunch', 'Othello', 'plans']);
  t.pass('Topic: by name, without case (a DM by its people)');
  await page.click('.recent-sort:has-text("Channel")');
  await waitRows(page, ['Othello', 'logo', 'lunch', 'plans']);
  t.pass('Channel: direct messages first, then the channels by name, newest first in each');
  await page.click('.recent-sort:has-text("Channel")');
  await waitRows(page, ['lunch', 'plans', 'logo', 'Othello']);
  t.same(await pressed(), ['Channel ↓, descending'], 'the same header again: turned round');
  await screenshot(page, t, 'recent-sorted-1280');
  // Kept while the page lives (another view and back), not stored: a reload sorts by time again,
  // as the reference's (its localStorage keeps the filters, its table's sort is in memory).
  await page.evaluate(`location.hash = '#narrow/is/starred'`);
  await page.waitForSelector('.recent-row', { state: 'detached' });
  await page.evaluate(`location.hash = '#recent'`);
  await waitRows(page, ['lunch', 'plans', 'logo', 'Othello']);
  t.same(await pressed(), ['Channel ↓, descending'], 'another view and back: the sort kept');
  await page.reload();
  await page.waitForSelector('.app[data-status="live"] .recent-row');
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);
  t.same(await pressed(), ['Time ↓, descending'], 'a reload: by time again, newest first');
  t.equal(
    await page.evaluate(
      `Object.keys(localStorage).filter((k) => k.includes('recent-sort')).length`,
    ),
    0,
    'no sort in the browser’s storage',
  );
  await page.click('.recent-sort:has-text("Time")');
  await waitRows(page, ['logo', 'Othello', 'plans', 'lunch']);
  await page.click('.recent-sort:has-text("Time")');
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);
  t.pass('Time: oldest first, then newest first again');

  // ← → between a row's channel and topic, wrapping round.
  await page.focus('.recent-search');
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'lunch'`);
  const on = () =>
    page.evaluate<string>(
      `document.activeElement.closest('.recent-channel') ? 'channel' : document.activeElement.className`,
    );
  await page.keyboard.press('ArrowLeft');
  t.equal(await on(), 'channel', '← : the channel');
  await page.keyboard.press('ArrowLeft');
  t.equal(await on(), 'recent-open', '← again: round to the topic');
  await page.keyboard.press('ArrowRight');
  t.equal(await on(), 'channel', '→ : round to the channel');
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'plans'`);
  t.pass('↓ from the channel: the next row’s topic');

  // `r` on a row: its conversation, the compose box on it, its text field focused.
  await page.focus('.recent-search');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'plans'`);
  await page.keyboard.press('r');
  await waitFor(page, `location.hash.endsWith('/topic/plans')`);
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.equal(await page.inputValue('#compose-topic'), 'plans', 'r: addressed to the topic');
  t.equal(await page.inputValue('#compose-text'), '', 'nothing typed into it');

  // `c` on a row, as the reference's `c` there (its compose key, which no row addresses): a new
  // channel message, its channel to choose, the topic to name (All messages: no compose box
  // under this view), from a topic's row and from a direct-message row alike.
  for (const [downs, name] of [
    [1, 'lunch'],
    [3, 'Othello'],
  ] as const) {
    await page.evaluate(`location.hash = '#recent'`);
    await page.waitForSelector('.recent-row');
    await page.focus('.recent-search');
    for (let i = 0; i < downs; i++) await page.keyboard.press('ArrowDown');
    await waitFor(page, `document.activeElement?.textContent.trim() === '${name}'`);
    await page.keyboard.press('c');
    await waitFor(page, `document.activeElement?.matches('.compose select.to-channel')`);
    t.equal(await page.evaluate('location.hash'), '#feed', `c on ${name}: All messages`);
    t.equal(
      await page.inputValue('.compose select.to-channel'),
      '',
      `c on ${name}: the channel to choose`,
    );
    t.equal(await page.inputValue('#compose-topic'), '', `c on ${name}: the topic to name`);
  }

  // `c` anywhere in the view but a field, as the reference's: with a filter button focused, and
  // with nothing focused (it did nothing, only a row took it).
  for (const where of ['a filter button', 'nothing'] as const) {
    await page.evaluate(`location.hash = '#recent'`);
    await page.waitForSelector('.recent-row');
    await page.waitForTimeout(100);
    if (where === 'nothing') await page.evaluate(`document.activeElement?.blur()`);
    else await page.focus('.recent-toggles button');
    await page.keyboard.press('c');
    await waitFor(page, `document.activeElement?.matches('.compose select.to-channel')`);
    t.equal(await page.evaluate('location.hash'), '#feed', `c with ${where} focused: All messages`);
    t.equal(await page.inputValue('.compose select.to-channel'), '', 'the channel to choose');
  }
  // The Inbox too: the reference's compose key works there as in Recent (ours did nothing).
  await page.evaluate(`location.hash = '#inbox'`);
  await waitForTitle(page, 'Inbox');
  await page.waitForTimeout(100);
  await page.evaluate(`document.activeElement?.blur()`);
  await page.keyboard.press('c');
  await waitFor(page, `document.activeElement?.matches('.compose select.to-channel')`);
  t.equal(await page.evaluate('location.hash'), '#feed', 'c in the Inbox: All messages');
  t.equal(await page.inputValue('.compose select.to-channel'), '', 'the channel to choose');
  // In the filter field, `c` is typed.
  await page.evaluate(`location.hash = '#recent'`);
  await page.waitForSelector('.recent-row');
  await page.focus('.recent-search');
  await page.keyboard.press('c');
  t.equal(await page.inputValue('.recent-search'), 'c', 'c in the filter field: typed');
  t.equal(await page.evaluate('location.hash'), '#recent', 'the view stays');
  await page.fill('.recent-search', '');
  await waitRows(page, ['lunch', 'plans', 'Othello', 'logo']);

  // `c`, then another view before the first has landed (two keys at once): the box is not
  // addressed later on, at the next message view (goAndCompose waited for any view to leave).
  await page.focus('.recent-search');
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'lunch'`);
  await page.evaluate(`(() => {
    const at = document.activeElement;
    for (const key of ['c', 'I'])
      at.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
  })()`);
  await waitForTitle(page, 'Inbox');
  await page.waitForTimeout(200);
  t.equal(await page.evaluate('location.hash'), '#inbox', 'the Inbox, the last asked for');
  await page.evaluate(`location.hash = '#feed'`);
  await page.waitForSelector('#compose-text', { state: 'visible' });
  await page.waitForTimeout(300);
  t.notOk(
    await page.evaluate(`!!document.activeElement?.closest('.compose')`),
    'All messages later: the compose box not taken by the dropped `c`',
  );

  // `r` on a direct-message row: the conversation.
  await page.evaluate(`location.hash = '#recent'`);
  await page.waitForSelector('.recent-row');
  await page.focus('.recent-search');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim() === 'Othello'`);
  await page.keyboard.press('r');
  await waitFor(page, `location.hash.startsWith('#narrow/dm/')`);
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.pass('r on a direct-message row: its conversation, the box focused');
  watch.assertClean(t);
  await page.close();
});

t.test(
  'c for a user subscribed to one channel: that channel, in Recent and elsewhere',
  async (t) => {
    if (NO_CHROMIUM) return;
    const sub = await ts.api.post('cordelia', 'users/me/subscriptions', {
      subscriptions: JSON.stringify([{ name: 'general' }]),
    });
    t.equal(sub.status, 200, sub.text);
    const subs = (await ts.api.get('cordelia', 'users/me/subscriptions')).body.subscriptions as {
      stream_id: number;
    }[];
    t.same(
      subs.map((x) => x.stream_id),
      [generalId],
      'subscribed to general only',
    );
    await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'Cordelia too?');
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'cordelia');
    // All messages (no channel shown): the reference's compose_actions.start fills in the only one.
    await waitMessage(page, 'Cordelia too?');
    await page.evaluate(`document.activeElement?.blur()`);
    await page.keyboard.press('c');
    await waitFor(page, `document.activeElement?.closest('.compose') !== null`);
    t.equal(
      await page.inputValue('.compose select.to-channel'),
      String(generalId),
      'c in All messages: the one channel',
    );
    await page.keyboard.press('Escape');
    // Recent conversations, nothing focused: the same rule.
    await page.evaluate(`location.hash = '#recent'`);
    await page.waitForSelector('.recent-row');
    await page.waitForTimeout(100);
    await page.evaluate(`document.activeElement?.blur()`);
    await page.keyboard.press('c');
    await waitFor(page, `location.hash === '#feed'`);
    await waitFor(page, `document.activeElement?.closest('.compose') !== null`);
    t.equal(
      await page.inputValue('.compose select.to-channel'),
      String(generalId),
      'c in Recent: the one channel',
    );
    watch.assertClean(t);
    await page.close();
  },
);
