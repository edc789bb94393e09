/**
 * The settings panels of web/app/settings-more.tsx in chromium, with the real server: a member's
 * alert words (added, several at once, and removed, a second session following; a word of theirs
 * highlighted in a message another user sends, not in its code or link) and uploaded files (newest
 * first, with the messages using them, the realm's quota, filtered, one uploaded meanwhile
 * showing, one deleted after confirming: gone from the list and its file answering 404); an
 * administrator's linkifiers (the server's refusal shown, added, edited, reordered, deleted; a
 * message sent after renders the link; a member reads them, live), default channels (several
 * ticked and added at once, a private one refused with its name and the server's words and left
 * ticked; a new account joins those added; a member reads them) and code playgrounds (added,
 * deleted; a member reads them). Each panel checked by axe (test/helpers/a11y.ts) and shot at
 * 1280 and 390 pixels.
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import {
  openApp,
  openSettings,
  pluck,
  waitFor,
  waitForTitle,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { check } from '../helpers/a11y.js';
import { assertSuccess } from '../helpers/api.js';
import { createByApi } from '../helpers/accounts.js';
import { createChannel, setRealmSettings } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { download, upload } from '../helpers/uploads.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

/** The panel checked by axe and shot at 1280 pixels, then at 390, then back. */
async function bothWidths(t: Test, page: Page, name: string): Promise<void> {
  await check(t, page, `${name} 1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await check(t, page, `${name} 390`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

const texts = (page: Page, selector: string): Promise<string[]> => pluck(page, selector);

/** Confirms the app's question (its action button). */
async function confirm(page: Page, action: string): Promise<void> {
  await page.click(`.dialog.confirm button:has-text("${action}")`);
  await waitFor(page, `!document.querySelector('.dialog.confirm')`);
}

t.test('alert words: added, removed, live, highlighted in a message', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!.id;
  const othello = ts.fx.users.othello!.id;
  const general = await createChannel(ts.api, 'othello', 'general', {
    principals: [hamlet, othello],
  });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  const other = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Alert words');
  await openSettings(other.page, 'Alert words');
  await page.waitForSelector('text=You have no alert words yet.');

  await page.fill('input[placeholder="release, outage"]', ' release, Outage ,, ');
  await page.click('form[aria-label="Add alert words"] button:has-text("Add")');
  await page.waitForSelector('[role="status"]:has-text("Added 2 alert words.")');
  t.same(await texts(page, '.more-list .more-word'), ['Outage', 'release'], 'both, sorted');
  t.equal(await page.inputValue('input[placeholder="release, outage"]'), '', 'the field emptied');
  t.same(
    assertSuccess(t, await ts.api.get('hamlet', 'users/me/alert_words')).alert_words,
    ['release', 'Outage'],
    'on the server',
  );
  await other.page.waitForSelector('.more-list li:has-text("Outage")');
  t.same(await texts(other.page, '.more-list .more-word'), ['Outage', 'release'], 'live');

  await page.click('button[aria-label="Remove Outage"]');
  const gone = `![...document.querySelectorAll('.more-word')].some((e) => e.textContent === 'Outage')`;
  await waitFor(page, gone);
  t.same(await texts(page, '.more-list .more-word'), ['release'], 'removed');
  await waitFor(other.page, gone);
  t.same(await texts(other.page, '.more-list .more-word'), ['release'], 'removed there too');
  await waitFor(page, `document.activeElement?.placeholder === 'release, outage'`);
  t.pass('the focus, its button gone, on the field');

  // An empty form says why nothing is sent.
  await page.click('form[aria-label="Add alert words"] button:has-text("Add")');
  await page.waitForSelector('[role="alert"]:has-text("Type a word")');
  await bothWidths(t, page, 'alert words');

  // Another user's message with the word: highlighted where it is a word, not in code or a link.
  await page.click('button[aria-label="Close settings"]');
  await page.evaluate(`location.hash = '#narrow/channel/${general}-general'`);
  await waitForTitle(page, 'general');
  await sendChannelMessage(
    ts.api,
    'othello',
    'general',
    'plans',
    'The RELEASE is ready: see `release` and [the release notes](https://example.com/r). Prerelease done.',
  );
  await waitMessage(page, 'Prerelease done');
  t.same(await texts(page, '.msg .content .alert-word'), ['RELEASE'], 'only the word in the text');
  await sendChannelMessage(ts.api, 'othello', 'general', 'plans', 'Nothing to see here.');
  await waitMessage(page, 'Nothing to see');
  t.same(await texts(page, '.msg .content .alert-word'), ['RELEASE'], 'none in other messages');
  await check(t, page, 'alert word in a message 1280');
  const dark = await openApp(b, ts.url, ts.fx, 'hamlet', {
    dark: true,
    width: 390,
    height: 844,
    hash: `#narrow/channel/${general}-general`,
  });
  await waitMessage(dark.page, 'Prerelease done');
  await dark.page.waitForSelector('.msg .content .alert-word');
  await check(t, dark.page, 'alert word in a message 390 dark');
  watch.assertClean(t);
  dark.watch.assertClean(t);
});

t.test('uploaded files: listed, filtered, live, deleted', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  setRealmSettings(ts, { upload_quota_mib: 5 });
  const hamlet = ts.fx.users.hamlet!.id;
  await createChannel(ts.api, 'hamlet', 'general', { principals: [hamlet] });
  const put = async (filename: string, data: string) =>
    assertSuccess(t, await upload(ts.api, 'hamlet', [{ filename, data }])).url as string;
  const notes = await put('notes.txt', 'the notes');
  const plan = await put('plan.txt', 'x'.repeat(3000));
  const msg = await sendChannelMessage(ts.api, 'hamlet', 'general', 'files', `[plan](${plan})`);

  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Uploaded files');
  await page.waitForSelector('table[aria-label="Uploaded files"]');
  t.same(
    await texts(page, '.more-table tbody td.more-name'),
    ['plan.txt', 'notes.txt'],
    'newest first',
  );
  const row = 'tr:has-text("plan.txt")';
  t.equal(await page.getAttribute(`${row} a:has-text("plan.txt")`, 'href'), plan, 'the file');
  t.equal(
    (await page.textContent(`${row} a[href="#narrow/id/${msg}"]`))?.trim(),
    '#general › files',
    'the message using it, by where it is',
  );
  t.equal(
    (await page.textContent(`${row} td[data-label="Size"]`))?.trim(),
    '2.9 KB',
    'its size (3000 bytes, in 1024s)',
  );
  t.match(await page.textContent('.settings section'), /of its 5 MB/, 'the realm’s quota');

  await page.fill('input[aria-label="Filter uploaded files"]', 'NOTES');
  await waitFor(page, `document.querySelectorAll('.more-table tbody tr').length === 1`);
  t.same(await texts(page, '.more-table tbody td.more-name'), ['notes.txt'], 'filtered');
  await page.fill('input[aria-label="Filter uploaded files"]', '');

  // Uploaded meanwhile (another client): shown by its event, at the top.
  await put('later.txt', 'later');
  await page.waitForSelector('.more-table td:has-text("later.txt")');
  t.same(await texts(page, '.more-table tbody td.more-name'), [
    'later.txt',
    'plan.txt',
    'notes.txt',
  ]);
  await bothWidths(t, page, 'uploaded files');

  // Deleted after confirming: gone here and from the server.
  await page.click('button[aria-label="Delete notes.txt"]');
  await page.waitForSelector('.dialog.confirm:has-text("Delete notes.txt?")');
  await check(t, page, 'uploaded files delete question 1280');
  await confirm(page, 'Delete');
  await waitFor(page, `!document.querySelector('.more-table td.more-name a[href$="notes.txt"]')`);
  t.equal((await download(ts.api, 'hamlet', notes)).status, 404, 'the file is gone');
  await waitFor(
    page,
    `document.activeElement?.getAttribute('aria-label') === 'Filter uploaded files'`,
  );
  t.pass('the focus, its row gone, on the filter');
  t.equal((await download(ts.api, 'hamlet', plan)).status, 200, 'the others stay');

  // The link to the message opens it.
  await page.click(`${row} a[href="#narrow/id/${msg}"]`);
  await waitFor(page, `!document.querySelector('.settings')`);
  await page.waitForSelector(`.msg[data-id="${msg}"]`);
  watch.assertClean(t, /status of 404/);
});

t.test('linkifiers: an administrator edits, a member reads', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const ids = ['iago', 'hamlet'].map((n) => ts.fx.users[n]!.id);
  await createChannel(ts.api, 'iago', 'general', { principals: ids });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  const member = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Linkifiers');
  await openSettings(member.page, 'Linkifiers');
  t.equal(await member.page.locator('form[aria-label="Add a linkifier"]').count(), 0, 'no form');
  await member.page.waitForSelector('text=Only administrators can change');

  const form = 'form[aria-label="Add a linkifier"]';
  // The server's refusal, as it says it.
  await page.fill(`${form} input[placeholder="#(?P<id>[0-9]+)"]`, '#(?P<id>[0-9]+');
  await page.fill(
    `${form} input[placeholder^="https://github.com"]`,
    'https://tracker.example.com/{id}',
  );
  await page.click(`${form} button:has-text("Add linkifier")`);
  await page.waitForSelector('.settings [role="alert"]');
  const refusal = await ts.api.post('iago', 'realm/filters', {
    pattern: '#(?P<id>[0-9]+',
    url_template: 'https://tracker.example.com/{id}',
  });
  t.equal(refusal.status, 400);
  t.equal(
    (await page.textContent('.settings [role="alert"]'))?.trim(),
    refusal.body.msg,
    'the server’s words',
  );

  await page.fill(`${form} input[placeholder="#(?P<id>[0-9]+)"]`, '#(?P<id>[0-9]+)');
  await page.click(`${form} button:has-text("Add linkifier")`);
  await page.waitForSelector('ol[aria-label="Linkifiers"] li');
  t.match(
    await page.textContent('ol[aria-label="Linkifiers"] li'),
    '#123 → https://tracker.example.com/123',
    'with an example',
  );
  await member.page.waitForSelector(
    'ol[aria-label="Linkifiers"] li:has-text("tracker.example.com")',
  );
  t.equal(await member.page.locator('button:has-text("Delete")').count(), 0, 'read-only');

  // A message after it renders the link (the server's rendering).
  const sent = await sendChannelMessage(ts.api, 'hamlet', 'general', 'bugs', 'About #42 again.');
  const got = assertSuccess(t, await ts.api.get('hamlet', `messages/${sent}`));
  t.match(
    (got.message as { content: string }).content,
    'href="https://tracker.example.com/42"',
    'the message links it',
  );

  // A second one, then edit it and move it first.
  await page.fill(`${form} input[placeholder="#(?P<id>[0-9]+)"]`, 'PR (?P<n>[0-9]+)');
  await page.fill(`${form} input[placeholder^="https://github.com"]`, 'https://pr.example.com/{n}');
  await page.click(`${form} button:has-text("Add linkifier")`);
  await page.waitForSelector('ol[aria-label="Linkifiers"] li:has-text("pr.example.com")');
  await page.click('button[aria-label="Edit PR (?P<n>[0-9]+)"]');
  const edit = 'form[aria-label="Edit the linkifier"]';
  await page.fill(
    `${edit} input[placeholder^="https://github.com"]`,
    'https://review.example.com/{n}',
  );
  await page.click(`${edit} button:has-text("Save")`);
  await page.waitForSelector('ol[aria-label="Linkifiers"] li:has-text("review.example.com")');
  await page.focus('button[aria-label="Move PR (?P<n>[0-9]+) up"]');
  await page.keyboard.press('Enter');
  await member.page.waitForSelector(
    'ol[aria-label="Linkifiers"] li:first-child:has-text("review.example.com")',
  );
  await waitFor(
    page,
    `document.activeElement?.getAttribute('aria-label') === 'Move PR (?P<n>[0-9]+) down'`,
  );
  t.pass('the focus follows the row moved (on its other arrow at the top)');
  const listed = assertSuccess(t, await ts.api.get('iago', 'realm/linkifiers')).linkifiers as {
    pattern: string;
    url_template: string;
  }[];
  t.same(
    listed.map((l) => l.url_template),
    ['https://review.example.com/{n}', 'https://tracker.example.com/{id}'],
    'edited and reordered on the server',
  );
  await bothWidths(t, page, 'linkifiers');
  await bothWidths(t, member.page, 'linkifiers member');

  await page.click('button[aria-label="Delete #(?P<id>[0-9]+)"]');
  await confirm(page, 'Delete');
  await member.page.waitForSelector('ol[aria-label="Linkifiers"] li:has-text("tracker")', {
    state: 'detached',
  });
  await waitFor(page, `document.querySelectorAll('ol[aria-label="Linkifiers"] li').length === 1`);
  t.same(
    ts.server.store.linkifiers.byRealm(ts.fx.realmId).map((l) => l.pattern),
    ['PR (?P<n>[0-9]+)'],
    'deleted',
  );
  watch.assertClean(t, /status of 400/);
  member.watch.assertClean(t);
});

t.test('default channels: an administrator adds several at once, a member reads', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const ids = ['iago', 'hamlet'].map((n) => ts.fx.users[n]!.id);
  await createChannel(ts.api, 'iago', 'announce', { principals: ids });
  await createChannel(ts.api, 'iago', 'welcome', { principals: ids });
  await createChannel(ts.api, 'iago', 'later', { principals: ids });
  await createChannel(ts.api, 'iago', 'secret', { principals: ids, invite_only: true });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  const member = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Default channels');
  await openSettings(member.page, 'Default channels');
  t.equal(await member.page.locator('form[aria-label="Add default channels"]').count(), 0);

  // Only public channels offered (the reference's picker leaves private ones out: the server
  // refuses them); two ticked, one request each.
  const form = 'form[aria-label="Add default channels"]';
  t.same(
    await texts(page, `${form} label`),
    ['#announce', '#later', '#welcome'],
    'the private channel is not offered',
  );
  await page.click(`${form} button[type="submit"]`);
  t.equal(
    (await page.textContent('.settings [role="alert"]'))?.trim(),
    'Choose the channels to add.',
    'none ticked',
  );
  for (const name of ['announce', 'welcome'])
    await page.getByRole('checkbox', { name, exact: true }).check();
  t.equal((await page.textContent(`${form} button[type="submit"]`))?.trim(), 'Add 2 channels');
  await page.click(`${form} button[type="submit"]`);
  await page.waitForSelector('.settings [role="status"]:has-text("default channels")');
  t.equal(
    (await page.textContent('.settings [role="status"]'))?.trim(),
    '#announce and #welcome are now default channels.',
  );
  // (Each name after its swatch, # for a public channel.)
  t.same(
    await texts(page, 'ul[aria-label="Default channels"] li .more-channel'),
    ['#announce', '#welcome'],
    'both listed',
  );
  t.equal(
    await page.locator(`${form} input[type="checkbox"]`).count(),
    1,
    'those added are no longer offered',
  );

  // A channel made private while its request is on the way: the server's refusal, said with
  // the channel's name.
  const later = assertSuccess(t, await ts.api.get('iago', 'get_stream_id', { stream: 'later' }))
    .stream_id as number;
  await page.route('**/json/default_streams', async (route) => {
    if (route.request().method() === 'POST')
      assertSuccess(t, await ts.api.patch('iago', `streams/${later}`, { is_private: true }));
    await route.continue();
  });
  await page.getByRole('checkbox', { name: 'later', exact: true }).check();
  await page.click(`${form} button[type="submit"]`);
  await page.waitForSelector('.settings [role="alert"]:has-text("later")');
  t.equal(
    (await page.textContent('.settings [role="alert"]'))?.trim(),
    '#later was not added: Private channels cannot be made default.',
  );
  await page.unroute('**/json/default_streams');
  await page.waitForSelector(`${form} p:has-text("Every public channel is a default channel")`);
  t.pass('the private one is no longer offered');
  await member.page.waitForSelector('ul[aria-label="Default channels"] li:has-text("welcome")');
  t.same(await texts(member.page, 'ul[aria-label="Default channels"] li .more-channel'), [
    '#announce',
    '#welcome',
  ]);
  t.equal(await member.page.locator('button:has-text("Remove")').count(), 0, 'read-only');
  // A new account joins them.
  const fresh = await createByApi(t, ts.api, 'newcomer@zulip.com');
  const subs = assertSuccess(t, await ts.api.get(fresh, 'users/me/subscriptions'))
    .subscriptions as { name: string }[];
  t.same(
    subs.map((s) => s.name).filter((n) => n === 'announce' || n === 'welcome'),
    ['announce', 'welcome'],
    'a new account is subscribed to both',
  );
  await bothWidths(t, page, 'default channels');
  await bothWidths(t, member.page, 'default channels member');

  await page.click('button[aria-label="Remove announce"]');
  await member.page.waitForSelector('ul[aria-label="Default channels"] li:has-text("announce")', {
    state: 'detached',
  });
  const welcome = assertSuccess(
    t,
    await ts.api.get('iago', 'get_stream_id', { stream: 'welcome' }),
  );
  t.same(
    ts.server.store.channels.defaultStreamIds(ts.fx.realmId),
    [welcome.stream_id],
    'removed on the server',
  );
  t.ok(
    await page.getByRole('checkbox', { name: 'announce', exact: true }).isVisible(),
    'offered again',
  );
  watch.assertClean(t, /status of 400/);
  member.watch.assertClean(t);
});

t.test('code playgrounds: an administrator edits, a member reads', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  const member = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(page, 'Code playgrounds');
  await openSettings(member.page, 'Code playgrounds');
  t.equal(await member.page.locator('form[aria-label="Add a code playground"]').count(), 0);

  const form = 'form[aria-label="Add a code playground"]';
  await page.fill(`${form} input[placeholder="Rust"]`, 'Rust');
  await page.fill(`${form} input[placeholder="Rust playground"]`, 'Rust playground');
  await page.fill(`${form} input[placeholder^="https://play"]`, 'https://play.example.com/');
  await page.click(`${form} button:has-text("Add playground")`);
  await page.waitForSelector('.settings [role="alert"]');
  t.match(
    await page.textContent('.settings [role="alert"]'),
    '"code" should be the only variable',
    'the server’s refusal shown',
  );
  t.equal(ts.server.store.playgrounds.byRealm(ts.fx.realmId).length, 0, 'none added');
  await page.fill(
    `${form} input[placeholder^="https://play"]`,
    'https://play.rust-lang.org/?version=stable&mode=debug&edition=2021&code={code}',
  );
  await page.click(`${form} button:has-text("Add playground")`);
  await page.waitForSelector('table[aria-label="Code playgrounds"] td:has-text("Rust playground")');
  await member.page.waitForSelector(
    'table[aria-label="Code playgrounds"] td:has-text("Rust playground")',
  );
  t.equal(await member.page.locator('button:has-text("Delete")').count(), 0, 'read-only');
  // On a phone the cells stack, the headers hidden: each value says what it is, and the long
  // URL template wraps inside the panel rather than running out of it.
  await page.setViewportSize({ width: 390, height: 844 });
  t.same(
    await page.evaluate(`[...document.querySelectorAll('table[aria-label="Code playgrounds"] td')]
      .map((td) => getComputedStyle(td, '::before').content)`),
    ['"Language: "', '"Name: "', '"URL template: "', 'none'],
    'each value labelled at 390',
  );
  t.same(
    await page.evaluate(`(() => {
      const panel = document.querySelector('.settings h3').parentElement.getBoundingClientRect();
      return [...document.querySelectorAll('table[aria-label="Code playgrounds"] td')]
        .filter((td) => td.getBoundingClientRect().right > panel.right + 1 || td.scrollWidth > td.clientWidth + 1)
        .map((td) => td.textContent);
    })()`),
    [],
    'nothing runs out of the panel at 390',
  );
  await page.setViewportSize({ width: 1280, height: 800 });
  await bothWidths(t, page, 'code playgrounds');
  await bothWidths(t, member.page, 'code playgrounds member');

  await page.click('button[aria-label="Delete Rust playground"]');
  await confirm(page, 'Delete');
  await member.page.waitForSelector('text=no code playgrounds yet');
  watch.assertClean(t, /status of 400/);
  member.watch.assertClean(t);
});

t.test('code playgrounds: a code block in their language links to each', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const channel = await createChannel(ts.api, 'iago', 'code');
  await createChannel(ts.api, 'hamlet', 'code');
  const code = 'fn main() {\n    println!("a & b");\n}';
  await sendChannelMessage(ts.api, 'hamlet', channel, 'snippets', '```rust\n' + code + '\n```');
  await sendChannelMessage(ts.api, 'hamlet', channel, 'snippets', '```python\nanswer = 42\n```');
  const hash = `#narrow/channel/${channel}-code/topic/snippets`;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', { hash });
  const member = await openApp(b, ts.url, ts.fx, 'hamlet', { hash, width: 390, height: 844 });
  await waitMessage(member.page, 'answer = 42');
  await waitMessage(page, 'answer = 42');
  t.equal(await page.locator('.code-playgrounds').count(), 0, 'no playground yet: no link');

  // Added while the messages are shown: the blocks in Rust get the link, on both pages.
  await openSettings(page, 'Code playgrounds');
  const form = 'form[aria-label="Add a code playground"]';
  await page.fill(`${form} input[placeholder="Rust"]`, 'Rust');
  await page.fill(`${form} input[placeholder="Rust playground"]`, 'Rust playground');
  await page.fill(
    `${form} input[placeholder^="https://play"]`,
    'https://play.example.com/?code={code}',
  );
  await page.click(`${form} button:has-text("Add playground")`);
  await page.waitForSelector('table[aria-label="Code playgrounds"] td:has-text("Rust playground")');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.settings', { state: 'detached' });
  const link = '.codehilite[data-code-language="Rust"] .code-playgrounds a';
  await page.waitForSelector(link);
  await member.page.waitForSelector(link);
  for (const p of [page, member.page]) {
    const a = p.locator(link);
    t.equal(await a.count(), 1, 'one link, on the Rust block only');
    t.equal(await a.textContent(), 'View in Rust playground');
    t.equal(
      await a.getAttribute('href'),
      // RFC 6570's simple expansion: every reserved character percent-encoded, ( and ) too.
      'https://play.example.com/?code=' +
        encodeURIComponent(code).replace(
          /[!'()*]/g,
          (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
        ),
      'the block’s code in the URL',
    );
    t.equal(await a.getAttribute('target'), '_blank', 'in a new tab');
  }
  t.equal(await page.locator('.code-playgrounds').count(), 1, 'none on the Python block');
  await check(t, page, 'code playground link');
  await check(t, member.page, 'code playground link, 390');
  await screenshot(page, t, 'code-playground-link-1280');
  await screenshot(member.page, t, 'code-playground-link-390');

  // Deleted: the links go.
  const id = ts.server.store.playgrounds.byRealm(ts.fx.realmId)[0]!.id;
  assertSuccess(t, await ts.api.delete('iago', `realm/playgrounds/${id}`));
  await waitFor(page, `!document.querySelector('.code-playgrounds')`);
  await waitFor(member.page, `!document.querySelector('.code-playgrounds')`);
  watch.assertClean(t);
  member.watch.assertClean(t);
});
