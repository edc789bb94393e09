/**
 * The web app in chromium, reading (issue 30 Part B 1–4, 12, 14): logging in and out with the
 * real app, unread counts right at load and kept live, narrowing by click, by URL and by a link
 * the server rendered (inside the app, no reload), back and forward, the rendered content
 * (code, TeX with KaTeX's stylesheet, emoji, mentions, an upload's thumbnail through the session
 * cookie, a proxied outside image) with `<script>` and `onerror=` text running nothing, paging
 * that keeps the DOM within its window (and leaves out a message deleted while a page was on its
 * way, shows one edited and leaves out one moved meanwhile), the sidebar's topics (a topic new
 * while they load, a move), search, and the layouts at 390 and 1280 pixels, light and dark, with
 * screenshots. A second user acts through the API.
 */
import sharp from 'sharp';
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  KEEP_SOCKET_FRAMES,
  socketFrame,
  waitFor,
  pluck,
  messageTexts,
  domMessages,
  openApp,
  openSettings,
  sidebarCount,
  waitCount,
  waitLive,
  waitMessage,
  waitForTitle,
  waitDrawerOpen,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage, sendDirectMessage, seedChannelMessages } from '../helpers/messages.js';
import { startThirdParty } from '../helpers/third-party.js';
import { upload } from '../helpers/uploads.js';

const WINDOW_MAX = 300;
/** How long the paging test may scroll towards an end (a bound on a broken test). */
const PAGING_LIMIT_MS = 90_000;

const EVERYONE = ['hamlet', 'othello', 'iago'];

let design: number;
let general: number;
let bulk: number;

const { b, ts, channels } = browserSuite(t, {
  server: { imageProxyAllowPrivate: ['127.0.0.1'] },
  channels: {
    general: { by: 'iago', members: EVERYONE },
    design: { by: 'iago', members: EVERYONE },
    archive: { by: 'iago', members: EVERYONE },
  },
  seed,
});

async function seed(): Promise<void> {
  ({ general, design, archive: bulk } = channels);
  const cat = await sharp({
    create: { width: 48, height: 32, channels: 3, background: { r: 30, g: 120, b: 200 } },
  })
    .png()
    .toBuffer();
  const third = await startThirdParty(t, {
    '/cat.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(cat);
    },
  });
  const { api, fx } = ts;
  const everyone = EVERYONE.map((n) => fx.users[n]!.id);
  await sendChannelMessage(api, 'othello', 'design', 'logo', 'What about the **new logo**?');
  await sendChannelMessage(api, 'othello', 'design', 'logo', 'Ping @**Hamlet** :tada:');
  await sendChannelMessage(
    api,
    'iago',
    'general',
    'plans',
    '```python\ndef plan():\n    return 42\n```',
  );
  await sendChannelMessage(api, 'iago', 'general', 'plans', 'Euler: $$e^{i\\pi} + 1 = 0$$');
  await sendChannelMessage(
    api,
    'othello',
    'general',
    'safety',
    '<script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2">',
  );
  const up = await upload(api, 'othello', [
    { filename: 'photo.png', data: cat, contentType: 'image/png' },
  ]);
  const path = up.body.url as string;
  await sendChannelMessage(api, 'othello', 'general', 'pictures', `A photo: [photo.png](${path})`);
  await sendChannelMessage(
    api,
    'othello',
    'general',
    'pictures',
    `From outside: ${third.url('/cat.png')}`,
  );
  await sendChannelMessage(
    api,
    'othello',
    'general',
    'links',
    'See #**design>logo** and #**design**',
  );
  await sendDirectMessage(api, 'othello', [fx.users.hamlet!.id], 'A private word');
  seedChannelMessages(ts, {
    senderId: fx.users.iago!.id,
    streamId: bulk,
    topic: 'history',
    count: 1200,
    recipients: everyone,
    flags: 1, // read
  });
}

/** Scrolls the message list to its top or bottom end, once. */
function scrollList(page: Page, to: 'top' | 'bottom'): Promise<void> {
  return page.evaluate(`(() => {
    const el = document.querySelector('.messages');
    el.scrollTop = ${to === 'top' ? 0 : 'el.scrollHeight'};
  })()`);
}

t.test(
  'unread counts at load and live; narrowing by click, URL and links; back and forward',
  async (t) => {
    if (NO_CHROMIUM) return;
    // Opened on a view with nothing in it, so that nothing is read before the counts are checked.
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#narrow/is/starred',
    });
    t.equal(await sidebarCount(page, 'design'), 2, 'design: 2 unread');
    t.equal(await sidebarCount(page, 'general'), 6, 'general: 6 unread');
    t.equal(await sidebarCount(page, 'archive'), 0, 'archive: all read');
    // A conversation is named once the people have come (GET /users, asked after the first
    // screen; '…' until then): waited for.
    await waitCount(page, 'Othello', 1);
    t.pass('one direct message');
    t.equal(await sidebarCount(page, 'Mentions'), 1, 'one mention');
    // The app writes the title at the frame after the state it shows (updateTitle): wait for the
    // view's title, then check its count.
    await waitFor(page, `document.title.includes('Starred messages')`);
    t.match(await page.title(), /^\(9\) Starred messages - /, 'the unread count in the title');
    await screenshot(page, t, 'starred-empty-1280');

    await sendChannelMessage(ts.api, 'othello', 'design', 'colors', 'And the colors?');
    await waitCount(page, 'design', 3);
    t.pass('a new message counted live');

    await page.click('.sidebar a.nav-item:has-text("design")');
    await waitFor(page, `location.hash.startsWith('#narrow/channel/${design}-design')`);
    await waitMessage(page, 'And the colors?');
    t.pass('narrowed by a click: the URL and the messages');
    await waitCount(page, 'design', 0);
    t.pass('what was shown (with the window focused) was marked read');
    // The topics come with an answer of their own (the sidebar says "Loading topics…" until
    // then), which can come after the messages were shown and read: waited for.
    await page.waitForSelector('.sidebar a.nav-item.topic:has-text("logo")');
    t.pass("the channel's topics");

    await page.evaluate(`location.hash = '#narrow/channel/${general}-general/topic/links'`);
    await waitMessage(page, 'See');
    await page.evaluate('window.__sameDocument = true');
    await page.click('.messages .content a.stream-topic');
    await waitFor(page, `location.hash.startsWith('#narrow/channel/${design}-design/topic/logo')`);
    await waitMessage(page, 'new logo');
    t.equal(
      await page.evaluate('window.__sameDocument'),
      true,
      'a rendered link opened inside the app',
    );
    t.equal(await page.textContent('.title .topic-crumb'), 'logo');

    await page.goBack();
    await waitFor(page, `location.hash.includes('/topic/links')`);
    await waitMessage(page, 'See');
    await page.goForward();
    await waitFor(page, `location.hash.includes('/topic/logo')`);
    await waitMessage(page, 'new logo');
    t.pass('back and forward');
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('a link to elsewhere (an upload, an image, a site) opens in a new tab', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/pictures`,
  });
  await page.waitForSelector('.messages .content .message_inline_image img');
  const at = page.url();
  for (const [what, selector] of [
    ['the image preview', '.messages .content .message_inline_image img'],
    ['the link to the upload', '.messages .content a:has-text("photo.png")'],
  ] as const) {
    const [tab] = await Promise.all([
      page.context().waitForEvent('page', { timeout: 10_000 }),
      page.locator(selector).first().click(),
    ]);
    await tab.waitForLoadState();
    t.match(new URL(tab.url()).pathname, /^\/user_uploads\//, `${what}: the file, in a new tab`);
    await tab.close();
    t.equal(page.url(), at, `${what}: the app stays where it was`);
  }
  await waitLive(page);
  const outside = page.locator('.messages .content a', { hasText: '/cat.png' }).first();
  t.equal(await outside.getAttribute('target'), '_blank', 'a link to a site: a new tab too');
  t.match(await outside.getAttribute('rel'), /noopener/, 'which cannot reach back to the app');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a user renamed: their messages and mentions of them show the new name', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/renames`,
  });
  await sendChannelMessage(
    ts.api,
    'iago',
    'general',
    'renames',
    'Hello @**Othello** and @_**Othello**',
  );
  await sendChannelMessage(ts.api, 'othello', 'general', 'renames', 'Hi Iago');
  await waitMessage(page, 'Hi Iago');
  const mentions = `[...document.querySelectorAll('.msg .content .user-mention')].map((e) => e.textContent)`;
  t.same(await page.evaluate(mentions), ['@Othello', 'Othello'], 'as sent');
  const r = await ts.api.patch('othello', 'settings', { full_name: 'Othello the Moor' });
  t.equal(r.status, 200, 'renamed');
  await waitFor(page, `${mentions}.join() === '@Othello the Moor,Othello the Moor'`);
  t.pass('the mentions show the new name (silent ones without the @)');
  await waitFor(
    page,
    `[...document.querySelectorAll('.msg .sender')].some((e) => e.textContent === 'Othello the Moor')`,
  );
  t.pass('and so does the sender of his message');
  await ts.api.patch('othello', 'settings', { full_name: 'Othello' });
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the 24-hour clock, switched in Settings: the messages shown take it at once', async (t) => {
  if (NO_CHROMIUM) return;
  // The rows are drawn again only when what they show changed: the clock is part of it.
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${design}-design/topic/logo`,
  });
  await waitMessage(page, 'What about the new logo?');
  const times = `[...document.querySelectorAll('.msg time.msg-time')].map((e) => e.textContent)`;
  const twelve = `(${times}).length > 0 && (${times}).every((x) => / [AP]M$/.test(x))`;
  const twentyFour = `(${times}).length > 0 && (${times}).every((x) => /^[0-9]{2}:[0-9]{2}$/.test(x))`;
  t.ok(await page.evaluate(twelve), 'a 12-hour clock to begin with');
  await openSettings(page, 'Display');
  const box = page.locator('.settings label.check', { hasText: '24-hour clock' }).locator('input');
  await box.check();
  await waitFor(page, twentyFour);
  t.pass('the times behind the settings are drawn again on a 24-hour clock');
  await page.click('.settings button[aria-label="Close settings"]');
  await screenshot(page, t, 'reading-24-hour-clock-1280');
  await openSettings(page, 'Display');
  await box.uncheck();
  await waitFor(page, twelve);
  t.pass('and back on a 12-hour clock');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a spoiler says it opens, and opens and closes on a click or a key', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/spoilers`,
  });
  await sendChannelMessage(
    ts.api,
    'iago',
    'general',
    'spoilers',
    '```spoiler The ending\nEveryone dies.\n```',
  );
  const header = page.locator('.msg .content .spoiler-header').first();
  await header.waitFor();
  const hidden = page.locator('.msg .content .spoiler-content').first();
  t.notOk(await hidden.isVisible(), 'closed at first');
  const headerSel = `document.querySelector('.msg .content .spoiler-header')`;
  t.equal(
    await page.evaluate(`getComputedStyle(${headerSel}).cursor`),
    'pointer',
    'its header is shown as something to click',
  );
  const mark = () =>
    page.evaluate<{ content: string; transform: string }>(`(() => {
      const before = getComputedStyle(${headerSel}, '::before');
      return { content: before.content, transform: before.transform };
    })()`);
  const closed = await mark();
  t.not(closed.content, 'none', 'with a mark that says it opens');
  await screenshot(page, t, 'spoiler-closed');
  await header.click();
  t.ok(await hidden.isVisible(), 'a click opens it');
  t.not((await mark()).transform, closed.transform, 'its mark turned');
  await header.click();
  t.notOk(await hidden.isVisible(), 'another closes it');

  // From the keyboard: its header is a button (focusable, says whether it is open).
  t.equal(await header.getAttribute('role'), 'button', 'the header is a button');
  t.equal(await header.getAttribute('aria-expanded'), 'false', 'saying it is closed');
  t.equal(await page.evaluate(`${headerSel}.tabIndex`), 0, 'in the Tab order');
  await header.focus();
  t.ok(await page.evaluate(`document.activeElement === ${headerSel}`), 'it takes the focus');
  await page.keyboard.press('Enter');
  await waitFor(page, `${headerSel}.getAttribute('aria-expanded') === 'true'`);
  t.ok(await hidden.isVisible(), 'Enter opens it');
  t.equal(
    await page.evaluate(`document.activeElement?.id`),
    '',
    'and does nothing else (no reply begun)',
  );
  await screenshot(page, t, 'spoiler-open-keyboard');
  await page.setViewportSize({ width: 390, height: 800 });
  await page.emulateMedia({ colorScheme: 'dark' });
  // (The sidebar, a drawer now, slides away first.)
  await waitFor(page, `document.getAnimations().length === 0`);
  await screenshot(page, t, 'spoiler-open-keyboard-390-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.keyboard.press(' ');
  await waitFor(page, `${headerSel}.getAttribute('aria-expanded') === 'false'`);
  t.notOk(await hidden.isVisible(), 'Space closes it');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('rendered content displays, and message text runs nothing', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general`,
  });
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await waitMessage(page, 'From outside');
  await page.waitForSelector('.content .codehilite');
  t.match(await page.textContent('.content .codehilite'), /def plan/, 'code');
  await waitFor(
    page,
    `getComputedStyle(document.querySelector('.content .katex')).fontFamily.includes('KaTeX')`,
  );
  t.pass("TeX, with KaTeX's stylesheet loaded when needed");
  t.equal(
    await page.evaluate(`document.querySelector('link[href*="katex-"]') !== null`),
    true,
    'the KaTeX stylesheet was added for this message',
  );
  await page.evaluate(`location.hash = '#narrow/channel/${design}-design'`);
  await waitMessage(page, 'Ping');
  t.equal(await page.textContent('.content .emoji'), '🎉', 'an emoji shown as its glyph');
  t.match(await page.textContent('.content .user-mention'), /Hamlet/, 'a mention');
  await page.evaluate(`location.hash = '#narrow/channel/${general}-general/topic/pictures'`);
  await waitMessage(page, 'From outside');
  await waitFor(
    page,
    `[...document.querySelectorAll('.content .message_inline_image img')].length === 2 &&
     [...document.querySelectorAll('.content .message_inline_image img')].every((i) => i.complete && i.naturalWidth > 0)`,
  );
  const srcs = await pluck(page, '.content .message_inline_image img', 'src');
  t.ok(
    srcs.some((s) => s.includes('/user_uploads/thumbnail/') || s.includes('/user_uploads/')),
    'the upload, through the session cookie',
  );
  t.ok(
    srcs.some((s) => s.includes('/external_content/')),
    'the outside image, through the proxy',
  );
  await screenshot(page, t, 'pictures-1280');
  await page.evaluate(`location.hash = '#narrow/channel/${general}-general/topic/safety'`);
  await waitMessage(page, 'onerror');
  t.equal(await page.evaluate('window.__pwned ?? null'), null, 'neither ran');
  t.same(dialogs, [], 'no dialog');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("a one-line message's toolbar shows whole, each button taking clicks", async (t) => {
  if (NO_CHROMIUM) return;
  for (const text of ['one', 'two', 'three'])
    await sendChannelMessage(ts.api, 'othello', 'general', 'toolbar', `line ${text}`);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/toolbar`,
  });
  await waitMessage(page, 'line three');
  // The middle one: a row of one line, no sender (shorter than its toolbar).
  const row = page.locator('.msg', { hasText: 'line two' });
  await row.hover();
  await row.locator('.msg-actions').waitFor();
  const missed = await page.evaluate<string[]>(`(() => {
    const missed = [];
    for (const b of document.querySelectorAll('.msg:hover .msg-actions button')) {
      const r = b.getBoundingClientRect();
      if (r.width === 0) continue; // the narrow screens' "⋮", not shown here
      for (const y of [r.top + 3, r.bottom - 3]) {
        const hit = document.elementFromPoint(r.left + r.width / 2, y);
        if (!b.contains(hit)) missed.push(b.getAttribute('aria-label') + ' at ' + Math.round(y));
      }
    }
    return missed;
  })()`);
  t.same(missed, [], 'every button is under the pointer at its top and its bottom');
  await screenshot(page, t, 'toolbar-one-line-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('paging keeps the DOM within its window', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${bulk}-archive/topic/history`,
  });
  await waitMessage(page, 'seeded message 1199');
  let most = await domMessages(page);
  t.ok(most <= WINDOW_MAX, `opened with ${most} messages in the DOM`);
  // Up to the beginning, a page at a time. A scroll while a page is still loading moves nothing
  // (on a loaded machine many do): scrolling goes on until the end shows, for at most
  // PAGING_LIMIT_MS in all (a bound on a broken test), not for a number of tries.
  for (const start = Date.now(); Date.now() - start < PAGING_LIMIT_MS;) {
    if (await page.isVisible('text=This is the beginning of the conversation.')) break;
    await scrollList(page, 'top');
    await page.waitForTimeout(150);
    most = Math.max(most, await domMessages(page));
  }
  await waitMessage(page, 'seeded message 0');
  t.ok(most <= WINDOW_MAX, `at most ${most} messages in the DOM on the way up`);
  // And down to the newest again.
  for (const start = Date.now(); Date.now() - start < PAGING_LIMIT_MS;) {
    await scrollList(page, 'bottom');
    await page.waitForTimeout(150);
    most = Math.max(most, await domMessages(page));
    const texts = await messageTexts(page);
    if (texts.some((x) => x.includes('seeded message 1199'))) break;
  }
  await waitMessage(page, 'seeded message 1199');
  t.ok(most <= WINDOW_MAX, `at most ${most} messages in the DOM on the way down`);
  watch.assertClean(t, /WebSocket|status of 401/);
});

/**
 * A topic of 150 read messages of othello's in a new channel, open in hamlet's view at the newest
 * (the 101 newest fetched, 49 older to page), scrolled up until the older page is asked for: the
 * server makes that page at once and the app gets it on `release()`, so what happens before
 * happened while the page was on its way.
 */
async function olderPageOnItsWay(channel: string, topic: string, text: (i: number) => string) {
  const { api, fx } = ts;
  const everyone = ['hamlet', 'othello', 'iago'].map((n) => fx.users[n]!.id);
  const ch = await createChannel(api, 'iago', channel, { principals: everyone });
  const ids = seedChannelMessages(ts, {
    senderId: fx.users.othello!.id,
    streamId: ch,
    topic,
    count: 150,
    recipients: everyone,
    flags: 1,
    text,
  });
  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
    hash: `#narrow/channel/${ch}-${channel}/topic/${topic}`,
    init: KEEP_SOCKET_FRAMES,
  });
  await waitMessage(page, text(149));
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  let fetched = () => {};
  const answered = new Promise<void>((r) => (fetched = r));
  await page.route(
    (u) => u.pathname === '/json/messages' && u.searchParams.get('include_anchor') === 'false',
    async (route) => {
      const response = await route.fetch();
      fetched();
      await held;
      await route.fulfill({ response });
    },
  );
  const asked = answered.then(() => true);
  for (const start = Date.now(); Date.now() - start < PAGING_LIMIT_MS;) {
    if (await Promise.race([asked, page.waitForTimeout(150).then(() => false)])) break;
    await scrollList(page, 'top');
  }
  await answered;
  /** Hands the page over and scrolls to the conversation's beginning; its message texts. */
  const arrive = async () => {
    release();
    for (const start = Date.now(); Date.now() - start < PAGING_LIMIT_MS;) {
      if (await page.isVisible('text=This is the beginning of the conversation.')) break;
      await scrollList(page, 'top');
      await page.waitForTimeout(150);
    }
    const texts = await messageTexts(page);
    await page.unrouteAll();
    return texts;
  };
  return { ids, page, watch, arrive };
}

t.test('a page of older messages leaves out one deleted while it was on its way', async (t) => {
  if (NO_CHROMIUM) return;
  const { ids, page, watch, arrive } = await olderPageOnItsWay(
    'olden',
    'days',
    (i) => `olden ${i}`,
  );
  const gone = ids[10]!;
  await ts.api.delete('iago', `messages/${gone}`);
  await socketFrame(page, '"delete_message"');
  const texts = await arrive();
  t.ok(texts.includes('olden 0') && texts.includes('olden 11'), 'the older page shows');
  t.notOk(texts.includes('olden 10'), 'without the message deleted while it was on its way');
  t.equal(await page.locator(`.msg[data-id="${gone}"]`).count(), 0, 'no row of it');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  'a page of older messages shows an edit and a move made while it was on its way',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { api } = ts;
    const { ids, page, watch, arrive } = await olderPageOnItsWay(
      'annals',
      'years',
      (i) => `annal ${i}`,
    );
    const edited = ids[10]!;
    const moved = ids[12]!;
    const e = await api.patch('othello', `messages/${edited}`, { content: 'annal 10, revised' });
    t.equal(e.status, 200, 'edited');
    const m = await api.patch('iago', `messages/${moved}`, {
      topic: 'elsewhere',
      propagate_mode: 'change_one',
    });
    t.equal(m.status, 200, 'moved');
    await socketFrame(page, '"elsewhere"');
    const texts = await arrive();
    t.ok(texts.includes('annal 0') && texts.includes('annal 11'), 'the older page shows');
    t.ok(texts.includes('annal 10, revised'), 'with the edit made while it was on its way');
    t.notOk(texts.includes('annal 10'), 'not the copy before it');
    t.equal(
      await page.locator(`.msg[data-id="${moved}"]`).count(),
      0,
      'the moved message left out',
    );
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test("the sidebar's topics: a new topic while they load, and after a move", async (t) => {
  if (NO_CHROMIUM) return;
  const { api, fx } = ts;
  const everyone = ['hamlet', 'othello', 'iago'].map((n) => fx.users[n]!.id);
  const ch = await createChannel(api, 'iago', 'shelves', { principals: everyone });
  const first = await sendChannelMessage(api, 'othello', 'shelves', 'alpha', 'On the shelf');
  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', { init: KEEP_SOCKET_FRAMES });
  // The channel's topics are made by the server at once, handed to the app after a message in
  // a new topic has come.
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  let fetched = () => {};
  const answered = new Promise<void>((r) => (fetched = r));
  await page.route(
    (u) => u.pathname === `/json/users/me/${ch}/topics`,
    async (route) => {
      const response = await route.fetch();
      fetched();
      await held;
      await route.fulfill({ response });
    },
  );
  await page.evaluate(`location.hash = '#narrow/channel/${ch}-shelves'`);
  await answered;
  // (The compose box asks for them too, after its drawing: made before the message as well.)
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 200)))`);
  await sendChannelMessage(api, 'othello', 'shelves', 'beta', 'A new shelf');
  await socketFrame(page, '"subject":"beta"');
  release();
  const topics = () => pluck(page, '.sidebar .topic .label');
  const listed = (names: string[]) =>
    waitFor(
      page,
      `(() => {
        const shown = [...document.querySelectorAll('.sidebar .topic .label')].map((e) => e.textContent);
        return ${JSON.stringify(names)}.every((n) => shown.includes(n));
      })()`,
      10_000,
    ).then(
      () => true,
      () => false,
    );
  t.ok(await listed(['alpha', 'beta']), `both topics listed (${(await topics()).join(', ')})`);
  await page.unrouteAll();
  // Moved by its sender: the channel's topics are fetched again.
  await api.patch('othello', `messages/${first}`, { topic: 'gamma', propagate_mode: 'change_one' });
  t.ok(
    await listed(['beta', 'gamma']),
    `the topic it went to listed (${(await topics()).join(', ')})`,
  );
  t.notOk(await page.isVisible('text=Loading topics…'), 'not left loading');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('search', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await page.fill('#search', 'logo');
  await page.press('#search', 'Enter');
  await waitFor(page, `location.hash === '#narrow/search/logo'`);
  // The hash changes before the app's hashchange handler swaps the list: until the title says
  // so, the list on screen is still the one the search started from (which holds 'new logo').
  await waitForTitle(page, 'Search: logo');
  await waitMessage(page, 'new logo');
  const texts = await messageTexts(page);
  t.ok(texts.length >= 1 && !texts.some((x) => /Euler|colors/.test(x)), 'only matching messages');
  t.match(await page.textContent('.title'), /Search: logo/);
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  'the message list: the first unread, "new messages below", dates; all messages, mentions, a muted channel',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { api, fx } = ts;
    const everyone = ['hamlet', 'othello', 'iago'].map((n) => fx.users[n]!.id);
    const days = await createChannel(api, 'iago', 'days', { principals: everyone });
    // Three days ago, read; then today, unread: more than a screen of each.
    seedChannelMessages(ts, {
      senderId: fx.users.iago!.id,
      streamId: days,
      topic: 'log',
      count: 40,
      recipients: everyone,
      flags: 1,
      dateSent: Math.floor(Date.now() / 1000) - 3 * 86_400,
      text: (i) => `old entry ${i}`,
    });
    for (let i = 0; i < 25; i++)
      await sendChannelMessage(api, 'othello', 'days', 'log', `new entry ${i}`);
    const quiet = await createChannel(api, 'iago', 'quiet', { principals: everyone });
    await api.post('hamlet', 'users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: quiet, property: 'is_muted', value: true }],
    });
    await sendChannelMessage(api, 'othello', 'quiet', 'hush', 'In a muted channel');

    const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
      hash: `#narrow/channel/${days}-days/topic/log`,
      height: 600,
    });
    await waitMessage(page, 'new entry 0');
    const inViewJs = (text: string) => `(() => {
        const list = document.querySelector('.messages').getBoundingClientRect();
        const row = [...document.querySelectorAll('.msg')].find((m) =>
          m.querySelector('.content')?.textContent.trim() === ${JSON.stringify(text)});
        if (!row) return false;
        const r = row.getBoundingClientRect();
        return r.top >= list.top - 1 && r.bottom <= list.bottom + 1;
      })()`;
    const inView = (text: string) => page.evaluate(inViewJs(text));
    t.equal(await inView('new entry 0'), true, 'opened at the first unread message');
    t.equal(await inView('old entry 0'), false, 'not at the oldest');
    t.equal(await inView('new entry 24'), false, 'nor at the newest');
    await page.waitForSelector('.new-below');
    t.match(
      await page.textContent('.new-below'),
      /\d+ new messages? below/,
      '"new messages below", with how many',
    );
    t.ok(
      (await pluck(page, '.date-divider')).includes('Today'),
      'a date divider where the day changes',
    );
    await screenshot(page, t, 'first-unread-1280');
    await page.click('.new-below');
    await waitFor(page, `document.querySelector('.new-below') === null`);
    // Scrolled there once the rows below took their real sizes (until shown, their size is an
    // estimate: content-visibility), which can take a frame or two after the button went.
    await waitFor(page, inViewJs('new entry 24'));
    t.pass('the button goes to the newest');
    await waitFor(
      page,
      `![...document.querySelectorAll('.msg.unread .content')].some((e) => e.textContent.trim() === 'new entry 24')`,
    );
    t.pass('what was shown was marked read');

    await page.click('.sidebar a.nav-item:has-text("All messages")');
    await waitFor(page, `location.hash === '#feed'`);
    // The hash changes before the app's hashchange handler swaps the list, and the topic shown
    // until then also holds 'new entry 24' (and 'Ping' is in all messages): each view is read once
    // the title names it.
    await waitForTitle(page, 'All messages');
    await waitMessage(page, 'new entry 24');
    t.ok(
      (await pluck(page, '.recipient')).length >= 1,
      'all messages: with their channel and topic bars',
    );
    await page.click('.sidebar a.nav-item:has-text("Mentions")');
    await waitFor(page, `location.hash === '#narrow/is/mentioned'`);
    await waitForTitle(page, 'Mentions');
    await waitMessage(page, 'Ping');
    const texts = await messageTexts(page);
    t.ok(
      texts.every((x) => x.includes('@Hamlet') || x.includes('Hamlet')),
      'mentions: only messages that mention me',
    );
    const muted = page.locator('.sidebar a.nav-item:has-text("quiet")');
    t.match(await muted.getAttribute('class'), /\bmuted\b/, 'the muted channel is dimmed');
    t.equal(await muted.locator('.badge.muted').textContent(), '1', 'its count apart, in grey');
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('a new channel from the channels list, joining and leaving one', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  const options = () => pluck(page, '#jump-options [role="option"]');
  await page.click('button[aria-label="Browse channels"]');
  await page.waitForSelector('#jump-options');
  await page.keyboard.type('General');
  // The options for all of the name (those for "Gen" would offer to create "#Gen").
  await waitFor(
    page,
    `document.querySelector('#jump-options').textContent.includes('Search messages for “General”')`,
  );
  t.notOk(
    (await options()).some((o) => o.startsWith('Create channel')),
    'a name a channel has: nothing to create',
  );
  await page.fill('input[aria-label^="Jump to"]', 'Launch plans');
  await waitFor(
    page,
    `document.querySelector('#jump-options').textContent.includes('Create channel #Launch plans')`,
  );
  t.equal((await options())[0], 'Create channel #Launch plans', 'offered first');
  await page.keyboard.press('Enter');
  // The "Create channel" dialog, the name filled in: created as it is (public, hamlet in it).
  await page.waitForSelector('[role="dialog"][aria-labelledby="create-channel-title"]');
  t.equal(await page.inputValue('input[name="channel-name"]'), 'Launch plans', 'the name given');
  await page.click('[aria-labelledby="create-channel-title"] button[type="submit"]');
  await waitFor(page, `location.hash.endsWith("-Launch-plans")`);
  await waitFor(
    page,
    `[...document.querySelectorAll('.sidebar .nav-item')].some((a) => a.textContent.includes('Launch plans'))`,
  );
  const subs = await ts.api.get('hamlet', 'users/me/subscriptions');
  t.ok(
    (subs.body.subscriptions as { name: string }[]).some((x) => x.name === 'Launch plans'),
    'created, and hamlet is in it',
  );

  // Othello, not in it, joins it from the same list.
  const other = await openApp(b, ts.url, ts.fx, 'othello');
  await other.page.keyboard.press('Control+k');
  await other.page.waitForSelector('#jump-options');
  await other.page.keyboard.type('launch');
  await waitFor(
    other.page,
    `document.querySelector('#jump-options').textContent.includes('Not subscribed: join')`,
  );
  await other.page.keyboard.press('Enter');
  await waitFor(other.page, `location.hash.endsWith("-Launch-plans")`);
  t.pass('joined and shown');
  const inSidebar = `[...document.querySelectorAll('.sidebar .nav-item')].some((a) => a.textContent.includes('Launch plans'))`;
  await waitFor(other.page, inSidebar);
  // Leaving from the channel's bar: out of the sidebar, the view stays, and it can be joined again.
  await other.page.click('.topbar .membership:has-text("Leave")');
  await waitFor(other.page, `!${inSidebar}`);
  t.equal(
    await other.page.textContent('.topbar .membership'),
    'Join',
    'left: the bar offers to join',
  );
  t.match(await other.page.evaluate('location.hash'), /-Launch-plans$/, 'the view stays');
  t.equal(
    await other.page.evaluate(
      `document.querySelector('select[aria-label="Channel"]').selectedOptions[0]?.textContent`,
    ),
    '#Launch plans (not subscribed)',
    'the compose box still says where a message would go',
  );
  const othelloSubs = async () =>
    (
      (await ts.api.get('othello', 'users/me/subscriptions')).body.subscriptions as {
        name: string;
      }[]
    ).map((x) => x.name);
  t.notOk((await othelloSubs()).includes('Launch plans'), 'unsubscribed');
  await other.page.click('.topbar .membership:has-text("Join")');
  await waitFor(other.page, inSidebar);
  t.ok((await othelloSubs()).includes('Launch plans'), 'joined again from the bar');
  watch.assertClean(t, /WebSocket|status of 401/);
  other.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the settings are loaded when they first open, not with the first screen', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  const scripts = () =>
    page.evaluate<string[]>(
      `performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((p) => p.endsWith('.js'))`,
    );
  const first = await scripts();
  t.ok(first.length > 0, `the first screen's scripts: ${first.join(', ')}`);
  t.equal(await page.locator('[role="dialog"]').count(), 0, 'no settings drawn');
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.waitForSelector('[role="dialog"] h3:has-text("Account")');
  const later = (await scripts()).filter((p) => !first.includes(p));
  t.ok(later.length > 0, `the settings' code came when they opened: ${later.join(', ')}`);
  await page.click('a.nav-item:has-text("Bots")');
  await page.waitForSelector('[role="dialog"] h3:has-text("Bots")');
  t.pass("the other parts' panels come with them");
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('[role="dialog"]') === null`);
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.waitForSelector('[role="dialog"] h3:has-text("Account")');
  // (Other parts may come meanwhile, fetched when the browser is idle: web/app/lazy.tsx.)
  const all = await scripts();
  t.same(
    later.filter((p) => all.indexOf(p) !== all.lastIndexOf(p)),
    [],
    'fetched once',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('layouts: 390 and 1280 pixels, light and dark; logout', async (t) => {
  if (NO_CHROMIUM) return;
  for (const dark of [false, true]) {
    const mode = dark ? 'dark' : 'light';
    const wide = await openApp(b, ts.url, ts.fx, 'othello', {
      hash: `#narrow/channel/${design}-design/topic/logo`,
      dark,
    });
    const bg = String(await wide.page.evaluate(`getComputedStyle(document.body).backgroundColor`));
    t.equal(
      dark ? bg !== 'rgb(255, 255, 255)' : bg === 'rgb(255, 255, 255)',
      true,
      `${mode}: the page's background (${bg})`,
    );
    t.ok(await wide.page.isVisible('.sidebar'), `${mode} 1280: the sidebar is shown`);
    await screenshot(wide.page, t, `topic-1280-${mode}`);
    const narrow = await openApp(b, ts.url, ts.fx, 'othello', {
      hash: `#narrow/channel/${design}-design/topic/logo`,
      width: 390,
      height: 800,
      dark,
    });
    const box = await narrow.page.locator('.sidebar').boundingBox();
    t.ok(box === null || box.x + box.width <= 0, `${mode} 390: the sidebar is a closed drawer`);
    await screenshot(narrow.page, t, `topic-390-${mode}`);
    await narrow.page.click('button[aria-label="Open the sidebar"]');
    await waitDrawerOpen(narrow.page);
    await screenshot(narrow.page, t, `drawer-390-${mode}`);
    await narrow.page.click('.sidebar a.nav-item:has-text("general")');
    await waitFor(narrow.page, `document.querySelector('.app').dataset.drawer === 'closed'`);
    t.pass(`${mode} 390: choosing a channel closes the drawer`);
    // The drawer closes in the click's task, the view changes at the hashchange after it: until
    // the title names general, the arrows below would select in the topic shown before. And the
    // drawer is hidden only once it has slid out (the screenshots below).
    await waitForTitle(narrow.page, 'general');
    await waitFor(
      narrow.page,
      `getComputedStyle(document.querySelector('.sidebar')).visibility === 'hidden'`,
    );
    // The title comes with the view, its messages with their fetch: an arrow pressed before
    // they are drawn selects nothing (seen under load).
    await waitFor(narrow.page, `document.querySelectorAll('.messages .msg').length > 0`);
    // A selected message shows its actions (a phone has no hover).
    await narrow.page.mouse.move(200, 20); // off the list: no hovered message
    await narrow.page.focus('.messages');
    await narrow.page.keyboard.press('ArrowUp');
    await narrow.page.waitForSelector('.msg.selected .msg-actions');
    // Its toolbar covers neither the message's time nor its text.
    const overlaps = await narrow.page.evaluate<string[]>(`(() => {
      const row = document.querySelector('.msg.selected');
      const bar = row.querySelector('.msg-actions').getBoundingClientRect();
      const over = (r) => r.left < bar.right && bar.left < r.right && r.top < bar.bottom && bar.top < r.bottom;
      return [...row.querySelectorAll('time, .sender, .content')]
        .filter((el) => over(el.getBoundingClientRect()))
        .map((el) => el.className || el.tagName);
    })()`);
    t.same(overlaps, [], `${mode} 390: the toolbar covers nothing of the message`);
    await screenshot(narrow.page, t, `selected-390-${mode}`);
    // The dialogs on a phone: the jump list and the settings.
    await narrow.page.keyboard.press('Control+k');
    await narrow.page.waitForSelector('.jump input:focus');
    await narrow.page.keyboard.type('de');
    await waitFor(
      narrow.page,
      `document.querySelector('#jump-options')?.textContent.includes('Search messages for “de”')`,
    );
    await screenshot(narrow.page, t, `jump-390-${mode}`);
    await narrow.page.keyboard.press('Escape');
    await narrow.page.evaluate(`location.hash = '#settings/display'`);
    // Not just a dialog: the settings' code comes when they first open ("Loading settings…"
    // until then).
    await narrow.page.waitForSelector('.settings h3:has-text("Display")');
    await screenshot(narrow.page, t, `settings-390-${mode}`);
    await narrow.page.keyboard.press('Escape');
    wide.watch.assertClean(t, /WebSocket|status of 401/);
    narrow.watch.assertClean(t, /WebSocket|status of 401/);
  }
  // The theme toggle: dark chosen in the app, kept by the server's setting.
  const { page } = await openApp(b, ts.url, ts.fx, 'cordelia');
  // The app shows the theme at once and saves it after: the reload must come after the server
  // has it (else the reload can cut the request off, or register's answer still says automatic).
  const saved = page.waitForResponse(
    (r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === '/json/settings',
  );
  await page.click('.sidebar-foot button[aria-label="Use the dark theme"]');
  await waitFor(page, `document.documentElement.dataset.theme === 'dark'`);
  t.equal((await saved).status(), 200, 'the choice saved');
  await page.reload();
  await waitLive(page);
  t.equal(
    await page.evaluate('document.documentElement.dataset.theme'),
    'dark',
    'the choice survives a reload',
  );
  await page.click('.me');
  await page.click('text=Log out');
  await page.waitForSelector('input[name="username"]');
  await page.reload();
  await page.waitForSelector('input[name="username"]');
  t.pass('logged out, and still after a reload');
});
