/**
 * The web app in chromium: a topic's "⋮" menu beyond reading and visibility, as the reference's
 * topic popover (web/app/topic-actions.tsx, move-topic.tsx), through the real server: Copy link
 * to topic (the topic view's address to the clipboard, "Link copied."), Move topic (renamed, the
 * app following the topic viewed; moved to another channel, the notices as chosen), a refusal
 * shown in the dialog in the server's words, a member held back by the realm's time limit asked
 * "Move some messages?" once the Move dialog closed (only the newer ones move, from the first the
 * server names, change_later; Cancel gives the focus back to the topic's "⋮"), and the same
 * question from a message's edit box (its topic changed for all of the topic),
 * Mark as resolved and unresolved (the "✔ " prefix), Delete topic for an administrator only
 * (after a confirmation); from a click and from the keys.
 * The Inbox's channel headers get the sidebar channel menu (the same items, one function). A
 * partial move (one message, from the edit box) reorders the sidebar's topics, another user's
 * Inbox and Recent conversations at once from the event, the topic it left at the place of its
 * newest message left (the channel's topics fetched again meanwhile held back). Shots of the
 * menus and the dialog at 1280 and 390.
 */
import t, { type Test } from 'tap';
import type { Page, Route } from 'playwright-core';
import { openApp, waitDrawerOpen, waitFor, waitForTitle, waitMessage } from '../helpers/app.js';
import { check } from '../helpers/a11y.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { systemGroupId } from '../helpers/channels.js';
import { fetchNarrow, sendChannelMessage, type FetchedMessage } from '../helpers/messages.js';

let kitchen = 0;
let garden = 0;
const seeded: Record<string, number[]> = {};
const { b, ts } = browserSuite(t, {
  server: true,
  channels: {
    kitchen: { by: 'iago', members: ['iago', 'hamlet', 'othello'] },
    garden: { by: 'iago', members: ['iago', 'hamlet'] },
  },
  seed: async ({ ts, channels }) => {
    kitchen = channels.kitchen;
    garden = channels.garden;
    const send = async (topic: string, text: string) =>
      (seeded[topic] ??= []).push(
        await sendChannelMessage(ts.api, 'othello', 'kitchen', topic, text),
      );
    await send('lunch', 'Soup again');
    await send('lunch', 'More soup');
    await send('breakfast', 'Eggs');
    await send('dinner', 'Who cooks tonight?');
    await send('trash', 'Delete me');
  },
});

/** A channel's topics on the server, as hamlet reads them: topic → its messages' ids. */
async function serverTopics(streamId: number): Promise<Record<string, number[]>> {
  const r = await fetchNarrow(ts.api, 'hamlet', [{ operator: 'channel', operand: streamId }]);
  const out: Record<string, number[]> = {};
  for (const m of r.body.messages as FetchedMessage[]) (out[m.subject] ??= []).push(m.id);
  return out;
}

/** The open channel's topics in the sidebar, top to bottom. */
const SIDEBAR_TOPICS = `[...document.querySelectorAll('.sidebar a.topic .label')].map((e) => e.textContent)`;

async function waitTopics(page: Page, has: string[], hasNot: string[] = []): Promise<void> {
  await waitFor(
    page,
    `((l) => ${JSON.stringify(has)}.every((x) => l.includes(x)) && !${JSON.stringify(hasNot)}.some((x) => l.includes(x)))(${SIDEBAR_TOPICS})`,
    15_000,
  ).catch(async (e: unknown) => {
    throw new Error(`sidebar topics: ${JSON.stringify(await page.evaluate(SIDEBAR_TOPICS))}`, {
      cause: e,
    });
  });
}

/** The sidebar's menu button of a topic of the open channel. */
const topicMenu = (topic: string) =>
  `.sidebar li.nav-row:has(a.topic .label:text-is(${JSON.stringify(topic)})) .row-menu-btn`;

/** The topic whose sidebar "⋮" has the focus (null: something else has it). */
const FOCUSED_TOPIC_MENU = `document.activeElement?.matches('.sidebar li[data-topic] .row-menu-btn')
  ? document.activeElement.closest('li[data-topic]').dataset.topic : null`;

/** The open menu's items. */
const items = (page: Page): Promise<string[]> =>
  page.evaluate(
    `[...document.querySelectorAll('.menu[role="menu"] .menu-item')].map((e) => e.textContent.trim())`,
  );

async function openTopicMenu(page: Page, topic: string): Promise<string[]> {
  await page.click(topicMenu(topic));
  await page.waitForSelector('.row-menu-list');
  return items(page);
}

const choose = (page: Page, label: string) =>
  page.click(`.menu[role="menu"] .menu-item:text-is(${JSON.stringify(label)})`);

const MEMBER_ITEMS = (topic: string, resolved = false) => [
  'Mark all messages as read',
  'Follow topic',
  'Mute topic',
  'Copy link to topic',
  'Move topic',
  resolved ? 'Mark as unresolved' : 'Mark as resolved',
];

/** The page keeps what the app writes to the clipboard (no clipboard permission needed). */
const KEEP_CLIPBOARD = `window.copied = [];
  navigator.clipboard.writeText = (text) => (window.copied.push(text), Promise.resolve());`;

t.test('a member: copy link, rename (followed), move to a channel, a refusal', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen/topic/lunch`,
    init: KEEP_CLIPBOARD,
  });
  await waitMessage(page, 'More soup');
  await waitTopics(page, ['lunch', 'breakfast', 'dinner', 'trash']);

  t.same(
    await openTopicMenu(page, 'lunch'),
    MEMBER_ITEMS('lunch'),
    'a member: the link, Move topic, Mark as resolved; no Delete topic',
  );
  await check(t, page, 'topic-menu-1280');
  await choose(page, 'Copy link to topic');
  await waitFor(page, `window.copied.length === 1`);
  t.same(
    await page.evaluate('window.copied'),
    [`${ts.url}/#narrow/channel/${kitchen}-kitchen/topic/lunch`],
    'the topic view’s address',
  );
  await page.waitForSelector('.toast:has-text("Link copied.")');
  t.pass('the confirmation shows');

  // Rename, from the dialog: the app follows the topic it shows.
  await openTopicMenu(page, 'lunch');
  await choose(page, 'Move topic');
  await page.waitForSelector('.move-topic-dialog');
  t.equal(await page.textContent('#move-topic-title'), 'Move topic');
  t.equal(await page.inputValue('#move-topic-name'), 'lunch', 'the name to change');
  t.equal(
    await page.evaluate('document.activeElement?.id'),
    'move-topic-name',
    'the name has the focus',
  );
  t.equal(await page.inputValue('#move-topic-channel'), String(kitchen), 'in its channel');
  t.same(
    [
      await page.isChecked('input[name="send_notification_to_new_thread"]'),
      await page.isChecked('input[name="send_notification_to_old_thread"]'),
    ],
    [true, false],
    'the reference’s notices: the new topic’s only',
  );
  t.ok(await page.isDisabled('.move-topic-dialog button[type="submit"]'), 'nothing changed yet');
  await check(t, page, 'move-dialog-1280');
  await page.fill('#move-topic-name', 'brunch');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.move-topic-dialog', { state: 'detached' });
  await waitTopics(page, ['brunch'], ['lunch']);
  t.pass('the sidebar has the new name, not the old');
  await waitForTitle(page, 'brunch');
  t.pass('the view followed the topic');
  const after = await serverTopics(kitchen);
  t.notOk(after.lunch, 'nothing left under the old name (no notice there)');
  t.same(
    after.brunch!.slice(0, 2),
    seeded.lunch,
    'the messages under the new name, the notice after them',
  );
  t.equal(after.brunch!.length, 3, 'the notification bot’s notice in the new topic');

  // Move to another channel, from the keys: the menu button, Enter, the arrows.
  await page.focus(topicMenu('breakfast'));
  await page.keyboard.press('Enter');
  await page.waitForSelector('.row-menu-list');
  t.equal(
    await page.evaluate('document.activeElement?.textContent'),
    'Mark all messages as read',
    'the first item has the focus',
  );
  for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
  t.equal(await page.evaluate('document.activeElement?.textContent'), 'Move topic');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.move-topic-dialog');
  await page.selectOption('#move-topic-channel', String(garden));
  await page.uncheck('input[name="send_notification_to_new_thread"]');
  await page.click('.move-topic-dialog button[type="submit"]');
  await page.waitForSelector('.move-topic-dialog', { state: 'detached' });
  await waitTopics(page, ['brunch'], ['breakfast']);
  t.same((await serverTopics(garden)).breakfast, seeded.breakfast, 'in the garden, no notice');
  t.notOk((await serverTopics(kitchen)).breakfast, 'gone from the kitchen');

  // A refusal: the server's words, in the dialog, which stays open.
  await openTopicMenu(page, 'dinner');
  await choose(page, 'Move topic');
  await page.waitForSelector('.move-topic-dialog');
  await page.fill('#move-topic-name', '✔');
  await page.click('.move-topic-dialog button[type="submit"]');
  await page.waitForSelector('.move-topic-dialog .error-text');
  t.equal(
    await page.textContent('.move-topic-dialog .error-text'),
    'General chat cannot be marked as resolved',
    'the server’s refusal',
  );
  await page.keyboard.press('Escape');
  await page.waitForSelector('.move-topic-dialog', { state: 'detached' });
  t.same((await serverTopics(kitchen)).dinner, seeded.dinner, 'nothing moved');

  // The topic viewed, moved to another channel under its name: the view goes with it.
  await openTopicMenu(page, 'brunch');
  await choose(page, 'Move topic');
  await page.waitForSelector('.move-topic-dialog');
  await page.selectOption('#move-topic-channel', String(garden));
  await page.click('.move-topic-dialog button[type="submit"]');
  await waitFor(
    page,
    `location.hash === ${JSON.stringify(`#narrow/channel/${garden}-garden/topic/brunch`)}`,
  );
  await waitMessage(page, 'More soup');
  t.pass('the view followed it to the garden');
  t.same((await serverTopics(garden)).brunch!.slice(0, 2), seeded.lunch, 'moved on the server');
  watch.assertClean(t, /status of 400/);
});

t.test('mark as resolved and unresolved', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen/topic/dinner`,
  });
  await waitMessage(page, 'Who cooks tonight?');
  await waitTopics(page, ['dinner']);
  await openTopicMenu(page, 'dinner');
  await choose(page, 'Mark as resolved');
  await waitTopics(page, ['✔ dinner'], ['dinner']);
  await waitForTitle(page, '✔ dinner');
  t.pass('resolved: the sidebar and the view have the prefix');
  const resolved = await serverTopics(kitchen);
  t.same(resolved['✔ dinner']!.slice(0, 1), seeded.dinner, 'the server renamed it');
  t.notOk(resolved.dinner);
  t.same(await openTopicMenu(page, '✔ dinner'), MEMBER_ITEMS('✔ dinner', true));
  await choose(page, 'Mark as unresolved');
  await waitTopics(page, ['dinner'], ['✔ dinner']);
  t.same((await serverTopics(kitchen)).dinner!.slice(0, 1), seeded.dinner, 'unresolved');
  watch.assertClean(t);
});

t.test('an administrator deletes a topic; the Inbox channel menu', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
    hash: `#narrow/channel/${kitchen}-kitchen`,
  });
  await waitMessage(page, 'Delete me');
  await waitTopics(page, ['trash']);
  const all = await openTopicMenu(page, 'trash');
  t.equal(all.at(-1), 'Delete topic', 'an administrator: Delete topic, last');
  t.ok(
    await page.evaluate(
      `document.querySelector('.row-menu-list .menu-item:last-child').classList.contains('danger')`,
    ),
    'drawn as a destructive action',
  );
  await choose(page, 'Delete topic');
  await page.waitForSelector('.dialog.confirm');
  t.match(await page.textContent('#confirm-text'), /permanently delete trash\?/);
  await screenshot(page, t, 'delete-confirm-1280');
  await page.click('.dialog.confirm .btn.cancel');
  t.same((await serverTopics(kitchen)).trash, seeded.trash, 'Cancel: nothing deleted');
  await openTopicMenu(page, 'trash');
  await choose(page, 'Delete topic');
  await page.waitForSelector('.dialog.confirm');
  await page.keyboard.press('Enter');
  await waitTopics(page, [], ['trash']);
  t.pass('the topic is gone from the sidebar');
  t.notOk((await serverTopics(kitchen)).trash, 'and from the server');

  // The Inbox: the channel's header has the sidebar's channel menu.
  // (Sent once the Inbox shows: the kitchen's view would have read it.)
  await page.click('.sidebar a.nav-item[href="#inbox"]');
  await waitForTitle(page, 'Inbox');
  await sendChannelMessage(ts.api, 'hamlet', 'kitchen', 'tea', 'Tea anyone?');
  const header = '.inbox-header:has(.inbox-name:text-is("kitchen")) .inbox-menu-btn';
  await page.waitForSelector(header);
  t.equal(await page.getAttribute(header, 'aria-label'), 'Menu for #kitchen');
  await page.click(header);
  await page.waitForSelector('.inbox-menu-list');
  const inboxItems = await items(page);
  await page.keyboard.press('Escape');
  await page.click('.sidebar .nav-row:has(.label:text-is("kitchen")) .row-menu-btn');
  await page.waitForSelector('.row-menu-list');
  t.same(inboxItems, await items(page), 'the same items as the sidebar’s channel menu');
  t.same(inboxItems, [
    'Mark all messages as read',
    'Pin to top',
    'Mute channel',
    'Channel settings',
  ]);
  await page.keyboard.press('Escape');
  // From the keys: the header, → to its ✓, → to its menu, Enter, ↓ to Pin to top.
  await page.focus('.inbox-header:has(.inbox-name:text-is("kitchen")) .inbox-toggle');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  t.equal(
    await page.evaluate('document.activeElement?.getAttribute("aria-label")'),
    'Menu for #kitchen',
  );
  await page.keyboard.press('Enter');
  await page.waitForSelector('.inbox-menu-list');
  await screenshot(page, t, 'inbox-channel-menu-1280');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.sidebar .pinned-channels .label:text-is("kitchen")');
  const subs = await ts.api.get('iago', 'users/me/subscriptions');
  t.equal(
    (subs.body.subscriptions as { stream_id: number; pin_to_top: boolean }[]).find(
      (s) => s.stream_id === kitchen,
    )?.pin_to_top,
    true,
    'pinned on the server',
  );
  watch.assertClean(t);
});

/**
 * Othello's three messages in kitchen > `topic`, the first two sent two hours ago, and the realm's
 * limit for moving messages within a channel set to an hour (put back at the test's end): a
 * member may move only the newest. Their ids, oldest first.
 */
async function pastTheLimit(t: Test, topic: string, texts: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const text of texts)
    ids.push(await sendChannelMessage(ts.api, 'othello', 'kitchen', topic, text));
  const backdate = ts.server.store.db.prepare(
    'UPDATE messages SET date_sent = date_sent - 7200 WHERE id = ?',
  );
  for (const id of ids.slice(0, -1)) backdate.run(id);
  const limit = await ts.api.patch('iago', 'realm', {
    move_messages_within_stream_limit_seconds: 3600,
  });
  t.equal(limit.status, 200, limit.text);
  t.teardown(() =>
    ts.api.patch('iago', 'realm', { move_messages_within_stream_limit_seconds: 604800 }),
  );
  return ids;
}

t.test('a member held back by the time limit: only the newer messages move', async (t) => {
  if (NO_CHROMIUM) return;
  const ids = await pastTheLimit(t, 'old news', [
    'First, long ago',
    'Second, long ago',
    'Third, just now',
  ]);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen/topic/old news`,
  });
  await waitMessage(page, 'Third, just now');
  await waitTopics(page, ['old news']);

  const rename = async () => {
    await openTopicMenu(page, 'old news');
    await choose(page, 'Move topic');
    await page.waitForSelector('.move-topic-dialog');
    await page.fill('#move-topic-name', 'recent news');
    await page.click('.move-topic-dialog button[type="submit"]');
    await page.waitForSelector('.confirm[role="alertdialog"]');
  };
  // Asked, in the reference's words, once the Move dialog closed; Cancel moves nothing.
  await rename();
  t.equal(
    await page.locator('.move-topic-dialog').count(),
    0,
    'the Move dialog closed before the question (as the reference’s), not left "Moving…" behind it',
  );
  t.equal(await page.textContent('#confirm-title'), 'Move some messages?');
  t.equal(
    await page.textContent('#confirm-text'),
    'You do not have permission to move some of the messages in this topic. Contact a ' +
      'moderator to move all messages.',
  );
  t.equal(
    await page.textContent('.confirm-extra'),
    'Do you still want to move the latest message? 2 messages will remain in the current topic.',
    'the counts from the server’s answer',
  );
  t.equal(
    await page.evaluate('document.activeElement?.textContent'),
    'Confirm',
    'the action has the focus',
  );
  await check(t, page, 'move-some-1280');
  await page.click('.confirm button.cancel');
  await page.waitForSelector('.confirm[role="alertdialog"]', { state: 'detached' });
  t.equal(
    await page.evaluate(FOCUSED_TOPIC_MENU),
    'old news',
    'Cancel: the focus back on the topic’s "⋮" (where the Move dialog gives it), not the page’s body',
  );
  t.same((await serverTopics(kitchen))['old news'], ids, 'nothing moved');

  // Confirmed: the newest message (the one within the limit) and none before it.
  await rename();
  await page.keyboard.press('Enter');
  await page.waitForSelector('.confirm[role="alertdialog"]', { state: 'detached' });
  await waitTopics(page, ['old news', 'recent news']);
  t.pass('the sidebar has both topics');
  t.equal(await page.evaluate(FOCUSED_TOPIC_MENU), 'old news', 'confirmed: the focus there too');
  const after = await serverTopics(kitchen);
  t.same(after['old news'], ids.slice(0, 2), 'the two older messages stayed');
  t.same(after['recent news']!.slice(0, 1), ids.slice(2), 'the newer one moved');
  t.equal(after['recent news']!.length, 2, 'with the notification bot’s notice');
  // The two refusals the questions come from (as the reference's: the whole topic is asked first).
  watch.assertClean(t, /status of 400/);
});

t.test(
  'the edit box: a topic change for all of the topic, held back by the time limit',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ids = await pastTheLimit(t, 'old edits', [
      'Edited long ago',
      'Also long ago',
      'Edited just now',
    ]);
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${kitchen}-kitchen/topic/old edits`,
    });
    await waitMessage(page, 'Edited just now');

    /** The newest message's edit box: the topic changed for all of the topic, saved. */
    const save = async () => {
      const row = page.locator('.msg', { hasText: 'Edited just now' });
      await row.hover();
      await row.locator('button[aria-label="Edit"]').click();
      await page.waitForSelector('.edit-box input');
      await page.fill('.edit-box input', 'fresh edits');
      await page.selectOption('.edit-box select', 'change_all');
      await page.click('.edit-box button:has-text("Save")');
      await page.waitForSelector('.confirm[role="alertdialog"]');
    };
    // Asked, as from the Move dialog (the reference asks the same from its topic edit).
    await save();
    t.equal(await page.textContent('#confirm-title'), 'Move some messages?');
    t.equal(
      await page.textContent('.confirm-extra'),
      'Do you still want to move the latest message? 2 messages will remain in the current topic.',
      'the counts from the server’s answer',
    );
    t.equal(await page.locator('.toast').count(), 0, 'no toast of the refusal');
    await screenshot(page, t, 'move-some-edit-1280');
    await page.click('.confirm button.cancel');
    await page.waitForSelector('.confirm[role="alertdialog"]', { state: 'detached' });
    await page.waitForSelector('.edit-box', { state: 'detached' });
    t.pass('Cancel: the edit ends, as the reference’s');
    t.ok(
      await page.evaluate(`document.activeElement?.matches('.messages')`),
      'the focus on the messages (the edit box gone), not the page’s body',
    );
    t.same((await serverTopics(kitchen))['old edits'], ids, 'nothing moved');

    // Confirmed: the newest message only (change_later from it), the view following it.
    await save();
    await page.keyboard.press('Enter');
    await page.waitForSelector('.confirm[role="alertdialog"]', { state: 'detached' });
    await page.waitForSelector('.edit-box', { state: 'detached' });
    await waitTopics(page, ['old edits', 'fresh edits']);
    const after = await serverTopics(kitchen);
    t.same(after['old edits'], ids.slice(0, 2), 'the two older messages stayed');
    t.same(after['fresh edits']?.slice(0, 1), ids.slice(2), 'the newer one moved');
    // The refusal the question comes from.
    watch.assertClean(t, /status of 400/);
  },
);

t.test('a member without the permissions; on a phone', async (t) => {
  if (NO_CHROMIUM) return;
  const admins = JSON.stringify({ new: systemGroupId(ts, 'role:administrators') });
  const set = await ts.api.patch('iago', 'realm', {
    can_move_messages_between_channels_group: admins,
    can_resolve_topics_group: admins,
  });
  t.equal(set.status, 200, set.text);
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${kitchen}-kitchen/topic/dinner`,
    width: 390,
    height: 800,
  });
  await waitMessage(page, 'Who cooks tonight?');
  await page.click('button[aria-label="Open the sidebar"]');
  await waitTopics(page, ['dinner']);
  t.same(
    await openTopicMenu(page, 'dinner'),
    [
      'Mark all messages as read',
      'Follow topic',
      'Mute topic',
      'Copy link to topic',
      'Rename topic',
    ],
    'topics only: Rename topic; no resolve, no delete',
  );
  await screenshot(page, t, 'topic-menu-390');
  await choose(page, 'Rename topic');
  await page.waitForSelector('.move-topic-dialog');
  t.equal(await page.textContent('#move-topic-title'), 'Rename topic');
  t.equal(await page.$('#move-topic-channel'), null, 'no channel to choose');
  await screenshot(page, t, 'rename-dialog-390');
  await page.fill('#move-topic-name', 'supper');
  await page.click('.move-topic-dialog button[type="submit"]');
  await page.waitForSelector('.move-topic-dialog', { state: 'detached' });
  await waitForTitle(page, 'supper');
  t.same((await serverTopics(kitchen)).supper!.slice(0, 1), seeded.dinner, 'renamed');

  // Channels but not topics (changed while the page is open: the realm event): Move topic, its
  // name fixed, the channel to choose.
  const swap = await ts.api.patch('iago', 'realm', {
    can_move_messages_between_channels_group: JSON.stringify({
      new: systemGroupId(ts, 'role:members'),
    }),
    can_move_messages_between_topics_group: admins,
  });
  t.equal(swap.status, 200, swap.text);
  if (!(await page.isVisible(topicMenu('supper'))))
    await page.click('button[aria-label="Open the sidebar"]');
  for (let i = 0; ; i++) {
    if ((await openTopicMenu(page, 'supper')).includes('Move topic')) break;
    await page.keyboard.press('Escape');
    if (i === 100) throw new Error('the menu never offered Move topic');
    await new Promise((r) => setTimeout(r, 100));
  }
  await choose(page, 'Move topic');
  await page.waitForSelector('.move-topic-dialog');
  t.ok(await page.isDisabled('#move-topic-name'), 'the name fixed');
  t.equal(
    await page.evaluate('document.activeElement?.id'),
    'move-topic-channel',
    'the channel has the focus',
  );
  await page.keyboard.press('Escape');
  await page.waitForSelector('.move-topic-dialog', { state: 'detached' });
  watch.assertClean(t);
});

/**
 * The places, in order, of `names` in what `selector` lists (texts trimmed; others left out), as
 * a page-side expression.
 */
const orderOf = (selector: string, names: string[]) =>
  `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.textContent.trim()).filter((x) => ${JSON.stringify(names)}.includes(x))`;

/** Until the expression's list is `want` (its last value in the error otherwise). */
async function waitOrder(
  t: Test,
  page: Page,
  expr: string,
  want: string[],
  what: string,
): Promise<void> {
  await waitFor(page, `JSON.stringify(${expr}) === ${JSON.stringify(JSON.stringify(want))}`).catch(
    async (e: unknown) => {
      throw new Error(`${what}: ${JSON.stringify(await page.evaluate(expr))}`, { cause: e });
    },
  );
  t.pass(`${what}: ${want.join(', ')}`);
}

t.test(
  'a partial move (the edit box, one message): the lists follow at once from the event',
  async (t) => {
    if (NO_CHROMIUM) return;
    const TOPICS = ['pantry', 'cellar', 'attic'];
    await sendChannelMessage(ts.api, 'iago', 'kitchen', 'pantry', 'Flour first');
    await sendChannelMessage(ts.api, 'iago', 'kitchen', 'cellar', 'Wine');
    await sendChannelMessage(ts.api, 'iago', 'kitchen', 'pantry', 'Flour again');
    // Hamlet reads the channel (its topics in his sidebar); Othello, who has read nothing, his
    // Inbox.
    const hamlet = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${kitchen}-kitchen`,
    });
    const othello = await openApp(b, ts.url, ts.fx, 'othello', { hash: '#inbox' });
    const sidebar = orderOf('.sidebar a.topic .label', TOPICS);
    const inbox = orderOf('.inbox-row .inbox-name', TOPICS);
    await waitOrder(t, hamlet.page, sidebar, ['pantry', 'cellar'], 'the sidebar at first');
    await waitOrder(t, othello.page, inbox, ['pantry', 'cellar'], 'the Inbox at first');
    // The channel's topics fetched again after the move are held back: what shows until they
    // come is the event's doing alone.
    const held: Route[] = [];
    await hamlet.page.route(/\/users\/me\/\d+\/topics/, (route) => void held.push(route));

    // Iago moves his newest message alone to a new topic, from its edit box.
    const iago = await openApp(b, ts.url, ts.fx, 'iago', {
      hash: `#narrow/channel/${kitchen}-kitchen/topic/pantry`,
    });
    await waitMessage(iago.page, 'Flour again');
    const row = iago.page.locator('.msg', { hasText: 'Flour again' });
    await row.hover();
    await row.locator('button[aria-label="Edit"]').click();
    await iago.page.waitForSelector('.edit-box input');
    await iago.page.fill('.edit-box input', 'attic');
    await iago.page.selectOption('.edit-box select', 'change_one');
    await iago.page.click('.edit-box button:has-text("Save")');
    await iago.page.waitForSelector('.edit-box', { state: 'detached' });

    // pantry's newest is now "Flour first", older than cellar's: it goes below cellar, and attic
    // is at the top, in the sidebar before the topics' fetch answers, and in the Inbox.
    const want = ['attic', 'cellar', 'pantry'];
    await waitOrder(t, hamlet.page, sidebar, want, 'the sidebar, from the event');
    for (let i = 0; i < 100 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    t.ok(held.length > 0, 'the fetch the move asked for was held back meanwhile');
    await screenshot(hamlet.page, t, 'partial-move-sidebar-1280');
    await waitOrder(t, othello.page, inbox, want, 'the Inbox');
    await screenshot(othello.page, t, 'partial-move-inbox-1280');
    // The fetch let through: the same.
    const answered = hamlet.page.waitForResponse(/\/users\/me\/\d+\/topics/);
    for (const r of held) await r.continue();
    await answered;
    await hamlet.page.unroute(/\/users\/me\/\d+\/topics/);
    await waitOrder(t, hamlet.page, sidebar, want, 'the sidebar, after the fetch');
    // Recent conversations, newest first.
    await hamlet.page.click('.sidebar a.nav-item[href="#recent"]');
    await waitOrder(t, hamlet.page, orderOf('.recent-row .recent-open', TOPICS), want, 'Recent');
    await screenshot(hamlet.page, t, 'partial-move-recent-1280');

    // On a phone: Othello's drawer, the kitchen's topics as they are now.
    const phone = await openApp(b, ts.url, ts.fx, 'othello', {
      width: 390,
      height: 844,
      hash: `#narrow/channel/${kitchen}-kitchen`,
    });
    await phone.page.click('button[aria-label="Open the sidebar"]');
    await waitDrawerOpen(phone.page);
    await waitOrder(t, phone.page, sidebar, want, 'the drawer');
    await screenshot(phone.page, t, 'partial-move-drawer-390');
    for (const p of [hamlet, othello, iago, phone]) p.watch.assertClean(t);
  },
);
