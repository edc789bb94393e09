/**
 * The web app in chromium: a search shows what matched (the server's `match_content` and
 * `match_subject`, highlighted in the message and its topic, also for messages another view had
 * loaded already); the Starred view counts the starred messages (the user's
 * `starred_message_counts` permitting), kept current as messages are starred, unstarred and
 * deleted; and what is typed right after Ctrl+K lands in the dialog's field, every character.
 */
import type { Page } from 'playwright-core';
import t from 'tap';
import { openApp, waitFor, waitForTitle } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

let general: number;
const ids: number[] = [];

const { b, ts, channels } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'iago', members: ['hamlet', 'othello', 'iago'] } },
  seed,
});

async function seed(): Promise<void> {
  general = channels.general;
  ids.push(
    await sendChannelMessage(ts.api, 'othello', 'general', 'lunch plans', 'Lunch at noon?'),
    await sendChannelMessage(ts.api, 'iago', 'general', 'lunch plans', 'Noon works for me.'),
    await sendChannelMessage(ts.api, 'othello', 'general', 'release', 'The release is out.'),
  );
}

const texts = (sel: string) =>
  `[...document.querySelectorAll(${JSON.stringify(sel)})].map((e) => e.textContent)`;

t.test('search results highlight the words found, in the content and the topic', async (t) => {
  if (NO_CHROMIUM) return;
  // The feed first: the messages are loaded (without highlighting) before the search.
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#feed' });
  await waitFor(page, `${texts('.msg .content')}.some((x) => x.includes('Lunch at noon?'))`);
  t.equal(await page.locator('.highlight').count(), 0, 'nothing highlighted in the feed');

  await page.fill('#search', 'lunch');
  await page.press('#search', 'Enter');
  await waitFor(page, `location.hash.includes('search/lunch')`);
  await waitFor(page, `document.querySelectorAll('.msg .content .highlight').length > 0`);
  t.same(await page.evaluate(texts('.msg .content .highlight')), ['Lunch'], 'the word found');
  t.same(
    await page.evaluate(texts('.recipient .topic-name .highlight')),
    ['lunch'],
    'the topic highlighted',
  );
  t.equal(await page.textContent('.recipient .topic-name'), 'lunch plans', 'the whole topic shown');
  t.notOk(
    (await page.evaluate<string[]>(texts('.msg .content'))).join(' ').includes('release'),
    'only the messages found (by their words or their topic)',
  );

  // Its topic renamed (the content as it was): the content's words still highlighted.
  await ts.api.patch('othello', `messages/${ids[0]}`, {
    topic: 'food',
    propagate_mode: 'change_one',
  });
  await waitFor(page, `${texts('.recipient .topic-name')}.includes('food')`);
  t.same(
    await page.evaluate(texts('.msg .content .highlight')),
    ['Lunch'],
    'a move: the words found still highlighted',
  );

  // An edit of the message shown: its content as it is now (the highlighting was of the old).
  await ts.api.patch('othello', `messages/${ids[0]}`, { content: 'Lunch at one?' });
  await waitFor(page, `${texts('.msg .content')}.some((x) => x.includes('Lunch at one?'))`);
  t.equal(await page.locator('.msg .content .highlight').count(), 0, 'the edit shown as it is');

  // Back to the feed: no highlighting there. Waited for by a message the search did not show
  // ("Noon works" is in the search's results too, by its topic, so it tells nothing).
  await page.goto(ts.url + '/#feed');
  await waitFor(page, `${texts('.msg .content')}.some((x) => x.includes('The release is out'))`);
  t.equal(await page.locator('.highlight').count(), 0, 'none in the feed afterwards');
  watch.assertClean(t, /WebSocket|status of 401/);
});

const starredBadge = `document.querySelector('a.nav-item[href="#narrow/is/starred"] .badge')`;
const starredCount = `(${starredBadge}?.textContent ?? '')`;

t.test('the Starred view counts the starred messages, kept current', async (t) => {
  if (NO_CHROMIUM) return;
  const star = (id: number, op: 'add' | 'remove') =>
    ts.api.post('hamlet', 'messages/flags', { messages: [id], op, flag: 'starred' });
  await star(ids[1]!, 'add');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#feed' });
  await waitFor(page, `${starredCount} === '1'`);
  t.pass('the count from the first load');
  t.match(
    await page.evaluate(`${starredBadge}.getAttribute('aria-label')`),
    /1 starred/,
    'said to be starred messages, not unread ones',
  );

  await star(ids[2]!, 'add');
  await waitFor(page, `${starredCount} === '2'`);
  t.pass('a message starred elsewhere');
  await star(ids[1]!, 'remove');
  await waitFor(page, `${starredCount} === '1'`);
  t.pass('a message unstarred elsewhere');

  // Starred here, with the message's star button.
  const row = page.locator(`.msg[data-id="${ids[0]}"]`);
  await row.hover();
  await row.locator('button[aria-label="Star"]').click();
  await waitFor(page, `${starredCount} === '2'`);
  t.pass('a message starred here');

  const del = await ts.api.delete('iago', `messages/${ids[2]}`);
  t.equal(del.status, 200, 'deleted');
  await waitFor(page, `${starredCount} === '1'`);
  t.pass('a starred message deleted');

  await ts.api.patch('hamlet', 'settings', { starred_message_counts: false });
  await waitFor(page, `${starredBadge} === null`);
  t.pass('no count when the user turned the counts off');
  await ts.api.patch('hamlet', 'settings', { starred_message_counts: true });
  await waitFor(page, `${starredCount} === '1'`);
  t.pass('and again when turned on');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a starred message shows its star without the pointer on it', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/lunch plans`,
  });
  const mark = (id: number) => `.msg[data-id="${id}"] .star-mark`;
  await page.waitForSelector(`.msg[data-id="${ids[1]}"]`);
  await page.mouse.move(5, 795);
  t.equal(await page.locator(mark(ids[1]!)).count(), 0, 'none on a message not starred');
  await ts.api.post('hamlet', 'messages/flags', { messages: [ids[1]], op: 'add', flag: 'starred' });
  await page.waitForSelector(mark(ids[1]!));
  t.ok(await page.locator(mark(ids[1]!)).isVisible(), 'starred (elsewhere): its star shown');
  t.equal(await page.locator('.msg-actions').count(), 0, 'with no toolbar drawn');
  await screenshot(page, t, 'starred-mark');
  const row = page.locator(`.msg[data-id="${ids[1]}"]`);
  await row.hover();
  await row.locator('button[aria-label="Unstar"]').click();
  await page.waitForSelector(mark(ids[1]!), { state: 'detached' });
  t.pass('unstarred: the star gone');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('keys typed right after Ctrl+K land in the dialog, every one', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general`,
  });
  await page.waitForSelector('#compose-text');
  for (const from of ['the page', 'the compose box']) {
    if (from === 'the compose box') await page.focus('#compose-text');
    else await page.evaluate(`document.activeElement?.blur()`);
    // No wait between the shortcut and the typing.
    await page.keyboard.press('Control+k');
    await page.keyboard.type('general chat', { delay: 0 });
    await page.waitForSelector('.jump input');
    t.equal(await page.inputValue('.jump input'), 'general chat', `from ${from}: all typed`);
    t.equal(await page.inputValue('#compose-text'), '', `from ${from}: none in the compose box`);
    await page.keyboard.press('Escape');
    await waitFor(page, `document.querySelector('.jump') === null`);
  }
  watch.assertClean(t, /WebSocket|status of 401/);
});

type Box = { x: number; y: number; width: number; height: number };

/**
 * The box of the search field's clear button ("×": chromium draws it in the field's user-agent
 * shadow tree, which only the DevTools protocol reaches), or null when it is not drawn.
 */
async function clearButtonBox(page: Page): Promise<Box | null> {
  const cdp = await page.context().newCDPSession(page);
  try {
    type DomNode = {
      nodeId: number;
      attributes?: string[];
      children?: DomNode[];
      shadowRoots?: DomNode[];
    };
    const { root } = (await cdp.send('DOM.getDocument', { depth: -1, pierce: true })) as {
      root: DomNode;
    };
    const find = (n: DomNode): DomNode | null => {
      const a = n.attributes ?? [];
      for (let i = 0; i < a.length; i += 2)
        if (a[i] === 'pseudo' && a[i + 1] === '-webkit-search-cancel-button') return n;
      for (const c of [...(n.shadowRoots ?? []), ...(n.children ?? [])]) {
        const found = find(c);
        if (found) return found;
      }
      return null;
    };
    const button = find(root);
    if (button === null) return null;
    // No box model: not rendered (display: none).
    const model = await cdp.send('DOM.getBoxModel', { nodeId: button.nodeId }).catch(() => null);
    if (model === null) return null;
    const [x1, y1, x2, , , y3] = model.model.border;
    const box = { x: x1!, y: y1!, width: x2! - x1!, height: y3! - y1! };
    return box.width > 0 && box.height > 0 ? box : null;
  } finally {
    await cdp.detach();
  }
}

function inside(a: Box, b: Box): boolean {
  return (
    a.x >= b.x && a.y >= b.y && a.x + a.width <= b.x + b.width && a.y + a.height <= b.y + b.height
  );
}

function overlap(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

t.test(
  'the search box takes a tap or click on its magnifier (a phone shows only that)',
  async (t) => {
    if (NO_CHROMIUM) return;
    for (const [width, dark] of [
      [390, false],
      [390, true],
      [1280, false],
      [1280, true],
    ] as const) {
      const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
        hash: '#feed',
        width,
        height: width === 390 ? 844 : 800,
        dark,
      });
      const theme = dark ? 'dark' : 'light';
      const icon = await page.locator('form.search .icon').boundingBox();
      const at = { x: icon!.x + icon!.width / 2, y: icon!.y + icon!.height / 2 };
      await page.mouse.click(at.x, at.y);
      await waitFor(page, `document.activeElement?.id === 'search'`, 5_000).catch(() => {});
      t.equal(
        await page.evaluate(`document.activeElement?.id ?? ''`),
        'search',
        `${width} px: the box has the focus`,
      );
      await page.keyboard.type('lunch');
      await page.keyboard.press('Enter');
      await waitFor(page, `location.hash.includes('search/lunch')`);
      // The hash changes before the view: the results waited for (their title, a word found
      // highlighted) before the screenshot.
      await waitForTitle(page, 'Search: lunch');
      await waitFor(page, `document.querySelector('.msg .content .highlight') !== null`);
      t.pass(`${width} px: and searches`);
      // The search stays in the box; the pointer still on the magnifier (hovered: chromium draws
      // the field's "×" on hover or focus). Then the box taken again, as to change the search.
      for (const state of ['searched', 'focused']) {
        if (state === 'focused') {
          await page.mouse.click(at.x, at.y);
          await waitFor(page, `document.activeElement?.id === 'search'`);
        }
        const where = `${width} px, ${theme}, ${state}`;
        const magnifier = await page.locator('form.search .icon').boundingBox();
        const clear = await clearButtonBox(page);
        const field = await page.locator('#search').boundingBox();
        t.ok(
          magnifier !== null && field !== null && magnifier.width > 0 && inside(magnifier, field),
          `${where}: the magnifier is drawn, in the field ` +
            `(${JSON.stringify(magnifier)}, ${JSON.stringify(field)})`,
        );
        if (width > 390 || state === 'focused')
          t.ok(clear !== null, `${where}: so is the field's clear button`);
        t.notOk(
          clear !== null && magnifier !== null && overlap(clear, magnifier),
          `${where}: the clear button is not on the magnifier ` +
            `(${JSON.stringify(clear)}, ${JSON.stringify(magnifier)})`,
        );
        await screenshot(page, t, `search-${width}-${theme}-${state}`);
      }
      watch.assertClean(t, /WebSocket|status of 401/);
      await page.close();
    }
  },
);
