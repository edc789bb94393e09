/**
 * The web app in chromium: a topic's visibility in the recipient bar of its messages
 * (web/app/topic-policy.tsx), as the reference's. The button says the policy (hidden until a
 * hover or the focus while it is the default; a followed topic's bell always), its menu offers
 * Mute, Default, Follow (and Unmute in a muted channel) with the current one checked, a choice
 * sets the policy on the server (POST /user_topics), a change made elsewhere shows live (the
 * user_topic event), the bar's own click (open the topic) is not set off, and the keyboard
 * reaches all of it (Tab, Enter, the arrows, Escape back to the button). Shots at 1280 and 390.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitForTitle, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

let kitchen = 0;
/** A topic whose name takes the bar's width on a phone (its button at the bar's right). */
const LONG = 'who washes the plates after the long dinner';
const { b, ts } = browserSuite(t, {
  server: true,
  channels: { kitchen: { by: 'iago', members: ['iago', 'hamlet'] } },
  seed: async ({ ts, channels }) => {
    kitchen = channels.kitchen;
    await sendChannelMessage(ts.api, 'iago', 'kitchen', 'lunch', 'Soup again');
    await sendChannelMessage(ts.api, 'iago', 'kitchen', 'news', 'The oven is fixed');
    await sendChannelMessage(ts.api, 'iago', 'kitchen', 'dinner', 'Who cooks tonight?');
    await sendChannelMessage(ts.api, 'iago', 'kitchen', LONG, 'Plates, again');
  },
});

/** Hamlet's policy for a kitchen topic, as the server has it (register's user_topics). */
async function policy(topic: string): Promise<number> {
  const r = await ts.api.post('hamlet', 'register', { fetch_event_types: ['user_topic'] });
  const list = r.body.user_topics as {
    stream_id: number;
    topic_name: string;
    visibility_policy: number;
  }[];
  return (
    list.find((u) => u.stream_id === kitchen && u.topic_name === topic)?.visibility_policy ?? 0
  );
}

/** Sets Hamlet's policy through the API (another client of his). */
async function setPolicy(topic: string, visibility_policy: number): Promise<void> {
  await ts.api.post('hamlet', 'user_topics', { stream_id: kitchen, topic, visibility_policy });
}

/** The selector of the visibility button in the recipient bar of a kitchen topic. */
const btn = (topic: string) =>
  `.messages .recipient:has(.topic-name:text-is(${JSON.stringify(topic)})) .policy-menu-btn`;

/** Page-side: the button of a topic's first bar (querySelector, no Playwright selectors). */
const btnJs = (topic: string) =>
  `[...document.querySelectorAll('.messages .recipient')].find((r) => r.querySelector('.topic-name')?.textContent === ${JSON.stringify(topic)})?.querySelector('.policy-menu-btn')`;

/** What a topic's button shows: its name, and whether it is visible (opacity). */
function button(page: Page, topic: string): Promise<{ label: string; shown: boolean } | null> {
  return page.evaluate(`(() => {
    const b = ${btnJs(topic)};
    return b ? { label: b.getAttribute('aria-label'), shown: getComputedStyle(b).opacity === '1' } : null;
  })()`);
}

/** Until a topic's button says `label`. */
function waitLabel(page: Page, topic: string, label: string): Promise<void> {
  return waitFor(page, `${btnJs(topic)}?.getAttribute('aria-label') === ${JSON.stringify(label)}`);
}

/** The open menu's choices, the checked one starred. */
function choices(page: Page): Promise<string[]> {
  return page.evaluate(
    `[...document.querySelectorAll('.policy-menu-list [role="menuitemradio"]')].map((e) => (e.getAttribute('aria-checked') === 'true' ? '*' : '') + e.textContent.trim())`,
  );
}

const DEFAULT = 'Notifications are based on your configuration for this channel.';
const FOLLOWED = 'You follow this topic.';
const MUTED = 'You have muted this topic.';
const UNMUTED = 'You have unmuted this topic.';

t.test("the recipient bar's visibility: shown, chosen, changed elsewhere", async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen`,
  });
  await waitMessage(page, 'Who cooks tonight?');
  // The pointer away from the list: nothing hovered.
  await page.mouse.move(5, 795);
  t.same(
    await button(page, 'lunch'),
    { label: DEFAULT, shown: false },
    'the default: the button says so, hidden until a hover',
  );
  await page.hover('.messages .recipient:has(.topic-name:text-is("lunch"))');
  t.equal((await button(page, 'lunch'))?.shown, true, 'shown on the bar’s hover');

  await page.click(btn('lunch'));
  await page.waitForSelector('.policy-menu-list');
  t.same(await choices(page), ['Mute', '*Default', 'Follow'], 'a channel not muted: no Unmute');
  t.equal(
    await page.getAttribute('.policy-menu-list', 'aria-label'),
    'Visibility of topic lunch',
    'the menu names its topic',
  );
  t.equal(await page.textContent('h1.title'), '#kitchen', 'the click did not open the topic');
  await page.click('.policy-menu-list [role="menuitemradio"]:has-text("Follow")');
  await waitLabel(page, 'lunch', FOLLOWED);
  t.equal(await policy('lunch'), 3, 'followed (the server says so)');
  t.equal(await page.textContent('h1.title'), '#kitchen', 'choosing did not open the topic');
  await page.mouse.move(5, 795);
  t.equal((await button(page, 'lunch'))?.shown, true, 'a followed topic’s bell shows always');
  await waitFor(
    page,
    `[...document.querySelectorAll('.sidebar a.nav-item')].some((a) => a.querySelector('.label')?.textContent === 'lunch' && a.querySelector('.followed-mark'))`,
  );
  t.pass('the sidebar shows the bell too');
  await screenshot(page, t, 'followed-1280');
  await page.click(btn('lunch'));
  await page.waitForSelector('.policy-menu-list');
  t.same(await choices(page), ['Mute', 'Default', '*Follow'], 'the current choice checked');
  await screenshot(page, t, 'menu-open-1280');
  await page.click('.policy-menu-list [role="menuitemradio"]:has-text("Default")');
  await waitLabel(page, 'lunch', DEFAULT);
  t.equal(await policy('lunch'), 0, 'back to the default');

  // Muting: in the topic's own view (a channel's view leaves out the topics muted as such).
  await page.click('.messages .recipient .topic-name:text-is("news")');
  await waitForTitle(page, 'news');
  await page.hover('.messages .recipient:has(.topic-name:text-is("news"))');
  await page.click(btn('news'));
  await page.click('.policy-menu-list [role="menuitemradio"]:has-text("Mute")');
  await waitLabel(page, 'news', MUTED);
  t.equal(await policy('news'), 1, 'muted');
  await page.mouse.move(5, 795);
  t.equal((await button(page, 'news'))?.shown, true, 'a muted topic’s icon shows always');

  // Changes made elsewhere (another client of his): live.
  await setPolicy('news', 3);
  await waitLabel(page, 'news', FOLLOWED);
  t.pass('followed elsewhere: the bell comes');
  await setPolicy('news', 0);
  await waitLabel(page, 'news', DEFAULT);
  t.pass('back to the default elsewhere: the bar follows');

  // A muted channel: Unmute is offered, and sets "unmuted".
  await ts.api.post('hamlet', 'users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: kitchen, property: 'is_muted', value: true }],
  });
  await waitFor(
    page,
    `[...document.querySelectorAll('.sidebar a.nav-item')].some((a) => a.querySelector('.label')?.textContent === 'kitchen' && a.classList.contains('muted'))`,
  );
  await page.hover('.messages .recipient:has(.topic-name:text-is("news"))');
  await page.click(btn('news'));
  t.same(
    await choices(page),
    ['Mute', '*Default', 'Unmute', 'Follow'],
    'a muted channel: Unmute offered',
  );
  await page.click('.policy-menu-list [role="menuitemradio"]:has-text("Unmute")');
  await waitLabel(page, 'news', UNMUTED);
  t.equal(await policy('news'), 2, 'unmuted in the muted channel');
  await ts.api.post('hamlet', 'users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: kitchen, property: 'is_muted', value: false }],
  });
  await page.click(btn('news'));
  t.same(
    await choices(page),
    ['Mute', 'Default', '*Unmute', 'Follow'],
    'the channel unmuted again: the topic’s Unmute stays, checked',
  );
  await page.keyboard.press('Escape');
  await setPolicy('news', 0);
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the keyboard: Tab to the button, Enter, the arrows, Escape', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen/topic/dinner`,
  });
  await waitMessage(page, 'Who cooks tonight?');
  await page.mouse.move(5, 795);
  const active = () =>
    page.evaluate(
      `(() => { const e = document.activeElement; return e ? (e.getAttribute('aria-label') || e.textContent.trim()) : null; })()`,
    );
  await page.focus('.messages .recipient .topic-name');
  await page.keyboard.press('Tab');
  t.equal(await active(), DEFAULT, 'Tab from the topic’s link: the visibility button');
  t.equal((await button(page, 'dinner'))?.shown, true, 'shown while focused');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.policy-menu-list');
  t.equal(await active(), 'Mute', 'Enter opens the menu, on its first choice');
  await page.keyboard.press('ArrowDown');
  t.equal(await active(), 'Default', '↓');
  await page.keyboard.press('ArrowDown');
  t.equal(await active(), 'Follow', '↓ again');
  await page.keyboard.press('ArrowDown');
  t.equal(await active(), 'Mute', '↓ from the last: back to the first');
  await page.keyboard.press('ArrowUp');
  t.equal(await active(), 'Follow', '↑ from the first: the last');
  await page.keyboard.press('Escape');
  t.equal(await page.$('.policy-menu-list'), null, 'Escape closes it');
  t.equal(await active(), DEFAULT, 'and the focus is back on the button');
  t.match(await page.textContent('h1.title'), /dinner/, 'still in the topic');

  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await waitLabel(page, 'dinner', FOLLOWED);
  t.equal(await policy('dinner'), 3, 'End, Enter: followed');
  t.equal(await active(), FOLLOWED, 'the focus on the button, which says so');

  // A phone: no hover; the button shows always.
  await setPolicy('dinner', 0);
  await waitLabel(page, 'dinner', DEFAULT);
  await page.setViewportSize({ width: 390, height: 844 });
  // The sidebar becomes the drawer, sliding out of view: done before the shots.
  await waitFor(page, `document.getAnimations().length === 0`);
  await page.locator('.messages').focus();
  t.equal((await button(page, 'dinner'))?.shown, true, 'at 390 px the default’s button shows');
  await setPolicy('dinner', 3);
  await waitLabel(page, 'dinner', FOLLOWED);
  await screenshot(page, t, 'followed-390');
  await page.click(btn('dinner'));
  await page.waitForSelector('.policy-menu-list');
  const fits = await page.evaluate(`(() => {
    const r = document.querySelector('.policy-menu-list').getBoundingClientRect();
    return r.left >= 0 && r.right <= document.documentElement.clientWidth;
  })()`);
  t.equal(fits, true, 'the menu fits the phone’s width');
  await screenshot(page, t, 'menu-open-390');
  await page.click('.policy-menu-list [role="menuitemradio"]:has-text("Default")');
  await waitLabel(page, 'dinner', DEFAULT);
  t.equal(await policy('dinner'), 0, 'chosen on the phone');

  // A long topic: the button near the bar's right end, the menu ends there (not past the edge).
  await page.evaluate(
    `location.hash = ${JSON.stringify(`#narrow/channel/${kitchen}-kitchen/topic/${encodeURIComponent(LONG)}`)}`,
  );
  await waitMessage(page, 'Plates, again');
  await page.click(btn(LONG));
  await page.waitForSelector('.policy-menu-list');
  t.same(
    await page.evaluate(`(() => {
      const l = document.querySelector('.policy-menu-list');
      const r = l.getBoundingClientRect();
      return { end: l.hasAttribute('data-end'), fits: r.left >= 0 && r.right <= document.documentElement.clientWidth };
    })()`),
    { end: true, fits: true },
    'a long topic’s menu ends at its button, within the phone’s width',
  );
  await screenshot(page, t, 'menu-open-long-topic-390');
  await page.keyboard.press('Escape');
  watch.assertClean(t, /WebSocket|status of 401/);
});
