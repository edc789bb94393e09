/**
 * The web app's Organization and Custom emoji settings panels in chromium (web/app/organization.tsx)
 * against the real server: an administrator renames the organization and a member's page shows
 * the new name; the administrator lets only administrators create channels and the member's
 * "Create channel" goes, live; owner-only settings and a composed value are read-only for an
 * administrator, everything for a member; an owner changes an owner-only one on a narrow screen.
 * A member uploads a custom emoji (the server's name and size refusals shown first), uses it in a
 * message and a reaction, and deletes it; an administrator's page follows each change; once only
 * administrators may add emoji, the member's form goes. Screenshots at 1280 and 390 px.
 */
import t from 'tap';
import { openApp, openSettings, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { assertSuccess } from '../helpers/api.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { tinyGif, tinyPng } from '../helpers/images.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

const CREATE = '.sidebar button[aria-label="Create channel"]';
const PROFILE = 'form[aria-labelledby="org-profile-title"]';
const PERMISSIONS = 'form[aria-labelledby="org-permissions-title"]';

/** The Organization panel's selects (id: label) whose chosen label is cut: wider than the box's
 *  room on one line, and not wrapped within it; or whose box leaves its section's. */
const CLIPPED_SELECTS = `(() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const s of document.querySelectorAll('.org-field select')) {
    const cs = getComputedStyle(s);
    ctx.font = cs.font;
    const text = s.selectedOptions[0]?.textContent ?? '';
    const room = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const wraps = !/^(pre|nowrap)/.test(cs.whiteSpace);
    const fits = ctx.measureText(text).width <= room || (wraps && s.scrollHeight <= s.clientHeight);
    const box = s.getBoundingClientRect();
    const section = s.closest('.org-section').getBoundingClientRect();
    if (!fits || box.left < section.left || box.right > section.right) out.push(s.id + ': ' + text);
  }
  return out;
})()`;

t.test('an administrator renames the organization and limits channel creation', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const hamlet = ts.fx.users['hamlet']!;
  // A value that is no single system group: administrators and Hamlet.
  assertSuccess(
    t,
    await ts.api.patch('iago', 'realm', {
      can_move_messages_between_channels_group: JSON.stringify({
        new: {
          direct_members: [hamlet.id],
          direct_subgroups: [systemGroupId(ts, 'role:administrators')],
        },
      }),
    }),
  );
  const admin = await openApp(b, ts.url, ts.fx, 'iago');
  const member = await openApp(b, ts.url, ts.fx, 'hamlet');
  await member.page.waitForSelector(CREATE);

  const page = admin.page;
  await openSettings(page, 'Organization');
  const name = page.getByLabel('Organization name');
  t.equal(await name.inputValue(), await member.page.textContent('.realm-name'), 'the name');
  t.equal(await page.locator(`${PROFILE} button:has-text("Save changes")`).count(), 0, 'no edits');
  await name.fill('Elsinore Players');
  await page.getByLabel('Description').fill('The company of the castle.');
  await page.click(`${PROFILE} button:has-text("Save changes")`);
  await page.waitForSelector(`${PROFILE} [role="status"]:has-text("Saved: 2 changes.")`);
  await waitFor(
    member.page,
    `document.querySelector('.realm-name')?.textContent === 'Elsinore Players'`,
  );
  const realm = assertSuccess(
    t,
    await ts.api.post('hamlet', 'register', { fetch_event_types: JSON.stringify(['realm']) }),
  );
  t.equal(realm.realm_name, 'Elsinore Players', 'the server has the new name');
  t.equal(realm.realm_description, 'The company of the castle.');

  // What an administrator cannot change: owners' settings, a composed value.
  t.ok(await page.locator('#org-can_invite_users_group').isDisabled(), 'owner-only: disabled');
  t.match(
    await page.textContent('.org-field:has(#org-can_invite_users_group)'),
    /Only owners can change this/,
  );
  t.match(
    await page.textContent('#org-can_move_messages_between_channels_group'),
    /^Administrators only and .+/,
    'a composed value in words, read-only',
  );

  for (const key of ['can_create_public_channel_group', 'can_create_private_channel_group'])
    await page.selectOption(`#org-${key}`, 'role:administrators');
  await page.selectOption('#org-edit-limit', { label: '1 hour' });
  await page.click(`${PERMISSIONS} button:has-text("Save changes")`);
  await page.waitForSelector(`${PERMISSIONS} [role="status"]:has-text("Saved: 3 changes.")`);
  await waitFor(member.page, `document.querySelector('${CREATE}') === null`);
  t.pass('the member’s Create channel is gone, live');
  const reg = assertSuccess(
    t,
    await ts.api.post('hamlet', 'register', {
      fetch_event_types: JSON.stringify(['realm']),
    }),
  );
  const admins = systemGroupId(ts, 'role:administrators');
  t.equal(reg.realm_can_create_public_channel_group, admins);
  t.equal(reg.realm_can_create_private_channel_group, admins);
  t.equal(reg.realm_message_content_edit_limit_seconds, 3600);
  await screenshot(page, t, 'organization-admin-1280');

  // The member reads the same values (as they change), and can change none.
  await openSettings(member.page, 'Organization');
  const mp = member.page;
  t.equal(await mp.inputValue('#org-can_create_public_channel_group'), 'role:administrators');
  t.ok(await mp.locator('#org-can_create_public_channel_group').isDisabled());
  t.equal(await mp.getByLabel('Organization name').getAttribute('readonly'), '', 'read-only');
  t.match(await mp.textContent('.settings section'), /Only administrators can change/);
  assertSuccess(
    t,
    await ts.api.patch('iago', 'realm', {
      can_delete_own_message_group: JSON.stringify({ new: systemGroupId(ts, 'role:nobody') }),
    }),
  );
  await waitFor(
    mp,
    `document.querySelector('#org-can_delete_own_message_group')?.value === 'role:nobody'`,
  );
  t.pass('another administrator’s change shows at once');

  // An edit in progress stays while someone else changes another field.
  await page.selectOption('#org-can_add_custom_emoji_group', 'role:moderators');
  assertSuccess(t, await ts.api.patch('iago', 'realm', { name: 'Kronborg' }));
  await waitFor(page, `document.querySelector('#org-can_delete_own_message_group') !== null`);
  await waitFor(page, `document.querySelector('.realm-name')?.textContent === 'Kronborg'`);
  t.equal(await page.getByLabel('Organization name').inputValue(), 'Kronborg');
  t.equal(await page.inputValue('#org-can_add_custom_emoji_group'), 'role:moderators');
  await page.click(`${PERMISSIONS} button:has-text("Discard")`);
  await waitFor(
    page,
    `document.querySelector('#org-can_add_custom_emoji_group')?.value === 'role:members'`,
  );
  t.equal(
    await page.locator(`${PERMISSIONS} button:has-text("Save changes")`).count(),
    0,
    'discarded',
  );

  // An owner changes an owner-only setting (at 390 px); the administrator's page follows.
  const owner = await openApp(b, ts.url, ts.fx, 'desdemona', { width: 390, height: 800 });
  const op = owner.page;
  await op.goto(ts.url + '/#settings/organization');
  await op.waitForSelector('.settings h3:has-text("Organization")');
  t.match(await op.textContent('.settings section'), /As an owner, you can change every setting/);
  t.notOk(await op.locator('#org-can_invite_users_group').isDisabled(), 'owner-only: enabled');
  await op.selectOption('#org-can_invite_users_group', 'role:administrators');
  await op.click(`${PERMISSIONS} button:has-text("Save changes")`);
  await op.waitForSelector(`${PERMISSIONS} [role="status"]:has-text("Saved: 1 change.")`);
  await waitFor(
    page,
    `document.querySelector('#org-can_invite_users_group')?.value === 'role:administrators'`,
  );
  // Every select's chosen label in full at 390: on one line if it fits, else wrapped with the
  // box as tall as its lines; and each box inside its section. (A native select cuts a label
  // longer than its box on one line, its scrollWidth no larger than its clientWidth.)
  t.same(await op.evaluate<string[]>(CLIPPED_SELECTS), [], 'no select cuts its label at 390 px');
  t.ok(
    await op.evaluate<boolean>(
      `document.querySelector('#org-can_create_groups').selectedOptions[0].textContent.length > 30
        && document.querySelector('#org-can_create_groups').offsetHeight > 40`,
    ),
    'a long label wraps to a second line',
  );
  await screenshot(op, t, 'organization-owner-390');
  await op.locator('#org-can_create_groups').scrollIntoViewIfNeeded();
  await screenshot(op, t, 'organization-owner-390-long-labels');
  admin.watch.assertClean(t, /WebSocket|status of 401/);
  member.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a member adds a custom emoji, uses it and deletes it', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const everyone = ['hamlet', 'iago'].map((n) => ts.fx.users[n]!.id);
  const general = await createChannel(ts.api, 'iago', 'general', { principals: everyone });
  const msg = await sendChannelMessage(ts.api, 'iago', 'general', 'party', 'Who brings what?');
  const hash = `#narrow/channel/${general}-general/topic/party`;
  const admin = await openApp(b, ts.url, ts.fx, 'iago');
  await openSettings(admin.page, 'Custom emoji');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash });
  await openSettings(page, 'Custom emoji');
  await page.waitForSelector('text=This organization has no custom emoji yet.');

  const add = async (name: string, file: { name: string; mimeType: string; buffer: Buffer }) => {
    await page.getByLabel('Emoji name').fill(name);
    await page.setInputFiles('.org-emoji-form input[type="file"]', file);
    await page.click('button:has-text("Add emoji")');
  };
  const png = { name: 'p.png', mimeType: 'image/png', buffer: tinyPng() };
  // The server's refusals, in its words.
  await add('Party!', png);
  await page.waitForSelector('.settings [role="alert"]:has-text("Emoji names must contain only")');
  const big = Buffer.concat([tinyPng(), Buffer.alloc(5 * 1024 * 1024 + 10)]);
  await add('huge', { name: 'huge.png', mimeType: 'image/png', buffer: big });
  await page.waitForSelector('.settings [role="alert"]:has-text("larger than the allowed limit")');

  await add('party parrot', { name: 'parrot.gif', mimeType: 'image/gif', buffer: tinyGif(2) });
  await page.waitForSelector('.settings [role="status"]:has-text("Added :party_parrot:.")');
  const row = '.org-emoji tr:has-text(":party_parrot:")';
  await page.waitForSelector(`${row} img[alt=":party_parrot:"]`);
  t.match(await page.textContent(row), /You/, 'the author: you');
  t.equal(await page.getByLabel('Emoji name').inputValue(), '', 'the form is emptied');
  // The administrator's page, live: the author by name, and a Delete of their own.
  const who = assertSuccess(t, await ts.api.get('iago', `users/${ts.fx.users['hamlet']!.id}`))
    .user as { full_name: string };
  await admin.page.waitForSelector(`${row}:has-text("${who.full_name}")`);
  await admin.page.waitForSelector(`${row} button:has-text("Delete")`);
  await screenshot(page, t, 'custom-emoji-1280');

  // In a message, and as a reaction from the picker.
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.settings') === null`);
  await waitMessage(page, 'Who brings what?');
  await page.click('#compose-text');
  await page.keyboard.type('Cheers :party_parrot: all');
  await page.keyboard.press('Escape'); // any suggestion shown
  await page.press('#compose-text', 'Enter');
  await page.waitForSelector('.msg .content img[alt=":party_parrot:"]');
  const m = page.locator(`.msg[data-id="${msg}"]`);
  await m.hover();
  await m.locator('button[aria-label="Add a reaction"]').click();
  await page.fill('input[aria-label="Search emoji"]', 'party_parrot');
  await waitFor(
    page,
    `document.querySelector('.picker-grid [role="option"]')?.getAttribute('title') === ':party_parrot:' || document.querySelectorAll('.picker-grid [role="option"]').length === 1`,
  );
  await page.keyboard.press('Enter');
  await page.waitForSelector(`.msg[data-id="${msg}"] .reaction`);
  const got = assertSuccess(t, await ts.api.get('iago', `messages/${msg}`)).message as {
    reactions: { emoji_name: string; reaction_type: string }[];
  };
  t.same(
    got.reactions.map((r) => [r.emoji_name, r.reaction_type]),
    [['party_parrot', 'realm_emoji']],
    'the reaction is the custom emoji',
  );

  // Deleted by its author (after a question); gone from both pages.
  await openSettings(page, 'Custom emoji');
  await page.click('button[aria-label="Delete :party_parrot:"]');
  await page.getByRole('alertdialog').waitFor();
  await page.click('.confirm button:has-text("Delete")');
  await page.waitForSelector('text=This organization has no custom emoji yet.');
  await admin.page.waitForSelector('text=This organization has no custom emoji yet.');
  const left = assertSuccess(t, await ts.api.get('iago', 'realm/emoji')).emoji as Record<
    string,
    { deactivated: boolean }
  >;
  t.ok(
    Object.values(left).every((e) => e.deactivated),
    'the server has it deactivated',
  );

  // Only administrators may add emoji now: the member's form goes, live.
  assertSuccess(
    t,
    await ts.api.patch('iago', 'realm', {
      can_add_custom_emoji_group: JSON.stringify({
        new: systemGroupId(ts, 'role:administrators'),
      }),
    }),
  );
  await page.waitForSelector('text=You cannot add custom emoji');
  t.equal(await page.locator('.org-emoji-form').count(), 0, 'no form');
  const narrow = await openApp(b, ts.url, ts.fx, 'iago', { width: 390, height: 800 });
  await narrow.page.goto(ts.url + '/#settings/emoji');
  await narrow.page.waitForSelector('.settings h3:has-text("Custom emoji")');
  await screenshot(narrow.page, t, 'custom-emoji-390');
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});
