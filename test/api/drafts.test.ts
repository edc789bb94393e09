/**
 * Drafts: create, list, edit, delete; the reference's validation of each field (in its order);
 * the `enable_drafts_synchronization` gate; `drafts` events to the owner's queues only; the
 * register snapshot; turning synchronization off (PATCH /settings) deletes them. Ported from the reference's
 * zerver/tests/test_drafts.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events as pollEvents, register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

type Draft = {
  id?: number;
  type: string;
  to: number[];
  topic: string;
  content: string;
  timestamp?: number | null;
};

/** Changes personal settings through PATCH /settings, as a client would. */
async function setUserSettings(
  t: Test,
  api: ApiClient,
  who: string,
  patch: Record<string, unknown>,
) {
  assertSuccess(t, await api.patch(who, 'settings', patch), `settings of ${who}`);
}

async function create(t: Test, api: ApiClient, who: string, drafts: Draft[]): Promise<number[]> {
  const res = await api.post(who, 'drafts', { drafts });
  assertMatchesOpenApi(t, '/drafts', 'post', res.body);
  return assertSuccess(t, res, `create drafts as ${who}`).ids as number[];
}

async function list(t: Test, api: ApiClient, who: string): Promise<Draft[]> {
  const res = await api.get(who, 'drafts');
  assertMatchesOpenApi(t, '/drafts', 'get', res.body);
  const body = assertSuccess(t, res, `GET /drafts as ${who}`);
  t.equal(body.count, (body.drafts as Draft[]).length, 'count is the number of drafts');
  return body.drafts as Draft[];
}

/** The drafts without their ids. */
const bare = (ds: Draft[]) => ds.map(({ id: _id, ...rest }) => rest);

async function refused(t: Test, api: ApiClient, drafts: unknown, msg: string, code?: string) {
  const before = await list(t, api, 'hamlet');
  const res = await api.post('hamlet', 'drafts', { drafts });
  assertError(t, res, msg, code ? { code } : {});
  t.same(await list(t, api, 'hamlet'), before, `nothing created after: ${msg}`);
}

t.test('creating drafts of every kind, listing them as created', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const drafts: Draft[] = [
    {
      type: 'stream',
      to: [verona],
      topic: 'sync drafts',
      content: "Let's add backend support for syncing drafts.",
      timestamp: 1595479019,
    },
    {
      type: 'private',
      to: [fx.users.othello!.id],
      topic: '',
      content: 'What if we made it possible to sync drafts?',
      timestamp: 1595479020,
    },
    {
      type: 'private',
      to: [fx.users.othello!.id, fx.users.cordelia!.id],
      topic: '',
      content: 'What if we made it possible to sync drafts?',
      timestamp: 1595479021,
    },
  ];
  const ids = await create(t, api, 'hamlet', drafts);
  t.equal(ids.length, 3);
  t.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, 'ids in submission order');
  const got = await list(t, api, 'hamlet');
  t.same(
    got.map((d) => d.id),
    ids,
  );
  t.same(bare(got), [
    drafts[0],
    drafts[1],
    { ...drafts[2], to: [fx.users.othello!.id, fx.users.cordelia!.id].sort((a, b) => a - b) },
  ]);
  // Nobody else sees them.
  t.same(await list(t, api, 'othello'), []);
});

t.test(
  'the topic of a direct or unaddressed draft is dropped; so are unaddressed `to`',
  async (t) => {
    const { api, fx } = await startServer(t);
    const othello = fx.users.othello!.id;
    await create(t, api, 'hamlet', [
      { type: 'private', to: [othello], topic: 'ignored', content: 'a', timestamp: 10 },
      { type: 'private', to: [], topic: 'ignored', content: 'b', timestamp: 11 },
      { type: '', to: [othello], topic: 'ignored', content: 'c', timestamp: 12 },
    ]);
    t.same(bare(await list(t, api, 'hamlet')), [
      { type: 'private', to: [othello], topic: '', content: 'a', timestamp: 10 },
      { type: '', to: [], topic: '', content: 'b', timestamp: 11 },
      { type: '', to: [], topic: '', content: 'c', timestamp: 12 },
    ]);
  },
);

t.test('direct drafts name the other participants; a note to self names the author', async (t) => {
  const { api, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const cordelia = fx.users.cordelia!.id;
  await create(t, api, 'hamlet', [
    { type: 'private', to: [hamlet], topic: '', content: 'self', timestamp: 1 },
    { type: 'private', to: [hamlet, othello], topic: '', content: 'pair', timestamp: 2 },
    {
      type: 'private',
      to: [cordelia, othello, hamlet, othello],
      topic: '',
      content: 'g',
      timestamp: 3,
    },
  ]);
  t.same(
    (await list(t, api, 'hamlet')).map((d) => d.to),
    [[hamlet], [othello], [othello, cordelia].sort((a, b) => a - b)],
  );
});

t.test('timestamps: filled in by the server, kept from the client, never negative', async (t) => {
  const { api } = await startServer(t);
  const before = Math.floor(Date.now() / 1000);
  await create(t, api, 'hamlet', [{ type: '', to: [], topic: '', content: 'no time' }]);
  await create(t, api, 'hamlet', [
    { type: '', to: [], topic: '', content: 'null', timestamp: null },
  ]);
  await create(t, api, 'hamlet', [
    { type: '', to: [], topic: '', content: 'x', timestamp: 1e9 + 0.75 },
  ]);
  const after = Math.floor(Date.now() / 1000);
  const got = await list(t, api, 'hamlet');
  t.equal(got.length, 3);
  const byContent = new Map(got.map((d) => [d.content, d.timestamp!]));
  for (const c of ['no time', 'null']) {
    t.ok(byContent.get(c)! >= before && byContent.get(c)! <= after, `server time for "${c}"`);
  }
  t.equal(byContent.get('x'), 1e9, 'a fractional timestamp is shown truncated');
  t.same(
    got.map((d) => d.content),
    ['x', 'no time', 'null'],
    'listed from the least recently edited',
  );
  await refused(
    t,
    api,
    [{ type: '', to: [], topic: '', content: 'neg', timestamp: -10.1 }],
    'Timestamp must not be negative.',
  );
});

t.test('channel drafts: exactly one channel the author can read', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const secret = await createChannel(api, 'othello', 'Secret Society', { invite_only: true });
  const publicId = await createChannel(api, 'othello', 'Agora');
  const archived = await createChannel(api, 'iago', 'Old times');
  assertSuccess(t, await api.delete('iago', `streams/${archived}`));
  const draft = (to: number[]): Draft[] => [
    { type: 'stream', to, topic: 'sync drafts', content: 'body', timestamp: 1595479019 },
  ];
  await refused(t, api, draft([]), 'Must specify exactly 1 channel ID for channel messages');
  await refused(
    t,
    api,
    draft([publicId, publicId]),
    'Must specify exactly 1 channel ID for channel messages',
  );
  await refused(t, api, draft([secret]), 'Invalid channel ID');
  await refused(t, api, draft([99999999999999]), 'Invalid channel ID');
  await refused(t, api, draft([archived]), 'Invalid channel ID');
  // A public channel: members may draft to it without being subscribed, guests may not.
  assertSuccess(t, await api.post('hamlet', 'drafts', { drafts: draft([publicId]) }));
  assertError(
    t,
    await api.post('polonius', 'drafts', { drafts: draft([publicId]) }),
    'Invalid channel ID',
  );
  // Subscribers of the private channel may.
  assertSuccess(t, await api.post('othello', 'drafts', { drafts: draft([secret]) }));
});

t.test('direct drafts: users of the realm who are active', async (t) => {
  const { api, fx } = await startServer(t);
  await refused(
    t,
    api,
    [{ type: 'private', to: [99999999999999], topic: '', content: 'x' }],
    'Invalid user ID 99999999999999',
  );
  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  await refused(
    t,
    api,
    [
      {
        type: 'private',
        to: [fx.users.othello!.id, fx.users.prospero!.id],
        topic: '',
        content: 'x',
      },
    ],
    "'prospero@zulip.com' is no longer using Zulip.",
  );
});

t.test('content and topic: null bytes, stripping, truncation', async (t) => {
  const { api } = await startServer(t);
  const verona = await createChannel(api, 'hamlet', 'Verona');
  await refused(
    t,
    api,
    [{ type: '', to: [], topic: 'sync drafts.', content: 'Some regular \u0000 content here' }],
    'Message must not contain null bytes',
  );
  await refused(
    t,
    api,
    [{ type: 'stream', to: [10], topic: 'thinking about \u0000', content: 'body' }],
    'Topic must not contain null bytes',
  );
  // The topic is checked before the channel (10 does not exist) — as the reference orders it.
  await refused(
    t,
    api,
    [{ type: '', to: [], topic: '', content: '  \n \t ' }],
    'drafts[0]["content"] cannot be blank',
  );
  await create(t, api, 'hamlet', [
    {
      type: 'stream',
      to: [verona],
      topic: 't'.repeat(61),
      content: 'x'.repeat(10001),
      timestamp: 1,
    },
    { type: '', to: [], topic: '', content: '\n\n  indented  \n\n', timestamp: 2 },
  ]);
  const [long, stripped] = await list(t, api, 'hamlet');
  t.equal(long!.topic, 't'.repeat(57) + '...', 'topic cut to 60 characters');
  t.equal(long!.content.length, 10000, 'content cut to 10000 characters');
  t.ok(long!.content.endsWith('\n[message truncated]'));
  t.equal(stripped!.content, 'indented', 'content stripped');
});

t.test('malformed parameters name the parameter', async (t) => {
  const { api } = await startServer(t);
  const ok = { type: '', to: [], topic: '', content: 'x' };
  assertError(t, await api.post('hamlet', 'drafts', {}), "Missing 'drafts' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(t, await api.post('hamlet', 'drafts', { drafts: '[{' }), 'drafts is not valid JSON', {
    code: 'INVALID_JSON',
  });
  await refused(t, api, { ...ok }, 'drafts is not a list');
  await refused(t, api, [{ ...ok, id: 4 }], 'Argument "id" at drafts[0]["id"] is unexpected');
  await refused(t, api, [{ ...ok, type: 'direct' }], 'Invalid drafts[0]["type"]');
  await refused(t, api, [ok, { ...ok, to: ['a'] }], 'drafts[1]["to"][0] is not an integer');
  await refused(
    t,
    api,
    [{ type: '', to: [], content: 'x' }],
    'drafts[0]["topic"] field is missing',
  );
  await refused(t, api, [{ ...ok, content: 5 }], 'drafts[0]["content"] is not a string');
  await refused(t, api, [{ ...ok, timestamp: 'now' }], 'Invalid drafts[0]["timestamp"]');
  await refused(t, api, [7], 'drafts[0] is not a dict');
  // A bad draft anywhere in the list creates none of them.
  await refused(
    t,
    api,
    [ok, { ...ok, type: 'stream', to: [] }],
    'Must specify exactly 1 channel ID for channel messages',
  );
  // Multipart bodies work as form bodies.
  const res = await api.post('hamlet', 'drafts', { drafts: [ok] }, { encoding: 'multipart' });
  assertSuccess(t, res);
});

t.test('editing: a replacement draft; only the owner; unknown ids', async (t) => {
  const { api } = await startServer(t);
  const a = await createChannel(api, 'hamlet', 'Verona');
  const b = await createChannel(api, 'hamlet', 'Denmark');
  const original: Draft = {
    type: 'stream',
    to: [a],
    topic: 'drafts',
    content: 'The API should be good',
    timestamp: 1595505700,
  };
  const [id] = await create(t, api, 'hamlet', [original]);
  const changed: Draft = {
    type: 'stream',
    to: [b],
    topic: 'designing drafts',
    content: 'The API needs to be structured yet simple to use.',
    timestamp: 1595505800,
  };
  const res = await api.patch('hamlet', `drafts/${id}`, { draft: changed });
  assertMatchesOpenApi(t, '/drafts/{draft_id}', 'patch', res.body);
  assertSuccess(t, res);
  t.same(await list(t, api, 'hamlet'), [{ id, ...changed }]);

  const missing = await api.patch('hamlet', 'drafts/999999999', { draft: changed });
  assertError(t, missing, 'Draft does not exist', { status: 404 });
  assertMatchesOpenApi(t, '/drafts/{draft_id}', 'patch', missing.body, { status: '404' });
  assertError(
    t,
    await api.patch('othello', `drafts/${id}`, { draft: { ...changed, content: '???' } }),
    'Draft does not exist',
    { status: 404 },
  );
  // A valid id with an invalid replacement changes nothing.
  assertError(
    t,
    await api.patch('hamlet', `drafts/${id}`, { draft: { ...changed, to: [] } }),
    'Must specify exactly 1 channel ID for channel messages',
  );
  assertError(
    t,
    await api.patch('hamlet', `drafts/${id}`, { draft: { ...changed, id } }),
    'Argument "id" at draft["id"] is unexpected',
  );
  assertError(t, await api.patch('hamlet', `drafts/${id}`, {}), "Missing 'draft' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  t.same(await list(t, api, 'hamlet'), [{ id, ...changed }]);
});

t.test('deleting: only the owner; unknown ids', async (t) => {
  const { api } = await startServer(t);
  const [id, other] = await create(t, api, 'hamlet', [
    { type: '', to: [], topic: '', content: 'one', timestamp: 1 },
    { type: '', to: [], topic: '', content: 'two', timestamp: 2 },
  ]);
  assertError(t, await api.delete('othello', `drafts/${id}`), 'Draft does not exist', {
    status: 404,
  });
  const res = await api.delete('hamlet', `drafts/${id}`);
  assertMatchesOpenApi(t, '/drafts/{draft_id}', 'delete', res.body);
  assertSuccess(t, res);
  assertError(t, await api.delete('hamlet', `drafts/${id}`), 'Draft does not exist', {
    status: 404,
  });
  assertError(t, await api.delete('hamlet', 'drafts/9999999999'), 'Draft does not exist', {
    status: 404,
  });
  t.same(
    (await list(t, api, 'hamlet')).map((d) => d.id),
    [other],
  );
});

t.test('synchronization turned off: every draft endpoint refuses', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const [id] = await create(t, api, 'hamlet', [{ type: '', to: [], topic: '', content: 'x' }]);
  await setUserSettings(t, api, 'hamlet', { enable_drafts_synchronization: false });
  const msg = 'User has disabled synchronizing drafts.';
  assertError(t, await api.get('hamlet', 'drafts'), msg);
  assertError(t, await api.post('hamlet', 'drafts', { drafts: '[]' }), msg);
  assertError(t, await api.post('hamlet', 'drafts', {}), msg);
  assertError(t, await api.patch('hamlet', `drafts/${id}`, {}), msg);
  // Checked before the draft itself, as the reference.
  assertError(t, await api.patch('hamlet', `drafts/${id}`, { draft: {} }), msg);
  assertError(t, await api.patch('hamlet', 'drafts/1', { draft: 'not json' }), msg);
  assertError(t, await api.delete('hamlet', `drafts/${id}`), msg);
  // Other users are not affected.
  assertSuccess(t, await api.get('othello', 'drafts'));
  await setUserSettings(t, api, 'hamlet', { enable_drafts_synchronization: true });
  t.same(await list(t, api, 'hamlet'), [], 'turning synchronization off deleted the stored drafts');
});

t.test('turning synchronization off deletes one user’s drafts, silently', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  await create(t, api, 'hamlet', [
    { type: '', to: [], topic: '', content: 'one' },
    { type: '', to: [], topic: '', content: 'two' },
  ]);
  await create(t, api, 'othello', [{ type: '', to: [], topic: '', content: 'mine' }]);
  const q = await register(t, api, 'hamlet', { event_types: ['drafts'] });
  await setUserSettings(t, api, 'hamlet', { enable_drafts_synchronization: false });
  await setUserSettings(t, api, 'hamlet', { enable_drafts_synchronization: true });
  t.same(await list(t, api, 'hamlet'), []);
  t.equal((await list(t, api, 'othello')).length, 1, 'other users keep theirs');
  t.same(
    await pollEvents(t, api, 'hamlet', q.queue_id, q.last_event_id, true),
    [],
    'no drafts event',
  );
});

t.test('drafts events reach the owner’s queues only', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const mine1 = await register(t, api, 'hamlet', { event_types: ['drafts'] });
  const mine2 = await register(t, api, 'hamlet', {});
  const others = [
    await register(t, api, 'othello', {}),
    await register(t, api, 'iago', {}),
    await register(t, api, 'desdemona', {}),
  ];
  const [id] = await create(t, api, 'hamlet', [
    { type: 'stream', to: [verona], topic: 'plans', content: 'first', timestamp: 100 },
  ]);
  const edited = {
    type: 'private',
    to: [ts.fx.users.othello!.id],
    topic: 'x',
    content: 'second',
    timestamp: 200,
  };
  assertSuccess(t, await api.patch('hamlet', `drafts/${id}`, { draft: edited }));
  assertSuccess(t, await api.delete('hamlet', `drafts/${id}`));
  for (const q of [mine1, mine2]) {
    const res = await api.get('hamlet', 'events', {
      queue_id: q.queue_id,
      last_event_id: q.last_event_id,
      dont_block: true,
    });
    assertMatchesOpenApi(t, '/events', 'get', res.body);
    const evs = (assertSuccess(t, res).events as Record<string, unknown>[]).filter(
      (e) => e.type === 'drafts',
    );
    t.same(
      evs.map(({ id: _id, ...e }) => e),
      [
        {
          type: 'drafts',
          op: 'add',
          drafts: [
            { id, type: 'stream', to: [verona], topic: 'plans', content: 'first', timestamp: 100 },
          ],
        },
        { type: 'drafts', op: 'update', draft: { id, ...edited, topic: '' } },
        { type: 'drafts', op: 'remove', draft_id: id },
      ],
    );
  }
  for (const [who, q] of [
    ['othello', others[0]!],
    ['iago', others[1]!],
    ['desdemona', others[2]!],
  ] as const) {
    const evs = await pollEvents(t, api, who, q.queue_id, q.last_event_id, true);
    t.same(
      evs.filter((e) => e.type === 'drafts'),
      [],
      `${who} gets no drafts event`,
    );
  }
  // Refused changes send nothing.
  const tapped = ts.events.length;
  assertError(t, await api.delete('hamlet', `drafts/${id}`), 'Draft does not exist', {
    status: 404,
  });
  t.equal(ts.events.length, tapped);
});

t.test('register: drafts, most recently edited first, at most 1000', async (t) => {
  const { api } = await startServer(t);
  const many: Draft[] = [];
  for (let i = 0; i < 1001; i++)
    many.push({ type: '', to: [], topic: '', content: `draft ${i}`, timestamp: 1000 + i });
  await create(t, api, 'hamlet', many);
  const q = await register(t, api, 'hamlet', { fetch_event_types: ['drafts'] });
  assertMatchesOpenApi(t, '/register', 'post', q.body);
  const drafts = q.body.drafts as Draft[];
  t.equal(drafts.length, 1000);
  t.equal(drafts[0]!.content, 'draft 1000');
  t.equal(drafts[999]!.content, 'draft 1');
  const other = await register(t, api, 'othello', { fetch_event_types: ['drafts'] });
  t.same(other.body.drafts, []);
  const none = await register(t, api, 'hamlet', { fetch_event_types: ['realm_user'] });
  t.notOk('drafts' in none.body, 'only when asked for');
});
