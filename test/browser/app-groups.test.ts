/**
 * The web app's User groups settings panel in chromium (web/app/user-groups.tsx), with the real
 * server: a member creates a group with the people picker, renames and describes it, adds a
 * person and a subgroup, removes them, is shown the server's refusal when deactivating a group
 * still in use (and where it is used), lets nobody leave it, and deactivates the group — while another member's page follows each change live
 * and, without permission, is offered no control but Leave. A deactivated group is listed apart,
 * and its mention's card says it is deactivated, after a reload too (the app registers with
 * include_deactivated_groups). Screenshots at 1280 and 390 pixels.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { assertSuccess } from '../helpers/api.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

async function openGroups(page: Page): Promise<void> {
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.click('.settings nav a:has-text("User groups")');
  await page.waitForSelector('.settings h3:has-text("User groups")');
}

/** The list's row of a group, its text once it matches `text`. */
async function waitRow(page: Page, name: string, text: RegExp): Promise<string> {
  const row = page.locator('.group-row', {
    has: page.locator('.group-row-name', { hasText: name }),
  });
  await row.first().waitFor();
  await waitFor(
    page,
    `[...document.querySelectorAll('.group-row')].some((r) => r.querySelector('.group-row-name')?.textContent === ${JSON.stringify(name)} && ${text.toString()}.test(r.textContent))`,
  );
  return (await row.first().textContent()) ?? '';
}

type ApiGroup = {
  id: number;
  name: string;
  description: string;
  members: number[];
  can_leave_group: unknown;
};

t.test('create, edit, members, deactivate; another member follows live', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (n: string) => ts.fx.users[n]!.id;
  const general = await createChannel(ts.api, 'iago', 'general', {
    principals: ['hamlet', 'othello', 'iago'].map(id),
  });
  const groups = async () =>
    (
      assertSuccess(
        t,
        await ts.api.get('hamlet', 'user_groups', { include_deactivated_groups: true }),
      ).user_groups as (ApiGroup & { is_system_group: boolean; deactivated: boolean })[]
    ).filter((g) => !g.is_system_group);

  const a = await openApp(b, ts.url, ts.fx, 'hamlet');
  const o = await openApp(b, ts.url, ts.fx, 'othello');
  await openGroups(a.page);
  await openGroups(o.page);
  await o.page.waitForSelector('.user-groups :text("No groups yet.")');
  t.equal(
    await a.page.locator('.group-row').count(),
    0,
    'no system group is listed (the roles are not groups to edit)',
  );

  // Create: a name, a description, a person picked (Hamlet is in it at first).
  await a.page.click('button:has-text("Create a group")');
  await a.page.waitForSelector('input[name="group-name"]:focus');
  await a.page.fill('input[name="group-name"]', 'role:x');
  await a.page.click('button:has-text("Create group")');
  await a.page.waitForSelector('.group-create [role="alert"]:has-text("cannot start with")');
  await a.page.fill('input[name="group-name"]', 'reviewers');
  await a.page.fill('textarea[name="group-description"]', 'Read the drafts first');
  await a.page.fill('#group-create-people', 'cord');
  await a.page.waitForSelector('#group-create-people-options [role="option"]');
  await a.page.keyboard.press('Enter');
  await a.page.waitForSelector('.group-create .pill:has-text("Cordelia")');
  await screenshot(a.page, t, 'groups-create-1280');
  await a.page.click('button:has-text("Create group")');
  await a.page.waitForSelector('#group-title:has-text("reviewers")');
  const [g] = await groups();
  t.equal(g!.name, 'reviewers');
  t.equal(g!.description, 'Read the drafts first');
  t.same(
    g!.members,
    [id('hamlet'), id('cordelia')].sort((x, y) => x - y),
    'its members',
  );
  t.match(
    await waitRow(o.page, 'reviewers', /2 members/),
    /Read the drafts first/,
    'the other page lists it at once, with its description and size',
  );
  const gid = g!.id;
  // A mention of it, in a message both can read (its card, after the deactivation).
  await sendChannelMessage(ts.api, 'iago', 'general', 'plans', 'A question for @*reviewers*.');

  // Edit its name and description.
  await a.page.click('button:has-text("Edit name and description")');
  await a.page.fill('input[name="group-name"]', 'critics');
  await a.page.fill('textarea[name="group-description"]', 'They read it first.');
  await a.page.click('button:has-text("Save changes")');
  await a.page.waitForSelector('#group-title:has-text("critics")');
  await a.page.waitForSelector('.group-details :text("They read it first.")');
  await waitRow(o.page, 'critics', /They read it first\./);

  // Add a person, and a group as a subgroup.
  await a.page.fill('#group-add-people', 'oth');
  await a.page.waitForSelector('#group-add-people-options [role="option"]');
  await a.page.keyboard.press('Enter');
  await a.page.click('.add-members button:has-text("Add")');
  await a.page.waitForSelector('.member-list li:has-text("Othello")');
  const editors = assertSuccess(
    t,
    await ts.api.post('hamlet', 'user_groups/create', {
      name: 'editors',
      description: '',
      members: [id('prospero')],
    }),
  ).group_id as number;
  await a.page
    .locator('select[aria-label="Add a group to this group"] option', { hasText: 'editors' })
    .waitFor({ state: 'attached' });
  await a.page.selectOption('select[aria-label="Add a group to this group"]', { label: 'editors' });
  await a.page.click('button:has-text("Add group")');
  await a.page.waitForSelector('.member-list li:has-text("editors")');
  await a.page.waitForSelector('#group-members-title:has-text("Members (4, subgroups included)")');
  t.same(
    assertSuccess(t, await ts.api.get('hamlet', `user_groups/${gid}/subgroups`)).subgroups,
    [editors],
    'the subgroup is the server’s',
  );
  t.match(
    await waitRow(o.page, 'critics', /4 members · you are a member/),
    /critics/,
    'the other page: its size through the subgroup, and that Othello is in it',
  );
  await screenshot(a.page, t, 'groups-details-1280');

  // The other member opens it: no control but Leave (can_leave_group is everyone's).
  await o.page.locator('.group-row', { hasText: 'critics' }).click();
  await o.page.waitForSelector('#group-title:has-text("critics")');
  for (const control of [
    'button:has-text("Edit name and description")',
    '#group-add-people',
    'select[aria-label="Add a group to this group"]',
    '.member-list button:has-text("Remove")',
    'button:has-text("Deactivate group")',
  ])
    t.equal(await o.page.locator(control).count(), 0, `Othello is not offered ${control}`);
  t.equal(await o.page.locator('button:has-text("Leave group")').count(), 1, 'but Leave');
  t.equal(await o.page.locator('.group-permissions').count(), 0, 'nor the permissions');
  // Its permissions: Hamlet administers it (the creator, an anonymous group of one); once he
  // lets nobody leave, Othello's Leave goes at once.
  t.equal(
    await a.page.locator('select[name="can_manage_group"] option:checked').textContent(),
    'Hamlet',
  );
  await a.page.selectOption('select[name="can_leave_group"]', { label: 'Nobody' });
  await o.page.locator('button:has-text("Leave group")').waitFor({ state: 'detached' });
  t.equal(
    (await groups()).find((x) => x.id === gid)?.can_leave_group,
    systemGroupId(ts, 'role:nobody'),
    'the server has it',
  );
  await screenshot(a.page, t, 'groups-permissions-1280');

  // Remove a person and the subgroup: the other page follows.
  await a.page.click('button[aria-label="Remove Cordelia"]');
  await o.page.waitForSelector('.group-details .member-list:not(:has-text("Cordelia"))');
  // Her row gone, the focus its Remove had stays in the panel (on the group's title).
  await a.page.waitForSelector('#group-title:focus');
  // The server's refusal as it says it: a group used as a subgroup cannot be deactivated.
  await a.page.click('.group-back');
  await a.page.locator('.group-row', { hasText: 'editors' }).click();
  await a.page.waitForSelector('#group-title:has-text("editors")');
  await a.page.click('button:has-text("Deactivate group")');
  await a.page.click('.confirm button:has-text("Deactivate")');
  await a.page.waitForSelector(
    '.group-details [role="alert"]:has-text("Cannot deactivate user group in use")',
  );
  t.match(
    await a.page.textContent('.group-details [role="alert"]'),
    /It is still a subgroup of critics\./,
    'where it is used, by name',
  );
  t.equal((await groups()).find((x) => x.id === editors)?.deactivated, false, 'still active');
  await a.page.click('.group-back');
  await a.page.waitForSelector('.group-row:has-text("editors"):focus');
  await a.page.locator('.group-row', { hasText: 'critics' }).click();
  await a.page.click('button[aria-label="Remove the group editors"]');
  await o.page.waitForSelector('.group-details .member-list:not(:has-text("editors"))');
  await o.page.waitForSelector('#group-members-title:has-text("Members (2)")');

  // Deactivate it (after a question): listed apart; the other page shows it at once.
  await a.page.click('button:has-text("Deactivate group")');
  await a.page.click('.confirm button:has-text("Deactivate")');
  await a.page.waitForSelector('.group-badge:has-text("deactivated")');
  await a.page.waitForSelector('#group-title:focus');
  await o.page.waitForSelector('.group-badge:has-text("deactivated")');
  for (const control of ['#group-add-people', '.member-list button:has-text("Remove")'])
    t.equal(
      await a.page.locator(control).count(),
      0,
      `its members no longer change: no ${control} for its manager`,
    );
  t.equal(
    await a.page.locator('button:has-text("Edit name and description")').count(),
    1,
    'its name and description still do',
  );
  t.equal((await groups()).find((x) => x.id === gid)?.deactivated, true);
  await a.page.click('.group-back');
  await a.page.waitForSelector('.group-list.deactivated .group-row:has-text("critics")');
  t.equal(
    await a.page
      .locator('.group-list:not(.deactivated) .group-row', { hasText: 'critics' })
      .count(),
    0,
    'not among the active groups',
  );
  await screenshot(a.page, t, 'groups-list-1280');

  // Its mention's card says it is deactivated: live, and after a reload (from register).
  for (const reload of [false, true]) {
    if (reload) await a.page.reload();
    await a.page.goto(`${ts.url}/#narrow/channel/${general}-general`);
    await waitMessage(a.page, 'A question for');
    await a.page.locator('.msg .content .user-group-mention').click();
    await a.page.getByRole('dialog', { name: 'critics' }).waitFor();
    t.match(
      await a.page.textContent('.group-card'),
      /This group has been deactivated\./,
      reload ? 'after a reload' : 'live',
    );
    await a.page.keyboard.press('Escape');
    await a.page.getByRole('dialog', { name: 'critics' }).waitFor({ state: 'detached' });
  }
  // Nor is it suggested for a mention any more (an active group of a like name is).
  assertSuccess(
    t,
    await ts.api.post('othello', 'user_groups/create', {
      name: 'critters',
      description: '',
      members: [id('othello')],
    }),
  );
  await a.page.click('#compose-text');
  await a.page.keyboard.type('@crit');
  await a.page.waitForSelector('#compose-options [role="option"]:has-text("critters")');
  t.equal(
    await a.page.locator('#compose-options [role="option"]', { hasText: 'critics' }).count(),
    0,
    'a deactivated group is not suggested',
  );
  a.watch.assertClean(t, /WebSocket|status of 40[01]/);
  o.watch.assertClean(t, /WebSocket|status of 401/);
  await a.page.close();
  await o.page.close();
});

t.test('at 390 pixels; a guest has no panel; who may not create sees no Create', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (n: string) => ts.fx.users[n]!.id;
  assertSuccess(
    t,
    await ts.api.post('iago', 'user_groups/create', {
      name: 'support',
      description: 'First line',
      members: [id('iago'), id('hamlet')],
    }),
  );
  // Only administrators may create groups.
  assertSuccess(
    t,
    await ts.api.patch('desdemona', 'realm', {
      can_create_groups: { new: systemGroupId(ts, 'role:administrators') },
    }),
  );
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { width: 390, height: 844 });
  await page.goto(`${ts.url}/#settings/groups`);
  await page.waitForSelector('.settings h3:has-text("User groups")');
  await waitRow(page, 'support', /2 members · you are a member/);
  t.equal(await page.locator('button:has-text("Create a group")').count(), 0, 'no Create');
  // The filter: by name or description.
  await page.fill('input[aria-label="Filter groups"]', 'nothing like it');
  await page.waitForSelector('.user-groups [role="status"]:has-text("No group matches.")');
  t.equal(await page.locator('.group-row').count(), 0, 'no row');
  await page.fill('input[aria-label="Filter groups"]', 'LINE');
  await waitRow(page, 'support', /First line/);
  await screenshot(page, t, 'groups-list-390');
  await page.locator('.group-row', { hasText: 'support' }).click();
  await page.waitForSelector('#group-title:has-text("support")');
  await screenshot(page, t, 'groups-details-390');
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();

  const guest = await openApp(b, ts.url, ts.fx, 'polonius');
  await guest.page.click('.sidebar-foot button[aria-label="Settings"]');
  await guest.page.waitForSelector('.settings nav');
  t.equal(
    await guest.page.locator('.settings nav a:has-text("User groups")').count(),
    0,
    'a guest has no groups panel',
  );
  await guest.page.close();
});
