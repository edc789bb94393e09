/**
 * Bugs the fuzzers found (docs/robustness.md), each pinned by the request that showed it.
 */
import t from 'tap';
import { NOTIFICATION_BOT_EMAIL } from '../../src/lib/notices.js';
import { assertError, assertSuccess } from '../helpers/api.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

t.test('a refused move changes nothing and sends nothing; an allowed one notifies', async (t) => {
  const { api, fx, server, events } = await startServer(t);
  await api.post('desdemona', 'users/me/subscriptions', {
    subscriptions: [{ name: 'moves' }],
    principals: [fx.users.hamlet!.id, fx.users.polonius!.id],
  });
  const id = await sendChannelMessage(api, 'hamlet', 'moves', 'before', 'to be moved');
  const realm = server.context.realms.get(fx.realmId)!;
  const bot = realm.view.userByEmail(NOTIFICATION_BOT_EMAIL);
  t.equal(bot?.id, fx.notificationBotId, 'the realm has its notification bot from creation');
  const before = events.length;
  // The fuzzer's request: a move of a message that does not exist.
  assertError(
    t,
    await api.patch('polonius', 'messages/999999', {
      topic: 'after',
      propagate_mode: 'change_one',
    }),
    'Invalid message(s)',
  );
  t.same(
    events.slice(before).map((e) => e.event.type),
    [],
    'no event at all',
  );

  assertSuccess(t, await api.patch('hamlet', `messages/${id}`, { topic: 'after' }));
  const after = events.slice(before);
  t.ok(
    after.some((e) => e.event.type === 'update_message'),
    'the move happened',
  );
  t.ok(
    after.some(
      (e) =>
        e.event.type === 'message' &&
        (e.event.message as { sender_id: number }).sender_id === fx.notificationBotId,
    ),
    'and the notification bot told the new topic',
  );
  t.notOk(
    after.some((e) => e.event.type === 'realm_user'),
    'no user was created for it',
  );
});

t.test(
  'a login as nobody costs what a wrong password costs (the server scrypt cost)',
  async (t) => {
    // The fuzzer's request: POST /json/login of an unknown username, answered after 6 s on a
    // loaded machine. The dummy hash verified for unknown accounts had the default cost (2^15)
    // whatever the server's (2^10 here): 32 times a real account's.
    const { api, fx } = await startServer(t);
    const timed = async (username: string) => {
      const ms: number[] = [];
      for (let i = 0; i < 5; i++) {
        const began = performance.now();
        const res = await api.post(null, 'fetch_api_key', { username, password: 'not it' });
        ms.push(performance.now() - began);
        assertError(t, res, 'Your username or password is incorrect', {
          status: 401,
          code: 'AUTHENTICATION_FAILED',
        });
      }
      return ms.sort((a, b) => a - b)[2]!;
    };
    const known = await timed(fx.users.hamlet!.email);
    const unknown = await timed('nobody@zulip.com');
    t.ok(
      unknown < known * 4 + 30,
      `unknown ${unknown.toFixed(1)} ms, known ${known.toFixed(1)} ms`,
    );
  },
);

t.test('a lone surrogate sent as a JSON escape is stored as it is sent to clients', async (t) => {
  // The hand probe's request: content "\ud800" in a JSON body. The live event carried the lone
  // surrogate; the stored message, fetched again, held replacement characters instead. Now a lone
  // surrogate escape reads as U+FFFD, as broken UTF-8 in any body does, in topics too (the old code
  // refused this topic, "Invalid character in topic", and took the same text as content).
  const { api, events } = await startServer(t);
  await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'odd' }] });
  const before = events.length;
  const res = await api.post(
    'hamlet',
    'messages',
    { type: 'channel', to: 'odd', topic: 'odd \ud800 text', content: 'half \ud800 here' },
    { encoding: 'json' },
  );
  assertSuccess(t, res);
  const id = res.body.id as number;
  const sent = events
    .slice(before)
    .map((e) => e.event as { type: string; message?: { id: number; content: string } })
    .find((e) => e.type === 'message' && e.message?.id === id);
  const fetched = await api.get('hamlet', `messages/${id}`, { apply_markdown: 'false' });
  assertSuccess(t, fetched);
  const stored = fetched.body.message as { content: string; subject: string };
  t.equal(stored.content, 'half \uFFFD here', 'stored with U+FFFD in its place');
  t.equal(stored.subject, 'odd \uFFFD text', 'the topic too');
  t.equal(sent?.message?.content, '<p>half \uFFFD here</p>', 'clients were sent the same');
});
