/**
 * The web app in chromium, marking as read from the sidebar's menus (as the reference's channel,
 * topic and All messages popovers offer "Mark all messages as read"): a topic, a channel, then
 * everything (after a confirmation in the app's own dialog, by mouse and by keyboard), each
 * through the server's endpoint, the counts following its events; keys pressed right after a
 * menu opens act in it. Hamlet's "mark as read on scroll" is "never", so that opening a view
 * reads nothing.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, sidebarCount, waitCount, waitDrawerOpen, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    alpha: { by: 'iago', members: ['hamlet', 'othello', 'iago'] },
    beta: { by: 'iago', members: ['hamlet', 'othello', 'iago'] },
  },
  seed,
});

async function seed(): Promise<void> {
  const { api, fx } = ts;
  await sendChannelMessage(api, 'othello', 'alpha', 'one', 'first of one');
  await sendChannelMessage(api, 'othello', 'alpha', 'one', 'second of one');
  await sendChannelMessage(api, 'othello', 'alpha', 'two', 'only of two');
  await sendChannelMessage(api, 'othello', 'beta', 'three', 'first of three');
  await sendChannelMessage(api, 'othello', 'beta', 'three', 'second of three');
  await sendDirectMessage(api, 'othello', [fx.users.hamlet!.id], 'A private word');
  await api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 3 });
}

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
  t.equal(
    await sidebarCount(page, 'Inbox'),
    2,
    'two unread left in all (the home view’s count, the Inbox)',
  );

  // Mark all asks first (as the reference does), in the app's own dialog, not the browser's:
  // declining changes nothing.
  const browserDialogs: string[] = [];
  page.on('dialog', (d) => {
    browserDialogs.push(d.message());
    void d.dismiss();
  });
  const question = page.getByRole('alertdialog', { name: 'Mark all messages as read?' });
  await markFromMenu(page, 'Menu for All messages');
  await question.waitFor();
  await question.getByRole('button', { name: 'Cancel' }).click();
  await question.waitFor({ state: 'detached' });
  await page.waitForTimeout(300);
  t.equal(await sidebarCount(page, 'Inbox'), 2, 'declined: nothing marked');
  await markFromMenu(page, 'Menu for All messages');
  await question.waitFor();
  t.match(await question.textContent(), /marked as read/, 'it says what will happen');
  await screenshot(page, t, 'confirm-1280');
  await question.getByRole('button', { name: 'Mark as read' }).click();
  await waitCount(page, 'Inbox', 0);
  t.same(browserDialogs, [], 'no dialog of the browser');
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
  await waitDrawerOpen(page); // slid in, not halfway, in the screenshot
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

t.test("mark all's question by keyboard: Esc cancels, Enter confirms", async (t) => {
  if (NO_CHROMIUM) return;
  for (const [width, dark] of [
    [1280, false],
    [390, true],
  ] as const) {
    await sendChannelMessage(ts.api, 'othello', 'alpha', 'five', `news at ${width}`);
    const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#narrow/is/starred',
      width,
      height: width === 390 ? 844 : 800,
      dark,
    });
    if (width === 390) {
      await page.getByRole('button', { name: 'Open the sidebar' }).click();
      await waitDrawerOpen(page);
    }
    await waitCount(page, 'Inbox', 1);
    const button = page.getByRole('button', { name: 'Menu for All messages', exact: true });
    await button.focus();
    await page.keyboard.press('Enter');
    await waitFor(page, `document.activeElement?.getAttribute('role') === 'menuitem'`);
    await page.keyboard.press('Enter');
    const question = page.getByRole('alertdialog', { name: 'Mark all messages as read?' });
    await question.waitFor();
    await waitFor(
      page,
      `document.activeElement?.textContent === 'Mark as read' && !!document.activeElement.closest('[role="alertdialog"]')`,
    );
    t.pass(`${width}: the focus is on its action`);
    await screenshot(page, t, `confirm-${width}${dark ? '-dark' : ''}`);
    // Tab stays within it.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    t.equal(
      await page.evaluate(`document.activeElement?.textContent`),
      'Mark as read',
      'Tab goes round its two buttons',
    );
    await page.keyboard.press('Escape');
    await question.waitFor({ state: 'detached' });
    t.ok(
      await button.evaluate((el) => el === el.ownerDocument.activeElement),
      'Esc: closed, the focus back on the menu button',
    );
    t.ok(await page.locator('.sidebar').isVisible(), 'and only it closed');
    await page.waitForTimeout(300);
    t.equal(await sidebarCount(page, 'Inbox'), 1, 'nothing marked');
    await page.keyboard.press('Enter');
    await waitFor(page, `document.activeElement?.getAttribute('role') === 'menuitem'`);
    await page.keyboard.press('Enter');
    await question.waitFor();
    await page.keyboard.press('Enter');
    await question.waitFor({ state: 'detached' });
    await waitCount(page, 'Inbox', 0);
    t.pass(`${width}: Enter confirms`);
    await page.close();
  }
});

t.test('keys pressed right after opening a menu act in it', async (t) => {
  if (NO_CHROMIUM) return;
  await sendChannelMessage(ts.api, 'othello', 'alpha', 'six', 'one more');
  await sendChannelMessage(ts.api, 'othello', 'alpha', 'seven', 'and another');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/alpha',
  });
  await waitCount(page, 'six', 1);
  // The focus is on the first action as the menu is drawn: in the task of the click, before any
  // frame (the app draws the user's input at once).
  const focused = await page.evaluate(`(async () => {
    const button = document.querySelector('button[aria-label="Menu for topic six"]');
    button.click();
    await null;
    const at = document.activeElement;
    return at?.getAttribute('role') + ': ' + at?.textContent;
  })()`);
  t.equal(focused, 'menuitem: Mark all messages as read', 'the action has the focus at once');
  await page.keyboard.press('Escape');
  await page.getByRole('menu').waitFor({ state: 'detached' });

  // By the keyboard, with no wait between opening and choosing: Enter acts on the action, not
  // on the menu's button again.
  const button = page.getByRole('button', { name: 'Menu for topic seven', exact: true });
  await button.focus();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  await waitCount(page, 'seven', 0);
  t.equal(await sidebarCount(page, 'six'), 1, 'only that topic marked');
  t.ok(
    await button.evaluate((el) => el === el.ownerDocument.activeElement),
    'the focus back on the button',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();
});
