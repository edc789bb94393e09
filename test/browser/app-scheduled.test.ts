/**
 * Scheduled messages and drafts in the web app (web/app/scheduled.tsx), with the real server:
 * a message scheduled from the compose box's menu for a suggested time (to a channel's topic)
 * and for a time of one's own (a direct message; a past time refused first), both in the
 * Scheduled messages view soonest first and counted in the sidebar; Edit loads one into the
 * compose box and sending saves it (PATCH: the server still has two, the view shows the new
 * text); Delete (confirmed) seen live by a second tab; one the server delivers at its time
 * leaves the list and arrives in its topic; one to a channel archived since offers only Delete
 * and says why (failed at its time or not yet due); the Drafts view lists what was typed and not
 * sent, counted live, with Restore and Delete; one deleted while the server refuses its DELETE
 * stays deleted over a reload and is deleted there once the server takes deletions again.
 * Screenshots at 1280 and 390 px.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, pluck, waitCount, waitFor, waitMessage } from '../helpers/app.js';
import { assertSuccess } from '../helpers/api.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { check } from '../helpers/a11y.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { inputValue } from '../../web/state/scheduled.js';

let general: number;
let announce: number;
let doomed: number;

const { b, ts, channels } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'hamlet', members: ['hamlet', 'othello'] } },
  seed,
});

async function seed(): Promise<void> {
  const both = ['hamlet', 'othello'].map((n) => ts.fx.users[n]!.id);
  general = channels.general;
  // Only administrators post here: hamlet's scheduled message is refused.
  announce = await createChannel(ts.api, 'iago', 'announce', {
    principals: both,
    can_send_message_group: systemGroupId(ts, 'role:administrators'),
  });
  doomed = await createChannel(ts.api, 'iago', 'doomed', { principals: both });
}

type Scheduled = {
  scheduled_message_id: number;
  type: string;
  to: number | number[];
  topic?: string;
  content: string;
  scheduled_delivery_timestamp: number;
};

async function scheduledOf(who: string): Promise<Scheduled[]> {
  const r = await ts.api.get(who, 'scheduled_messages');
  return r.body.scheduled_messages as Scheduled[];
}

const topicHash = (topic: string) => `#narrow/channel/${general}-general/topic/${topic}`;
/** The browser's zone is the test's (the same machine, the same TZ). */
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

async function openScheduleMenu(page: Page): Promise<void> {
  await page.click('.send-menu-btn');
  await page.waitForSelector('.send-menu-list [role="menuitem"]:has-text("Schedule message")');
}

async function openPicker(page: Page): Promise<void> {
  await openScheduleMenu(page);
  await page.click('.send-menu-list [role="menuitem"]:has-text("Schedule message")');
  await page.waitForSelector('.schedule-dialog .schedule-preset');
}

t.test('schedule, list, edit, delete, delivery; drafts', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('plans') });
  await page.waitForSelector('#compose-text');

  // To a channel's topic, at the first suggested time.
  await page.fill('#compose-text', 'Agenda for **Monday**');
  await openScheduleMenu(page);
  await screenshot(page, t, 'send-menu-1280');
  await page.click('.send-menu-list [role="menuitem"]:has-text("Schedule message")');
  await page.waitForSelector('.schedule-dialog .schedule-preset');
  t.equal(
    await page.evaluate(`document.activeElement?.classList.contains('schedule-preset')`),
    true,
    'the first suggestion has the focus',
  );
  await screenshot(page, t, 'picker-1280');
  const suggested = await pluck(page, '.schedule-preset');
  t.ok(suggested.length >= 2, `suggested times: ${suggested.join(' | ')}`);
  t.match(suggested[0], /^(Today|Tomorrow) at /);
  await page.click('.schedule-preset >> nth=0');
  await page.waitForSelector('.scheduled-notice:has-text("Scheduled for")');
  t.match(await page.textContent('.scheduled-notice'), suggested[0]!, 'the notice says when');
  t.equal(await page.inputValue('#compose-text'), '', 'the compose box is empty');
  let list = await scheduledOf('hamlet');
  t.equal(list.length, 1);
  t.match(list[0], {
    type: 'stream',
    to: general,
    topic: 'plans',
    content: 'Agenda for **Monday**',
  });
  const firstAt = list[0]!.scheduled_delivery_timestamp;
  await waitCount(page, 'Scheduled messages', 1);

  // A direct message at a time of one's own; a past one refused first.
  const othello = ts.fx.users['othello']!.id;
  await page.goto(ts.url + '/' + `#narrow/dm/${othello}-othello`);
  await page.waitForSelector('#compose-text');
  await page.fill('#compose-text', 'See you then');
  await openPicker(page);
  const custom = '.schedule-dialog input[type="datetime-local"]';
  await page.fill(custom, inputValue(Math.floor(Date.now() / 1000) - 3600, zone));
  await page.click('.schedule-dialog button:has-text("Schedule")');
  await page.waitForSelector('.schedule-dialog .error-text:has-text("passed")');
  t.equal((await scheduledOf('hamlet')).length, 1, 'a past time: nothing scheduled');
  const dmAt = Math.floor(Date.now() / 1000 / 60) * 60 + 3 * 86400;
  await page.fill(custom, inputValue(dmAt, zone));
  await page.click('.schedule-dialog button:has-text("Schedule")');
  await page.waitForSelector('.scheduled-notice');
  list = await scheduledOf('hamlet');
  t.equal(list.length, 2);
  t.match(list[1], { type: 'private', to: [othello], content: 'See you then' });
  t.equal(list[1]!.scheduled_delivery_timestamp, dmAt, 'at the time chosen, in the local zone');
  await waitCount(page, 'Scheduled messages', 2);

  // The server's refusal, in the compose box's error line; the text stays.
  await page.goto(ts.url + '/' + `#narrow/channel/${announce}-announce/topic/news`);
  await page.waitForSelector('#compose-text');
  await page.fill('#compose-text', 'Not mine to announce');
  // Refused before a time is chosen (the channel's posting permission, known to the app).
  await openScheduleMenu(page);
  await page.click('.send-menu-list [role="menuitem"]:has-text("Schedule message")');
  await page.waitForSelector('.compose .error-text:has-text("permission")');
  t.equal(await page.locator('.schedule-dialog').count(), 0, 'no time picker');
  t.equal(await page.inputValue('#compose-text'), 'Not mine to announce', 'the text stays');
  t.equal((await scheduledOf('hamlet')).length, 2, 'nothing scheduled');
  await page.fill('#compose-text', '');

  // The view, soonest first, by the sidebar's entry.
  await page.click('.sidebar .nav-item:has-text("Scheduled messages")');
  await page.waitForSelector('.page-view .page-item');
  t.match(page.url(), /#scheduled$/, 'its own address');
  t.equal(await page.textContent('.title'), 'Scheduled messages');
  t.same(
    await pluck(page, '.page-item .page-dest'),
    ['#general › plans', 'To Othello'],
    'soonest first, with where they go',
  );
  t.equal(
    await page.evaluate(`document.querySelector('.page-item .page-content strong')?.textContent`),
    'Monday',
    'the content rendered',
  );
  await screenshot(page, t, 'scheduled-view-1280');

  // A second tab sees what the first does.
  const other = await openApp(b, ts.url, ts.fx, 'hamlet');
  await other.page.click('.sidebar .nav-item:has-text("Scheduled messages")');
  await other.page.waitForSelector('.page-item');
  t.equal((await pluck(other.page, '.page-item')).length, 2);

  // Edit: into the compose box; sending saves that one (PATCH), not a new one.
  await page.click('.page-item >> nth=0 >> button:has-text("Edit")');
  await page.waitForSelector('.editing-scheduled');
  await waitFor(page, `document.querySelector('#compose-text')?.value === 'Agenda for **Monday**'`);
  t.match(page.url(), /topic\/plans/, 'the conversation shown');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.pass('the text being edited has the focus');
  const patched = page.waitForResponse(
    (r) => r.request().method() === 'PATCH' && /\/json\/scheduled_messages\/\d+$/.test(r.url()),
  );
  await page.fill('#compose-text', 'Agenda for **Tuesday**');
  await page.keyboard.press('Enter');
  t.equal((await patched).status(), 200, 'a PATCH');
  await page.waitForSelector('.scheduled-notice');
  await waitFor(page, `!document.querySelector('.editing-scheduled')`);
  list = await scheduledOf('hamlet');
  t.equal(list.length, 2, 'still two scheduled messages, not three');
  t.equal(list[0]!.content, 'Agenda for **Tuesday**');
  t.equal(list[0]!.scheduled_delivery_timestamp, firstAt, 'at its own time');
  await other.page.waitForSelector('.page-item .page-content strong:has-text("Tuesday")');
  t.pass('the other tab shows the new text');
  await page.click('.scheduled-notice a:has-text("View scheduled messages")');
  await page.waitForSelector('.page-item .page-content strong:has-text("Tuesday")');

  // Edit of a direct message: its conversation shown; narrowing elsewhere ends the edit.
  await page.click('.page-item:has-text("See you then") button:has-text("Edit")');
  await page.waitForSelector('.editing-scheduled');
  t.match(page.url(), new RegExp(`/dm/${othello}-`), 'the conversation shown');
  t.equal(await page.inputValue('#compose-text'), 'See you then');
  await page.goto(ts.url + '/' + topicHash('plans'));
  await waitFor(page, `!document.querySelector('.editing-scheduled')`);
  // Loaded for editing, it is no draft (the server keeps it as a scheduled message already).
  await waitCount(page, 'Drafts', 0);
  await page.click('.sidebar .nav-item:has-text("Scheduled messages")');
  await page.waitForSelector('.page-item:has-text("See you then")');

  // Delete, confirmed: gone here and in the other tab.
  await page.click('.page-item:has-text("See you then") button:has-text("Delete")');
  await page.click('.confirm .confirm-actions button:has-text("Delete")');
  await waitFor(page, `document.querySelectorAll('.page-item').length === 1`);
  await waitFor(other.page, `document.querySelectorAll('.page-item').length === 1`);
  await waitCount(other.page, 'Scheduled messages', 1);
  t.equal((await scheduledOf('hamlet')).length, 1, 'deleted on the server');

  // One whose time comes: the server sends it, it leaves the list, it arrives in its topic.
  assertSuccess(
    t,
    await ts.api.post('hamlet', 'scheduled_messages', {
      type: 'stream',
      to: general,
      topic: 'plans',
      content: 'Due in a moment',
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3,
    }),
  );
  await page.waitForSelector('.page-item:has-text("Due in a moment")');
  t.equal((await pluck(page, '.page-item')).length, 2);
  await waitFor(page, `!document.body.textContent.includes('Due in a moment')`);
  await waitCount(page, 'Scheduled messages', 1);

  // One the server cannot send at its time (its channel archived meanwhile) stays, marked.
  assertSuccess(
    t,
    await ts.api.post('hamlet', 'scheduled_messages', {
      type: 'stream',
      to: doomed,
      topic: 'last words',
      content: 'Into the void',
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 2,
    }),
  );
  // And one for later there: it cannot go either once the channel is archived.
  assertSuccess(
    t,
    await ts.api.post('hamlet', 'scheduled_messages', {
      type: 'stream',
      to: doomed,
      topic: 'last words',
      content: 'Echoes later',
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400 * 3,
    }),
  );
  await page.waitForSelector('.page-item:has-text("Into the void")');
  await page.waitForSelector('.page-item:has-text("Echoes later")');
  const buttons = async (text: string) =>
    (
      await page
        .locator('.page-item', { hasText: text })
        .locator('.page-actions button')
        .allTextContents()
    ).map((b) => b.trim());
  t.same(
    await buttons('Echoes later'),
    ['Edit', 'Reschedule', 'Send now', 'Delete'],
    'all four while the channel is there',
  );
  assertSuccess(t, await ts.api.delete('iago', `streams/${doomed}`));
  await page.waitForSelector('.page-item.failed:has-text("Into the void") .page-failed');
  t.match(await page.textContent('.page-item.failed .page-failed'), /Not sent/);
  t.equal(
    await page.textContent('.page-item.failed .page-dest'),
    '#doomed (archived channel) › last words',
    'where it was going: the archived channel, by name',
  );
  // The server refuses any message to an archived channel, now as at its time: only Delete,
  // and the row says why.
  t.match(
    await page.textContent('.page-item.failed .page-failed'),
    /#doomed is archived, and an archived channel takes no messages\. It can only be deleted/,
  );
  t.same(await buttons('Into the void'), ['Delete'], 'a failed one: only Delete');
  await page.waitForSelector('.page-item:has-text("Echoes later") .page-failed');
  t.match(
    await page.textContent('.page-item:has-text("Echoes later") .page-failed'),
    /^Cannot be sent: #doomed is archived/,
  );
  t.same(await buttons('Echoes later'), ['Delete'], 'one not yet due: only Delete');
  await check(t, page, 'scheduled: to an archived channel');
  await screenshot(page, t, 'scheduled-failed-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  // Once the drawer (the sidebar, open at 1280) has slid away.
  await waitFor(
    page,
    `(() => { const s = document.querySelector('.sidebar'); return !s || getComputedStyle(s).visibility === 'hidden'; })()`,
  );
  await screenshot(page, t, 'scheduled-failed-390');
  await page.setViewportSize({ width: 1280, height: 800 });
  for (const text of ['Into the void', 'Echoes later']) {
    await page.click(`.page-item:has-text("${text}") button:has-text("Delete")`);
    await page.click('.confirm .confirm-actions button:has-text("Delete")');
    await waitFor(page, `!document.body.textContent.includes('${text}')`);
  }

  // Send now: sent at once, out of the list.
  await page.click('.page-item:has-text("Tuesday") button:has-text("Send now")');
  await page.waitForSelector('.page-empty:has-text("No scheduled messages")');
  await waitCount(page, 'Scheduled messages', 0);
  t.equal((await scheduledOf('hamlet')).length, 0, 'none left on the server');
  await page.goto(ts.url + '/' + topicHash('plans'));
  await waitMessage(page, 'Due in a moment');
  await waitMessage(page, 'Tuesday');
  t.pass('delivered at its time, and the one sent now');

  // Drafts: counted as typed, listed, restored, deleted.
  await waitCount(page, 'Drafts', 0);
  await page.goto(ts.url + '/' + topicHash('later'));
  await page.waitForSelector('#compose-text');
  await page.click('#compose-text');
  await page.keyboard.type('Half a thought');
  await waitCount(page, 'Drafts', 1);
  await page.click('.sidebar .nav-item:has-text("Drafts")');
  await page.waitForSelector('.page-item:has-text("Half a thought")');
  t.match(await page.textContent('.page-item .page-dest'), '#general › later');
  await screenshot(page, t, 'drafts-view-1280');
  await page.goto(ts.url + '/' + topicHash('plans'));
  await page.waitForSelector('#compose-text');
  await page.click('.sidebar .nav-item:has-text("Drafts")');
  await page.click('.page-item button:has-text("Restore")');
  await waitFor(page, `document.querySelector('#compose-text')?.value === 'Half a thought'`);
  t.match(page.url(), /topic\/later/, 'restored in its conversation');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.pass('the restored text has the focus, to go on writing');
  await page.click('.sidebar .nav-item:has-text("Drafts")');
  await page.click('.page-item button:has-text("Delete")');
  await page.waitForSelector('.page-empty:has-text("No drafts")');
  await waitCount(page, 'Drafts', 0);

  // The 400s: the refused scheduled message in #announce, and the typing notifications the app
  // sends there while the text is typed (refused too: only administrators post there).
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
  other.watch.assertClean(t, /WebSocket|status of 401/);
  await other.page.close();
  await page.close();
});

t.test('390 px: the menu, the picker and the views', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: topicHash('phone'),
    width: 390,
    height: 844,
  });
  await page.waitForSelector('#compose-text');
  await page.fill('#compose-text', 'From the phone');
  await openScheduleMenu(page);
  await screenshot(page, t, 'send-menu-390');
  await page.click('.send-menu-list [role="menuitem"]:has-text("Schedule message")');
  await page.waitForSelector('.schedule-dialog .schedule-preset');
  await screenshot(page, t, 'picker-390');
  await page.click('.schedule-preset >> nth=0');
  await page.waitForSelector('.scheduled-notice');
  await page.goto(ts.url + '/#scheduled');
  await page.waitForSelector('.page-item:has-text("From the phone")');
  await screenshot(page, t, 'scheduled-view-390');
  await page.click('.page-item:has-text("From the phone") button:has-text("Reschedule")');
  await page.waitForSelector('.schedule-dialog h2:has-text("Reschedule message")');
  const at = Math.floor(Date.now() / 1000 / 60) * 60 + 5 * 86400;
  await page.fill('.schedule-dialog input[type="datetime-local"]', inputValue(at, zone));
  await page.click('.schedule-dialog button:has-text("Schedule")');
  await waitFor(page, `!document.querySelector('.schedule-dialog')`);
  await page.waitForSelector('.page-item:has-text("From the phone") .page-when:has-text("at")');
  const start = Date.now();
  let mine: Scheduled | undefined;
  do {
    mine = (await scheduledOf('hamlet')).find((m) => m.content === 'From the phone');
    if (mine?.scheduled_delivery_timestamp !== at) await new Promise((r) => setTimeout(r, 50));
  } while (mine?.scheduled_delivery_timestamp !== at && Date.now() - start < 10_000);
  t.equal(mine?.scheduled_delivery_timestamp, at, 'rescheduled');
  await page.goto(ts.url + '/#drafts');
  await page.waitForSelector('.page-view');
  await screenshot(page, t, 'drafts-view-390');
  // Esc closes the view, back to the messages it was opened over.
  await page.keyboard.press('Escape');
  await page.waitForSelector('.messages');
  t.match(page.url(), /topic\/phone$/, 'back to the topic');
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();
});

t.test('drafts kept on the server reach another browser', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('synced') });
  await page.waitForSelector('#compose-text');
  const posted = page.waitForResponse(
    (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/json/drafts',
  );
  await page.click('#compose-text');
  await page.keyboard.type('Written on the laptop');
  t.equal((await posted).status(), 200, 'sent to the server once the typing stopped');
  const onServer = (await ts.api.get('hamlet', 'drafts')).body.drafts as { content: string }[];
  t.same(
    onServer.map((d) => d.content),
    ['Written on the laptop'],
    'one draft, the whole text (the earlier tests’ drafts, sent or deleted, are gone from it)',
  );

  // Another browser (its own storage): the draft is there, and its deletion reaches the first.
  const other = await openApp(b, ts.url, ts.fx, 'hamlet');
  await waitCount(other.page, 'Drafts', 1);
  await other.page.click('.sidebar .nav-item:has-text("Drafts")');
  await other.page.waitForSelector('.page-item:has-text("Written on the laptop")');
  t.match(await other.page.textContent('.page-item .page-dest'), '#general › synced');
  await other.page.click('.page-item button:has-text("Delete")');
  await other.page.waitForSelector('.page-empty:has-text("No drafts")');
  await waitCount(page, 'Drafts', 0);
  t.same((await ts.api.get('hamlet', 'drafts')).body.drafts, [], 'deleted on the server');

  watch.assertClean(t, /WebSocket|status of 401/);
  other.watch.assertClean(t, /WebSocket|status of 401/);
  await other.page.close();
  await page.close();
});

// No serious or critical axe violation in what this adds (test/helpers/a11y.ts), light and dark.
for (const dark of [false, true]) {
  const mode = dark ? 'dark' : 'light';

  t.test(`${mode}: axe on the send menu, the picker, the views, the notices`, async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: topicHash('axe'),
      dark,
    });
    await page.fill('#compose-text', `To be sent later (${mode})`);
    await page.click('.send-menu-btn');
    await page.waitForSelector('.send-menu-list [role="menuitem"]');
    await check(t, page, `send-menu-1280-${mode}`);
    await page.click('.send-menu-list [role="menuitem"]:has-text("Schedule message")');
    await page.waitForSelector('.schedule-dialog .schedule-preset');
    await check(t, page, `schedule-picker-1280-${mode}`);
    await page.click('.schedule-preset >> nth=0');
    await page.waitForSelector('.scheduled-notice');
    await check(t, page, `scheduled-notice-1280-${mode}`);
    await page.click('.sidebar .nav-item:has-text("Scheduled messages")');
    await page.waitForSelector('.page-item');
    await check(t, page, `scheduled-view-1280-${mode}`);
    await page.click('.page-item button:has-text("Edit")');
    await page.waitForSelector('.editing-scheduled');
    await check(t, page, `scheduled-editing-1280-${mode}`);
    await page.click('.editing-scheduled button');
    await page.fill('#compose-text', 'A draft');
    await page.click('.sidebar .nav-item:has-text("Drafts")');
    await page.waitForSelector('.page-item');
    await check(t, page, `drafts-view-1280-${mode}`);
    // Not left for the next test's compose box (drafts are kept on the server too).
    await page.click('.page-item:has-text("A draft") button:has-text("Delete")');
    await page.waitForSelector('.page-item:has-text("A draft")', { state: 'detached' });
    const onServer = async () =>
      ((await ts.api.get('hamlet', 'drafts')).body.drafts as { content: string }[]).some(
        (d) => d.content === 'A draft',
      );
    for (let i = 0; (await onServer()) && i < 100; i++) await page.waitForTimeout(50);
    t.notOk(await onServer(), 'the draft deleted on the server too');
    watch.assertClean(t, /WebSocket|status of 401/);
    await page.close();

    const phone = await openApp(b, ts.url, ts.fx, 'hamlet', { width: 390, height: 844, dark });
    await phone.page.goto(ts.url + '/#scheduled');
    await phone.page.waitForSelector('.page-item');
    await check(t, phone.page, `scheduled-view-390-${mode}`);
    await phone.page.click('.page-item button:has-text("Reschedule")');
    await phone.page.waitForSelector('.schedule-dialog .schedule-preset');
    await check(t, phone.page, `reschedule-picker-390-${mode}`);
    phone.watch.assertClean(t, /WebSocket|status of 401/);
    await phone.page.close();
  });
}

t.test(
  'a draft deleted while the server refuses: not back after a reload, deleted later',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('lost') });
    const onServer = async () =>
      ((await ts.api.get('hamlet', 'drafts')).body.drafts as { content: string }[]).some(
        (d) => d.content === 'Throw this away',
      );
    const until = async (want: boolean, what: string) => {
      const start = Date.now();
      while ((await onServer()) !== want && Date.now() - start < 15_000)
        await page.waitForTimeout(100);
      t.equal(await onServer(), want, what);
    };
    await page.waitForSelector('#compose-text');
    await page.click('#compose-text');
    await page.keyboard.type('Throw this away');
    await until(true, 'the draft on the server (synchronized)');

    // The server refuses its deletion (503) for a while.
    let refusing = true;
    await page.route('**/json/drafts/*', (route) =>
      refusing && route.request().method() === 'DELETE'
        ? route.fulfill({
            status: 503,
            contentType: 'application/json',
            body: JSON.stringify({ result: 'error', msg: 'Busy', code: 'BAD_REQUEST' }),
          })
        : route.continue(),
    );
    await page.fill('#compose-text', '');
    await page.click('.sidebar .nav-item:has-text("Drafts")');
    await page.waitForSelector('.page-empty:has-text("No drafts")');
    await page.waitForTimeout(500);
    t.ok(await onServer(), 'deleted here, still on the server');

    // A reload: the snapshot has it, the app keeps it deleted (and tries again).
    await page.reload();
    await page.waitForSelector('.app[data-status="live"]');
    await page.goto(ts.url + '/#drafts');
    await page.waitForSelector('.page-view');
    await page.waitForTimeout(500);
    t.equal(await page.locator('.page-item:has-text("Throw this away")').count(), 0, 'not back');
    await waitCount(page, 'Drafts', 0);
    await screenshot(page, t, 'draft-deleted-refused');

    // The server takes deletions again: the next try deletes it there.
    refusing = false;
    await until(false, 'deleted on the server at a later try');
    watch.assertClean(t, /WebSocket|status of 401|status of 503/);
    await page.close();
  },
);
