/**
 * The web app in chromium, the parts loaded when first used (web/app/lazy.tsx: the message list
 * and compose box, the dialogs, cards and picker, the settings; docs/web.md, "Budgets").
 *
 * A chunk that cannot be fetched (offline, or the server restarted with a new build whose chunks
 * have other names): every script not in the page's first load (index.html's script and its
 * modulepreloads) is refused while the test says so. Opened from the Inbox (the home view, drawn
 * from the first load alone), the status dialog and the message list say they could not be
 * loaded, each with Try again; Esc closes the dialog's; once the chunks come again, Try again
 * shows the messages and the compose box, and the dialog opens as usual, its field focused.
 *
 * A Controller method whose code is in a refused chunk (Leave, in the top bar) says so in a toast.
 *
 * Slow chunks: `u` on a message (a keyboard shortcut) before the dialogs' chunk has come still
 * opens the card, focused, once it comes; Ctrl+K and typing at once, before Jump's code has come,
 * loses no key (a field of the same look takes them, handed to Jump when it is drawn).
 *
 * The login form (a chunk of its own): on a first visit its chunk is asked while the session's
 * answer is held back (fails with the form in the first load: nothing is asked); refused, the
 * page says so with Try again, which draws the form with its first field focused.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

let firstLoad: Set<string>;
const { b, ts } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'iago', members: ['hamlet', 'othello'] } },
  seed: async ({ ts }) => {
    await sendChannelMessage(ts.api, 'othello', 'general', 'plans', 'The plans are ready.');
    // The page's first load: its script and the chunks it preloads.
    const html = await (await fetch(ts.url + '/')).text();
    firstLoad = new Set(
      [
        ...html.matchAll(/<(?:script type="module" src|link rel="modulepreload" href)="([^"]+)"/g),
      ].map((m) => m[1]!),
    );
  },
});

/** Scripts under /static/ not in the first load: refused (`refuse()`) or held back (`delayMs`). */
async function routeChunks(page: Page, how: { refuse?: () => boolean; delayMs?: number }) {
  const asked: string[] = [];
  await page.route(/\/static\/[^/]+\.js$/, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (firstLoad.has(path)) return route.continue();
    asked.push(path);
    if (how.refuse?.()) return route.abort('internetdisconnected');
    if (how.delayMs) await new Promise((r) => setTimeout(r, how.delayMs));
    return route.continue();
  });
  return asked;
}

t.test('a chunk that cannot be fetched: said, with Try again; then it opens', async (t) => {
  if (NO_CHROMIUM) return;
  t.ok(firstLoad.size >= 1, `the first load: ${[...firstLoad].join(', ')}`);
  // Refused from the login on (the login form's own chunk comes, as the page's first load).
  let offline = false;
  let asked: string[] = [];
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#inbox',
    setup: async (p) => {
      asked = await routeChunks(p, { refuse: () => offline });
      await p.route(/\/json\/login$/, (route) => {
        offline = true;
        return route.continue();
      });
    },
  });
  await page.waitForSelector('.inbox-list');
  t.notOk(await page.isVisible('.messages'), 'the Inbox: no message list');

  // The status dialog (the sidebar's button).
  await page.click('.status-btn');
  const alert = page.locator('.lazy-dialog [role="alert"]');
  await alert.waitFor();
  t.match(
    await alert.textContent(),
    /^Could not load this dialog\. .*Try again Reload the page$/,
    'said, with Try again and Reload the page',
  );
  t.ok(await alert.isVisible(), 'shown at once (not behind the loading note’s delay)');
  await screenshot(page, t, 'dialog-failed-1280');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.lazy-dialog', { state: 'detached' });
  t.pass('Esc closes it');

  // The message list: a channel's view.
  await page.evaluate(`location.hash = '#narrow/channel/general/topic/plans'`);
  const paneAlert = page.locator('.lazy-part [role="alert"]');
  await paneAlert.waitFor();
  t.match(await paneAlert.textContent(), /^Could not load the messages\./, 'said in its place');
  t.notOk(await page.isVisible('.compose'), 'no compose box yet');
  t.ok(asked.length > 0, 'the chunks were asked for and refused');
  await screenshot(page, t, 'messages-failed-1280');

  // A Controller method whose code is a piece's (controller-channels.ts): a toast says it could
  // not be loaded, and nothing else happens (the user is still in the channel).
  await page.evaluate(`location.hash = '#narrow/channel/general'`);
  await page.click('.membership');
  await page.locator('.toast', { hasText: 'Could not load a part of the app.' }).waitFor();
  t.pass('Leave, its code refused: said in a toast');
  t.equal(await page.textContent('.membership'), 'Leave', 'still in the channel');
  await page.evaluate(`location.hash = '#narrow/channel/general/topic/plans'`);
  await paneAlert.waitFor();

  // Back online: Try again.
  offline = false;
  await paneAlert.getByRole('button', { name: 'Try again' }).click();
  await waitMessage(page, 'The plans are ready.');
  await page.waitForSelector('.compose');
  t.notOk(await page.isVisible('.lazy-part'), 'the note gone');

  await page.click('.status-btn');
  await page.getByRole('dialog', { name: 'Set status' }).waitFor();
  await waitFor(page, `!!document.activeElement?.closest('.status-dialog')`);
  t.pass('the dialog opens, focused');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.status-dialog', { state: 'detached' });
  // Chromium reports each refused fetch on the console; nothing else.
  watch.assertClean(t, /Failed to load resource|net::ERR_INTERNET_DISCONNECTED|WebSocket/);
});

t.test(
  'slow chunks: a key that opens a card before its code came still opens it, focused',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#narrow/channel/general/topic/plans',
      setup: async (p) => {
        await routeChunks(p, { delayMs: 1500 });
      },
    });
    await waitMessage(page, 'The plans are ready.');
    t.notOk(await page.evaluate(`!!document.querySelector('.profile-card')`), 'no card yet');
    await page.click('#compose-text');
    await page.keyboard.press('Escape');
    await waitFor(page, `document.activeElement?.classList.contains('messages')`);
    await page.keyboard.press('ArrowUp');
    await waitFor(page, `!!document.querySelector('.msg.selected')`);
    await page.keyboard.press('u');
    await page.waitForSelector('.profile-card');
    await waitFor(page, `!!document.activeElement?.closest('.profile-card')`);
    t.pass('the card, focused');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.profile-card', { state: 'detached' });
    await waitFor(page, `document.activeElement?.classList.contains('messages')`);
    t.pass('the focus back on the list');
    watch.assertClean(t, /WebSocket/);
  },
);

t.test('slow chunks: Ctrl+K and typing at once lose no key', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#inbox',
    setup: async (p) => {
      await routeChunks(p, { delayMs: 3000 });
    },
  });
  await page.waitForSelector('.inbox-search');
  await page.keyboard.press('Control+k');
  await page.keyboard.type('gen');
  t.notOk(await page.isVisible('#jump-options'), 'Jump’s code not come yet');
  t.equal(
    await page.evaluate(
      `document.activeElement?.closest('[role="dialog"]')?.getAttribute('aria-label')`,
    ),
    'Jump to',
    'the keys went to its field',
  );
  await page.waitForSelector('#jump-options');
  t.equal(await page.inputValue('.jump input.field'), 'gen', 'what was typed, kept');
  await waitFor(page, `document.activeElement?.matches('.jump input.field')`);
  await page.keyboard.type('e');
  t.equal(await page.inputValue('.jump input.field'), 'gene', 'typed on at its end');
  await page.keyboard.press('Enter');
  await waitFor(page, `location.hash.startsWith('#narrow/channel/')`);
  t.pass('Enter goes to the channel');
  watch.assertClean(t, /WebSocket/);
});

t.test('All messages as the home view: its chunk is fetched beside the data', async (t) => {
  if (NO_CHROMIUM) return;
  await ts.api.patch('othello', 'settings', { web_home_view: 'all_messages' });
  // The first visit in this browser learns the home view with the data (and keeps it).
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'othello', { hash: '#' });
  await waitMessage(page, 'The plans are ready.');
  t.equal(
    await page.evaluate(`localStorage.getItem('confab.home-view')`),
    'all_messages',
    'the home view is kept in this browser',
  );
  // The next load: the data held back a while; the message list's chunk is asked meanwhile.
  let answered = false;
  const asked: string[] = [];
  await page.route(/\/json\/register$/, async (route) => {
    await new Promise((r) => setTimeout(r, 1500));
    await route.continue();
    answered = true;
  });
  await page.route(/\/static\/[^/]+\.js$/, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (!firstLoad.has(path) && !answered) asked.push(path);
    return route.continue();
  });
  await page.reload();
  await waitMessage(page, 'The plans are ready.');
  t.ok(asked.length >= 1, `chunks asked before the data came: ${asked.join(', ')}`);
  t.ok(await page.isVisible('.compose-bar'), 'the compose box is there');
  await screenshot(page, t, 'home-all-messages-1280');
  await ts.api.patch('othello', 'settings', { web_home_view: 'inbox' });
  watch.assertClean(t, /WebSocket/);
  await page.close();
});

t.test(
  'the login form: its chunk asked beside the session; refused, said with Try again',
  async (t) => {
    if (NO_CHROMIUM) return;
    // A first visit (no record of a session in this browser): the session's answer held back a
    // while; the login form's chunk is asked meanwhile, not after it.
    const page = await b.newPage({ viewport: { width: 1280, height: 800 } });
    const watch = await watchPage(page);
    let offline = false;
    const asked = await routeChunks(page, { refuse: () => offline });
    const seen: { before: string[] | null } = { before: null };
    await page.route(/\/json\/session/, async (route) => {
      await new Promise((r) => setTimeout(r, 1000));
      seen.before = [...asked];
      await route.continue();
    });
    await page.goto(ts.url + '/');
    await page.waitForSelector('input[name="username"]');
    t.ok(
      seen.before !== null && seen.before.length >= 1,
      `chunks asked before the session's answer: ${seen.before?.join(', ')}`,
    );
    await waitFor(page, `document.activeElement?.getAttribute('name') === 'username'`);
    t.pass('the form is drawn with its first field focused');
    await screenshot(page, t, 'login-1280');
    await page.unroute(/\/json\/session/);

    // The record says the session ended (a logout): the form's chunk is asked at once, and when it
    // cannot be fetched the page says so, with Try again, which then draws the form, focused.
    await page.evaluate(`localStorage.setItem('confab.session', '0')`);
    offline = true;
    await page.reload();
    const alert = page.locator('.lazy-part [role="alert"]');
    await alert.waitFor();
    t.match(
      await alert.textContent(),
      /^Could not load the login form\. .*Try again Reload the page$/,
      'said, with Try again and Reload the page',
    );
    await screenshot(page, t, 'login-failed-1280');
    offline = false;
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page.waitForSelector('input[name="username"]');
    await waitFor(page, `document.activeElement?.getAttribute('name') === 'username'`);
    t.pass('Try again: the form, its first field focused');
    await page.setViewportSize({ width: 390, height: 800 });
    await screenshot(page, t, 'login-390');
    watch.assertClean(t, /Failed to load resource|net::ERR_INTERNET_DISCONNECTED|WebSocket/);
    await page.close();
  },
);
