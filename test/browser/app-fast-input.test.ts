/**
 * The web app in chromium, used faster than it redraws: what is typed and the key that acts on it
 * come in one task (dispatched together in one `page.evaluate`, so that no drawing comes between
 * them, as happens on a loaded machine or while a redraw waits for the next frame). Each handler
 * acts on what the user typed until then, not on what the last drawing showed: the login form
 * (its first field focused as it is drawn), the compose box (Enter sends all that was typed; Enter
 * takes a suggestion that just appeared; focused as it is drawn after r, c or Reply, so that what
 * is typed at once goes into it, not to the message list's shortcuts),
 * Ctrl+K, the search box, the emoji picker, the edit box (focused as its text is drawn, as is
 * the compose box when its preview is hidden), and End in the message list after a send. And toggles (the theme, Channel/Direct, the preview) clicked twice in one task, and the
 * star, a reaction, Reply, a recipient bar and "Copy link" clicked after the server's change came,
 * before its drawing, act on the state as it is.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor, waitLive } from '../helpers/app.js';
import { NO_CHROMIUM, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { TestSmtp } from '../helpers/smtp.js';

let general: number;

const { b, ts, channels } = browserSuite(t, {
  server: true,
  channels: { general: { by: 'iago', members: ['hamlet', 'othello', 'iago'] } },
  seed,
});

async function seed(): Promise<void> {
  general = channels.general;
  await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'Lunch at noon?');
}

const topicHash = (topic: string) => `#narrow/channel/${general}-general/topic/${topic}`;

/** The channel's messages as sent (their Markdown), oldest first. */
async function sentContents(): Promise<string[]> {
  const r = await ts.api.get('othello', 'messages', {
    anchor: 'newest',
    num_before: 100,
    num_after: 0,
    narrow: [{ operator: 'channel', operand: general }],
    apply_markdown: false,
  });
  return (r.body.messages as { content: string }[]).map((m) => m.content);
}

/**
 * Page-side JavaScript (a string: the tests have no DOM types) defining `typeIn(selector, text)`:
 * sets a field's value and fires its input event, as typing does, with no drawing after it.
 */
const TYPE_IN = `const typeIn = (sel, text) => {
  const el = document.querySelector(sel);
  el.focus();
  el.value = text;
  el.dispatchEvent(new InputEvent('input', { bubbles: true, data: text, inputType: 'insertText' }));
  return el;
};
const key = (el, k, more = {}) =>
  el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true, ...more }));`;

/** Runs `body` (page-side JavaScript, with typeIn and key) in one task. */
function oneTask(page: Page, body: string): Promise<unknown> {
  return page.evaluate(`(() => { ${TYPE_IN}\n${body} })()`);
}

/** Until the app has drawn what was pending (a frame, and a task after it). */
const settle = (page: Page) =>
  page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))`);

const alertText = `[...document.querySelectorAll('[role="alert"]')].map((e) => e.textContent).join(' ')`;

t.test('the login form sent right after typing', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await b.newPage();
  const watch = await watchPage(page);
  await page.goto(ts.url + '/');
  await page.waitForSelector('input[name="username"]:focus');
  const user = ts.fx.users.hamlet!;
  await oneTask(
    page,
    `typeIn('input[name="username"]', ${JSON.stringify(user.email)});
    typeIn('input[name="password"]', ${JSON.stringify(user.password)});
    document.querySelector('form.login-card').requestSubmit();`,
  );
  await waitFor(page, `document.querySelector('.app') !== null || ${alertText} !== ''`);
  t.equal(await page.evaluate(alertText), '', 'no error');
  await waitLive(page);
  t.pass('logged in with what was typed');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the login form: its first field focused as it is drawn', async (t) => {
  if (NO_CHROMIUM) return;
  const page = await b.newPage();
  const watch = await watchPage(page);
  // Whether the e-mail field had the focus when the form was first seen in the document (a
  // mutation observer's callback: after the drawing's task, before any paint).
  await page.addInitScript(`window.focusedAsDrawn_ = null;
    new MutationObserver((_, obs) => {
      const el = document.querySelector('input[name="username"]');
      if (!el) return;
      window.focusedAsDrawn_ = document.activeElement === el;
      obs.disconnect();
    }).observe(document, { childList: true, subtree: true });`);
  await page.goto(ts.url + '/');
  await page.waitForSelector('input[name="username"]');
  t.equal(await page.evaluate('window.focusedAsDrawn_'), true, 'focused as it was drawn');
  // Typed as soon as the field is there: every key in it.
  await page.goto('about:blank');
  await page.goto(ts.url + '/');
  await page.waitForSelector('input[name="username"]');
  await page.keyboard.type('hamlet@', { delay: 0 });
  await settle(page);
  t.equal(await page.inputValue('input[name="username"]'), 'hamlet@', 'all typed in the field');
  watch.assertClean(t, /WebSocket|status of 401/);
  await page.close();
});

t.test('the compose box: Enter right after typing', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('fast') });
  await page.waitForSelector('#compose-text');
  await oneTask(page, `key(typeIn('#compose-text', 'Sent as typed'), 'Enter');`);
  await waitFor(
    page,
    `${alertText} !== '' || [...document.querySelectorAll('.msg .content')].some((e) => e.textContent === 'Sent as typed')`,
  );
  t.equal(await page.evaluate(alertText), '', 'no complaint of an empty message');
  await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
  t.equal((await sentContents()).at(-1), 'Sent as typed', 'the message sent is what was typed');
  t.equal(await page.inputValue('#compose-text'), '', 'the box is emptied');

  // End in the message list right after the send: the message just sent (its echo, kept while
  // the send is held) is the last one, though the list was not drawn since.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await page.route('**/json/messages', async (route) => {
    if (route.request().method() === 'POST') await gate;
    await route.continue();
  });
  await oneTask(
    page,
    `key(typeIn('#compose-text', 'The last one'), 'Enter');
    const list = document.querySelector('.messages');
    list.focus();
    key(list, 'End');`,
  );
  await waitFor(page, `document.querySelector('.msg.selected') !== null`);
  t.equal(
    (await page.textContent('.msg.selected .content'))?.trim(),
    'The last one',
    'End selects the message just sent',
  );
  release();
  await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
  await page.unroute('**/json/messages');

  // A suggestion that appeared with the last key typed is taken by Enter (not sent as typed).
  await page.fill('#compose-text', '');
  await page.click('#compose-text');
  await page.keyboard.type('@Othel');
  await page.waitForSelector('#compose-options [role="option"]');
  await page.fill('#compose-text', '');
  await waitFor(page, `document.querySelector('#compose-options') === null`);
  await oneTask(page, `key(typeIn('#compose-text', '@Othel'), 'Enter');`);
  await waitFor(page, `document.querySelector('#compose-text').value !== '@Othel'`);
  t.match(
    await page.inputValue('#compose-text'),
    /^@\*\*Othello[^*]*\*\* $/,
    'the mention suggested was taken',
  );
  t.equal(await page.evaluate(alertText), '', 'no complaint');
  t.equal((await sentContents()).at(-1), 'The last one', 'nothing sent');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('Ctrl+K and the search box: Enter right after typing', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('lunch') });
  await page.keyboard.press('Control+k');
  await page.waitForSelector('.jump input:focus');
  await oneTask(page, `key(typeIn('.jump input', 'genera'), 'Enter');`);
  await waitFor(page, `document.querySelector('.jump') === null`);
  t.match(
    await page.evaluate('location.hash'),
    new RegExp(`^#narrow/channel/${general}-general$`),
    'Ctrl+K: the channel typed, not the first of the list before typing',
  );
  await waitLive(page);

  const before = await page.evaluate('location.hash');
  await oneTask(
    page,
    `typeIn('#search', 'noon');
    document.querySelector('form.search').requestSubmit();`,
  );
  await waitFor(page, `location.hash !== ${JSON.stringify(before)}`);
  t.match(await page.evaluate('location.hash'), /search\/noon/, 'the search typed');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the emoji picker: Enter right after typing', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('emoji') });
  await page.click('button[aria-label="Insert an emoji"]');
  await page.waitForSelector('.picker-grid button');
  await oneTask(page, `key(typeIn('.picker input', 'tada'), 'Enter');`);
  await waitFor(page, `document.querySelector('.picker') === null`);
  t.equal(await page.inputValue('#compose-text'), ':tada: ', 'the emoji typed was inserted');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the emoji picker: typed into right after it opens', async (t) => {
  if (NO_CHROMIUM) return;
  await sendChannelMessage(ts.api, 'othello', 'general', 'react', 'React to me');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('react') });
  await page.waitForSelector('#compose-text');
  // Its field has the focus as it is drawn, in the task of the click (before any frame), from the
  // compose box's button and from a message's.
  const focusedAtOnce = (opener: string) =>
    page.evaluate(`(async () => {
      document.querySelector(${JSON.stringify(opener)}).click();
      await null;
      return document.activeElement === document.querySelector('.picker input');
    })()`);
  t.ok(await focusedAtOnce('button[aria-label="Insert an emoji"]'), 'compose: focused at once');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.picker') === null`);
  const row = page.locator('.msg', { hasText: 'React to me' });
  await row.click();
  await row.locator('.msg-actions').waitFor();
  t.ok(
    await focusedAtOnce('.msg.selected .msg-actions button[aria-label="Add a reaction"]'),
    'a message: focused at once',
  );
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.picker') === null`);

  // Typed with no wait after the click that opens it: every key lands in its field.
  await page.click('button[aria-label="Insert an emoji"]');
  await page.keyboard.type('tada', { delay: 0 });
  await waitFor(page, `document.querySelector('.picker input')?.value === 'tada'`, 5000);
  await waitFor(
    page,
    `document.querySelector('.picker-grid [role="option"]')?.getAttribute('aria-label') === 'tada'`,
  );
  await page.keyboard.press('Enter');
  await waitFor(page, `document.querySelector('.picker') === null`);
  t.equal(await page.inputValue('#compose-text'), ':tada: ', 'the emoji typed was inserted');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the compose box: typed into right after r, c or Reply', async (t) => {
  if (NO_CHROMIUM) return;
  await sendChannelMessage(ts.api, 'othello', 'general', 'quick', 'Answer me at once');
  // Unread elsewhere: an `n` that reached the message list would go there.
  await sendChannelMessage(ts.api, 'othello', 'general', 'elsewhere', 'Not yet read');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('quick') });
  await page.waitForSelector('#compose-text');
  const hash = await page.evaluate('location.hash');
  const toList = () => page.evaluate(`document.querySelector('.messages').focus()`);
  const focused = () => page.evaluate(`document.activeElement?.id ?? ''`);

  // `r` on the message list: the compose box has the focus in the key's task (drawn at once),
  // before any frame.
  await toList();
  t.equal(
    await page.evaluate(`(async () => {
      document.querySelector('.messages').dispatchEvent(
        new KeyboardEvent('keydown', { key: 'r', bubbles: true, cancelable: true }),
      );
      await null;
      return document.activeElement?.id;
    })()`),
    'compose-text',
    'r: focused at once',
  );

  // Typed with no wait after the key: every key in the box (n and c are shortcuts on the list).
  await page.fill('#compose-text', '');
  await toList();
  await page.keyboard.press('r');
  await page.keyboard.type('nice catch', { delay: 0 });
  await settle(page);
  t.equal(await page.inputValue('#compose-text'), 'nice catch', 'r: all typed in the box');
  t.equal(await focused(), 'compose-text', 'r: the box has the focus');
  await page.fill('#compose-text', '');

  // `c`: a new topic (the box readdressed, then its topic field focused).
  await toList();
  await page.keyboard.press('c');
  await page.keyboard.type('new plans', { delay: 0 });
  await settle(page);
  t.equal(await page.inputValue('#compose-topic'), 'new plans', 'c: all typed in the topic');
  t.equal(await focused(), 'compose-topic', 'c: the topic field has the focus');

  // Reply, clicked: the box goes back to the message's topic, and the keys typed go into it.
  await page.locator('.msg', { hasText: 'Answer me at once' }).locator('.content').click();
  await page.click('.msg.selected button[aria-label="Reply"]');
  await page.keyboard.type('on my way', { delay: 0 });
  await settle(page);
  t.equal(await page.inputValue('#compose-topic'), 'quick', 'Reply: to the topic');
  t.equal(await page.inputValue('#compose-text'), 'on my way', 'Reply: all typed in the box');
  t.equal(await page.evaluate('location.hash'), hash, 'no shortcut acted: the view is the same');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the edit box: Ctrl+Enter right after typing', async (t) => {
  if (NO_CHROMIUM) return;
  await sendChannelMessage(ts.api, 'hamlet', 'general', 'edit', 'Before the edit');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('edit') });
  const row = page.locator('.msg', { hasText: 'Before the edit' });
  await row.hover();
  await row.locator('button[aria-label="Edit"]').click();
  await waitFor(page, `document.querySelector('.edit-box textarea')?.value === 'Before the edit'`);
  await oneTask(
    page,
    `key(typeIn('.edit-box textarea', 'After the edit'), 'Enter', { ctrlKey: true });`,
  );
  await waitFor(page, `document.querySelector('.edit-box') === null`);
  const contents = await sentContents();
  t.ok(contents.includes('After the edit'), 'the edit saved is what was typed');
  t.notOk(contents.includes('Before the edit'), 'the old text is gone');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the edit box: Ctrl+Enter twice saves once', async (t) => {
  if (NO_CHROMIUM) return;
  await sendChannelMessage(ts.api, 'hamlet', 'general', 'misfiled', 'Move me');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: topicHash('misfiled'),
  });
  // The edits sent, and those answered (and read by the page).
  const edits = { sent: 0, answered: 0 };
  const isEdit = (r: { method(): string; url(): string }) =>
    r.method() === 'PATCH' && /^\/json\/messages\/\d+$/.test(new URL(r.url()).pathname);
  page.on('request', (r) => isEdit(r) && edits.sent++);
  page.on('requestfinished', (r) => isEdit(r) && edits.answered++);
  const row = page.locator('.msg', { hasText: 'Move me' });
  await row.hover();
  await row.locator('button[aria-label="Edit"]').click();
  await waitFor(page, `document.querySelector('.edit-box textarea')?.value === 'Move me'`);
  // The topic changed; two presses before the first save is answered (one task here; a user's
  // two quick presses do the same, the key has no disabled state).
  await oneTask(
    page,
    `const box = typeIn('.edit-box input', 'filed');
    key(box, 'Enter', { ctrlKey: true });
    key(box, 'Enter', { ctrlKey: true });`,
  );
  await waitFor(page, `document.querySelector('.edit-box') === null`);
  for (const limit = Date.now() + 30_000; edits.answered < edits.sent;) {
    if (Date.now() > limit) throw new Error('an edit was never answered');
    await new Promise((r) => setTimeout(r, 20));
  }
  // A frame for what the answers drew (a toast).
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))`);
  t.equal(edits.sent, 1, 'one edit sent');
  t.equal(await page.evaluate(alertText), '', 'no error ("Nothing to change")');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('the edit box and the preview: focused as they are drawn', async (t) => {
  if (NO_CHROMIUM) return;
  const sent = await sendChannelMessage(ts.api, 'hamlet', 'general', 'drawn', 'Edit me at once');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('drawn') });
  // The message's Markdown (asked for when the edit begins) held until the page watches.
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  await page.route(`**/json/messages/${sent}?*`, async (route) => {
    await held;
    await route.continue();
  });
  const row = page.locator('.msg', { hasText: 'Edit me at once' });
  await row.hover();
  await row.locator('button[aria-label="Edit"]').click();
  await page.waitForSelector('.edit-box textarea');
  // In the microtask after the drawing that shows the text (a MutationObserver's), before any
  // frame: the box has the focus, so keys typed at once go into it (not to the list's `n`).
  const focused = page.evaluate(`new Promise((resolve) => {
    const area = document.querySelector('.edit-box textarea');
    new MutationObserver((_, o) => {
      if (area.disabled) return;
      o.disconnect();
      resolve(document.activeElement === area);
    }).observe(area, { attributes: true });
  })`);
  release();
  t.equal(await focused, true, 'the edit box focused as its text is drawn');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.edit-box', { state: 'detached' });

  // The preview hidden again (its button clicked): the box has the focus in the click's task.
  await page.click('#compose-text');
  await page.keyboard.type('A **preview**');
  await page.click('button[aria-label="Preview"]');
  await page.waitForSelector('button[aria-label="Preview"][aria-pressed="true"]');
  t.equal(
    await page.evaluate(`(async () => {
      document.querySelector('button[aria-label="Preview"]').click();
      await null;
      await null;
      return document.activeElement?.id;
    })()`),
    'compose-text',
    'the preview hidden: the box focused at once',
  );
  t.equal(await page.inputValue('#compose-text'), 'A **preview**', 'with its text');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('settings: the API key and a new bot, sent right after typing', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  const hamlet = ts.fx.users.hamlet!;
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.waitForSelector('.settings h3:has-text("Account")');
  await page.click('button:has-text("Show my API key")');
  await page.waitForSelector('input[aria-label="Your password"]');
  await oneTask(
    page,
    `typeIn('input[aria-label="Your password"]', ${JSON.stringify(hamlet.password)}).form.requestSubmit();`,
  );
  const own = 'input[aria-label="Your API key"]';
  await waitFor(page, `document.querySelector('${own}') !== null || ${alertText} !== ''`);
  t.equal(await page.evaluate(alertText), '', 'no complaint of the password');
  t.equal(await page.inputValue(own), hamlet.api_key, 'the key, for the password typed');

  await page.click('.settings nav a:has-text("Bots")');
  await page.waitForSelector('.settings h3:has-text("Bots")');
  await page.waitForSelector('text=No bots yet.');
  await oneTask(
    page,
    `typeIn('input[placeholder="Deploy notices"]', 'Quick bot');
    typeIn('input[placeholder="deploys"]', 'quick').form.requestSubmit();`,
  );
  const key = 'input[aria-label="API key"]';
  await waitFor(page, `document.querySelector('${key}') !== null || ${alertText} !== ''`);
  t.equal(await page.evaluate(alertText), '', 'no complaint of the fields');
  const bots = (await ts.api.get('hamlet', 'bots')).body.bots as { full_name: string }[];
  t.same(
    bots.map((x) => x.full_name),
    ['Quick bot'],
    'the bot made with the name typed',
  );
  // The wrong fields' answer (400), if any, is logged by the browser: none expected.
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('settings: invitations sent right after choosing and typing', async (t) => {
  if (NO_CHROMIUM) return;
  // A server that sends mail: the panel then has the e-mail form too.
  const smtp = await TestSmtp.start(t);
  const mailing = await startServer(t, { smtpUrl: smtp.url });
  const { page, watch } = await openApp(b, mailing.url, mailing.fx, 'iago');
  await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.click('.settings nav a:has-text("Invite people")');
  await page.waitForSelector('.settings h3:has-text("Invite people")');
  await page.waitForSelector('input[placeholder*="ada@example.com"]');
  type Invite = { email?: string; invited_as: number; expiry_date: number | null };
  const invites = async () => (await mailing.api.get('iago', 'invites')).body.invites as Invite[];
  /** Page-side: chooses `value` in the select whose label says `label`. */
  const choose = `const choose = (label, value) => {
    const sel = [...document.querySelectorAll('.settings label')]
      .find((l) => l.textContent.includes(label)).querySelector('select');
    sel.value = value;
    sel.dispatchEvent(new Event('change', { bubbles: true }));
  };`;

  // The role and the address chosen, and the form sent, in one task.
  await oneTask(
    page,
    `${choose}
    choose('Join as', '300');
    typeIn('input[placeholder*="ada@example.com"]', 'grace@example.com').form.requestSubmit();`,
  );
  await waitFor(
    page,
    `document.querySelector('.settings [role="status"]') !== null || document.querySelector('.toast.error') !== null`,
  );
  t.match(
    await page.evaluate(`document.querySelector('.settings [role="status"]')?.textContent ?? ''`),
    /grace@example\.com/,
    'sent to the address typed',
  );
  t.match(
    (await invites()).filter((i) => i.email !== undefined),
    [{ email: 'grace@example.com', invited_as: 300 }],
    'the invitation, for the address typed, as the role chosen',
  );

  // The role and the validity chosen, and the link asked for, in one task.
  await oneTask(
    page,
    `${choose}
    choose('Join as', '200');
    choose('Valid for', 'never');
    [...document.querySelectorAll('.settings button')]
      .find((b) => b.textContent.includes('Create an invitation link')).click();`,
  );
  await page.waitForSelector('input[aria-label="Invitation link"]');
  t.match(
    (await invites()).filter((i) => i.email === undefined),
    [{ invited_as: 200, expiry_date: null }],
    'the link, as the role and for the time chosen',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('a preview answered after the box moved on is not shown', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash('first') });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let asked = false;
  await page.route('**/json/messages/render', async (route) => {
    asked = true;
    await gate;
    await route.continue();
  });
  await page.click('#compose-text');
  await page.keyboard.type('A draft for the first topic');
  // A mark set a task after the page has read the preview's answer: by then the app has done
  // with it (what follows the read is microtasks), and any drawing it asked for is waiting.
  await page.evaluate(`(() => {
    const text = Response.prototype.text;
    Response.prototype.text = function () {
      const body = text.call(this);
      if (this.url.endsWith('/json/messages/render'))
        body.then(() => setTimeout(() => (window.__previewRead = true), 0));
      return body;
    };
  })()`);
  await page.click('button[aria-label="Preview"]');
  for (const limit = Date.now() + 30_000; !asked; await new Promise((r) => setTimeout(r, 20)))
    if (Date.now() > limit) throw new Error('the preview was never asked for');
  // The user goes to another topic before the preview comes.
  await page.evaluate(`location.hash = ${JSON.stringify(topicHash('second'))}`);
  await waitFor(page, `document.querySelector('#compose-topic')?.value === 'second'`);
  release();
  await waitFor(page, `window.__previewRead === true`);
  // A frame for the drawing the answer may have asked for.
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))`);
  t.equal(await page.locator('.preview').count(), 0, "no preview of the first topic's draft");
  t.equal(await page.inputValue('#compose-text'), '', "the second topic's box, empty");
  await page.unroute('**/json/messages/render');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("the sidebar's theme button clicked twice before a drawing", async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'othello', { hash: topicHash('twice') });
  // Dark, then light again (the page's theme right after the two clicks).
  t.equal(await page.evaluate('document.documentElement.dataset.theme'), 'light', 'light first');
  let saves = 0;
  const bothSaved = new Promise<void>((resolve) =>
    page.on('response', (r) => {
      if (r.request().method() === 'PATCH' && new URL(r.url()).pathname === '/json/settings')
        if (++saves === 2) resolve();
    }),
  );
  const toggle = `document.querySelector('.sidebar-foot button[aria-label^="Use the"]')`;
  t.equal(
    await oneTask(
      page,
      `${toggle}.click();
      ${toggle}.click();
      return document.documentElement.dataset.theme;`,
    ),
    'light',
    'the theme: dark and back',
  );
  await bothSaved;
  await waitFor(
    page,
    `document.documentElement.dataset.theme === 'light' && ${toggle}.getAttribute('aria-label') === 'Use the dark theme'`,
  );
  t.pass('light when the server has both');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('Channel and Direct, and the preview, clicked twice before a drawing', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'othello', { hash: topicHash('twice') });
  await page.waitForSelector('#compose-text');
  // The compose box's Channel and Direct: a direct message, then a channel again.
  await oneTask(
    page,
    `const [channel, direct] = document.querySelectorAll('.to-kind button');
    direct.click();
    channel.click();`,
  );
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => r()))`);
  t.equal(
    await page.textContent('.to-kind button[aria-pressed="true"]'),
    'Channel',
    'Direct then Channel: to a channel',
  );
  t.equal(await page.locator('.to-channel').count(), 1, 'the channel menu shows');

  // The preview: shown, then hidden and shown again (asked for again).
  await page.click('#compose-text');
  await page.keyboard.type('Look **twice**');
  await page.click('button[aria-label="Preview"]');
  await page.waitForSelector('.preview strong');
  const again = page
    .waitForResponse((r) => new URL(r.url()).pathname === '/json/messages/render', {
      timeout: 10_000,
    })
    .then(
      () => true,
      () => false,
    );
  await oneTask(
    page,
    `const preview = document.querySelector('button[aria-label="Preview"]');
    preview.click();
    preview.click();`,
  );
  t.ok(await again, 'the preview asked for again');
  if (await again) await page.waitForSelector('.preview strong');
  t.equal(
    await page.getAttribute('button[aria-label="Preview"]', 'aria-pressed'),
    'true',
    'the preview shows',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});

/**
 * Page-side JavaScript run before the app: `window.afterSocketMessage(fn)` calls `fn(data)` right
 * after the app has handled each frame of its event socket (its state changed, its drawing still
 * waiting for the next frame), in the same task, until `fn` returns true.
 */
const AFTER_SOCKET_MESSAGE = `(() => {
  const Native = window.WebSocket;
  let after = null;
  window.afterSocketMessage = (fn) => (after = fn);
  window.WebSocket = class extends Native {
    set onmessage(fn) {
      super.onmessage = fn && ((e) => {
        fn(e);
        if (after && after(String(e.data))) after = null;
      });
    }
    get onmessage() {
      return super.onmessage;
    }
  };
})()`;

/** Page-side: when the next socket frame naming `what` has been handled, clicks `selector`. */
const clickAfter = (what: string, selector: string) => `window.afterSocketMessage((data) => {
  if (!data.includes(${JSON.stringify(what)})) return false;
  document.querySelector(${JSON.stringify(selector)}).click();
  return true;
})`;

t.test("the star clicked after the server's change, before its drawing", async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'stale', 'Star me');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: topicHash('stale'),
    init: AFTER_SOCKET_MESSAGE,
  });
  const row = `.msg[data-id="${id}"]`;
  await page.click(`${row} .content`);
  await page.waitForSelector(`${row} button[aria-label="Star"]`);
  // Starred elsewhere (another tab): the star is clicked as that event is handled, before the
  // row is drawn again: it unstars.
  await page.evaluate(clickAfter('update_message_flags', `${row} .msg-actions [aria-pressed]`));
  const clicked = page.waitForResponse((r) => new URL(r.url()).pathname === '/json/messages/flags');
  await ts.api.post('hamlet', 'messages/flags', {
    messages: JSON.stringify([id]),
    op: 'add',
    flag: 'starred',
  });
  t.equal((await clicked).status(), 200, 'the click answered');
  const r = await ts.api.get('hamlet', `messages/${id}`, {});
  const flags = (r.body.message as { flags?: string[] }).flags ?? (r.body.flags as string[]);
  t.notOk(flags.includes('starred'), 'the click took the star away');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test("a reaction clicked after the server's change, before its drawing", async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'stale', 'React to me');
  await ts.api.post('othello', `messages/${id}/reactions`, { emoji_name: 'octopus' });
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: topicHash('stale'),
    init: AFTER_SOCKET_MESSAGE,
  });
  const row = `.msg[data-id="${id}"]`;
  await page.waitForSelector(`${row} .reaction[aria-pressed]`);
  // Hamlet's octopus added elsewhere: the chip is clicked as that event is handled: it takes
  // his away again (not "Reaction already exists.").
  await page.evaluate(clickAfter('"reaction"', `${row} .reaction[aria-pressed]`));
  const clicked = page.waitForResponse(
    (r) => new URL(r.url()).pathname === `/json/messages/${id}/reactions`,
  );
  await ts.api.post('hamlet', `messages/${id}/reactions`, { emoji_name: 'octopus' });
  const answer = await clicked;
  t.equal(answer.request().method(), 'DELETE', 'the click removes the reaction');
  t.equal(answer.status(), 200, 'and it is removed');
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => r()))`);
  t.equal(await page.evaluate(alertText), '', 'no error');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('Reply clicked after the server moved the message, before its drawing', async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'misplaced', 'Answer me');
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/' + general + '-general',
    init: AFTER_SOCKET_MESSAGE,
  });
  const row = `.msg[data-id="${id}"]`;
  await page.click(`${row} .content`);
  await page.waitForSelector(`${row} button[aria-label="Reply"]`);
  // Moved to another topic by its sender: Reply is clicked as that event is handled, before
  // the row is drawn again: the reply goes to where the message is now.
  await page.evaluate(clickAfter('"update_message"', `${row} button[aria-label="Reply"]`));
  await ts.api.patch('othello', `messages/${id}`, {
    topic: 'placed',
    propagate_mode: 'change_one',
  });
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))`);
  await waitFor(page, `document.querySelector('#compose-topic')?.value !== ''`);
  t.equal(await page.inputValue('#compose-topic'), 'placed', 'the reply goes to the new topic');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test(
  'a recipient bar clicked after the server moved its message, before its drawing',
  async (t) => {
    if (NO_CHROMIUM) return;
    const id = await sendChannelMessage(ts.api, 'othello', 'general', 'wandering', 'Follow me');
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#narrow/channel/' + general + '-general',
      init: AFTER_SOCKET_MESSAGE,
    });
    await page.waitForSelector(`.msg[data-id="${id}"]`);
    // Moved by its sender: the bar (not its links) is clicked as that event is handled, before
    // the list is drawn again: it opens the topic the message is in now.
    await page.evaluate(`window.afterSocketMessage((data) => {
    if (!data.includes('"update_message"')) return false;
    [...document.querySelectorAll('.recipient')]
      .find((b) => b.querySelector('.topic-name')?.textContent === 'wandering')
      .querySelector('.when')
      .click();
    return true;
  })`);
    const before = await page.evaluate('location.hash');
    await ts.api.patch('othello', `messages/${id}`, {
      topic: 'settled',
      propagate_mode: 'change_one',
    });
    await waitFor(page, `location.hash !== ${JSON.stringify(before)}`);
    t.match(await page.evaluate('location.hash'), /\/topic\/settled$/, 'the topic it is in now');
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('"Try again" clicked twice before a drawing sends once', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'othello', { hash: topicHash('retry') });
  let refuse = true;
  let sends = 0;
  await page.route('**/json/messages', async (route) => {
    if (route.request().method() === 'POST' && !refuse) sends++;
    if (route.request().method() === 'POST' && refuse)
      await route.fulfill({
        status: 400,
        contentType: 'application/json',
        body: JSON.stringify({ result: 'error', msg: 'Not now', code: 'BAD_REQUEST' }),
      });
    else await route.continue();
  });
  await page.click('#compose-text');
  await page.keyboard.type('Sent once');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.send-state.failed');
  refuse = false;
  await oneTask(
    page,
    `const again = [...document.querySelectorAll('.send-state.failed button')].find(
      (b) => b.textContent === 'Try again',
    );
    again.click();
    again.click();`,
  );
  await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
  // Both sends (had there been two) answered and their events drawn.
  await waitFor(
    page,
    `[...document.querySelectorAll('.msg .content')].some((e) => e.textContent === 'Sent once')`,
  );
  await page.unroute('**/json/messages');
  const sent = await sendChannelMessage(ts.api, 'othello', 'general', 'retry', 'After it');
  await waitFor(page, `document.querySelector('.msg[data-id="${sent}"]') !== null`);
  // The server would take a second send with the same queue and local ids as the first (a
  // retry after a doubtful failure), but not one without a queue (while reconnecting).
  t.equal(sends, 1, 'sent once');
  t.equal((await sentContents()).filter((c) => c === 'Sent once').length, 1, 'stored once');
  t.equal(
    await page.evaluate(
      `[...document.querySelectorAll('.msg .content')].filter((e) => e.textContent === 'Sent once').length`,
    ),
    1,
    'shown once',
  );
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});

t.test('"Copy link" clicked after the server moved the message, before its drawing', async (t) => {
  if (NO_CHROMIUM) return;
  const id = await sendChannelMessage(ts.api, 'othello', 'general', 'astray', 'Link to me');
  // What the app writes to the clipboard, kept by the page (no clipboard permission needed).
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
    hash: '#narrow/channel/' + general + '-general',
    init: `${AFTER_SOCKET_MESSAGE};
    window.copied = [];
    navigator.clipboard.writeText = (text) => (window.copied.push(text), Promise.resolve());`,
  });
  const row = `.msg[data-id="${id}"]`;
  const button = `${row} button[aria-label="Copy a link to this message"]`;
  await page.click(`${row} .content`);
  await page.waitForSelector(button);
  // Moved to another topic by its sender: the link is copied as that event is handled, before
  // the row is drawn again: it names the topic the message is in now.
  await page.evaluate(clickAfter('"update_message"', button));
  await ts.api.patch('othello', `messages/${id}`, {
    topic: 'found',
    propagate_mode: 'change_one',
  });
  await waitFor(page, 'window.copied.length > 0');
  const copied = await page.evaluate<string[]>('window.copied');
  t.equal(copied.length, 1, 'one link copied');
  t.equal(
    copied[0],
    `${ts.url}/#narrow/channel/${general}-general/topic/found/near/${id}`,
    'the link names the topic the message is in now',
  );
  watch.assertClean(t, /WebSocket|status of 401/);
});
