/**
 * The web app in chromium, `n` (the next unread topic) with muting, as the reference's
 * next-unread-topic: topics muted as such and the topics of a muted channel are passed over, but
 * those the user unmuted there; reading a muted topic of a muted channel, `n` goes on through
 * that channel, in the sidebar's order of its topics (newest first, not by name). A channel
 * left keeps its unread messages (one may join again) but they count nowhere: not in All
 * messages, the tab's title, nor for `n`. The sidebar's counts of muted topics and channels.
 * Hamlet's "mark as read on scroll" is "never", so that what `n` passes stays unread.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  openApp,
  sidebarCount,
  waitCount,
  waitDrawerOpen,
  waitFor,
  waitForTitle,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

/** Presses `n` and waits for the topic it goes to (its message on screen). */
async function next(page: Page, channel: number, topic: string, text: string): Promise<void> {
  await page.keyboard.press('n');
  await waitFor(
    page,
    `location.hash.startsWith('#narrow/channel/${channel}-') && ` +
      `location.hash.endsWith('/topic/${topic}')`,
  );
  // The view swaps in the hashchange's own task: until its title names the topic, the list (and
  // `n`'s "current topic") is still the old view's, which may show the same message.
  await waitForTitle(page, topic);
  await waitMessage(page, text);
}

t.test('n passes over muted topics and muted channels', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { api, fx } = ts;
  const principals = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  const general = await createChannel(api, 'othello', 'general', { principals });
  const quiet = await createChannel(api, 'othello', 'quiet', { principals });
  await sendChannelMessage(api, 'othello', 'general', 'lunch', 'Lunch is ready');
  await sendChannelMessage(api, 'othello', 'general', 'noise', 'Noise nobody wants');
  // Newest first, as the sidebar lists a channel's topics: tide, dusk, plans.
  await sendChannelMessage(api, 'othello', 'quiet', 'plans', 'Plans worth reading');
  await sendChannelMessage(api, 'othello', 'quiet', 'dusk', 'Dusk falls');
  await sendChannelMessage(api, 'othello', 'quiet', 'tide', 'The tide in the quiet one');
  await api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 3 });
  await api.post('hamlet', 'user_topics', {
    stream_id: general,
    topic: 'noise',
    visibility_policy: 1,
  });
  await api.post('hamlet', 'users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: quiet, property: 'is_muted', value: true }],
  });
  await api.post('hamlet', 'user_topics', {
    stream_id: quiet,
    topic: 'plans',
    visibility_policy: 2,
  });

  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general`,
  });
  await waitForTitle(page, 'general');
  await next(page, general, 'lunch', 'Lunch is ready');
  t.pass("from the channel's view: its first unread topic");
  await next(page, quiet, 'plans', 'Plans worth reading');
  t.pass('the muted topic, and the muted channel but its unmuted topic, passed over');
  await next(page, general, 'lunch', 'Lunch is ready');
  t.pass('round again: still passing over them');

  await page.evaluate(`location.hash = '#narrow/channel/${quiet}-quiet/topic/tide'`);
  await waitMessage(page, 'The tide in the quiet one');
  await next(page, quiet, 'dusk', 'Dusk falls');
  t.pass('reading a muted topic of the muted channel: n goes on through it, newest first');
  await next(page, quiet, 'plans', 'Plans worth reading');
  await next(page, general, 'lunch', 'Lunch is ready');
  t.pass('from its unmuted topic, out of it again');
  watch.assertClean(t);
});

t.test('a channel left: its unread messages leave the counts and the tab title', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { api, fx } = ts;
  const principals = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  await createChannel(api, 'othello', 'general', { principals });
  await createChannel(api, 'othello', 'attic', { principals });
  await sendChannelMessage(api, 'othello', 'general', 'lunch', 'Lunch is ready');
  await sendChannelMessage(api, 'othello', 'attic', 'boxes', 'Boxes to sort');
  await sendChannelMessage(api, 'othello', 'attic', 'boxes', 'More boxes');
  await api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 3 });

  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', { hash: '#narrow/is/starred' });
  await waitCount(page, 'Inbox', 3);
  await waitFor(page, `document.title.startsWith('(3) ')`);
  t.equal(await sidebarCount(page, 'attic'), 2, 'attic: 2 unread');

  await api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['attic'] });
  await waitCount(page, 'Inbox', 1);
  await waitFor(page, `document.title.startsWith('(1) ')`);
  t.pass('left: All messages and the title count only what is left');
  await page.keyboard.press('n');
  await waitFor(page, `location.hash.endsWith('/topic/lunch')`);
  // The topic's view drawn first: `n` reckons "after the current topic" from what it shows.
  await waitForTitle(page, 'lunch');
  await waitMessage(page, 'Lunch is ready');
  await page.keyboard.press('n');
  await page.waitForSelector('text=No unread messages left.');
  t.pass('n: the channel left is not among the unread topics');
  watch.assertClean(t);
});

t.test("the sidebar's counts of muted topics and channels, as the reference's", async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { api, fx } = ts;
  const principals = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  const kitchen = await createChannel(api, 'othello', 'kitchen', { principals });
  const quiet = await createChannel(api, 'othello', 'quiet', { principals });
  await sendChannelMessage(api, 'othello', 'kitchen', 'lunch', 'Soup again');
  await sendChannelMessage(api, 'othello', 'quiet', 'hush', 'In a muted channel');
  await api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 3 });
  await api.post('hamlet', 'user_topics', {
    stream_id: kitchen,
    topic: 'lunch',
    visibility_policy: 1,
  });
  await api.post('hamlet', 'users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: quiet, property: 'is_muted', value: true }],
  });
  const grey = (label: string) =>
    page.evaluate(
      `[...document.querySelectorAll('.sidebar a.nav-item')].find((a) => a.querySelector('.label')?.textContent === ${JSON.stringify(label)})?.querySelector('.badge')?.classList.contains('muted')`,
    );

  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', { hash: '#narrow/is/starred' });
  await waitCount(page, 'quiet', 1);
  t.equal(await grey('quiet'), true, 'a muted channel: its count, in grey');
  t.equal(await sidebarCount(page, 'kitchen'), 0, "a muted topic's unread: no count");
  t.equal(await sidebarCount(page, 'Inbox'), 0, 'neither in the home view’s count (the Inbox)');
  await screenshot(page, t, 'muted-counts-1280');

  await sendChannelMessage(api, 'othello', 'kitchen', 'lunch', '@**Hamlet** soup for you?');
  await waitCount(page, 'kitchen', 2);
  t.equal(await grey('kitchen'), true, 'one of them names the user: the count, in grey');
  t.equal(await sidebarCount(page, 'Mentions'), 1, 'and the mention counts');

  await sendChannelMessage(api, 'othello', 'quiet', 'plans', 'Plans worth reading');
  await api.post('hamlet', 'user_topics', {
    stream_id: quiet,
    topic: 'plans',
    visibility_policy: 3,
  });
  await waitFor(
    page,
    `document.querySelector('.sidebar a.nav-item[href*="${quiet}-quiet"] .badge:not(.muted)')?.textContent === '1'`,
  );
  t.pass('a followed topic in the muted channel: its own count, not in grey');
  await waitCount(page, 'Inbox', 1);
  await waitFor(page, `document.title.startsWith('(1) ')`);
  t.pass('and in the Inbox’s count and the title');
  watch.assertClean(t);

  const narrow = await openApp(b, ts.url, fx, 'hamlet', {
    hash: `#narrow/channel/${quiet}-quiet`,
    width: 390,
    height: 800,
  });
  await narrow.page.getByRole('button', { name: 'Open the sidebar' }).click();
  await waitDrawerOpen(narrow.page);
  t.equal(await sidebarCount(narrow.page, 'quiet'), 1, 'a narrow screen: the same counts');
  await screenshot(narrow.page, t, 'muted-counts-390');
  narrow.watch.assertClean(t);
});
