/**
 * The web app in chromium: what an empty view says. "Start the conversation below" only where a
 * conversation can start; Starred and Mentions say what would show there; Recent conversations
 * says it has none (once its fetch answered); the Inbox, that nothing is unread.
 */
import t from 'tap';
import { openApp } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

t.test('Starred and Mentions, empty, at 390 px', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/is/starred',
    width: 390,
    height: 844,
  });
  const empty = async () => (await page.textContent('.messages .empty'))?.trim() ?? '';
  await page.waitForSelector('.messages .empty');
  t.equal(await empty(), 'No starred messagesStar a message to keep it here.', 'starred');
  await screenshot(page, t, 'starred-empty-390');
  await page.goto(ts.url + '/#narrow/is/mentioned');
  await page.waitForSelector('.messages .empty:has-text("No mentions")');
  t.match(await empty(), /^No mentionsMessages that mention you/, 'mentions');
  await page.goto(ts.url + '/#narrow/dm/' + String(ts.fx.users.othello!.id) + '-Othello');
  await page.waitForSelector('.messages .empty:has-text("No messages here yet")');
  t.equal(
    await empty(),
    'No messages here yetStart the conversation below.',
    'a conversation: one can start it below',
  );
  // Recent conversations, with none: said so once its fetch answered (not "Loading…").
  await page.goto(ts.url + '/#recent');
  await page.waitForSelector('.recent-view .page-empty:has-text("No conversations yet.")');
  t.pass('recent conversations: none yet');
  await screenshot(page, t, 'recent-empty-390');
  // The Inbox, nothing unread: said so, as the reference says it.
  await page.goto(ts.url + '/#inbox');
  await page.waitForSelector('.inbox-view .page-empty');
  t.equal(
    (await page.textContent('.inbox-view .page-empty'))?.trim(),
    'There are no unread messages in your inbox.',
    'the inbox: nothing unread',
  );
  await screenshot(page, t, 'inbox-empty-390');
  watch.assertClean(t, /WebSocket|status of 401/);
});
