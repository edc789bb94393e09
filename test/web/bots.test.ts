/**
 * web/state/bots.ts with a fake API: which bots a member and an administrator see (never the
 * system bots), a new bot's fields checked before sending, the key shown once (at creation and
 * regeneration, gone after dismissing or the next action), deactivation and reactivation, a
 * failure kept for the view; the outbox's list and labels.
 */
import t from 'tap';
import {
  BotsState,
  BotType,
  kindName,
  newBotProblem,
  OutboxState,
  relativeTime,
  webhookUrl,
  type Request,
} from '../../web/state/bots.js';
import { isSystemBot } from '../../web/state/profile.js';

type Call = { method: string; path: string; params: Record<string, unknown> | undefined };

type FakeUser = {
  user_id: number;
  full_name: string;
  email: string;
  is_bot: boolean;
  is_active: boolean;
  bot_type: number | null;
  bot_owner_id?: number | null;
};

/** A tiny server: users, bots with keys, the endpoints the state calls. */
function fakeServer() {
  const users: FakeUser[] = [
    {
      user_id: 1,
      full_name: 'Ann',
      email: 'ann@x',
      is_bot: false,
      is_active: true,
      bot_type: null,
    },
    {
      user_id: 2,
      full_name: 'Bob',
      email: 'bob@x',
      is_bot: false,
      is_active: true,
      bot_type: null,
    },
    {
      user_id: 3,
      full_name: 'Notification Bot',
      email: 'notification-bot@x',
      is_bot: true,
      is_active: true,
      bot_type: 1,
      bot_owner_id: null,
    },
    {
      user_id: 4,
      full_name: 'Bob’s bot',
      email: 'bobs-bot@x',
      is_bot: true,
      is_active: true,
      bot_type: 2,
      bot_owner_id: 2,
    },
  ];
  const calls: Call[] = [];
  let nextKey = 1;
  let fail: string | null = null;
  const request: Request = <T>(
    method: string,
    path: string,
    params?: Record<string, unknown>,
  ): Promise<T> => {
    calls.push({ method, path, params });
    if (fail !== null && method !== 'GET') return Promise.reject(new Error(fail));
    let m: RegExpMatchArray | null;
    let out: unknown;
    if (method === 'GET' && path === '/users') out = { members: structuredClone(users) };
    else if (method === 'POST' && path === '/bots') {
      const id = users.length + 1;
      users.push({
        user_id: id,
        full_name: String(params!.full_name),
        email: `${String(params!.short_name)}-bot@x`,
        is_bot: true,
        is_active: true,
        bot_type: Number(params!.bot_type),
        bot_owner_id: 1,
      });
      out = { user_id: id, api_key: `key${nextKey++}` };
    } else if ((m = /^\/bots\/(\d+)\/api_key\/regenerate$/.exec(path)) && method === 'POST')
      out = { api_key: `key${nextKey++}` };
    else if ((m = /^\/bots\/(\d+)$/.exec(path)) && method === 'DELETE') {
      users.find((u) => u.user_id === Number(m![1]))!.is_active = false;
      out = {};
    } else if ((m = /^\/users\/(\d+)\/reactivate$/.exec(path)) && method === 'POST') {
      users.find((u) => u.user_id === Number(m![1]))!.is_active = true;
      out = {};
    } else return Promise.reject(new Error(`no route ${method} ${path}`));
    return Promise.resolve(out as T);
  };
  return {
    request,
    calls,
    users,
    failWith: (msg: string | null) => {
      fail = msg;
    },
  };
}

t.test(
  'a member sees their own bots; an administrator every bot but the system bots',
  async (t) => {
    const s = fakeServer();
    const ann = new BotsState(s.request, { user_id: 1, role: 400 });
    await ann.load();
    t.ok(ann.loaded);
    t.same(ann.bots, [], 'Ann owns none');
    t.notOk(ann.isAdmin);

    const bob = new BotsState(s.request, { user_id: 2, role: 400 });
    await bob.load();
    t.same(
      bob.bots.map((b) => b.full_name),
      ['Bob’s bot'],
    );
    t.notOk('api_key' in bob.bots[0]!, 'no key is listed');

    const admin = new BotsState(s.request, { user_id: 1, role: 200 });
    t.ok(admin.isAdmin);
    await admin.load();
    t.same(
      admin.bots.map((b) => [b.full_name, b.owner_id, b.bot_type]),
      [['Bob’s bot', 2, BotType.INCOMING_WEBHOOK]],
      'not the Notification Bot',
    );
  },
);

t.test('creating: fields checked first, the key shown once', async (t) => {
  const s = fakeServer();
  const st = new BotsState(s.request, { user_id: 1, role: 400 });
  let changes = 0;
  st.subscribe(() => changes++);
  await st.load();

  t.notOk(await st.create({ full_name: ' ', short_name: 'a', bot_type: 1 }));
  t.equal(st.error, 'Give the bot a name.');
  t.notOk(await st.create({ full_name: 'Hook', short_name: 'hook', bot_type: 3, payload_url: '' }));
  t.match(st.error, /URL/);
  t.equal(
    s.calls.filter((c) => c.method !== 'GET').length,
    0,
    'nothing sent while the fields are wrong',
  );

  t.ok(await st.create({ full_name: 'Deploys', short_name: 'deploys', bot_type: 2 }));
  t.equal(st.error, null);
  t.same(st.revealed, {
    user_id: 5,
    full_name: 'Deploys',
    email: 'deploys-bot@x',
    api_key: 'key1',
    bot_type: 2,
  });
  t.same(s.calls.at(-2), {
    method: 'POST',
    path: '/bots',
    params: { full_name: 'Deploys', short_name: 'deploys', bot_type: 2 },
  });
  t.same(
    st.bots.map((b) => b.full_name),
    ['Deploys'],
    'the list reloaded',
  );
  t.ok(changes > 0, 'the view was told');

  st.dismissKey();
  t.equal(st.revealed, null, 'dismissed: not shown again');

  t.ok(
    await st.create({
      full_name: 'Echo',
      short_name: 'echo',
      bot_type: 3,
      payload_url: 'https://hooks.example.com/echo',
    }),
  );
  t.equal(s.calls.at(-2)!.params!.payload_url, 'https://hooks.example.com/echo');
  t.equal(st.revealed!.api_key, 'key2');

  // The next action hides the key shown.
  await st.deactivate(5);
  t.equal(st.revealed, null);
});

t.test('regenerating, deactivating and reactivating', async (t) => {
  const s = fakeServer();
  const st = new BotsState(s.request, { user_id: 2, role: 400 });
  await st.load();
  await st.regenerateKey(4);
  t.same(st.revealed, {
    user_id: 4,
    full_name: 'Bob’s bot',
    email: 'bobs-bot@x',
    api_key: 'key1',
    bot_type: 2,
  });
  await st.deactivate(4);
  t.equal(st.bots[0]!.is_active, false, 'shown deactivated');
  await st.reactivate(4);
  t.equal(st.bots[0]!.is_active, true);
  t.same(
    s.calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}`),
    ['POST /bots/4/api_key/regenerate', 'DELETE /bots/4', 'POST /users/4/reactivate'],
  );

  s.failWith('Insufficient permission');
  await st.deactivate(4);
  t.equal(st.error, 'Insufficient permission', 'a failure is kept for the view');
  t.equal(st.busy, false);
  t.equal(st.bots[0]!.is_active, true, 'the list still says what the server has');
});

t.test('the sorted list: active bots first, then by name', async (t) => {
  const s = fakeServer();
  const st = new BotsState(s.request, { user_id: 1, role: 100 });
  await st.load();
  await st.create({ full_name: 'Zed', short_name: 'zed', bot_type: 1 });
  await st.create({ full_name: 'Alpha', short_name: 'alpha', bot_type: 1 });
  await st.deactivate(6);
  t.same(
    st.sorted.map((b) => b.full_name),
    ['Bob’s bot', 'Zed', 'Alpha'],
  );
});

t.test('isSystemBot: flagged so, or a bot without an owner', (t) => {
  t.ok(isSystemBot({ is_bot: true, bot_owner_id: null }), 'a bot without an owner (GET /users)');
  t.ok(isSystemBot({ is_bot: true, is_system_bot: true }), 'flagged (cross_realm_bots)');
  t.notOk(isSystemBot({ is_bot: true, bot_owner_id: 3 }), "a user's bot");
  t.notOk(isSystemBot({ is_bot: false }), 'a person');
  t.notOk(isSystemBot({ is_bot: false, bot_owner_id: null }), 'a person, whatever the field');
  t.end();
});

t.test('newBotProblem', (t) => {
  t.plan(5);
  t.equal(newBotProblem({ full_name: 'A', short_name: 'ok.name_1-x', bot_type: 1 }), null);
  t.match(newBotProblem({ full_name: 'A', short_name: 'no spaces', bot_type: 1 }), /username/);
  t.match(newBotProblem({ full_name: 'A', short_name: 'a', bot_type: 9 }), /type/);
  t.equal(
    newBotProblem({ full_name: 'A', short_name: 'a', bot_type: 3, payload_url: 'http://h/x' }),
    null,
  );
  t.match(
    newBotProblem({ full_name: 'A', short_name: 'a', bot_type: 3, payload_url: 'ftp://h/x' }),
    /URL/,
  );
});

t.test('the outbox', async (t) => {
  const mails = [
    {
      id: 7,
      kind: 'invitation',
      recipient: 'dana@example.org',
      subject: 'Join',
      created_at: 1000,
      attempts: 2,
      next_attempt_at: 1600,
      last_error: 'ECONNREFUSED',
    },
  ];
  const calls: unknown[] = [];
  let fail = false;
  const request: Request = <T>(method: string, path: string, params?: Record<string, unknown>) => {
    calls.push([method, path, params]);
    if (fail) return Promise.reject(new Error('Must be an organization administrator'));
    return Promise.resolve({ outgoing_mail_enabled: true, count: 3, mails } as T);
  };
  const o = new OutboxState(request, 1);
  await o.load();
  t.same(calls, [['GET', '/mail/outbox', { limit: 1 }]]);
  t.same(o.mails, mails);
  t.equal(o.count, 3);
  t.ok(o.enabled && o.loaded);
  fail = true;
  await o.load();
  t.equal(o.error, 'Must be an organization administrator');
  t.same(o.mails, mails, 'the last list stays');

  t.equal(kindName('password_reset'), 'Password reset');
  t.equal(kindName('something_new'), 'something_new');
  t.equal(relativeTime(1002, 1000), 'now');
  t.equal(relativeTime(1030, 1000), 'in 30 s');
  t.equal(relativeTime(1600, 1000), 'in 10 min');
  t.equal(relativeTime(1000 - 7200, 1000), '2 h ago');
  t.equal(relativeTime(1000 + 3 * 86400, 1000), 'in 3 d');
});

t.test('an incoming-webhook URL names the integration, the key and the channel by id', (t) => {
  t.equal(
    webhookUrl('https://chat.example.com/', 'github', 'k&y', 12),
    'https://chat.example.com/api/v1/external/github?api_key=k%26y&stream=12',
  );
  t.equal(
    webhookUrl('https://chat.example.com', 'json', 'key', null),
    'https://chat.example.com/api/v1/external/json?api_key=key',
    'without a channel: to the owner as a direct message',
  );
  t.end();
});
