/**
 * The reference's message keys where a keyboard user presses them, in chromium. With nothing
 * focused (after `n`, which opens a topic at its first unread message) and on the sidebar's link
 * a click on a channel leaves focused, j/k and the list's other keys act on the message list
 * (they did nothing: only the list itself took them), and with nothing selected ↓/j start at the
 * first message in view, ↑/k at the last (both went to the view's last message, far below the
 * unread ones `n` had opened on). The reference's message keys that did nothing: `s` (to the
 * selected message's topic, and from a topic to its channel), `=` (the first reaction), `+` (👍),
 * `:` (the emoji picker), Ctrl+S (star), ← (edit your latest message), Shift+R (a direct message
 * to the sender). End, as the reference's, reads the messages it passes over (they stayed unread
 * above the last one, never shown). `e` on a message whose topic alone may be edited puts the
 * focus on the topic's field (nothing had it: keys typed went to the list), and the edit closed
 * gives the focus back to the list (it was lost to the page). The reference's keys that did
 * nothing though the app has what each opens: `a` (All messages), `*` (Starred), `d` (Drafts),
 * Shift+P (all direct messages), `p` (the next unread direct conversation), `w` (the people's
 * filter), `?` (the keyboard shortcuts, a panel written for them), and on the selected message
 * Shift+M (its topic muted or unmuted), `m` (its topic's Move dialog), Shift+V (its read
 * receipts); none of them acts while typing in a field or with Ctrl, Alt or Meta.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitForTitle, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { setRealmSettings } from '../helpers/channels.js';
import { seedChannelMessages, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

const LONG = 40;
let betaId = 0;

const { b, ts, channels } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'othello', members: ['hamlet', 'othello'] },
    design: { by: 'othello', members: ['hamlet', 'othello'] },
    sandbox: { by: 'othello', members: ['hamlet', 'othello'] },
    attic: { by: 'othello', members: ['hamlet', 'othello'] },
  },
  seed: async ({ ts, channels }) => {
    // Hamlet's message of an hour ago, its content past the 10 minutes' limit (its topic not).
    const hamlet = ts.fx.users.hamlet!.id;
    seedChannelMessages(ts, {
      senderId: hamlet,
      streamId: channels.attic,
      topic: 'old',
      count: 1,
      recipients: [hamlet, ts.fx.users.othello!.id],
      flags: 1,
      dateSent: Math.floor(Date.now() / 1000) - 3600,
      text: () => 'old mine',
    });
    await sendChannelMessage(ts.api, 'othello', 'attic', 'old', 'old reply');
    for (let i = 0; i < LONG; i++)
      await sendChannelMessage(ts.api, 'othello', 'general', 'long thread', `long ${i}`);
    await sendChannelMessage(ts.api, 'othello', 'design', 'logo', 'the logo draft');
    await sendChannelMessage(ts.api, 'othello', 'sandbox', 'alpha', 'alpha one');
    await sendChannelMessage(ts.api, 'hamlet', 'sandbox', 'alpha', 'alpha mine');
    betaId = await sendChannelMessage(ts.api, 'othello', 'sandbox', 'beta', 'beta one');
    const reacted = await ts.api.post('othello', `messages/${betaId}/reactions`, {
      emoji_name: 'tada',
    });
    if (reacted.status !== 200) throw new Error(`reacting failed: ${reacted.text}`);
    // Two unread direct conversations, for `p`.
    const hamletId = ts.fx.users.hamlet!.id;
    await sendDirectMessage(ts.api, 'othello', [hamletId], 'dm from othello');
    await sendDirectMessage(ts.api, 'cordelia', [hamletId], 'dm from cordelia');
    // What the view shows stays unread: `n` goes where the test expects.
    await ts.api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 3 });
  },
});

/** The selected message's text, or null. */
function selectedText(page: Page): Promise<string | null> {
  return page.evaluate(`document.querySelector('.msg.selected .content')?.textContent ?? null`);
}

/** Until the selected message's text is `text`. */
function selectedIs(page: Page, text: string): Promise<void> {
  return waitFor(
    page,
    `document.querySelector('.msg.selected .content')?.textContent === ${JSON.stringify(text)}`,
  );
}

/** Whether the message with this text is wholly within the list's box. */
function wholeInView(page: Page, text: string): Promise<boolean> {
  return page.evaluate(`(() => {
    const list = document.querySelector('.messages').getBoundingClientRect();
    const row = [...document.querySelectorAll('.msg')].find(
      (m) => m.querySelector('.content')?.textContent === ${JSON.stringify(text)});
    if (!row) return false;
    const r = row.getBoundingClientRect();
    return r.top >= list.top - 1 && r.bottom <= list.bottom + 1;
  })()`);
}

t.test('j and k act on the list with the focus on nothing or on the sidebar', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#inbox' });
  await waitFor(page, `!!document.querySelector('.inbox-focus')`);
  // `n`, until the long topic (the other channels' unread topics may come first).
  for (let i = 0; i < 4; i++) {
    const from = await page.evaluate<string>(`location.hash`);
    await page.keyboard.press('n');
    await waitFor(page, `location.hash !== ${JSON.stringify(from)}`);
    if (await page.evaluate(`location.hash.endsWith('/topic/long.20thread')`)) break;
  }
  await waitForTitle(page, 'long thread');
  await waitMessage(page, 'long 0');
  t.equal(await selectedText(page), null, 'nothing selected as `n` opens the topic');
  t.not(
    await page.evaluate(`document.activeElement?.closest('.messages') ? 'list' : 'elsewhere'`),
    'list',
    'the focus is not in the list',
  );
  // j: the first message in view, the topic's first unread one (the view opened there).
  await page.keyboard.press('j');
  await selectedIs(page, 'long 0');
  t.pass('j selected the first unread message, in view');
  await page.keyboard.press('j');
  await selectedIs(page, 'long 1');
  await page.keyboard.press('k');
  await selectedIs(page, 'long 0');
  t.pass('j and k move on from there');
  await screenshot(page, t, 'hotkeys-after-n');

  // A click on the sidebar's channel (its link keeps the focus): k selects in that view.
  await page
    .locator('.sidebar a.nav-item', { hasText: /^#?\s*design/ })
    .first()
    .click();
  await waitForTitle(page, 'design');
  await waitMessage(page, 'the logo draft');
  t.match(
    await page.evaluate(`document.activeElement?.closest('.sidebar') ? 'sidebar' : 'elsewhere'`),
    'sidebar',
    'the focus on the sidebar after the click',
  );
  await page.keyboard.press('k');
  await selectedIs(page, 'the logo draft');
  t.ok(await wholeInView(page, 'the logo draft'), 'k selected a message in view');
  t.match(
    await page.evaluate(`document.activeElement?.className ?? ''`),
    /messages/,
    'the list has the focus, where the next keys go',
  );
});

/** The selected message's reactions: `emoji count mine` each, in order. */
function reactionsOfSelected(page: Page): Promise<string> {
  return page.evaluate(`[...document.querySelectorAll('.msg.selected .reactions .reaction[aria-pressed]')]
    .map((r) => r.getAttribute('aria-label').split(':')[0] + ' ' + r.textContent.replace(/\\D/g, '') + ' ' + r.getAttribute('aria-pressed'))
    .join(', ')`);
}

t.test('s, =, +, :, Ctrl+S, ← and Shift+R on the selected message', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${channels.sandbox}-sandbox`,
  });
  await waitMessage(page, 'beta one');
  await page.focus('.messages');
  await page.keyboard.press('End');
  await selectedIs(page, 'beta one');

  // s: the selected message's topic, the message still selected; s again: its channel.
  await page.keyboard.press('s');
  await waitForTitle(page, 'beta');
  t.match(await page.evaluate(`location.hash`), /\/topic\/beta\/near\//, 's: the topic, near it');
  await selectedIs(page, 'beta one');
  t.notOk(
    await page.evaluate(
      `[...document.querySelectorAll('.msg .content')].some((c) => c.textContent === 'alpha one')`,
    ),
    'only the topic shown',
  );
  await page.keyboard.press('s');
  await waitFor(page, `!location.hash.includes('/topic/')`);
  await waitMessage(page, 'alpha one');
  await selectedIs(page, 'beta one');
  t.pass('s again: the channel, the message still selected');

  // = joins the first reaction (Othello's 🎉); + adds 👍; = takes the 🎉 back.
  await page.keyboard.press('=');
  await waitFor(
    page,
    `document.querySelector('.msg.selected .reaction[aria-pressed="true"]') !== null`,
  );
  t.equal(await reactionsOfSelected(page), 'tada 2 true', '= joined the first reaction');
  await page.keyboard.press('+');
  await waitFor(
    page,
    `document.querySelectorAll('.msg.selected .reaction[aria-pressed="true"]').length === 2`,
  );
  t.equal(await reactionsOfSelected(page), 'tada 2 true, +1 1 true', '+ added 👍');
  await page.keyboard.press('=');
  await waitFor(
    page,
    `document.querySelectorAll('.msg.selected .reaction[aria-pressed="true"]').length === 1`,
  );
  t.equal(await reactionsOfSelected(page), 'tada 1 false, +1 1 true', '= took the first back');

  // Ctrl+S stars it (and not the browser's "Save page as"); again unstars.
  await page.keyboard.press('Control+s');
  await waitFor(page, `document.querySelector('.msg.selected').classList.contains('starred')`);
  t.pass('Ctrl+S starred the message');
  await page.keyboard.press('Control+s');
  await waitFor(page, `!document.querySelector('.msg.selected').classList.contains('starred')`);
  t.pass('Ctrl+S again unstarred it');

  // : the emoji picker, its search field focused; a reaction chosen; the focus back on the list.
  await page.keyboard.press(':');
  await waitFor(page, `document.activeElement?.getAttribute('aria-label') === 'Search emoji'`);
  await screenshot(page, t, 'hotkeys-colon-picker');
  await page.keyboard.type('heart');
  await page.keyboard.press('Enter');
  await waitFor(
    page,
    `/heart/.test(document.querySelector('.msg.selected .reactions')?.textContent + [...document.querySelectorAll('.msg.selected .reaction')].map((r) => r.getAttribute('aria-label')).join())`,
  );
  t.pass(': reacted with the emoji picked');
  await waitFor(page, `document.activeElement?.classList.contains('messages')`);

  // ←: your latest message in the view, selected and opened for editing.
  await page.keyboard.press('ArrowLeft');
  await waitFor(page, `document.querySelector('.msg.selected textarea')?.value === 'alpha mine'`);
  t.pass('←: editing your latest message');
  await screenshot(page, t, 'hotkeys-left-edit');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.msg textarea') === null`);

  // Shift+R on Othello's message: a direct message to him.
  await page.focus('.messages');
  await page.keyboard.press('End');
  await selectedIs(page, 'beta one');
  await page.keyboard.press('Shift+R');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.match(
    await page.evaluate(`document.querySelector('.compose .pills')?.textContent ?? ''`),
    /Othello/,
    'Shift+R: the compose box addressed to the sender, directly',
  );
  await screenshot(page, t, 'hotkeys-shift-r');
});

t.test('End reads the messages it passes over', async (t) => {
  if (NO_CHROMIUM) return;
  await ts.api.patch('hamlet', 'settings', { web_mark_read_on_scroll_policy: 1 });
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${channels.general}-general/topic/long.20thread`,
  });
  await waitMessage(page, 'long 0');
  // Those in view are read; those below, never shown, are not.
  await waitFor(page, `document.querySelector('.msg.unread') !== null`);
  const unreadBelow = await page.evaluate<number>(
    `document.querySelectorAll('.msg.unread').length`,
  );
  t.ok(unreadBelow > 0, `${unreadBelow} messages below the view unread before End`);
  await page.focus('.messages');
  await page.keyboard.press('End');
  await selectedIs(page, `long ${LONG - 1}`);
  await waitFor(page, `document.querySelector('.msg.unread') === null`);
  t.pass('End: none of the view left unread');
  await screenshot(page, t, 'hotkeys-end-read');
  // And on the server, once the batch has gone.
  const unreadOnServer = async () => {
    const res = await ts.api.get('hamlet', 'messages', {
      anchor: 'newest',
      num_before: 100,
      num_after: 0,
      narrow: JSON.stringify([
        { operator: 'channel', operand: channels.general },
        { operator: 'topic', operand: 'long thread' },
      ]),
    });
    const messages = res.body.messages as { flags: string[] }[];
    return messages.filter((m) => !m.flags.includes('read')).length;
  };
  for (let i = 0; i < 300 && (await unreadOnServer()) > 0; i++)
    await new Promise((r) => setTimeout(r, 100));
  t.equal(await unreadOnServer(), 0, 'the server has them read');
});

t.test('e on a message whose topic alone may be edited: its field has the focus', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${channels.sandbox}-sandbox`,
  });
  await waitMessage(page, 'beta one');
  await page.focus('.messages');
  await page.keyboard.press('End');
  await selectedIs(page, 'beta one');
  // Othello's message: Hamlet may move it (its topic), not edit its content.
  await page.keyboard.press('e');
  await waitFor(page, `document.activeElement?.closest('.edit-box') != null`);
  t.equal(
    await page.evaluate(`document.activeElement.tagName + ' ' + document.activeElement.value`),
    'INPUT beta',
    'the topic field has the focus',
  );
  t.notOk(
    await page.evaluate(`document.querySelector('.edit-box textarea') !== null`),
    'no content to edit',
  );
  await screenshot(page, t, 'hotkeys-edit-topic');
  // Esc: closed, the focus back on the list, the message still selected.
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.edit-box') === null`);
  await waitFor(page, `document.activeElement?.classList.contains('messages')`);
  await selectedIs(page, 'beta one');
  t.pass('Esc: back on the list');
  // A new topic typed, Enter: moved, and the focus back on the list, where j/k go on.
  await page.keyboard.press('e');
  await waitFor(page, `document.activeElement?.closest('.edit-box') != null`);
  await page.keyboard.press('Control+a');
  await page.keyboard.type('gamma');
  await page.keyboard.press('Enter');
  await waitFor(page, `document.querySelector('.edit-box') === null`);
  await waitFor(
    page,
    `[...document.querySelectorAll('.recipient .topic-name')].some((a) => a.textContent === 'gamma')`,
  );
  await waitFor(page, `document.activeElement?.classList.contains('messages')`);
  t.pass('moved to gamma, the focus back on the list');
  await page.keyboard.press('k');
  await selectedIs(page, 'alpha mine');
  t.pass('k moves on from the moved message');
});

t.test('← skips a message of yours whose content may no longer be edited', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${channels.attic}-attic`,
  });
  await waitMessage(page, 'old reply');
  await page.focus('.messages');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('End');
  await selectedIs(page, 'old reply');
  t.equal(
    await page.evaluate(`document.querySelector('.edit-box')`),
    null,
    '←: nothing opened (the only message of yours is past the content limit)',
  );
  await sendChannelMessage(ts.api, 'hamlet', 'attic', 'old', 'new mine');
  await waitMessage(page, 'new mine');
  await page.keyboard.press('ArrowLeft');
  await waitFor(page, `document.querySelector('.msg.selected textarea')?.value === 'new mine'`);
  t.pass('←: your latest message with content to edit, opened');
});

/** The view's title. */
function title(page: Page): Promise<string> {
  return page.evaluate(`document.querySelector('.title')?.textContent ?? ''`);
}

t.test('a, *, d, Shift+P, p, w and ? open what the reference opens', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: '#inbox' });
  await waitFor(page, `!!document.querySelector('.inbox-focus')`);
  await page.evaluate(`document.activeElement?.blur()`);

  // Not while typing in a field, nor with Alt or Ctrl.
  await page.keyboard.press('/');
  await waitFor(page, `document.activeElement?.id === 'search'`);
  await page.keyboard.type('a*dPpw?');
  t.equal(
    await page.evaluate(`document.getElementById('search').value`),
    'a*dPpw?',
    'typed into the search field',
  );
  t.equal(await title(page), 'Inbox', 'the keys typed in a field went nowhere');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  await page.evaluate(`document.activeElement?.blur()`);
  await page.keyboard.press('Alt+a');
  await page.keyboard.press('Control+p');
  t.equal(await title(page), 'Inbox', 'Alt+a and Ctrl+P do nothing here');

  // p: an unread direct conversation, then the other one (first: the views below, All
  // messages, read what they show).
  await page.keyboard.press('p');
  await waitFor(page, `/Othello|Cordelia/.test(document.querySelector('.title')?.textContent)`);
  const first = await title(page);
  await page.keyboard.press('p');
  await waitFor(page, `document.querySelector('.title')?.textContent !== ${JSON.stringify(first)}`);
  const second = await title(page);
  t.same(
    [first, second].map((x) => /Othello/.test(x)).sort(),
    [false, true],
    `p: one unread conversation (${first}), then the other (${second})`,
  );
  await page.keyboard.press('a');
  await waitForTitle(page, 'All messages');
  t.pass('a: All messages');
  await page.keyboard.press('*');
  await waitForTitle(page, 'Starred');
  t.pass('*: the starred messages');
  await page.keyboard.press('d');
  await waitForTitle(page, 'Drafts');
  t.equal(await page.evaluate(`location.hash`), '#drafts', 'd: the drafts');
  await page.keyboard.press('Shift+P');
  await waitForTitle(page, 'Direct messages');
  await waitMessage(page, 'dm from cordelia');
  await waitMessage(page, 'dm from othello');
  t.pass('Shift+P: all direct messages');

  // w: the people's filter has the focus; typed letters go into it.
  await page.keyboard.press('w');
  await waitFor(page, `document.activeElement?.classList.contains('people-filter')`);
  await page.keyboard.type('cor');
  t.equal(
    await page.evaluate(`document.activeElement.value`),
    'cor',
    'w: the people filter, typing filters',
  );
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  await page.evaluate(`document.activeElement?.blur()`);

  // ?: the keyboard shortcuts; Esc closes it, ? too.
  await page.keyboard.press('?');
  await waitFor(page, `!!document.querySelector('.shortcuts-dialog')`);
  const groups = await page.evaluate<string[]>(
    `[...document.querySelectorAll('.shortcuts-dialog h3')].map((h) => h.textContent)`,
  );
  t.same(
    groups,
    [
      'The basics',
      'Search',
      'Navigation',
      'Composing messages',
      'Message actions',
      'Recent conversations',
      'Inbox',
      'Menus',
    ],
    'the groups, as the reference groups them',
  );
  t.match(
    await page.evaluate(`document.querySelector('.shortcuts-dialog').textContent`),
    /All direct messagesShift \+ P.*Starred messages\*/s,
    'the keys with what they do',
  );
  t.equal(
    await page.evaluate(`document.activeElement?.closest('.shortcuts-dialog') ? 'in' : 'out'`),
    'in',
    'the focus in the panel',
  );
  await screenshot(page, t, 'hotkeys-shortcuts-1280');
  await page.keyboard.press('Escape');
  await waitFor(page, `!document.querySelector('.shortcuts-dialog')`);
  t.pass('Esc closed it');
  await page.keyboard.press('?');
  await waitFor(page, `!!document.querySelector('.shortcuts-dialog')`);
  await page.keyboard.press('?');
  await waitFor(page, `!document.querySelector('.shortcuts-dialog')`);
  t.pass('? again closed it');
});

t.test('w and ? on a narrow screen', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${channels.design}-design`,
    width: 390,
    height: 844,
  });
  await waitMessage(page, 'the logo draft');
  await page.evaluate(`document.activeElement?.blur()`);
  await page.keyboard.press('w');
  await waitFor(page, `document.activeElement?.classList.contains('people-filter')`);
  t.equal(
    await page.evaluate(`document.querySelector('.app').dataset.drawer`),
    'open',
    'w opened the drawer, its people filter focused',
  );
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  await page.evaluate(`document.activeElement?.blur()`);
  await page.keyboard.press('?');
  await waitFor(page, `!!document.querySelector('.shortcuts-dialog')`);
  await screenshot(page, t, 'hotkeys-shortcuts-390');
  await page.keyboard.press('Escape');
  await waitFor(page, `!document.querySelector('.shortcuts-dialog')`);
});

t.test('Shift+M, m and Shift+V on the selected message', async (t) => {
  if (NO_CHROMIUM) return;
  setRealmSettings(ts, { enable_read_receipts: true });
  const { page } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${channels.design}-design/topic/logo`,
  });
  await waitMessage(page, 'the logo draft');
  await page.focus('.messages');
  await page.keyboard.press('End');
  await selectedIs(page, 'the logo draft');
  const policy = () =>
    page.evaluate<string>(`document.querySelector('.topic-policy')?.dataset.policy ?? ''`);
  t.equal(await policy(), 'inherit', 'the topic not muted');

  // Shift+M mutes the topic; again unmutes it.
  await page.keyboard.press('Shift+M');
  await waitFor(page, `document.querySelector('.topic-policy')?.dataset.policy === 'muted'`);
  t.pass('Shift+M muted the topic');
  await page.keyboard.press('Shift+M');
  await waitFor(page, `document.querySelector('.topic-policy')?.dataset.policy === 'inherit'`);
  t.pass('Shift+M again unmuted it');

  // m: the topic's Move dialog; Esc closes it, the list has the focus back.
  await page.keyboard.press('m');
  await waitFor(page, `!!document.querySelector('.move-topic-dialog')`);
  t.match(
    await page.evaluate(`document.querySelector('.move-topic-dialog').textContent`),
    /logo/,
    "m: the selected message's topic's Move dialog",
  );
  await page.keyboard.press('Escape');
  await waitFor(page, `!document.querySelector('.move-topic-dialog')`);
  await waitFor(page, `document.activeElement?.classList.contains('messages')`);

  // Shift+V: its read receipts.
  await page.keyboard.press('Shift+V');
  await waitFor(page, `!!document.querySelector('.receipts-dialog')`);
  t.pass('Shift+V: the read receipts');
  await page.keyboard.press('Escape');
  await waitFor(page, `!document.querySelector('.receipts-dialog')`);

  // None with Ctrl or Alt (Ctrl+M, Alt+Shift+M).
  await page.focus('.messages');
  await page.keyboard.press('Alt+Shift+M');
  await page.keyboard.press('Alt+m');
  await page.keyboard.press('Alt+Shift+V');
  t.equal(await policy(), 'inherit', 'Alt+Shift+M did nothing');
  t.notOk(
    await page.evaluate(`!!document.querySelector('.move-topic-dialog, .receipts-dialog')`),
    'Alt+m and Alt+Shift+V opened nothing',
  );

  // A dialog opened from the message's "⋮" menu closes: the list has the focus, the message
  // selected, where j and k act (the focus was on the "⋮").
  await page.focus('.messages');
  await page.keyboard.press('i');
  await waitFor(page, `!!document.activeElement?.closest('.msg.selected .msg-actions')`);
  await page.keyboard.press('End');
  await waitFor(page, `document.activeElement?.classList.contains('msg-menu-btn')`);
  await page.keyboard.press('Enter');
  await page.locator('.msg-menu-list .menu-item', { hasText: 'View read receipts' }).click();
  await waitFor(page, `!!document.querySelector('.receipts-dialog')`);
  await page.keyboard.press('Escape');
  await waitFor(page, `!document.querySelector('.receipts-dialog')`);
  t.equal(
    await page.evaluate(`document.activeElement?.className ?? ''`),
    'messages',
    'the list has the focus back after the dialog of the "⋮" menu',
  );
  await selectedIs(page, 'the logo draft');
  t.pass('the message still selected');
});
