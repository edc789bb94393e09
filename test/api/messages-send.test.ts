/**
 * POST /messages and DELETE /messages/{id}: destinations, content and topic rules, permissions,
 * recipients and their flags, the `message` and `delete_message` events.
 * Reference tests: zerver/tests/test_message_send.py, test_message_delete.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, setRealmSettings, systemGroupId } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';

function userMessageFlags(ts: TestServer, userId: number, messageId: number): number | undefined {
  return ts.server.store.messages.userFlags(userId, messageId);
}

function storedMessage(ts: TestServer, id: number) {
  return ts.server.store.messages.byId(id);
}

t.test(
  'sending to a channel by name, JSON name, id and JSON list; the message event',
  async (t) => {
    const ts = await startServer(t);
    const { api, fx } = ts;
    const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
      (n) => fx.users[n]!.id,
    ) as [number, number, number];
    const ch = await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
    const qOthello = await register(t, api, 'othello', {
      event_types: ['message'],
      apply_markdown: true,
    });
    const qHamlet = await register(t, api, 'hamlet', { event_types: ['message'] });
    const qCordelia = await register(t, api, 'cordelia', { event_types: ['message'] });

    const res = await api.post(
      'hamlet',
      'messages',
      {
        type: 'channel',
        to: 'Verona',
        topic: 'greetings',
        content: 'Hello **there**',
        queue_id: qHamlet.queue_id,
        local_id: '1.01',
      },
      { headers: { 'user-agent': 'ZulipMobile/27.1 (Android 14)' } },
    );
    const body = assertSuccess(t, res);
    assertMatchesOpenApi(t, '/messages', 'post', body);
    const id = body.id as number;

    const evOthello = await events(t, api, 'othello', qOthello.queue_id, -1, true);
    t.equal(evOthello.length, 1, 'a subscriber gets the message');
    const ev = evOthello[0]!;
    assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: [ev] });
    const m = ev.message as Record<string, unknown>;
    t.match(m, {
      id,
      sender_id: hamlet,
      content: '<p>Hello <strong>there</strong></p>',
      content_type: 'text/html',
      subject: 'greetings',
      type: 'stream',
      stream_id: ch,
      display_recipient: 'Verona',
      client: 'ZulipMobile',
      reactions: [],
      submessages: [],
      topic_links: [],
      is_me_message: false,
      sender_full_name: 'Hamlet',
      sender_email: 'hamlet@zulip.com',
    });
    t.same(ev.flags, [], 'unread for the recipient');
    t.notOk('local_message_id' in ev, 'no local id for other clients');
    // (The 400 body of POST /messages is described as a oneOf of overlapping error shapes, which
    // no error body can match exactly once; error bodies are checked field by field instead.)

    const evHamlet = await events(t, api, 'hamlet', qHamlet.queue_id, -1, true);
    t.same(evHamlet[0]!.flags, ['read'], 'read for the sender (an interactive client)');
    t.equal(
      (evHamlet[0]!.message as { content: string }).content,
      'Hello **there**',
      'markdown source without apply_markdown',
    );
    t.equal(evHamlet[0]!.local_message_id, '1.01', 'the sending queue gets its local id');
    t.same(await events(t, api, 'cordelia', qCordelia.queue_id, -1, true), [], 'not a subscriber');

    // The other forms of `to`.
    for (const to of ['"Verona"', String(ch), `[${ch}]`, '["verona"]']) {
      const r = await api.post('hamlet', 'messages', {
        type: 'stream',
        to,
        topic: 'forms',
        content: `to ${to}`,
      });
      t.equal(r.status, 200, `to=${to}`, { body: r.text });
    }
    t.equal(storedMessage(ts, id)!.stream_id, ch);
    t.equal(userMessageFlags(ts, othello, id), 0);
    t.equal(userMessageFlags(ts, cordelia, id), undefined, 'no row for non-subscribers');

    // A plain API client's messages stay unread for the sender unless asked.
    const bot = await sendChannelMessage(api, 'hamlet', 'Verona', 'x', 'from a script');
    t.equal(userMessageFlags(ts, hamlet, bot), 0, 'API clients: unread for the sender');
    const read = await sendChannelMessage(api, 'hamlet', 'Verona', 'x', 'marked', {
      read_by_sender: true,
    });
    t.equal(userMessageFlags(ts, hamlet, read), 1, 'read_by_sender: true');
    t.equal(storedMessage(ts, bot)!.sending_client, 'Unspecified', 'no User-Agent');
  },
);

t.test('content and topic rules', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  await createChannel(api, 'hamlet', 'Verona');
  const send = (params: Record<string, unknown>) =>
    api.post('hamlet', 'messages', {
      type: 'channel',
      to: 'Verona',
      topic: 'T',
      content: 'c',
      ...params,
    });

  const stripped = await send({ content: '\n\n  indented, trailing spaces \n\n \n' });
  t.equal(storedMessage(ts, stripped.body.id as number)!.content, '  indented, trailing spaces');
  assertError(t, await send({ content: ' \n ' }), 'Message must not be empty');
  assertError(t, await send({ content: 'a\u0000b' }), 'Message must not contain null bytes');

  const long = await send({ content: 'é'.repeat(10_001) });
  const stored = storedMessage(ts, long.body.id as number)!.content;
  t.equal([...stored].length, 10_000, 'cut to 10,000 code points');
  t.ok(stored.endsWith('\n[message truncated]'));

  const longTopic = await send({ topic: 'x'.repeat(61) });
  t.equal(storedMessage(ts, longTopic.body.id as number)!.topic, 'x'.repeat(57) + '...');
  const padded = await send({ topic: '  padded  ' });
  t.equal(storedMessage(ts, padded.body.id as number)!.topic, 'padded');
  for (const empty of ['', '(no topic)', 'general chat']) {
    const r = await send({ topic: empty });
    t.equal(storedMessage(ts, r.body.id as number)!.topic, '', `"${empty}" is the empty topic`);
  }
  const subject = await api.post('hamlet', 'messages', {
    type: 'stream',
    to: 'Verona',
    subject: 'legacy',
    content: 'c',
  });
  t.equal(storedMessage(ts, subject.body.id as number)!.topic, 'legacy', '`subject` alias');

  assertError(
    t,
    await send({ topic: 'Test\n\rTopic' }),
    'Invalid character in topic, at position 5!',
  );
  assertError(
    t,
    await api.post('hamlet', 'messages', { type: 'channel', to: 'Verona', content: 'c' }),
    'Missing topic',
  );
  assertError(
    t,
    await api.post('hamlet', 'messages', { type: 'channel', topic: 'T', content: 'c' }),
    'Missing channel',
  );
  assertError(t, await send({ type: 'invalid type' }), 'Invalid type');
  assertError(t, await send({ to: '["Verona", "Denmark"]' }), 'Expected exactly one channel');
  assertError(t, await send({ to: '{"a": 1}' }), 'Invalid data type for channel');
  assertError(
    t,
    await api.post('hamlet', 'messages', { type: 'channel', to: 'Verona', topic: 'T' }),
    "Missing 'content' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
});

t.test('unknown channels and sending permissions', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const send = (who: string, to: string, topic = 'T') =>
    api.post(who, 'messages', { type: 'channel', to, topic, content: 'c' });

  const unknown = await send('hamlet', 'nonexistent_stream');
  assertError(t, unknown, "Channel 'nonexistent_stream' does not exist", {
    code: 'STREAM_DOES_NOT_EXIST',
  });
  t.equal(unknown.body.stream, 'nonexistent_stream');
  assertError(
    t,
    await send('hamlet', `&<"'><non-existent>`),
    "Channel '&amp;&lt;&quot;&#x27;&gt;&lt;non-existent&gt;' does not exist",
    { code: 'STREAM_DOES_NOT_EXIST' },
  );
  const byId = await send('hamlet', '99999');
  assertError(t, byId, "Channel with ID '99999' does not exist", { code: 'STREAM_DOES_NOT_EXIST' });
  t.equal(byId.body.stream_id, 99999);

  // Guests: only subscribed channels, even public ones.
  await createChannel(api, 'hamlet', 'public stream');
  assertError(
    t,
    await send('polonius', 'public stream'),
    "Not authorized to send to channel 'public stream'",
  );
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'public stream' }],
      principals: [fx.users.polonius!.id],
    }),
  );
  assertSuccess(t, await send('polonius', 'public stream'));

  // Private channels: subscribers only.
  await createChannel(api, 'iago', 'secret', { invite_only: true });
  assertError(t, await send('hamlet', 'secret'), "Not authorized to send to channel 'secret'");
  assertSuccess(t, await send('iago', 'secret'));

  // can_send_message_group
  const annId = await createChannel(api, 'iago', 'announce', {
    principals: [fx.users.iago!.id, fx.users.hamlet!.id],
  });
  assertSuccess(
    t,
    await api.patch('iago', `streams/${annId}`, {
      can_send_message_group: JSON.stringify({ new: systemGroupId(ts, 'role:administrators') }),
    }),
  );
  assertError(
    t,
    await send('hamlet', 'announce'),
    'You do not have permission to post in this channel.',
  );
  assertSuccess(t, await send('iago', 'announce'));

  // Topics policy.
  setRealmSettings(ts, { topics_policy: 'disable_empty_topic' });
  assertError(
    t,
    await send('hamlet', 'public stream', ''),
    'Sending messages to the general chat is not allowed in this channel.',
  );
  const only = await createChannel(api, 'iago', 'general only', {
    topics_policy: 'empty_topic_only',
  });
  assertError(
    t,
    await send('iago', String(only), 'a topic'),
    'Only the general chat topic is allowed in this channel.',
  );
  assertSuccess(t, await send('iago', String(only), ''));
});

t.test('direct messages: forms of `to`, conversations, flags, permissions', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello, cordelia, iago] = ['hamlet', 'othello', 'cordelia', 'iago'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number, number];
  const q = await register(t, api, 'othello', { event_types: ['message'] });

  const one = await sendDirectMessage(api, 'hamlet', [othello], 'hi');
  const byEmail = await api.post('hamlet', 'messages', {
    type: 'private',
    to: ['othello@zulip.com'],
    content: 'by email',
  });
  const byString = await api.post('hamlet', 'messages', {
    type: 'direct',
    to: 'othello@zulip.com',
    content: 'comma string',
  });
  const withSelf = await sendDirectMessage(api, 'hamlet', [hamlet, othello], 'self listed');
  const rows = [one, byEmail.body.id as number, byString.body.id as number, withSelf].map((id) =>
    storedMessage(ts, id),
  );
  t.equal(new Set(rows.map((r) => r!.dm_group_id)).size, 1, 'one conversation, however addressed');
  t.equal(userMessageFlags(ts, othello, one), 512, 'is_private, unread');

  const evs = await events(t, api, 'othello', q.queue_id, -1, true);
  t.equal(evs.length, 4);
  const m = evs[0]!.message as Record<string, unknown>;
  t.equal(m.type, 'private');
  t.same(
    (m.display_recipient as { id: number }[]).map((u) => u.id),
    [hamlet, othello].sort((a, b) => a - b),
  );
  t.equal(m.subject, '');
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });

  const self = await sendDirectMessage(api, 'hamlet', [hamlet], 'note to self');
  const group = await sendDirectMessage(api, 'hamlet', [othello, cordelia], 'group');
  t.not(storedMessage(ts, self)!.dm_group_id, storedMessage(ts, group)!.dm_group_id);
  t.equal(userMessageFlags(ts, cordelia, group), 512);
  t.equal(userMessageFlags(ts, iago, group), undefined);

  const send = (to: unknown) =>
    api.post('hamlet', 'messages', { type: 'direct', to, content: 'c' });
  assertError(t, await send('nonexistent'), "Invalid email 'nonexistent'");
  assertError(t, await send([99999]), 'Invalid user ID 99999');
  assertError(t, await send(''), 'Message must have recipients');
  assertError(
    t,
    await send([othello, 'cordelia@zulip.com']),
    'Recipient lists may contain emails or user IDs, but not both.',
  );
  assertError(t, await send({ a: 1 }), 'Invalid data type for recipients');
  assertError(
    t,
    await api.post('hamlet', 'messages', { type: 'direct', content: 'c' }),
    'Message must have recipients',
  );

  assertSuccess(t, await api.delete('iago', `users/${cordelia}`));
  assertError(t, await send([cordelia]), "'cordelia@zulip.com' is no longer using Zulip.");
  assertError(t, await send([othello, cordelia]), "'cordelia@zulip.com' is no longer using Zulip.");

  // Realm policies.
  setRealmSettings(ts, { direct_message_permission_group: systemGroupId(ts, 'role:nobody') });
  assertError(t, await send([othello]), 'Direct messages are disabled in this organization.');
  assertSuccess(t, await send([hamlet]), 'messages to oneself are always allowed');
  setRealmSettings(ts, {
    direct_message_permission_group: systemGroupId(ts, 'role:administrators'),
  });
  assertError(
    t,
    await send([othello]),
    'This conversation does not include any users who can authorize it.',
  );
  assertSuccess(
    t,
    await send([othello, iago]),
    'an administrator in the conversation authorizes it',
  );
  setRealmSettings(ts, {
    direct_message_permission_group: systemGroupId(ts, 'role:everyone'),
    direct_message_initiator_group: systemGroupId(ts, 'role:administrators'),
  });
  assertSuccess(t, await send([othello]), 'an existing conversation may continue');
  assertError(
    t,
    await api.post('hamlet', 'messages', {
      type: 'direct',
      to: [fx.users.prospero!.id],
      content: 'c',
    }),
    'You do not have permission to initiate direct message conversations.',
  );
});

t.test('mentions and their flags; wildcard and group mention permissions', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const ids = Object.fromEntries(Object.entries(fx.users).map(([n, u]) => [n, u.id]));
  await createChannel(api, 'hamlet', 'Verona', {
    principals: [ids.hamlet, ids.othello, ids.cordelia, ids.iago],
  });
  const mention = await sendChannelMessage(
    api,
    'hamlet',
    'Verona',
    'T',
    'hi @**Othello** and @_**Cordelia**',
  );
  t.equal(userMessageFlags(ts, ids.othello!, mention)! & 8, 8, 'mentioned');
  t.equal(userMessageFlags(ts, ids.cordelia!, mention)! & 8, 0, 'silent mention');

  const all = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'ping @**all**');
  t.equal(userMessageFlags(ts, ids.iago!, all)! & 16, 16, 'stream_wildcard_mentioned');

  const q = await register(t, api, 'othello', { event_types: ['message'] });
  await sendChannelMessage(api, 'othello', 'Verona', 'topic w', 'I was here');
  const topicAll = await sendChannelMessage(api, 'hamlet', 'Verona', 'topic w', '@**topic** look');
  t.equal(
    userMessageFlags(ts, ids.othello!, topicAll)! & 32,
    32,
    'participant: topic_wildcard_mentioned',
  );
  t.equal(userMessageFlags(ts, ids.iago!, topicAll)! & 32, 0, 'not a participant');
  const evs = await events(t, api, 'othello', q.queue_id, -1, true);
  t.same(evs[1]!.flags, ['topic_wildcard_mentioned', 'wildcard_mentioned'], 'legacy flag included');

  // A group mention mentions every member.
  const g = await api.post('iago', 'user_groups/create', {
    name: 'support',
    description: 'd',
    members: [ids.cordelia],
  });
  const groupId = g.body.group_id as number;
  const gm = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'hey @*support*');
  t.equal(userMessageFlags(ts, ids.cordelia!, gm)! & 8, 8, 'group member mentioned');
  assertSuccess(
    t,
    await api.patch('iago', `user_groups/${groupId}`, {
      can_mention_group: JSON.stringify({ new: systemGroupId(ts, 'role:administrators') }),
    }),
  );
  assertError(
    t,
    await api.post('hamlet', 'messages', {
      type: 'channel',
      to: 'Verona',
      topic: 'T',
      content: '@*support*',
    }),
    "You are not allowed to mention user group 'support'.",
  );

  // Large channels: wildcards need can_mention_many_users_group.
  const many: number[] = [];
  for (let i = 0; i < 16; i++) {
    const r = await api.post('iago', 'users', {
      email: `extra${i}@zulip.com`,
      password: 'a long password',
      full_name: `Extra ${i}`,
    });
    many.push(r.body.user_id as number);
  }
  await createChannel(api, 'hamlet', 'big', { principals: [ids.hamlet, ...many] });
  const err = await api.post('hamlet', 'messages', {
    type: 'channel',
    to: 'big',
    topic: 'T',
    content: '@**all**',
  });
  assertError(
    t,
    err,
    'You do not have permission to use channel wildcard mentions in this channel.',
    {
      code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
    },
  );
  assertSuccess(
    t,
    await api.post('iago', 'messages', {
      type: 'channel',
      to: 'big',
      topic: 'T',
      content: '@**all**',
    }),
  );
  assertSuccess(
    t,
    await api.post('hamlet', 'messages', {
      type: 'channel',
      to: 'big',
      topic: 'T',
      content: '`@**all**` in code',
    }),
  );
});

t.test('DELETE /messages/{id}: permissions and the delete_message event', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
  const ch = await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const qBulk = await register(t, api, 'othello', {
    event_types: ['delete_message'],
    client_capabilities: { bulk_message_deletion: true },
  });
  const qLegacy = await register(t, api, 'othello', { event_types: ['delete_message'] });

  const own = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'mine');
  assertError(
    t,
    await api.delete('othello', `messages/${own}`),
    "You don't have permission to delete this message",
  );
  const res = await api.delete('hamlet', `messages/${own}`);
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/{message_id}', 'delete', res.body);
  t.equal(storedMessage(ts, own), undefined);
  t.equal(userMessageFlags(ts, othello, own), undefined, 'rows removed');
  assertError(t, await api.delete('hamlet', `messages/${own}`), 'Invalid message(s)');

  const bulk = await events(t, api, 'othello', qBulk.queue_id, -1, true);
  t.match(bulk[0], {
    type: 'delete_message',
    message_ids: [own],
    message_type: 'stream',
    stream_id: ch,
    topic: 'T',
  });
  const legacy = await events(t, api, 'othello', qLegacy.queue_id, -1, true);
  t.match(legacy[0], { type: 'delete_message', message_id: own, message_type: 'stream' });
  t.notOk('message_ids' in legacy[0]!);
  assertMatchesOpenApi(t, '/events', 'get', {
    result: 'success',
    msg: '',
    events: [...bulk, ...legacy],
  });

  // Administrators delete anyone's; a time limit binds only the others.
  const other = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'x');
  assertSuccess(t, await api.delete('iago', `messages/${other}`));
  const old = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'old');
  ts.server.store.db
    .prepare('UPDATE messages SET date_sent = date_sent - 1000 WHERE id = ?')
    .run(old);
  setRealmSettings(ts, { message_content_delete_limit_seconds: 600 });
  assertError(
    t,
    await api.delete('hamlet', `messages/${old}`),
    'The time limit for deleting this message has passed',
  );
  assertSuccess(t, await api.delete('iago', `messages/${old}`));

  // can_delete_own_message_group
  setRealmSettings(ts, {
    message_content_delete_limit_seconds: null,
    can_delete_own_message_group: systemGroupId(ts, 'role:administrators'),
  });
  const again = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'again');
  assertError(
    t,
    await api.delete('hamlet', `messages/${again}`),
    "You don't have permission to delete this message",
  );

  // A direct message: only its participants may even see it.
  const dm = await sendDirectMessage(api, 'hamlet', [othello], 'psst');
  assertError(t, await api.delete('cordelia', `messages/${dm}`), 'Invalid message(s)');
  assertError(t, await api.delete('hamlet', 'messages/abc'), 'message_id is not an integer');
});

t.test('a send asked again with the same queue_id and local_id is stored once', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  await createChannel(api, 'hamlet', 'Elsinore', {
    principals: [fx.users.hamlet!.id, fx.users.othello!.id],
  });
  const q = await register(t, api, 'hamlet', { event_types: ['message'] });
  const watcher = await register(t, api, 'othello', { event_types: ['message'] });
  const send = async (content: string, localId?: string, topic = 'retries') =>
    assertSuccess(
      t,
      await api.post('hamlet', 'messages', {
        type: 'channel',
        to: 'Elsinore',
        topic,
        content,
        ...(localId !== undefined ? { queue_id: q.queue_id, local_id: localId } : {}),
      }),
    ).id as number;
  const first = await send('once only', '7.01');
  t.equal(await send('once only', '7.01'), first, 'asked again: answered with the first id');
  const other = await send('a new message', '7.01');
  t.not(other, first, 'a different message with a reused local id is a new message');
  const moved = await send('once only', '7.01', 'elsewhere');
  t.not(moved, first, 'and so is one to another destination');
  const fresh = await send('once only', '7.02');
  t.not(fresh, first, 'a new local id is a new message');
  const plain = [await send('no local id'), await send('no local id')];
  t.not(plain[0], plain[1], 'without a local id, every send is a new message');
  const evs = await events(t, api, 'othello', watcher.queue_id, -1, true);
  t.same(
    evs.map((e) => (e.message as { id: number }).id),
    [first, other, moved, fresh, ...plain],
    'one event per stored message: none for the retry',
  );
});
