/**
 * The web app in chromium: the keyboard focus after a topic action chosen from a sidebar topic's
 * "⋮" menu (web/app/sidebar.tsx, focus-successor.ts). The actions make the channel's topics be
 * fetched again; the list shown stays until the answer (no "Loading topics…" in its place, counted
 * by a MutationObserver from before the page's scripts run), and the focus goes on to the row of
 * the topic where it went (resolved, unresolved, renamed: found by its new name), else to the topic
 * row now at its place (a topic deleted), else to the channel's row (its last topic deleted), on
 * the "⋮" it was on, never to the page's body. All from the keys: the menu button, Enter, the
 * arrows, Enter. A rename never shows the old name beside the new one (the event applied to the
 * list at once, before the fetch). "Show all N topics" gives its focus to the first topic it
 * brought, and "Show all N conversations" to the first conversation it brought. The
 * direct-message conversations' marks, as the reference's: a person's presence circle (in words
 * for screen readers), a bot's icon, a group's icon; no avatar.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, pluck, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

let kitchen = 0;
let garden = 0;
let hall = 0;
/** The hall's topics, oldest first: the sidebar shows the newest 8 until "Show all 10 topics". */
const HALL = ['h01', 'h02', 'h03', 'h04', 'h05', 'h06', 'h07', 'h08', 'h09', 'h10'];
const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    kitchen: { by: 'iago', members: ['iago', 'othello'] },
    garden: { by: 'iago', members: ['iago', 'othello'] },
    hall: { by: 'iago', members: ['iago'] },
  },
  seed: async ({ ts, channels }) => {
    kitchen = channels.kitchen;
    garden = channels.garden;
    hall = channels.hall;
    for (const topic of ['trash', 'delta', 'gamma', 'beta', 'alpha'])
      await sendChannelMessage(ts.api, 'othello', 'kitchen', topic, `About ${topic}`);
    await sendChannelMessage(ts.api, 'othello', 'garden', 'weeds', 'Pull them');
    // Iago's own (read): none shown for being unread.
    for (const topic of HALL)
      await sendChannelMessage(ts.api, 'iago', 'hall', topic, `In ${topic}`);
    // Iago's direct-message conversations, oldest first, read: the sidebar shows the
    // newest 8 until "Show all 10 conversations".
    const id = (n: string) => ts.fx.users[n]!.id;
    for (const to of [
      [id('shiva')],
      [id('polonius')],
      [id('cordelia')],
      [id('prospero')],
      [id('othello')],
      [id('hamlet')],
      [id('iago')],
      [ts.fx.notificationBotId],
      [id('hamlet'), id('othello')],
      [id('cordelia'), id('prospero')],
    ])
      await sendDirectMessage(ts.api, 'iago', to, 'Hello', { read_by_sender: true });
  },
});

/**
 * Records, from before the page's scripts run, each moment the sidebar's topics hold both names
 * of `window.watchPair` (a topic renamed: the old beside the new), as the labels then.
 */
const WATCH_PAIR = `window.watchPair = null;
  window.pairSeen = [];
  new MutationObserver(() => {
    const pair = window.watchPair;
    if (!pair) return;
    const labels = [...document.querySelectorAll('.sidebar a.topic .label')].map((e) => e.textContent);
    if (pair.every((x) => labels.includes(x))) window.pairSeen.push(labels.join(' | '));
  }).observe(document, { childList: true, subtree: true, characterData: true });`;

/**
 * Counts, from before the page's scripts run, each time a channel's topic list says "Loading
 * topics…" after it had shown its topics (`window.loadingFlashes`, the channels' names).
 */
const COUNT_LOADING = `window.loadingFlashes = [];
  (() => {
    const shown = new Set();
    const saying = new Set();
    const look = () => {
      for (const ul of document.querySelectorAll('ul[aria-label^="Topics in "]')) {
        const name = ul.getAttribute('aria-label');
        const loading = ul.textContent.includes('Loading topics…');
        if (loading && shown.has(name) && !saying.has(name)) window.loadingFlashes.push(name);
        if (loading) saying.add(name);
        else saying.delete(name);
        if (ul.querySelector('a.topic')) shown.add(name);
      }
    };
    new MutationObserver(look).observe(document, { childList: true, subtree: true, characterData: true });
  })();`;

/** The open channel's topics in the sidebar, top to bottom. */
const SIDEBAR_TOPICS = `[...document.querySelectorAll('.sidebar a.topic .label')].map((e) => e.textContent)`;

async function waitTopics(page: Page, has: string[], hasNot: string[] = []): Promise<string[]> {
  await waitFor(
    page,
    `((l) => ${JSON.stringify(has)}.every((x) => l.includes(x)) && !${JSON.stringify(hasNot)}.some((x) => l.includes(x)))(${SIDEBAR_TOPICS})`,
    15_000,
  ).catch(async (e: unknown) => {
    throw new Error(`sidebar topics: ${JSON.stringify(await page.evaluate(SIDEBAR_TOPICS))}`, {
      cause: e,
    });
  });
  return page.evaluate<string[]>(SIDEBAR_TOPICS);
}

/**
 * What has the focus, in words: "topic menu ✔ alpha" (a topic row's "⋮"), "topic link beta",
 * "channel link garden", or "body".
 */
const FOCUSED = `((a) => {
  if (!a || a === document.body) return 'body';
  const sidebar = a.closest('.sidebar');
  if (!sidebar) return 'elsewhere: ' + a.tagName + ' ' + (a.className || '');
  const inTopics = a.closest('ul[aria-label^="Topics in "]');
  const row = inTopics ? a.closest('li') : a.closest('.nav-row');
  const kind = a.matches('.row-menu-btn') ? 'menu' : a.matches('a') ? 'link' : a.tagName;
  return (inTopics ? 'topic ' : 'channel ') + kind + ' ' + (row?.querySelector('.label')?.textContent ?? '?');
})(document.activeElement)`;

/** Until the focus is on `want` (a bound of 5 s for a broken build), then what it is on. */
async function focusedAs(page: Page, want: string): Promise<string> {
  await waitFor(page, `${FOCUSED} === ${JSON.stringify(want)}`, 5_000).catch(() => undefined);
  return page.evaluate<string>(FOCUSED);
}

/** The sidebar's menu button of a topic of the open channel. */
const topicMenu = (topic: string) =>
  `.sidebar li.nav-row:has(a.topic .label:text-is(${JSON.stringify(topic)})) .row-menu-btn`;

/** From the keys: the topic's "⋮" focused, Enter, ↓ to `label`, Enter. */
async function chooseByKeys(page: Page, topic: string, label: string): Promise<void> {
  await page.focus(topicMenu(topic));
  await page.keyboard.press('Enter');
  await page.waitForSelector('.row-menu-list');
  for (let i = 0; i < 12; i++) {
    if ((await page.evaluate('document.activeElement?.textContent')) === label) break;
    await page.keyboard.press('ArrowDown');
  }
  if ((await page.evaluate('document.activeElement?.textContent')) !== label)
    throw new Error(`no ${label} in the menu`);
  await page.keyboard.press('Enter');
}

t.test(
  'resolve, unresolve, rename and delete from the keys: the focus stays in the list',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
      hash: `#narrow/channel/${kitchen}-kitchen`,
      init: COUNT_LOADING + WATCH_PAIR,
    });
    await waitMessage(page, 'About alpha');
    t.same(
      await waitTopics(page, ['alpha', 'beta', 'gamma', 'delta', 'trash']),
      ['alpha', 'beta', 'gamma', 'delta', 'trash'],
      'newest first',
    );

    // Resolved: the row of "✔ alpha", on its "⋮" (where the focus was, the menu closed).
    await chooseByKeys(page, 'alpha', 'Mark as resolved');
    await waitTopics(page, ['✔ alpha'], ['alpha']);
    t.equal(await focusedAs(page, 'topic menu ✔ alpha'), 'topic menu ✔ alpha', 'resolved: its row');
    await screenshot(page, t, 'resolved-focus-1280');

    // And back.
    await chooseByKeys(page, '✔ alpha', 'Mark as unresolved');
    await waitTopics(page, ['alpha'], ['✔ alpha']);
    t.equal(await focusedAs(page, 'topic menu alpha'), 'topic menu alpha', 'unresolved: its row');

    // Renamed in the dialog (Enter in the name): the row of the new name.
    await page.evaluate(`window.watchPair = ['beta', 'bravo']`);
    const refetched = page.waitForResponse((r) => r.url().includes(`/users/me/${kitchen}/topics`));
    await chooseByKeys(page, 'beta', 'Move topic');
    await page.waitForSelector('.move-topic-dialog');
    await page.keyboard.press('Control+a');
    await page.keyboard.type('bravo');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.move-topic-dialog', { state: 'detached' });
    await waitTopics(page, ['bravo'], ['beta']);
    t.equal(await focusedAs(page, 'topic menu bravo'), 'topic menu bravo', 'renamed: its row');
    // Until the list fetched again after the event (and the notice that names the new topic).
    await refetched;
    t.same(
      await page.evaluate('window.pairSeen'),
      [],
      'renamed: never the old name beside the new (the event applied to the list at once)',
    );

    // Deleted (confirmed with Enter): the row now at its place.
    const before = await page.evaluate<string[]>(SIDEBAR_TOPICS);
    const at = before.indexOf('gamma');
    await chooseByKeys(page, 'gamma', 'Delete topic');
    await page.waitForSelector('.dialog.confirm');
    await page.keyboard.press('Enter');
    const after = await waitTopics(page, [], ['gamma']);
    const next = after[at] ?? after.at(-1)!;
    t.not(next, undefined);
    t.equal(
      await focusedAs(page, `topic menu ${next}`),
      `topic menu ${next}`,
      `deleted: the row now at its place (${next})`,
    );

    t.same(
      await page.evaluate('window.loadingFlashes'),
      [],
      'no "Loading topics…" in place of the list shown, after any of them',
    );
    watch.assertClean(t);
  },
);

t.test("a channel's last topic deleted: the channel's row", async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
    hash: `#narrow/channel/${garden}-garden`,
    init: COUNT_LOADING,
  });
  await waitMessage(page, 'Pull them');
  await waitTopics(page, ['weeds']);
  await chooseByKeys(page, 'weeds', 'Delete topic');
  await page.waitForSelector('.dialog.confirm');
  await page.keyboard.press('Enter');
  await waitFor(
    page,
    `document.querySelector('ul[aria-label="Topics in garden"]')?.textContent.includes('No topics yet')`,
    15_000,
  );
  t.equal(
    await focusedAs(page, 'channel link garden'),
    'channel link garden',
    "the channel's row, not the page's body",
  );
  t.same(await page.evaluate('window.loadingFlashes'), [], 'no "Loading topics…" meanwhile');
  watch.assertClean(t);
});

t.test('"Show all 10 topics" from the keys: the focus on the first topic it brought', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
    hash: `#narrow/channel/${hall}-hall`,
  });
  await waitMessage(page, 'In h10');
  const newest = [...HALL].reverse();
  t.same(await waitTopics(page, newest.slice(0, 8)), newest.slice(0, 8), 'the newest 8');
  const more = '.sidebar button.more:text-is("Show all 10 topics")';
  await page.focus(more);
  await page.keyboard.press('Enter');
  await waitTopics(page, HALL);
  t.equal(await page.locator(more).count(), 0, 'the button gone');
  t.equal(
    await focusedAs(page, 'topic link h02'),
    'topic link h02',
    'the first topic it brought (the newest of those not shown), not the page’s body',
  );
  watch.assertClean(t);
});

/** The sidebar's direct-message rows. */
const DM_ROWS = '.sidebar li[data-dm]';

t.test(
  "the direct messages: a person's presence circle, a bot's icon, a group's icon",
  async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
    await waitFor(page, `document.querySelectorAll(${JSON.stringify(DM_ROWS)}).length === 8`);
    t.same(
      await pluck(page, `${DM_ROWS} .label`),
      [
        'Cordelia, Prospero',
        'Hamlet, Othello',
        'Notification Bot',
        'Iago (you)',
        'Hamlet',
        'Othello',
        'Prospero',
        'Cordelia',
      ],
      'the newest 8',
    );
    t.equal(await page.locator(`${DM_ROWS} .avatar`).count(), 0, 'no avatar');
    const row = (label: string) => `${DM_ROWS}:has(.label:text-is(${JSON.stringify(label)}))`;
    // The row's mark (what comes before its name), found by the name.
    const mark = async (label: string) =>
      page.evaluate(`((m) => m && {
        mark: m.className,
        dot: m.querySelector('.presence-dot')?.className ?? null,
        icon: m.querySelector('svg.icon') !== null,
        first: m === m.parentElement.firstElementChild,
      })([...document.querySelectorAll(${JSON.stringify(DM_ROWS)})]
        .find((li) => li.querySelector('.label').textContent === ${JSON.stringify(label)})
        ?.querySelector('a > .inbox-mark'))`);
    t.same(
      await mark('Othello'),
      { mark: 'inbox-mark', dot: 'presence-dot offline', icon: false, first: true },
      'a person: their presence circle, first in the row',
    );
    t.equal(await page.textContent(`${row('Othello')} .sr-only`), ', offline', 'in words');
    t.equal(
      await page.getAttribute(`${row('Othello')} .presence-dot`, 'aria-hidden'),
      'true',
      'the circle itself is not read out',
    );
    t.same(
      await mark('Iago (you)'),
      { mark: 'inbox-mark', dot: 'presence-dot active', icon: false, first: true },
      "one's own conversation: one's own presence",
    );
    t.same(
      await mark('Notification Bot'),
      { mark: 'inbox-mark inbox-bot', dot: null, icon: true, first: true },
      'a bot: its icon, no presence',
    );
    t.equal(await page.locator(`${row('Notification Bot')} .sr-only`).count(), 0, 'nor words');
    t.same(
      await mark('Hamlet, Othello'),
      { mark: 'inbox-mark inbox-group', dot: null, icon: true, first: true },
      "a group: the group's icon",
    );
    const lefts = await page.evaluate<number[]>(
      `[...document.querySelectorAll(${JSON.stringify(`${DM_ROWS} .label`)})].map((e) => Math.round(e.getBoundingClientRect().left))`,
    );
    t.equal(new Set(lefts).size, 1, `the names line up (${lefts.join(', ')})`);
    await screenshot(page, t, 'dms-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click('button[aria-label="Open the sidebar"]');
    await page.locator(DM_ROWS).first().scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await screenshot(page, t, 'dms-390');
    watch.assertClean(t);
  },
);

t.test(
  '"Show all 10 conversations" from the keys: the focus on the first conversation it brought',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
    await waitFor(page, `document.querySelectorAll(${JSON.stringify(DM_ROWS)}).length === 8`);
    const more = '.sidebar button.more:text-is("Show all 10 conversations")';
    await page.focus(more);
    await page.keyboard.press('Enter');
    await waitFor(page, `document.querySelectorAll(${JSON.stringify(DM_ROWS)}).length === 10`);
    t.same(
      (await pluck(page, `${DM_ROWS} .label`)).slice(8),
      ['Polonius', 'Shiva'],
      'the older two',
    );
    t.equal(await page.locator(more).count(), 0, 'the button gone');
    const focused = `((a) => a === document.body ? 'body' : a?.closest('li[data-dm]')?.querySelector('.label')?.textContent ?? a?.tagName)(document.activeElement)`;
    await waitFor(page, `${focused} === 'Polonius'`, 5_000).catch(() => undefined);
    t.equal(
      await page.evaluate(focused),
      'Polonius',
      'the first conversation it brought (the newest of those not shown), not the page’s body',
    );
    t.equal(
      await page.evaluate(`document.activeElement.matches('li[data-dm] > a')`),
      true,
      'on its link',
    );
    watch.assertClean(t);
  },
);
