/**
 * The reference's message keys where a keyboard user presses them, in chromium. With nothing
 * focused (after `n`, which opens a topic at its first unread message) and on the sidebar's link
 * a click on a channel leaves focused, j/k and the list's other keys act on the message list
 * (they did nothing: only the list itself took them), and with nothing selected ↓/j start at the
 * first message in view, ↑/k at the last (both went to the view's last message, far below the
 * unread ones `n` had opened on).
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitForTitle, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

const LONG = 40;

const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'othello', members: ['hamlet', 'othello'] },
    design: { by: 'othello', members: ['hamlet', 'othello'] },
  },
  seed: async ({ ts }) => {
    for (let i = 0; i < LONG; i++)
      await sendChannelMessage(ts.api, 'othello', 'general', 'long thread', `long ${i}`);
    await sendChannelMessage(ts.api, 'othello', 'design', 'logo', 'the logo draft');
    // What the view shows stays unread: `n` goes where the test expects.
    await ts.api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 3 });
  },
});

/** The selected message's text, or null. */
function selectedText(page: Page): Promise<string | null> {
  return page.evaluate(`document.querySelector('.msg.selected .content')?.textContent ?? null`);
}

/** Until the selected message's text is `text`. */
function selectedIs(page: Page, text: string): Promise<void> {
  return waitFor(
    page,
    `document.querySelector('.msg.selected .content')?.textContent === ${JSON.stringify(text)}`,
  );
}

/** Whether the message with this text is wholly within the list's box. */
function wholeInView(page: Page, text: string): Promise<boolean> {
  return page.evaluate(`(() => {
    const list = document.querySelector('.messages').getBoundingClientRect();
    const row = [...document.querySelectorAll('.msg')].find(
      (m) => m.querySelector('.content')?.textContent === ${JSON.stringify(text)});
    if (!row) return false;
    const r = row.getBoundingClientRect();
    return r.top >= list.top - 1 && r.bottom <= list.bottom + 1;
  })()`);
}

t.test('j and k act on the list with the focus on nothing or on the sidebar', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#inbox' });
  await waitFor(page, `!!document.querySelector('.inbox-focus')`);
  // `n`, once or twice: to the long topic (design's may come first).
  for (let i = 0; i < 2; i++) {
    await page.keyboard.press('n');
    await waitFor(page, `/logo|long thread/.test(document.querySelector('.title')?.textContent)`);
    if (await page.evaluate(`document.querySelector('.title').textContent.includes('long')`)) break;
    await waitMessage(page, 'the logo draft');
  }
  await waitForTitle(page, 'long thread');
  await waitMessage(page, 'long 0');
  t.equal(await selectedText(page), null, 'nothing selected as `n` opens the topic');
  t.not(
    await page.evaluate(`document.activeElement?.closest('.messages') ? 'list' : 'elsewhere'`),
    'list',
    'the focus is not in the list',
  );
  // j: the first message in view, the topic's first unread one (the view opened there).
  await page.keyboard.press('j');
  await selectedIs(page, 'long 0');
  t.pass('j selected the first unread message, in view');
  await page.keyboard.press('j');
  await selectedIs(page, 'long 1');
  await page.keyboard.press('k');
  await selectedIs(page, 'long 0');
  t.pass('j and k move on from there');
  await screenshot(page, t, 'hotkeys-after-n');

  // A click on the sidebar's channel (its link keeps the focus): k selects in that view.
  await page
    .locator('.sidebar a.nav-item', { hasText: /^#?\s*design/ })
    .first()
    .click();
  await waitForTitle(page, 'design');
  await waitMessage(page, 'the logo draft');
  t.match(
    await page.evaluate(`document.activeElement?.closest('.sidebar') ? 'sidebar' : 'elsewhere'`),
    'sidebar',
    'the focus on the sidebar after the click',
  );
  await page.keyboard.press('k');
  await selectedIs(page, 'the logo draft');
  t.ok(await wholeInView(page, 'the logo draft'), 'k selected a message in view');
  t.match(
    await page.evaluate(`document.activeElement?.className ?? ''`),
    /messages/,
    'the list has the focus, where the next keys go',
  );
});
