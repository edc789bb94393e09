/**
 * Bots against the real server: creating the three kinds, listing, changing (name, owner,
 * defaults, outgoing URL), new keys, deactivation and reactivation; who may do what (owners
 * their bots, administrators all, guests and bots nothing, the system bots nobody), the realm's
 * bot creation policy; the events (`realm_user` to everyone, `realm_bot` to the bot's
 * administrators) through real queues, checked against the OpenAPI description; register's
 * `realm_bots`; what an incoming-webhook bot's key may do; no `profile_data` for bots.
 * Reference tests: zerver/tests/test_bots.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { manage } from '../helpers/manage.js';
import { kind, Listener } from '../helpers/queues.js';
import { startServer } from '../helpers/server.js';
import {
  CHANNEL_SPEC_EXTRAS,
  REGISTER_SPEC_EXTRAS,
  USER_SPEC_EXTRAS,
} from '../helpers/spec-extras.js';

type Bot = { id: number; email: string; api_key: string };

async function createBot(
  t: Test,
  api: ApiClient,
  who: string,
  params: Record<string, unknown>,
): Promise<Bot> {
  const body = assertSuccess(t, await api.post(who, 'bots', params));
  t.type(body.user_id, 'number');
  t.match(body.api_key, /^[A-Za-z0-9]{32}$/);
  return {
    id: body.user_id as number,
    email: `${params.short_name as string}-bot@testserver.local`,
    api_key: body.api_key as string,
  };
}

const listen = (t: Test, api: ApiClient, who: string) =>
  Listener.open(t, api, who, {}, { allowExtra: [...USER_SPEC_EXTRAS, ...CHANNEL_SPEC_EXTRAS] });

t.test('a member creates a generic bot: events, key, listing, register', async (t) => {
  const { api, fx } = await startServer(t);
  const hamlet = await listen(t, api, 'hamlet');
  const iago = await listen(t, api, 'iago');
  const othello = await listen(t, api, 'othello');

  const res = await api.post('hamlet', 'bots', { full_name: 'Hamlet Bot', short_name: 'hambot' });
  const body = assertSuccess(t, res);
  t.match(body, {
    user_id: Number,
    api_key: String,
    avatar_url: /^\/static\/images\/default-avatar\.png\?version=\d+$/,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
  });
  const bot = { id: body.user_id as number, email: 'hambot-bot@testserver.local' };

  // Everyone learns of the new user; its administrators (owner, administrators) of the bot.
  const person = {
    user_id: bot.id,
    email: bot.email,
    full_name: 'Hamlet Bot',
    is_bot: true,
    bot_type: 1,
    bot_owner_id: fx.users.hamlet!.id,
    role: 400,
  };
  const realmBotAdd = {
    type: 'realm_bot',
    op: 'add',
    bot: {
      user_id: bot.id,
      email: bot.email,
      full_name: 'Hamlet Bot',
      bot_type: 1,
      is_active: true,
      api_key: body.api_key,
      owner_id: fx.users.hamlet!.id,
      services: [],
    },
  };
  for (const l of [hamlet, iago]) {
    const evs = await l.drain(t);
    t.match(
      evs.find((e) => kind(e) === 'realm_user add'),
      { person },
      `${l.who} gets the user`,
    );
    t.match(
      evs.find((e) => kind(e) === 'realm_bot add'),
      realmBotAdd,
      `${l.who} gets the bot`,
    );
  }
  const seen = await othello.drain(t);
  t.match(seen.find((e) => kind(e) === 'realm_user add')?.person, person, 'others get the user');
  t.notOk(
    seen.some((e) => e.type === 'realm_bot'),
    'but not the bot (nor its key)',
  );

  // The bot authenticates with its key; it is in the lists as a bot.
  const botWho = { email: bot.email, api_key: body.api_key as string };
  const me = assertSuccess(t, await api.get(botWho, 'users/me'));
  t.match(me, { user_id: bot.id, is_bot: true, email: bot.email });
  t.notOk('profile_data' in me, 'a bot has no profile data');
  const users = assertSuccess(t, await api.get('othello', 'users'));
  t.match(
    (users.members as { user_id: number }[]).find((u) => u.user_id === bot.id),
    person,
  );

  // GET /bots: the caller's own bots.
  const mine = assertSuccess(t, await api.get('hamlet', 'bots'));
  t.match(mine.bots, [
    {
      username: bot.email,
      full_name: 'Hamlet Bot',
      api_key: body.api_key,
      user_id: bot.id,
      bot_type: 1,
      default_sending_stream: null,
      default_all_public_streams: false,
    },
  ]);
  t.same(assertSuccess(t, await api.get('othello', 'bots')).bots, []);

  // Register: realm_bots for the owner and administrators, not others.
  const reg = (who: string) =>
    api.post(who, 'register', { fetch_event_types: ['realm_bot', 'realm_user'] });
  const ham = assertSuccess(t, await reg('hamlet'));
  assertMatchesOpenApi(t, '/register', 'post', ham, { allowExtra: REGISTER_SPEC_EXTRAS });
  t.match(ham.realm_bots, [realmBotAdd.bot]);
  const iagoReg = assertSuccess(t, await reg('iago'));
  t.same(
    (iagoReg.realm_bots as { user_id: number }[]).map((b) => b.user_id),
    [bot.id],
    'an administrator sees every bot but the system bots',
  );
  t.same(assertSuccess(t, await reg('othello')).realm_bots, []);
});

t.test('who may create bots, and of which kinds', async (t) => {
  const { api, fx, server } = await startServer(t);
  const bot = await createBot(t, api, 'hamlet', { full_name: 'Polly Bot', short_name: 'polly' });

  assertError(
    t,
    await api.post('polonius', 'bots', { full_name: 'Guest Bot', short_name: 'guest' }),
    'Not allowed for guest users',
  );
  assertError(
    t,
    await api.post(bot, 'bots', { full_name: 'Bot Bot', short_name: 'botbot' }),
    'This endpoint does not accept bot requests.',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Other Polly', short_name: 'polly' }),
    'Username already in use',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Polly Bot', short_name: 'polly2' }),
    'Name is already in use.',
  );
  for (const short_name of ['', '  ', 'has space', 'a@b']) {
    assertError(
      t,
      await api.post('hamlet', 'bots', { full_name: 'Named Bot', short_name }),
      'Bad name or username',
    );
  }
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'X', short_name: 'x' }),
    'Name too short!',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Emb Bot', short_name: 'emb', bot_type: 4 }),
    'Embedded bots are not enabled.',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Odd Bot', short_name: 'odd', bot_type: 9 }),
    'Invalid bot type',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', {
      full_name: 'Slack Bot',
      short_name: 'slk',
      bot_type: 3,
      payload_url: JSON.stringify('http://example.com/hook'),
      interface_type: 7,
    }),
    'Invalid interface type',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', {
      full_name: 'Url Bot',
      short_name: 'url',
      bot_type: 3,
      payload_url: JSON.stringify('ftp://example.com'),
    }),
    'payload_url is not a URL',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', {
      full_name: 'Chan Bot',
      short_name: 'chan',
      default_sending_stream: 'no such channel',
    }),
    "Invalid channel name 'no such channel'",
  );

  // bot_creation_policy 2: generic bots by administrators only; incoming webhooks by anyone.
  assertSuccess(t, await api.patch('desdemona', 'realm', { bot_creation_policy: 2 }));
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Gen Bot', short_name: 'gen' }),
    'Insufficient permission',
  );
  assertError(
    t,
    await api.post('hamlet', 'bots', {
      full_name: 'Out Bot',
      short_name: 'out',
      bot_type: 3,
      payload_url: JSON.stringify('http://example.com/hook'),
    }),
    'Insufficient permission',
  );
  await createBot(t, api, 'hamlet', { full_name: 'Hook Bot', short_name: 'hook', bot_type: 2 });
  await createBot(t, api, 'iago', { full_name: 'Admin Bot', short_name: 'adm' });
  // 3: administrators only, every kind.
  assertSuccess(t, await api.patch('desdemona', 'realm', { bot_creation_policy: 3 }));
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Hook Two', short_name: 'hook2', bot_type: 2 }),
    'Insufficient permission',
  );
  // Reactivating a bot is creating it again: the policy applies.
  assertSuccess(t, await api.delete('hamlet', `bots/${bot.id}`));
  assertError(t, await api.post('hamlet', `users/${bot.id}/reactivate`), 'Insufficient permission');
  t.equal(server.store.users.byId(bot.id)!.is_active, 0);
  void fx;
});

t.test('owners manage their bots, administrators all; the system bots nobody', async (t) => {
  const { api, fx } = await startServer(t);
  const hamlet = await listen(t, api, 'hamlet');
  const othello = await listen(t, api, 'othello');
  const iago = await listen(t, api, 'iago');
  await createChannel(api, 'hamlet', 'Verona');
  const bot = await createBot(t, api, 'hamlet', { full_name: 'Tool Bot', short_name: 'tool' });
  for (const l of [hamlet, othello, iago]) await l.drain(t);

  assertError(
    t,
    await api.patch('othello', `bots/${bot.id}`, { full_name: 'Mine' }),
    'Insufficient permission',
  );
  assertError(t, await api.delete('othello', `bots/${bot.id}`), 'Insufficient permission');
  assertError(
    t,
    await api.post('othello', `bots/${bot.id}/api_key/regenerate`),
    'Insufficient permission',
  );
  assertError(t, await api.patch('hamlet', `bots/${fx.users.othello!.id}`, {}), 'No such bot');
  assertError(t, await api.patch('iago', `bots/${fx.notificationBotId}`, {}), 'No such bot');
  assertError(t, await api.delete('iago', `bots/${fx.notificationBotId}`), 'No such bot');
  assertError(t, await api.patch('iago', 'bots/999999', {}), 'No such bot');
  // The system bots keep their role and stay active.
  assertError(
    t,
    await api.patch('desdemona', `users/${fx.notificationBotId}`, { role: 200 }),
    'No such user',
  );
  assertError(t, await api.delete('desdemona', `users/${fx.notificationBotId}`), 'No such user');

  // The owner renames it: everyone learns the name, the administrators as a bot change.
  const renamed = assertSuccess(
    t,
    await api.patch('hamlet', `bots/${bot.id}`, { full_name: 'Hammer Bot' }),
  );
  t.match(renamed, { full_name: 'Hammer Bot', bot_owner: 'hamlet@zulip.com' });
  const update = {
    type: 'realm_bot',
    op: 'update',
    bot: { user_id: bot.id, full_name: 'Hammer Bot' },
  };
  t.match(
    (await hamlet.drain(t)).filter((e) => e.type === 'realm_bot'),
    [update],
  );
  t.match(
    (await iago.drain(t)).filter((e) => e.type === 'realm_bot'),
    [update],
  );
  t.match(await othello.drain(t), [
    { type: 'realm_user', op: 'update', person: { user_id: bot.id, full_name: 'Hammer Bot' } },
  ]);

  // Defaults: a channel the owner can read, then none.
  const defaults = assertSuccess(
    t,
    await api.patch('hamlet', `bots/${bot.id}`, {
      default_sending_stream: 'Verona',
      default_all_public_streams: true,
    }),
  );
  t.match(defaults, { default_sending_stream: 'Verona', default_all_public_streams: true });
  t.match(
    (await hamlet.drain(t)).filter((e) => e.type === 'realm_bot'),
    [
      { op: 'update', bot: { user_id: bot.id, default_sending_stream: 'Verona' } },
      { op: 'update', bot: { user_id: bot.id, default_all_public_streams: true } },
    ],
  );
  assertSuccess(t, await api.patch('hamlet', `bots/${bot.id}`, { default_sending_stream: '' }));
  t.match(assertSuccess(t, await api.get('hamlet', 'bots')).bots, [
    { default_sending_stream: null, default_all_public_streams: true },
  ]);

  // An administrator hands it to othello: hamlet loses it, othello gains it.
  for (const l of [hamlet, othello, iago]) await l.drain(t);
  assertSuccess(
    t,
    await api.patch('iago', `bots/${bot.id}`, { bot_owner_id: fx.users.othello!.id }),
  );
  t.match(
    (await hamlet.drain(t)).filter((e) => e.type === 'realm_bot'),
    [{ op: 'delete', bot: { user_id: bot.id } }],
  );
  const gained = await othello.drain(t);
  t.match(
    gained.filter((e) => e.type === 'realm_bot'),
    [{ op: 'add', bot: { user_id: bot.id, owner_id: fx.users.othello!.id } }],
  );
  t.match(
    gained.filter((e) => e.type === 'realm_user'),
    [{ op: 'update', person: { user_id: bot.id, bot_owner_id: fx.users.othello!.id } }],
  );
  t.match(
    (await iago.drain(t)).filter((e) => e.type === 'realm_bot'),
    [{ op: 'update', bot: { user_id: bot.id, owner_id: fx.users.othello!.id } }],
  );
  assertError(
    t,
    await api.patch('othello', `bots/${bot.id}`, { bot_owner_id: bot.id }),
    "Failed to change owner, bots can't own other bots",
  );
  assertError(
    t,
    await api.patch('othello', `bots/${bot.id}`, { bot_owner_id: 999999 }),
    'Failed to change owner, no such user',
  );
  assertError(
    t,
    await api.patch('hamlet', `bots/${bot.id}`, { full_name: 'Back' }),
    'Insufficient permission',
  );

  // A new key: the old one stops working at once; the administrators learn the new one.
  const key = assertSuccess(t, await api.post('othello', `bots/${bot.id}/api_key/regenerate`));
  t.match(key.api_key, /^[A-Za-z0-9]{32}$/);
  t.equal((await api.get(bot, 'users/me')).status, 401, 'the old key fails');
  const fresh = { email: bot.email, api_key: key.api_key as string };
  assertSuccess(t, await api.get(fresh, 'users/me'));
  t.match(
    (await othello.drain(t)).filter((e) => e.type === 'realm_bot'),
    [{ op: 'update', bot: { user_id: bot.id, api_key: key.api_key } }],
  );

  // Deactivation and reactivation.
  for (const l of [hamlet, iago]) await l.drain(t);
  assertSuccess(t, await api.delete('othello', `bots/${bot.id}`));
  t.equal((await api.get(fresh, 'users/me')).status, 401, 'a deactivated bot cannot log in');
  t.match(await iago.drain(t), [
    { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } },
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, is_active: false } },
  ]);
  t.same(assertSuccess(t, await api.get('othello', 'bots')).bots, [], 'GET /bots: active only');
  assertError(t, await api.delete('othello', `bots/${bot.id}`), 'User is already deactivated');
  // A person took the name meanwhile? No: another bot did.
  await createBot(t, api, 'hamlet', { full_name: 'Hammer Bot', short_name: 'hammer2' });
  assertError(
    t,
    await api.post('othello', `users/${bot.id}/reactivate`),
    'There is already an active bot named "Hammer Bot" in this organization. To reactivate this bot, you must rename or deactivate the other one first.',
  );
  const [other] = assertSuccess(t, await api.get('hamlet', 'bots')).bots as { user_id: number }[];
  assertSuccess(t, await api.delete('hamlet', `bots/${other!.user_id}`));
  await iago.drain(t);
  assertSuccess(t, await api.post('othello', `users/${bot.id}/reactivate`));
  t.match(
    (await iago.drain(t)).filter((e) => e.type === 'realm_bot'),
    [{ op: 'update', bot: { user_id: bot.id, is_active: true } }],
  );
  assertSuccess(t, await api.get(fresh, 'users/me'));
});

t.test('deactivating a person deactivates their bots', async (t) => {
  const { api, fx } = await startServer(t);
  const bot = await createBot(t, api, 'cordelia', { full_name: 'Cord Bot', short_name: 'cord' });
  const iago = await listen(t, api, 'iago');
  assertSuccess(t, await api.delete('iago', `users/${fx.users.cordelia!.id}`));
  const evs = await iago.drain(t);
  t.ok(
    evs.some(
      (e) =>
        e.type === 'realm_user' &&
        (e.person as { user_id?: number; is_active?: boolean } | undefined)?.user_id === bot.id &&
        (e.person as { is_active?: boolean }).is_active === false,
    ),
    'the bot is deactivated too',
  );
  t.equal((await api.get(bot, 'users/me')).status, 401);
});

t.test('an incoming-webhook bot may only post', async (t) => {
  const { api } = await startServer(t);
  await createChannel(api, 'hamlet', 'Verona');
  const hook = await createBot(t, api, 'hamlet', {
    full_name: 'Alerts Bot',
    short_name: 'alerts',
    bot_type: 2,
    service_name: 'grafana',
    config_data: JSON.stringify({ region: 'eu' }),
  });
  assertSuccess(
    t,
    await api.post(hook, 'messages', {
      type: 'stream',
      to: 'Verona',
      topic: 'alerts',
      content: 'up',
    }),
  );
  assertSuccess(t, await api.get(hook, 'users/me'));
  for (const [method, path] of [
    ['get', 'users'],
    ['get', 'messages'],
    ['post', 'register'],
    ['get', 'streams'],
  ] as const) {
    const res =
      method === 'get'
        ? await api.get(
            hook,
            path,
            method === 'get' && path === 'messages'
              ? { anchor: 'newest', num_before: 1, num_after: 0 }
              : {},
          )
        : await api.post(hook, path, {});
    assertError(t, res, 'This API is not available to incoming webhook bots.');
  }
  const reg = assertSuccess(
    t,
    await api.post('hamlet', 'register', { fetch_event_types: ['realm_bot'] }),
  );
  t.match(reg.realm_bots, [
    {
      user_id: hook.id,
      bot_type: 2,
      services: [{ service_name: 'grafana', config_data: { region: 'eu' } }],
    },
  ]);
});

t.test('an outgoing-webhook bot has its endpoint as a service', async (t) => {
  const { api } = await startServer(t);
  const hamlet = await listen(t, api, 'hamlet');
  assertError(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Out Bot', short_name: 'out', bot_type: 3 }),
    "Missing 'payload_url' argument",
  );
  const out = await createBot(t, api, 'hamlet', {
    full_name: 'Out Bot',
    short_name: 'out',
    bot_type: 3,
    payload_url: JSON.stringify('http://example.com/hook'),
    interface_type: 1,
  });
  const add = (await hamlet.drain(t)).find((e) => kind(e) === 'realm_bot add');
  t.match(add?.bot, {
    user_id: out.id,
    bot_type: 3,
    services: [{ base_url: 'http://example.com/hook', interface: 1, token: /^[A-Za-z0-9]{32}$/ }],
  });
  assertSuccess(
    t,
    await api.patch('hamlet', `bots/${out.id}`, {
      service_payload_url: JSON.stringify('https://example.net/other'),
      service_interface: 2,
    }),
  );
  t.match(
    (await hamlet.drain(t)).filter((e) => e.type === 'realm_bot'),
    [
      {
        op: 'update',
        bot: {
          user_id: out.id,
          services: [{ base_url: 'https://example.net/other', interface: 2 }],
        },
      },
    ],
  );
});

t.test("the reference's length limits: the outgoing URL and the service name", async (t) => {
  const { api } = await startServer(t);
  // Django's URLValidator refuses a URL of more than 2,048 characters, counted in code points.
  const base = 'http://example.com/';
  const url = (n: number, ch = 'x') => base + ch.repeat(n - base.length);
  const fox = '\u{1F98A}';
  let made = 0;
  const create = (params: Record<string, unknown>) =>
    api.post('hamlet', 'bots', {
      full_name: `Limit Bot ${++made}`,
      short_name: `limit${made}`,
      ...params,
    });
  const outgoing = (u: string) => create({ bot_type: 3, payload_url: JSON.stringify(u) });
  assertError(t, await outgoing(url(2049)), 'payload_url is not a URL');
  assertError(t, await outgoing(url(2049, fox)), 'payload_url is not a URL');
  const out = assertSuccess(t, await outgoing(url(2048))).user_id as number;
  assertSuccess(t, await outgoing(url(2048, fox)), '2,048 code points, 4,077 UTF-16 units');
  const patch = (u: string) =>
    api.patch('hamlet', `bots/${out}`, { service_payload_url: JSON.stringify(u) });
  assertError(t, await patch(url(2049)), 'service_payload_url is not a URL');
  assertSuccess(t, await patch(url(2048, fox)));

  // The service name: the reference's Service.name column holds 100 characters.
  assertError(
    t,
    await create({ bot_type: 2, service_name: 'x'.repeat(101) }),
    'service_name is too long (limit: 100 characters)',
  );
  assertError(
    t,
    await create({
      bot_type: 3,
      payload_url: JSON.stringify(url(30)),
      service_name: fox.repeat(101),
    }),
    'service_name is too long (limit: 100 characters)',
  );
  const named = assertSuccess(t, await create({ bot_type: 2, service_name: fox.repeat(100) }))
    .user_id as number;
  assertSuccess(
    t,
    await create({
      bot_type: 3,
      payload_url: JSON.stringify(url(30)),
      service_name: 'x'.repeat(100),
    }),
  );
  const state = assertSuccess(t, await api.post('hamlet', 'register', {}));
  t.match(
    (state.realm_bots as { user_id: number; services: unknown[] }[]).find(
      (b) => b.user_id === named,
    ),
    { services: [{ service_name: fox.repeat(100) }] },
    'a name of 100 emoji is kept whole',
  );
});

t.test('custom profile data: people have it, bots never', async (t) => {
  const { api, fx } = await startServer(t);
  const bot = await createBot(t, api, 'hamlet', { full_name: 'Prof Bot', short_name: 'prof' });
  const users = assertSuccess(
    t,
    await api.get('hamlet', 'users', { include_custom_profile_fields: true }),
  ).members as { user_id: number; is_bot: boolean; profile_data?: unknown }[];
  for (const u of users) {
    if (u.is_bot) t.notOk('profile_data' in u, `bot ${u.user_id}: no profile_data`);
    else t.ok('profile_data' in u, `user ${u.user_id}: profile_data`);
  }
  t.ok(users.some((u) => u.user_id === fx.notificationBotId));
  const one = assertSuccess(
    t,
    await api.get('hamlet', `users/${bot.id}`, { include_custom_profile_fields: true }),
  ).user as Record<string, unknown>;
  t.notOk('profile_data' in one);
});

t.test('creating, changing, renewing and deactivating a bot are in the audit log', async (t) => {
  const { api, fx, server, dataDir } = await startServer(t);
  const created = assertSuccess(
    t,
    await api.post('hamlet', 'bots', {
      full_name: 'Hook Bot',
      short_name: 'hook',
      bot_type: 3,
      payload_url: JSON.stringify('https://hooks.example.com/T0123/s3cr3t'),
    }),
  );
  const botId = created.user_id as number;
  assertSuccess(t, await api.patch('hamlet', `bots/${botId}`, { full_name: 'Hook Bot 2' }));
  assertSuccess(t, await api.post('iago', `bots/${botId}/api_key/regenerate`));
  assertSuccess(t, await api.delete('hamlet', `bots/${botId}`));
  const rows = server.store.audit
    .list({ realmId: fx.realmId, userId: botId, limit: 10 })
    .reverse()
    .map((r) => ({
      event_type: r.event_type,
      acting_user_id: r.acting_user_id,
      modified_user_id: r.modified_user_id,
      extra: JSON.parse(r.extra) as Record<string, unknown>,
    }));
  t.match(rows, [
    { event_type: 'user_created', acting_user_id: fx.users.hamlet!.id, modified_user_id: botId },
    { event_type: 'user_changed', acting_user_id: fx.users.hamlet!.id, modified_user_id: botId },
    {
      event_type: 'user_api_key_changed',
      acting_user_id: fx.users.iago!.id,
      modified_user_id: botId,
    },
    {
      event_type: 'user_deactivated',
      acting_user_id: fx.users.hamlet!.id,
      modified_user_id: botId,
    },
  ]);
  t.equal(rows[0]!.extra.full_name, 'Hook Bot');
  const all = JSON.stringify(rows);
  t.notOk(all.includes('s3cr3t'), 'the endpoint URL (which may hold a credential) is left out');
  t.notOk(all.includes(created.api_key as string), 'so is the key');

  // The admin tool lists the realm's bots, through the running server, without their keys.
  const listed = await manage(dataDir, ['bots', '--realm', '']);
  t.equal(listed.status, 0, listed.stderr);
  const listedBots = listed.json.bots as Record<string, unknown>[];
  t.match(
    listedBots.find((b) => b.email === 'notification-bot@zulip.com'),
    { kind: 'generic', owner: null, is_active: true },
    'the system bots, without an owner',
  );
  t.match(
    listedBots.find((b) => b.user_id === botId),
    {
      full_name: 'Hook Bot 2',
      kind: 'outgoing_webhook',
      owner: fx.users.hamlet!.email,
      is_active: false,
      endpoint: 'https://hooks.example.com/T0123/s3cr3t',
    },
  );
  t.equal(listed.json.outgoing_webhook_calls_waiting, 0);
  t.notOk(listed.stdout.includes(created.api_key as string), 'no key in the listing');
});
