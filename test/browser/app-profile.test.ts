/**
 * The web app in chromium: a person's profile card, as the reference's user card popover. A
 * message's sender (the name, by click or Enter; the avatar; `u` on a selected message) opens
 * it beside them: avatar, name, the e-mail address the server gives this user, role, local time;
 * "Bot" and its owner, a deactivated account. Esc and a click outside close it, the focus back
 * where it was. "Send direct message" opens the conversation with the compose box focused (one's
 * own card: with oneself), "View messages sent" the narrow of that person's messages. At 390 px
 * it is a sheet at the bottom of the screen. Opened before the people have loaded (GET /users
 * comes after the first screen), it shows the name the messages gave and fills in when they come.
 * A mention in a message opens the card of whom it names (silent too); a group mention a group's
 * card, its members each opening theirs; @all and @topic nothing. Mentions are Tab stops in the
 * selected message only; Enter opens them. The mentions of oneself (a group of one's own, @all
 * that reached one) stand out (`user-mention-me`).
 *
 * Each wait is for what the action brings and was not there before it: a dialog that was not
 * open, one gone that was, a title naming a view that was not shown, a message not sent before.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitForTitle, waitLive, waitMessage } from '../helpers/app.js';
import { fillLogin, NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { fetchNarrow, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

/** The ids of the messages Othello sent that Hamlet can see. */
const byOthello: number[] = [];
const id = (name: string) => ts.fx.users[name]!.id;
const TOPIC = '#narrow/channel/general/topic/review';

const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'othello', members: ['hamlet', 'othello', 'iago', 'cordelia', 'desdemona'] },
  },
  seed,
});

async function seed(): Promise<void> {
  const { api } = ts;
  // Othello in Tokyo; Iago's real address hidden from everyone.
  for (const [who, change] of [
    ['othello', { timezone: 'Asia/Tokyo' }],
    ['iago', { email_address_visibility: 4 }],
  ] as const) {
    const r = await api.patch(who, 'settings', change);
    if (r.status !== 200) throw new Error(`settings of ${who}: ${r.text}`);
  }
  const bot = await api.post('othello', 'bots', {
    full_name: 'Deploy Bot',
    short_name: 'deploy',
    bot_type: 1,
  });
  if (bot.status !== 200) throw new Error(`bot: ${bot.text}`);
  const botUser = await api.get('othello', `users/${bot.body.user_id as number}`);
  const botAuth = {
    email: (botUser.body.user as { email: string }).email,
    api_key: bot.body.api_key as string,
  };

  byOthello.push(await sendChannelMessage(api, 'othello', 'general', 'review', 'Othello asks.'));
  await sendChannelMessage(api, 'hamlet', 'general', 'review', 'Hamlet answers.');
  await sendChannelMessage(api, 'iago', 'general', 'review', 'Iago whispers.');
  await sendChannelMessage(api, 'desdemona', 'general', 'review', 'Desdemona decides.');
  await sendChannelMessage(api, 'cordelia', 'general', 'review', 'Cordelia leaves.');
  byOthello.push(await sendChannelMessage(api, 'othello', 'general', 'review', 'Othello again.'));
  byOthello.push(await sendChannelMessage(api, 'othello', 'general', 'plans', 'Othello plans.'));
  const deployed = await api.post(botAuth, 'messages', {
    type: 'channel',
    to: 'general',
    topic: 'review',
    content: 'Deployed.',
  });
  if (deployed.status !== 200) throw new Error(`the bot's message: ${deployed.text}`);
  byOthello.push(await sendDirectMessage(api, 'othello', [id('hamlet')], 'Othello, privately.'));
  await sendDirectMessage(api, 'iago', [id('hamlet')], 'Iago, privately.');
  const gone = await api.delete('iago', `users/${id('cordelia')}`);
  if (gone.status !== 200) throw new Error(`deactivating cordelia: ${gone.text}`);
}

/** The sender's name of the message (first of its group) whose text has `text`. */
const senderOf = (page: Page, text: string) =>
  page.locator('.msg', { hasText: text }).locator('.sender');

/** The card's facts, as label → value. */
async function facts(page: Page): Promise<Record<string, string>> {
  return page.evaluate(`Object.fromEntries(
    [...document.querySelectorAll('.profile-card .card-facts > div')].map((d) => [
      d.querySelector('dt').textContent.trim(),
      d.querySelector('dd').textContent.trim(),
    ]),
  )`);
}

const cardText = (page: Page, sel: string) =>
  page.evaluate<string>(`document.querySelector('.profile-card ${sel}')?.textContent.trim() ?? ''`);

t.test('the name opens it by Enter: the fields, Esc and a click outside close it', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: TOPIC });
  await waitMessage(page, 'Othello again.');
  const name = senderOf(page, 'Othello asks.');
  await name.focus();
  await page.keyboard.press('Enter');
  const card = page.getByRole('dialog', { name: 'Othello' });
  await card.waitFor();
  t.equal(await cardText(page, '.card-email'), 'othello@zulip.com', 'the real address: visible');
  const f = await facts(page);
  t.equal(f.Role, 'Member', 'the role');
  t.match(f['Local time'], /^\d{1,2}:\d\d [AP]M$/, 'the local time (Tokyo)');
  t.equal(
    await page.evaluate(`document.activeElement?.textContent.trim()`),
    'Send direct message',
    'the focus in it, on its first action',
  );
  t.equal(
    await page.evaluate(`getComputedStyle(document.activeElement).boxShadow !== 'none'`),
    true,
    'with a visible ring (keyboard)',
  );
  // Beside the name: under it, its left edge at the name's.
  const [nb, cb] = [(await name.boundingBox())!, (await card.boundingBox())!];
  t.ok(Math.abs(cb.x - nb.x) <= 2 && cb.y >= nb.y + nb.height && cb.y - nb.y < 60, 'under it');
  await screenshot(page, t, 'card-othello-1280');

  // Tab stays within it.
  for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
  t.ok(await page.evaluate(`!!document.activeElement?.closest('.profile-card')`), 'Tab stays');

  await page.keyboard.press('Escape');
  await card.waitFor({ state: 'detached' });
  t.ok(
    await page.evaluate(
      `document.activeElement === [...document.querySelectorAll('.msg .sender')].find((e) => e.closest('.msg').textContent.includes('Othello asks.'))`,
    ),
    'Esc: the focus back on the name',
  );

  // A click outside closes it too; the focus goes back to the name clicked.
  await senderOf(page, 'Iago whispers.').click();
  const iago = page.getByRole('dialog', { name: 'Iago' });
  await iago.waitFor();
  t.equal(await cardText(page, '.card-email'), `user${id('iago')}@testserver.local`, 'hidden');
  t.equal((await facts(page)).Role, 'Administrator');
  t.equal((await facts(page))['Local time'], undefined, 'no time zone: no local time');
  await page.mouse.click(1200, 700);
  await iago.waitFor({ state: 'detached' });
  t.ok(
    await page.evaluate(`document.activeElement?.textContent === 'Iago'`),
    'outside click: the focus back on the name',
  );

  // Desdemona: the owner.
  await senderOf(page, 'Desdemona decides.').click();
  await page.getByRole('dialog', { name: 'Desdemona' }).waitFor();
  t.equal((await facts(page)).Role, 'Owner');
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the avatar, `u`; a bot and its owner; a deactivated user', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: TOPIC });
  await waitMessage(page, 'Deployed.');
  await page.locator('.msg', { hasText: 'Deployed.' }).locator('.avatar-btn').click();
  const bot = page.getByRole('dialog', { name: 'Deploy Bot' });
  await bot.waitFor();
  t.same(await facts(page), { Role: 'Bot', Owner: 'Othello' }, '"Bot", and its owner');
  // The owner's name opens the owner's card.
  await page.locator('.profile-card .link-btn', { hasText: 'Othello' }).click();
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();
  t.equal((await facts(page)).Role, 'Member', "the owner's card");
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });

  await senderOf(page, 'Cordelia leaves.').click();
  await page.getByRole('dialog', { name: 'Cordelia' }).waitFor();
  t.equal(await cardText(page, '.card-deactivated'), 'This user has been deactivated.');
  t.same(
    await page.evaluate(
      `[...document.querySelectorAll('.card-actions button')].map((b) => b.textContent.trim())`,
    ),
    ['View messages sent', 'Mute this user'],
    'no direct message to a deactivated account (muting still offered, as the reference)',
  );
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });

  // `u` on the selected message (from the list, by the keyboard): its sender's card, and the
  // focus back on the list after.
  await page.click('#compose-text');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.activeElement?.classList.contains('messages')`);
  await page.keyboard.press('ArrowUp');
  await waitFor(
    page,
    `!!document.querySelector('.msg.selected')?.textContent.includes('Deployed.')`,
  );
  await page.keyboard.press('u');
  await page.getByRole('dialog', { name: 'Deploy Bot' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  t.ok(
    await page.evaluate(`document.activeElement?.classList.contains('messages')`),
    'the focus back on the list',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('Send direct message: the conversation, compose focused, the message arrives', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: TOPIC });
  await waitMessage(page, 'Othello again.');
  await senderOf(page, 'Othello asks.').click();
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();
  await page.getByRole('button', { name: 'Send direct message' }).click();
  await waitForTitle(page, 'Othello');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.notOk(await page.$('.profile-card'), 'the card closed');
  t.match(page.url(), new RegExp(`#narrow/dm/${id('othello')}-Othello$`), 'the conversation');
  await page.keyboard.type('Hello from the card.');
  await page.keyboard.press('Enter');
  // Arrived: the server's message, not the local echo.
  await waitFor(
    page,
    `[...document.querySelectorAll('.msg:not(.local) .content')].some((e) => e.textContent.includes('Hello from the card.'))`,
  );
  const got = await fetchNarrow(ts.api, 'othello', [{ operator: 'dm', operand: [id('hamlet')] }]);
  t.ok(
    (got.body.messages as { content: string }[]).some((m) => m.content.includes('from the card')),
    'Othello has it, as a direct message from Hamlet',
  );

  // One's own card: a message to oneself (as the reference).
  await page.goto(ts.url + '/' + TOPIC);
  await waitForTitle(page, 'review');
  await waitMessage(page, 'Hamlet answers.');
  await page.locator('.msg', { hasText: 'Hamlet answers.' }).locator('.avatar-btn').click();
  await page.getByRole('dialog', { name: 'Hamlet (you)' }).waitFor();
  await page.getByRole('button', { name: 'Send direct message' }).click();
  await waitForTitle(page, 'Hamlet (you)');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  await page.keyboard.type('A note to myself.');
  await page.keyboard.press('Enter');
  await waitFor(
    page,
    `[...document.querySelectorAll('.msg:not(.local) .content')].some((e) => e.textContent.includes('A note to myself.'))`,
  );
  const self = await fetchNarrow(ts.api, 'hamlet', [{ operator: 'dm', operand: [id('hamlet')] }]);
  t.ok(
    (self.body.messages as { content: string }[]).some((m) => m.content.includes('note to myself')),
    'sent to oneself',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("View messages sent: that sender's messages only, channels and direct", async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  await waitMessage(page, 'Iago, privately.');
  await senderOf(page, 'Othello asks.').click();
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();
  await page.getByRole('button', { name: 'View messages sent' }).click();
  await waitForTitle(page, 'Messages sent by Othello');
  await waitMessage(page, 'Othello, privately.');
  await waitFor(page, `document.querySelector('.messages').getAttribute('aria-busy') === 'false'`);
  const shown = await page.evaluate<number[]>(
    `[...document.querySelectorAll('.messages .msg')].map((e) => Number(e.dataset.id))`,
  );
  t.same(shown, byOthello, "Othello's messages, and no one else's");
  t.match(page.url(), new RegExp(`#narrow/sender/${id('othello')}-Othello$`), 'its address');
  t.ok(
    await page.evaluate(`document.activeElement?.classList.contains('messages')`),
    'the focus on the list',
  );
  await screenshot(page, t, 'sent-by-othello-1280');

  // Another view (back, a link): the card goes with the view it was opened in.
  await senderOf(page, 'Othello asks.').click();
  const card = page.getByRole('dialog', { name: 'Othello' });
  await card.waitFor();
  await page.evaluate(`location.hash = '#narrow/is/dm'`);
  await waitForTitle(page, 'Direct messages');
  await card.waitFor({ state: 'detached' });
  t.pass('closed by the navigation');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('390 px: a sheet at the bottom of the screen', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: TOPIC,
    width: 390,
    height: 844,
  });
  await waitMessage(page, 'Othello again.');
  await page.locator('.msg', { hasText: 'Othello asks.' }).locator('.avatar-btn').click();
  const card = page.getByRole('dialog', { name: 'Othello' });
  await card.waitFor();
  const box = (await card.boundingBox())!;
  t.equal(Math.round(box.x), 0, 'the full width');
  t.equal(Math.round(box.width), 390);
  t.equal(Math.round(box.y + box.height), 844, 'at the bottom');
  t.equal(await cardText(page, '.card-email'), 'othello@zulip.com');
  await screenshot(page, t, 'card-othello-390');
  await page.getByRole('button', { name: 'Close' }).click();
  await card.waitFor({ state: 'detached' });

  await senderOf(page, 'Othello asks.').click();
  await card.waitFor();
  await page.getByRole('button', { name: 'Send direct message' }).click();
  await waitForTitle(page, 'Othello');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.pass('the conversation, compose focused');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the window resized: the card follows the name, a sheet when narrow', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: TOPIC,
    width: 1280,
    height: 800,
  });
  await waitMessage(page, 'Othello again.');
  const name = senderOf(page, 'Othello asks.');
  await name.click();
  const card = page.getByRole('dialog', { name: 'Othello' });
  await card.waitFor();
  /** Whether the card is under the name, its left edge at the name's, as it is now. */
  const beside = async () => {
    const [nb, cb] = [(await name.boundingBox())!, (await card.boundingBox())!];
    return Math.abs(cb.x - nb.x) <= 2 && cb.y >= nb.y + nb.height && cb.y - nb.y < 60;
  };
  t.ok(await beside(), 'under the name');
  const before = (await name.boundingBox())!.x;

  // Narrower than the sidebar's breakpoint: the sidebar goes, the name moves left; the card too.
  await page.setViewportSize({ width: 800, height: 800 });
  await waitFor(
    page,
    `document.querySelector('.msg .sender').getBoundingClientRect().x < ${before - 100}`,
  );
  await waitFor(
    page,
    `Math.abs(document.querySelector('.profile-card').getBoundingClientRect().x - [...document.querySelectorAll('.msg .sender')].find((e) => e.closest('.msg').textContent.includes('Othello asks.')).getBoundingClientRect().x) <= 2`,
  );
  t.ok(await beside(), 'under the name where it is now');
  await screenshot(page, t, 'card-resized-800');

  // A phone's width: a sheet at the bottom; wide again: beside the name again.
  await page.setViewportSize({ width: 390, height: 700 });
  await waitFor(page, `document.querySelector('.profile-card')?.classList.contains('sheet')`);
  const sheet = (await card.boundingBox())!;
  t.same(
    [Math.round(sheet.x), Math.round(sheet.width), Math.round(sheet.y + sheet.height)],
    [0, 390, 700],
    'a sheet: the full width, at the bottom',
  );
  await page.setViewportSize({ width: 1280, height: 800 });
  await waitFor(page, `!document.querySelector('.profile-card')?.classList.contains('sheet')`);
  t.ok(await beside(), 'wide again: under the name');
  t.ok(
    await page.evaluate(`!!document.activeElement?.closest('.profile-card')`),
    'the focus still in it',
  );
  await page.keyboard.press('Escape');
  await card.waitFor({ state: 'detached' });
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('before the people have loaded: the name, "Loading…", then the rest', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await b.newPage();
  const watch = await watchPage(page);
  // The app's GET /users held until released: the first screen comes without the people.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route(
    (u) => u.pathname === '/json/users',
    async (route) => {
      await held;
      await route.continue();
    },
  );
  await page.goto(ts.url + '/' + TOPIC);
  await fillLogin(page, ts.fx.users.hamlet!.email, ts.fx.users.hamlet!.password);
  await waitLive(page);
  await waitMessage(page, 'Othello again.');
  await senderOf(page, 'Othello asks.').click();
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();
  t.equal(await cardText(page, '.card-pending'), 'Loading…', 'the name, and "Loading…"');
  t.same(await facts(page), {}, 'nothing else yet');
  t.same(
    await page.evaluate(
      `[...document.querySelectorAll('.card-actions button')].map((b) => b.textContent.trim())`,
    ),
    ['View messages sent'],
    'only what needs no more than the id',
  );
  release();
  await page.waitForSelector('.profile-card .card-facts');
  t.equal((await facts(page)).Role, 'Member', 'filled in when the people came');
  t.equal(await cardText(page, '.card-email'), 'othello@zulip.com');
  t.ok(await page.$('.card-actions button.primary'), 'Send direct message with them');
  t.ok(
    await page.evaluate(`!!document.activeElement?.closest('.profile-card')`),
    'the focus still in it',
  );
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  'mentions: a person, a silent one, a group (its members), wildcards open nothing',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { api } = ts;
    const made = await api.post('iago', 'user_groups/create', {
      name: 'reviewers',
      description: 'Those who read it first',
      members: [id('othello'), id('desdemona'), id('hamlet')],
    });
    if (made.status !== 200) throw new Error(`the group: ${made.text}`);
    await sendChannelMessage(
      api,
      'iago',
      'general',
      'mentions',
      'First @**Othello**, then others.',
    );
    await sendChannelMessage(
      api,
      'iago',
      'general',
      'mentions',
      'Ask @**Othello** or @_**Desdemona**, or @*reviewers*; @**all** and @**topic** too.',
    );
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#narrow/channel/general/topic/mentions',
    });
    await waitMessage(page, 'Ask');
    const row = page.locator('.msg', { hasText: 'Ask' });
    const mention = (sel: string, text: string) =>
      row.locator(`.content ${sel}`, { hasText: text }).first();

    // A person's mention: their card, under it; the message selected; Esc back to the mention.
    const othello = mention('.user-mention', '@Othello');
    await othello.click();
    const card = page.getByRole('dialog', { name: 'Othello' });
    await card.waitFor();
    const [mb, cb] = [(await othello.boundingBox())!, (await card.boundingBox())!];
    t.ok(Math.abs(cb.x - mb.x) <= 2 && cb.y >= mb.y + mb.height && cb.y - mb.y < 40, 'under it');
    t.equal((await facts(page)).Role, 'Member', "Othello's card");
    t.ok(
      await page.evaluate(`!!document.querySelector('.msg.selected')?.textContent.includes('Ask')`),
      'its message selected (as the reference)',
    );
    await screenshot(page, t, 'card-from-mention-1280');
    await page.keyboard.press('Escape');
    await card.waitFor({ state: 'detached' });
    t.ok(
      await page.evaluate(`document.activeElement?.matches('.msg.selected .user-mention')`),
      'Esc: the focus back on the mention',
    );

    // A silent mention (no "@"): the same.
    await mention('.user-mention.silent', 'Desdemona').click();
    await page.getByRole('dialog', { name: 'Desdemona' }).waitFor();
    t.equal((await facts(page)).Role, 'Owner', "Desdemona's card");
    await page.mouse.click(1200, 700);
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    // Wildcards open nothing: a card open would take the next click (its overlay), and Othello's
    // would not open from it.
    for (const [sel, text] of [
      ['.user-mention', '@all'],
      ['.topic-mention', '@topic'],
    ] as const) {
      const box = (await mention(sel, text).boundingBox())!;
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      const ob = (await othello.boundingBox())!;
      await page.mouse.click(ob.x + ob.width / 2, ob.y + ob.height / 2);
      await card.waitFor();
      t.equal(await page.locator('[role="dialog"]').count(), 1, `${text}: no card`);
      await page.keyboard.press('Escape');
      await card.waitFor({ state: 'detached' });
    }

    // A group's mention: its card under it, the name, description, size and members by name.
    const group = mention('.user-group-mention', '@reviewers');
    await group.click();
    const gcard = page.getByRole('dialog', { name: 'reviewers' });
    await gcard.waitFor();
    const [gb, gcb] = [(await group.boundingBox())!, (await gcard.boundingBox())!];
    t.ok(Math.abs(gcb.x - gb.x) <= 2 && gcb.y >= gb.y + gb.height, 'under the group mention');
    t.equal(
      await page.evaluate(`document.querySelector('.group-card .group-description')?.textContent`),
      'Those who read it first',
    );
    t.equal(
      await page.evaluate(`document.querySelector('.group-card .group-count')?.textContent`),
      '3 members',
    );
    t.same(
      await page.evaluate(
        `[...document.querySelectorAll('.group-card .group-members li')].map((e) => e.textContent)`,
      ),
      ['Desdemona', 'Hamlet', 'Othello'],
      'its members, by name',
    );
    t.equal(
      await page.evaluate(`document.activeElement?.textContent`),
      'Desdemona',
      'the focus on the first member',
    );
    await screenshot(page, t, 'group-card-1280');
    // A member's name: their card, in the group card's place.
    await page.locator('.group-card button', { hasText: 'Othello' }).click();
    await card.waitFor();
    await gcard.waitFor({ state: 'detached' });
    t.pass("a member's name opens their card");
    await page.keyboard.press('Escape');
    await card.waitFor({ state: 'detached' });
    t.ok(
      await page.evaluate(`document.activeElement?.matches('.msg.selected .user-group-mention')`),
      'the focus back on the group mention',
    );
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test("the mentions of oneself stand out: oneself, a group of one's own, @all", async (t) => {
  if (NO_CHROMIUM) return;
  const { api } = ts;
  const group = async (name: string, members: number[], subgroups: number[] = []) => {
    const r = await api.post('iago', 'user_groups/create', {
      name,
      description: name,
      members,
      subgroups,
    });
    if (r.status !== 200) throw new Error(`the group ${name}: ${r.text}`);
    return (r.body as { group_id: number }).group_id;
  };
  const crew = await group('crew', [id('hamlet')]);
  await group('stewards', [id('iago')], [crew]);
  await group('outsiders', [id('othello')]);
  await sendChannelMessage(
    api,
    'iago',
    'general',
    'me',
    'For @**Hamlet** and @**Othello**; @*stewards*, @*outsiders*; @**all**, @**topic**.',
  );
  // Hamlet's own message to a group of his: highlighted as a mention, as the reference's web app
  // does (the server flags it `mentioned` for him too; the row's highlight is by that flag).
  await sendChannelMessage(api, 'hamlet', 'general', 'me', 'Mine, to @*crew*.');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/general/topic/me',
  });
  await waitMessage(page, 'Mine, to');
  // (Marked as the row is drawn: its first mention of Hamlet marked, the rest read at once.)
  await page.waitForSelector('.msg:has-text("For") .content .user-mention-me');
  const marked = (text: string) =>
    page.evaluate<[string, boolean][]>(
      `[...[...document.querySelectorAll('.msg')].find((m) => m.textContent.includes(${JSON.stringify(text)})).querySelectorAll('.content .user-mention, .content .user-group-mention, .content .topic-mention')].map((e) => [e.textContent, e.classList.contains('user-mention-me')])`,
    );
  t.same(
    await marked('For'),
    [
      ['@Hamlet', true],
      ['@Othello', false],
      ['@stewards', true],
      ['@outsiders', false],
      ['@all', true],
      ['@topic', false],
    ],
    'oneself, a group one is in through a subgroup, @all: marked; not @topic (no message of ' +
      "Hamlet's in the topic before it), others, a group one is not in",
  );
  t.same(await marked('Mine, to'), [['@crew', true]], "one's own group in one's own message");
  t.same(
    await page.evaluate(
      `[...document.querySelectorAll('.msg')].map((m) => m.classList.contains('mentioned'))`,
    ),
    [true, true],
    'both rows highlighted as mentions',
  );
  const style = await page.evaluate<[string, string]>(
    `(() => { const a = getComputedStyle(document.querySelector('.user-mention-me')), b = getComputedStyle([...document.querySelectorAll('.user-mention')].find((e) => !e.classList.contains('user-mention-me'))); return [a.backgroundColor, b.backgroundColor]; })()`,
  );
  t.not(style[0], style[1], 'drawn differently from a mention of someone else');
  await screenshot(page, t, 'mentions-of-me-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('mentions from the keyboard: Tab stops in the selected message only, Enter', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/general/topic/mentions',
  });
  await waitMessage(page, 'Ask');
  await page.click('#compose-text');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.activeElement?.classList.contains('messages')`);
  await page.keyboard.press('End');
  await waitFor(page, `!!document.querySelector('.msg.selected')?.textContent.includes('Ask')`);
  // Every mention a button; only the selected message's are Tab stops (not one per mention in
  // a long list); wildcards are no buttons.
  const stops = () =>
    page.evaluate<[string, number][]>(
      `[...document.querySelectorAll('.msg .content [role="button"]')].map((e) => [e.textContent, e.tabIndex])`,
    );
  t.same(
    await stops(),
    [
      ['@Othello', -1],
      ['@Othello', 0],
      ['Desdemona', 0],
      ['@reviewers', 0],
    ],
    "the selected message's mentions only",
  );
  // `i`: its actions; Shift+Tab back to its last mention, Enter: the group's card.
  await page.keyboard.press('i');
  await waitFor(page, `!!document.activeElement?.closest('.msg.selected .msg-actions')`);
  await page.keyboard.press('Shift+Tab');
  await waitFor(page, `document.activeElement?.matches('.msg.selected .user-group-mention')`);
  await page.keyboard.press('Enter');
  const gcard = page.getByRole('dialog', { name: 'reviewers' });
  await gcard.waitFor();
  t.notOk(await page.$('#compose-text:focus'), 'not the list’s Enter (reply)');
  // Enter on a member: their card; Esc: back on the mention.
  await page.keyboard.press('Enter');
  const card = page.getByRole('dialog', { name: 'Desdemona' });
  await card.waitFor();
  await page.keyboard.press('Escape');
  await card.waitFor({ state: 'detached' });
  t.ok(
    await page.evaluate(`document.activeElement?.matches('.msg.selected .user-group-mention')`),
    'the focus back on the mention',
  );
  // The selection moves on: that message's mentions leave the Tab order.
  await page.locator('.messages').focus();
  await page.keyboard.press('ArrowUp');
  await waitFor(page, `!!document.querySelector('.msg.selected')?.textContent.includes('First')`);
  t.same(await stops(), [
    ['@Othello', 0],
    ['@Othello', -1],
    ['Desdemona', -1],
    ['@reviewers', -1],
  ]);
  watch.assertClean(t, /WebSocket|status of 401/);
});
