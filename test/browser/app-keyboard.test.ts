/**
 * The web app's core loop by keyboard alone, in chromium, light and dark: `c` in a view of
 * several channels puts the focus on the compose box's channel (it went to the text, past it);
 * a channel picked in its select, a topic typed, Enter sends; Esc goes back to the list, where
 * the arrows and j/k move the selection; `i` goes to the selected message's actions (by Tab,
 * every link and button of the messages before it came first), Enter on "Add a reaction" opens
 * the picker, an emoji found by name reacts, and the focus comes back to the button (it fell to
 * the page's body), Esc to the list; Settings takes the focus as it opens, keeps Tab within it,
 * and gives the focus back to its button as it closes (neither before). At 390 pixels `i` goes
 * to the message's "⋮". Whatever has the focus shows the app's ring: the fields, the compose
 * box and "Attach files" showed none that could be seen (a 1.2:1 halo, or nothing). The page's
 * first Tab stop is "Skip to messages", seen only while focused, which takes the focus to the
 * list (past the sidebar's and the top bar's fifteen stops). A message's actions are one Tab
 * stop (a toolbar): → ← Home End move between them, Tab leaves, and the stop stays on the action
 * last focused; Enter on Star (it says Unstar then) keeps the focus on it.
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'othello', members: ['hamlet', 'othello'] },
    sandbox: { by: 'othello', members: ['hamlet', 'othello'] },
  },
  seed: async ({ ts }) => {
    for (const text of ['first words', 'second words', 'third words'])
      await sendChannelMessage(ts.api, 'othello', 'general', 'chat', text);
  },
});

/** What has the focus: a short description (tag, id, class, label). */
function focused(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return 'body';
    const label = e.getAttribute('aria-label') || (e.textContent || '').trim().slice(0, 30);
    return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
      (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '') +
      ' "' + label + '"';
  })()`);
}

/**
 * Whether what has the focus shows a ring: its own outline or box-shadow ring (the app's
 * --focus), the selected message's outline while the list has it, the compose box's for its text.
 */
function ringShown(page: Page): Promise<boolean> {
  return page.evaluate(`(() => {
    let e = document.activeElement;
    if (!e || e === document.body) return false;
    if (e.classList.contains('messages')) e = e.querySelector('.msg.selected') || e;
    if (e.id === 'compose-text') e = e.closest('.compose');
    if (e.type === 'file') e = e.closest('label') || e;
    const st = getComputedStyle(e);
    return (st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) >= 2) ||
      /rgb\\(91, 141, 239\\)/.test(st.boxShadow);
  })()`);
}

/** Presses `key` and asserts where the focus went (a pattern) and that it shows a ring. */
async function press(t: Test, page: Page, key: string, to: RegExp): Promise<void> {
  await page.keyboard.press(key);
  const what = await focused(page);
  t.match(what, to, `${key}: the focus on ${what}`);
  t.ok(await ringShown(page), `${key}: ${what} shows a focus ring`);
}

for (const dark of [false, true]) {
  const mode = dark ? 'dark' : 'light';
  t.test(`${mode}: the core loop by keyboard`, async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { dark });
    await waitMessage(page, 'third words');
    const text = `by keyboard ${mode}`;

    // c: the compose box, at its channel; a channel picked (the select's own keys), a topic.
    await page.evaluate(`document.activeElement?.blur()`);
    await press(t, page, 'c', /select.*to-channel/);
    await page.keyboard.type('#sandbox');
    t.equal(
      await page.evaluate(`document.querySelector('select.to-channel').selectedOptions[0].text`),
      '#sandbox',
      'the channel picked by typing its name',
    );
    await press(t, page, 'Tab', /input#compose-topic/);
    await page.keyboard.type('plans');
    await press(t, page, 'Tab', /textarea#compose-text/);
    await screenshot(page, t, `compose-ring-${mode}`);
    // On to "Attach files" (a label around its hidden field) and back.
    await press(t, page, 'Tab', /input/);
    await screenshot(page, t, `attach-ring-${mode}`);
    await press(t, page, 'Shift+Tab', /textarea#compose-text/);
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
    await waitMessage(page, text);

    // Esc: the list; ↑ and k select, j comes back.
    await press(t, page, 'Escape', /div\.messages/);
    const selectedId = `document.querySelector('.msg.selected')?.dataset.id ?? null`;
    const before = await page.evaluate<string | null>(selectedId);
    await press(t, page, 'ArrowUp', /div\.messages/);
    await waitFor(page, `${selectedId} !== ${JSON.stringify(before)}`);
    const sel = () =>
      page.evaluate<string>(`document.querySelector('.msg.selected .content').textContent`);
    const first = await sel();
    // Each read once the selection has been drawn moved (read at once, it raced the drawing).
    const selIs = (text: string, is: boolean) =>
      waitFor(
        page,
        `(document.querySelector('.msg.selected .content')?.textContent === ${JSON.stringify(text)}) === ${is}`,
      );
    await press(t, page, 'k', /div\.messages/);
    await selIs(first, false);
    t.pass('k moved the selection');
    await press(t, page, 'j', /div\.messages/);
    await selIs(first, true);
    t.pass('j moved it back');
    await screenshot(page, t, `list-ring-${mode}`);

    // i: the selected message's actions; Enter on "Add a reaction": the picker; an emoji picked
    // by its name; the focus back on the button, Esc back to the list.
    await press(t, page, 'i', /button.*"Add a reaction"/);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.picker input:focus');
    await page.keyboard.type('tada');
    await waitFor(
      page,
      `document.querySelector('.picker-grid [role="option"]')?.getAttribute('aria-label') === 'tada'`,
    );
    await page.keyboard.press('Enter');
    await waitFor(page, `document.querySelector('.msg.selected .reactions .reaction') !== null`);
    t.pass('reacted');
    t.match(await focused(page), /button.*"Add a reaction"/, 'the picker gone, the focus back');
    t.ok(await ringShown(page), 'with its ring');
    await press(t, page, 'Escape', /div\.messages/);
    t.equal(await sel(), first, 'the same message still selected');

    // Settings, from the sidebar's button (Shift+Tab: the search field, then it), and back.
    await press(t, page, 'Shift+Tab', /input#search/);
    await press(t, page, 'Shift+Tab', /button.*"Settings"/);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.settings h3:has-text("Account")');
    await waitFor(page, `!!document.activeElement?.closest('.settings')`);
    t.match(await focused(page), /a\.nav-item.*Account/, 'Settings: the focus on its panel');
    t.ok(await ringShown(page), 'with its ring');
    await screenshot(page, t, `settings-ring-${mode}`);
    // Tab stays within it (a modal dialog).
    const inside: boolean[] = [];
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      inside.push(await page.evaluate<boolean>(`!!document.activeElement?.closest('.settings')`));
    }
    t.notOk(inside.includes(false), 'Tab stays in the settings');
    await page.keyboard.press('Escape');
    await waitFor(page, `document.querySelector('.settings') === null`);
    t.match(await focused(page), /button.*"Settings"/, 'closed: the focus back on its button');
    t.ok(await ringShown(page), 'with its ring');

    watch.assertClean(t, /WebSocket|status of 401/);
    await page.close();
  });
}

t.test('"Skip to messages": the first Tab stop, seen only when focused, to the list', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await waitMessage(page, 'third words');
  const skip = page.locator('.skip-link');
  const width = async () => (await skip.boundingBox())?.width ?? 0;
  t.ok((await width()) <= 1, 'out of sight while not focused');
  t.equal(await focused(page), 'body', 'the page as loaded: nothing focused');
  await press(t, page, 'Tab', /button\.skip-link "Skip to messages"/);
  t.ok((await width()) > 100, 'seen once focused');
  await screenshot(page, t, 'skip-link');
  // Without it, the sidebar's and the top bar's stops first: the sidebar's search is next.
  await press(t, page, 'Tab', /button.*"Jump to/);
  await press(t, page, 'Shift+Tab', /button\.skip-link/);
  await press(t, page, 'Enter', /div\.messages/);
  t.ok((await width()) <= 1, 'out of sight again');
  // The list's keys at once: ↑ selects the newest message (none was selected).
  t.equal(await page.locator('.msg.selected').count(), 0, 'no message selected yet');
  await page.keyboard.press('ArrowUp');
  await waitFor(
    page,
    `document.querySelector('.msg.selected') === [...document.querySelectorAll('.msg')].at(-1)`,
  );
  t.pass('the arrows select');
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();
});

t.test("a message's actions: one Tab stop, the arrows between them, Tab leaves", async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/general/topic/chat',
  });
  await waitMessage(page, 'third words');
  await page.click('#compose-text');
  await press(t, page, 'Escape', /div\.messages/);
  const selectedId = `document.querySelector('.msg.selected')?.dataset.id ?? null`;
  const before = await page.evaluate<string | null>(selectedId);
  await page.keyboard.press('ArrowUp');
  await waitFor(page, `${selectedId} !== ${JSON.stringify(before)}`);
  const stops = () =>
    page.evaluate<string[]>(
      `[...document.querySelectorAll('.msg.selected .msg-actions > button')].filter((b) => b.tabIndex === 0).map((b) => b.getAttribute('aria-label'))`,
    );
  t.same(await stops(), ['Add a reaction'], 'one Tab stop: the first action');
  await press(t, page, 'i', /"Add a reaction"/);
  await press(t, page, 'ArrowRight', /"Reply"/);
  await press(t, page, 'ArrowRight', /"Star"/);
  await press(t, page, 'ArrowLeft', /"Reply"/);
  // The last: the "⋮" (the menu of these and the others), after Copy link.
  await press(t, page, 'End', /msg-menu-btn "Message actions"/);
  await press(t, page, 'ArrowLeft', /"Copy a link to this message"/);
  await press(t, page, 'ArrowRight', /msg-menu-btn "Message actions"/);
  await press(t, page, 'ArrowRight', /"Add a reaction"/);
  await press(t, page, 'ArrowLeft', /msg-menu-btn "Message actions"/);
  await press(t, page, 'Home', /"Add a reaction"/);
  await press(t, page, 'ArrowRight', /"Reply"/);
  t.same(await stops(), ['Reply'], 'the Tab stop moved with the focus');
  await screenshot(page, t, 'toolbar-arrows');
  // Tab leaves the toolbar (not on to its next button); Shift+Tab comes back to where it was.
  await page.keyboard.press('Tab');
  t.notOk(
    await page.evaluate(`!!document.activeElement?.closest('.msg-actions')`),
    `Tab: out of the toolbar (${await focused(page)})`,
  );
  await press(t, page, 'Shift+Tab', /"Reply"/);
  // Esc to the list, `i` again: the action last focused.
  await press(t, page, 'Escape', /div\.messages/);
  await press(t, page, 'i', /"Reply"/);
  // Enter on Star: it says Unstar now, and the focus stays on it (it fell to the page's body as
  // the button was drawn anew for its new label); Enter again, Star, the focus still there.
  await press(t, page, 'ArrowRight', /"Star"/);
  for (const [now, was] of [
    ['Unstar', 'Star'],
    ['Star', 'Unstar'],
  ] as const) {
    await page.keyboard.press('Enter');
    await page.waitForSelector(`.msg.selected .msg-actions > button[aria-label="${now}"]`);
    t.match(await focused(page), new RegExp(`"${now}"`), `Enter on ${was}: the focus on ${now}`);
    t.ok(await ringShown(page), `${now} shows a focus ring`);
  }
  t.same(await stops(), ['Star'], 'the Tab stop on it');
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();
});

t.test('390: the "⋮" of the selected message by i, a reaction from its menu', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/general/topic/chat',
    width: 390,
    height: 844,
  });
  await waitMessage(page, 'third words');
  await page.click('#compose-text');
  await press(t, page, 'Escape', /div\.messages/);
  await press(t, page, 'ArrowUp', /div\.messages/);
  await press(t, page, 'i', /button.*"Message actions"/);
  await page.keyboard.press('Enter');
  t.match(await focused(page), /"Add a reaction"/, 'its menu, at its first action');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.picker input:focus');
  await page.keyboard.type('octopus');
  await waitFor(
    page,
    `document.querySelector('.picker-grid [role="option"]')?.getAttribute('aria-label') === 'octopus'`,
  );
  await page.keyboard.press('Enter');
  await waitFor(page, `document.querySelector('.picker') === null`);
  t.match(await focused(page), /button.*"Message actions"/, 'the focus back on the "⋮"');
  await press(t, page, 'Escape', /div\.messages/);
  await screenshot(page, t, 'reacted-390');
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();
});

t.test('the selection on a message being sent stays on it when the server has it', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/general/topic/chat',
  });
  await waitMessage(page, 'third words');
  // The send held back until the echo is selected: the server's copy (another id) comes after.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let asked = false;
  await page.route(
    (u) => u.pathname === '/json/messages',
    async (route) => {
      if (route.request().method() === 'POST') {
        asked = true;
        await held;
      }
      await route.continue();
    },
  );
  await page.click('#compose-text');
  await page.keyboard.type('held back a moment');
  await page.keyboard.press('Enter');
  await waitMessage(page, 'held back a moment');
  await press(t, page, 'Escape', /div\.messages/);
  await press(t, page, 'ArrowUp', /div\.messages/);
  const selected = `document.querySelector('.msg.selected')`;
  await waitFor(page, `${selected}?.textContent.includes('held back a moment')`);
  t.ok(asked, 'sent, not answered yet');
  const echoId = await page.evaluate<string>(`${selected}.dataset.id`);
  release();
  // The echo gives way to the server's message: the selection goes with it.
  await waitFor(page, `!document.querySelector('.msg[data-id="${echoId}"]')`);
  await waitFor(page, `${selected}?.textContent.includes('held back a moment')`);
  t.not(await page.evaluate<string>(`${selected}.dataset.id`), echoId, "the server's message");
  await press(t, page, 'k', /div\.messages/);
  await waitFor(page, `${selected}?.textContent.includes('third words')`);
  t.pass('k moves up from it');
  await page.unrouteAll();
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();
});
