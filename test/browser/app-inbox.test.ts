/**
 * The web app in chromium, the Inbox view (#inbox, web/app/inbox.tsx): the unread conversations
 * from register's unread messages, grouped (direct messages first, then each channel with its
 * total and its topics, newest first; a topic muted as such left out) and counted; live: a
 * message sent through the API adds its row and raises the totals (a mention marked), a read
 * elsewhere lowers them and takes rows away; the filter box and All topics; a group collapsed
 * stays so over a reload; a click and the keys (↓ from the filter box, Enter) open a
 * conversation, which the reading then takes out of the Inbox; Shift+I comes back; "Mark as
 * read" on a topic; the home view (`web_home_view` 'inbox', the default) on load, Esc back to it,
 * offered in Settings › Display; the empty Inbox says so. The sidebar's entry, the home view,
 * counts the unread messages (muted topics aside), live; the other views' entries do not. A
 * direct-message row shows the person's presence circle (live, in words for screen readers),
 * a bot's and a group's their icon, as the reference's; the topics' names line up with it. A
 * topic's ⋮ menu (mark as read, follow, mute, and the topic actions: app-topic-menu), from a
 * click or the keys; a channel's header has one too. Screenshots at 1280 and 390 pixels.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  openApp,
  pluck,
  sidebarCount,
  waitCount,
  waitFor,
  waitForTitle,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

const EVERYONE = ['hamlet', 'othello', 'iago'];
let lunch = 0;
const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'othello', members: EVERYONE },
    design: { by: 'iago', members: EVERYONE },
  },
  seed: async ({ ts, channels }) => {
    const api = ts.api;
    lunch = await sendChannelMessage(api, 'othello', 'general', 'lunch', 'Lunch at noon?');
    await sendChannelMessage(api, 'iago', 'design', 'logo', 'A round logo.');
    await sendChannelMessage(api, 'iago', 'design', 'logo', 'Or a square one.');
    await sendDirectMessage(api, 'othello', [ts.fx.users['hamlet']!.id], 'Are you there?');
    await sendChannelMessage(api, 'iago', 'general', 'gossip', 'Whispers nobody needs.');
    await sendChannelMessage(api, 'hamlet', 'general', 'plans', 'My plans for the week.', {
      read_by_sender: true,
    });
    const muted = await api.post('hamlet', 'user_topics', {
      stream_id: channels.general,
      topic: 'gossip',
      visibility_policy: 1,
    });
    if (muted.status !== 200) throw new Error(`muting: ${muted.text}`);
  },
});

/**
 * The view's rows, top to bottom: a group's header as `# name count` (`@` after a mention),
 * a conversation as `name count`.
 */
const INBOX = `JSON.stringify([...document.querySelectorAll('.inbox-list > li')].map((li) => {
  const b = li.querySelector('.badge');
  const n = (b ? b.textContent : '0') + (b && b.classList.contains('mention') ? '@' : '');
  const name = li.querySelector('.inbox-name').textContent.trim();
  return (li.classList.contains('inbox-header') ? '# ' : '') + name + ' ' + n;
}))`;

const shown = async (page: Page): Promise<string[]> =>
  JSON.parse(await page.evaluate<string>(INBOX)) as string[];

async function waitInbox(page: Page, want: string[]): Promise<void> {
  try {
    await waitFor(page, `${INBOX} === ${JSON.stringify(JSON.stringify(want))}`, 15_000);
  } catch (e) {
    throw new Error(`inbox: ${JSON.stringify(await shown(page))}, wanted ${JSON.stringify(want)}`, {
      cause: e,
    });
  }
}

const FIRST = [
  '# Direct messages 1',
  'Othello 1',
  '# design 2',
  'logo 2',
  '# general 1',
  'lunch 1',
];

t.test('rows, live counts, filters, collapse, click and keys, mark as read', async (t) => {
  if (NO_CHROMIUM) return;
  // Opened on Starred (a list to wait for, that reads nothing), then the view from the sidebar.
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/is/starred',
  });
  await page.click('.sidebar a.nav-item[href="#inbox"]');
  await waitForTitle(page, 'Inbox');
  await waitInbox(page, FIRST);
  t.pass('direct messages first, channels by name, counts; the muted topic and read one left out');
  // The sidebar's entry (the home view): every unread message but the muted topic's.
  await waitCount(page, 'Inbox', 4);
  t.equal(await sidebarCount(page, 'All messages'), 0, 'All messages: no count (not home)');
  t.equal(await sidebarCount(page, 'Recent conversations'), 0, 'nor Recent conversations');
  // A direct-message row, as the reference's: the person's presence circle (no avatar), the
  // name, the presence in words for screen readers; a topic's row keeps the circle's width, so
  // the names line up.
  t.same(
    await pluck(page, '.inbox-row.inbox-dm .inbox-open > *', 'class'),
    ['inbox-mark', 'inbox-name', 'sr-only'],
    'a direct-message row: the presence circle, the name, its words',
  );
  const dmDot = '.inbox-row.inbox-dm .inbox-mark > .presence-dot';
  t.equal(await page.getAttribute(dmDot, 'class'), 'presence-dot offline', 'Othello is away');
  t.equal(await page.getAttribute(dmDot, 'aria-hidden'), 'true', 'the circle is not read out');
  t.equal(await page.textContent('.inbox-row.inbox-dm .sr-only'), ', offline', 'its words are');
  t.equal(await page.locator('.inbox-list .avatar').count(), 0, 'no avatar');
  t.equal(
    await page.locator('.inbox-row:not(.inbox-dm) .inbox-mark:empty').count(),
    2,
    'an empty mark in each topic’s row (logo, lunch)',
  );
  const lefts = await page.evaluate<number[]>(
    `[...document.querySelectorAll('.inbox-row .inbox-name')].map((e) => Math.round(e.getBoundingClientRect().left))`,
  );
  t.equal(new Set(lefts).size, 1, `the names line up (${lefts.join(', ')})`);
  await screenshot(page, t, 'inbox-offline-1280');
  // Othello comes online: the circle follows.
  t.equal((await ts.api.post('othello', 'users/me/presence', { status: 'active' })).status, 200);
  await waitFor(
    page,
    `document.querySelector(${JSON.stringify(dmDot)}).classList.contains('active')`,
  );
  t.equal(await page.textContent('.inbox-row.inbox-dm .sr-only'), ', active');
  t.equal(
    await page.getAttribute('.sidebar a.nav-item[href="#inbox"]', 'aria-current'),
    'page',
    'the sidebar marks the view',
  );
  t.ok(
    await page.evaluate(
      `document.querySelector('.sidebar a[href="#inbox"]').closest('li').nextElementSibling.querySelector('a[href="#recent"]') !== null`,
    ),
    'the entry above Recent conversations',
  );
  await screenshot(page, t, 'inbox-1280');

  // Live: a new topic, a mention.
  await sendChannelMessage(ts.api, 'othello', 'general', 'dinner', 'Dinner, @**Hamlet**?');
  await waitInbox(page, [...FIRST.slice(0, 4), '# general 2@', 'dinner 1@', 'lunch 1']);
  t.pass('a new message: its row (newest first), the channel total up, the mention marked');
  await waitCount(page, 'Inbox', 5);
  t.pass('the sidebar’s count went up, live');

  // Read elsewhere (the API, as another device): the row goes, the total drops.
  const read = await ts.api.post('hamlet', 'messages/flags', {
    messages: JSON.stringify([lunch]),
    op: 'add',
    flag: 'read',
  });
  t.equal(read.status, 200);
  await waitInbox(page, [...FIRST.slice(0, 4), '# general 1@', 'dinner 1@']);
  t.pass('read elsewhere: the row went, the total dropped');
  await waitCount(page, 'Inbox', 4);

  // The filter box and which topics.
  await page.fill('.inbox-search', 'desi');
  await waitInbox(page, ['# design 2', 'logo 2']);
  await page.fill('.inbox-search', 'oth');
  await waitInbox(page, ['# Direct messages 1', 'Othello 1']);
  await page.fill('.inbox-search', 'zzz');
  await page.waitForSelector('.inbox-view .page-empty:has-text("No conversations match")');
  await page.fill('.inbox-search', '');
  await page.selectOption('.inbox-topics', 'all');
  await waitInbox(page, [...FIRST.slice(0, 4), '# general 2@', 'dinner 1@', 'gossip 1']);
  t.ok(await page.locator('.inbox-row.muted', { hasText: 'gossip' }).count(), 'muted, marked');
  await page.selectOption('.inbox-topics', 'unmuted');
  await waitInbox(page, [...FIRST.slice(0, 4), '# general 1@', 'dinner 1@']);
  t.pass('words, All topics');

  // Collapse a channel: its header stays with its total; kept over a reload.
  await page.click('.inbox-header:has-text("design") .inbox-toggle');
  await waitInbox(page, [...FIRST.slice(0, 3), '# general 1@', 'dinner 1@']);
  t.equal(
    await page.getAttribute('.inbox-header:has-text("design") .inbox-toggle', 'aria-expanded'),
    'false',
  );
  await page.reload();
  await page.waitForSelector('.app[data-status="live"] .inbox-list');
  await waitInbox(page, [...FIRST.slice(0, 3), '# general 1@', 'dinner 1@']);
  t.pass('collapsed over a reload');
  // From the keys: Enter on the header expands it again.
  await page.focus('.inbox-search');
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.includes('Direct messages')`);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.includes('design')`);
  await page.keyboard.press('Enter');
  await waitInbox(page, [...FIRST.slice(0, 4), '# general 1@', 'dinner 1@']);
  t.equal(
    await page.evaluate(`document.querySelectorAll('.inbox-focus[tabindex="0"]').length`),
    1,
    'one Tab stop in the rows (roving)',
  );
  t.pass('Enter on a header expanded it');

  // The keys: ↓ to the topic, Enter opens it; reading it takes it out of the Inbox.
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim().startsWith('logo')`);
  await page.keyboard.press('Enter');
  await waitFor(page, `location.hash.endsWith('/topic/logo')`);
  await waitMessage(page, 'Or a square one.');
  t.pass('the keys opened the topic');

  // Shift+I: back to the Inbox, without the topic read there.
  await page.locator('.messages').focus();
  await page.keyboard.press('Shift+I');
  await page.waitForSelector('.inbox-list');
  t.equal(await page.evaluate('location.hash'), '#inbox');
  await waitInbox(page, ['# Direct messages 1', 'Othello 1', '# general 1@', 'dinner 1@']);
  t.pass('Shift+I: the Inbox; the topic read is gone');

  // A click opens a conversation.
  await page.click('.inbox-row .inbox-open:has-text("Othello")');
  await waitFor(page, `location.hash.startsWith('#narrow/dm/')`);
  await waitMessage(page, 'Are you there?');
  t.pass('a click opened the conversation');

  // Back (Shift+I) once it is read; Mark as read on a topic's row.
  await waitFor(page, `!document.querySelector('.messages .msg.unread')`);
  await page.locator('.messages').focus();
  await page.keyboard.press('Shift+I');
  await waitInbox(page, ['# general 1@', 'dinner 1@']);
  await page.click('.inbox-row:has-text("dinner") .inbox-mark-read');
  await page.waitForSelector('.inbox-view .page-empty');
  t.equal(
    (await page.innerText('.inbox-view .page-empty')).trim(),
    'There are no unread messages in your inbox.',
    'all read: the empty Inbox says so',
  );
  await screenshot(page, t, 'inbox-empty-1280');
  await waitCount(page, 'Inbox', 0);
  t.pass('nothing unread: no count in the sidebar');

  // A group's conversation: its icon, not an avatar. (Read for Othello and Iago at once: their tests follow.)
  const ids = ts.fx.users;
  const group = await sendDirectMessage(
    ts.api,
    'othello',
    [ids['hamlet']!.id, ids['iago']!.id],
    'All three of us?',
    { read_by_sender: true },
  );
  const readByIago = await ts.api.post('iago', 'messages/flags', {
    messages: JSON.stringify([group]),
    op: 'add',
    flag: 'read',
  });
  t.equal(readByIago.status, 200);
  await waitInbox(page, ['# Direct messages 1', 'Iago, Othello 1']);
  t.equal(await page.locator('.inbox-row.inbox-dm .inbox-group').count(), 1, 'the group’s icon');
  t.equal(await page.locator('.inbox-row.inbox-dm .presence-dot').count(), 0, 'no one’s presence');
  await waitCount(page, 'Inbox', 1);
  // A bot's conversation: its icon (a bot has no presence). Hamlet's message through the API
  // stays unread for him.
  await sendDirectMessage(ts.api, 'hamlet', [ts.fx.notificationBotId], 'Hello bot');
  await page.waitForSelector('.inbox-row.inbox-dm .inbox-bot');
  t.equal(await page.locator('.inbox-row.inbox-dm .presence-dot').count(), 0, 'no presence');
  t.equal(await page.locator('.inbox-row.inbox-dm .sr-only').count(), 0, 'nor its words');
  await screenshot(page, t, 'inbox-group-1280');
  watch.assertClean(t);
  await page.close();
});

/** The login form, then the app live (the Inbox shown: no message list to wait for). */
async function openAtHome(page: Page, who: string): Promise<void> {
  await page.goto(ts.url + '/');
  await page.fill('input[name="username"]', ts.fx.users[who]!.email);
  await page.fill('input[name="password"]', ts.fx.users[who]!.password);
  await page.click('button[type="submit"]');
  await page.waitForSelector('.app[data-status="live"]');
}

t.test('the home view (the default) on load, Esc back to it, Settings', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await b.newPage({ viewport: { width: 390, height: 844 } });
  const watch = await watchPage(page);
  await openAtHome(page, 'othello');
  await page.waitForSelector('.inbox-list');
  await waitForTitle(page, 'Inbox');
  t.equal(await page.evaluate('location.hash'), '', 'no view named: the home view, the Inbox');
  // His own messages sent through the API stay unread for him (no read_by_sender).
  await waitInbox(page, [
    '# Direct messages 1',
    'Hamlet 1',
    '# design 2',
    'logo 2',
    '# general 4',
    'dinner 1',
    'plans 1',
    'gossip 1',
    'lunch 1',
  ]);
  t.pass('Othello’s unread, gossip among them (he did not mute it)');
  await screenshot(page, t, 'inbox-390');
  await page.click('.inbox-row:has-text("gossip") .inbox-menu-btn');
  await page.waitForSelector('.inbox-menu-list');
  await screenshot(page, t, 'inbox-menu-390');
  t.ok(
    await page.evaluate(
      `document.querySelector('.inbox-menu-list').getBoundingClientRect().left >= 0 && document.documentElement.scrollWidth <= window.innerWidth`,
    ),
    'the menu in the screen at 390',
  );
  await page.keyboard.press('Escape');
  t.equal(
    await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'),
    true,
    'no horizontal scrolling at 390',
  );

  // A topic from the rows, then Esc: back to the Inbox.
  await page.click('.inbox-row .inbox-open:has-text("gossip")');
  await waitMessage(page, 'Whispers nobody needs.');
  await page.locator('.messages').focus();
  await page.keyboard.press('Escape');
  await page.waitForSelector('.inbox-list');
  await waitForTitle(page, 'Inbox');
  t.pass('Esc: back to the home view');

  // Settings › Display offers it, chosen.
  await page.goto(ts.url + '/#settings/display');
  await page.waitForSelector('#setting-web_home_view');
  t.equal(await page.inputValue('#setting-web_home_view'), 'inbox');
  t.same(
    await page.evaluate(
      `[...document.querySelectorAll('#setting-web_home_view option')].map((o) => o.value)`,
    ),
    ['inbox', 'recent_topics', 'all_messages'],
  );
  watch.assertClean(t);
  await page.close();
});

t.test('Jump to lists the Inbox', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', { hash: '#narrow/is/starred' });
  await page.keyboard.press('Control+k');
  await page.keyboard.type('inbox');
  await page.waitForSelector('.jump [role="option"]:has-text("Inbox")');
  await page.keyboard.press('Enter');
  await waitFor(page, `location.hash === '#inbox'`);
  await page.waitForSelector('.inbox-list');
  t.pass('Jump to: the Inbox');
  // Mark as read on a channel's header: its topics go.
  await waitInbox(page, [
    '# design 2',
    'logo 2',
    '# general 4',
    'dinner 1',
    'plans 1',
    'gossip 1',
    'lunch 1',
  ]);
  // A topic's ⋮ menu: the sidebar topic menu's actions; from the keys too. A channel's header
  // has the sidebar channel menu (app-topic-menu); the direct messages' none.
  t.equal(await page.locator('.inbox-row.inbox-dm .inbox-menu-btn').count(), 0);
  t.same(
    await pluck(page, '.inbox-header .inbox-menu-btn', 'aria-label'),
    ['Menu for #design', 'Menu for #general'],
    'a channel’s header has a menu, the direct messages’ none',
  );
  await page.focus('.inbox-search');
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowDown');
  await waitFor(page, `document.activeElement?.textContent.trim().startsWith('gossip')`);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await waitFor(page, `document.activeElement?.classList.contains('inbox-menu-btn')`);
  await page.keyboard.press('Enter');
  await waitFor(page, `document.activeElement?.getAttribute('role') === 'menuitem'`);
  t.same(
    await pluck(page, '.inbox-menu-list [role="menuitem"]'),
    [
      'Mark all messages as read',
      'Unfollow topic',
      'Mute topic',
      'Copy link to topic',
      'Move topic',
      'Mark as resolved',
      'Delete topic',
    ],
    'the items, the first focused (he started the topic: followed, by default; an administrator)',
  );
  await screenshot(page, t, 'inbox-menu-1280');
  t.ok(
    await page.evaluate(`(() => {
      const r = document.querySelector('.inbox-menu-list').getBoundingClientRect();
      const e = document.elementFromPoint(r.left + r.width / 2, r.bottom - 8);
      return !!e && !!e.closest('.inbox-menu-list');
    })()`),
    'the menu drawn whole, over the rows',
  );
  await page.keyboard.press('Escape');
  await waitFor(page, `document.activeElement?.classList.contains('inbox-menu-btn')`);
  t.equal(await page.locator('.inbox-menu-list').count(), 0, 'Esc closed it, the focus back');
  // ← → between the row's link, ✓ and ⋮, wrapping round; ↓ from there: the next row.
  const at = () =>
    page.evaluate<string>(
      `(() => { const a = document.activeElement; return (a.closest('li').dataset.key.split('\\u0000')[1] || '') + ' ' + a.className; })()`,
    );
  await page.keyboard.press('ArrowRight');
  t.match(await at(), /^gossip .*inbox-open/, '→ from the menu: round to the topic');
  await page.keyboard.press('ArrowLeft');
  t.match(await at(), /^gossip .*inbox-menu-btn/, '← back to the menu');
  await page.keyboard.press('ArrowLeft');
  t.match(await at(), /^gossip .*inbox-mark-read/, '← to Mark as read');
  await page.keyboard.press('ArrowDown');
  t.match(await at(), /^lunch .*inbox-open/, '↓ from there: the next row');
  await page.click('.inbox-row:has-text("gossip") .inbox-menu-btn');
  await page.click('.inbox-menu-list [role="menuitem"]:has-text("Mute topic")');
  await waitInbox(page, ['# design 2', 'logo 2', '# general 3', 'dinner 1', 'plans 1', 'lunch 1']);
  t.pass('Mute topic from the menu: the row goes (unmuted topics shown)');
  await page.click('.inbox-row:has-text("plans") .inbox-menu-btn');
  await page.click('.inbox-menu-list [role="menuitem"]:has-text("Mark all messages as read")');
  await waitInbox(page, ['# design 2', 'logo 2', '# general 2', 'dinner 1', 'lunch 1']);
  t.pass('Mark all messages as read from the menu');

  await page.click('.inbox-header:has-text("general") .inbox-mark-read');
  await waitInbox(page, ['# design 2', 'logo 2']);
  t.pass('a channel marked as read from its header');
  watch.assertClean(t);
  await page.close();
});

t.test('the closed compose box names the focused row, as the reference’s', async (t) => {
  if (NO_CHROMIUM) return;
  for (const width of [1280, 390]) {
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'othello', {
      hash: '#inbox',
      width,
      height: width === 390 ? 844 : 800,
    });
    await page.waitForSelector('.inbox-list');
    // (What other tests send later comes under #general: these rows come first.)
    await waitFor(
      page,
      `${INBOX}.startsWith(${JSON.stringify(JSON.stringify(['# Direct messages 1', 'Hamlet 1', '# design 2', 'logo 2']).slice(0, -1))})`,
    );
    const words = `document.querySelector('.compose-closed .compose-reply').textContent.trim()`;
    const says = (text: string) => waitFor(page, `${words} === ${JSON.stringify(text)}`);
    // The view shows with its first row focused: a header, the standard words.
    await waitFor(page, `document.activeElement?.classList.contains('inbox-toggle') === true`);
    t.equal(
      await page.evaluate(words),
      'Compose message',
      `${width}: a header: the standard words`,
    );
    // ↓ row by row: the words follow the focus.
    const expected = [
      'Message Hamlet',
      'Compose message',
      'Message #design > logo',
      'Compose message',
    ];
    for (const text of expected) {
      await page.keyboard.press('ArrowDown');
      await says(text);
      t.pass(`${width}: ${text}`);
      if (text === 'Message #design > logo') await screenshot(page, t, `inbox-reply-${width}`);
    }
    await page.keyboard.press('ArrowUp');
    await says('Message #design > logo');
    // A click opens the compose box on that conversation.
    await page.click('.compose-closed .compose-reply');
    await waitForTitle(page, 'logo');
    await waitFor(
      page,
      `document.querySelector('.compose textarea')?.placeholder === 'Message #design > logo'`,
    );
    t.pass(`${width}: the compose box on #design > logo`);
    await screenshot(page, t, `inbox-reply-opened-${width}`);
    // Elsewhere (Recent conversations): the standard words.
    await page.goto(ts.url + '/#recent');
    await page.waitForSelector('.compose-closed');
    t.equal(await page.evaluate(words), 'Compose message', `${width}: Recent: the standard words`);
    watch.assertClean(t);
    await page.close();
  }
});
