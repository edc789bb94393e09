/** GET /users/me/{stream_id}/topics and POST /user_topics. */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, eventsSince } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test(
  'topics of a public channel: newest first, case variants merged, the empty topic',
  async (t) => {
    const ts = await startServer(t);
    const { api } = ts;
    const pub = await createChannel(api, 'hamlet', 'pub');
    const msg = (topic: string) => sendChannelMessage(api, 'hamlet', pub, topic, 'a message');
    await msg('lunch');
    const general = await msg('');
    await msg('Dinner');
    const lunch2 = await msg('LUNCH');
    const dinner2 = await msg('dinner');

    const res = await api.get('cordelia', `users/me/${pub}/topics`);
    assertSuccess(t, res);
    assertMatchesOpenApi(t, '/users/me/{stream_id}/topics', 'get', res.body);
    t.same(res.body.topics, [
      { name: 'dinner', max_id: dinner2 },
      { name: 'LUNCH', max_id: lunch2 },
      { name: 'general chat', max_id: general },
    ]);
    const raw = await api.get('cordelia', `users/me/${pub}/topics`, {
      allow_empty_topic_name: true,
    });
    t.same(
      (raw.body.topics as { name: string }[]).map((x) => x.name),
      ['dinner', 'LUNCH', ''],
    );

    const empty = await createChannel(api, 'hamlet', 'empty');
    t.same(
      (await api.get('hamlet', `users/me/${empty}/topics`)).body.topics,
      [],
      'no messages, no topics',
    );
  },
);

t.test('protected history: only topics of messages the user received', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [iago, hamlet, othello] = ['iago', 'hamlet', 'othello'].map((n) => fx.users[n]!.id) as [
    number,
    number,
    number,
  ];
  const secret = await createChannel(api, 'iago', 'secret', {
    invite_only: true,
    principals: [iago, othello],
  });
  await sendChannelMessage(api, 'iago', secret, 'before', 'before hamlet joined');
  assertSuccess(
    t,
    await api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'secret' }],
      principals: [hamlet],
    }),
  );
  const after = await sendChannelMessage(api, 'iago', secret, 'after', 'after hamlet joined');
  const res = await api.get('hamlet', `users/me/${secret}/topics`);
  t.same(assertSuccess(t, res).topics, [{ name: 'after', max_id: after }]);
  t.same(
    ((await api.get('othello', `users/me/${secret}/topics`)).body.topics as { name: string }[]).map(
      (x) => x.name,
    ),
    ['after', 'before'],
  );

  // Shared history: everything, for any subscriber.
  assertSuccess(
    t,
    await api.patch('iago', `streams/${secret}`, { history_public_to_subscribers: true }),
  );
  t.same(
    ((await api.get('hamlet', `users/me/${secret}/topics`)).body.topics as { name: string }[]).map(
      (x) => x.name,
    ),
    ['after', 'before'],
  );

  // Inaccessible channels look like unknown ones, to members and unsubscribed administrators.
  for (const who of ['cordelia', 'desdemona', 'polonius']) {
    const r = await api.get(who, `users/me/${secret}/topics`);
    assertError(t, r, 'Invalid channel ID');
    assertMatchesOpenApi(t, '/users/me/{stream_id}/topics', 'get', r.body, { status: '400' });
  }
  assertError(t, await api.get('hamlet', 'users/me/9999/topics'), 'Invalid channel ID');
});

t.test('POST /user_topics', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const pub = await createChannel(api, 'hamlet', 'pub');
  const secret = await createChannel(api, 'iago', 'secret', { invite_only: true });

  let mark = ts.events.length;
  const res = await api.post('cordelia', 'user_topics', {
    stream_id: pub,
    topic: 'no messages yet',
    visibility_policy: 1,
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/user_topics', 'post', res.body);
  const [ev] = eventsSince(ts, mark);
  t.match(ev, {
    event: {
      type: 'user_topic',
      stream_id: pub,
      topic_name: 'no messages yet',
      visibility_policy: 1,
    },
    users: [fx.users.cordelia!.id],
  });
  t.type(ev!.event.last_updated, 'number');

  for (const policy of [2, 3, 0]) {
    assertSuccess(
      t,
      await api.post('hamlet', 'user_topics', {
        stream_id: pub,
        topic: 'Lunch',
        visibility_policy: policy,
      }),
    );
  }
  // The display name of the empty topic means the empty topic.
  mark = ts.events.length;
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', {
      stream_id: pub,
      topic: 'general chat',
      visibility_policy: 3,
    }),
  );
  t.equal(eventsSince(ts, mark)[0]!.event.topic_name, '');
  t.equal(eventsSince(ts, mark)[0]!.users[0], hamlet);

  const bad = (params: Record<string, unknown>) => api.post('hamlet', 'user_topics', params);
  assertError(
    t,
    await bad({ stream_id: pub, topic: 'x', visibility_policy: 4 }),
    'Invalid visibility_policy',
  );
  assertError(
    t,
    await bad({ stream_id: pub, topic: 'x', visibility_policy: 'muted' }),
    'visibility_policy is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
  assertError(
    t,
    await bad({ stream_id: pub, topic: 'x'.repeat(61), visibility_policy: 1 }),
    'topic is too long (limit: 60 characters)',
  );
  assertError(t, await bad({ stream_id: pub, visibility_policy: 1 }), "Missing 'topic' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(
    t,
    await bad({ stream_id: secret, topic: 'x', visibility_policy: 1 }),
    'Invalid channel ID',
  );
  assertError(
    t,
    await bad({ stream_id: secret, topic: 'x', visibility_policy: 0 }),
    'Invalid channel ID',
  );
  assertError(
    t,
    await bad({ stream_id: 9999, topic: 'x', visibility_policy: 1 }),
    'Invalid channel ID',
  );
});
