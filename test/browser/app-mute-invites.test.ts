/**
 * Muted users and the Invitations panel (web/app/mute-invites.tsx, the profile card, the message
 * list) in chromium, with the real server. A member mutes a new account from its profile card
 * (after a confirmation saying what muting does): that user's messages collapse to a notice (no
 * name, no avatar), the next one arrives collapsed and unread count stays, "Show" reveals one,
 * their typing is not shown, their reaction reads "Muted user"; the Muted users panel of a second
 * session lists them live, filters, and unmutes, which restores the messages in the first. An
 * administrator's Invitations panel lists an e-mail invitation and a link sent from Invite people
 * (live in a second session), resends the e-mail (the mail arrives again) and revokes both after
 * confirming; a member sees only their own. Axe (test/helpers/a11y.ts) and screenshots at 1280
 * and 390 pixels.
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import {
  openApp,
  openSettings,
  pluck,
  sidebarCount,
  waitCount,
  waitFor,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { check } from '../helpers/a11y.js';
import { assertSuccess } from '../helpers/api.js';
import { createByApi } from '../helpers/accounts.js';
import { createChannel } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';
import { TestSmtp } from '../helpers/smtp.js';

const { b } = browserSuite(t);

/** Checked by axe and shot at 1280 pixels, then at 390, then back. */
async function bothWidths(t: Test, page: Page, name: string): Promise<void> {
  await check(t, page, `${name} 1280`);
  await screenshot(page, t, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await check(t, page, `${name} 390`);
  await screenshot(page, t, `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function confirm(page: Page, action: string): Promise<void> {
  await page.click(`.dialog.confirm button:has-text("${action}")`);
  await waitFor(page, `!document.querySelector('.dialog.confirm')`);
}

const hiddenCount = (page: Page) => page.locator('.msg.hidden-msg').count();

t.test('muting a user from the card, the list, the panel, unmuting', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!.id;
  const othello = ts.fx.users.othello!.id;
  const rowdy = await createByApi(t, ts.api, 'rowdy@zulip.com', 'Rowdy Person');
  const general = await createChannel(ts.api, 'iago', 'general', {
    principals: [hamlet, othello, rowdy.user_id],
  });
  await createChannel(ts.api, 'iago', 'random', { principals: [hamlet, othello, rowdy.user_id] });
  const say = async (who: Parameters<typeof ts.api.post>[0], to: string, content: string) =>
    assertSuccess(
      t,
      await ts.api.post(who, 'messages', { type: 'channel', to, topic: 'plans', content }),
    ).id as number;
  const typing = (who: Parameters<typeof ts.api.post>[0], op: string) =>
    ts.api.post(who, 'typing', { op, type: 'stream', stream_id: general, topic: 'plans' });

  await say('hamlet', 'general', 'Morning all.');
  await say(rowdy, 'general', 'LOUD opinion number one');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general/topic/plans`,
  });
  const other = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(other.page, 'Muted users');
  await other.page.waitForSelector('text=You have not muted anyone.');
  await waitMessage(page, 'LOUD opinion number one');

  // Before muting: their typing shows (what the muted case checks cannot pass by accident).
  await typing(rowdy, 'start');
  await page.waitForSelector('.typing >> text=Rowdy Person is typing…');
  await typing(rowdy, 'stop');
  await waitFor(page, `document.querySelector('.typing').textContent === ''`);

  // One's own card offers no muting.
  await page.click('.msg:has-text("Morning all.") button.sender');
  await page.waitForSelector('.profile-card');
  t.equal(await page.locator('.profile-card button:has-text("Mute")').count(), 0, 'not oneself');
  await page.keyboard.press('Escape');

  // Mute from the card, after the confirmation says what it does.
  await page.click('.msg:has-text("LOUD opinion number one") button.sender');
  await page.click('.profile-card button:has-text("Mute this user")');
  await page.waitForSelector('.dialog.confirm');
  t.match(await page.textContent('.dialog.confirm h2'), 'Mute Rowdy Person?');
  t.match(await page.textContent('.dialog.confirm p'), /messages will be hidden/);
  await confirm(page, 'Mute');
  await page.waitForSelector('.msg.hidden-msg');
  t.equal(await hiddenCount(page), 1, 'their message collapsed');
  t.match(
    await page.textContent('.msg.hidden-msg'),
    /This message was hidden because you muted the sender\./,
  );
  t.equal(
    await page.locator('.msg.hidden-msg .avatar-btn, .msg.hidden-msg button.sender').count(),
    0,
    'no name, no avatar',
  );
  t.notOk(
    (await pluck(page, '.messages .msg')).some((x) => x.includes('LOUD opinion')),
    'its content not drawn',
  );
  await other.page.waitForSelector('table[aria-label="Muted users"] td:has-text("Rowdy Person")');
  t.pass('the other session lists them, live');
  const reg = assertSuccess(
    t,
    await ts.api.post('hamlet', 'register', { fetch_event_types: ['muted_users'] }),
  );
  t.same(
    (reg.muted_users as { id: number }[]).map((m) => m.id),
    [rowdy.user_id],
    'on the server',
  );

  // Their next message arrives collapsed and already read; others' still count.
  await say(rowdy, 'random', 'Elsewhere, also loud');
  await say('othello', 'random', 'A quiet word');
  await waitCount(page, 'random', 1);
  t.equal(await sidebarCount(page, 'random'), 1, 'the muted sender’s message did not count');
  const next = await say(rowdy, 'general', 'LOUD opinion number two');
  await waitFor(page, `document.querySelectorAll('.msg.hidden-msg').length === 2`);
  t.notOk(
    (await pluck(page, '.messages .msg')).some((x) => x.includes('number two')),
    'arrived collapsed',
  );
  const flags = assertSuccess(t, await ts.api.get('hamlet', `messages/${next}`)).message as {
    flags: string[];
  };
  t.ok(flags.flags.includes('read'), 'read for the muting user');

  // Their typing is not shown; someone else's is.
  await typing(rowdy, 'start');
  await typing('othello', 'start');
  await page.waitForSelector('.typing >> text=Othello is typing…');
  t.notMatch(await page.textContent('.typing'), /Rowdy/, 'not shown typing');
  await typing('othello', 'stop');
  await typing(rowdy, 'stop');

  // Their reaction counts, without their name.
  const mine = await say('hamlet', 'general', 'Who agrees?');
  await waitMessage(page, 'Who agrees?');
  assertSuccess(
    t,
    await ts.api.post(rowdy, `messages/${mine}/reactions`, { emoji_name: 'thumbs_up' }),
  );
  const chip = page.locator('.msg:has-text("Who agrees?") .reaction[aria-pressed]');
  await chip.waitFor();
  t.match(await chip.getAttribute('title'), /^Muted user reacted with :thumbs_up:/);
  t.match(await chip.textContent(), /1/, 'counted');
  await bothWidths(t, page, 'mute-hidden-messages');

  // Show reveals one message, with its sender.
  await page.locator('.msg.hidden-msg').last().locator('button:has-text("Show")').click();
  await waitMessage(page, 'LOUD opinion number two');
  t.equal(await hiddenCount(page), 1, 'only that one');
  t.ok(
    await page.locator('.msg:has-text("LOUD opinion number two") button.sender').count(),
    'its sender shown',
  );

  // The panel: filtered, then Unmute, and both sessions follow.
  await other.page.fill('input[aria-label="Filter muted users"]', 'nobody');
  await other.page.waitForSelector('text=Nobody muted matches.');
  await other.page.fill('input[aria-label="Filter muted users"]', 'rowdy');
  await other.page.waitForSelector('td:has-text("Rowdy Person")');
  await bothWidths(t, other.page, 'muted-users-panel');
  await other.page.click('button[aria-label="Unmute Rowdy Person"]');
  await other.page.waitForSelector('text=You have not muted anyone.');
  await waitFor(page, `document.querySelectorAll('.msg.hidden-msg').length === 0`);
  await waitMessage(page, 'LOUD opinion number one');
  t.pass('unmuted: the messages shown again in the first session');
  t.match(await chip.getAttribute('title'), /^Rowdy Person reacted/, 'named again');

  // Unmute from the card too, after muting again from it.
  await page.click('.msg:has-text("LOUD opinion number one") button.sender');
  await page.click('.profile-card button:has-text("Mute this user")');
  await confirm(page, 'Mute');
  await waitFor(page, `document.querySelectorAll('.msg.hidden-msg').length === 2`);
  await other.page.waitForSelector('td:has-text("Rowdy Person")');
  // The revealed message's sender opens the card, which offers Unmute (no question asked).
  await page.click('.msg.hidden-msg >> nth=0 >> button:has-text("Show")');
  await page.click('.msg:has-text("LOUD opinion number one") button.sender');
  await page.click('.profile-card button:has-text("Unmute this user")');
  await waitFor(page, `document.querySelectorAll('.msg.hidden-msg').length === 0`);
  await other.page.waitForSelector('text=You have not muted anyone.');
  t.pass('unmuted from the card, no question asked');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('invitations: listed, live, resent, revoked; a member sees their own', async (t) => {
  if (NO_CHROMIUM) return;
  const smtp = await TestSmtp.start(t);
  const ts = await startServer(t, { smtpUrl: smtp.url });
  const flush = () => ts.server.context.mailer!.runDue();
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  const other = await openApp(b, ts.url, ts.fx, 'iago');
  await openSettings(other.page, 'Invitations');
  await other.page.waitForSelector('text=There are no pending invitations.');

  await openSettings(page, 'Invite people');
  await page.fill('input[placeholder*="ada@example.com"]', 'grace@example.com');
  await page.click('button:has-text("Send invitations")');
  await page.waitForSelector('text=Invitations sent to grace@example.com.');
  await page.click('text=Create an invitation link');
  await page.waitForSelector('input[aria-label="Invitation link"]');
  const link = await page.inputValue('input[aria-label="Invitation link"]');
  await flush();
  t.equal(smtp.to('grace@example.com').length, 1, 'the invitation mailed');

  await openSettings(page, 'Invitations');
  const table = 'table[aria-label="Pending invitations"]';
  await page.waitForSelector(`${table} td:has-text("grace@example.com")`);
  const rows = await pluck(page, `${table} tbody tr[data-invite]`);
  t.equal(rows.length, 2, 'the e-mail invitation and the link');
  const mailRow = page.locator(`${table} tr:has-text("grace@example.com")`);
  t.match(await mailRow.textContent(), /You.*Member/, 'who invited, as what');
  const linkField = page.locator(
    `${table} tr.invite-link-row input[aria-label="Reusable invitation link"]`,
  );
  t.equal(await linkField.count(), 1, 'one link');
  t.equal(await linkField.inputValue(), link, 'the link itself, to copy');
  const linkRow = page.locator(`${table} tr.invite-has-link`);
  t.match(
    await linkRow.textContent(),
    /Reusable invitation link\s*You\s*Member\s*\w{3} \d+, \d{4}/,
    'an expiry',
  );
  t.match(await mailRow.locator('time').getAttribute('title'), /\d/, 'its time in the title');
  await other.page.waitForSelector(`${table} td:has-text("grace@example.com")`);
  t.pass('the other session follows (invites_changed)');

  // A link that never expires says so.
  assertSuccess(
    t,
    await ts.api.post('iago', 'invites/multiuse', {
      invite_expires_in_minutes: JSON.stringify(null),
      invite_as: 600,
    }),
  );
  await page.waitForSelector(`${table} tr:has-text("Never")`);
  t.match(await page.textContent(`${table} tr:has-text("Never")`), /Guest/);
  await bothWidths(t, page, 'invitations-panel');

  // Resend: the mail arrives again.
  await page.click('button[aria-label="Resend the invitation to grace@example.com"]');
  await page.waitForSelector('text=The invitation was sent to grace@example.com again.');
  await flush();
  t.equal(smtp.to('grace@example.com').length, 2, 'mailed again');

  // Revoke, after confirming: gone here, there and on the server.
  await page.click('button[aria-label="Revoke the invitation to grace@example.com"]');
  await page.waitForSelector('.dialog.confirm h2:has-text("Revoke the invitation")');
  await bothWidths(t, page, 'invitations-revoke-confirm');
  await confirm(page, 'Revoke');
  await page.waitForSelector('text=The invitation to grace@example.com was revoked.');
  // The row goes with the list fetched again on `invites_changed`, which may follow the answer.
  await waitFor(
    page,
    `![...document.querySelectorAll('table[aria-label="Pending invitations"] td')].some((td) => td.textContent.includes('grace@'))`,
    10_000,
  );
  t.pass('gone here');
  await waitFor(
    other.page,
    `![...document.querySelectorAll('td')].some((td) => td.textContent.includes('grace@'))`,
  );
  t.pass('gone in the other session');
  const before = await page.locator(`${table} tbody tr[data-invite]`).count();
  await page.locator(`${table} tr:has-text("Never") button:has-text("Revoke")`).click();
  await confirm(page, 'Revoke');
  await page.waitForSelector('text=The link was revoked.');
  await waitFor(
    page,
    `document.querySelectorAll('table[aria-label="Pending invitations"] tbody tr[data-invite]').length === ${before - 1}`,
  );
  const left = assertSuccess(t, await ts.api.get('iago', 'invites')).invites as {
    is_multiuse: boolean;
  }[];
  t.same(
    left.map((i) => i.is_multiuse),
    [true],
    'on the server: the first link only',
  );

  // A member who invites sees only their own.
  assertSuccess(
    t,
    await ts.api.post('hamlet', 'invites', {
      invitee_emails: 'ada@example.com',
      stream_ids: JSON.stringify([]),
    }),
  );
  await page.waitForSelector(`${table} td:has-text("ada@example.com")`);
  const member = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openSettings(member.page, 'Invitations');
  await member.page.waitForSelector(`${table} td:has-text("ada@example.com")`);
  t.equal(await member.page.locator(`${table} tbody tr[data-invite]`).count(), 1, 'only their own');
  await bothWidths(t, member.page, 'invitations-member');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('data exports: started, ready, downloaded, deleted, live', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  const other = await openApp(b, ts.url, ts.fx, 'iago');
  await openSettings(page, 'Data exports');
  await openSettings(other.page, 'Data exports');
  await page.waitForSelector('text=There are no exports yet.');

  await page.click('button:has-text("Start a public export")');
  await page.waitForSelector('.dialog.confirm h2:has-text("Export the organization?")');
  t.match(await page.textContent('.dialog.confirm p'), /no private channels or direct messages/);
  await confirm(page, 'Start export');
  await page.waitForSelector('text=Export started.');
  const table = 'table[aria-label="Data exports"]';
  const ready = `${table} tr[data-state="ready"] a:has-text("Download")`;
  await page.waitForSelector(ready);
  t.match(await page.textContent(`${table} tbody tr`), /Iago.*Public data/, 'who, what');
  const href = await page.getAttribute(ready, 'href');
  t.match(href, /\/user_avatars\/exports\/\d+\/[\w-]+\/confab-export-[\w-]+\.tar\.gz$/);
  const got = await fetch(ts.url + new URL(href!).pathname);
  t.equal(got.status, 200, 'the link downloads the archive');
  t.equal(got.headers.get('content-type'), 'application/gzip');
  await other.page.waitForSelector(ready);
  t.pass('the other session follows (realm_export)');
  await bothWidths(t, page, 'data-exports');

  await page.locator(`${table} button:has-text("Delete")`).click();
  await page.waitForSelector('.dialog.confirm h2:has-text("Delete this export?")');
  await confirm(page, 'Delete');
  await page.waitForSelector(`${table} tr[data-state="deleted"]`);
  t.equal(await page.locator(`${table} button:has-text("Delete")`).count(), 0, 'nothing to delete');
  await other.page.waitForSelector(`${table} tr[data-state="deleted"]`);
  t.equal((await fetch(ts.url + new URL(href!).pathname)).status, 404, 'its link is gone');

  // A member has no such panel.
  const member = await openApp(b, ts.url, ts.fx, 'hamlet');
  await member.page.click('.sidebar-foot button[aria-label="Settings"]');
  await member.page.waitForSelector('.settings nav');
  t.equal(await member.page.locator('.settings nav a:has-text("Data exports")').count(), 0);
  watch.assertClean(t, /WebSocket|status of 401/);
});
