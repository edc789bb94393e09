/**
 * The web app in chromium: a message's actions come and go without moving anything. Hovering
 * or selecting a message (its toolbar shown) leaves every message where it was, so that a click
 * or tap aimed at the next message lands on it, not on the toolbar; at 1280 pixels the toolbar
 * sits over the message's top right, within its row even of one line, at 390 a "⋮" in a column
 * of the message's own (covering none of its text) opens a menu of the same actions (as the
 * reference's message actions popover): by touch and by keyboard, over its button where there is
 * no room under it. After a click or tap elsewhere (a dialog's Cancel) or keys that move the
 * selection, the toolbar shown is the selected message's, not that of the one under the resting
 * pointer, until the mouse moves. A long message's text (its first line running the full width)
 * never lies under its toolbar, at 1280 as at 390: the first line keeps the toolbar's room free.
 * Light and dark.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitLive, waitMessage } from '../helpers/app.js';
import { fillLogin, NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

let general: number;
const ids: number[] = [];

const { b, ts, channels } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'othello', members: ['hamlet', 'othello'] } },
  seed,
});

async function seed(): Promise<void> {
  general = channels.general;
  // Before them, enough to fill a phone's screen (the last message's menu has no room under it).
  for (let i = 1; i <= 14; i++)
    await sendChannelMessage(ts.api, 'othello', 'general', 'review', `note ${i}`);
  const texts: [string, string][] = [
    ['othello', 'Where shall we meet for the review of the quarterly numbers this week?'],
    ['hamlet', 'In the small room.'],
    ['hamlet', 'ok'],
    ['hamlet', 'Bring the printouts, and the long version of the slides, please.'],
    ['othello', 'Will do.'],
    ['othello', 'See you'],
  ];
  for (const [who, text] of texts)
    ids.push(await sendChannelMessage(ts.api, who, 'general', 'review', text));
  // All read: the view opens at the newest message, with nothing below it to scroll to.
  await ts.api.post('hamlet', 'mark_all_as_read', {});
}

const hash = () => `#narrow/channel/${general}-general/topic/review`;

type Box = { left: number; top: number; right: number; bottom: number };

/** Every message's box, in order, in the list's scrolled content (a scroll is no move). */
function rows(page: Page): Promise<Box[]> {
  return page.evaluate(`(() => {
    const list = document.querySelector('.messages');
    const y = list.getBoundingClientRect().top - list.scrollTop;
    return [...document.querySelectorAll('.msg')].map((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, top: r.top - y, right: r.right, bottom: r.bottom - y };
    });
  })()`);
}

/** The boxes of the text (sender, time, content) of the message `id`. */
function textBoxes(page: Page, id: number): Promise<Box[]> {
  return page.evaluate(`(() => {
    const row = document.querySelector('.msg[data-id="${id}"]');
    const out = [];
    for (const el of row.querySelectorAll('.sender, .msg-time, .content')) {
      const range = document.createRange();
      range.selectNodeContents(el);
      for (const r of range.getClientRects())
        if (r.width > 0) out.push({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });
    }
    return out;
  })()`);
}

function box(page: Page, selector: string): Promise<Box | null> {
  return page.evaluate(`(() => {
    const el = document.querySelector(${JSON.stringify(selector)});
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  })()`);
}

const over = (a: Box, b: Box) =>
  a.left < b.right - 0.5 &&
  b.left < a.right - 0.5 &&
  a.top < b.bottom - 0.5 &&
  b.top < a.bottom - 0.5;

for (const width of [390, 1280]) {
  for (const dark of [false, true]) {
    const mode = `${width}-${dark ? 'dark' : 'light'}`;
    t.test(
      `${mode}: the actions move nothing; a click aimed at the next message lands on it`,
      async (t) => {
        if (NO_CHROMIUM) return;
        const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
          hash: hash(),
          width,
          height: width === 390 ? 844 : 800,
          dark,
        });
        await waitMessage(page, 'See you');
        await page.mouse.move(width / 2, 10); // off the list
        await page.evaluate(`document.activeElement?.blur()`);
        await waitFor(page, `document.querySelector('.msg-actions') === null`);
        const still = await rows(page);

        // Hovering each message, then selecting it: nothing moves.
        for (const [i, id] of ids.entries()) {
          const row = page.locator(`.msg[data-id="${id}"]`);
          await row.hover();
          await row.locator('.msg-actions').waitFor();
          t.same(await rows(page), still, `hovering message ${i}: nothing moved`);
        }
        await page.mouse.move(width / 2, 10);

        // The short message "ok" selected (a click on it, as a tap), then a click aimed at the
        // message under it, where it was before: it is that message that is selected.
        const [ok, next] = [ids[2]!, ids[3]!];
        const aim = (await box(page, `.msg[data-id="${next}"] .content`))!;
        await page.locator(`.msg[data-id="${ok}"] .content`).click();
        await page.waitForSelector(`.msg.selected[data-id="${ok}"] .msg-actions`);
        t.same(await rows(page), still, 'selecting a message: nothing moved');
        await screenshot(page, t, `selected-${mode}`);
        const x = aim.left + 12;
        const y = aim.top + 6;
        const hit = await page.evaluate(
          `document.elementFromPoint(${x}, ${y})?.closest('.msg')?.dataset.id`,
        );
        t.equal(hit, String(next), 'the point aimed at is on the next message');
        await page.mouse.click(x, y);
        await page.waitForSelector(`.msg.selected[data-id="${next}"]`);
        t.equal(
          await page.locator('.picker, [role="alertdialog"], [role="menu"]').count(),
          0,
          'nothing opened',
        );
        t.same(await rows(page), still, 'and nothing moved');

        // The toolbar (or its "⋮") stays within its message's row, even a row of one short line
        // ("ok"): a click or tap on the next message, its top right too, cannot land on it. At
        // 390 it covers none of the selected message's text, nor the sender's line of the message
        // that starts a group.
        for (const id of [ok, next, ids[0]!]) {
          await page.locator(`.msg[data-id="${id}"] .content`).click();
          // The selection drawn before its toolbar is measured (the last one's is still shown).
          await page.waitForSelector(`.msg.selected[data-id="${id}"] .msg-actions`);
          const bar = (await box(page, `.msg.selected[data-id="${id}"] .msg-actions`))!;
          const row = (await box(page, `.msg[data-id="${id}"]`))!;
          const which = `message ${ids.indexOf(id)}`;
          t.ok(bar.top >= row.top && bar.bottom <= row.bottom + 0.5, `${which}: within its row`);
          if (width === 390) {
            const covered = (await textBoxes(page, id)).filter((r) => over(r, bar));
            t.same(covered, [], `${which}: its "⋮" covers no text`);
          }
        }
        await page.locator(`.msg[data-id="${ok}"] .content`).click();
        await page.waitForSelector(`.msg.selected[data-id="${ok}"] .msg-actions`);
        await screenshot(page, t, `ok-selected-${mode}`);
        const under = (await box(page, `.msg[data-id="${next}"]`))!;
        const corner = await page.evaluate(
          `document.elementFromPoint(${under.right - 24}, ${under.top + 2})?.closest('.msg')?.dataset.id`,
        );
        t.equal(corner, String(next), "the next message's top right is the next message's");
        watch.assertClean(t, /WebSocket|status of 401/);
      },
    );
  }
}

t.test(
  'after a click or keys, the toolbar follows the selection until the pointer moves',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: hash() });
    await waitMessage(page, 'See you');
    /** The ids of the messages whose toolbar shows. */
    const shown = (): Promise<number[]> =>
      page.evaluate(`[...document.querySelectorAll('.msg')]
      .filter((m) => { const a = m.querySelector('.msg-actions'); return a && getComputedStyle(a).display !== 'none'; })
      .map((m) => Number(m.dataset.id))`);
    const [first, mine] = [ids[1]!, ids[3]!];

    // Clicked, then ↓ twice: the pointer rests on the message clicked, the selection moved on.
    await page.locator(`.msg[data-id="${first}"] .content`).click();
    await page.waitForSelector(`.msg.selected[data-id="${first}"]`);
    t.same(await shown(), [first], 'the message clicked');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.waitForSelector(`.msg.selected[data-id="${mine}"]`);
    t.same(await shown(), [mine], 'keys: the selected message, not the one under the pointer');
    await screenshot(page, t, 'keys-1280');

    // Delete asked (the mouse on the selected message) and cancelled: the pointer rests where
    // Cancel was, over another message.
    await page.locator(`.msg[data-id="${mine}"] .content`).hover();
    await page.click(`.msg.selected[data-id="${mine}"] button[aria-label="Delete"]`);
    const question = page.getByRole('alertdialog', { name: 'Delete this message?' });
    const cancel = question.getByRole('button', { name: 'Cancel' });
    const c = (await cancel.boundingBox())!;
    const [x, y] = [c.x + c.width / 2, c.y + c.height / 2];
    const beneath = Number(
      await page.evaluate(
        `document.elementsFromPoint(${x}, ${y}).find((e) => e.matches('.msg'))?.dataset.id`,
      ),
    );
    t.ok(beneath && beneath !== mine, 'Cancel is over another message');
    await page.mouse.click(x, y);
    await question.waitFor({ state: 'detached' });
    await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))`);
    t.same(await shown(), [mine], 'cancelled: the selected message, not the one under the pointer');
    await screenshot(page, t, 'cancelled-1280');

    // The mouse moved: the message under it shows its toolbar, as hovering does (the selected
    // one's too while the focus is in it: back on its Delete button).
    await page.mouse.move(x + 5, y + 1);
    await waitFor(page, `document.querySelector('.msg:hover') !== null`);
    const hovered = Number(await page.evaluate(`document.querySelector('.msg:hover').dataset.id`));
    t.ok((await shown()).includes(hovered), 'moved: the hovered message');
    watch.assertClean(t, /WebSocket|status of 401/);
    await page.close();
  },
);

t.test(
  '390, by touch: after a tap on a dialog, the "⋮" shown is the selected one\'s',
  async (t) => {
    if (NO_CHROMIUM) return;
    const page = await b.newPage({ viewport: { width: 390, height: 844 }, hasTouch: true });
    const watch = await watchPage(page);
    await page.goto(ts.url + '/' + hash());
    const user = ts.fx.users.hamlet!;
    await fillLogin(page, user.email, user.password);
    await waitLive(page);
    await waitMessage(page, 'See you');
    const shown = (): Promise<number[]> =>
      page.evaluate(`[...document.querySelectorAll('.msg')]
      .filter((m) => { const a = m.querySelector('.msg-menu-btn'); return a && a.getClientRects().length > 0; })
      .map((m) => Number(m.dataset.id))`);
    const mine = ids[3]!;
    await page.locator(`.msg[data-id="${mine}"] .content`).tap();
    await page.waitForSelector(`.msg.selected[data-id="${mine}"]`);
    await page.locator(`.msg[data-id="${mine}"] .msg-menu-btn`).tap();
    await page.getByRole('menuitem', { name: 'Delete' }).tap();
    const question = page.getByRole('alertdialog', { name: 'Delete this message?' });
    const cancel = question.getByRole('button', { name: 'Cancel' });
    const c = (await cancel.boundingBox())!;
    const [x, y] = [c.x + c.width / 2, c.y + c.height / 2];
    const beneath = Number(
      await page.evaluate(
        `document.elementsFromPoint(${x}, ${y}).find((e) => e.matches('.msg'))?.dataset.id`,
      ),
    );
    t.ok(beneath && beneath !== mine, 'Cancel is over another message');
    await page.touchscreen.tap(x, y);
    await question.waitFor({ state: 'detached' });
    await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))`);
    t.same(await shown(), [mine], 'the selected message\'s "⋮" only');
    await screenshot(page, t, 'tap-cancelled-390');
    watch.assertClean(t, /WebSocket|status of 401/);
    await page.close();
  },
);

t.test('390: the actions in the menu of a "⋮", by touch and by keyboard', async (t) => {
  if (NO_CHROMIUM) return;
  for (const dark of [false, true]) {
    const mode = dark ? 'dark' : 'light';
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: hash(),
      width: 390,
      height: 844,
      dark,
    });
    await waitMessage(page, 'See you');
    const mine = ids[3]!;
    await page.locator(`.msg[data-id="${mine}"] .content`).click();
    const toolbar = page.locator(`.msg.selected[data-id="${mine}"] .msg-actions`);
    await toolbar.waitFor(); // the selection drawn, before its buttons are counted
    t.equal(await toolbar.getByRole('button').count(), 1, `${mode}: one button shows, the "⋮"`);
    const more = toolbar.getByRole('button', { name: 'Message actions' });
    await more.click();
    const menu = page.getByRole('menu', { name: 'Message actions' });
    await menu.waitFor();
    t.same(
      await menu.getByRole('menuitem').allTextContents(),
      [
        'Add a reaction',
        'Reply',
        'Quote and reply',
        'Star',
        'Edit',
        'Delete',
        'Mark as unread from here',
        'Copy link',
      ],
      'its actions (and those of the menu alone: app-message-menu.test.ts)',
    );
    t.equal(
      await page.evaluate(`document.activeElement?.textContent`),
      'Add a reaction',
      'the first has the focus',
    );
    await page.waitForTimeout(200);
    await screenshot(page, t, `menu-390-${mode}`);
    const m = (await box(page, '.msg-menu-list'))!;
    const list = (await box(page, '.messages'))!;
    t.ok(m.bottom <= list.bottom && m.top >= list.top, 'the menu is within the list');

    // Delete asks first; declined, nothing happens.
    await menu.getByRole('menuitem', { name: 'Delete' }).click();
    const question = page.getByRole('alertdialog', { name: 'Delete this message?' });
    await question.waitFor();
    await question.getByRole('button', { name: 'Cancel' }).click();
    await question.waitFor({ state: 'detached' });
    t.equal(await page.locator(`.msg[data-id="${mine}"]`).count(), 1, 'declined: still there');

    // By keyboard: Enter opens it, ↓ moves, Enter acts (Star), Esc closes back to the "⋮".
    await more.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    t.equal(await page.evaluate(`document.activeElement?.textContent`), 'Star', '↓ ↓ ↓: Star');
    await page.keyboard.press('Enter');
    await menu.waitFor({ state: 'detached' });
    await waitFor(
      page,
      `document.querySelector('.msg[data-id="${mine}"] .msg-actions [aria-pressed="true"]') !== null`,
    );
    t.pass('starred');
    await page.keyboard.press('Enter');
    await menu.waitFor();
    t.equal(
      await menu.getByRole('menuitem').nth(3).textContent(),
      'Unstar',
      'the menu says Unstar now',
    );
    await page.keyboard.press('End');
    t.equal(await page.evaluate(`document.activeElement?.textContent`), 'Copy link', 'End');
    await page.keyboard.press('ArrowDown');
    t.equal(await page.evaluate(`document.activeElement?.textContent`), 'Add a reaction', 'round');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.picker input:focus');
    t.pass('Add a reaction: the picker, its field focused');
    await page.keyboard.press('Escape');
    await waitFor(page, `document.querySelector('.picker') === null`);
    // The pointer off the list: the message under the last click (the picker's place) would be
    // hovered, its toolbar shown instead of the selected one's.
    await page.mouse.move(200, 20);
    await more.click();
    await menu.getByRole('menuitem', { name: 'Unstar' }).click();
    await waitFor(
      page,
      `document.querySelector('.msg[data-id="${mine}"] .msg-actions [aria-pressed="true"]') === null`,
    );
    await more.click();
    await menu.waitFor();
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    t.ok(await more.evaluate((el) => el === el.ownerDocument.activeElement), 'Esc: back on the ⋮');

    // The last message's menu, with no room under it, opens over its button.
    const last = ids.at(-1)!;
    await page.evaluate(`(() => {
      const list = document.querySelector('.messages');
      list.scrollTop = list.scrollHeight;
    })()`);
    await page.waitForTimeout(200);
    await page.locator(`.msg[data-id="${last}"] .content`).click();

    await page
      .locator(`.msg.selected[data-id="${last}"]`)
      .getByRole('button', { name: 'Message actions' })
      .click();
    await menu.waitFor();
    const up = (await box(page, '.msg-menu-list'))!;
    const button = (await box(page, `.msg[data-id="${last}"] .msg-menu-btn`))!;
    const area = (await box(page, '.messages'))!;
    t.ok(up.bottom <= button.top + 1, 'over its button');
    t.ok(up.top >= area.top && up.bottom <= area.bottom, 'within the list');
    await screenshot(page, t, `menu-up-390-${mode}`);
    watch.assertClean(t, /WebSocket|status of 401/);
    await page.close();
  }
});

/**
 * The boxes of the text itself of the message `id` (its sender's line and its content): a box
 * per line of each text node (a range over an element's contents has the element's box too).
 */
function lineBoxes(page: Page, id: number): Promise<Box[]> {
  return page.evaluate(`(() => {
    const row = document.querySelector('.msg[data-id="${id}"]');
    const out = [];
    for (const el of row.querySelectorAll('.msg-head, .content')) {
      const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (!n.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        for (const r of range.getClientRects())
          if (r.width > 0) out.push({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });
      }
    }
    return out;
  })()`);
}

// Long enough that the first line runs the full width, and the lines under it too.
const LONG =
  'The quarterly numbers are in and they are better than we feared: the north and the south ' +
  'both grew, the east held, and the west is where we lost what we lost, so the review should ' +
  'start there and stay there until we know why, and then move on to the plans for next year.';

for (const width of [1280, 390]) {
  t.test(`${width}: a long message's text never lies under its toolbar`, async (t) => {
    if (NO_CHROMIUM) return;
    const long: [string, string][] = [
      ['hamlet', LONG], // the first of a group (the sender's line), one's own: every button
      ['hamlet', `Again: ${LONG}`], // its first line is the text
      ['hamlet', `> ${LONG}\n\nAnd so on.`], // a quote first
      ['othello', LONG], // another's: fewer buttons
      ['othello', `Also: ${LONG}`],
    ];
    const mine: number[] = [];
    for (const [who, text] of long)
      mine.push(await sendChannelMessage(ts.api, who, 'general', `long ${width}`, text));
    // Read: the view opens at the newest, with no "Jump to the newest" over the messages.
    await ts.api.post('hamlet', 'mark_all_as_read', {});
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${general}-general/topic/long ${width}`,
      width,
      height: width === 390 ? 844 : 800,
    });
    await waitMessage(page, 'Also: ');
    await page.mouse.move(width / 2, 10);
    await waitFor(page, `document.querySelector('.msg-actions') === null`);
    for (const [i, id] of mine.entries()) {
      const row = page.locator(`.msg[data-id="${id}"]`);
      await page.evaluate(
        `document.querySelector('.msg[data-id="${id}"]').scrollIntoView({ block: 'center' })`,
      );
      const still = await rows(page);
      await row.locator('.content').hover({ position: { x: 8, y: 8 } });
      await row.locator('.msg-actions').waitFor();
      const bar = (await box(page, `.msg[data-id="${id}"] .msg-actions`))!;
      const text = await lineBoxes(page, id);
      t.same(
        text.filter((r) => over(r, bar)),
        [],
        `message ${i}: no text under the toolbar`,
      );
      if (width === 1280)
        t.ok(
          text.some((r) => r.right > bar.left + 1),
          `message ${i}: its lines under the first run under the toolbar's column (it is long)`,
        );
      t.same(await rows(page), still, `message ${i}: hovering it moved nothing`);
      if (i <= 1) await screenshot(page, t, `long-hovered-${i}-${width}`);
    }
    watch.assertClean(t, /WebSocket|status of 401/);
    await page.close();
  });
}
