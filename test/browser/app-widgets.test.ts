/**
 * Polls and to-do lists in the web app (web/app/widgets.tsx), in chromium with two accounts side
 * by side: a poll sent from the compose box is drawn as a poll in both pages, both vote and the
 * counts change live in both, one takes a vote back, the other adds an option, the author edits
 * the question; a to-do list's task struck by one is struck in the other, and a task added. What
 * the pages show is checked against the server's submessages. Screenshots at 1280 and 390 px.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitCount, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

/** The options of the page's poll as "count text", in order. */
function pollRows(page: Page): Promise<string[]> {
  return page.$$eval('.widget.poll .poll-vote', (els) =>
    els.map(
      (e) =>
        `${e.querySelector('.poll-count')!.textContent} ${e.querySelector('.poll-text')!.textContent}`,
    ),
  );
}

/** Until the page's poll shows these rows. */
function waitRows(page: Page, rows: string[]): Promise<void> {
  return waitFor(
    page,
    `JSON.stringify([...document.querySelectorAll('.widget.poll .poll-vote')].map((e) => e.querySelector('.poll-count').textContent + ' ' + e.querySelector('.poll-text').textContent)) === ${JSON.stringify(JSON.stringify(rows))}`,
  );
}

const vote = (page: Page, option: string) =>
  page.click(`.widget.poll .poll-vote:has(.poll-text:text-is("${option}"))`);

t.test('a poll and a to-do list, live in two pages', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const { fx } = ts;
  const everyone = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  const general = await createChannel(ts.api, 'othello', 'general', { principals: everyone });
  await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'Shall we vote?');
  const hash = `#narrow/channel/${general}-general/topic/lunch`;
  const hamlet = await openApp(b, ts.url, fx, 'hamlet', { hash });
  const othello = await openApp(b, ts.url, fx, 'othello', { hash, width: 390, height: 844 });

  // Hamlet sends a poll from the compose box; both pages draw it as a poll, not as text.
  // The compose box offers the commands as "/" starts a message; Tab takes one.
  await hamlet.page.click('#compose-text');
  await hamlet.page.keyboard.type('/po');
  await hamlet.page.waitForSelector('.popup.ac .option:has-text("Create a poll")');
  await hamlet.page.keyboard.press('Tab');
  t.equal(await hamlet.page.inputValue('#compose-text'), '/poll ');
  await hamlet.page.keyboard.type('Where for lunch?');
  await hamlet.page.keyboard.press('Shift+Enter');
  await hamlet.page.keyboard.type('Pizza');
  await hamlet.page.keyboard.press('Shift+Enter');
  await hamlet.page.keyboard.type('Soup');
  await hamlet.page.keyboard.press('Enter');
  for (const p of [hamlet.page, othello.page]) {
    await p.waitForSelector('.widget.poll .widget-title:text-is("Where for lunch?")');
    await waitRows(p, ['0 Pizza', '0 Soup']);
  }
  t.equal(await hamlet.page.locator('.msg .content:has-text("/poll")').count(), 0, 'no raw text');

  // Both vote for Pizza: 2 in both pages, pressed in each for its own vote.
  await vote(hamlet.page, 'Pizza');
  await waitRows(othello.page, ['1 Pizza', '0 Soup']);
  await vote(othello.page, 'Pizza');
  for (const p of [hamlet.page, othello.page]) await waitRows(p, ['2 Pizza', '0 Soup']);
  t.equal(
    await hamlet.page.getAttribute('.poll-option:has-text("Pizza") .poll-vote', 'aria-pressed'),
    'true',
  );
  t.match(
    await othello.page.textContent('.poll-option:has-text("Pizza") .poll-voters'),
    /Hamlet, Othello/,
    'who voted',
  );
  // Othello takes the vote back and adds an option, and votes for it.
  await vote(othello.page, 'Pizza');
  await waitRows(hamlet.page, ['1 Pizza', '0 Soup']);
  await othello.page.fill('.widget.poll input[aria-label="New option"]', 'Curry');
  await othello.page.click('.widget.poll button:has-text("Add option")');
  for (const p of [hamlet.page, othello.page]) await waitRows(p, ['1 Pizza', '0 Soup', '0 Curry']);
  t.equal(await othello.page.inputValue('.widget.poll input[aria-label="New option"]'), '');
  await vote(othello.page, 'Curry');
  await waitRows(hamlet.page, ['1 Pizza', '0 Soup', '1 Curry']);
  // Only the author may edit the question.
  t.equal(await othello.page.locator('button:has-text("Edit question")').count(), 0);
  await hamlet.page.click('.widget.poll button:has-text("Edit question")');
  await hamlet.page.fill('.widget.poll input[aria-label="Question"]', 'Where for lunch today?');
  await hamlet.page.keyboard.press('Enter');
  await othello.page.waitForSelector('.widget-title:text-is("Where for lunch today?")');
  await waitFor(hamlet.page, `document.activeElement?.textContent === 'Edit question'`);
  await screenshot(hamlet.page, t, 'poll-1280');
  await screenshot(othello.page, t, 'poll-390');

  // The server holds what the pages show.
  const polls = assertSuccess(
    t,
    await ts.api.get('hamlet', 'messages', { anchor: 'newest', num_before: 1, num_after: 0 }),
  ).messages as { submessages: { sender_id: number; content: string }[] }[];
  t.same(
    polls[0]!.submessages
      .slice(1)
      .map((s) => JSON.parse(s.content) as { type: string })
      .map((c) => c.type),
    ['vote', 'vote', 'vote', 'new_option', 'vote', 'question'],
  );

  // A to-do list, sent by the API: Othello strikes a task, Hamlet sees it struck and adds one.
  await sendChannelMessage(
    ts.api,
    'othello',
    'general',
    'lunch',
    '/todo Picnic\nBread: a baguette\nCheese',
  );
  for (const p of [hamlet.page, othello.page])
    await p.waitForSelector('.widget.todo .todo-task:has-text("Cheese")');
  await othello.page.click('.widget.todo .todo-task:has-text("Bread") input[type="checkbox"]');
  await hamlet.page.waitForSelector('.widget.todo .todo-task.done:has-text("Bread")');
  t.equal(
    await hamlet.page.isChecked('.widget.todo .todo-task:has-text("Bread") input'),
    true,
    'checked in the other page',
  );
  await hamlet.page.fill('.widget.todo input[aria-label="New task"]', 'Plates');
  await hamlet.page.fill('.widget.todo input[aria-label="Description"]', 'paper ones');
  await hamlet.page.click('.widget.todo button:has-text("Add task")');
  await othello.page.waitForSelector('.widget.todo .todo-task:has-text("Plates: paper ones")');
  // Struck back by Hamlet.
  await hamlet.page.click('.widget.todo .todo-task:has-text("Bread") input[type="checkbox"]');
  await othello.page.waitForSelector('.widget.todo .todo-task:not(.done):has-text("Bread")');
  await hamlet.page.click('.widget.todo .todo-task:has-text("Cheese") input[type="checkbox"]');
  await othello.page.waitForSelector('.widget.todo .todo-task.done:has-text("Cheese")');
  // Its author (Othello) renames it; Hamlet may not.
  t.equal(await hamlet.page.locator('.widget.todo button:has-text("Edit title")').count(), 0);
  await othello.page.click('.widget.todo button:has-text("Edit title")');
  await othello.page.fill('.widget.todo input[aria-label="Title"]', 'Picnic on Sunday');
  await othello.page.click('.widget.todo button:has-text("Save")');
  await hamlet.page.waitForSelector('.widget.todo .widget-title:text-is("Picnic on Sunday")');
  await screenshot(hamlet.page, t, 'todo-1280');
  await screenshot(othello.page, t, 'todo-390');

  t.same(await pollRows(hamlet.page), ['1 Pizza', '0 Soup', '1 Curry']);
  hamlet.watch.assertClean(t);
  othello.watch.assertClean(t);
  await hamlet.page.close();
  await othello.page.close();
});

t.test(
  'a slash command is not echoed: the box says it is sending until the server has it',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    const { fx } = ts;
    const general = await createChannel(ts.api, 'othello', 'general', {
      principals: ['hamlet', 'othello'].map((n) => fx.users[n]!.id),
    });
    await sendChannelMessage(ts.api, 'othello', 'general', 'weekend', 'Any plans?');
    const hash = `#narrow/channel/${general}-general/topic/weekend`;
    const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', { hash });
    await page.waitForSelector('.msg .content:has-text("Any plans?")');

    // The server's answer to the send is held back.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let posted = 0;
    await page.route('**/json/messages', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      posted++;
      await held;
      await route.continue();
    });
    const todo = '/todo Hike\nBoots\nMap';
    await page.fill('#compose-text', todo);
    await waitCount(page, 'Drafts', 1);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.compose [role="status"]:text-is("Sending…")');
    await waitFor(page, `document.querySelector('.compose .send-btn').disabled`);
    // A message on its way is no draft, as the reference's (kept, in case it fails).
    await waitCount(page, 'Drafts', 0);
    t.pass('sending: not counted in Drafts');
    t.equal(
      await page.locator('.msg .content:has-text("/todo")').count(),
      0,
      'no local echo of its raw text (the reference echoes no slash command)',
    );
    t.equal(await page.locator('.msg.local').count(), 0, 'no row being sent');
    t.equal(await page.inputValue('#compose-text'), todo, 'the box keeps it while it is sent');
    // Enter again while it is on its way sends nothing more.
    await page.focus('#compose-text');
    await page.keyboard.press('Enter');
    await page.waitForTimeout(200);
    t.equal(posted, 1, 'sent once');
    await screenshot(page, t, 'slash-sending');

    release();
    await page.waitForSelector('.widget.todo .todo-task:has-text("Map")');
    await waitFor(page, `document.querySelector('#compose-text').value === ''`);
    await waitCount(page, 'Drafts', 0);
    t.equal(await page.locator('.compose [role="status"]').count(), 0, 'no longer sending');
    t.equal(await page.locator('.msg .content:has-text("/todo")').count(), 0, 'never its raw text');
    t.equal(posted, 1, 'sent once in all');
    await page.unroute('**/json/messages');

    // Refused by the server: the box keeps it and says why.
    await page.route('**/json/messages', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 400,
            contentType: 'application/json',
            body: JSON.stringify({
              result: 'error',
              msg: 'Widgets are off today.',
              code: 'BAD_REQUEST',
            }),
          })
        : route.continue(),
    );
    await page.fill('#compose-text', '/poll Where?');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.compose [role="alert"]:has-text("Widgets are off today.")');
    t.match(
      await page.textContent('.compose [role="alert"]'),
      /not sent/,
      'refused: said so under the box',
    );
    t.equal(await page.inputValue('#compose-text'), '/poll Where?', 'refused: the text kept');
    await waitCount(page, 'Drafts', 1);
    t.pass('refused: a draft again');
    t.notOk(
      await page.evaluate(`document.querySelector('.compose .send-btn').disabled`),
      'Send again',
    );
    t.equal(await page.locator('.msg .content:has-text("/poll")').count(), 0, 'refused: no row');
    await page.unroute('**/json/messages');
    await page.fill('#compose-text', '');

    // `/me` is echoed at once, as the reference's (its text as the server's copy shows it).
    await page.fill('#compose-text', '/me waves');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.msg .content:has-text("waves")');
    t.equal(await page.inputValue('#compose-text'), '', '/me: the box empties at once');
    watch.assertClean(t, /status of 400/);
    await page.close();
  },
);
