/**
 * The web app in chromium, with channels one cannot see: a link to a private channel one is not
 * in, and a private channel one is removed from while looking at it. The app says what it is
 * (not "#unknown", not "No messages here yet. Start the conversation below."), and the compose
 * box asks for a channel rather than offering to send where the server refuses.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, pluck, sidebarCount, waitCount, waitFor, waitMessage } from '../helpers/app.js';
import { launchBrowser, NO_CHROMIUM, screenshot, type TestBrowser } from '../helpers/browser.js';
import { createChannel } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';

if (NO_CHROMIUM) t.plan(0, NO_CHROMIUM);

let b: TestBrowser;

t.before(async () => {
  if (NO_CHROMIUM) return;
  b = await launchBrowser(t);
});

/** What the view's title, the compose box's channel and its placeholder show. */
function shown(page: Page): Promise<{ title: string; channel: string; placeholder: string }> {
  return page.evaluate(`({
    title: document.querySelector('h1.title').textContent,
    channel: document.querySelector('select.to-channel').selectedOptions[0]?.textContent ?? '(none)',
    placeholder: document.querySelector('#compose-text').placeholder,
  })`);
}

t.test('a private channel one is not in, or was removed from', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const council = await createChannel(ts.api, 'iago', 'council', {
    invite_only: true,
    principals: [id('iago'), id('hamlet')],
  });
  await ts.api.post('iago', 'messages', {
    type: 'stream',
    to: 'council',
    topic: 'plans',
    content: 'Council business',
  });
  const hash = `#narrow/channel/${council}-council`;

  // Othello follows a link to it.
  const othello = await openApp(b, ts.url, ts.fx, 'othello', { hash });
  await othello.page.waitForSelector('.messages .empty');
  t.same(
    await shown(othello.page),
    { title: 'Unknown channel', channel: 'Choose a channel', placeholder: 'Message…' },
    'an unknown channel, and the box asks for a channel',
  );
  t.match(
    await othello.page.textContent('.messages .empty'),
    /does not exist or is private/,
    'says why nothing is shown',
  );
  await screenshot(othello.page, t, 'private-channel-link-1280');

  // Hamlet reads it, has typed a reply, and is removed from it.
  const hamlet = await openApp(b, ts.url, ts.fx, 'hamlet', { hash });
  await waitMessage(hamlet.page, 'Council business');
  await hamlet.page.fill('#compose-topic', 'plans');
  await hamlet.page.fill('#compose-text', 'About the plans');
  t.equal((await shown(hamlet.page)).channel, '#council', 'addressed to it at first');
  await ts.api.delete('iago', 'users/me/subscriptions', {
    subscriptions: ['council'],
    principals: [id('hamlet')],
  });
  await waitFor(
    hamlet.page,
    `document.querySelector('h1.title').textContent === 'Unknown channel'`,
  );
  t.same(
    await shown(hamlet.page),
    { title: 'Unknown channel', channel: 'Choose a channel', placeholder: 'Message…' },
    'removed: no "#unknown"; the box asks for a channel',
  );
  t.equal(await hamlet.page.inputValue('#compose-text'), 'About the plans', 'what was typed stays');
  t.equal(await hamlet.page.inputValue('#compose-topic'), 'plans', 'and the topic');
  await waitMessage(hamlet.page, 'Council business');
  t.same(
    await pluck(hamlet.page, '.messages .recipient > a:not(.topic-name)'),
    ['council'],
    'the messages received there stay readable, under the name they came with',
  );
  await screenshot(hamlet.page, t, 'removed-from-private-channel-1280');
  for (const p of [othello, hamlet]) p.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("muting a topic and a channel from the sidebar's menus", async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const kitchen = await createChannel(ts.api, 'iago', 'kitchen', {
    principals: [id('iago'), id('hamlet')],
  });
  const say = (topic: string, content: string) =>
    ts.api.post('iago', 'messages', { type: 'stream', to: 'kitchen', topic, content });
  await say('news', 'The oven is fixed');
  await say('lunch', 'Soup again');
  await say('lunch', 'And bread');
  // In the channel's other topic, so that its topics are listed and lunch stays unread.
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen/topic/news`,
  });
  await waitCount(page, 'lunch', 2);
  await waitCount(page, 'kitchen', 2);
  const menu = async (row: string, item: string) => {
    await page.locator('.sidebar .nav-row').filter({ hasText: row }).first().hover();
    await page
      .locator('.sidebar .nav-row')
      .filter({ hasText: row })
      .first()
      .locator('.row-menu button')
      .first()
      .click();
    await page.click(`[role="menuitem"]:has-text("${item}")`);
  };
  const dimmed = (label: string) =>
    page.evaluate(
      `[...document.querySelectorAll('.sidebar a.nav-item')].find((a) => a.querySelector('.label')?.textContent === ${JSON.stringify(label)})?.classList.contains('muted')`,
    );

  await menu('lunch', 'Mute topic');
  await waitCount(page, 'All messages', 0);
  t.equal(await dimmed('lunch'), true, 'the muted topic is dimmed');
  t.equal(await sidebarCount(page, 'kitchen'), 2, "the channel's count in grey: muted only");
  await screenshot(page, t, 'topic-muted-1280');
  await menu('lunch', 'Unmute topic');
  await waitCount(page, 'All messages', 2);
  t.equal(await dimmed('lunch'), false, 'unmuted: as before');

  await menu('kitchen', 'Mute channel');
  await waitCount(page, 'All messages', 0);
  t.equal(await dimmed('kitchen'), true, 'the muted channel is dimmed');
  await menu('kitchen', 'Unmute channel');
  await waitCount(page, 'All messages', 2);
  t.equal(await dimmed('kitchen'), false, 'unmuted: as before');
  watch.assertClean(t, /WebSocket|status of 401/);
});
