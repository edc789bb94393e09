/**
 * Missed-message mail against a real SMTP server on loopback (docs/mail.md "Missed messages"), with
 * the server's clock moved by hand: who counts as away (no event queue, or not active lately), each
 * trigger and every setting that turns it off, batching by
 * `email_notifications_batching_period_seconds` (later messages join the waiting batch, one mail
 * per conversation), messages read or deleted in time not mailed, a restart losing nothing, a
 * user's last queue going away unfetched, an edit that adds a mention, and what the mail says
 * (subject, sender, the server's rendering made absolute, the link into the app).
 * Reference: zerver/tests/test_email_notifications.py, test_message_edit_notifications.py.
 */
import t, { type Test } from 'tap';
import { assertSuccess, rawRequest, type ApiClient } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { until } from '../helpers/events.js';
import { TestClock } from '../helpers/clock.js';
import { startServer, TEST_SERVER_OPTIONS, type TestServer } from '../helpers/server.js';
import { TestSmtp, type ReceivedMail } from '../helpers/smtp.js';
import { createServer } from '../../src/server.js';

const ORIGIN = 'http://testserver.local';
const PERIOD = 120; // the default email_notifications_batching_period_seconds

type MailTest = TestServer & {
  smtp: TestSmtp;
  clock: TestClock;
  /** Mails every due batch and hands the outbox to the SMTP server. */
  deliver: () => Promise<void>;
  id: (name: string) => number;
};

async function setup(t: Test): Promise<MailTest> {
  const smtp = await TestSmtp.start(t);
  const clock = new TestClock();
  const ts = await startServer(t, { smtpUrl: smtp.url, clock: clock.now });
  const deliver = async () => {
    await ts.server.context.missedMessageMail!.runDue();
    await ts.server.context.mailer!.runDue();
  };
  await deliver();
  smtp.mails.length = 0; // the fixture's welcome mails
  return { ...ts, smtp, clock, deliver, id: (name) => ts.fx.users[name]!.id };
}

async function dm(t: Test, api: ApiClient, from: string, to: string[], content: string) {
  return assertSuccess(
    t,
    await api.post(from, 'messages', { type: 'private', to: JSON.stringify(to), content }),
  ).id as number;
}

async function say(
  t: Test,
  api: ApiClient,
  from: string,
  channel: string,
  topic: string,
  content: string,
) {
  return assertSuccess(
    t,
    await api.post(from, 'messages', { type: 'stream', to: channel, topic, content }),
  ).id as number;
}

function mailsTo(ts: MailTest, name: string): ReceivedMail[] {
  return ts.smtp.to(`${name}@zulip.com`);
}

/** A client of the user is connected and active: an event queue and an `active` presence. */
async function comeOnline(t: Test, ts: MailTest, name: string): Promise<string> {
  const reg = assertSuccess(t, await ts.api.post(name, 'register', { event_types: ['message'] }));
  assertSuccess(t, await ts.api.post(name, 'users/me/presence', { status: 'active' }));
  return reg.queue_id as string;
}

t.test('a direct message to a user who is away is mailed after the batching period', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  const id = await dm(
    t,
    api,
    'othello',
    ['hamlet@zulip.com'],
    'Are you **there**? See [plan.pdf](/user_uploads/1/ab/plan.pdf)',
  );
  await deliver();
  t.same(mailsTo(ts, 'hamlet'), [], 'nothing before the batching period has passed');
  t.equal(ts.server.store.missedMessages.count(), 1, 'it waits in the schedule');
  const metrics = await rawRequest(ts.url, { method: 'GET', path: '/metrics' });
  t.match(metrics.text, /^confab_missed_message_mail_waiting 1$/m, 'seen in /metrics');

  clock.advance(PERIOD);
  await deliver();
  const mails = mailsTo(ts, 'hamlet');
  t.equal(mails.length, 1, 'one mail');
  const mail = mails[0]!;
  t.equal(mail.subject, 'DMs with Othello');
  t.equal(mail.from, 'noreply@testserver.local');
  t.ok(
    mail.text.includes(
      '> Are you **there**? See /user_uploads/1/ab/plan.pdf'.replace(
        '/user_uploads',
        `${ORIGIN}/user_uploads`,
      ),
    ),
    'the text body quotes the markdown, uploads absolute',
    { text: mail.text },
  );
  t.ok(mail.html.includes('<strong>there</strong>'), 'the HTML body is the server’s rendering', {
    html: mail.html,
  });
  t.ok(
    mail.html.includes(`href="${ORIGIN}/user_uploads/1/ab/plan.pdf"`),
    'its links made absolute',
  );
  const link = `${ORIGIN}/#narrow/dm/${ts.id('othello')}-Othello/near/${id}`;
  t.ok(mail.text.includes(link), 'the text links the conversation in the app', { text: mail.text });
  t.ok(mail.html.includes(`href="${link}"`), 'so does the HTML');
  t.ok(mail.text.includes(`${ORIGIN}/#settings/notifications`), 'and the notification settings');
  t.equal(ts.server.store.missedMessages.count(), 0, 'the schedule is empty');
  t.same(ts.server.store.mail.list(10), [], 'the outbox too');

  clock.advance(3600);
  await deliver();
  t.equal(mailsTo(ts, 'hamlet').length, 1, 'mailed once only');
});

t.test('batching: later messages join the waiting batch; one mail per conversation', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  await createChannel(api, 'cordelia', 'Verona');
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] }),
  );
  await dm(t, api, 'othello', ['hamlet@zulip.com'], 'first');
  clock.advance(60);
  await dm(t, api, 'othello', ['hamlet@zulip.com'], 'second');
  await say(t, api, 'cordelia', 'Verona', 'balcony', 'before the mention');
  await say(t, api, 'cordelia', 'Verona', 'balcony', '@**Hamlet** come down');
  await say(t, api, 'cordelia', 'Verona', 'other', 'not about you');
  clock.advance(PERIOD - 61);
  await deliver();
  t.same(mailsTo(ts, 'hamlet'), [], 'the batch is due a period after its first message');
  clock.advance(1);
  await deliver();
  const mails = mailsTo(ts, 'hamlet');
  t.same(
    mails.map((m) => m.subject),
    ['DMs with Othello', '#Verona > balcony'],
    'one mail per conversation, least recently active first',
  );
  t.ok(
    mails[0]!.text.includes('> first') && mails[0]!.text.includes('> second'),
    'both DMs in one mail',
  );
  const topic = mails[1]!;
  t.ok(
    topic.text.includes('Cordelia:\n> before the mention'),
    'the mention comes with what was said before it',
    { text: topic.text },
  );
  t.ok(topic.text.includes('> @**Hamlet** come down'));
  t.notOk(topic.text.includes('not about you'), 'other topics are not mailed');
  t.ok(topic.text.includes('You are receiving this because you were personally mentioned.'));
  t.ok(topic.html.includes('class="user-mention'), 'the mention as rendered');

  // A message after the batch went starts a new one.
  await dm(t, api, 'othello', ['hamlet@zulip.com'], 'third');
  clock.advance(PERIOD - 1);
  await deliver();
  t.equal(mailsTo(ts, 'hamlet').length, 2);
  clock.advance(1);
  await deliver();
  t.equal(mailsTo(ts, 'hamlet').length, 3, 'a new batch, a period after its first message');
});

t.test('a message read, or deleted, in time is not mailed', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  const read = await dm(t, api, 'othello', ['hamlet@zulip.com'], 'read me');
  const gone = await dm(t, api, 'othello', ['cordelia@zulip.com'], 'oops');
  assertSuccess(
    t,
    await api.post('hamlet', 'messages/flags', { messages: [read], op: 'add', flag: 'read' }),
  );
  assertSuccess(t, await api.delete('othello', `messages/${gone}`));
  clock.advance(PERIOD);
  await deliver();
  t.same(ts.smtp.mails, [], 'no mail');
  t.equal(ts.server.store.missedMessages.count(), 0, 'and nothing left waiting');
});

t.test('a user with a connected, active client is not mailed; one away again is', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  await comeOnline(t, ts, 'hamlet');
  await dm(t, api, 'othello', ['hamlet@zulip.com'], 'you are here');
  clock.advance(PERIOD);
  await deliver();
  t.same(mailsTo(ts, 'hamlet'), [], 'online: no mail');
  t.equal(ts.server.store.missedMessages.count(), 0, 'nothing scheduled');

  // The queue is still there, but the user has not been active for a while (presence idle).
  clock.advance(300);
  await dm(t, api, 'othello', ['hamlet@zulip.com'], 'still there?');
  clock.advance(PERIOD);
  await deliver();
  const mails = mailsTo(ts, 'hamlet');
  t.equal(mails.length, 1, 'idle for longer than the presence threshold: mailed');
  t.ok(mails[0]!.text.includes('> still there?'));
  t.notOk(mails[0]!.text.includes('you are here'), 'only what came while away');
});

t.test('a last queue going away unfetched: what it never delivered is mailed', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  const queue = await comeOnline(t, ts, 'hamlet');
  await dm(t, api, 'othello', ['hamlet@zulip.com'], 'while you closed the tab');
  t.equal(ts.server.store.missedMessages.count(), 0, 'online: nothing scheduled');
  assertSuccess(t, await api.delete('hamlet', 'events', { queue_id: queue }));
  // The note goes through the realm's actor after the queue is gone.
  await until(
    () => ts.server.store.missedMessages.count() === 1,
    'scheduled once the queue is gone',
  );
  clock.advance(PERIOD);
  await deliver();
  t.equal(mailsTo(ts, 'hamlet').length, 1, 'mailed');
  // The message is not mailed again by another path.
  const again = await comeOnline(t, ts, 'hamlet');
  assertSuccess(t, await api.delete('hamlet', 'events', { queue_id: again }));
  // The realm's actor runs commands in order: once this one is done, the note was handled.
  await ts.server.context.realms.get(ts.fx.realmId)!.ask('missed_messages.queue_gone', {
    user_id: ts.id('hamlet'),
    since: clock.seconds,
  });
  clock.advance(PERIOD);
  await deliver();
  t.equal(mailsTo(ts, 'hamlet').length, 1, 'never twice');
});

t.test('every setting that turns it off', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  await createChannel(api, 'cordelia', 'Verona');
  const verona = ts.server.context.realms.get(ts.fx.realmId)!.view.channels.byName('Verona')!.id;
  for (const who of ['hamlet', 'othello', 'iago', 'prospero', 'shiva'])
    assertSuccess(
      t,
      await api.post(who, 'users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] }),
    );
  const setSub = async (who: string, property: string, value: boolean) =>
    assertSuccess(
      t,
      await api.post(who, 'users/me/subscriptions/properties', {
        subscription_data: [{ stream_id: verona, property, value }],
      }),
    );

  // hamlet: no DM/mention mail at all.
  assertSuccess(
    t,
    await api.patch('hamlet', 'settings', { enable_offline_email_notifications: false }),
  );
  // othello: channel mail on for Verona, but the topic muted.
  await setSub('othello', 'email_notifications', true);
  assertSuccess(
    t,
    await api.post('othello', 'user_topics', {
      stream_id: verona,
      topic: 'quiet',
      visibility_policy: 1,
    }),
  );
  // iago: channel mail on by default, Verona muted.
  assertSuccess(
    t,
    await api.patch('iago', 'settings', { enable_stream_email_notifications: true }),
  );
  await setSub('iago', 'is_muted', true);
  // prospero: wildcard mentions do not notify.
  assertSuccess(t, await api.patch('prospero', 'settings', { wildcard_mentions_notify: false }));
  // shiva muted the sender.
  assertSuccess(t, await api.post('shiva', `users/me/muted_users/${ts.id('cordelia')}`));

  await dm(t, api, 'cordelia', ['hamlet@zulip.com'], 'dm to hamlet');
  await say(t, api, 'cordelia', 'Verona', 'quiet', '@**Hamlet** in a muted topic');
  await say(t, api, 'cordelia', 'Verona', 'quiet', 'ordinary message');
  await say(t, api, 'cordelia', 'Verona', 'loud', '@**all** hello');
  await dm(t, api, 'cordelia', ['shiva@zulip.com'], 'dm to shiva');
  clock.advance(PERIOD);
  await deliver();
  t.same(
    mailsTo(ts, 'hamlet'),
    [],
    'enable_offline_email_notifications off: no DM or mention mail',
  );
  t.same(
    mailsTo(ts, 'othello').map((m) => m.subject),
    ['#Verona > loud'],
    'channel mail, but not for the topic muted (the wildcard mention mailed)',
  );
  t.same(mailsTo(ts, 'iago'), [], 'a muted channel sends no channel mail, nor wildcard mentions');
  t.same(mailsTo(ts, 'prospero'), [], 'wildcard_mentions_notify off');
  t.same(mailsTo(ts, 'shiva'), [], 'a muted sender is never mailed about');
  t.ok(
    mailsTo(ts, 'othello')[0]!.text.includes(
      'You are receiving this because everyone was mentioned in #Verona.',
    ),
  );

  // Turned off after the message was scheduled: not mailed either (the reference checks again).
  await dm(t, api, 'cordelia', ['othello@zulip.com'], 'later');
  assertSuccess(
    t,
    await api.patch('othello', 'settings', { enable_offline_email_notifications: false }),
  );
  clock.advance(PERIOD);
  await deliver();
  t.equal(mailsTo(ts, 'othello').length, 1, 'turned off while waiting: nothing');
});

t.test('channel and followed-topic mail, hidden content, the realm in the subject', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  await createChannel(api, 'cordelia', 'Verona');
  const verona = ts.server.context.realms.get(ts.fx.realmId)!.view.channels.byName('Verona')!.id;
  for (const who of ['hamlet', 'othello'])
    assertSuccess(
      t,
      await api.post(who, 'users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] }),
    );
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', {
      stream_id: verona,
      topic: 'plans',
      visibility_policy: 3,
    }),
  );
  assertSuccess(
    t,
    await api.patch('hamlet', 'settings', {
      message_content_in_email_notifications: false,
      realm_name_in_email_notifications_policy: 2,
    }),
  );
  assertSuccess(
    t,
    await api.patch('othello', 'settings', { enable_stream_email_notifications: true }),
  );
  await say(t, api, 'cordelia', 'Verona', 'plans', 'secret plans');
  clock.advance(PERIOD);
  await deliver();
  const [h] = mailsTo(ts, 'hamlet');
  t.equal(h?.subject, 'New messages [Zulip Dev]', 'content hidden; the realm named');
  t.notOk(h!.text.includes('secret plans'), 'no content');
  t.ok(h!.text.includes('you have turned off message content'), 'and says why');
  t.ok(h!.text.includes('topics you follow'), 'followed topic');
  const [o] = mailsTo(ts, 'othello');
  t.equal(o?.subject, '#Verona > plans', 'channel mail by the user’s default');
  t.ok(o!.text.includes('Cordelia:\n> secret plans'));
  t.ok(o!.text.includes('email notifications enabled for #Verona'));

  // The realm hides content from every mail.
  assertSuccess(
    t,
    await api.patch('desdemona', 'realm', {
      message_content_allowed_in_email_notifications: false,
    }),
  );
  await say(t, api, 'cordelia', 'Verona', 'plans', 'more plans');
  clock.advance(PERIOD);
  await deliver();
  const o2 = mailsTo(ts, 'othello')[1];
  t.equal(o2?.subject, 'New messages');
  t.ok(o2!.text.includes('your organization hides message content'));
  t.notOk(o2!.text.includes('more plans'));
});

t.test('group DMs, an edit that adds a mention, and the rendering made fit for mail', async (t) => {
  const ts = await setup(t);
  const { api, clock, deliver } = ts;
  await dm(
    t,
    api,
    'othello',
    ['hamlet@zulip.com', 'cordelia@zulip.com', 'iago@zulip.com'],
    'Hi all :smile: $$x^2$$\n```spoiler Ending\nthe butler did it\n```',
  );
  await createChannel(api, 'cordelia', 'Verona');
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] }),
  );
  const msg = await say(t, api, 'cordelia', 'Verona', 'news', 'nothing for you');
  assertSuccess(
    t,
    await api.patch('cordelia', `messages/${msg}`, { content: 'now for you @**Hamlet**' }),
  );
  clock.advance(PERIOD);
  await deliver();
  const mails = mailsTo(ts, 'hamlet');
  t.same(
    mails.map((m) => m.subject),
    ['Group DMs with Iago, Othello, and Cordelia', '#Verona > news'],
  );
  const g = mails[0]!;
  t.ok(g.text.includes('Othello:\n> Hi all'), 'the sender named in a group conversation', {
    text: g.text,
  });
  t.ok(g.html.includes('Hi all 🙂'), 'emoji as characters', { html: g.html });
  t.ok(g.html.includes('$$x^2$$'), 'TeX as its source');
  t.ok(
    g.html.includes('Ending') && g.html.includes('Open the app to see the spoiler content'),
    'a spoiler’s header, closed',
  );
  t.notOk(g.html.includes('butler') || g.text.includes('butler'), 'its content left out');
  t.ok(g.text.includes(`#narrow/dm/`) && g.text.includes('-group'), 'the group conversation link');
  t.ok(
    mails[1]!.text.includes('> now for you @**Hamlet**'),
    'the edited message, mailed once mentioned',
  );
});

t.test('scheduled mail survives a restart', async (t) => {
  const smtp = await TestSmtp.start(t);
  const clock = new TestClock();
  const ts = await startServer(t, { smtpUrl: smtp.url, clock: clock.now });
  await ts.server.context.mailer!.runDue();
  smtp.mails.length = 0;
  await dm(t, ts.api, 'othello', ['hamlet@zulip.com'], 'across a restart');
  await ts.server.close();
  clock.advance(PERIOD);
  const { testRoutes: _testRoutes, ...opts } = TEST_SERVER_OPTIONS;
  const again = await createServer({
    ...opts,
    dataDir: ts.dataDir,
    smtpUrl: smtp.url,
    clock: clock.now,
  });
  t.teardown(() => again.close());
  await again.context.missedMessageMail!.runDue();
  await again.context.mailer!.runDue();
  t.same(
    smtp.to('hamlet@zulip.com').map((m) => m.subject),
    ['DMs with Othello'],
    'mailed after the restart',
  );
});

t.test('without SMTP_URL nothing is scheduled', async (t) => {
  const ts = await startServer(t);
  await dm(t, ts.api, 'othello', ['hamlet@zulip.com'], 'no mail here');
  t.equal(ts.server.store.missedMessages.count(), 0);
  t.equal(ts.server.context.missedMessageMail, null);
});
