/** GET /users/me/{stream_id}/topics and POST /user_topics. */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, eventsSince } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
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
  const [legacy, ev] = eventsSince(ts, mark);
  // First the legacy muted_topics event with the whole list, then user_topic.
  t.same(legacy, {
    event: {
      type: 'muted_topics',
      muted_topics: [['pub', 'no messages yet', ev!.event.last_updated]],
    },
    users: [fx.users.cordelia!.id],
  });
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
  const userTopic = eventsSince(ts, mark).filter((e) => e.event.type === 'user_topic');
  t.equal(userTopic[0]!.event.topic_name, '');
  t.equal(userTopic[0]!.users[0], hamlet);

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

t.test(
  'legacy muted_topics: register field and event, unless user_topic is asked for',
  async (t) => {
    const ts = await startServer(t);
    const { api } = ts;
    const pub = await createChannel(api, 'hamlet', 'pub');
    const gone = await createChannel(api, 'hamlet', 'gone');
    for (const [stream_id, topic, visibility_policy] of [
      [pub, 'lunch', 1],
      [pub, 'dinner', 3],
      [gone, 'old', 1],
    ] as const) {
      assertSuccess(
        t,
        await api.post('hamlet', 'user_topics', { stream_id, topic, visibility_policy }),
      );
    }
    assertSuccess(t, await api.delete('hamlet', `streams/${gone}`));

    const legacy = await register(t, api, 'hamlet', { fetch_event_types: ['muted_topics'] });
    assertMatchesOpenApi(t, '/register', 'post', legacy.body);
    const muted = legacy.body.muted_topics as [string, string, number][];
    t.same(
      muted.map(([c, topic]) => [c, topic]),
      [['pub', 'lunch']],
      'muted topics only, not in archived channels',
    );
    t.type(muted[0]![2], 'number');
    const both = await register(t, api, 'hamlet', {
      fetch_event_types: ['muted_topics', 'user_topic'],
    });
    t.notOk('muted_topics' in both.body, 'not when user_topic is asked for');
    t.ok(Array.isArray(both.body.user_topics));
    const all = await register(t, api, 'hamlet');
    t.ok(Array.isArray(all.body.muted_topics), 'asking for everything includes it');

    const qLegacy = await register(t, api, 'hamlet', { event_types: ['muted_topics'] });
    const qBoth = await register(t, api, 'hamlet', { event_types: ['muted_topics', 'user_topic'] });
    assertSuccess(
      t,
      await api.post('hamlet', 'user_topics', {
        stream_id: pub,
        topic: 'tea',
        visibility_policy: 1,
      }),
    );
    const evs = await events(t, api, 'hamlet', qLegacy.queue_id, -1, true);
    t.same(
      evs.map((e) => [
        e.type,
        (e.muted_topics as [string, string][]).map(([c, tp]) => `${c}>${tp}`),
      ]),
      [['muted_topics', ['pub>lunch', 'pub>tea']]],
    );
    assertMatchesOpenApi(t, '/events', 'get', {
      result: 'success',
      msg: '',
      events: evs,
      queue_id: qLegacy.queue_id,
    });
    t.same(
      (await events(t, api, 'hamlet', qBoth.queue_id, -1, true)).map((e) => e.type),
      ['user_topic'],
      'a queue that takes user_topic gets only that',
    );
  },
);
