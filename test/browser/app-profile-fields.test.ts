/**
 * Custom profile fields in the web app in chromium, against the real server: an administrator
 * (Iago) adds fields of several types in Settings → Custom profile fields (a choice field with
 * its options, a person field, a GitHub account, pronouns; the server's refusal of a second field
 * of the same name shown; a third field on the card not offered), a member (Hamlet) fills his in
 * Settings → Profile (each with its own input: a list, a date, a link, the people picker) — the
 * server's message for a value it refuses shown —, and Othello's page, with Hamlet's card open,
 * follows every change live: the summary fields on the card, the pronouns after the name, the
 * full profile's links (a new tab, rel noopener), people (each opening their card) and rendered
 * text; a value cleared goes. The administrator moves a field up (the focus staying on its
 * button) and deletes one after a confirmation: the card and Hamlet's panel follow.
 *
 * Each wait is for what the action brings: a row not there before, a value the card did not show.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { assertSuccess } from '../helpers/api.js';
import { sendChannelMessage } from '../helpers/messages.js';

let general: number;
const id = (name: string) => ts.fx.users[name]!.id;

const { b, ts } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'othello', members: ['hamlet', 'othello', 'iago'] } },
  seed: async ({ ts, channels }) => {
    general = channels.general;
    await sendChannelMessage(ts.api, 'hamlet', 'general', 'review', 'Hamlet reads the plan.');
  },
});

/** Settings' panel `id` (`#settings/<id>`), its title shown. */
async function openSettings(page: Page, id: string, title: string): Promise<void> {
  if ((await page.locator('.settings').count()) === 0)
    await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.click(`.settings nav a[href="#settings/${id}"]`);
  await waitFor(
    page,
    `document.getElementById('panel-title')?.textContent === ${JSON.stringify(title)}`,
  );
}

/** The card's facts, as label → value. */
function facts(page: Page): Promise<Record<string, string>> {
  return page.evaluate(`Object.fromEntries(
    [...document.querySelectorAll('.profile-card .card-facts > div')].map((d) => [
      d.querySelector('dt').textContent.trim(),
      d.querySelector('dd').textContent.trim(),
    ]),
  )`);
}

/** Until the open card's fact `label` reads `value` (undefined: until it is gone). */
function waitFact(page: Page, label: string, value: string | undefined): Promise<void> {
  const facts = `[...document.querySelectorAll('.profile-card .card-facts > div')].find((d) => d.querySelector('dt').textContent.trim() === ${JSON.stringify(label)})`;
  return waitFor(
    page,
    value === undefined
      ? `!${facts}`
      : `${facts}?.querySelector('dd').textContent.trim() === ${JSON.stringify(value)}`,
  );
}

/** Adds a field with the administrators' form: its type first, then what `fill` does. */
async function addField(
  page: Page,
  type: string,
  fill: (form: ReturnType<Page['locator']>) => Promise<void>,
): Promise<void> {
  await page.click('button.pf-add');
  const form = page.locator('form[aria-label="Add a profile field"]');
  await form.waitFor();
  await form.locator('select').first().selectOption({ label: type });
  await fill(form);
  await form.locator('button[type="submit"]').click();
  await form.waitFor({ state: 'detached' });
}

t.test('fields added, filled in, shown on the card live, reordered and deleted', async (t) => {
  if (NO_CHROMIUM) return;
  const admin = await openApp(b, ts.url, ts.fx, 'iago');
  const a = admin.page;
  await openSettings(a, 'profile-fields', 'Custom profile fields');
  await a.waitForSelector('text=No custom profile fields yet.');

  await addField(a, 'Text (short)', async (f) => {
    await f.locator('label:has-text("Name") input').fill('Team');
    await f.locator('label:has-text("Hint") input').fill('Where you work');
    await f.locator('label:has-text("Show on the profile card") input').check();
  });
  await a.waitForSelector('.pf-list li:has-text("Team")');
  await addField(a, 'List of options', async (f) => {
    await f.locator('label:has-text("Name") input').fill('Editor');
    await f.locator('input[aria-label="Choice 1"]').fill('Vim');
    await f.locator('button:has-text("Add a choice")').click();
    await f.locator('input[aria-label="Choice 2"]').fill('Emacs');
    await f.locator('label:has-text("Show on the profile card") input').check();
    await f.locator('label:has-text("Required") input').check();
  });
  await a.waitForSelector('.pf-list li:has-text("Editor")');
  await addField(a, 'Users', async (f) => {
    await f.locator('label:has-text("Name") input').fill('Manager');
  });
  await addField(a, 'External account', async (f) => {
    await f.locator('select').nth(1).selectOption({ label: 'GitHub' });
    t.equal(await f.locator('label:has-text("Name") input').count(), 0, "a default's name is set");
  });
  await addField(a, 'Pronouns', async (f) => {
    await f.locator('label:has-text("Name") input').fill('Pronouns');
    const summary = f.locator('label:has-text("Show on the profile card") input');
    t.ok(await summary.isDisabled(), 'two fields are on the card already: no third');
  });
  await a.waitForSelector('.pf-list li:has-text("Pronouns")');

  // The server's refusal, as it words it.
  await a.click('button.pf-add');
  const dup = a.locator('form[aria-label="Add a profile field"]');
  await dup.locator('label:has-text("Name") input').fill('Team');
  await dup.locator('button[type="submit"]').click();
  await dup.locator('[role="alert"]:has-text("A field with that label already exists.")').waitFor();
  await screenshot(a, t, 'profile-fields-admin-1280');
  await dup.locator('button:has-text("Cancel")').click();
  await waitFor(a, `document.activeElement?.classList.contains('pf-add')`);

  // Three more types through the API.
  for (const [name, field_type] of [
    ['Birthday', 4],
    ['Website', 5],
    ['Bio', 2],
  ] as const)
    assertSuccess(t, await ts.api.post('iago', 'realm/profile_fields', { name, field_type }));
  await a.waitForSelector('.pf-list li:has-text("Bio")');
  const fields = assertSuccess(t, await ts.api.get('iago', 'realm/profile_fields'))
    .custom_fields as { id: number; name: string; type: number; field_data: string }[];
  t.same(
    fields.map((f) => [f.name, f.type]),
    [
      ['Team', 1],
      ['Editor', 3],
      ['Manager', 6],
      ['GitHub', 7],
      ['Pronouns', 8],
      ['Birthday', 4],
      ['Website', 5],
      ['Bio', 2],
    ],
    'the fields, in the order added',
  );
  const fieldId = (name: string) => fields.find((f) => f.name === name)!.id;

  // Othello has Hamlet's card open.
  const viewer = await openApp(b, ts.url, ts.fx, 'othello', {
    hash: `#narrow/channel/${general}-general/topic/review`,
  });
  const v = viewer.page;
  await v.locator('.msg', { hasText: 'Hamlet reads the plan.' }).locator('.sender').click();
  await v.waitForSelector('.profile-card .card-name:has-text("Hamlet")');
  t.equal(await v.locator('.profile-card .card-field').count(), 0, 'nothing filled in yet');

  // Hamlet fills his in.
  const member = await openApp(b, ts.url, ts.fx, 'hamlet');
  const m = member.page;
  await openSettings(m, 'profile', 'Profile');
  const own = m.locator('form[aria-label="Your profile fields"]');
  await own.waitFor();
  t.match(await own.locator('label:has-text("Editor")').textContent(), /required/);
  await own.getByLabel('Team').fill('Infrastructure');
  await own.getByLabel('Editor').selectOption({ label: 'Emacs' });
  await own.getByLabel('Birthday').fill('1990-04-23');
  await own.getByLabel('Website').fill('not a link');
  await own.getByLabel('GitHub').fill('hamlet-dane');
  await own.getByLabel('Pronouns').fill('he/him');
  await own.getByLabel('Bio').fill('To be, *or not* to be.');
  const picker = own.locator('input[aria-label="Manager"]');
  await picker.fill('Othel');
  await m.waitForSelector('[role="option"]:has-text("Othello")');
  await picker.press('Enter');
  await own.locator('.pill:has-text("Othello")').waitFor();
  await screenshot(m, t, 'profile-fields-own-1280');
  await own.locator('button:has-text("Save changes")').click();
  await own.locator('[role="alert"]:has-text("Website is not a URL")').waitFor();
  t.pass("the server's refusal shown as it says it");
  await own.getByLabel('Website').fill('https://elsinore.example/hamlet');
  await own.locator('button:has-text("Save changes")').click();
  await own.locator('[role="status"]:has-text("Saved.")').waitFor();
  const data = assertSuccess(
    t,
    await ts.api.get('othello', `users/${id('hamlet')}`, {
      include_custom_profile_fields: true,
    }),
  ).user as { profile_data: Record<string, { value: string }> };
  t.equal(data.profile_data[fieldId('Manager')]?.value, JSON.stringify([id('othello')]));
  t.equal(data.profile_data[fieldId('Editor')]?.value, '1', "the option's id");

  // Othello's open card followed: the summary fields, the pronouns after the name.
  await waitFact(v, 'Team', 'Infrastructure');
  await waitFact(v, 'Editor', 'Emacs');
  t.match(await v.textContent('.profile-card .card-name'), /Hamlet\s*he\/him/);
  t.same(Object.keys(await facts(v)), ['Role', 'Team', 'Editor'], 'the summary fields only');
  await screenshot(v, t, 'profile-fields-card-1280');
  await v.click('.profile-card button:has-text("View full profile")');
  await waitFact(v, 'Bio', 'To be, or not to be.');
  const all = await facts(v);
  t.same(
    Object.keys(all),
    ['Role', 'Team', 'Editor', 'Manager', 'GitHub', 'Birthday', 'Website', 'Bio'],
    'every field filled in, in order (the pronouns by the name)',
  );
  t.equal(all.Birthday, 'Apr 23, 1990');
  const link = v.locator('.profile-card .card-field a:has-text("elsinore")');
  t.equal(await link.getAttribute('href'), 'https://elsinore.example/hamlet');
  t.equal(await link.getAttribute('target'), '_blank');
  t.match(await link.getAttribute('rel'), /noopener/);
  t.equal(
    await v.locator('.profile-card a:has-text("hamlet-dane")').getAttribute('href'),
    'https://github.com/hamlet-dane',
    'the GitHub account, linked',
  );
  t.equal(
    await v.locator('.profile-card .card-field em:has-text("or not")').count(),
    1,
    'rendered',
  );
  await screenshot(v, t, 'profile-fields-card-full-1280');

  // The administrator edits a field: a new choice, in Hamlet's open panel at once.
  await a.click('button[aria-label="Edit Editor"]');
  const edit = a.locator('form[aria-label="Edit Editor"]');
  await waitFor(
    a,
    `document.activeElement?.closest('form')?.getAttribute('aria-label') === 'Edit Editor'`,
  );
  await edit.locator('button:has-text("Add a choice")').click();
  await edit.locator('input[aria-label="Choice 3"]').fill('Nano');
  await edit.locator('button:has-text("Save")').click();
  await edit.waitFor({ state: 'detached' });
  await waitFor(a, `document.activeElement?.getAttribute('aria-label') === 'Edit Editor'`);
  await m.waitForSelector(`#pf-own-${fieldId('Editor')} option:has-text("Nano")`, {
    state: 'attached',
  });
  t.equal(await own.getByLabel('Editor').inputValue(), '1', "Hamlet's choice kept");

  // A value cleared: gone from the card.
  await own.getByLabel('Website').fill('');
  await own.locator('button:has-text("Save changes")').click();
  await waitFact(v, 'Website', undefined);
  t.pass('a cleared value leaves the card');

  // The administrator moves Editor up: the card's order follows, the focus stays on it.
  // From the keyboard: Enter on its button.
  await a.focus('button[aria-label="Move Editor up"]');
  await a.keyboard.press('Enter');
  await waitFor(
    v,
    `[...document.querySelectorAll('.profile-card .card-facts dt')].map((d) => d.textContent).slice(1, 3).join() === 'Editor,Team'`,
  );
  await waitFor(a, `document.activeElement?.getAttribute('aria-label') === 'Move Editor down'`);
  t.pass('at the top, the focus is on its other move button');
  t.match(await a.textContent('.pf-list li:first-child'), /Editor/);

  // And deletes Team, after a confirmation.
  await a.click('button[aria-label="Delete Team"]');
  await a.waitForSelector('.confirm:has-text("Delete this profile field?")');
  await screenshot(a, t, 'profile-fields-delete-1280');
  await a.click('.confirm button:has-text("Delete")');
  await waitFor(
    a,
    `![...document.querySelectorAll('.pf-list li')].some((l) => l.textContent.includes('Team'))`,
  );
  await waitFact(v, 'Team', undefined);
  await m.waitForSelector('form[aria-label="Your profile fields"] label:has-text("Editor")');
  await waitFor(m, `!document.getElementById('pf-own-${fieldId('Team')}')`);
  t.pass("gone from the card and from Hamlet's panel");

  // The person field's name opens that person's card.
  await v.click('.profile-card .card-field-people button:has-text("Othello")');
  await v.waitForSelector('.profile-card .card-name:has-text("Othello")');

  for (const p of [admin, viewer, member]) {
    p.watch.assertClean(t, /WebSocket|status of 40[01]/);
    await p.page.close();
  }
});

t.test('at 390 px: the panels and the card', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    width: 390,
    height: 844,
    hash: `#narrow/channel/${general}-general/topic/review`,
  });
  await page.click('.msg .sender');
  await page.waitForSelector('.profile-card.sheet .card-field');
  await screenshot(page, t, 'profile-fields-card-390');
  await page.keyboard.press('Escape');
  await page.goto(ts.url + '/#settings/profile');
  await page.waitForSelector('form[aria-label="Your profile fields"]');
  await screenshot(page, t, 'profile-fields-own-390');
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();

  const admin = await openApp(b, ts.url, ts.fx, 'iago', { width: 390, height: 844 });
  await admin.page.goto(ts.url + '/#settings/profile-fields');
  await admin.page.click('button[aria-label="Edit Editor"]');
  await admin.page.waitForSelector('form[aria-label="Edit Editor"] input[aria-label="Choice 1"]');
  await screenshot(admin.page, t, 'profile-fields-admin-390');
  admin.watch.assertClean(t, /WebSocket|status of 401/);
  await admin.page.close();
});
