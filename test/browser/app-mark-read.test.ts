/**
 * The web app in chromium, marking as read from the sidebar's menus (as the reference's channel,
 * topic and All messages popovers offer "Mark all messages as read"): a topic, a channel, then
 * everything (after a confirmation), each through the server's endpoint, the counts following its
 * events. Hamlet's "mark as read on scroll" is "never", so that opening a view reads nothing.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, sidebarCount, waitCount, waitFor } from '../helpers/app.js';
import { launchBrowser, NO_CHROMIUM, screenshot, type TestBrowser } from '../helpers/browser.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { startServer, type TestServer } from '../helpers/server.js';

if (NO_CHROMIUM) t.plan(0, NO_CHROMIUM);

let b: TestBrowser;
let ts: TestServer;

t.before(async () => {
  if (NO_CHROMIUM) return;
  b = await launchBrowser(t);
  ts = await startServer(t);
  const { api, fx } = ts;
  const everyone = ['hamlet', 'othello', 'iago'].map((n) => fx.users[n]!.id);
  await createChannel(api, 'iago', 'alpha', { principals: everyone });
  await createChannel(api, 'iago', 'beta', { principals: everyone });
  await sendChannelMessage(api, 'othello', 'alpha', 'one', 'first of one');
  await sendChannelMessage(api, 'othello', 'alpha', 'one', 'second of one');
  await sendChannelMessage(api, 'othello', 'alpha', 'two', 'only of two');
  await sendChannelMessage(api, 'othello', 'beta', 'three', 'first of three');
  await sendChannelMessage(api, 'othello', 'beta', 'three', 'second of three');
  await sendDirectMessage(api, 'othello', [fx.users.hamlet!.id], 'A private word');
  await api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 3 });
});

/** Opens the "⋮" menu of the sidebar row `rowLabel` and picks "Mark all messages as read". */
async function markFromMenu(page: Page, rowLabel: string): Promise<void> {
  const button = page.getByRole('button', { name: rowLabel, exact: true });
  await button.click();
  await page.getByRole('menuitem', { name: 'Mark all messages as read' }).click();
}

t.test('a topic, a channel, then everything, from the sidebar menus', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#narrow/channel/alpha' });
  await waitCount(page, 'one', 2);
  t.equal(await sidebarCount(page, 'alpha'), 3, 'alpha: 3 unread');
  t.equal(await sidebarCount(page, 'two'), 1, 'topic two: 1 unread');

  await markFromMenu(page, 'Menu for topic one');
  await waitCount(page, 'one', 0);
  await waitCount(page, 'alpha', 1);
  t.equal(await sidebarCount(page, 'two'), 1, 'the other topic keeps its unread');
  t.equal(await sidebarCount(page, 'beta'), 2, 'another channel keeps its unread');
  await screenshot(page, t, 'topic-menu-done');

  await markFromMenu(page, 'Menu for #beta');
  await waitCount(page, 'beta', 0);
  t.equal(await sidebarCount(page, 'alpha'), 1, 'alpha untouched by marking beta');
  t.equal(await sidebarCount(page, 'All messages'), 2, 'two unread left in all');

  // Mark all asks first (as the reference does): declining changes nothing.
  page.once('dialog', (d) => void d.dismiss());
  await markFromMenu(page, 'Menu for All messages');
  await page.waitForTimeout(300);
  t.equal(await sidebarCount(page, 'All messages'), 2, 'declined: nothing marked');
  page.once('dialog', (d) => {
    t.match(d.message(), /Mark all messages as read/);
    void d.accept();
  });
  await markFromMenu(page, 'Menu for All messages');
  await waitCount(page, 'All messages', 0);
  t.equal(await sidebarCount(page, 'alpha'), 0, 'alpha read');
  t.equal(await sidebarCount(page, 'Direct messages'), 0, 'direct messages read');
  await page.close();
});

t.test('the menu by keyboard, at 390 px in the dark theme', async (t) => {
  if (NO_CHROMIUM) return;
  await sendChannelMessage(ts.api, 'othello', 'beta', 'four', 'news');
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/is/starred',
    width: 390,
    height: 844,
    dark: true,
  });
  await page.getByRole('button', { name: 'Open the sidebar' }).click();
  await waitCount(page, 'beta', 1);
  const button = page.getByRole('button', { name: 'Menu for #beta', exact: true });
  await button.focus();
  await page.keyboard.press('Enter');
  const item = page.getByRole('menuitem', { name: 'Mark all messages as read' });
  await item.waitFor();
  t.ok(
    await item.evaluate((el) => el === el.ownerDocument.activeElement),
    'the action has the focus',
  );
  await page.waitForTimeout(400); // the drawer's slide
  await screenshot(page, t, 'menu-open-390');
  await page.keyboard.press('Escape');
  t.equal(await item.count(), 0, 'Escape closes the menu');
  t.ok(await page.locator('.sidebar').isVisible(), 'and only the menu: the drawer stays open');
  t.ok(
    await button.evaluate((el) => el === el.ownerDocument.activeElement),
    'focus back on the button',
  );
  await page.keyboard.press('Enter');
  await item.waitFor();
  await waitFor(page, `document.activeElement?.getAttribute('role') === 'menuitem'`);
  await page.keyboard.press('Enter');
  await waitCount(page, 'beta', 0);
  await page.close();
});
