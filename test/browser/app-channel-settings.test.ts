/**
 * The web app in chromium: creating a channel (name, description, privacy, people) and a
 * channel's settings (its members added and removed, its description edited), seen by the
 * people concerned as it happens. Each wait is for something that was not so before the action.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  openApp,
  pluck,
  sidebarCount,
  waitCount,
  waitFor,
  waitLive,
  waitMessage,
  waitForTitle,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

/** Whether the sidebar lists a channel of this name. */
const inSidebar = (name: string) =>
  `[...document.querySelectorAll('.sidebar .nav-item .label')].some((e) => e.textContent === ${JSON.stringify(name)})`;

/** The names in the open channel settings' member list. */
const memberNames = (page: Page) => pluck(page, '.member-list .member-name');

const SETTINGS = '[role="dialog"][aria-labelledby="channel-settings-title"]';
const CREATE = '[role="dialog"][aria-labelledby="create-channel-title"]';

/** Opens a channel's settings from its menu in the sidebar. */
async function settingsFromSidebar(page: Page, name: string): Promise<void> {
  const row = page.locator('.sidebar .nav-row').filter({ hasText: name }).first();
  await row.hover();
  await row.locator('.row-menu button').first().click();
  await page.click('[role="menuitem"]:has-text("Channel settings")');
  await page.waitForSelector(SETTINGS);
}

/** Picks a person in a people picker (by typing part of the name, then Enter). */
async function pick(page: Page, field: string, typed: string, name: string): Promise<void> {
  await page.fill(field, typed);
  await waitFor(
    page,
    `[...document.querySelectorAll('[role="listbox"][aria-label="People"] [role="option"]')].some((o) => o.textContent.includes(${JSON.stringify(name)}))`,
  );
  await page.press(field, 'Enter');
  await waitFor(
    page,
    `[...document.querySelectorAll('.people-picker .pill')].some((p) => p.textContent.includes(${JSON.stringify(name)}))`,
  );
}

t.test('a private channel with a description and a second member', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  // Iago's private channel, which Hamlet cannot see: its name is taken, unknown to him.
  await createChannel(ts.api, 'iago', 'secret', { invite_only: true });
  // A bot of Othello's: offered as the realm's users are, where the system bots are not.
  const bot = await ts.api.post('othello', 'bots', {
    full_name: 'Kitchen Bot',
    short_name: 'kitchen',
    bot_type: 1,
  });
  t.equal(bot.status, 200, 'a bot of a user');
  const hamlet = await openApp(b, ts.url, ts.fx, 'hamlet');
  const othello = await openApp(b, ts.url, ts.fx, 'othello');
  const { page } = hamlet;

  // By keyboard: Tab stays in the dialog (modal), Esc closes it, the focus back on the +.
  await page.click('button[aria-label="Create channel"]');
  await page.waitForSelector(CREATE);
  const inside: boolean[] = [];
  for (let i = 0; i < 14; i++) {
    await page.keyboard.press('Tab');
    inside.push(await page.evaluate<boolean>(`!!document.activeElement?.closest('${CREATE}')`));
  }
  t.notOk(inside.includes(false), 'Tab stays in the dialog');
  await page.keyboard.press('Escape');
  await waitFor(page, `!document.querySelector('${CREATE}')`);
  t.equal(
    await page.evaluate(`document.activeElement?.getAttribute('aria-label')`),
    'Create channel',
    'closed: the focus back on its button',
  );

  await page.click('button[aria-label="Create channel"]');
  await page.waitForSelector(CREATE);
  t.equal(
    await page.evaluate(`document.activeElement.name`),
    'channel-name',
    'the name has the focus',
  );
  t.same(await pluck(page, '.people-picker .pill'), ['Hamlet (you)×'], 'the user is in it');

  // A name taken by a channel Hamlet cannot see: the server's refusal, as it says it.
  await page.fill('input[name="channel-name"]', 'secret');
  await page.click(`${CREATE} button[type="submit"]`);
  await page.waitForSelector(`${CREATE} [role="alert"]`);
  t.match(await page.textContent(`${CREATE} [role="alert"]`), /Unable to access channel/);

  // The people offered: the realm's users and their bots, not its system bots.
  await page.fill('#create-channel-people', 'bot');
  await waitFor(
    page,
    `[...document.querySelectorAll('#create-channel-people-options [role="option"]')].some((o) => o.textContent.includes('Kitchen Bot'))`,
  );
  const offered = await pluck(page, '#create-channel-people-options [role="option"]');
  t.equal(offered.length, 1, `one offered: ${offered.join(' | ')}`);
  t.notOk(
    offered.some((o) => /Notification Bot|Welcome Bot/.test(o)),
    'not the system bots',
  );
  await page.fill('#create-channel-people', '');

  await page.fill('input[name="channel-name"]', 'Council');
  await page.fill('textarea[name="channel-description"]', 'Plans for the castle');
  await page.check('input[name="privacy"][value="private-protected"]');
  await pick(page, '#create-channel-people', 'Othe', 'Othello');
  await screenshot(page, t, 'create-channel-1280');
  await page.click(`${CREATE} button[type="submit"]`);
  await waitFor(page, `location.hash.endsWith('-Council')`);
  await waitForTitle(page, 'Council');
  t.notOk(await page.$(CREATE), 'the dialog closed');
  t.ok(await page.evaluate(inSidebar('Council')), "in Hamlet's channels");

  const made = (
    (await ts.api.get('hamlet', 'users/me/subscriptions')).body.subscriptions as {
      name: string;
      invite_only: boolean;
      history_public_to_subscribers: boolean;
      description: string;
    }[]
  ).find((s) => s.name === 'Council');
  t.same(
    made && {
      invite_only: made.invite_only,
      history: made.history_public_to_subscribers,
      description: made.description,
    },
    { invite_only: true, history: false, description: 'Plans for the castle' },
    'private, protected history, with its description',
  );

  // Othello, open all along, has it, with its description.
  await waitFor(othello.page, inSidebar('Council'));
  await settingsFromSidebar(othello.page, 'Council');
  t.equal(
    (await othello.page.textContent(`${SETTINGS} .channel-description`))?.trim(),
    'Plans for the castle',
  );
  t.match(
    await othello.page.textContent(`${SETTINGS} .channel-facts`),
    /Private, protected history/,
  );
  await waitFor(othello.page, `document.querySelectorAll('.member-list li').length === 2`);
  t.same(await memberNames(othello.page), ['Hamlet', 'Othello (you)'], 'its members');

  // Cordelia, not in it, does not know it.
  const streams = await ts.api.get('cordelia', 'streams');
  t.notOk(
    (streams.body.streams as { name: string }[]).some((s) => s.name === 'Council'),
    'a non-member does not see it',
  );
  // The 400: the refused "secret", asked for on purpose.
  hamlet.watch.assertClean(t, /WebSocket|status of 40[01]/);
  othello.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('members added and removed, the description edited, live', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const kitchen = await createChannel(ts.api, 'iago', 'kitchen', {
    subscriptions: [{ name: 'kitchen', description: 'Recipes' }],
    invite_only: true,
    principals: [id('iago'), id('hamlet')],
  });
  const hash = `#narrow/channel/${kitchen}-kitchen`;
  const hamlet = await openApp(b, ts.url, ts.fx, 'hamlet', { hash });
  const othello = await openApp(b, ts.url, ts.fx, 'othello');
  const iago = await openApp(b, ts.url, ts.fx, 'iago', { hash });
  const { page } = hamlet;

  // Hamlet (a member, not its administrator) opens the settings from the channel's header.
  await page.click('button[aria-label="Settings of #kitchen"]');
  await page.waitForSelector(SETTINGS);
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 2`);
  t.same(await memberNames(page), ['Hamlet (you)', 'Iago']);
  t.notOk(
    await page.$(`${SETTINGS} button:has-text("Edit name and description")`),
    'no editing for him',
  );
  t.notOk(await page.$(`${SETTINGS} button:has-text("Remove")`), 'nor removing others');

  // He adds Othello, who gets the channel and its messages.
  t.notOk(await othello.page.evaluate(inSidebar('kitchen')), 'not Othello’s yet');
  await pick(page, '#channel-add-people', 'oth', 'Othello');
  await page.click(`${SETTINGS} .add-members button[type="submit"]`);
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 3`);
  t.same(await memberNames(page), ['Hamlet (you)', 'Iago', 'Othello'], 'listed at once');
  await waitFor(othello.page, inSidebar('kitchen'));
  await othello.page.click('.sidebar a.nav-item:has-text("kitchen")');
  await waitForTitle(othello.page, 'kitchen');
  await ts.api.post('iago', 'messages', {
    type: 'stream',
    to: 'kitchen',
    topic: 'soup',
    content: 'Leek soup on Friday',
  });
  await waitMessage(othello.page, 'Leek soup on Friday');
  await screenshot(page, t, 'channel-settings-member-1280');

  // Iago (an administrator) edits the description: Hamlet's open settings follow.
  await settingsFromSidebar(iago.page, 'kitchen');
  await iago.page.click(`${SETTINGS} button:has-text("Edit name and description")`);
  await iago.page.fill(`${SETTINGS} textarea[name="channel-description"]`, 'Recipes and rotas');
  await iago.page.click(`${SETTINGS} button:has-text("Save changes")`);
  await waitFor(
    page,
    `document.querySelector('${SETTINGS} .channel-description')?.textContent.trim() === 'Recipes and rotas'`,
  );
  t.pass("the description reached Hamlet's open settings");

  // A refusal is shown as the server words it (here made up by the test: the app lets only
  // those whom the server lets try, so a real one needs a permission changed on the way).
  await waitFor(iago.page, `document.querySelectorAll('.member-list li').length === 3`);
  await iago.page.route('**/json/users/me/subscriptions', (route) =>
    route.request().method() === 'DELETE'
      ? route.fulfill({
          status: 400,
          contentType: 'application/json',
          body: JSON.stringify({
            result: 'error',
            msg: 'Insufficient permission',
            code: 'BAD_REQUEST',
          }),
        })
      : route.continue(),
  );
  await iago.page.click(`${SETTINGS} button[aria-label="Remove Othello"]`);
  await iago.page.click('[role="alertdialog"] button:has-text("Remove")');
  await iago.page.waitForSelector(`${SETTINGS} [role="alert"]`);
  t.equal(
    await iago.page.textContent(`${SETTINGS} [role="alert"]`),
    'Insufficient permission',
    "the server's refusal",
  );
  await iago.page.unroute('**/json/users/me/subscriptions');

  // Iago removes Othello (after a confirmation): gone from Othello's channels and both lists.
  await iago.page.click(`${SETTINGS} button[aria-label="Remove Othello"]`);
  await iago.page.waitForSelector('[role="alertdialog"]');
  t.match(await iago.page.textContent('#confirm-title'), /Remove Othello from #kitchen\?/);
  await screenshot(iago.page, t, 'remove-member-confirm-1280');
  await iago.page.click('[role="alertdialog"] button:has-text("Remove")');
  await waitFor(othello.page, `!(${inSidebar('kitchen')})`);
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 2`);
  t.same(await memberNames(page), ['Hamlet (you)', 'Iago'], "gone from Hamlet's list");
  await waitFor(iago.page, `document.querySelectorAll('.member-list li').length === 2`);
  t.equal(
    await iago.page.evaluate(`document.activeElement?.id`),
    'channel-add-people',
    'the row gone with its button, the focus stays in the dialog',
  );
  t.notOk(await iago.page.$(`${SETTINGS} [role="alert"]`), 'the refusal went with the next try');

  // Iago renames it: Hamlet's sidebar, bar and open settings follow.
  await iago.page.click(`${SETTINGS} button:has-text("Edit name and description")`);
  // Typed and sent in one task (before the next drawing): what was typed is sent.
  await iago.page.evaluate(`(() => {
    const el = document.querySelector('${SETTINGS} input[name="channel-name"]');
    el.value = 'galley';
    el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText' }));
    el.form.requestSubmit();
  })()`);
  await waitFor(page, inSidebar('galley'));
  await waitFor(
    page,
    `document.querySelector('#channel-settings-title')?.textContent.includes('galley')`,
  );
  await waitForTitle(page, 'galley');
  t.pass('renamed, live');

  // Closing gives the focus back to the button that opened them.
  await page.keyboard.press('Escape');
  await waitFor(page, `!document.querySelector('${SETTINGS}')`);
  t.equal(
    await page.evaluate(`document.activeElement?.getAttribute('aria-label')`),
    'Settings of #galley',
    'the focus is back on the gear',
  );
  for (const p of [hamlet, othello]) p.watch.assertClean(t, /WebSocket|status of 401/);
  // The 400: the refusal made up above.
  iago.watch.assertClean(t, /WebSocket|status of 40[01]/);
});

t.test('a guest is not offered to create a channel', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'polonius');
  // Drawn with the sidebar's first drawing (the realm's settings come with the register).
  await page.waitForSelector('.sidebar button[aria-label="Browse channels"]');
  t.notOk(await page.$('.sidebar button[aria-label="Create channel"]'), 'no Create channel');
  await page.click('button[aria-label="Browse channels"]');
  await page.keyboard.type('Plots');
  await waitFor(
    page,
    `document.querySelector('#jump-options')?.textContent.includes('Search messages for “Plots”')`,
  );
  t.notOk(
    (await pluck(page, '#jump-options [role="option"]')).some((o) => o.startsWith('Create')),
    'nor in Jump to',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});

/** The background of a channel's swatch in the sidebar (computed, `rgb(…)`), or null. */
const sidebarSwatchExpr = (name: string) => `(() => {
    for (const a of document.querySelectorAll('.sidebar .nav-item')) {
      if (a.querySelector('.label')?.textContent !== ${JSON.stringify(name)}) continue;
      const s = a.querySelector('.swatch');
      return s ? getComputedStyle(s).backgroundColor : null;
    }
    return null;
  })()`;
const sidebarSwatch = (page: Page, name: string) =>
  page.evaluate<string | null>(sidebarSwatchExpr(name));

/** The channels of the sidebar's pinned group, in order (none: no group). */
const pinnedNames = (page: Page) => pluck(page, '.sidebar .pinned-channels .nav-item .label');

t.test("one's own settings of a channel: colour, pinned, a notification of its own", async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const zoo = await createChannel(ts.api, 'hamlet', 'zoo');
  await createChannel(ts.api, 'hamlet', 'apple');
  const a = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: `#narrow/channel/${zoo}-zoo` });
  const other = await openApp(b, ts.url, ts.fx, 'hamlet');
  const { page } = a;
  const RED = 'rgb(228, 82, 61)';
  await waitFor(other.page, inSidebar('zoo'));

  await settingsFromSidebar(page, 'zoo');
  await page.waitForSelector(`${SETTINGS} .personal`);

  // The colour: the sidebar's swatch here and in the other tab follow the server's event.
  t.not(await sidebarSwatch(page, 'zoo'), RED, 'not red before');
  t.not(await sidebarSwatch(other.page, 'zoo'), RED, 'nor in the other tab');
  await page.click(`${SETTINGS} .colour-choice[aria-label="Red"]`);
  await waitFor(page, `(${sidebarSwatchExpr('zoo')}) === ${JSON.stringify(RED)}`);
  await waitFor(other.page, `(${sidebarSwatchExpr('zoo')}) === ${JSON.stringify(RED)}`);
  t.equal(
    await page.getAttribute(`${SETTINGS} .colour-choice[aria-label="Red"]`, 'aria-pressed'),
    'true',
    'the chosen colour shown as chosen',
  );
  t.equal(
    await page.evaluate(
      `getComputedStyle(document.querySelector('${SETTINGS} h2 .swatch')).backgroundColor`,
    ),
    RED,
    "the dialog's own swatch",
  );

  // Pinned: "zoo", last by name, moves to a pinned group of its own, first.
  t.same(await pinnedNames(page), [], 'no pinned group before');
  const channels = '.sidebar .nav-section:first-of-type .nav-item .label';
  t.same(await pluck(page, channels), ['apple', 'zoo'], 'by name before');
  await page.check(`${SETTINGS} input[name="pin_to_top"]`);
  await waitFor(page, `!!document.querySelector('.sidebar .pinned-channels')`);
  t.same(await pinnedNames(page), ['zoo'], 'pinned');
  t.same(await pluck(page, channels), ['zoo', 'apple'], 'zoo first now');
  await waitFor(other.page, `!!document.querySelector('.sidebar .pinned-channels')`);
  t.same(await pinnedNames(other.page), ['zoo'], 'in the other tab too');

  // Desktop notifications for this channel, against the default (off for Hamlet).
  const desktop = `${SETTINGS} input[name="desktop_notifications"]`;
  const hint = `${SETTINGS} #notify-hint-desktop_notifications`;
  t.equal(await page.isChecked(desktop), false, 'off by default');
  t.equal(await page.textContent(hint), 'Your default (off)');
  await screenshot(page, t, 'channel-personal-before-1280');
  await page.check(desktop);
  await waitFor(
    page,
    `document.querySelector('${hint}')?.textContent.startsWith('Set for this channel')`,
  );
  const subs = await ts.api.get('hamlet', 'users/me/subscriptions');
  const saved = (
    subs.body.subscriptions as { name: string; desktop_notifications: unknown }[]
  ).find((s) => s.name === 'zoo');
  t.equal(saved?.desktop_notifications, true, 'saved');
  await screenshot(page, t, 'channel-personal-override-1280');

  // After a reload: still its own, and back to the default from there.
  await page.reload();
  await waitLive(page);
  await settingsFromSidebar(page, 'zoo');
  await page.waitForSelector(desktop);
  t.equal(await page.isChecked(desktop), true, 'on after the reload');
  t.equal(await page.textContent(hint), 'Set for this channel (your default: off)');
  t.equal(await page.isChecked(`${SETTINGS} input[name="pin_to_top"]`), true, 'still pinned');
  await page.click(`${SETTINGS} button[aria-label="Desktop notifications: use my default"]`);
  await waitFor(page, `document.querySelector('${hint}')?.textContent === 'Your default (off)'`);
  t.equal(await page.isChecked(desktop), false, 'off again, as the default');
  t.notOk(
    await page.$(`${SETTINGS} button[aria-label="Desktop notifications: use my default"]`),
    'nothing to reset any more',
  );
  a.watch.assertClean(t, /WebSocket|status of 401/);
  other.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("a channel's privacy changed by an administrator, after a confirmation", async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const id = (who: string) => ts.fx.users[who]!.id;
  const garden = await createChannel(ts.api, 'iago', 'garden', {
    principals: [id('iago'), id('hamlet')],
  });
  const hash = `#narrow/channel/${garden}-garden`;
  const iago = await openApp(b, ts.url, ts.fx, 'iago', { hash });
  const hamlet = await openApp(b, ts.url, ts.fx, 'hamlet', { hash });
  const { page } = iago;
  const lockedInExpr = `[...document.querySelectorAll('.sidebar .nav-item')].some((a) => a.querySelector('.label')?.textContent === 'garden' && a.querySelector('.swatch')?.textContent === '•')`;
  const lockedIn = (p: Page) => p.evaluate<boolean>(lockedInExpr);

  // Hamlet, a member only, is offered no change.
  await settingsFromSidebar(hamlet.page, 'garden');
  t.notOk(await hamlet.page.$(`${SETTINGS} button:has-text("Change privacy")`), 'not for him');

  await settingsFromSidebar(page, 'garden');
  t.match(await page.textContent(`${SETTINGS} .channel-facts`), /Public/);
  await page.click(`${SETTINGS} button:has-text("Change privacy")`);
  await page.check(`${SETTINGS} input[name="channel-privacy"][value="private-protected"]`);
  await page.click(`${SETTINGS} button:has-text("Save privacy")`);
  const confirm = '[role="alertdialog"]';
  await page.waitForSelector(confirm);
  t.match(await page.textContent(confirm), /Change #garden to “Private, protected history”\?/);
  t.match(await page.textContent(confirm), /others lose access/);
  // Cancelled: nothing sent, the choice still open.
  await page.click(`${confirm} button:has-text("Cancel")`);
  await waitFor(page, `!document.querySelector('${confirm}')`);
  t.ok(await page.$(`${SETTINGS} .channel-privacy`), 'still choosing after Cancel');
  t.notOk(await lockedIn(hamlet.page), 'not private yet');

  await page.click(`${SETTINGS} button:has-text("Save privacy")`);
  await page.waitForSelector(confirm);
  await screenshot(page, t, 'channel-privacy-confirm-1280');
  await page.click(`${confirm} button:has-text("Change privacy")`);
  await waitFor(
    page,
    `document.querySelector('${SETTINGS} .channel-facts')?.textContent.includes('Private, protected history')`,
  );
  t.pass('shown as private in his settings');
  // Hamlet's sidebar and open settings follow.
  await waitFor(hamlet.page, `(${lockedInExpr})`);
  await waitFor(
    hamlet.page,
    `document.querySelector('${SETTINGS} .channel-facts')?.textContent.includes('Private, protected history')`,
  );
  t.pass("and in Hamlet's");
  const after = (await ts.api.get('iago', `streams/${garden}`)).body.stream as {
    invite_only: boolean;
    history_public_to_subscribers: boolean;
  };
  t.equal(after.invite_only, true, 'private');
  t.equal(after.history_public_to_subscribers, false, 'protected history');
  iago.watch.assertClean(t, /WebSocket|status of 401/);
  hamlet.watch.assertClean(t, /WebSocket|status of 401/);
});

/** Page-side: desktop notifications allowed and counted, the tones played counted. */
const COUNT_NOTICES = `(() => {
  window.notes_ = [];
  window.Notification = class {
    static permission = 'granted';
    static requestPermission() { return Promise.resolve('granted'); }
    constructor(title) { window.notes_.push(title); }
    close() {}
  };
  const Native = window.AudioContext;
  window.tones_ = 0;
  window.AudioContext = class extends Native {
    createOscillator() { window.tones_++; return super.createOscillator(); }
  };
})()`;

t.test("a channel's own desktop and sound settings decide its notifications", async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  await createChannel(ts.api, 'hamlet', 'zoo');
  // Elsewhere (Starred): the channel's messages are not in view.
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/is/starred',
    init: COUNT_NOTICES,
  });
  const send = (content: string) =>
    ts.api.post('othello', 'messages', { type: 'stream', to: 'zoo', topic: 'cages', content });
  const counted = () => page.evaluate<[number, number]>(`[window.notes_.length, window.tones_]`);

  t.equal(await sidebarCount(page, 'zoo'), 0);
  await send('The lion slept');
  await waitCount(page, 'zoo', 1);
  t.same(await counted(), [0, 0], 'by the defaults (off): neither a notification nor a tone');

  await settingsFromSidebar(page, 'zoo');
  for (const k of ['desktop_notifications', 'audible_notifications']) {
    await page.check(`${SETTINGS} input[name="${k}"]`);
    await waitFor(
      page,
      `document.querySelector('${SETTINGS} #notify-hint-${k}')?.textContent.startsWith('Set for this channel')`,
    );
  }
  await page.click(`${SETTINGS} button:has-text("Close")`);
  await send('The lion woke');
  await waitCount(page, 'zoo', 2);
  t.same(await counted(), [1, 1], "by the channel's own: a notification and a tone");
  t.match(await page.evaluate<string>(`window.notes_[0]`), /Othello \(#zoo > cages\)/);

  // The channels' sound turned on in Settings → Notifications: the channel's own value is now
  // the default's, shown so (nothing to go back to).
  await page.goto(ts.url + '/#settings/notifications');
  await page.click('.settings label.check:has-text("Play a sound for every message")');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.settings') === null`);
  await settingsFromSidebar(page, 'zoo');
  const hint = `${SETTINGS} #notify-hint-audible_notifications`;
  await waitFor(page, `document.querySelector('${hint}')?.textContent === 'Your default (on)'`);
  t.notOk(
    await page.$(`${SETTINGS} button[aria-label="Sound: use my default"]`),
    'the same as the default now',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});
