/**
 * Emoji in the web app on a desktop without a colour-emoji font (Debian's chromium here and in
 * CI has none): the app ships its own (Noto Color Emoji, split by Unicode range; docs/web.md
 * "Emoji"), so a rendered `:thumbs_up:`, a reaction and the picker show a coloured glyph rather
 * than an empty box. Checked on the pixels: a missing glyph's box is grey, the emoji is not. A
 * page without emoji (the login form) fetches no part of the font, and one with a single emoji
 * fetches only the subset that holds it, from /static, cacheable, within the page's CSP. The
 * emoji index's file (fetched at the first need, Controller.loadEmoji) refused: a toast, the
 * picker says so rather than "Loading…", and the compose box's next `:` autocomplete asks again
 * (as the picker's next opening).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import sharp from 'sharp';
import type { Test } from 'tap';
import type { Locator, Page } from 'playwright-core';
import { openApp, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, SCREENSHOT_DIR, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

let general: number;

const { b, ts } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'iago', members: ['hamlet', 'othello'] } },
  seed: ({ channels }) => {
    general = channels.general;
  },
});

/** Pixels whose channels differ by more than a grey's (anti-aliased grey text differs by ~0). */
async function colouredPixels(png: Buffer): Promise<number> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  let n = 0;
  for (let i = 0; i < data.length; i += info.channels) {
    const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
    if (Math.max(r, g, b) - Math.min(r, g, b) > 80) n++;
  }
  return n;
}

/**
 * The element's screenshot (saved as .tap/screenshots/app-emoji/<name>.png) and its coloured
 * pixels, taken again until some show (the font loads after the first paint: font-display swap)
 * or 10 s have passed: a bound for a broken build, not a timing assertion.
 */
async function glyph(t: Test, el: Locator, name: string): Promise<number> {
  const dir = path.join(SCREENSHOT_DIR, 'app-emoji');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  const start = Date.now();
  for (;;) {
    const png = await el.screenshot({ path: file });
    const n = await colouredPixels(png);
    if (n >= 20 || Date.now() - start > 10_000) {
      t.comment(`screenshot: ${path.relative(process.cwd(), file)} (${n} coloured pixels)`);
      return n;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The font files the page has fetched since it was loaded (paths). */
function fontsFetched(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(
    `performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)
      .filter((p) => p.endsWith('.woff2'))`,
  );
}

t.test('the login page fetches no emoji font', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await b.newPage();
  const watch = await watchPage(page);
  await page.goto(ts.url + '/');
  await page.waitForSelector('input[name="username"]');
  await page.evaluate('document.fonts.ready.then(() => true)');
  t.same(await fontsFetched(page), [], 'no font file');
  watch.assertClean(t, /status of 401/);
});

t.test(':thumbs_up: in a message, as a reaction and in the picker: a coloured glyph', async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'emoji', ':thumbs_up: ok');
  await ts.api.post('othello', `messages/${id}/reactions`, { emoji_name: 'thumbs_up' });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/emoji`,
  });
  await waitMessage(page, 'ok');
  const row = page.locator(`.msg[data-id="${id}"]`);
  await waitFor(page, `document.querySelector('.msg[data-id="${id}"] .reaction') !== null`);

  t.equal(await row.locator('.content .emoji').textContent(), '\u{1f44d}', 'the span shows 👍');
  t.ok((await glyph(t, row.locator('.content .emoji'), 'message')) >= 20, 'message: in colour');
  t.ok((await glyph(t, row.locator('.reaction .e'), 'reaction')) >= 20, 'reaction: in colour');

  const stack = await page.evaluate<string>(
    `getComputedStyle(document.querySelector('.msg[data-id="${id}"] .reaction .e')).fontFamily`,
  );
  const order = ['Apple Color Emoji', 'Segoe UI Emoji', 'Noto Color Emoji', 'Confab Emoji'];
  t.same(
    order.map((f) => stack.indexOf(f) >= 0),
    [true, true, true, true],
    `the systems' emoji fonts and ours in the stack (${stack})`,
  );
  t.ok(
    order.every((f, i) => i === 0 || stack.indexOf(order[i - 1]!) < stack.indexOf(f)),
    "the systems' emoji fonts before ours",
  );

  const fonts = await fontsFetched(page);
  t.ok(fonts.length >= 1 && fonts.length <= 2, `the subset with 👍, not all (${fonts.join(', ')})`);
  for (const file of fonts) {
    t.match(file, /^\/static\/emoji-\d+-[\w-]+\.woff2$/, `${file}: the emoji font's`);
    const res = await fetch(ts.url + file);
    t.equal(res.headers.get('content-type'), 'font/woff2', `${file}: type`);
    t.match(res.headers.get('cache-control'), /immutable/, `${file}: cacheable`);
  }

  await screenshot(page, t, 'topic');
  await row.hover();
  await row.locator('button[aria-label="Add a reaction"]').first().click();
  await page.fill('input[aria-label="Search emoji"]', 'thumbs_up');
  await waitFor(
    page,
    `document.querySelector('.picker-grid [role="option"]')?.getAttribute('aria-label') === 'thumbs up'`,
  );
  const option = page.locator('.picker-grid [role="option"]').first();
  t.ok((await glyph(t, option, 'picker')) >= 20, 'picker: in colour');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("the picker's footer names an emoji shown, not one a search has hidden", async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'picker', 'Pick one');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/picker`,
  });
  await waitMessage(page, 'Pick one');
  const row = page.locator(`.msg[data-id="${id}"]`);
  await row.hover();
  await row.locator('button[aria-label="Add a reaction"]').click();
  const options = page.locator('.picker-grid [role="option"]');
  await options.nth(9).waitFor();
  const hovered = (await options.nth(9).getAttribute('title'))!;
  await options.nth(9).hover();
  t.equal(await page.textContent('.picker-name'), hovered, 'the emoji under the pointer named');
  // The pointer stays where it was while a search replaces the emoji under it.
  await page.fill('input[aria-label="Search emoji"]', 'thumbs_up');
  await waitFor(page, `document.querySelectorAll('.picker-grid [role="option"]').length === 1`);
  t.not(hovered, ':thumbs_up:', '(another emoji than the one found)');
  t.equal(
    await page.textContent('.picker-name'),
    ':thumbs_up:',
    'the one found (which Enter picks), not the one hidden',
  );
  await page.keyboard.press('Escape');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  'the emoji file not fetched: a toast, the picker says so, the next one asks again',
  async (t) => {
    if (NO_CHROMIUM) return;
    const id = await sendChannelMessage(ts.api, 'othello', 'general', 'offline', 'No emoji yet');
    // The server's emoji file (register's server_emoji_data_url) refused until said.
    const file = /\/static\/generated\/emoji\/emoji_api\.[^/]*\.json$/;
    let refused = 0;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${general}-general/topic/offline`,
      setup: async (page) => {
        await page.route(file, (route) => {
          refused++;
          return route.abort('connectionfailed');
        });
      },
    });
    await waitMessage(page, 'No emoji yet');
    const row = page.locator(`.msg[data-id="${id}"]`);
    await row.hover();
    await row.locator('button[aria-label="Add a reaction"]').click();
    await page.waitForSelector('.toast:has-text("Could not load the emoji list.")');
    t.pass('a toast says so');
    t.equal(refused, 1, 'the file was asked for once');
    // Not left "Loading…": it says why there is nothing to pick (no custom emoji in this realm).
    const gridText = `document.querySelector('.picker-grid')?.textContent`;
    await waitFor(page, `${gridText} === 'Could not load the emoji list.'`, 10_000).catch(
      () => undefined,
    );
    t.equal(
      await page.evaluate(gridText),
      'Could not load the emoji list.',
      'the picker says it could not load them, not "Loading…"',
    );
    await screenshot(page, t, 'picker-not-loaded');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.picker', { state: 'detached' });

    // The connection back: the compose box's `:` autocomplete asks again too (not only the
    // picker), and offers the server's emoji.
    await page.unroute(file);
    await page.click('#compose-text');
    await page.keyboard.type(':thumbs_u');
    const firstOption = `document.querySelector('.popup.ac [role="option"]')?.textContent`;
    await waitFor(page, `${firstOption}?.includes(':thumbs_up:')`, 10_000).catch(() => undefined);
    t.match(
      await page.evaluate(firstOption),
      /:thumbs_up:/,
      'the autocomplete fetched the file again: the server’s emoji offered',
    );
    await page.fill('#compose-text', '');

    // The picker has them too.
    await row.hover();
    await row.locator('button[aria-label="Add a reaction"]').click();
    await page.fill('input[aria-label="Search emoji"]', 'thumbs_up');
    await waitFor(
      page,
      `document.querySelector('.picker-grid [role="option"]')?.getAttribute('aria-label') === 'thumbs up'`,
      10_000,
    ).catch(() => undefined);
    t.equal(
      await page.evaluate(
        `document.querySelector('.picker-grid [role="option"]')?.getAttribute('aria-label') ?? document.querySelector('.picker-grid')?.textContent`,
      ),
      'thumbs up',
      'found once the file could be fetched',
    );
    await page.keyboard.press('Enter');
    await waitFor(page, `document.querySelector('.msg[data-id="${id}"] .reaction') !== null`);
    t.pass('and picked: the reaction shows');
    watch.assertClean(t, /WebSocket|status of 401|ERR_CONNECTION_FAILED|ERR_FAILED/);
  },
);
