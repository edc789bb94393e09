/**
 * The web app in chromium with the real server: the message menu's reading and follow-up items,
 * each where the reference's rules put it — "Quote and reply" on every message, "Mark as unread
 * from here" on messages read, "View original message" on those the user cannot edit, "View edit
 * history" on edited or moved ones as the organization's policy allows (all, moves only, none),
 * "View read receipts" where the organization turned them on. Quoting fills the compose box with
 * the quote (a longer fence round a fenced message), also by `>`; marking unread from a message
 * makes the channel's count go up and stay until the user scrolls; the edit history lists the
 * versions after two edits and a topic move, also from the "(edited)" label; the read receipts
 * list who read the message (another account logged in, reading it), not one who keeps it to
 * themselves. The menu and the dialogs are checked by axe at 1280 and 390 pixels (the history
 * dark too).
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { check as checkA11y } from '../helpers/a11y.js';
import { createByApi, type NewAccount } from '../helpers/accounts.js';
import { openApp, sidebarCount, waitCount, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { setRealmSettings } from '../helpers/channels.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

let general: number;
/** Othello's, never edited; Hamlet's, edited; Othello's, moved; Hamlet's, edited twice and moved. */
let plain: number, edited: number, moved: number, versions: number;
/** Othello's code block, to be quoted; the last messages, to be marked unread. */
let fenced: number;
const tail: number[] = [];
let reader: NewAccount;
let quiet: NewAccount;

async function ok(res: Promise<{ status: number; text: string }>, what: string): Promise<void> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what}: ${r.text}`);
}

const { b, ts, channels } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'othello', members: ['hamlet', 'othello', 'iago'] } },
  seed,
});

async function seed(): Promise<void> {
  general = channels.general;
  const send = (who: string, topic: string, text: string) =>
    sendChannelMessage(ts.api, who, 'general', topic, text);
  plain = await send('othello', 'review', 'Plain words from Othello.');
  edited = await send('hamlet', 'review', 'A first draft.');
  await ok(ts.api.patch('hamlet', `messages/${edited}`, { content: 'A second draft.' }), 'edit');
  moved = await send('othello', 'review', 'This one goes elsewhere.');
  await ok(
    ts.api.patch('iago', `messages/${moved}`, { topic: 'elsewhere', propagate_mode: 'change_one' }),
    'move',
  );
  versions = await send('hamlet', 'review', 'Version one of the plan.');
  await ok(
    ts.api.patch('hamlet', `messages/${versions}`, { content: 'Version two of the plan.' }),
    'edit',
  );
  await ok(
    ts.api.patch('hamlet', `messages/${versions}`, { content: 'Version three of the big plan.' }),
    'edit',
  );
  await ok(
    ts.api.patch('iago', `messages/${versions}`, { topic: 'plans', propagate_mode: 'change_one' }),
    'move',
  );
  fenced = await send('othello', 'review', 'Look:\n```\nx = 1\n```');
  for (let i = 1; i <= 3; i++) tail.push(await send('othello', 'review', `Tail note ${i}`));
  // Two more accounts: one reads and lets it be known, one reads and keeps it to themselves.
  reader = await createByApi(t, ts.api, 'zelda@zulip.com', 'Zelda Reader');
  quiet = await createByApi(t, ts.api, 'quinn@zulip.com', 'Quinn Quiet');
  for (const who of [reader, quiet])
    await ok(
      ts.api.post(who, 'users/me/subscriptions', { subscriptions: [{ name: 'general' }] }),
      'join',
    );
  await ok(ts.api.patch(quiet, 'settings', { send_read_receipts: false }), 'quiet');
  await ok(ts.api.post('hamlet', 'mark_all_as_read', {}), 'read');
}

const channelHash = () => `#narrow/channel/${general}-general`;

/** Opens the page after the organization's settings are as given (register reads them). */
async function open(
  policy: 'all' | 'moves' | 'none',
  receipts: boolean,
  width = 1280,
  dark = false,
): Promise<Page> {
  setRealmSettings(ts, {
    message_edit_history_visibility_policy: policy,
    allow_edit_history: policy !== 'none',
    enable_read_receipts: receipts,
  });
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: channelHash(),
    width,
    height: width === 390 ? 844 : 800,
    dark,
  });
  await waitMessage(page, 'Tail note 3');
  return page;
}

/** Opens a message's "⋮" menu (the message under the pointer). */
async function openMenu(page: Page, id: number): Promise<void> {
  const row = page.locator(`.msg[data-id="${id}"]`);
  await row.scrollIntoViewIfNeeded();
  await row.hover();
  await row.locator('.msg-menu-btn').click();
  await row.locator('.msg-menu-list').waitFor();
}

/** The labels of a message's menu, the menu closed again. */
async function menuItems(page: Page, id: number): Promise<string[]> {
  await openMenu(page, id);
  const row = page.locator(`.msg[data-id="${id}"]`);
  const items = await row.locator('.msg-menu-list [role="menuitem"]').allTextContents();
  await page.keyboard.press('Escape');
  await row.locator('.msg-menu-list').waitFor({ state: 'detached' });
  return items;
}

async function choose(page: Page, id: number, label: string): Promise<void> {
  await openMenu(page, id);
  await page
    .locator(`.msg[data-id="${id}"] .msg-menu-list [role="menuitem"]`, { hasText: label })
    .click();
}

const READING = [
  'Quote and reply',
  'Mark as unread from here',
  'View original message',
  'View edit history',
  'View read receipts',
];
const reading = (items: string[]) => items.filter((x) => READING.includes(x));

t.test('each item where its rule puts it', async (t) => {
  if (NO_CHROMIUM) return;
  let page = await open('all', true);
  t.same(
    reading(await menuItems(page, plain)),
    ['Quote and reply', 'Mark as unread from here', 'View original message', 'View read receipts'],
    "another's message, never edited: its Markdown to view, no history",
  );
  t.same(
    reading(await menuItems(page, edited)),
    ['Quote and reply', 'Mark as unread from here', 'View edit history', 'View read receipts'],
    'an own message, edited: editable (no original to view), its history',
  );
  t.ok((await menuItems(page, edited)).includes('Edit'), 'its Edit, as before');
  t.same(
    reading(await menuItems(page, moved)),
    [
      'Quote and reply',
      'Mark as unread from here',
      'View original message',
      'View edit history',
      'View read receipts',
    ],
    'a moved message: its history',
  );
  t.equal(
    await page.locator(`.msg[data-id="${edited}"] button.edited`).count(),
    1,
    '"(edited)" is a button',
  );
  // The label is a Tab stop in the selected message only (as its mentions).
  const labelTab = (id: number) =>
    page.locator(`.msg[data-id="${id}"] button.edited`).getAttribute('tabindex');
  t.equal(await labelTab(edited), '-1', 'not selected: no Tab stop');
  await page.locator(`.msg[data-id="${edited}"] .content`).click();
  await page.waitForSelector(`.msg.selected[data-id="${edited}"]`);
  t.equal(await labelTab(edited), '0', 'selected: a Tab stop');
  // By keyboard: `i` into the toolbar, End to its "⋮", Enter opens the menu at its first item.
  await page.locator('.messages').focus();
  await page.keyboard.press('i');
  await page.keyboard.press('End');
  t.equal(
    await page.evaluate(`document.activeElement?.getAttribute('aria-label')`),
    'Message actions',
    'End: the "⋮"',
  );
  await page.keyboard.press('Enter');
  await page.locator(`.msg[data-id="${edited}"] .msg-menu-list`).waitFor();
  t.equal(
    await page.evaluate(`document.activeElement?.textContent`),
    'Add a reaction',
    'its first item focused',
  );
  await page.keyboard.press('Escape');
  await page.locator(`.msg[data-id="${edited}"] .msg-menu-list`).waitFor({ state: 'detached' });
  await openMenu(page, plain);
  await screenshot(page, t, 'menu-1280');
  await checkA11y(t, page, 'message-menu-1280');
  await page.keyboard.press('Escape');
  await page.close();

  // On a phone the "⋮" alone, its menu the same.
  page = await open('all', true, 390);
  t.same(
    reading(await menuItems(page, plain)),
    ['Quote and reply', 'Mark as unread from here', 'View original message', 'View read receipts'],
    '390: the same items',
  );
  await openMenu(page, plain);
  await screenshot(page, t, 'menu-390');
  await checkA11y(t, page, 'message-menu-390');
  await page.close();

  page = await open('moves', false);
  t.same(
    reading(await menuItems(page, edited)),
    ['Quote and reply', 'Mark as unread from here'],
    'moves only: no history of an edit; receipts off: none',
  );
  t.ok(reading(await menuItems(page, moved)).includes('View edit history'), 'moves: a move has it');
  t.equal(
    await page.locator(`.msg[data-id="${edited}"] button.edited`).count(),
    0,
    'moves: "(edited)" opens nothing',
  );
  t.equal(await page.locator(`.msg[data-id="${moved}"] button.edited`).count(), 1);
  await page.close();

  page = await open('none', true);
  t.notOk(reading(await menuItems(page, moved)).includes('View edit history'), 'none: no history');
  t.notOk(reading(await menuItems(page, edited)).includes('View edit history'));
  t.equal(await page.locator('.msg button.edited').count(), 0, 'none: no label opens it');
  await page.close();
});

t.test('Quote and reply, by the menu and by >', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await open('all', true);
  await choose(page, plain, 'Quote and reply');
  const area = page.locator('.compose textarea');
  await waitFor(page, `document.querySelector('.compose textarea')?.value.includes('said')`);
  const value = await area.inputValue();
  const othello = ts.fx.users['othello']!.id;
  t.match(
    value,
    new RegExp(
      `^@_\\*\\*Othello\\|${othello}\\*\\* \\[said\\]\\(http[^)]+/near/${plain}\\):\\n\`\`\`quote\\nPlain words from Othello\\.\\n\`\`\`\\n$`,
    ),
    'a silent mention, a link "said" to the message, its Markdown in a quote block',
  );
  t.ok(
    await page.evaluate(`document.activeElement === document.querySelector('.compose textarea')`),
    'the box has the focus',
  );
  t.same(
    await page.evaluate(
      `(() => { const el = document.querySelector('.compose textarea'); return [el.selectionStart, el.selectionEnd]; })()`,
    ),
    [value.length, value.length],
    'the cursor after the quote',
  );
  t.equal(await page.locator('#compose-topic').inputValue(), 'review', 'to the message’s topic');

  // `>` on the selected message: its fenced code inside a longer fence, after the draft.
  await page.locator(`.msg[data-id="${fenced}"] .content`).click();
  await page.waitForSelector(`.msg.selected[data-id="${fenced}"]`);
  await page.locator('.messages').focus();
  await page.keyboard.press('>');
  await waitFor(page, `document.querySelector('.compose textarea')?.value.includes('x = 1')`);
  const both = await area.inputValue();
  t.ok(both.startsWith(value.trimEnd() + '\n\n'), 'after what the box had');
  t.match(both, /\n````quote\nLook:\n```\nx = 1\n```\n````\n$/, 'a fence longer than its own');
  await area.fill('');
  await page.close();
});

t.test(
  'a direct message quoted: its link opens the conversation for the other one too',
  async (t) => {
    if (NO_CHROMIUM) return;
    // Hamlet quotes Othello's direct message; Othello follows the "said" link at 390 px. A link
    // naming the conversation by the others only (`<othello>-Othello`, as Hamlet's view is named)
    // opened, for Othello, his conversation with himself: "No messages here yet".
    const hamlet = ts.fx.users['hamlet']!.id;
    const othello = ts.fx.users['othello']!.id;
    const asked = await sendDirectMessage(
      ts.api,
      'othello',
      [hamlet],
      'Can you check the figures?',
    );
    const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/dm/${othello}-Othello`,
    });
    await waitMessage(page, 'Can you check the figures?');
    await choose(page, asked, 'Quote and reply');
    const area = page.locator('.compose textarea');
    await waitFor(page, `document.querySelector('.compose textarea')?.value.includes('said')`);
    const [lo, hi] = [hamlet, othello].sort((a, b) => a - b);
    t.match(
      await area.inputValue(),
      new RegExp(`\\[said\\]\\(http[^)]+/#narrow/dm/${lo},${hi}-dm/near/${asked}\\)`),
      "the link names both people, as the reference's permalinks",
    );
    await area.press('End');
    await page.keyboard.type('Checked, they add up.');
    await page.keyboard.press('Enter');
    await waitMessage(page, 'Checked, they add up.');
    await page.close();

    const other = await openApp(b, ts.url, ts.fx, 'othello', {
      hash: `#narrow/dm/${hamlet}-Hamlet`,
      width: 390,
      height: 844,
    });
    await waitMessage(other.page, 'Checked, they add up.');
    await other.page.locator('.msg .content a', { hasText: 'said' }).last().click();
    await waitFor(other.page, `location.hash.endsWith('/near/${asked}')`);
    await other.page.waitForSelector(`.msg[data-id="${asked}"]`);
    t.equal(
      (await other.page.textContent('h1.title'))?.trim(),
      'Hamlet',
      'Othello sees his conversation with Hamlet, at the message quoted',
    );
    t.notOk(await other.page.isVisible('.messages .empty'), 'not an empty conversation');
    await screenshot(other.page, t, 'quote-link-dm-opened-390');
    await other.page.close();
  },
);

t.test('Mark as unread from here: the count goes up and stays', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await open('all', true);
  t.equal(await sidebarCount(page, 'general'), 0, 'all read to begin with');
  await choose(page, tail[0]!, 'Mark as unread from here');
  await waitCount(page, 'general', 3);
  // A message coming in meanwhile, drawn, and two frames for the list's reading to have acted:
  // nothing is read again, the new one neither.
  await sendChannelMessage(ts.api, 'othello', 'general', 'review', 'Tail note 4');
  await waitMessage(page, 'Tail note 4');
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))`);
  t.equal(await sidebarCount(page, 'general'), 4, 'still unread in the view');
  t.equal(
    await page.locator('.msg.unread').count(),
    4,
    'the rows drawn unread: the three marked and the new one',
  );
  const flags = await ts.api.get('hamlet', `messages/${tail[0]}`);
  t.notOk(
    (flags.body.message as { flags: string[] }).flags.includes('read'),
    'unread on the server',
  );
  // Scrolling reads them again, as the reference.
  await page.locator('.messages').hover();
  await page.mouse.wheel(0, 400);
  await waitCount(page, 'general', 0);
  t.pass('read again once scrolled');

  // By the keyboard: Shift+U on the selected message.
  await page.locator(`.msg[data-id="${tail[1]}"] .content`).click();
  await page.waitForSelector(`.msg.selected[data-id="${tail[1]}"]`);
  await page.locator('.messages').focus();
  await page.keyboard.press('Shift+U');
  await waitCount(page, 'general', 3);
  t.pass('Shift+U: from the selected message on');
  await page.close();
  await ok(ts.api.post('hamlet', 'mark_all_as_read', {}), 'read');
});

async function historyCheck(t: Test, page: Page, mode: string): Promise<void> {
  await choose(page, versions, 'View edit history');
  const dialog = page.locator('[role="dialog"].history-dialog');
  await dialog.locator('.version').nth(3).waitFor();
  t.same(
    await dialog.locator('.version-head strong').allTextContents(),
    ['Original', 'Edited', 'Edited', 'Moved'],
    'the versions, oldest first',
  );
  const text = await dialog.innerText();
  t.match(text, /Version one of the plan\./);
  t.match(text, /Topic: review → plans/, 'the move in words');
  t.match(text, /by Iago/, 'who moved it');
  t.ok(
    (await dialog.locator('.highlight_text_inserted').count()) > 0,
    'what an edit added, highlighted',
  );
  t.ok(
    await page.evaluate(`document.activeElement?.closest('[role="dialog"]') !== null`),
    'the focus in the dialog',
  );
  await screenshot(page, t, `history-${mode}`);
  await checkA11y(t, page, `history-dialog-${mode}`);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.ok(
    await page.evaluate(`!!document.activeElement?.closest('.messages')`),
    'the focus back in the message list',
  );
}

t.test('View edit history: two edits and a topic move', async (t) => {
  if (NO_CHROMIUM) return;
  let wide: Page | null = null;
  for (const [width, dark] of [
    [1280, false],
    [390, false],
    [1280, true],
  ] as const) {
    const page = await open('all', true, width, dark);
    await historyCheck(t, page, `${width}${dark ? '-dark' : ''}`);
    if (width === 1280 && !dark) wide = page;
    else await page.close();
  }
  // From the "(moved)" label (in the first page again: the same settings, its dialog closed).
  const page = wide!;
  await page.locator(`.msg[data-id="${moved}"] button.edited`).click();
  const dialog = page.locator('[role="dialog"].history-dialog');
  await dialog.locator('.version').nth(1).waitFor();
  t.match(await dialog.innerText(), /Topic: review → elsewhere/, 'the label opens it too');
  await page.close();
});

t.test('View read receipts: who read it, by name', async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'hamlet', 'general', 'review', 'Who reads this?');
  let page = await open('all', true);
  await choose(page, id, 'View read receipts');
  let dialog = page.locator('[role="dialog"].receipts-dialog');
  await dialog.locator('.receipts-empty').waitFor();
  t.match(await dialog.locator('h2').innerText(), /Read receipts \(0\)/, 'none yet');
  t.match(await dialog.innerText(), /not listed/, 'the line on those not shown');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });

  // Othello reads it in the app; the new accounts by the API, one keeping it to themselves.
  const { page: other } = await openApp(b, ts.url, ts.fx, 'othello', {
    hash: `#narrow/channel/${general}-general/topic/review`,
  });
  await waitMessage(other, 'Who reads this?');
  await waitFor(
    other,
    `!document.querySelector('.msg[data-id="${id}"]')?.classList.contains('unread')`,
  );
  for (const who of [reader, quiet])
    await ok(
      ts.api.post(who, 'messages/flags', { messages: [id], op: 'add', flag: 'read' }),
      'read',
    );
  // Othello's read has reached the server (the app sends it in a batch).
  const start = Date.now();
  while (Date.now() - start < 10_000) {
    const r = await ts.api.get('othello', `messages/${id}`);
    if ((r.body.message as { flags: string[] }).flags.includes('read')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await other.close();

  // At 1280 in the same page (the dialog asks again when opened again), then a page at 390.
  for (const width of [1280, 390]) {
    if (width !== 1280) page = await open('all', true, width);
    await choose(page, id, 'View read receipts');
    dialog = page.locator('[role="dialog"].receipts-dialog');
    await dialog.locator('.receipt').first().waitFor();
    t.same(
      await dialog.locator('.receipt-name').allInnerTexts(),
      ['Othello', 'Zelda Reader'],
      'by name; not the one who keeps it private, not the sender',
    );
    t.match(await dialog.locator('h2').innerText(), /Read receipts \(2\)/, 'the count');
    await screenshot(page, t, `receipts-${width}`);
    await checkA11y(t, page, `receipts-dialog-${width}`);
    // A name opens the person's card.
    await dialog.locator('.receipt', { hasText: 'Zelda Reader' }).click();
    await page.locator('.profile-card').waitFor();
    t.match(await page.locator('.profile-card').innerText(), /Zelda Reader/, 'their card');
    await page.keyboard.press('Escape');
    await page.locator('.profile-card').waitFor({ state: 'detached' });
    t.equal(await dialog.count(), 1, 'the dialog stays under the card');
    await page.close();
  }
});

t.test('View original message: the Markdown, copyable', async (t) => {
  if (NO_CHROMIUM) return;
  for (const width of [1280, 390]) {
    const page = await open('all', true, width);
    await choose(page, fenced, 'View original message');
    const dialog = page.locator('[role="dialog"].source-dialog');
    const field = dialog.locator('textarea');
    await field.waitFor();
    t.equal(await field.inputValue(), 'Look:\n```\nx = 1\n```', 'the raw Markdown');
    t.not(await field.getAttribute('readonly'), null, 'read-only');
    t.equal(await dialog.locator('button', { hasText: 'Copy' }).count(), 1, 'a Copy button');
    await checkA11y(t, page, `source-dialog-${width}`);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.close();
  }
});
