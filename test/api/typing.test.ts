/**
 * POST /typing: direct typing fan-out (participants who receive typing notifications), channel
 * typing through real channels and queues (subscribers only, the stream_typing_notifications
 * capability, receives_typing_notifications, the 100-subscriber limit, access and posting rules),
 * and refusals. Reference tests: zerver/tests/test_typing.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { events, register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';

/** No settings endpoint exists yet: set a personal setting as a later PATCH /settings would. */
function setUserSetting(s: TestServer, who: string, settings: Record<string, unknown>): void {
  const { realms } = s.server.context;
  const store = s.server.store;
  const id = s.fx.users[who]!.id;
  store.users.setSettings(id, JSON.stringify(settings));
  realms.get(s.fx.realmId)!.view.reloadUser(id);
}

t.test('direct typing reaches the participants, the sender included', async (t) => {
  const { api, fx } = await startServer(t);
  const hamlet = await register(t, api, 'hamlet');
  const othello = await register(t, api, 'othello');
  const cordelia = await register(t, api, 'cordelia');
  const res = await api.post('hamlet', 'typing', { op: 'start', to: [fx.users.othello!.id] });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/typing', 'post', res.body);
  const expected = {
    type: 'typing',
    op: 'start',
    message_type: 'direct',
    sender: { user_id: fx.users.hamlet!.id, email: 'hamlet@zulip.com' },
    recipients: [
      { user_id: fx.users.othello!.id, email: 'othello@zulip.com' },
      { user_id: fx.users.hamlet!.id, email: 'hamlet@zulip.com' },
    ],
    id: 0,
  };
  const got = assertSuccess(
    t,
    await api.get('othello', 'events', {
      queue_id: othello.queue_id,
      last_event_id: -1,
      dont_block: true,
    }),
  );
  assertMatchesOpenApi(t, '/events', 'get', got);
  t.same(got.events, [expected]);
  t.same(await events(t, api, 'hamlet', hamlet.queue_id, -1, true), [expected]);
  t.same(await events(t, api, 'cordelia', cordelia.queue_id, -1, true), []);

  assertSuccess(
    t,
    await api.post('hamlet', 'typing', {
      type: 'direct',
      op: 'stop',
      to: [fx.users.othello!.id, fx.users.cordelia!.id],
    }),
  );
  t.match(await events(t, api, 'cordelia', cordelia.queue_id, -1, true), [{ op: 'stop', id: 0 }]);
});

t.test('only recipients who receive typing notifications, and only active ones', async (t) => {
  const s = await startServer(t);
  const { api, fx } = s;
  setUserSetting(s, 'othello', { receives_typing_notifications: false });
  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  const othello = await register(t, api, 'othello');
  const cordelia = await register(t, api, 'cordelia');
  const hamlet = await register(t, api, 'hamlet');
  assertSuccess(
    t,
    await api.post('hamlet', 'typing', {
      op: 'start',
      to: [fx.users.othello!.id, fx.users.cordelia!.id, fx.users.prospero!.id],
    }),
  );
  t.same(await events(t, api, 'othello', othello.queue_id, -1, true), []);
  const [ev] = await events(t, api, 'cordelia', cordelia.queue_id, -1, true);
  t.same(
    (ev!.recipients as { user_id: number }[]).map((r) => r.user_id),
    [fx.users.othello!.id, fx.users.cordelia!.id, fx.users.prospero!.id, fx.users.hamlet!.id],
    'the event still names every participant',
  );
  t.equal((await events(t, api, 'hamlet', hamlet.queue_id, -1, true)).length, 1);
});

t.test('direct typing refusals', async (t) => {
  const s = await startServer(t);
  const { api, fx } = s;
  const othello = fx.users.othello!.id;
  assertError(t, await api.post('hamlet', 'typing', { to: [othello] }), "Missing 'op' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(t, await api.post('hamlet', 'typing', { op: 'typing', to: [othello] }), 'Invalid op');
  assertError(
    t,
    await api.post('hamlet', 'typing', { type: 'private', op: 'start', to: [othello] }),
    'Invalid type',
  );
  assertError(t, await api.post('hamlet', 'typing', { op: 'start' }), "Missing 'to' argument");
  assertError(t, await api.post('hamlet', 'typing', { op: 'start', to: [] }), "Empty 'to' list");
  assertError(
    t,
    await api.post('hamlet', 'typing', { op: 'start', to: [othello, 9999] }),
    'Invalid user ID 9999',
  );
  assertError(
    t,
    await api.post('hamlet', 'typing', { op: 'start', to: othello }),
    'to is not a list',
  );
  assertError(
    t,
    await api.post('hamlet', 'typing', { op: 'start', to: ['x'] }),
    'to[0] is not an integer',
  );
  setUserSetting(s, 'hamlet', { send_private_typing_notifications: false });
  assertError(
    t,
    await api.post('hamlet', 'typing', { op: 'start', to: [othello] }),
    'User has disabled typing notifications for direct messages',
  );
});

const CAPABLE = { stream_typing_notifications: true };

/** Registers a queue for typing events only (with `caps` as client capabilities). */
async function typingQueue(
  t: Test,
  s: TestServer,
  who: string,
  caps: Record<string, boolean> = CAPABLE,
  extra: Record<string, unknown> = {},
): Promise<{ who: string; queue_id: string }> {
  const q = await register(t, s.api, who, {
    event_types: ['typing'],
    client_capabilities: caps,
    ...extra,
  });
  return { who, queue_id: q.queue_id };
}

/** Everything pending on a queue (POST /typing publishes before it answers). */
function pending(t: Test, s: TestServer, q: { who: string; queue_id: string }) {
  return events(t, s.api, q.who, q.queue_id, -1, true);
}

function channelTyping(s: TestServer, who: string, streamId: number, topic: string, op = 'start') {
  return s.api.post(who, 'typing', { type: 'channel', op, stream_id: streamId, topic });
}

t.test('channel typing: validation, and channels that do not exist for the sender', async (t) => {
  const s = await startServer(t);
  const { api } = s;
  for (const type of ['stream', 'channel']) {
    const res = await api.post('hamlet', 'typing', { type, op: 'start', topic: 'lunch' });
    assertError(t, res, "Missing 'stream_id' argument"); // the reference's wording
    assertMatchesOpenApi(t, '/typing', 'post', res.body, { status: '400' });
    assertError(
      t,
      await api.post('hamlet', 'typing', { type, op: 'start', stream_id: 1 }),
      'Missing topic',
    );
    assertError(
      t,
      await api.post('hamlet', 'typing', { type, op: 'start', stream_id: 'x', topic: 't' }),
      'stream_id is not valid JSON',
      { code: 'INVALID_JSON' },
    );
    assertError(
      t,
      await api.post('hamlet', 'typing', { type, op: 'start', stream_id: 9999, topic: 'lunch' }),
      'Invalid channel ID',
    );
  }
  const secret = await createChannel(api, 'iago', 'secret', { invite_only: true });
  const pub = await createChannel(api, 'hamlet', 'pub');
  // A private channel is answered as a missing one to a member, and to an administrator or the
  // owner who is not subscribed (they may know it exists, but have no content access).
  for (const who of ['othello', 'desdemona', 'polonius'])
    assertError(t, await channelTyping(s, who, secret, 't'), 'Invalid channel ID');
  // A guest has no content access to a public channel they are not subscribed to.
  assertError(t, await channelTyping(s, 'polonius', pub, 't'), 'Invalid channel ID');
  // Archived channels take no typing.
  assertSuccess(t, await api.delete('hamlet', `streams/${pub}`));
  assertError(t, await channelTyping(s, 'hamlet', pub, 't'), 'Invalid channel ID');

  setUserSetting(s, 'hamlet', { send_stream_typing_notifications: false });
  assertError(
    t,
    await channelTyping(s, 'hamlet', secret, 'x'),
    'User has disabled typing notifications for channel messages',
  );
});

t.test('channel typing reaches subscribers whose queues declare the capability', async (t) => {
  const s = await startServer(t);
  const { api, fx } = s;
  const id = (who: string) => fx.users[who]!.id;
  const verona = await createChannel(api, 'hamlet', 'Verona', {
    principals: [id('hamlet'), id('othello'), id('cordelia'), id('polonius')],
  });
  setUserSetting(s, 'cordelia', { receives_typing_notifications: false });
  const hamlet = await typingQueue(t, s, 'hamlet');
  const othello = await typingQueue(t, s, 'othello');
  const othelloEmpty = await typingQueue(t, s, 'othello', { ...CAPABLE, empty_topic_name: true });
  const othelloLegacy = await typingQueue(t, s, 'othello', {});
  const polonius = await typingQueue(t, s, 'polonius');
  const cordelia = await typingQueue(t, s, 'cordelia');
  // Not subscribed (iago registered for every public channel's messages): nothing.
  const iago = await typingQueue(t, s, 'iago', CAPABLE, { all_public_streams: true });
  const prospero = await typingQueue(t, s, 'prospero');

  const res = await channelTyping(s, 'polonius', verona, 'lunch');
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/typing', 'post', res.body);
  const expected = {
    type: 'typing',
    op: 'start',
    message_type: 'stream',
    sender: { user_id: id('polonius'), email: 'polonius@zulip.com' },
    stream_id: verona,
    topic: 'lunch',
    id: 0,
  };
  const got = assertSuccess(
    t,
    await api.get('othello', 'events', {
      queue_id: othello.queue_id,
      last_event_id: -1,
      dont_block: true,
    }),
  );
  assertMatchesOpenApi(t, '/events', 'get', got);
  t.same(got.events, [expected]);
  t.same(await pending(t, s, hamlet), [expected]);
  t.same(await pending(t, s, polonius), [expected], 'the sender, a subscribed guest, too');
  t.same(await pending(t, s, othelloEmpty), [expected]);
  t.same(await pending(t, s, othelloLegacy), [], 'no stream_typing_notifications: nothing');
  t.same(await pending(t, s, cordelia), [], 'receives_typing_notifications off: nothing');
  t.same(await pending(t, s, iago), [], 'not subscribed: nothing');
  t.same(await pending(t, s, prospero), [], 'not subscribed: nothing');

  // The empty topic, as each client shows it; "stop" the same way.
  assertSuccess(t, await channelTyping(s, 'hamlet', verona, '', 'stop'));
  t.match(await pending(t, s, othello), [
    { id: 0 },
    { id: 1, op: 'stop', topic: 'general chat', sender: { user_id: id('hamlet') } },
  ]);
  t.match(await pending(t, s, othelloEmpty), [{ id: 0 }, { id: 1, op: 'stop', topic: '' }]);
  // A client sending the display name of the empty topic means the empty topic.
  assertSuccess(t, await channelTyping(s, 'hamlet', verona, 'general chat'));
  t.match(await pending(t, s, othelloEmpty), [{ id: 0 }, { id: 1 }, { id: 2, topic: '' }]);
  t.same(await pending(t, s, prospero), []);
});

t.test('channel typing in a private channel reaches its subscribers only', async (t) => {
  const s = await startServer(t);
  const { api, fx } = s;
  const id = (who: string) => fx.users[who]!.id;
  const secret = await createChannel(api, 'iago', 'secret', {
    invite_only: true,
    principals: [id('iago'), id('hamlet'), id('polonius')],
  });
  const queues = await Promise.all(
    ['iago', 'hamlet', 'polonius', 'othello', 'desdemona', 'shiva', 'cordelia'].map((who) =>
      typingQueue(t, s, who, CAPABLE, who === 'cordelia' ? { all_public_streams: true } : {}),
    ),
  );
  assertSuccess(t, await channelTyping(s, 'hamlet', secret, 'plans'));
  assertSuccess(t, await channelTyping(s, 'polonius', secret, 'plans', 'stop'));
  for (const q of queues) {
    const got = await pending(t, s, q);
    if (['iago', 'hamlet', 'polonius'].includes(q.who)) {
      t.match(
        got,
        [
          { stream_id: secret, op: 'start', sender: { user_id: id('hamlet') } },
          { stream_id: secret, op: 'stop', sender: { user_id: id('polonius') } },
        ],
        `${q.who} (subscribed) gets both`,
      );
      t.equal(got.length, 2);
    } else {
      t.same(got, [], `${q.who} (not subscribed) gets nothing`);
    }
  }
});

t.test('channel typing follows the channel posting permission', async (t) => {
  const s = await startServer(t);
  const { api, fx } = s;
  const id = (who: string) => fx.users[who]!.id;
  const announce = await createChannel(api, 'iago', 'announce', {
    principals: [id('iago'), id('hamlet')],
    can_send_message_group: systemGroupId(s, 'role:administrators'),
  });
  const hamlet = await typingQueue(t, s, 'hamlet');
  assertError(
    t,
    await channelTyping(s, 'hamlet', announce, 't'),
    'You do not have permission to post in this channel.',
  );
  t.same(await pending(t, s, hamlet), []);
  assertSuccess(t, await channelTyping(s, 'iago', announce, 't'));
  t.match(await pending(t, s, hamlet), [{ sender: { user_id: id('iago') }, stream_id: announce }]);
  // A member who is not subscribed may type in a public channel (they may post there).
  assertSuccess(
    t,
    await api.patch('iago', `streams/${announce}`, {
      can_send_message_group: { new: systemGroupId(s, 'role:everyone') },
    }),
  );
  assertSuccess(t, await channelTyping(s, 'othello', announce, 't'));
  t.match(await pending(t, s, hamlet), [{ id: 0 }, { id: 1, sender: { user_id: id('othello') } }]);
});

t.test('no channel typing in channels with more than 100 subscribers', async (t) => {
  const s = await startServer(t);
  const { api, fx, server } = s;
  const realm = server.context.realms.get(fx.realmId)!;
  // 8 fixture users + 92 created ones: 100 subscribers, the most that still get typing.
  const extra: number[] = [];
  for (let i = 0; i < 93; i++) {
    const r = await realm.ask('user.create', {
      acting_user_id: null,
      email: `crowd${i}@zulip.com`,
      full_name: `Crowd ${i}`,
      password_hash: null,
      role: 400,
      welcome: null,
    });
    extra.push(r.user_id);
  }
  const everyone = [...Object.values(fx.users).map((u) => u.id), ...extra.slice(0, 92)];
  t.equal(everyone.length, 100);
  const crowd = await createChannel(api, 'hamlet', 'crowd', { principals: everyone });
  const othello = await typingQueue(t, s, 'othello');
  assertSuccess(t, await channelTyping(s, 'hamlet', crowd, 'busy'));
  t.match(await pending(t, s, othello), [{ stream_id: crowd, id: 0 }], '100 subscribers: sent');

  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'crowd' }],
      principals: [extra[92]!],
    }),
  );
  assertSuccess(t, await channelTyping(s, 'hamlet', crowd, 'busy'));
  t.equal((await pending(t, s, othello)).length, 1, '101 subscribers: nothing more');

  // Deactivated users do not count.
  assertSuccess(t, await api.delete('iago', `users/${extra[0]!}`));
  assertSuccess(t, await channelTyping(s, 'hamlet', crowd, 'busy', 'stop'));
  t.match(await pending(t, s, othello), [{ id: 0 }, { id: 1, op: 'stop' }]);
});

t.test(
  'POST /messages/{id}/typing: typing while editing, to whoever the edit would reach',
  async (t) => {
    const s = await startServer(t);
    const { api, fx } = s;
    const ids = (...names: string[]) => names.map((n) => fx.users[n]!.id);
    const verona = await createChannel(api, 'hamlet', 'Verona', {
      principals: ids('hamlet', 'othello', 'cordelia'),
    });
    const channelMsg = await sendChannelMessage(api, 'hamlet', verona, 'lunch', 'soon');
    const dm = await sendDirectMessage(api, 'hamlet', ids('othello'), 'a word');
    type Q = { who: string; queue_id: string };
    const queue = async (who: string): Promise<Q> => {
      const q = await register(t, api, who, { event_types: ['typing_edit_message'] });
      return { who, queue_id: q.queue_id };
    };
    const [qh, qo, qc, qp] = (await Promise.all(
      ['hamlet', 'othello', 'cordelia', 'prospero'].map(queue),
    )) as [Q, Q, Q, Q];
    setUserSetting(s, 'cordelia', { receives_typing_notifications: false });

    const res = await api.post('hamlet', `messages/${channelMsg}/typing`, { op: 'start' });
    assertSuccess(t, res);
    assertMatchesOpenApi(t, '/messages/{message_id}/typing', 'post', res.body);
    const expected = {
      type: 'typing_edit_message',
      op: 'start',
      sender_id: fx.users.hamlet!.id,
      message_id: channelMsg,
      recipient: { type: 'channel', channel_id: verona, topic: 'lunch' },
    };
    for (const q of [qh, qo]) {
      const evs = await pending(t, s, q);
      t.same(
        evs.map(({ id: _id, ...e }) => e),
        [expected],
        `${q.who} is told`,
      );
      assertMatchesOpenApi(t, '/events', 'get', {
        result: 'success',
        msg: '',
        events: evs,
        queue_id: q.queue_id,
      });
    }
    t.same(await pending(t, s, qc), [], 'not one who turned typing notifications off');
    t.same(await pending(t, s, qp), [], 'not a non-subscriber');

    assertSuccess(t, await api.post('hamlet', `messages/${dm}/typing`, { op: 'stop' }));
    const dmEvent = {
      type: 'typing_edit_message',
      op: 'stop',
      sender_id: fx.users.hamlet!.id,
      message_id: dm,
      recipient: { type: 'direct', user_ids: ids('hamlet', 'othello').sort((a, b) => a - b) },
    };
    t.same(
      (await pending(t, s, qo)).slice(-1).map(({ id: _id, ...e }) => e),
      [dmEvent],
    );
    t.equal((await pending(t, s, qp)).length, 0, 'nothing for anyone else');

    // Only someone who could save a content edit now.
    assertError(
      t,
      await api.post('othello', `messages/${channelMsg}/typing`, { op: 'start' }),
      "You don't have permission to edit this message",
    );
    assertError(
      t,
      await api.post('prospero', `messages/${dm}/typing`, { op: 'start' }),
      'Invalid message(s)',
    );
    assertError(
      t,
      await api.post('hamlet', 'messages/999999/typing', { op: 'start' }),
      'Invalid message(s)',
    );
    assertError(
      t,
      await api.post('hamlet', `messages/${dm}/typing`, { op: 'begin' }),
      'Invalid op',
    );
    const missing = await api.post('hamlet', `messages/${dm}/typing`, {});
    assertError(t, missing, "Missing 'op' argument", { code: 'REQUEST_VARIABLE_MISSING' });
    setUserSetting(s, 'hamlet', { send_private_typing_notifications: false });
    assertError(
      t,
      await api.post('hamlet', `messages/${dm}/typing`, { op: 'start' }),
      'User has disabled typing notifications for direct messages',
    );
    assertSuccess(t, await api.patch('iago', 'realm', { allow_message_editing: false }));
    assertError(
      t,
      await api.post('hamlet', `messages/${channelMsg}/typing`, { op: 'start' }),
      'Your organization has turned off message editing',
    );
  },
);
