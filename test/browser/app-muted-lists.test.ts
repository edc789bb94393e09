/**
 * Muted users left out of the lists, as the reference's web app does (web/state/muted-users.ts),
 * in chromium with the real server: hamlet muted othello, so othello is not in the people list
 * (nor found by its filter), his one-on-one conversation is not in the sidebar's direct messages
 * (unless being viewed) and the group one names him "Muted user"; the compose box does not
 * suggest him for a mention or as a recipient, unless named exactly as "Othello|id"; his read
 * receipt is not shown. Unmuting (another session) brings him back live. Typing in a channel
 * hamlet may not post in sends no typing notice and the box refuses the send. A scheduled
 * message that failed because its channel was archived names the channel (after a reload too),
 * and the sidebar's "Scheduled messages" label with its count is whole. Beyond the lists: the
 * one-on-one messages with him are left out of All messages, Direct messages and a search, but
 * not of his conversation's own view; a direct message's header names him "Muted user"; the jump
 * dialog offers him only when named exactly, and follows muting and unmuting while open. Axe
 * and screenshots at 1280 and 390 pixels.
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import {
  messageTexts,
  openApp,
  pluck,
  waitCount,
  waitDrawerOpen,
  waitFor,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { check } from '../helpers/a11y.js';
import { assertSuccess } from '../helpers/api.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

let general: number;
let hamlet: number;
let othello: number;
let cordelia: number;

const { b, ts, channels } = browserSuite(t, {
  server: true,
  realm: { enable_read_receipts: true },
  channels: { general: { by: 'iago', members: ['hamlet', 'othello', 'cordelia'] } },
  seed,
});

async function seed(): Promise<void> {
  [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
    (n) => ts.fx.users[n]!.id,
  ) as [number, number, number];
  general = channels.general;
  await sendDirectMessage(ts.api, 'othello', [hamlet], 'Just us two');
  await sendDirectMessage(ts.api, 'cordelia', [hamlet], 'Hello from Cordelia');
  await sendDirectMessage(ts.api, 'cordelia', [hamlet, othello], 'All three of us');
  assertSuccess(t, await ts.api.post('hamlet', `users/me/muted_users/${othello}`));
}

/** Checked by axe and shot at 1280 pixels, then at 390 (the drawer opened), then back. */
async function bothWidths(t: Test, page: Page, name: string): Promise<void> {
  await check(t, page, `${name} 1280`);
  await screenshot(page, t, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click('button[aria-label="Open the sidebar"]');
  await waitDrawerOpen(page);
  await check(t, page, `${name} 390`);
  await screenshot(page, t, `${name}-390`);
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1280, height: 800 });
}

const dmLabels = (page: Page) =>
  pluck(page, '.sidebar section[aria-labelledby="dms-heading"] .nav-item .label');
const peopleIds = (page: Page) => pluck(page, '.people .people-list a.person', 'data-user-id');
const options = (page: Page, list: string) => pluck(page, `#${list} [role="option"]`);

t.test('the muted are left out of the lists, back when unmuted', async (t) => {
  if (NO_CHROMIUM) return;
  const topic = `#narrow/channel/${general}-general/topic/plans`;
  const m = await sendChannelMessage(ts.api, 'hamlet', 'general', 'plans', 'Who read this?');
  for (const who of ['othello', 'cordelia'])
    assertSuccess(
      t,
      await ts.api.post(who, 'messages/flags', { messages: [m], op: 'add', flag: 'read' }),
    );
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topic });
  await waitMessage(page, 'Who read this?');

  // The people list: not there, nor found by the filter.
  await page.waitForSelector(`.people a.person[data-user-id="${cordelia}"]`);
  t.notOk((await peopleIds(page)).includes(String(othello)), 'not in the people list');
  await page.fill('.people .people-filter', 'oth');
  await page.waitForSelector('.people .people-note:has-text("No one matches")');
  await page.fill('.people .people-filter', '');

  // The direct messages: the one-on-one left out, the group names him "Muted user".
  await waitFor(
    page,
    `document.body.textContent.includes('Cordelia, Muted user') || document.body.textContent.includes('Muted user, Cordelia')`,
  );
  let dms = await dmLabels(page);
  t.notOk(dms.includes('Othello'), 'the one-on-one conversation is not listed');
  t.ok(dms.includes('Cordelia'), 'the others are');
  t.notOk(
    dms.some((d) => d.includes('Othello')),
    'his name is nowhere in the list',
  );
  await bothWidths(t, page, 'muted-lists');
  // At 390 the people are a folded section of the drawer: not there either.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click('button[aria-label="Open the sidebar"]');
  await waitDrawerOpen(page);
  await page.click('.sidebar #people-heading');
  await page.waitForSelector(`.sidebar a.person[data-user-id="${cordelia}"]`);
  t.equal(
    await page.locator(`.sidebar a.person[data-user-id="${othello}"]`).count(),
    0,
    'not in the people section at 390',
  );
  await screenshot(page, t, 'muted-people-390');
  await page.click('.sidebar #people-heading');
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1280, height: 800 });

  // Mentions: not suggested, unless named exactly.
  await page.click('#compose-text');
  await page.keyboard.type('@o');
  await page.waitForSelector('#compose-options [role="option"]');
  t.notOk(
    (await options(page, 'compose-options')).some((o) => o.includes('Othello')),
    'not suggested for a mention',
  );
  await page.keyboard.type(`thello|${othello}`);
  await page.waitForSelector('#compose-options [role="option"]:has-text("Othello")');
  t.equal((await options(page, 'compose-options')).length, 1, 'named exactly: him alone');
  await page.fill('#compose-text', '');

  // Read receipts: Cordelia, not him.
  const row = page.locator(`.msg[data-id="${m}"]`);
  await row.hover();
  await row.locator('.msg-menu-btn').click();
  await row.locator('.msg-menu-list [role="menuitem"]', { hasText: 'View read receipts' }).click();
  const dialog = page.locator('[role="dialog"].receipts-dialog');
  await dialog.locator('.receipt-name').first().waitFor();
  t.same(await dialog.locator('.receipt-name').allTextContents(), ['Cordelia']);
  t.match(await dialog.locator('.receipts-note').textContent(), /people you muted/);
  await check(t, page, 'receipts without the muted');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });

  // A direct message: not offered as a recipient either, unless named exactly.
  await page.click('button[aria-label="New direct message"]');
  await page.fill('#compose-dm', 'othe');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.compose .error-text:has-text("No one here matches")');
  t.equal(await page.locator('#dm-options [role="option"]').count(), 0, 'no suggestion');
  await page.fill('#compose-dm', `Othello|${othello}`);
  await page.waitForSelector('#dm-options [role="option"]:has-text("Othello")');
  await page.fill('#compose-dm', '');

  // Viewing the conversation with him keeps it in the list while there.
  await page.goto(ts.url + '/' + `#narrow/dm/${othello}-othello`);
  await page.waitForSelector('.msg.hidden-msg');
  await waitFor(
    page,
    `[...document.querySelectorAll('.sidebar section[aria-labelledby="dms-heading"] .nav-item[aria-current="page"] .label')].some((e) => e.textContent.trim() === 'Muted user')`,
  );
  await screenshot(page, t, 'muted-dm-viewed-1280');
  await page.goto(ts.url + '/' + topic);
  await waitMessage(page, 'Who read this?');
  await waitFor(
    page,
    `![...document.querySelectorAll('.sidebar section[aria-labelledby="dms-heading"] .nav-item .label')].some((e) => e.textContent.trim() === 'Muted user')`,
  );

  // Unmuted (by the API, as another session would): back everywhere, live.
  assertSuccess(t, await ts.api.delete('hamlet', `users/me/muted_users/${othello}`));
  await page.waitForSelector(`.people a.person[data-user-id="${othello}"]`);
  await waitFor(
    page,
    `document.body.textContent.includes('Othello, Cordelia') || document.body.textContent.includes('Cordelia, Othello')`,
  );
  dms = await dmLabels(page);
  t.ok(dms.includes('Othello'), 'the one-on-one conversation is back');
  await page.click('#compose-text');
  await page.keyboard.type('@oth');
  await page.waitForSelector('#compose-options [role="option"]:has-text("Othello")');
  await page.fill('#compose-text', '');
  watch.assertClean(t);
  await page.close();
});

t.test('no typing notice where one may not post; the send refused', async (t) => {
  if (NO_CHROMIUM) return;
  const announce = await createChannel(ts.api, 'iago', 'announce', {
    principals: [hamlet, othello],
    can_send_message_group: systemGroupId(ts, 'role:administrators'),
  });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${announce}-announce/topic/news`,
  });
  const typing: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/json/typing') typing.push(r.postData() ?? '');
  });
  await page.waitForSelector('#compose-text');
  await page.click('#compose-text');
  await page.keyboard.type('Not mine to announce');
  await page.keyboard.press('Enter');
  await page.waitForSelector(
    '.compose .error-text:has-text("You do not have permission to post in this channel.")',
  );
  t.equal(await page.inputValue('#compose-text'), 'Not mine to announce', 'the text stays');

  // In a channel one may post in, typing is announced: the check above could have failed.
  const sent = page.waitForRequest((r) => new URL(r.url()).pathname === '/json/typing');
  await page.goto(ts.url + '/' + `#narrow/channel/${general}-general/topic/plans`);
  await page.waitForSelector('#compose-text');
  await page.click('#compose-text');
  await page.keyboard.type('Mine');
  const body = (await sent).postData() ?? '';
  t.match(body, new RegExp(`stream_id=${general}`), 'typing sent for general');
  t.notOk(
    typing.some((d) => d.includes(`stream_id=${announce}`)),
    'nothing was sent for the channel hamlet may not post in',
  );
  await page.fill('#compose-text', '');
  watch.assertClean(t);
  await page.close();
});

t.test('a failed scheduled message names its archived channel; the sidebar label', async (t) => {
  if (NO_CHROMIUM) return;
  const doomed = await createChannel(ts.api, 'iago', 'doomed', { principals: [hamlet] });
  const later = Math.floor(Date.now() / 1000) + 3600;
  for (const [to, topic, content] of [
    [doomed, 'last words', 'Into the void'],
    [general, 'plans', 'Tomorrow, then'],
  ] as const)
    assertSuccess(
      t,
      await ts.api.post('hamlet', 'scheduled_messages', {
        type: 'stream',
        to,
        topic,
        content,
        scheduled_delivery_timestamp: later,
      }),
    );
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await page.click('.sidebar .nav-item:has-text("Scheduled messages")');
  await page.waitForSelector('.page-item:has-text("Into the void")');
  await waitCount(page, 'Scheduled messages', 2);

  // The sidebar's label is whole beside its count (not cut off), at both widths.
  const cut = `(() => {
    const l = [...document.querySelectorAll('.sidebar .nav-item .label')].find((e) => e.textContent.trim() === 'Scheduled messages');
    return !!l && l.scrollWidth <= l.clientWidth;
  })()`;
  await waitFor(page, cut);
  t.pass('"Scheduled messages" whole at 1280');

  // Archived: the channel's name stays, marked, live and after a reload.
  assertSuccess(t, await ts.api.delete('iago', `streams/${doomed}`));
  const dest = '.page-item:has-text("Into the void") .page-dest';
  await page.waitForSelector(`${dest}:has-text("(archived channel)")`);
  t.equal(await page.textContent(dest), '#doomed (archived channel) › last words', 'named, marked');
  t.notOk(
    (await pluck(page, '.sidebar .nav-item .label')).includes('doomed'),
    'not in the sidebar',
  );
  await page.reload();
  await page.waitForSelector(dest);
  t.equal(
    await page.textContent(dest),
    '#doomed (archived channel) › last words',
    'after a reload',
  );
  t.notOk(
    (await pluck(page, '.sidebar .nav-item .label')).includes('doomed'),
    'still not in the sidebar',
  );
  await bothWidths(t, page, 'scheduled-archived');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click('button[aria-label="Open the sidebar"]');
  await waitDrawerOpen(page);
  await waitFor(page, cut);
  t.pass('"Scheduled messages" whole at 390');

  // A two-digit count: still whole, at both widths.
  for (let i = 0; i < 9; i++)
    assertSuccess(
      t,
      await ts.api.post('hamlet', 'scheduled_messages', {
        type: 'stream',
        to: general,
        topic: 'plans',
        content: `Later ${i}`,
        scheduled_delivery_timestamp: later + i,
      }),
    );
  await waitCount(page, 'Scheduled messages', 11);
  await waitFor(page, cut);
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1280, height: 800 });
  await waitFor(page, cut);
  await screenshot(page, t, 'scheduled-count-11-1280');
  t.pass('whole beside a two-digit count');
  watch.assertClean(t);
  await page.close();
});

t.test('the views leave out one-on-one messages with the muted, but their own', async (t) => {
  if (NO_CHROMIUM) return;
  await sendDirectMessage(ts.api, 'hamlet', [othello], 'Me to him alone');
  assertSuccess(t, await ts.api.post('hamlet', `users/me/muted_users/${othello}`));
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  const texts = async () => (await messageTexts(page)).map((x) => x.trim());
  const headers = () => pluck(page, '.messages .recipient');
  const withoutHim = async (where: string) => {
    // Both others' conversations drawn first: a view may draw what it already holds before the
    // server's page comes (once only the group's message was there: "the other conversations
    // stay" failed).
    await waitMessage(page, 'All three of us');
    await waitMessage(page, 'Hello from Cordelia');
    const shown = await texts();
    t.notOk(
      shown.some((x) => x.includes('Just us two') || x.includes('Me to him alone')),
      `${where}: neither his one-on-one message nor mine to him`,
    );
    t.equal(await page.locator('.msg.hidden-msg').count(), 0, `${where}: nothing of his collapsed`);
    t.ok(
      shown.some((x) => x.includes('Hello from Cordelia')),
      `${where}: the other conversations stay`,
    );
  };

  // All messages: the group stays, its header naming him "Muted user".
  await withoutHim('All messages');
  const groupHeader = (await headers()).find(
    (h) => h.includes('Cordelia,') || h.includes(', Cordelia'),
  );
  t.match(groupHeader, /^You and (Cordelia, Muted user|Muted user, Cordelia)/, 'the group header');
  t.notOk(
    (await headers()).some((h) => h.includes('Othello')),
    'his name in no header',
  );
  await check(t, page, 'feed without the muted');
  await screenshot(page, t, 'muted-feed-1280');

  // Direct messages, and a search that finds them.
  await page.goto(ts.url + '/#narrow/is/dm');
  await withoutHim('Direct messages');
  await page.goto(ts.url + '/#narrow/search/us');
  await waitMessage(page, 'All three of us');
  t.notOk(
    (await texts()).some((x) => x.includes('Just us two')),
    'a search matching it leaves it out',
  );

  // His conversation's own view: everything, his collapsed, "You and Muted user".
  await page.goto(ts.url + '/' + `#narrow/dm/${othello}-othello`);
  await waitMessage(page, 'Me to him alone');
  await page.waitForSelector('.msg.hidden-msg');
  t.ok(
    (await headers()).every((h) => h.startsWith('You and Muted user')),
    'named "Muted user"',
  );
  // The title and the page's title are set as the view settles (read at once, the page's was
  // once still the previous view's under load).
  await waitFor(
    page,
    `document.querySelector('.title')?.textContent.trim() === 'Muted user' && document.title.startsWith('Muted user')`,
  ).catch(() => undefined);
  t.equal((await page.textContent('.title'))?.trim(), 'Muted user', 'the title too');
  t.match(await page.title(), /^Muted user/, "and the page's");
  t.equal(
    await page.getAttribute('#compose-text', 'placeholder'),
    'Message Othello',
    'not the compose box: he was chosen by name (as the reference)',
  );
  await page.setViewportSize({ width: 390, height: 844 });
  // The drawer slides away as the page narrows: shot once it is gone.
  await waitFor(
    page,
    `(() => {
      const s = document.querySelector('.sidebar');
      return !s || getComputedStyle(s).visibility === 'hidden' || s.getBoundingClientRect().right <= 0;
    })()`,
  );
  await screenshot(page, t, 'muted-dm-own-view-390');
  await page.setViewportSize({ width: 1280, height: 800 });

  // The jump dialog: not offered, unless named exactly.
  await page.keyboard.press('Control+k');
  const jump = page.locator('[role="dialog"].jump');
  await jump.waitFor();
  await page.keyboard.type('o');
  await jump.locator('#jump-options [role="option"]').first().waitFor();
  t.notOk(
    (await options(page, 'jump-options')).some((o) => o.includes('Othello')),
    'not offered in the jump dialog',
  );
  await page.keyboard.type(`thello|${othello}`);
  await jump.locator('#jump-options [role="option"]:has-text("othello@")').waitFor();
  t.match(
    await jump.locator('#jump-options [role="option"]').first().textContent(),
    /Othello\s*othello@/,
    'named exactly: offered, first',
  );
  t.notOk(
    (await options(page, 'jump-options')).some((o) => o.startsWith('Create channel')),
    'a person named exactly is no new channel',
  );
  await check(t, page, 'jump naming the muted exactly');

  // While it is open, the list follows muting: unmuted (another session), he is offered at once;
  // muted again, he is gone.
  await page.fill('[role="dialog"].jump input', 'Oth');
  await jump.locator('#jump-options [role="option"]').first().waitFor();
  t.notOk(
    (await options(page, 'jump-options')).some((o) => o.includes('othello@')),
    'not offered for part of his name',
  );
  const offered = `[...document.querySelectorAll('#jump-options [role="option"]')].some((o) => o.textContent.includes('othello@'))`;
  assertSuccess(t, await ts.api.delete('hamlet', `users/me/muted_users/${othello}`));
  await waitFor(page, offered);
  t.pass('unmuted while the dialog is open: offered');
  assertSuccess(t, await ts.api.post('hamlet', `users/me/muted_users/${othello}`));
  await waitFor(page, `!${offered}`);
  t.pass('muted again: gone');
  // And channels: one made elsewhere is offered at once, renamed it is offered by its new name.
  const made = `[...document.querySelectorAll('#jump-options [role="option"]')].some((o) => o.textContent.includes('Othmar hall'))`;
  const hall = await createChannel(ts.api, 'cordelia', 'Othmar hall');
  await waitFor(page, made);
  t.pass('a channel made while the dialog is open: offered');
  assertSuccess(t, await ts.api.patch('desdemona', `streams/${hall}`, { new_name: 'Othmar room' }));
  await waitFor(
    page,
    `!${made} && [...document.querySelectorAll('#jump-options [role="option"]')].some((o) => o.textContent.includes('Othmar room'))`,
  );
  t.pass('renamed: offered by its new name');
  await page.keyboard.press('Escape');
  await jump.waitFor({ state: 'detached' });

  // Unmuted: back in All messages at once.
  await page.goto(ts.url + '/#feed');
  await withoutHim('All messages again');
  assertSuccess(t, await ts.api.delete('hamlet', `users/me/muted_users/${othello}`));
  await waitMessage(page, 'Just us two');
  await waitMessage(page, 'Me to him alone');
  t.ok(
    (await headers()).some((h) => h.startsWith('You and Othello')),
    'his one-on-one header names him again',
  );
  await page.goto(ts.url + '/' + `#narrow/dm/${othello}-othello`);
  await waitFor(page, `document.querySelector('.title')?.textContent.trim() === 'Othello'`);
  t.pass('the title names him again');
  watch.assertClean(t);
  await page.close();
});
