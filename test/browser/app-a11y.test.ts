/**
 * The web app in chromium, checked by axe-core (the devDependency's axe.min.js): the login page,
 * the feed, "Skip to messages", a topic (its visibility menu open), the compose box and its suggestions, a direct message, a
 * message's actions (toolbar and menu), the emoji picker, a profile card (with a status), a
 * group's card, the status dialog, Jump to, a question (Delete), Create channel (its people's
 * suggestions open), a channel's settings, Settings (Account, Display, Notifications, Invite
 * people, Users with its confirmation and a card over it, Profile, Custom profile fields with
 * its form; Organization as a member reads it and as an administrator edits it, Custom
 * emoji; User groups: the list, a new group's form, a group's members and controls), a card's
 * custom profile fields (the full profile), the people (a column at 1280, filtered; a section of
 * the drawer at 390), Recent conversations and the Inbox (a row focused), at 1280 pixels and at
 * 390 (drawer closed and open), light and dark. No violation of impact serious or critical;
 * each one found is listed with its rule and target (test/helpers/a11y.ts).
 *
 * Each state is checked in both themes on the same page, the system's scheme switched between
 * the two (the app follows it as it changes: web/app/theme.ts), rather than reached twice from a
 * login; each page's watch tells what came in each theme apart.
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { check } from '../helpers/a11y.js';
import { openApp, waitDrawerOpen, waitFor, waitMessage, type AppPage } from '../helpers/app.js';
import { NO_CHROMIUM, watchPage, type PageWatch } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { systemGroupId } from '../helpers/channels.js';
import { tinyPng } from '../helpers/images.js';
import { addEmoji } from '../helpers/uploads.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { TestSmtp } from '../helpers/smtp.js';

const EVERYONE = ['hamlet', 'othello', 'iago'];

let general: number;

const { b, ts, channels } = browserSuite(t, {
  server: true,
  channels: {
    general: { by: 'othello', members: EVERYONE },
    design: { by: 'iago', members: EVERYONE },
  },
  seed,
});

async function seed(): Promise<void> {
  general = channels.general;
  const everyone = EVERYONE.map((n) => ts.fx.users[n]!.id);
  const group = await ts.api.post('iago', 'user_groups/create', {
    name: 'reviewers',
    description: 'Those who read it first',
    members: everyone,
  });
  if (group.status !== 200) throw new Error(`the group: ${group.text}`);
  const texts: [string, string, string][] = [
    ['othello', 'review', 'Where shall we meet for the **review** this week?'],
    ['hamlet', 'review', 'In the small room, see [the plan](https://example.com/plan).'],
    ['iago', 'review', 'A list:\n- one\n- two\n\n`code` and\n```\nblock()\n```'],
    ['othello', 'review', '> quoted words\n\nand :thumbs_up:'],
    ['iago', 'review', 'For @*reviewers*, and @**Othello** first.'],
    ['iago', 'colours', 'Which blue for the buttons?'],
  ];
  for (const [who, topic, text] of texts) {
    const id = await sendChannelMessage(ts.api, who, 'general', topic, text);
    if (topic === 'review' && who === 'othello')
      await ts.api.post('hamlet', `messages/${id}/reactions`, { emoji_name: 'thumbs_up' });
  }
  // A poll with a vote, and a to-do list with a task struck (web/app/widgets.tsx).
  const poll = await sendChannelMessage(
    ts.api,
    'othello',
    'general',
    'plans',
    '/poll When?\nMonday\nFriday',
  );
  const todo = await sendChannelMessage(
    ts.api,
    'othello',
    'general',
    'plans',
    '/todo Trip\nTickets: by Friday\nHotel',
  );
  for (const [id, content] of [
    [poll, { type: 'vote', key: 'canned,1', vote: 1 }],
    [todo, { type: 'strike', key: '0,canned' }],
  ] as const) {
    const res = await ts.api.post('hamlet', 'submessage', {
      message_id: id,
      msg_type: 'widget',
      content: JSON.stringify(content),
    });
    if (res.status !== 200) throw new Error(`the widget event: ${res.text}`);
  }
  await sendChannelMessage(ts.api, 'iago', 'design', 'logo', 'A new logo, round.');
  // The people's dots in all three kinds: Othello active, Iago idle, the others offline.
  await ts.api.post('othello', 'users/me/presence', { status: 'active' });
  await ts.api.post('iago', 'users/me/presence', { status: 'idle' });
  // A status (its emoji after Othello's name: the people, his messages, his card).
  const status = await ts.api.post('othello', 'users/me/status', {
    status_text: 'In a meeting',
    emoji_name: 'calendar',
  });
  if (status.status !== 200) throw new Error(`othello's status: ${status.text}`);
  // A custom emoji (the Custom emoji panel's list), and a permission that is no single role.
  const emoji = await addEmoji(ts.api, 'hamlet', 'party_parrot', {
    filename: 'parrot.png',
    data: tinyPng(),
    contentType: 'image/png',
  });
  if (emoji.status !== 200) throw new Error(`the emoji: ${emoji.text}`);
  const composed = await ts.api.patch('iago', 'realm', {
    can_move_messages_between_channels_group: JSON.stringify({
      new: {
        direct_members: [ts.fx.users['hamlet']!.id],
        direct_subgroups: [systemGroupId(ts, 'role:moderators')],
      },
    }),
  });
  if (composed.status !== 200) throw new Error(`the composed setting: ${composed.text}`);
}

/** Custom profile fields (once), and Othello's values for them. */
async function profileFields(): Promise<void> {
  const have = await ts.api.get('iago', 'realm/profile_fields');
  if ((have.body.custom_fields as unknown[]).length > 0) return;
  const add = async (params: Record<string, unknown>): Promise<number> => {
    const r = await ts.api.post('iago', 'realm/profile_fields', params);
    if (r.status !== 200) throw new Error(`a profile field: ${r.text}`);
    return r.body.id as number;
  };
  const team = await add({ name: 'Team', field_type: 1, display_in_profile_summary: true });
  const editor = await add({
    name: 'Editor',
    field_type: 3,
    required: true,
    field_data: JSON.stringify({
      0: { text: 'Vim', order: '1' },
      1: { text: 'Emacs', order: '2' },
    }),
  });
  const site = await add({ name: 'Website', field_type: 5, hint: 'Your own pages' });
  const manager = await add({ name: 'Manager', field_type: 6 });
  const bio = await add({ name: 'Bio', field_type: 2 });
  const pronouns = await add({ name: 'Pronouns', field_type: 8 });
  const r = await ts.api.patch('othello', 'users/me/profile_data', {
    data: JSON.stringify([
      { id: team, value: 'Design' },
      { id: editor, value: '1' },
      { id: site, value: 'https://example.com/othello' },
      { id: manager, value: [ts.fx.users['iago']!.id] },
      { id: bio, value: 'Reads *everything* twice.' },
      { id: pronouns, value: 'he/him' },
    ]),
  });
  if (r.status !== 200) throw new Error(`othello's values: ${r.text}`);
}

const topicHash = () => `#narrow/channel/${general}-general/topic/review`;

type Scheme = 'light' | 'dark';
const FINDINGS = ['consoleErrors', 'pageErrors', 'cspViolations', 'basicChallenges'] as const;
type Findings = Record<(typeof FINDINGS)[number], string[]>;
const none = (): Findings => ({
  consoleErrors: [],
  pageErrors: [],
  cspViolations: [],
  basicChallenges: [],
});

/** Each page's scheme now, and what its watch found so far in each scheme. */
const shown = new Map<
  Page,
  { scheme: Scheme; watch: PageWatch; found: Record<Scheme, Findings> }
>();

/** A page opened in the light scheme (the default), to be checked in both. */
function track(app: AppPage): AppPage {
  shown.set(app.page, {
    scheme: 'light',
    watch: app.watch,
    found: { light: none(), dark: none() },
  });
  return app;
}

/** Moves what the page's watch found so far to the scheme it showed meanwhile. */
function sortFindings(page: Page) {
  const s = shown.get(page)!;
  for (const k of FINDINGS) s.found[s.scheme][k].push(...s.watch[k].splice(0));
  return s;
}

/** The page in this scheme, as a system switched to it would have it. */
async function showScheme(page: Page, scheme: Scheme): Promise<void> {
  const s = sortFindings(page);
  if (s.scheme === scheme) return;
  s.scheme = scheme;
  await page.emulateMedia({ colorScheme: scheme });
  await waitFor(page, `document.documentElement.dataset.theme === '${scheme}'`);
}

/** The state checked (axe, a screenshot) in both schemes: `<state>-light`, `<state>-dark`. */
async function both(t: Test, page: Page, state: string): Promise<void> {
  const first = shown.get(page)!.scheme;
  for (const scheme of first === 'light'
    ? (['light', 'dark'] as const)
    : (['dark', 'light'] as const)) {
    await showScheme(page, scheme);
    await check(t, page, `${state}-${scheme}`);
  }
}

/** The page's watch asserted clean (PageWatch.assertClean) for each scheme in turn. */
function assertClean(t: Test, page: Page, allowConsole?: RegExp): void {
  const s = sortFindings(page);
  for (const scheme of ['light', 'dark'] as const) {
    t.comment(`${scheme}:`);
    for (const k of FINDINGS) s.watch[k].push(...s.found[scheme][k]);
    s.watch.assertClean(t, allowConsole);
    for (const k of FINDINGS) s.watch[k].splice(0);
  }
  shown.delete(page);
}

t.test('the login page', async (t) => {
  if (NO_CHROMIUM) return;
  for (const width of [1280, 390]) {
    const page = await b.newPage({
      viewport: { width, height: width > 500 ? 800 : 844 },
    });
    const watch = await watchPage(page);
    track({ page, watch });
    await page.goto(ts.url + '/');
    await page.waitForSelector('input[name="username"]');
    await both(t, page, `login-${width}`);
    assertClean(t, page, /WebSocket|status of 401/);
    await page.close();
  }
});

t.test('1280: feed, topic, compose, actions, picker, settings', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = track(await openApp(b, ts.url, ts.fx, 'hamlet'));
  await waitMessage(page, 'new logo');
  await both(t, page, 'feed-1280');
  // "Skip to messages", seen while it has the focus (the page's first Tab stop).
  await page.keyboard.press('Tab');
  await waitFor(page, `document.activeElement?.classList.contains('skip-link')`);
  await both(t, page, 'skip-link-1280');

  await page.goto(ts.url + '/' + topicHash());
  await waitFor(page, `!document.body.textContent.includes('new logo')`);
  await waitMessage(page, 'quoted words');
  await both(t, page, 'topic-1280');
  // The topic's visibility menu, opened from its recipient bar (web/app/topic-policy.tsx).
  await page.hover('.messages .recipient');
  await page.click('.messages .recipient .policy-menu-btn');
  await page.waitForSelector('.policy-menu-list');
  await both(t, page, 'topic-visibility-1280');
  await page.keyboard.press('Escape');

  await page.click('#compose-text');
  await page.keyboard.type('Draft words');
  await both(t, page, 'compose-1280');
  await page.keyboard.press('Escape');

  const row = page.locator('.msg', { hasText: 'quoted words' });
  await row.locator('.content').click();
  await page.waitForSelector('.msg.selected .msg-actions');
  await row.hover();
  await both(t, page, 'actions-1280');

  await row.locator('.msg-actions button[aria-label="Add a reaction"]').click();
  await page.waitForSelector('.picker input:focus');
  await both(t, page, 'picker-1280');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.picker') === null`);

  // A sender's profile card (opened from the keyboard: its focus ring shows).
  await page.locator('.msg', { hasText: 'Where shall we meet' }).locator('.sender').focus();
  await page.keyboard.press('Enter');
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();
  await both(t, page, 'profile-card-1280');
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'Othello' }).waitFor({ state: 'detached' });

  // A group mention's card: the group's members, each a button to their profile card.
  await page.locator('.msg .content .user-group-mention', { hasText: 'reviewers' }).click();
  await page.getByRole('dialog', { name: 'reviewers' }).waitFor();
  await both(t, page, 'group-card-1280');
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'reviewers' }).waitFor({ state: 'detached' });
  // The status dialog (its presets' emoji drawn, once the emoji data came).
  await page.click('.sidebar-foot .status-btn');
  await page.getByRole('dialog', { name: 'Set status' }).waitFor();
  await page.waitForSelector('.status-preset .status-emoji .e');
  await page.keyboard.type('Reviewing');
  await both(t, page, 'status-dialog-1280');
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'Set status' }).waitFor({ state: 'detached' });

  for (const panel of ['Account', 'Display']) {
    await page.goto(ts.url + '/#settings/' + panel.toLowerCase());
    await page.waitForSelector(`.settings h3:has-text("${panel}")`);
    await both(t, page, `settings-${panel.toLowerCase()}-1280`);
  }
  assertClean(t, page, /WebSocket|status of 401/);
  await page.close();
});

t.test(`1280: custom profile fields — the card, the Profile panel, the admin's`, async (t) => {
  if (NO_CHROMIUM) return;
  await profileFields();
  const { page } = track(await openApp(b, ts.url, ts.fx, 'iago', { hash: topicHash() }));
  await waitMessage(page, 'quoted words');
  // Othello's card, his full profile: text, a choice, a link, a person, rendered text.
  await page.locator('.msg', { hasText: 'Where shall we meet' }).locator('.sender').click();
  await page.getByRole('dialog', { name: /Othello/ }).waitFor();
  await page.click('.profile-card button:has-text("View full profile")');
  await page.waitForSelector('.profile-card .card-field-people');
  await both(t, page, 'profile-fields-card-1280');
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: /Othello/ }).waitFor({ state: 'detached' });

  await page.goto(ts.url + '/#settings/profile');
  await page.waitForSelector('form[aria-label="Your profile fields"]');
  await both(t, page, 'settings-profile-1280');
  await page.goto(ts.url + '/#settings/profile-fields');
  await page.waitForSelector('.pf-list');
  await page.click('button.pf-add');
  await page.locator('form[aria-label="Add a profile field"] select').first().selectOption({
    label: 'List of options',
  });
  await page.waitForSelector('input[aria-label="Choice 1"]');
  await both(t, page, 'settings-profile-fields-1280');
  assertClean(t, page, /WebSocket|status of 401/);
  await page.close();
});

t.test('1280: suggestions, Jump to, a question, direct messages', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = track(await openApp(b, ts.url, ts.fx, 'hamlet', { hash: topicHash() }));
  await waitMessage(page, 'quoted words');
  // The compose box's suggestions (a listbox its text points at). Emptied first: the draft
  // an earlier test left in this topic is on the server (drafts synchronization), and here.
  await page.fill('#compose-text', '');
  await page.click('#compose-text');
  await page.keyboard.type('@oth');
  await page.waitForSelector('#compose-options [role="option"]');
  await both(t, page, 'suggestions-1280');
  await page.keyboard.press('Escape');
  await page.fill('#compose-text', '');
  await page.keyboard.press('Escape');

  await page.keyboard.press('Control+k');
  await page.waitForSelector('.jump input:focus');
  await page.keyboard.type('gen');
  await both(t, page, 'jump-1280');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.jump') === null`);

  // A question (Delete, on a message of one's own).
  const mine = page.locator('.msg', { hasText: 'the small room' });
  await mine.locator('.content').click();
  await mine.hover();
  await mine.locator('button[aria-label="Delete"]').click();
  await page.getByRole('alertdialog').waitFor();
  await both(t, page, 'question-1280');
  await page.keyboard.press('Escape');
  await page.getByRole('alertdialog').waitFor({ state: 'detached' });

  // Creating a channel (its people picker's suggestions open), and a channel's settings.
  await page.click('button[aria-label="Create channel"]');
  await page.waitForSelector('input[name="channel-name"]:focus');
  await page.keyboard.type('Ideas');
  await page.fill('#create-channel-people', 'oth');
  await page.waitForSelector('#create-channel-people-options [role="option"]');
  await both(t, page, 'create-channel-1280');
  await page.keyboard.press('Escape'); // the suggestions
  await page.keyboard.press('Escape'); // the dialog
  await waitFor(page, `document.querySelector('.channel-dialog') === null`);
  await page.click('button[aria-label="Settings of #general"]');
  await waitFor(page, `document.querySelectorAll('.member-list li').length === 3`);
  await both(t, page, 'channel-settings-1280');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.channel-dialog') === null`);

  for (const panel of ['notifications', 'invitations']) {
    await page.goto(ts.url + '/#settings/' + panel);
    await waitFor(
      page,
      `!!document.querySelector('.settings [aria-current="page"]')?.href.endsWith('${panel}')`,
    );
    await both(t, page, `settings-${panel}-1280`);
  }
  // User groups: the list, a new group's form (its people's suggestions open), and the group
  // made, which the user manages (its members, the add and remove controls).
  await page.goto(ts.url + '/#settings/groups');
  await page.waitForSelector('.group-row');
  await both(t, page, 'settings-groups-1280');
  await page.click('button:has-text("Create a group")');
  await page.fill('input[name="group-name"]', 'helpers');
  await page.fill('#group-create-people', 'oth');
  await page.waitForSelector('#group-create-people-options [role="option"]');
  await both(t, page, 'group-create-1280');
  await page.keyboard.press('Enter');
  await page.click('button:has-text("Create group")');
  await page.waitForSelector('.group-details .member-list li:has-text("Othello")');
  await both(t, page, 'group-details-1280');
  await page.keyboard.press('Escape');
  await waitFor(page, `document.querySelector('.settings') === null`);

  // A direct message: the compose box addressed to people (its recipient pills).
  await page.goto(ts.url + '/#narrow/dm/' + ts.fx.users['othello']!.id + '-othello');
  await waitFor(page, `document.querySelector('.messages[aria-busy="false"]') !== null`);
  await page.click('#compose-text');
  await both(t, page, 'dm-1280');

  // The people column, filtered, a person focused from the filter by the arrow key.
  await page.fill('.people-filter', 'o');
  await waitFor(page, `document.querySelectorAll('.people a.person').length === 1`);
  await page.keyboard.press('ArrowDown');
  await page.waitForSelector('.people a.person:focus');
  await both(t, page, 'people-1280');
  assertClean(t, page, /WebSocket|status of 401/);
  await page.close();
});

t.test('a poll and a to-do list at 1280 and 390', async (t) => {
  if (NO_CHROMIUM) return;
  for (const width of [1280, 390]) {
    const { page } = track(
      await openApp(b, ts.url, ts.fx, 'hamlet', {
        hash: `#narrow/channel/${general}-general/topic/plans`,
        width,
        height: width > 500 ? 800 : 844,
      }),
    );
    await page.waitForSelector('.widget.poll .poll-option.mine:has-text("Friday")');
    await page.waitForSelector('.widget.todo .todo-task.done:has-text("Tickets")');
    await both(t, page, `widgets-${width}`);
    assertClean(t, page);
    await page.close();
  }
});

t.test('highlighted code at 1280, each token class in both themes', async (t) => {
  if (NO_CHROMIUM) return;
  // Comments, keywords, strings, numbers, names of functions and classes, builtins, operators:
  // each Pygments class app.css colours. Before, a builtin (print) and a comment fell short of
  // 4.5:1 in the light theme, and half the classes kept their light colour in the dark one.
  // (Lines short enough to fit at 390 in the later tests' views: no scrolling block.)
  const code = [
    '# a comment',
    'import os',
    'class Plan(object):',
    '  def go(self, n=1.5):',
    '    x = print("x", 0x1F)',
    '    return n ** 2 and None',
  ].join('\n');
  await sendChannelMessage(
    ts.api,
    'iago',
    'general',
    'highlighting',
    '```python\n' + code + '\n```',
  );
  const { page } = track(
    await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${general}-general/topic/highlighting`,
    }),
  );
  await waitMessage(page, 'a comment');
  const classes = await page.evaluate<string[]>(
    `[...document.querySelectorAll('.codehilite code span[class]')].map((s) => s.className)`,
  );
  for (const c of [
    'c1',
    'k',
    'kn',
    'kc',
    'ow',
    's2',
    'mi',
    'mf',
    'mh',
    'nf',
    'nc',
    'nb',
    'bp',
    'o',
  ])
    t.ok(classes.includes(c), `a token of class ${c}`);
  await both(t, page, 'code-1280');
  assertClean(t, page);
  await page.close();
});

t.test('Recent conversations at 1280 and 390 (a row focused)', async (t) => {
  if (NO_CHROMIUM) return;
  for (const width of [1280, 390]) {
    const { page } = track(
      await openApp(b, ts.url, ts.fx, 'hamlet', {
        hash: '#narrow/is/starred',
        width,
        height: width > 500 ? 800 : 844,
      }),
    );
    await page.evaluate(`location.hash = '#recent'`);
    await page.waitForSelector('.recent-row .recent-open:text-is("logo")');
    // From the filter field to the rows, as the keys go (a row's focus ring in the shots).
    await page.focus('.recent-search');
    await page.keyboard.press('ArrowDown');
    await waitFor(page, `document.activeElement?.classList.contains('recent-open')`);
    await both(t, page, `recent-${width}`);
    assertClean(t, page);
    await page.close();
  }
});

t.test('the Inbox at 1280 and 390 (a header focused)', async (t) => {
  if (NO_CHROMIUM) return;
  for (const width of [1280, 390]) {
    const { page } = track(
      await openApp(b, ts.url, ts.fx, 'hamlet', {
        hash: '#narrow/is/starred',
        width,
        height: width > 500 ? 800 : 844,
      }),
    );
    await page.evaluate(`location.hash = '#inbox'`);
    await page.waitForSelector('.inbox-list .inbox-row');
    // From the filter field to the rows, as the keys go (a header's focus ring in the shots).
    await page.focus('.inbox-search');
    await page.keyboard.press('ArrowDown');
    await waitFor(page, `document.activeElement?.classList.contains('inbox-focus')`);
    await both(t, page, `inbox-${width}`);
    assertClean(t, page);
    await page.close();
  }
});

t.test('390: drawer closed and open, actions menu, settings', async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = track(
    await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: topicHash(),
      width: 390,
      height: 844,
    }),
  );
  await waitMessage(page, 'quoted words');
  await both(t, page, 'topic-390');

  await page.click('button[aria-label="Open the sidebar"]');
  // The drawer's slide over (contrast is read from what is drawn): in, and no transition left.
  await waitDrawerOpen(page);
  await waitFor(page, `document.querySelector('.sidebar').getAnimations().length === 0`);
  await both(t, page, 'drawer-open-390');
  // The people, a section of the drawer, folded until opened.
  await page.click('.people-section button[aria-expanded="false"]');
  await page.waitForSelector('.people-section a.person');
  await both(t, page, 'people-390');
  await page.keyboard.press('Escape');
  await waitFor(
    page,
    `getComputedStyle(document.querySelector('.sidebar')).visibility === 'hidden'`,
  );

  const row = page.locator('.msg', { hasText: 'quoted words' });
  await row.locator('.content').click();
  await row.getByRole('button', { name: 'Message actions' }).click();
  await page.getByRole('menu', { name: 'Message actions' }).waitFor();
  await both(t, page, 'actions-menu-390');
  await page.keyboard.press('Escape');

  // A profile card: a sheet at the bottom of the screen.
  await page.locator('.msg', { hasText: 'Where shall we meet' }).locator('.avatar-btn').click();
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();
  await both(t, page, 'profile-card-390');
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'Othello' }).waitFor({ state: 'detached' });

  await page.goto(ts.url + '/#settings/display');
  await page.waitForSelector(`.settings h3:has-text("Display")`);
  await both(t, page, 'settings-display-390');
  // The organization's settings as a member reads them (nothing to change).
  await page.goto(ts.url + '/#settings/organization');
  await page.waitForSelector(`.settings h3:has-text("Organization")`);
  await both(t, page, 'settings-organization-member-390');
  await page.goto(ts.url + '/#settings/groups');
  await page.locator('.group-row', { hasText: 'reviewers' }).click();
  await page.waitForSelector('#group-title:has-text("reviewers")');
  await both(t, page, 'group-details-390');
  assertClean(t, page, /WebSocket|status of 401/);
  await page.close();
});

t.test(`1280: the organization's settings and custom emoji (an administrator)`, async (t) => {
  if (NO_CHROMIUM) return;
  const { page } = track(
    await openApp(b, ts.url, ts.fx, 'iago', {
      hash: '#settings/organization',
    }),
  );
  await page.waitForSelector(`.settings h3:has-text("Organization")`);
  await page.waitForSelector('.org-composed');
  // With an edit: Save and Discard shown.
  await page.selectOption('#org-can_add_custom_emoji_group', 'role:moderators');
  await page.waitForSelector('.org-save');
  await both(t, page, 'settings-organization-1280');
  await page.click('.org-save button:has-text("Discard")');
  await waitFor(page, `document.querySelector('.org-save') === null`);

  await page.goto(ts.url + '/#settings/emoji');
  await page.waitForSelector('.org-emoji img[alt=":party_parrot:"]');
  await both(t, page, 'settings-emoji-1280');
  assertClean(t, page, /WebSocket|status of 401/);
  await page.close();
});
t.test('the Users panel, its confirmation, a card over it', async (t) => {
  if (NO_CHROMIUM) return;
  // An administrator: the role menus and the Deactivate buttons.
  const admin = track(await openApp(b, ts.url, ts.fx, 'iago', { hash: '#settings/users' }));
  const page = admin.page;
  await page.waitForSelector('.users-list li');
  await both(t, page, 'settings-users-1280');
  const hamlet = page.locator('.users-list li', { hasText: 'Hamlet' });
  await hamlet.locator('button:has-text("Deactivate")').click();
  await page.getByRole('alertdialog').waitFor();
  await both(t, page, 'users-deactivate-question-1280');
  await page.keyboard.press('Escape');
  await page.getByRole('alertdialog').waitFor({ state: 'detached' });
  await page.click('.users-tabs button:has-text("Deactivated users")');
  await page.waitForSelector('text=No deactivated users.');
  await both(t, page, 'settings-users-deactivated-1280');
  await page.click('.users-tabs button:has-text("Users")');
  await page.locator('.users-list li', { hasText: 'Othello' }).locator('.user-who').click();
  await page.getByRole('dialog', { name: 'Othello' }).waitFor();
  await both(t, page, 'users-card-1280');
  assertClean(t, admin.page, /WebSocket|status of 401/);
  await page.close();

  // A member on a phone: the lists without controls.
  const member = track(
    await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: '#settings/users',
      width: 390,
      height: 844,
    }),
  );
  await member.page.waitForSelector('.users-list li');
  await both(t, member.page, 'settings-users-390');
  assertClean(t, member.page, /WebSocket|status of 401/);
  await member.page.close();

  // A server that sends mail: the confirmation's e-mail choice and its comment.
  const smtp = await TestSmtp.start(t);
  const mailing = await startServer(t, { smtpUrl: smtp.url });
  const mailAdmin = track(
    await openApp(b, mailing.url, mailing.fx, 'iago', {
      hash: '#settings/users',
    }),
  );
  const mp = mailAdmin.page;
  await mp.waitForSelector('.users-list li');
  await mp
    .locator('.users-list li', { hasText: 'Hamlet' })
    .locator('button:has-text("Deactivate")')
    .click();
  const ask = mp.getByRole('alertdialog');
  await ask.getByLabel('Notify this user by e-mail').check();
  await ask.getByLabel('Comment for the e-mail (optional)').waitFor();
  await both(t, mp, 'users-deactivate-mail-1280');
  await mp.keyboard.press('Escape');
  await ask.waitFor({ state: 'detached' });
  assertClean(t, mailAdmin.page, /WebSocket|status of 401/);
  await mp.close();
});
