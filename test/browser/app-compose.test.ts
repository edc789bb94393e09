/**
 * The web app in chromium, writing (issue 30 Part B 5–11): sending with a local echo (shown at
 * once, replaced by the server's message, never doubled; a /me message's echo drawn as its server
 * copy, the action after the sender's name), the server-rendered preview, direct
 * messages one-to-one and in a group, drafts across narrows and a reload, reactions both ways,
 * edits and deletions seen by both users, uploads by the button, paste and drop (and a file too
 * large), typing notifications both ways, desktop notifications (permission granted),
 * autocomplete (topics, people, groups, channels, emoji), a custom emoji from the picker, the
 * realm's edit and delete limits, a topic moved by another user (and the topic suggestions for
 * another channel than the one shown after a move). The second user acts through the API, or
 * in a page of their own where both users must see a change.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  messageTexts,
  openApp,
  waitFor,
  waitForTitle,
  waitLive,
  waitMessage,
} from '../helpers/app.js';
import { NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { basicAuth, rawRequest } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { multipartWithFile, tinyPng } from '../helpers/images.js';
import { seedChannelMessages, sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

let general: number;

const { b, ts, channels } = browserSuite(t, {
  server: { maxFileUploadBytes: 1024 * 1024 },
  channels: { general: { by: 'iago', members: ['hamlet', 'othello', 'iago', 'cordelia'] } },
  seed,
});

async function seed(): Promise<void> {
  general = channels.general;
  await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'Lunch at noon?');
}

const topicHash = (topic: string) => `#narrow/channel/${general}-general/topic/${topic}`;

async function type(page: Page, text: string): Promise<void> {
  await page.click('#compose-text');
  await page.keyboard.type(text);
}

/**
 * The server's answer to the page's next send (POST /json/messages): the message is stored once
 * it came. A message sent to another conversation than the one shown has no echo in view to wait
 * for, so a test that then reads it by the API waits for this.
 */
function nextSend(page: Page): Promise<number> {
  return page
    .waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/json/messages',
    )
    .then((r) => r.status());
}

/** Messages another user sees in a narrow, by the API. */
async function contentsFor(who: string, narrow: unknown[]): Promise<string[]> {
  const r = await ts.api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 50,
    num_after: 0,
    narrow,
    apply_markdown: false,
  });
  return (r.body.messages as { content: string }[]).map((m) => m.content);
}

t.test('send with a local echo, and the preview', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('lunch') });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await page.route('**/json/messages', async (route) => {
    if (route.request().method() === 'POST') await gate;
    await route.continue();
  });
  await type(page, 'Count me **in**');
  await page.click('button[aria-label="Preview"]');
  await page.waitForSelector('.preview strong');
  t.equal(await page.textContent('.preview strong'), 'in', 'the preview, rendered by the server');
  await page.click('button[aria-label="Preview"]');
  await page.press('#compose-text', 'Enter');
  await page.waitForSelector('.msg.local >> text=Sending…');
  t.pass('echoed at once, marked as sending');
  t.equal(await page.inputValue('#compose-text'), '', 'the box is emptied');
  release();
  await page.waitForSelector('.msg.local', { state: 'detached' });
  await waitFor(
    page,
    `[...document.querySelectorAll('.msg .content strong')].some((e) => e.textContent === 'in')`,
  );
  const texts = await messageTexts(page);
  t.equal(
    texts.filter((x) => x === 'Count me in').length,
    1,
    'replaced by the server message, once',
  );
  t.same(
    await contentsFor('othello', [
      { operator: 'channel', operand: general },
      { operator: 'topic', operand: 'lunch' },
    ]).then((c) => c.at(-1)),
    'Count me **in**',
    'sent',
  );
  await page.unroute('**/json/messages');
  // Shift+Enter is a new line; Enter sends.
  await type(page, 'line one');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('line two');
  t.equal(await page.inputValue('#compose-text'), 'line one\nline two');
  await page.keyboard.press('Enter');
  await waitMessage(page, 'line two');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  'a /me message: the echo drawn as the server’s copy, the action after the name',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: topicHash('supper'),
    });
    await type(page, 'Anyone hungry?');
    await page.keyboard.press('Enter');
    await waitMessage(page, 'Anyone hungry?');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await page.route('**/json/messages', async (route) => {
      if (route.request().method() === 'POST') await gate;
      await route.continue();
    });
    // The row's look: whether it has the sender's name, what follows the name, its content, and
    // where the action is drawn.
    const look = (sel: string) =>
      page.evaluate(`(() => {
      const row = document.querySelector(${JSON.stringify(sel)});
      const action = row?.querySelector('.msg-head .me-action');
      const r = action?.getBoundingClientRect();
      return {
        first: row?.classList.contains('first'),
        sender: row?.querySelector('.msg-head .sender')?.textContent,
        action: action?.textContent,
        content: [...(row?.querySelectorAll('.body > .content') ?? [])].map((e) => e.textContent),
        at: r && [Math.round(r.left), Math.round(r.width), Math.round(r.height)],
      };
    })()`);
    await page.fill('#compose-text', '/me waves hello');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.msg.local >> text=Sending…');
    const echoed = await look('.msg.local');
    t.match(
      echoed,
      { first: true, sender: 'Hamlet', action: 'waves hello', content: [] },
      'the echo: the name, then the action on its line (no "/me", no content below)',
    );
    await screenshot(page, t, 'me-echo');
    release();
    await page.waitForSelector('.msg.local', { state: 'detached' });
    const id = await page.evaluate<string>(
      `[...document.querySelectorAll('.msg')].at(-1).dataset.id`,
    );
    t.same(
      await look(`.msg[data-id="${id}"]`),
      echoed,
      'the server’s copy: drawn the same, in the same place',
    );
    await screenshot(page, t, 'me-server');
    await page.unroute('**/json/messages');
    // The message after it has the name again (the action ran on from it).
    await type(page, 'Still hungry');
    await page.keyboard.press('Enter');
    await waitMessage(page, 'Still hungry');
    t.equal(
      await page.evaluate(
        `[...document.querySelectorAll('.msg')].at(-1).classList.contains('first')`,
      ),
      true,
      'the next message shows its sender',
    );
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('direct messages, one-to-one and group', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('lunch') });
  const { othello, iago, hamlet } = ts.fx.users;
  await page.click('button[aria-label="New direct message"]');
  await page.waitForSelector('#compose-dm:focus');
  await page.keyboard.type('Othel');
  await page.waitForSelector('[role="option"]:has-text("Othello")');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.pill >> text=Othello');
  await page.keyboard.press('Enter'); // on to the message
  await page.keyboard.type('Just between us');
  const sent = nextSend(page);
  await page.keyboard.press('Enter');
  t.equal(await sent, 200, 'sent');
  await waitFor(
    page,
    `[...document.querySelectorAll('.sidebar .nav-item .label')].some((e) => e.textContent === 'Othello')`,
  );
  const dm = [{ operator: 'dm', operand: [othello!.id] }];
  t.equal(
    (await contentsFor('othello', [{ operator: 'dm', operand: [hamlet!.id] }])).at(-1),
    'Just between us',
    'othello received it',
  );
  await page.click('.sidebar a.nav-item:has-text("Othello")');
  await waitMessage(page, 'Just between us');
  await sendDirectMessage(ts.api, 'othello', [hamlet!.id], 'Agreed, quietly');
  await waitMessage(page, 'Agreed, quietly');
  t.pass('the reply arrives live in the conversation');
  void dm;
  await sendDirectMessage(ts.api, 'iago', [hamlet!.id, othello!.id], 'Three of us now');
  await waitFor(
    page,
    `[...document.querySelectorAll('.sidebar .nav-item .label')].some((e) => e.textContent === 'Iago, Othello')`,
  );
  await page.click('.sidebar a.nav-item:has-text("Iago, Othello")');
  await waitMessage(page, 'Three of us now');
  await type(page, 'Hello both');
  await page.keyboard.press('Enter');
  await waitMessage(page, 'Hello both');
  await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
  t.equal(
    (await contentsFor('iago', [{ operator: 'dm', operand: [hamlet!.id, othello!.id] }])).at(-1),
    'Hello both',
    'a group reply',
  );
  t.match(await page.textContent('.title'), /Iago, Othello/);
  await screenshot(page, t, 'group-dm-1280');
  void iago;
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a recipient entered before the people are loaded is taken when they are', async (t) => {
  if (NO_CHROMIUM) return;
  const { hamlet } = ts.fx.users;
  const page = await b.newPage({ viewport: { width: 1280, height: 800 } });
  const watch = await watchPage(page);
  // The people list (GET /json/users, asked after the first screen) held back until released.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await page.route(
    (u) => u.pathname === '/json/users',
    async (route) => {
      await gate;
      await route.continue();
    },
  );
  await page.goto(ts.url + '/' + topicHash('lunch'));
  await page.fill('input[name="username"]', hamlet!.email);
  await page.fill('input[name="password"]', hamlet!.password);
  await page.click('button[type="submit"]');
  await waitLive(page);
  await page.click('button[aria-label="New direct message"]');
  await page.waitForSelector('#compose-dm:focus');
  await page.keyboard.type('Othel');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.compose [role="status"]:has-text("Loading people")');
  t.equal(await page.locator('.pill').count(), 0, 'nobody chosen yet');
  t.equal(await page.inputValue('#compose-dm'), 'Othel', 'what was typed stays');
  await screenshot(page, t, 'dm-people-loading-1280');
  release();
  await page.waitForSelector('.pill >> text=Othello');
  t.equal(await page.inputValue('#compose-dm'), '', 'the name was taken');
  await page.keyboard.press('Enter'); // on to the message
  await page.keyboard.type('Before the list came');
  // The message goes to a conversation not on screen: no echo in view to wait for.
  const sent = nextSend(page);
  await page.keyboard.press('Enter');
  t.equal(await sent, 200, 'sent');
  t.equal(
    (await contentsFor('othello', [{ operator: 'dm', operand: [hamlet!.id] }])).at(-1),
    'Before the list came',
    'othello received it',
  );
  // With the people loaded, a name nobody has is said so.
  await page.click('button[aria-label="New direct message"]');
  await page.waitForSelector('#compose-dm:focus');
  await page.keyboard.type('Nobodyatall');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.compose [role="alert"]:has-text("No one here matches")');
  t.equal(await page.locator('.pill').count(), 0);
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('drafts are kept per conversation, across narrows and a reload', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('lunch') });
  await type(page, 'A thought in progress');
  await page.evaluate(`location.hash = '${topicHash('other')}'`);
  await waitFor(page, `document.querySelector('#compose-topic').value === 'other'`);
  t.equal(await page.inputValue('#compose-text'), '', 'another conversation, another draft');
  await type(page, 'Elsewhere');
  await page.goBack();
  await waitFor(page, `document.querySelector('#compose-topic').value === 'lunch'`);
  t.equal(await page.inputValue('#compose-text'), 'A thought in progress', 'the draft came back');
  await page.reload();
  await waitFor(page, `document.querySelector('#compose-text')?.value === 'A thought in progress'`);
  t.pass('and after a reload');
  await page.evaluate(`location.hash = '${topicHash('other')}'`);
  await waitFor(page, `document.querySelector('#compose-text')?.value === 'Elsewhere'`);
  t.pass("the other conversation's draft too");
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a topic typed after the text leaves one draft, under the topic as typed', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general`,
  });
  await type(page, 'Written before its topic');
  await page.click('#compose-topic');
  await page.keyboard.type('agenda', { delay: 20 });
  await waitFor(page, `document.querySelector('#compose-topic').value === 'agenda'`);
  // Each keystroke moved the draft: none is left under "", "a", "ag", … (before, there were six).
  const kept = await page.evaluate(`(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith('confab.drafts.'));
    const list = JSON.parse(localStorage.getItem(key) ?? '[]');
    return list.filter((d) => d.content === 'Written before its topic').map((d) => d.to.topic);
  })()`);
  t.same(kept, ['agenda'], 'one draft, under the topic typed');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('drafts are the user’s own: the next user of the browser does not get them', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('plans') });
  await type(page, 'Private thoughts of Hamlet');
  await page.click('.me');
  await page.click('text=Log out');
  await page.waitForSelector('input[name="username"]');
  const othello = ts.fx.users.othello!;
  await page.fill('input[name="username"]', othello.email);
  await page.fill('input[name="password"]', othello.password);
  await page.click('button[type="submit"]');
  await waitLive(page);
  await page.evaluate(`location.hash = '${topicHash('plans')}'`);
  await waitFor(page, `document.querySelector('#compose-topic').value === 'plans'`);
  t.equal(await page.inputValue('#compose-text'), '', "Othello is not shown Hamlet's draft");
  const keys = await page.evaluate<string[]>(
    `Object.keys(localStorage).filter((k) => k.startsWith('confab.drafts.'))`,
  );
  t.same(
    keys,
    [`confab.drafts.${ts.fx.users.hamlet!.id}@${new URL(ts.url).host}`],
    "kept under Hamlet's id",
  );
  await page.click('.me');
  await page.click('text=Log out');
  await page.waitForSelector('input[name="username"]');
  const hamlet = ts.fx.users.hamlet!;
  await page.fill('input[name="username"]', hamlet.email);
  await page.fill('input[name="password"]', hamlet.password);
  await page.click('button[type="submit"]');
  await waitLive(page);
  await page.evaluate(`location.hash = '${topicHash('plans')}'`);
  await waitFor(
    page,
    `document.querySelector('#compose-text')?.value === 'Private thoughts of Hamlet'`,
  );
  t.pass('Hamlet has it back when he logs in again');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('autocomplete: topics, people and groups, channels, emoji', async (t) => {
  if (NO_CHROMIUM) return;
  const { othello, iago } = ts.fx.users;
  await ts.api.post('hamlet', 'user_groups/create', {
    name: 'designers',
    description: 'the design team',
    members: [othello!.id, iago!.id],
  });
  await sendChannelMessage(ts.api, 'othello', 'general', 'planning the offsite', 'Where to?');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general`,
  });
  const option = (text: string) =>
    page.waitForSelector(`[role="listbox"] [role="option"]:has-text("${text}")`);

  await page.click('#compose-topic');
  await page.keyboard.type('offs');
  await option('planning the offsite');
  await page.keyboard.press('Enter');
  // The topic field shows the suggestion once the box is drawn again.
  await waitFor(page, `document.querySelector('#compose-topic').value === 'planning the offsite'`);
  t.pass('a topic suggested');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);

  await page.keyboard.type('Hi @othe');
  await option('Othello');
  await screenshot(page, t, 'autocomplete-1280');
  await page.keyboard.press('Tab');
  await page.keyboard.type('and @desig');
  await option('designers');
  await page.keyboard.press('Enter');
  await page.keyboard.type('see #gene');
  await option('general');
  await page.keyboard.press('Enter');
  await page.keyboard.type(':tad');
  await option('tada');
  await page.keyboard.press('Enter');
  t.match(
    await page.inputValue('#compose-text'),
    /^Hi @\*\*Othello\*\* and @\*designers\* see #\*\*general\*\* :tada: ?$/,
    'each suggestion taken into the text',
  );
  await page.keyboard.press('Enter');
  await waitFor(
    page,
    `[...document.querySelectorAll('.msg:not(.local) .content')].some((e) =>
      e.querySelector('.user-mention') && e.querySelector('.user-group-mention') &&
      e.querySelector('a.stream') && e.querySelector('.emoji'))`,
  );
  t.pass('sent, and rendered by the server: a mention, a group mention, a channel, an emoji');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a reaction with a custom emoji from the picker', async (t) => {
  if (NO_CHROMIUM) return;
  const iago = ts.fx.users.iago!;
  const mp = multipartWithFile({ name: 'e.png', type: 'image/png', data: tinyPng() });
  const res = await rawRequest(ts.url, {
    method: 'POST',
    path: '/api/v1/realm/emoji/party_parrot',
    headers: { authorization: basicAuth(iago.email, iago.api_key), 'content-type': mp.contentType },
    body: mp.body,
  });
  t.equal(res.status, 200, 'the realm has a custom emoji');
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'parrots', 'Squawk');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: topicHash('parrots'),
  });
  await waitMessage(page, 'Squawk');
  const row = page.locator(`.msg[data-id="${id}"]`);
  await row.hover();
  await row.locator('button[aria-label="Add a reaction"]').first().click();
  await page.fill('input[aria-label="Search emoji"]', 'parrot');
  await page.waitForSelector('.picker-grid button[aria-label="party parrot"] img');
  await screenshot(page, t, 'emoji-picker-1280');
  await page.click('.picker-grid button[aria-label="party parrot"]');
  await waitFor(
    page,
    `document.querySelector('.msg[data-id="${id}"] .reaction[aria-pressed="true"] img') !== null`,
  );
  const m = await ts.api.get('othello', `messages/${id}`, {});
  t.match(
    (m.body.message as { reactions: unknown[] }).reactions,
    [{ emoji_name: 'party_parrot', reaction_type: 'realm_emoji' }],
    'reacted with the custom emoji',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('reactions both ways', async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'reactions', 'React to me');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: topicHash('reactions'),
  });
  await waitMessage(page, 'React to me');
  const row = page.locator(`.msg[data-id="${id}"]`);
  await row.hover();
  await row.locator('button[aria-label="Add a reaction"]').first().click();
  await page.fill('input[aria-label="Search emoji"]', 'tada');
  // Enter picks the first emoji shown, and none shows until the emoji list has loaded (the
  // server's emoji data, fetched when the picker first opens; on a loaded machine Enter came
  // first and picked nothing).
  await waitFor(
    page,
    `document.querySelector('.picker-grid [role="option"]')?.getAttribute('aria-label') === 'tada'`,
  );
  await page.keyboard.press('Enter');
  await waitFor(
    page,
    `document.querySelector('.msg[data-id="${id}"] .reaction[aria-pressed="true"]') !== null`,
  );
  const mine = await ts.api.get('othello', `messages/${id}`, {});
  const reactions = (mine.body.message as { reactions: { emoji_name: string; user_id: number }[] })
    .reactions;
  t.same(
    reactions.map((r) => [r.emoji_name, r.user_id]),
    [['tada', ts.fx.users.hamlet!.id]],
    'the server has it',
  );
  await ts.api.post('othello', `messages/${id}/reactions`, { emoji_name: 'heart' });
  await waitFor(
    page,
    `document.querySelectorAll('.msg[data-id="${id}"] .reaction[aria-label^="heart"]').length === 1`,
  );
  t.pass("another user's reaction arrives live");
  await page.click(`.msg[data-id="${id}"] .reaction[aria-label^="heart"]`);
  await waitFor(
    page,
    `document.querySelector('.msg[data-id="${id}"] .reaction[aria-label^="heart"]').textContent.includes('2')`,
  );
  t.pass('joined it: 2');
  await page.click(`.msg[data-id="${id}"] .reaction[aria-label^="tada"]`);
  await waitFor(
    page,
    `document.querySelector('.msg[data-id="${id}"] .reaction[aria-label^="tada"]') === null`,
  );
  t.pass('took mine back');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('topic suggestions for a channel other than the one shown, after a move', async (t) => {
  if (NO_CHROMIUM) return;
  const everyone = ['hamlet', 'othello', 'iago'].map((n) => ts.fx.users[n]!.id);
  const random = await createChannel(ts.api, 'iago', 'random', { principals: everyone });
  const id = await sendChannelMessage(ts.api, 'othello', 'random', 'old plans', 'Plans?');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${general}-general`,
  });
  const option = (text: string) => `#topic-options [role="option"]:has-text("${text}")`;
  await page.selectOption('select[aria-label="Channel"]', String(random));
  await page.click('#compose-topic');
  await page.keyboard.type('pla');
  await page.waitForSelector(option('old plans'));
  t.pass("the other channel's topic suggested");
  await page.keyboard.press('Escape');
  await page.focus('#compose-text');

  // Moved by iago to another topic; a message to the channel shown after it says it has come.
  await ts.api.patch('iago', `messages/${id}`, {
    topic: 'new plans',
    propagate_mode: 'change_all',
  });
  await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'After the move');
  await waitMessage(page, 'After the move');
  await page.fill('#compose-topic', '');
  await page.click('#compose-topic');
  await page.keyboard.type('pla');
  const shown = await page
    .waitForSelector(option('new plans'), { timeout: 10_000 })
    .then(() => true)
    .catch(() => false);
  t.ok(shown, 'the topic it has now suggested, with the same channel still picked');
  t.equal(await page.locator(option('old plans')).count(), 0, 'not the topic it had');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  'a topic moved while it is read: the view, the compose box and its draft follow',
  async (t) => {
    if (NO_CHROMIUM) return;
    const id = await sendChannelMessage(ts.api, 'othello', 'general', 'kickoff', 'Plan the week');
    const later = await sendChannelMessage(ts.api, 'othello', 'general', 'kickoff', 'Monday?');
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: topicHash('kickoff'),
    });
    await waitMessage(page, 'Monday?');
    await type(page, 'Half a reply');

    // The whole topic renamed by othello: the view goes where it went, without a back entry.
    await ts.api.patch('othello', `messages/${id}`, {
      topic: 'week plan',
      propagate_mode: 'change_all',
    });
    await waitFor(page, `location.hash.includes('/topic/week.20plan')`);
    await waitMessage(page, 'Monday?');
    t.same(
      (await messageTexts(page)).slice(0, 2),
      ['Plan the week', 'Monday?'],
      'the moved messages shown',
    );
    t.equal(await page.inputValue('#compose-topic'), 'week plan', 'the box follows the topic');
    t.equal(await page.inputValue('#compose-text'), 'Half a reply', 'what was typed stays');
    await page.keyboard.press('Enter');
    await waitMessage(page, 'Half a reply');
    // Shown as sent (not the local echo only, which the server may not have stored yet).
    await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
    t.same(
      (
        await contentsFor('othello', [
          { operator: 'channel', operand: general },
          { operator: 'topic', operand: 'week plan' },
        ])
      ).filter((c) => !c.startsWith('This topic was moved here')),
      ['Plan the week', 'Monday?', 'Half a reply'],
      'sent to the topic where it went',
    );
    t.same(
      await contentsFor('othello', [
        { operator: 'channel', operand: general },
        { operator: 'topic', operand: 'kickoff' },
      ]),
      [],
      'not to the old one',
    );

    // One message moved: the view stays, and so does the box.
    await ts.api.patch('othello', `messages/${later}`, {
      topic: 'mondays',
      propagate_mode: 'change_one',
    });
    await waitFor(page, `!document.querySelector('.msg[data-id="${later}"]')`);
    t.match(page.url(), /\/topic\/week\.20plan$/, 'one message moved: the view stays');
    t.equal(await page.inputValue('#compose-topic'), 'week plan', 'and so does the box');
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test(
  'Enter typed while the emoji list loads picks the first match once it is here',
  async (t) => {
    if (NO_CHROMIUM) return;
    const reg = await ts.api.post('hamlet', 'register', {});
    const dataPath = new URL(String(reg.body.server_emoji_data_url), ts.url).pathname;
    const id = await sendChannelMessage(ts.api, 'othello', 'general', 'reactions', 'React early');
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: topicHash('reactions'),
    });
    // The emoji data is held until the Enter is pressed (routing also turns the HTTP cache off).
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let asked = false;
    await page.route(
      (u) => u.pathname === dataPath,
      async (route) => {
        asked = true;
        await held;
        await route.continue();
      },
    );
    await waitMessage(page, 'React early');
    const row = page.locator(`.msg[data-id="${id}"]`);
    await row.hover();
    await row.locator('button[aria-label="Add a reaction"]').first().click();
    await page.fill('input[aria-label="Search emoji"]', 'tada');
    await waitFor(page, `document.querySelector('.picker-grid')?.textContent.includes('Loading')`);
    for (const limit = Date.now() + 30_000; !asked; await new Promise((r) => setTimeout(r, 20)))
      if (Date.now() > limit) throw new Error('the emoji list was never asked for');
    await page.keyboard.press('Enter');
    t.ok(await page.isVisible('.picker-grid'), 'the picker waits, showing "Loading…"');
    release();
    await waitFor(
      page,
      `document.querySelector('.msg[data-id="${id}"] .reaction[aria-pressed="true"]') !== null`,
    );
    t.match(
      await page.getAttribute(`.msg[data-id="${id}"] .reaction[aria-pressed="true"]`, 'aria-label'),
      /^tada/,
      'the first match was picked',
    );
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('Esc in the compose box goes to the message list, where the arrows select', async (t) => {
  if (NO_CHROMIUM) return;
  await sendChannelMessage(ts.api, 'othello', 'general', 'keys', 'First of the keys');
  await sendChannelMessage(ts.api, 'othello', 'general', 'keys', 'Second of the keys');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('keys') });
  await waitMessage(page, 'Second of the keys');
  await type(page, 'not sent');
  await page.keyboard.press('Escape');
  t.equal(
    await page.evaluate('document.activeElement?.classList.contains("messages")'),
    true,
    'the list has the focus',
  );
  await page.keyboard.press('ArrowUp');
  await waitFor(page, `document.querySelector('.msg.selected') !== null`);
  t.match(await page.textContent('.msg.selected .content'), /Second of the keys/, 'the last one');
  await page.keyboard.press('ArrowUp');
  await waitFor(
    page,
    `document.querySelector('.msg.selected .content')?.textContent.includes('First of the keys')`,
  );
  t.pass('and the one before');
  await page.keyboard.press('r');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.equal(await page.inputValue('#compose-text'), 'not sent', 'r: back to the reply, kept');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('edits and deletions, seen by both users', async (t) => {
  if (NO_CHROMIUM) return;
  const h = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('edits') });
  const o = await openApp(b, ts.url, ts.fx, 'othello', { hash: topicHash('edits') });
  await type(h.page, 'First draft of a thought');
  await h.page.keyboard.press('Enter');
  await waitMessage(o.page, 'First draft of a thought');
  await waitFor(h.page, `document.querySelectorAll('.msg.local').length === 0`);
  const row = h.page.locator('.msg', { hasText: 'First draft of a thought' });
  await row.hover();
  await row.locator('button[aria-label="Edit"]').click();
  const box = h.page.locator('.edit-box textarea');
  await waitFor(
    h.page,
    `document.querySelector('.edit-box textarea')?.value === 'First draft of a thought'`,
  );
  await box.fill('Second thought, better');
  await box.press('End');
  await box.press('Shift+Enter');
  await h.page.keyboard.type('PS');
  t.equal(await box.inputValue(), 'Second thought, better\nPS', 'Shift+Enter: a new line');
  // Enter saves, as in the compose box.
  await box.press('Enter');
  await waitMessage(o.page, 'Second thought, better');
  await waitFor(
    o.page,
    `[...document.querySelectorAll('.msg')].some((m) => m.textContent.includes('Second thought') && m.textContent.includes('(edited)'))`,
  );
  t.pass('the edit, marked edited, on the other side');
  await waitMessage(h.page, 'Second thought, better');
  const row2 = h.page.locator('.msg', { hasText: 'Second thought, better' });
  await row2.hover();
  await row2.locator('button[aria-label="Delete"]').click();
  // Asked in the app's dialog, its action marked as destructive.
  const question = h.page.getByRole('alertdialog', { name: 'Delete this message?' });
  await question.waitFor();
  const del = question.getByRole('button', { name: 'Delete' });
  t.match(await del.getAttribute('class'), /\bdestructive\b/, 'a destructive action');
  await screenshot(h.page, t, 'confirm-delete');
  await del.click();
  await waitFor(
    o.page,
    `![...document.querySelectorAll('.msg .content')].some((e) => e.textContent.includes('Second thought'))`,
  );
  await waitFor(
    h.page,
    `![...document.querySelectorAll('.msg .content')].some((e) => e.textContent.includes('Second thought'))`,
  );
  t.pass('the deletion, on both sides');
  // Othello cannot edit or delete Hamlet's messages: no such buttons.
  await sendChannelMessage(ts.api, 'hamlet', 'general', 'edits', 'Mine alone');
  await waitMessage(o.page, 'Mine alone');
  const theirs = o.page.locator('.msg', { hasText: 'Mine alone' });
  await theirs.hover();
  t.equal(
    await theirs.locator('button[aria-label="Delete"]').count(),
    0,
    "no deleting another's message",
  );
  // Members may move topics (the realm's default), not change another's words.
  await theirs.locator('button[aria-label="Edit"]').click();
  await o.page.waitForSelector('.edit-box input');
  t.equal(await o.page.locator('.edit-box textarea').count(), 0, "no editing another's content");
  await o.page.fill('.edit-box input', 'moved elsewhere');
  // The topic's only message: the move takes all of the topic by default (as the reference's).
  t.equal(await o.page.inputValue('.edit-box select'), 'change_all', 'all of the topic');
  await o.page.click('.edit-box button:has-text("Save")');
  // The whole topic went: the author's view of it follows it there.
  await waitFor(
    h.page,
    `document.querySelector('.topic-crumb')?.textContent === 'moved elsewhere'`,
  );
  await waitMessage(h.page, 'Mine alone');
  t.pass('a topic edit (a move) seen by the author: the view followed the topic, with it');
  h.watch.assertClean(t, /WebSocket|status of 401/);
  o.watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("editing and deleting one's messages within the realm's limits", async (t) => {
  if (NO_CHROMIUM) return;
  const r = await ts.api.patch('iago', 'realm', { message_content_delete_limit_seconds: 60 });
  t.equal(r.status, 200, 'deleting allowed for a minute; editing for ten (the default)');
  const everyone = ['hamlet', 'othello', 'iago', 'cordelia'].map((n) => ts.fx.users[n]!.id);
  seedChannelMessages(ts, {
    senderId: ts.fx.users.hamlet!.id,
    streamId: general,
    topic: 'limits',
    count: 1,
    recipients: everyone,
    flags: 1,
    dateSent: Math.floor(Date.now() / 1000) - 3600,
    text: () => 'An hour old',
  });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('limits') });
  await waitMessage(page, 'An hour old');
  const old = page.locator('.msg', { hasText: 'An hour old' });
  await old.hover();
  await old.locator('button[aria-label="Edit"]').waitFor();
  t.equal(await old.locator('button[aria-label="Delete"]').count(), 0, 'too old to delete');
  await old.locator('button[aria-label="Edit"]').click();
  await page.waitForSelector('.edit-box input');
  t.equal(
    await page.locator('.edit-box textarea').count(),
    0,
    'too old to edit its words; its topic may still change',
  );
  await page.keyboard.press('Escape');
  await type(page, 'Just now');
  await page.keyboard.press('Enter');
  await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
  const fresh = page.locator('.msg', { hasText: 'Just now' });
  await fresh.hover();
  await fresh.locator('button[aria-label="Edit"]').waitFor();
  t.equal(await fresh.locator('button[aria-label="Delete"]').count(), 1, 'a new one can go');
  await fresh.locator('button[aria-label="Edit"]').click();
  await page.waitForSelector('.edit-box textarea');
  t.pass('and be edited');
  await page.keyboard.press('Escape');
  await ts.api.patch('iago', 'realm', { message_content_delete_limit_seconds: null });
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("a move's default follows the message's place in its topic", async (t) => {
  if (NO_CHROMIUM) return;
  const ids: number[] = [];
  for (const text of ['Opening words', 'Middle words', 'Closing words'])
    ids.push(await sendChannelMessage(ts.api, 'hamlet', 'general', 'placement', text));
  await sendChannelMessage(ts.api, 'hamlet', 'general', 'elsewhere', 'Another topic after');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: topicHash('placement'),
  });
  await waitMessage(page, 'Closing words');
  /** The move's choice when editing the message that says `text`. */
  const modeFor = async (text: string) => {
    const row = page.locator('.msg', { hasText: text });
    await row.hover();
    await row.locator('button[aria-label="Edit"]').click();
    await page.waitForSelector('.edit-box select');
    // A view that does not tell asks the server: the choice may change once, at its answer.
    await page.waitForTimeout(300);
    const mode = await page.inputValue('.edit-box select');
    await page.keyboard.press('Escape');
    await waitFor(page, `document.querySelector('.edit-box') === null`);
    return mode;
  };
  // As the reference's web app: the first moves all, one between it and the later, the last
  // only itself.
  t.equal(await modeFor('Opening words'), 'change_all', 'the first message: all of the topic');
  t.equal(await modeFor('Middle words'), 'change_later', 'one between: it and the later');
  t.equal(await modeFor('Closing words'), 'change_one', 'the last: only it');
  // In the channel's view, by the message's topic (a later message of another topic after it).
  await page.evaluate(`location.hash = '#narrow/channel/${general}-general'`);
  await waitMessage(page, 'Another topic after');
  t.equal(await modeFor('Closing words'), 'change_one', "the channel's view: the topic's last");
  t.equal(await modeFor('Middle words'), 'change_later', "the channel's view: one between");
  // A search shows messages out of their topic: only the message, as the reference does. The
  // channel's view shows 'Opening words' too: the search is waited for by its title.
  await page.evaluate(`location.hash = '#narrow/search/words'`);
  await waitForTitle(page, 'Search: words');
  await waitMessage(page, 'Opening words');
  t.equal(await modeFor('Opening words'), 'change_one', 'a search: only the message');
  // Starred messages (some of a topic): the server tells where it is.
  await ts.api.post('hamlet', 'messages/flags', {
    messages: [ids[0]],
    op: 'add',
    flag: 'starred',
  });
  await page.evaluate(`location.hash = '#narrow/is/starred'`);
  await waitForTitle(page, 'Starred messages');
  await waitMessage(page, 'Opening words');
  t.equal(await modeFor('Opening words'), 'change_all', 'starred: the server says it is first');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('uploads: button, paste, drop, and a file too large', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('files') });
  await page.setInputFiles('.compose input[type="file"]', {
    name: 'notes.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('some notes'),
  });
  await waitFor(
    page,
    `/\\[notes\\.txt\\]\\(\\/user_uploads\\/[^)]+\\/notes\\.txt\\)/.test(document.querySelector('#compose-text').value)`,
  );
  t.pass('by the button: the link is in the message');
  await page.click('#compose-text');
  await page.keyboard.press('Control+End');
  await page.evaluate(`(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['pasted bytes'], 'pasted.txt', { type: 'text/plain' }));
    const e = new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true });
    document.querySelector('#compose-text').dispatchEvent(e);
  })()`);
  await waitFor(
    page,
    `document.querySelector('#compose-text').value.includes('[pasted.txt](/user_uploads/')`,
  );
  t.pass('by paste');
  await page.evaluate(`(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['dropped bytes'], 'dropped.txt', { type: 'text/plain' }));
    const target = document.querySelector('.messages');
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  })()`);
  await waitFor(
    page,
    `document.querySelector('#compose-text').value.includes('[dropped.txt](/user_uploads/')`,
  );
  t.pass('by dropping a file on the messages');
  await page.setInputFiles('.compose input[type="file"]', {
    name: 'huge.bin',
    mimeType: 'application/octet-stream',
    buffer: Buffer.alloc(1536 * 1024),
  });
  await page.waitForSelector('.upload.failed >> text=huge.bin');
  t.match(
    await page.textContent('.upload.failed'),
    /at most 1 MB/,
    'too large: said so, nothing sent',
  );
  t.notOk((await page.inputValue('#compose-text')).includes('huge.bin'), 'no link for it');
  await page.press('#compose-text', 'Enter');
  await waitFor(
    page,
    `[...document.querySelectorAll('.msg .content a')].some((a) => a.textContent === 'dropped.txt')`,
  );
  const href = await page.getAttribute('.msg .content a:has-text("notes.txt")', 'href');
  const status = await page.evaluate(`fetch(${JSON.stringify(href)}).then((r) => r.status)`);
  t.equal(status, 200, 'the uploaded file opens with the session');
  await screenshot(page, t, 'uploads-1280');
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});

t.test('typing notifications both ways', async (t) => {
  if (NO_CHROMIUM) return;
  const { hamlet, othello } = ts.fx.users;
  const reg = await ts.api.post('othello', 'register', { event_types: ['typing'] });
  const queue = reg.body.queue_id as string;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/dm/${othello!.id}-Othello`,
  });
  await type(page, 'I am typ');
  const ev = await ts.api.get('othello', 'events', { queue_id: queue, last_event_id: -1 });
  const typing = (
    ev.body.events as { type: string; op: string; sender: { user_id: number } }[]
  ).find((e) => e.type === 'typing');
  t.match(typing, { op: 'start', sender: { user_id: hamlet!.id } }, 'othello is told hamlet types');
  await ts.api.post('othello', 'typing', { op: 'start', type: 'direct', to: [hamlet!.id] });
  await page.waitForSelector('.typing >> text=Othello is typing…');
  t.pass('hamlet sees othello typing');
  await ts.api.post('othello', 'typing', { op: 'stop', type: 'direct', to: [hamlet!.id] });
  await waitFor(page, `document.querySelector('.typing').textContent === ''`);
  t.pass('and stop');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('desktop notifications for direct messages and mentions', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await b.newPage({ permissions: ['notifications'] });
  await page.addInitScript(`(() => {
    window.__notes = [];
    class Recorded { constructor(title, opts) { window.__notes.push({ title, body: opts && opts.body }); } close() {} }
    Recorded.permission = 'granted';
    Recorded.requestPermission = () => Promise.resolve('granted');
    window.Notification = Recorded;
  })()`);
  await page.goto(`${ts.url}/${topicHash('lunch')}`);
  await page.fill('input[name="username"]', ts.fx.users.cordelia!.email);
  await page.fill('input[name="password"]', ts.fx.users.cordelia!.password);
  await page.click('button[type="submit"]');
  await page.waitForSelector('.app[data-status="live"]');
  await sendDirectMessage(ts.api, 'othello', [ts.fx.users.cordelia!.id], 'Are you there?');
  await waitFor(page, `window.__notes.length === 1`);
  t.match(
    await page.evaluate('window.__notes[0]'),
    { title: /^Othello \(Direct message\)/, body: 'Are you there?' },
    'a direct message',
  );
  await sendChannelMessage(ts.api, 'iago', 'general', 'news', 'Plain news');
  await sendChannelMessage(ts.api, 'iago', 'general', 'news', 'Hey @**Cordelia**, look');
  await waitFor(page, `window.__notes.length === 2`);
  t.match(
    await page.evaluate('window.__notes[1]'),
    { title: /^Iago \(#general > news\)/, body: 'Hey @Cordelia, look' },
    'a mention; not the plain message',
  );
});

t.test(
  'mentioning someone not subscribed to the channel: a notice, and "Subscribe them"',
  async (t) => {
    if (NO_CHROMIUM) return;
    // The server notifies a channel's members only: a mention of anyone else reaches no one, which
    // the sender learns from the notice above the box (the reference's compose warning).
    const id = (who: string) => ts.fx.users[who]!.id;
    const studio = await createChannel(ts.api, 'hamlet', 'studio', {
      principals: [id('hamlet'), id('othello')],
    });
    const notice = '.compose-notice.not-subscribed';
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${studio}-studio/topic/plans`,
    });
    // A member, a silent mention and a mention in code: no notice.
    await page.click('#compose-text');
    await page.keyboard.type('@Othel');
    await page.waitForSelector('.compose [role="option"]');
    await page.keyboard.press('Enter');
    await page.keyboard.type('and @_**Cordelia** and `@**Cordelia**` ');
    // Then one who is not in it, chosen from the list.
    await page.keyboard.type('and @Cordel');
    await page.waitForSelector('.compose [role="option"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector(notice);
    t.equal(
      (await page.textContent(`${notice} p`))?.trim(),
      'Cordelia is not subscribed to #studio: the mention will not notify them.',
      'names the one not subscribed, and only them',
    );
    await screenshot(page, t, 'compose-not-subscribed-1280');
    await page.click(`${notice} button:has-text("Subscribe them")`);
    await page.waitForSelector(notice, { state: 'detached' });
    const members = await ts.api.get('hamlet', `streams/${studio}/members`);
    t.ok((members.body.subscribers as number[]).includes(id('cordelia')), 'Cordelia subscribed');

    // At 390 px: two people, the notice closed by its button, the box still holding the text.
    const narrow = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${studio}-studio/topic/plans`,
      width: 390,
      height: 844,
    });
    const p = narrow.page;
    await p.fill('#compose-text', 'Ask @**Iago** and @**Prospero**');
    await p.waitForSelector(notice);
    t.equal(
      (await p.textContent(`${notice} p`))?.trim(),
      'Iago and Prospero are not subscribed to #studio: the mention will not notify any of them.',
    );
    await screenshot(p, t, 'compose-not-subscribed-390');
    await p.click(`${notice} button[aria-label="Close"]`);
    await p.waitForSelector(notice, { state: 'detached' });
    t.equal(await p.inputValue('#compose-text'), 'Ask @**Iago** and @**Prospero**');
    await p.fill('#compose-text', '');
    await page.fill('#compose-text', '');
    watch.assertClean(t, /WebSocket|status of 401/);
    narrow.watch.assertClean(t, /WebSocket|status of 401/);
  },
);
