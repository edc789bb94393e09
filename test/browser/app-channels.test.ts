/**
 * The web app in chromium, with channels one cannot see: a link to a private channel one is not
 * in, and a private channel one is removed from while looking at it. The app says what it is
 * (not "#unknown", not "No messages here yet. Start the conversation below."), and the compose
 * box asks for a channel rather than offering to send where the server refuses. Muting a topic
 * or a channel from the sidebar's menus, and All messages without what is muted (as the
 * reference's combined feed) while the muted topic's own view still shows it.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  messageTexts,
  openApp,
  pluck,
  sidebarCount,
  waitCount,
  waitFor,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

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
  othello.watch.assertClean(t, /WebSocket|status of 401/);
  // Hamlet's typing notice (sent as he typed) may reach the server after the removal, which
  // refuses it (400): the race is the scenario's own, not the app's fault.
  hamlet.watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});

/** Runs an item of a sidebar row's "⋮" menu. */
async function rowMenu(page: Page, row: string, item: string): Promise<void> {
  await page.locator('.sidebar .nav-row').filter({ hasText: row }).first().hover();
  await page
    .locator('.sidebar .nav-row')
    .filter({ hasText: row })
    .first()
    .locator('.row-menu button')
    .first()
    .click();
  await page.click(`[role="menuitem"]:has-text("${item}")`);
}

/** Page-side: whether a sidebar entry is dimmed (muted); undefined when there is none. */
const dimmedJs = (label: string) =>
  `[...document.querySelectorAll('.sidebar a.nav-item')].find((a) => a.querySelector('.label')?.textContent === ${JSON.stringify(label)})?.classList.contains('muted')`;

function isDimmed(page: Page, label: string): Promise<boolean | undefined> {
  return page.evaluate(dimmedJs(label));
}

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
  const menu = (row: string, item: string) => rowMenu(page, row, item);
  const dimmed = (label: string) => isDimmed(page, label);

  await menu('lunch', 'Mute topic');
  await waitCount(page, 'Inbox', 0);
  t.equal(await dimmed('lunch'), true, 'the muted topic is dimmed');
  t.equal(
    await sidebarCount(page, 'kitchen'),
    0,
    "only a muted topic's unread in a channel not muted: no count, as the reference",
  );
  await screenshot(page, t, 'topic-muted-1280');
  await menu('lunch', 'Unmute topic');
  await waitCount(page, 'Inbox', 2);
  t.equal(await dimmed('lunch'), false, 'unmuted: as before');

  await menu('kitchen', 'Mute channel');
  await waitCount(page, 'Inbox', 0);
  t.equal(await dimmed('kitchen'), true, 'the muted channel is dimmed');
  await menu('kitchen', 'Unmute channel');
  await waitCount(page, 'Inbox', 2);
  t.equal(await dimmed('kitchen'), false, 'unmuted: as before');
  watch.assertClean(t, /WebSocket|status of 401/);
});

/** Page-side: whether a sidebar topic row shows the followed bell; undefined when no row. */
const followedJs = (label: string) =>
  `(() => { const a = [...document.querySelectorAll('.sidebar a.nav-item')].find((a) => a.querySelector('.label')?.textContent === ${JSON.stringify(label)}); return a ? a.querySelector('.followed-mark') !== null : undefined; })()`;

t.test('following topics: the menu, the topics one starts, the setting', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const kitchen = await createChannel(ts.api, 'iago', 'kitchen', {
    principals: [id('iago'), id('hamlet')],
  });
  const say = (who: string, topic: string, content: string) =>
    ts.api.post(who, 'messages', { type: 'stream', to: 'kitchen', topic, content });
  await say('iago', 'news', 'The oven is fixed');
  await say('iago', 'lunch', 'Soup again');
  const policy = async (topic: string) => {
    const r = await ts.api.post('hamlet', 'register', { fetch_event_types: ['user_topic'] });
    const list = r.body.user_topics as { topic_name: string; visibility_policy: number }[];
    return list.find((u) => u.topic_name === topic)?.visibility_policy ?? 0;
  };
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen/topic/news`,
  });
  await waitFor(page, `${followedJs('lunch')} === false`);
  t.pass('a topic someone else started: not followed');

  await rowMenu(page, 'lunch', 'Follow topic');
  await waitFor(page, `${followedJs('lunch')} === true`);
  t.equal(await policy('lunch'), 3, 'followed (the server says so)');
  await screenshot(page, t, 'topic-followed-1280');
  await rowMenu(page, 'lunch', 'Unfollow topic');
  await waitFor(page, `${followedJs('lunch')} === false`);
  t.equal(await policy('lunch'), 0, 'unfollowed: back to the default');

  // A topic he starts (elsewhere) he follows, as the default setting asks: the bell comes live.
  await say('hamlet', 'dinner', 'Who cooks tonight?');
  await waitFor(page, `${followedJs('dinner')} === true`);
  t.pass('a topic he started: followed');

  // Settings › Notifications › Topics: never.
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.click('.settings nav a:has-text("Notifications")');
  await page.waitForSelector('.settings h3:has-text("Notifications")');
  const pick = '#setting-automatically_follow_topics_policy';
  t.equal(await page.inputValue(pick), '3', 'the setting shows the default: topics I start');
  await screenshot(page, t, 'settings-topics-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator(pick).scrollIntoViewIfNeeded();
  await screenshot(page, t, 'settings-topics-390');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.selectOption(pick, '4');
  for (let i = 0; i < 100; i++) {
    const r = await ts.api.post('hamlet', 'register', { fetch_event_types: ['user_settings'] });
    const st = r.body.user_settings as Record<string, unknown>;
    if (st.automatically_follow_topics_policy === 4) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await page.keyboard.press('Escape');
  await say('hamlet', 'breakfast', 'Eggs?');
  await waitFor(page, `${followedJs('breakfast')} === false`);
  t.equal(await policy('breakfast'), 0, 'with "Never": a topic he starts is not followed');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("All messages leaves out muted topics and channels, as the reference's feed", async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const principals = [id('iago'), id('hamlet')];
  const kitchen = await createChannel(ts.api, 'iago', 'kitchen', { principals });
  await createChannel(ts.api, 'iago', 'garden', { principals });
  const say = (to: string, topic: string, content: string) =>
    ts.api.post('iago', 'messages', { type: 'stream', to, topic, content });
  await say('kitchen', 'news', 'The oven is fixed');
  await say('kitchen', 'lunch', 'Soup again');
  await say('kitchen', 'lunch', 'And bread');
  await say('garden', 'roses', 'Roses bloom');
  await say('garden', 'weeds', 'Weeds everywhere');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#feed' });
  await waitMessage(page, 'Soup again');
  const texts = () => messageTexts(page);
  const go = (label: string) =>
    page.click(`.sidebar a.nav-item:has(.label:text-is(${JSON.stringify(label)}))`);
  // The view's title names the view once the app swapped to it (the list drawn with it).
  const waitTitle = (title: string) =>
    waitFor(page, `document.querySelector('h1.title')?.textContent === ${JSON.stringify(title)}`);
  const shows = (text: string) =>
    `[...document.querySelectorAll('.messages .msg .content')].some((e) => e.textContent.includes(${JSON.stringify(text)}))`;

  // A topic muted in its channel's view (its topics listed there).
  await go('kitchen');
  await waitTitle('#kitchen');
  await rowMenu(page, 'lunch', 'Mute topic');
  await waitFor(page, `${dimmedJs('lunch')} === true`);
  await go('All messages');
  await waitTitle('All messages');
  let now = await texts();
  t.ok(now.includes('The oven is fixed'), 'All messages: the topic not muted');
  t.notOk(now.includes('Soup again') || now.includes('And bread'), 'not the muted one');
  await screenshot(page, t, 'all-messages-topic-muted-1280');

  // A new message to it does not join All messages (one to another topic after it does).
  await say('kitchen', 'lunch', 'Cake for dessert');
  await say('kitchen', 'news', 'The oven is hot');
  await waitMessage(page, 'The oven is hot');
  t.notOk((await texts()).includes('Cake for dessert'), 'the muted topic stays out');
  // Its own view shows all of it.
  await page.evaluate(`location.hash = '#narrow/channel/${kitchen}-kitchen/topic/lunch'`);
  await waitTitle('#kitchen›lunch');
  await waitMessage(page, 'Cake for dessert');
  t.same(await texts(), ['Soup again', 'And bread', 'Cake for dessert'], 'in its own view');

  // A channel muted while All messages is shown: its messages go at once.
  await go('All messages');
  await waitTitle('All messages');
  t.ok((await texts()).includes('Roses bloom'), 'before: the channel is shown');
  await rowMenu(page, 'garden', 'Mute channel');
  await waitFor(page, `!${shows('Roses bloom')}`);
  now = await texts();
  t.notOk(now.includes('Weeds everywhere'), 'all of the muted channel goes');
  t.ok(now.includes('The oven is hot'), 'the rest stays');
  await screenshot(page, t, 'all-messages-channel-muted-1280');

  // A topic unmuted in the muted channel is shown (fetched again: muting kept it out).
  await go('garden');
  await waitTitle('#garden');
  await rowMenu(page, 'roses', 'Unmute topic');
  await waitFor(page, `${dimmedJs('roses')} === false`);
  await go('All messages');
  await waitTitle('All messages');
  await waitMessage(page, 'Roses bloom');
  t.notOk((await texts()).includes('Weeds everywhere'), "the channel's other topic stays out");
  await screenshot(page, t, 'all-messages-topic-unmuted-in-muted-channel-1280');

  // The channel unmuted while All messages is shown: fetched again at once.
  await rowMenu(page, 'garden', 'Unmute channel');
  await waitMessage(page, 'Weeds everywhere');
  t.notOk((await texts()).includes('Soup again'), 'the muted topic still out');
  watch.assertClean(t, /WebSocket|status of 401/);
});

/** Page-side: whether the list shows a message with this text. */
const showsJs = (text: string) =>
  `[...document.querySelectorAll('.messages .msg .content')].some((e) => e.textContent.includes(${JSON.stringify(text)}))`;

/** Page-side: the view's title, once the app swapped to the view it names. */
const titleJs = (title: string) =>
  `document.querySelector('h1.title')?.textContent === ${JSON.stringify(title)}`;

t.test("a channel's view leaves out its muted topics, as the reference's", async (t) => {
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
  await ts.api.post('hamlet', 'user_topics', {
    stream_id: kitchen,
    topic: 'lunch',
    visibility_policy: 1,
  });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen`,
  });
  const texts = () => messageTexts(page);
  await waitMessage(page, 'The oven is fixed');
  t.same(await texts(), ['The oven is fixed'], 'the first fetch leaves the muted topic out');

  // Unmuted from the sidebar: fetched again; muted again: it goes at once.
  await rowMenu(page, 'lunch', 'Unmute topic');
  await waitMessage(page, 'Soup again');
  t.same(await texts(), ['The oven is fixed', 'Soup again', 'And bread'], 'unmuted: shown');
  await rowMenu(page, 'lunch', 'Mute topic');
  await waitFor(page, `!${showsJs('Soup again')}`);
  t.same(await texts(), ['The oven is fixed'], 'muted: all of it goes');

  // A new message to it does not join the view (one to another topic sent after it does).
  await say('lunch', 'Cake for dessert');
  await say('news', 'The oven is hot');
  await waitMessage(page, 'The oven is hot');
  t.notOk((await texts()).includes('Cake for dessert'), 'the muted topic stays out');

  // The channel muted: its own view still shows its topics, but the one muted as such.
  await rowMenu(page, 'kitchen', 'Mute channel');
  await waitFor(page, `${dimmedJs('kitchen')} === true`);
  t.same(await texts(), ['The oven is fixed', 'The oven is hot'], 'the muted channel, as before');
  await screenshot(page, t, 'channel-view-topic-muted-1280');
  // Unmuted in the muted channel ("unmuted"): fetched again, the whole channel shown.
  await rowMenu(page, 'lunch', 'Unmute topic');
  await waitMessage(page, 'Cake for dessert');
  t.same(await texts(), [
    'The oven is fixed',
    'Soup again',
    'And bread',
    'Cake for dessert',
    'The oven is hot',
  ]);
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  "a sender's messages and unread leave out topics muted as such, as the reference's",
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    const id = (who: string) => ts.fx.users[who]!.id;
    const both = [id('iago'), id('hamlet')];
    const kitchen = await createChannel(ts.api, 'iago', 'kitchen', { principals: both });
    const garden = await createChannel(ts.api, 'iago', 'garden', { principals: both });
    const say = (to: string, topic: string, content: string) =>
      ts.api.post('iago', 'messages', { type: 'stream', to, topic, content });
    await say('kitchen', 'news', 'The oven is fixed');
    await say('kitchen', 'lunch', 'Soup again');
    await say('kitchen', 'lunch', '@**Hamlet** soup for you too?');
    await say('garden', 'weeds', 'Weeds everywhere');
    await ts.api.post('hamlet', 'user_topics', {
      stream_id: kitchen,
      topic: 'lunch',
      visibility_policy: 1,
    });
    await ts.api.post('hamlet', 'users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: garden, property: 'is_muted', value: true }],
    });
    // Unread (all of it is, to begin with): not the muted topic's, but the mention.
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#narrow/is/unread',
    });
    const texts = () => messageTexts(page);
    const kept = ['The oven is fixed', '@Hamlet soup for you too?', 'Weeds everywhere'];
    await waitMessage(page, 'Weeds everywhere');
    t.same(
      await texts(),
      kept,
      "unread: not the muted topic's, but the one mentioning Hamlet, and the muted channel's",
    );

    // Iago's messages: the same.
    await page.goto(`${ts.url}/#narrow/sender/${id('iago')}-Iago`);
    await waitFor(page, `document.querySelector('h1.title')?.textContent.includes('Iago')`);
    await waitMessage(page, 'Weeds everywhere');
    t.same(await texts(), kept, "a sender's messages: the same");
    await screenshot(page, t, 'sender-topic-muted-1280');

    // j/k go over what is shown only.
    await page.focus('.messages');
    await page.keyboard.press('Home');
    await waitFor(
      page,
      `document.querySelector('.msg.selected')?.textContent.includes('The oven is fixed')`,
    );
    await page.keyboard.press('j');
    await waitFor(
      page,
      `document.querySelector('.msg.selected')?.textContent.includes('@Hamlet soup')`,
    );
    t.pass('j: from the first to the mention, past the muted topic');

    // Unmuted: shown at once; muted again: gone at once.
    await ts.api.post('hamlet', 'user_topics', {
      stream_id: kitchen,
      topic: 'lunch',
      visibility_policy: 0,
    });
    await waitMessage(page, 'Soup again');
    t.same(await texts(), [kept[0], 'Soup again', kept[1], kept[2]], 'unmuted: shown');
    await ts.api.post('hamlet', 'user_topics', {
      stream_id: kitchen,
      topic: 'lunch',
      visibility_policy: 1,
    });
    await waitFor(page, `!${showsJs('Soup again')}`);
    t.same(await texts(), kept, 'muted again: gone');
    watch.assertClean(t, /WebSocket|status of 401/);

    // Unread holding only a muted topic's message: the view says it is empty.
    await ts.api.post('hamlet', 'mark_all_as_read', {});
    await say('kitchen', 'lunch', 'More soup');
    const again = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#narrow/is/unread' });
    await again.page.waitForSelector('.messages .empty');
    t.same(await messageTexts(again.page), [], 'nothing drawn');
    t.match(
      await again.page.textContent('.messages .empty strong'),
      /\S/,
      'the empty view says so',
    );
    again.watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('a message sent to a muted topic: a notice with "Unmute topic"', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const principals = [id('iago'), id('hamlet')];
  const kitchen = await createChannel(ts.api, 'iago', 'kitchen', { principals });
  const garden = await createChannel(ts.api, 'iago', 'garden', { principals });
  await ts.api.post('iago', 'messages', {
    type: 'stream',
    to: 'kitchen',
    topic: 'news',
    content: 'The oven is fixed',
  });
  await ts.api.post('hamlet', 'user_topics', {
    stream_id: kitchen,
    topic: 'lunch',
    visibility_policy: 1,
  });
  await ts.api.post('hamlet', 'users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: garden, property: 'is_muted', value: true }],
  });
  // Sending neither follows nor unmutes a topic here (by default a topic one starts is followed,
  // and one sent to in a muted channel unmuted: src/mutations/auto-follow.ts).
  await ts.api.patch('hamlet', 'settings', {
    automatically_follow_topics_policy: 4,
    automatically_unmute_topics_in_muted_streams_policy: 4,
  });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#feed' });
  await waitMessage(page, 'The oven is fixed');
  const notice = '.compose-notice';
  const send = async (channel: number, topic: string, text: string) => {
    await page.selectOption('select[aria-label="Channel"]', String(channel));
    await page.fill('#compose-topic', topic);
    await page.fill('#compose-text', text);
    await page.press('#compose-text', 'Enter');
  };

  // To a muted topic, from All messages (which leaves it out).
  await send(kitchen, 'lunch', 'Pie for lunch');
  await page.waitForSelector(notice);
  t.match(
    await page.textContent(notice),
    /Sent to #kitchen › lunch, a topic you muted: All messages does not show it\./,
  );
  t.notOk(await page.evaluate(showsJs('Pie for lunch')), 'the message is not in All messages');
  await screenshot(page, t, 'sent-to-muted-topic-1280');
  await page.click(`${notice} button:has-text("Unmute topic")`);
  await page.waitForSelector(notice, { state: 'detached' });
  await waitMessage(page, 'Pie for lunch');
  t.pass('unmuted: the notice goes, the message is in All messages (fetched again)');

  // To a topic of a muted channel: "Unmute topic" unmutes the topic, the channel stays muted.
  await send(garden, 'roses', 'Roses bloom');
  await page.waitForSelector(notice);
  t.match(await page.textContent(notice), /Sent to #garden › roses, in a channel you muted/);
  await page.click(`${notice} button:has-text("Unmute topic")`);
  await waitMessage(page, 'Roses bloom');
  t.equal(await page.$(notice), null, 'the notice went');
  t.equal(await isDimmed(page, 'garden'), true, 'the channel is still muted');

  // To a topic not muted: no notice; one closed with its button, and one gone with the view.
  await send(kitchen, 'news', 'The oven is hot');
  await waitMessage(page, 'The oven is hot');
  t.equal(await page.$(notice), null, 'no notice for a topic not muted');
  await send(garden, 'weeds', 'Weeds everywhere');
  await page.waitForSelector(notice);
  await page.click(`${notice} button[aria-label="Close"]`);
  await page.waitForSelector(notice, { state: 'detached' });
  t.pass('closed');
  await send(garden, 'weeds', 'More weeds');
  await page.waitForSelector(notice);
  await page.evaluate(`location.hash = '#narrow/channel/${garden}-garden'`);
  await waitFor(page, titleJs('#garden'));
  t.equal(await page.$(notice), null, 'gone with the view it was sent from');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('leaving a muted channel and joining it again: still muted', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const principals = [id('iago'), id('hamlet')];
  const garden = await createChannel(ts.api, 'iago', 'garden', { principals });
  await createChannel(ts.api, 'iago', 'kitchen', { principals });
  const say = (to: string, topic: string, content: string) =>
    ts.api.post('iago', 'messages', { type: 'stream', to, topic, content });
  await say('garden', 'roses', 'Roses bloom');
  await say('garden', 'weeds', 'Weeds everywhere');
  await say('kitchen', 'news', 'The oven is fixed');
  await ts.api.post('hamlet', 'users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: garden, property: 'is_muted', value: true }],
  });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#feed' });
  await waitMessage(page, 'The oven is fixed');
  // Read by being shown; the muted channel's two unread are not counted.
  await waitCount(page, 'Inbox', 0);
  t.equal(await sidebarCount(page, 'garden'), 2, "the muted channel's own count (grey)");

  // Left (from another device) while All messages is shown: it stays out, its unread uncounted.
  await ts.api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['garden'] });
  await waitFor(page, `${dimmedJs('garden')} === undefined`);
  t.notOk(await page.evaluate(showsJs('Roses bloom')), 'the channel left, muted: not shown');
  t.equal(await sidebarCount(page, 'Inbox'), 0, 'its unread not counted');

  // Joined again: it comes back muted, and stays out (a new message to it too).
  await ts.api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'garden' }] });
  await waitFor(page, `${dimmedJs('garden')} === true`);
  await say('garden', 'roses', 'More roses');
  await waitCount(page, 'garden', 3);
  const now = await messageTexts(page);
  t.notOk(now.includes('Roses bloom') || now.includes('More roses'), 'still out of All messages');
  t.equal(await sidebarCount(page, 'Inbox'), 0, 'none of its unread counted');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a channel one is added to later: its earlier messages are shown', async (t) => {
  if (NO_CHROMIUM) return;
  // A new colleague is added to a channel that already talks: its view (asked with -is:muted)
  // shows what was said before they joined, as the reference's does, but the topics they mute.
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const studio = await createChannel(ts.api, 'iago', 'studio', { principals: [id('iago')] });
  const say = (topic: string, content: string) =>
    ts.api.post('iago', 'messages', { type: 'stream', to: 'studio', topic, content });
  await say('kickoff', 'Sketches are up');
  await say('noise', 'Printer jammed again');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await ts.api.post('iago', 'users/me/subscriptions', {
    subscriptions: [{ name: 'studio' }],
    principals: [id('hamlet')],
  });
  await ts.api.post('hamlet', 'user_topics', {
    stream_id: studio,
    topic: 'noise',
    visibility_policy: 1,
  });
  const entry = `.sidebar a.nav-item:has(.label:text-is("studio"))`;
  await page.waitForSelector(entry);
  await page.click(entry);
  await waitMessage(page, 'Sketches are up');
  t.same(await messageTexts(page), ['Sketches are up'], 'the history, the muted topic left out');
  t.notOk(await page.isVisible('.messages .empty'), 'not "No messages here yet"');
  await screenshot(page, t, 'channel-joined-later-1280');

  // Opened by its address at 390 px: the same.
  const narrow = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${studio}-studio`,
    width: 390,
    height: 844,
  });
  await waitMessage(narrow.page, 'Sketches are up');
  t.same(await messageTexts(narrow.page), ['Sketches are up']);
  await screenshot(narrow.page, t, 'channel-joined-later-390');
  watch.assertClean(t, /WebSocket|status of 401/);
  narrow.watch.assertClean(t, /WebSocket|status of 401/);
});
