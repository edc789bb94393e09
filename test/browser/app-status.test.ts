/**
 * The web app in chromium: user status, as the reference's. Othello sets his status in his app
 * (the sidebar's status button: a preset; then his own card's "Edit status": a text of his own
 * and an emoji from the picker; then Clear), and Hamlet's open app shows each change as its
 * `user_status` event comes: the emoji after Othello's name in the people list (the text its
 * tooltip, and said to screen readers), after his name on his messages, and the emoji and text
 * on his card, open meanwhile. Clearing takes it away everywhere.
 *
 * Each wait is for what the action brings and was not there before it: a dialog that was not
 * open, one gone that was, an emoji that was absent, a text that was another.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

const TOPIC = '#narrow/channel/general/topic/plans';

/** What Hamlet's page shows of Othello's status: in the people list, on his message, his card. */
function shown(page: Page, id: number) {
  return page.evaluate<{
    list: { emoji: string; title: string; said: string } | null;
    message: string | null;
    card: { emoji: string; text: string } | null;
  }>(`(() => {
    const row = document.querySelector('.people a.person[data-user-id="${id}"]');
    const e = row?.querySelector('.status-emoji');
    const head = [...document.querySelectorAll('.msg .msg-head')].find((h) =>
      h.querySelector('.sender')?.textContent === 'Othello');
    const card = document.querySelector('.profile-card .card-status');
    return {
      list: e ? {
        emoji: e.dataset.emoji,
        title: e.title,
        said: [...row.querySelectorAll('.sr-only')].map((s) => s.textContent).join(''),
      } : null,
      message: head?.querySelector('.status-emoji')?.dataset.emoji ?? null,
      card: card ? {
        emoji: card.querySelector('.status-emoji')?.dataset.emoji ?? '',
        text: card.querySelector('.card-status-text')?.textContent ?? '',
      } : null,
    };
  })()`);
}

/** The status dialog, once open (it was not). */
async function dialogOpened(page: Page) {
  const dialog = page.getByRole('dialog', { name: 'Set status' });
  await dialog.waitFor();
  return dialog;
}

/** Until the dialog is gone. */
const dialogClosed = (page: Page) => page.waitForSelector('.status-dialog', { state: 'detached' });

t.test('set by one, shown live to another; cleared', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { api } = ts;
  const othello = ts.fx.users.othello!.id;
  await createChannel(api, 'othello', 'general', {
    principals: [othello, ts.fx.users.hamlet!.id],
  });
  await sendChannelMessage(api, 'othello', 'general', 'plans', 'The plans are ready.');

  const hamlet = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: TOPIC });
  const page = hamlet.page;
  await waitMessage(page, 'The plans are ready.');
  await page.waitForSelector(`.people a.person[data-user-id="${othello}"]`);
  t.same(await shown(page, othello), { list: null, message: null, card: null }, 'no status yet');
  const active = `.people a.person[data-user-id="${othello}"][data-status="active"]`;
  t.equal(await page.locator(active).count(), 0, 'he is offline, until he opens the app');
  // His card, open while he sets it.
  await page.locator('.msg', { hasText: 'The plans are ready.' }).locator('.sender').click();
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();

  const other = await openApp(b, ts.url, ts.fx, 'othello', { hash: TOPIC });
  const me = other.page;
  await waitMessage(me, 'The plans are ready.');
  await page.waitForSelector(active);

  // 1. The sidebar's status button; a preset fills the text and the emoji.
  t.equal(await me.getAttribute('.sidebar-foot .status-btn', 'aria-label'), 'Set status');
  await me.click('.sidebar-foot .status-btn');
  const dialog = await dialogOpened(me);
  t.equal(
    await me.evaluate(`document.activeElement?.getAttribute('aria-label')`),
    'Status text',
    'the focus in its text',
  );
  t.equal(await me.getAttribute('.status-text', 'maxlength'), '60', "the server's limit");
  t.ok(await dialog.getByRole('button', { name: 'Save' }).isDisabled(), 'nothing to save yet');
  // The presets' emoji come with the emoji data.
  await me.waitForSelector('.status-preset .status-emoji .e');
  await screenshot(me, t, 'dialog-empty');
  await dialog.getByRole('button', { name: 'Vacationing' }).click();
  t.equal(await me.inputValue('.status-text'), 'Vacationing');
  t.equal(await me.getAttribute('.status-emoji-btn', 'title'), ':palm_tree:');
  const posted = me.waitForRequest((r) => r.url().endsWith('/users/me/status'));
  await dialog.getByRole('button', { name: 'Save' }).click();
  const body = new URLSearchParams((await posted).postData()!);
  t.same(
    Object.fromEntries(body),
    {
      status_text: 'Vacationing',
      emoji_name: 'palm_tree',
      emoji_code: '1f334',
      reaction_type: 'unicode_emoji',
    },
    'the text and the emoji',
  );
  await dialogClosed(me);

  // Hamlet's page: in the list, on the message, on the open card.
  await waitFor(
    page,
    `!!document.querySelector('.people a.person[data-user-id="${othello}"] .status-emoji')`,
  );
  await waitFor(page, `!!document.querySelector('.profile-card .card-status')`);
  await waitFor(page, `!!document.querySelector('.msg .msg-head .status-emoji')`);
  t.same(await shown(page, othello), {
    list: { emoji: 'palm_tree', title: 'Vacationing', said: ', Vacationing, active' },
    message: 'palm_tree',
    card: { emoji: 'palm_tree', text: 'Vacationing' },
  });
  await screenshot(page, t, 'vacationing-1280');
  await waitFor(
    me,
    `document.querySelector('.sidebar-foot .status-btn')?.title === 'Status: Vacationing'`,
  );

  // 2. His own card's "Edit status": his words, an emoji from the picker, Enter saves.
  await me.locator('.msg', { hasText: 'The plans are ready.' }).locator('.sender').click();
  const card = me.getByRole('dialog', { name: 'Othello (you)' });
  await card.waitFor();
  t.equal(await me.textContent('.profile-card .card-status-text'), 'Vacationing', 'his own card');
  await card.getByRole('button', { name: 'Edit status' }).click();
  await dialogOpened(me);
  t.equal(await me.inputValue('.status-text'), 'Vacationing', 'the dialog shows it');
  await me.fill('.status-text', 'Reviewing the plans');
  await me.click('.status-emoji-btn');
  await me.getByRole('dialog', { name: 'Choose a status emoji' }).waitFor();
  await me.keyboard.type('tada');
  await me.keyboard.press('Enter');
  await me.waitForSelector('.picker', { state: 'detached' });
  t.equal(await me.getAttribute('.status-emoji-btn', 'title'), ':tada:', 'the emoji picked');
  await me.focus('.status-text');
  await me.keyboard.press('Enter');
  await dialogClosed(me);
  await waitFor(
    page,
    `document.querySelector('.profile-card .card-status-text')?.textContent === 'Reviewing the plans'`,
  );
  await waitFor(
    page,
    `document.querySelector('.people a.person[data-user-id="${othello}"] .status-emoji')?.title === 'Reviewing the plans'`,
  );
  await waitFor(
    page,
    `document.querySelector('.msg .msg-head .status-emoji')?.dataset.emoji === 'tada'`,
  );
  t.same(await shown(page, othello), {
    list: { emoji: 'tada', title: 'Reviewing the plans', said: ', Reviewing the plans, active' },
    message: 'tada',
    card: { emoji: 'tada', text: 'Reviewing the plans' },
  });

  // 3. Clear, and Save: gone everywhere.
  await me.click('.sidebar-foot .status-btn');
  await dialogOpened(me);
  await screenshot(me, t, 'dialog-set');
  await me.click('button[aria-label="Clear status"]');
  t.equal(await me.inputValue('.status-text'), '');
  t.equal(await me.getAttribute('.status-emoji-btn', 'aria-label'), 'Choose an emoji');
  await me.getByRole('button', { name: 'Save' }).click();
  await dialogClosed(me);
  await waitFor(page, `!document.querySelector('.profile-card .card-status')`);
  await waitFor(
    page,
    `!document.querySelector('.people a.person[data-user-id="${othello}"] .status-emoji')`,
  );
  await waitFor(page, `!document.querySelector('.msg .msg-head .status-emoji')`);
  t.same(await shown(page, othello), { list: null, message: null, card: null }, 'cleared');
  // His own page, when the event comes back to it (the dialog closed on the server's answer).
  await waitFor(
    me,
    `document.querySelector('.sidebar-foot .status-btn')?.getAttribute('aria-label') === 'Set status'`,
  );

  hamlet.watch.assertClean(t, /WebSocket|status of 401/);
  other.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the arrows, Esc and Cancel (nothing saved); a request refused says why', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await page.click('.sidebar-foot .status-btn');
  await dialogOpened(page);
  // The arrows go from the text through the presets, round; Enter on one takes it.
  // A preset's words (without its emoji's), or the field's class.
  const focused = () =>
    page.evaluate(`(() => {
      const el = document.activeElement;
      const emoji = el?.querySelector('.status-emoji')?.textContent ?? '';
      return el?.textContent.replace(emoji, '').trim() || el?.className;
    })()`);
  await page.keyboard.press('ArrowDown');
  t.equal(await focused(), 'Busy');
  await page.keyboard.press('ArrowUp');
  t.equal(await focused(), 'field status-text');
  await page.keyboard.press('ArrowUp');
  t.equal(await focused(), 'At the office', 'round to the last');
  await page.keyboard.press('Enter');
  t.equal(await page.inputValue('.status-text'), 'At the office');
  await page.fill('.status-text', 'Busy');
  await page.keyboard.press('Escape');
  await dialogClosed(page);
  t.equal(
    await page.evaluate(`document.activeElement?.classList.contains('status-btn')`),
    true,
    'the focus back on the button',
  );
  await page.click('.sidebar-foot .status-btn');
  await dialogOpened(page);
  t.equal(await page.inputValue('.status-text'), '', 'nothing was saved');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await dialogClosed(page);

  // The server refuses (made to, here): the dialog stays, with the server's words in a toast.
  await page.route('**/users/me/status', (route) =>
    route.fulfill({
      status: 400,
      contentType: 'application/json',
      body: JSON.stringify({
        result: 'error',
        msg: 'Status text is too long.',
        code: 'BAD_REQUEST',
      }),
    }),
  );
  await page.click('.sidebar-foot .status-btn');
  await dialogOpened(page);
  await page.fill('.status-text', 'Busy');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.toast:has-text("Status text is too long.")');
  t.equal(await page.locator('.status-dialog').count(), 1, 'still open');
  t.notOk(await page.getByRole('button', { name: 'Save' }).isDisabled(), 'Save can be tried again');
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});
