/**
 * The web app's Users settings panel in chromium with the real server (web/app/users.tsx): an
 * administrator changes a member's role, deactivates them (the confirmation names them and their
 * bot) and an owner reactivates them, each seen live by the other administrator's page; an
 * administrator has no controls for an owner; the only owner's own demotion is refused with the
 * server's words; a name opens the profile card; an administrator made a member loses the
 * controls. A member sees the lists without the controls, and follows changes made elsewhere (a
 * role, someone joining); a large organization is drawn a page at a time. With SMTP, the
 * deactivation can mail the person (a comment quoted), not unless asked; without, nor for a bot,
 * the choice is not offered.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { assertSuccess } from '../helpers/api.js';
import { insertMembers } from '../helpers/fixtures.js';
import { startServer } from '../helpers/server.js';
import { TestSmtp } from '../helpers/smtp.js';

const { b } = browserSuite(t);

async function openUsers(page: Page): Promise<void> {
  if ((await page.locator('.settings').count()) === 0)
    await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.click('.settings nav a[href="#settings/users"]'); // not "Muted users"
  await page.waitForSelector('.settings h3:has-text("Users")');
  await page.waitForSelector('.users-list li');
}

async function tab(page: Page, name: string): Promise<void> {
  await page.click(`.users-tabs button:has-text("${name}")`);
  await page.waitForSelector(`.users-list[aria-label="${name}"], .settings section p[role=status]`);
}

const row = (page: Page, name: string) => page.locator('.users-list li', { hasText: name });
const roleSelect = (page: Page, name: string) =>
  page.locator(`select[aria-label="Role of ${name}"]`);

t.test('administrators change a role, deactivate and reactivate, live', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const hamletId = ts.fx.users['hamlet']!.id;
  assertSuccess(
    t,
    await ts.api.post('hamlet', 'bots', {
      full_name: 'Deploy notices',
      short_name: 'deploys',
      bot_type: 2,
    }),
  );
  const iago = await openApp(b, ts.url, ts.fx, 'iago');
  const desdemona = await openApp(b, ts.url, ts.fx, 'desdemona');
  const a = iago.page;
  const o = desdemona.page;
  await openUsers(a);
  await openUsers(o);

  // The role: chosen, then saved; the other administrator's page follows.
  t.equal(await roleSelect(a, 'Hamlet').inputValue(), '400', 'a member');
  t.same(
    await roleSelect(a, 'Hamlet').locator('option').allTextContents(),
    ['Administrator', 'Moderator', 'Member', 'Guest'],
    'an administrator cannot make owners',
  );
  t.same(
    await roleSelect(o, 'Hamlet').locator('option').allTextContents(),
    ['Owner', 'Administrator', 'Moderator', 'Member', 'Guest'],
    'an owner can',
  );
  await roleSelect(a, 'Hamlet').selectOption('300');
  await row(a, 'Hamlet').locator('button:has-text("Save")').click();
  await waitFor(
    o,
    `document.querySelector('select[aria-label="Role of Hamlet"]')?.value === '300'`,
  );
  await row(a, 'Hamlet').locator('button:has-text("Save")').waitFor({ state: 'detached' });
  t.equal(await roleSelect(a, 'Hamlet').inputValue(), '300');
  const hamlet = assertSuccess(t, await ts.api.get('iago', `users/${hamletId}`)).user as {
    role: number;
  };
  t.equal(hamlet.role, 300, 'the server has it');

  // No controls for an owner's account, nor to deactivate oneself.
  t.equal(await roleSelect(a, 'Desdemona').count(), 0, 'an owner’s role: not for an admin');
  t.match(await row(a, 'Desdemona').textContent(), /Owner/);
  t.equal(await row(a, 'Desdemona').locator('button:has-text("Deactivate")').count(), 0);
  t.equal(await row(a, 'Iago (you)').locator('button:has-text("Deactivate")').count(), 0);
  t.equal(await row(o, 'Iago').locator('button:has-text("Deactivate")').count(), 1);

  // Deactivation, after a confirmation naming the person and their bot.
  await row(a, 'Hamlet').locator('button:has-text("Deactivate")').click();
  const ask = a.getByRole('alertdialog');
  await ask.waitFor();
  t.equal(await ask.locator('h2').textContent(), 'Deactivate Hamlet?');
  t.match(await ask.textContent(), /Their bot Deploy notices is deactivated too/);
  await screenshot(a, t, 'users-confirm-1280');
  await ask.locator('button:has-text("Deactivate")').click();
  await row(a, 'Hamlet').waitFor({ state: 'detached' });
  await row(o, 'Hamlet').waitFor({ state: 'detached' });
  t.pass('gone from both pages’ active users');
  await tab(o, 'Deactivated users');
  await row(o, 'Hamlet').waitFor();
  await tab(o, 'Bots');
  t.match(await row(o, 'Deploy notices').textContent(), /Deactivated/, 'the bot with him');
  t.match(await row(o, 'Deploy notices').textContent(), /Owner: Hamlet/);
  await screenshot(o, t, 'users-bots-1280');

  // An owner reactivates him; the administrator's page has him back.
  await tab(o, 'Deactivated users');
  await row(o, 'Hamlet').locator('button:has-text("Reactivate")').click();
  await o.getByRole('alertdialog').waitFor();
  await o.getByRole('alertdialog').locator('button:has-text("Reactivate")').click();
  await row(o, 'Hamlet').waitFor({ state: 'detached' });
  await row(a, 'Hamlet').waitFor();
  t.equal(
    (assertSuccess(t, await ts.api.get('iago', `users/${hamletId}`)).user as { is_active: boolean })
      .is_active,
    true,
    'active again',
  );

  // The only owner cannot step down: the server's words, under the row.
  await tab(o, 'Users');
  await roleSelect(o, 'Desdemona').selectOption('200');
  await row(o, 'Desdemona').locator('button:has-text("Save")').click();
  // Stepping down is asked first.
  await o.getByRole('alertdialog').waitFor();
  t.equal(
    await o.getByRole('alertdialog').locator('h2').textContent(),
    'Make yourself an administrator?',
  );
  await o.getByRole('alertdialog').locator('button:has-text("Change my role")').click();
  const refusal = row(o, 'Desdemona').locator('[role="alert"]');
  await refusal.waitFor();
  t.match(await refusal.textContent(), /only organization owner/, 'the refusal');
  t.equal(await roleSelect(o, 'Desdemona').inputValue(), '100', 'the role as it is');
  await screenshot(o, t, 'users-refused-1280');

  // A name opens the profile card.
  await row(a, 'Othello').locator('.user-who').click();
  await a.locator('.profile-card').waitFor();
  t.match(await a.locator('.profile-card').textContent(), /Othello/);
  await a.keyboard.press('Escape');
  await a.locator('.profile-card').waitFor({ state: 'detached' });
  t.equal(await a.locator('.settings').count(), 1, 'the settings stay open');
  await a.setViewportSize({ width: 390, height: 844 });
  await row(a, 'Hamlet').locator('button:has-text("Deactivate")').waitFor();
  await screenshot(a, t, 'users-admin-390');

  // The owner makes the administrator a member: his page loses the controls at once.
  await roleSelect(o, 'Iago').selectOption('400');
  await row(o, 'Iago').locator('button:has-text("Save")').click();
  await waitFor(a, `document.querySelectorAll('.users-list select').length === 0`);
  t.equal(await a.locator('.users-list button:has-text("Deactivate")').count(), 0, 'none left');
  t.match(await row(a, 'Iago (you)').textContent(), /Member/, 'his role, as text');

  iago.watch.assertClean(t, /WebSocket|status of 401/);
  desdemona.watch.assertClean(t, /WebSocket|status of 40[01]/);
});

t.test('a member sees the lists without controls; a page at a time', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  insertMembers(ts.server, ts.fx.realmId, 250);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await openUsers(page);
  t.equal(await page.locator('.users-list li').count(), 100, 'a page of rows');
  t.equal(await page.locator('.users-list select').count(), 0, 'no role menus');
  t.equal(await page.locator('.users-list button:has-text("Deactivate")').count(), 0);
  t.match(await row(page, 'Iago').textContent(), /Administrator/);
  const total = 250 + Object.keys(ts.fx.users).length;
  // The settings' button, not the people column's (which pages the same way).
  await page.click(`.settings button:has-text("Show 100 more (100 of ${total} shown)")`);
  await waitFor(page, `document.querySelectorAll('.users-list li').length === 200`);
  t.pass('the next page');

  await page.fill('input[aria-label="Filter users"]', 'member 12');
  await waitFor(page, `document.querySelectorAll('.users-list li').length === 11`);
  t.pass('filtered: Member 12 and Member 120…129');
  await page.fill('input[aria-label="Filter users"]', '');
  await page.selectOption('select[aria-label="Filter by role"]', { label: 'Administrator (1)' });
  await waitFor(page, `document.querySelectorAll('.users-list li').length === 1`);
  t.match(await page.textContent('.users-list'), /Iago/, 'by role');
  await page.selectOption('select[aria-label="Filter by role"]', '0');
  await page.fill('input[aria-label="Filter users"]', 'nobody at all');
  await page.waitForSelector('text=No one matches “nobody at all”.');
  await page.fill('input[aria-label="Filter users"]', '');
  await waitFor(page, `document.querySelectorAll('.users-list li').length === 100`);

  // A change made elsewhere shows.
  assertSuccess(
    t,
    await ts.api.patch('iago', `users/${ts.fx.users['othello']!.id}`, { role: 300 }),
  );
  await page.fill('input[aria-label="Filter users"]', 'othello');
  await row(page, 'Othello').locator('text=Moderator').waitFor();
  t.pass('the new role, live');
  // Someone new joins: there at once.
  assertSuccess(
    t,
    await ts.api.post('iago', 'users', {
      email: 'viola@zulip.com',
      password: 'a long enough password',
      full_name: 'Viola',
    }),
  );
  await page.fill('input[aria-label="Filter users"]', 'viola');
  await row(page, 'Viola').waitFor();
  t.match(await row(page, 'Viola').textContent(), /Member/, 'a new member, live');
  await page.fill('input[aria-label="Filter users"]', 'othello');
  await screenshot(page, t, 'users-member-1280');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.fill('input[aria-label="Filter users"]', '');
  await waitFor(page, `document.querySelectorAll('.users-list li').length === 100`);
  await screenshot(page, t, 'users-member-390');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a deactivation mails the person when asked, with the comment', async (t) => {
  if (NO_CHROMIUM) return;
  const smtp = await TestSmtp.start(t);
  const ts = await startServer(t, { smtpUrl: smtp.url });
  const flush = () => ts.server.context.mailer!.runDue();
  // The fixture's accounts got their welcome mail: what is looked at comes after.
  await flush();
  smtp.mails.length = 0;
  assertSuccess(
    t,
    await ts.api.post('cordelia', 'bots', { full_name: 'Mail Bot', short_name: 'mailbot' }),
  );
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  await openUsers(page);
  const ask = page.getByRole('alertdialog');
  const notify = ask.getByLabel('Notify this user by e-mail');
  const comment = ask.getByLabel('Comment for the e-mail (optional)');

  // Asked, with a comment of two lines (Enter in it starts a line, it does not confirm).
  await row(page, 'Hamlet').locator('button:has-text("Deactivate")').click();
  await ask.waitFor();
  t.notOk(await notify.isChecked(), 'not unless asked');
  t.equal(await comment.count(), 0, 'no comment until asked');
  await notify.check();
  await comment.waitFor();
  t.equal(await comment.getAttribute('maxlength'), '2000', 'the server’s limit');
  await comment.fill('Thanks for everything.');
  await comment.press('Enter');
  t.equal(await ask.count(), 1, 'Enter in the comment did not confirm');
  await comment.pressSequentially('See you around!');
  await screenshot(page, t, 'users-deactivate-mail-1280');
  await ask.locator('button:has-text("Deactivate")').click();
  await row(page, 'Hamlet').waitFor({ state: 'detached' });
  await flush();
  const [mail, ...more] = smtp.to('hamlet@zulip.com');
  t.equal(more.length, 0, 'one mail');
  t.match(mail?.subject, /has been deactivated/);
  t.match(mail?.text, /> Thanks for everything\.\n> See you around!/, 'the comment quoted');

  // Not asked: deactivated, no mail.
  await row(page, 'Othello').locator('button:has-text("Deactivate")').click();
  await ask.waitFor();
  await notify.check();
  await notify.uncheck();
  await comment.waitFor({ state: 'detached' });
  await ask.locator('button:has-text("Deactivate")').click();
  await row(page, 'Othello').waitFor({ state: 'detached' });
  await flush();
  t.same(smtp.to('othello@zulip.com'), [], 'unticked: no mail');
  const othello = assertSuccess(t, await ts.api.get('iago', `users/${ts.fx.users['othello']!.id}`))
    .user as { is_active: boolean };
  t.equal(othello.is_active, false, 'deactivated all the same');

  // A bot: no one reads its mail, no choice.
  await tab(page, 'Bots');
  await row(page, 'Mail Bot').locator('button:has-text("Deactivate")').click();
  await ask.waitFor();
  t.equal(await notify.count(), 0, 'not for a bot');
  await ask.locator('button.cancel').click();
  await ask.waitFor({ state: 'detached' });

  // A phone's width: the dialog with the comment.
  await page.setViewportSize({ width: 390, height: 844 });
  await tab(page, 'Users');
  await row(page, 'Cordelia').locator('button:has-text("Deactivate")').click();
  await ask.waitFor();
  await notify.check();
  await comment.waitFor();
  await screenshot(page, t, 'users-deactivate-mail-390');
  await page.keyboard.press('Escape');
  await ask.waitFor({ state: 'detached' });
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('without SMTP the deactivation offers no e-mail', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago');
  await openUsers(page);
  await row(page, 'Hamlet').locator('button:has-text("Deactivate")').click();
  const ask = page.getByRole('alertdialog');
  await ask.waitFor();
  t.match(await ask.textContent(), /logged out everywhere/, 'the confirmation as before');
  t.equal(await ask.getByLabel('Notify this user by e-mail').count(), 0, 'no e-mail choice');
  await ask.locator('button:has-text("Deactivate")').click();
  await row(page, 'Hamlet').waitFor({ state: 'detached' });
  t.pass('deactivated');
  watch.assertClean(t, /WebSocket|status of 401/);
});
