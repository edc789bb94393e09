/**
 * Presence: reporting (POST /users/me/presence), the modern (`last_update_id`, slim) and legacy
 * formats, history limits, one user's presence, the realm's presence, `presence` events (only when
 * what clients show changes: a first report, or coming back online), invisible mode
 * (`presence_enabled` off), the realm's `presence_disabled`, the register snapshot, and the batched
 * write to the store. The clock is the test's (`clock`, the server's), so no test sleeps.
 * Reference: zerver/tests/test_presence.py.
 */
import t, { type Test } from 'tap';
import { insertUserRow } from '../../src/mutations/users.js';
import { Store } from '../../src/storage/store.js';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { eventsSince, setRealmSettings } from '../helpers/channels.js';
import { events as pollEvents, register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { TestClock } from '../helpers/clock.js';
import { activeUserIds } from '../helpers/fixtures.js';

async function start(t: Test, opts: Parameters<typeof startServer>[1] = {}) {
  const clock = new TestClock();
  const ts = await startServer(t, { clock: clock.now, ...opts });
  return { ts, clock };
}

async function ping(
  t: Test,
  api: ApiClient,
  who: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await api.post(who, 'users/me/presence', params);
  assertMatchesOpenApi(t, '/users/me/presence', 'post', res.body);
  return assertSuccess(t, res, `presence of ${who}`);
}

function presenceEvents(ts: TestServer, from: number) {
  return eventsSince(ts, from).filter((e) => e.event.type === 'presence');
}

function activeIds(ts: TestServer): number[] {
  return activeUserIds(ts.fx);
}

t.test('bad reports are refused', async (t) => {
  const { ts } = await start(t);
  const { api } = ts;
  assertError(t, await api.post('hamlet', 'users/me/presence', {}), "Missing 'status' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(
    t,
    await api.post('hamlet', 'users/me/presence', { status: 'away' }),
    'Invalid status: away',
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/presence', { status: 'active', ping_only: 'yes' }),
    'ping_only is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/presence', { status: 'active', last_update_id: 'x' }),
    'last_update_id is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  t.same(presenceEvents(ts, 0), [], 'no event');
});

t.test('bots have no presence', async (t) => {
  const { ts } = await start(t);
  const { api, fx, server } = ts;
  const { realms } = server.context;
  const store = server.store;
  const apiKey = 'P'.repeat(32);
  const botId = store.transaction(() =>
    insertUserRow(store, fx.realmId, {
      email: 'presence-bot@zulip.com',
      full_name: 'Presence Bot',
      password_hash: null,
      api_key: apiKey,
      role: 400,
      is_bot: true,
      bot_type: 1,
      bot_owner_id: fx.users.hamlet!.id,
      now: Math.floor(Date.now() / 1000),
      waitingPeriodDays: 0,
    }),
  );
  realms.get(fx.realmId)!.view.reloadUser(botId);
  assertError(
    t,
    await api.post({ email: 'presence-bot@zulip.com', api_key: apiKey }, 'users/me/presence', {
      status: 'active',
    }),
    'This endpoint does not accept bot requests.',
  );
  assertError(
    t,
    await api.get('hamlet', `users/${botId}/presence`),
    'Presence is not supported for bot users.',
  );
});

t.test('modern protocol: first report, routine pings, incremental fetches', async (t) => {
  const { ts, clock } = await start(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  const t0 = clock.seconds;

  let from = ts.events.length;
  const first = await ping(t, api, 'hamlet', { status: 'active', last_update_id: -1 });
  t.same(first.presences, {
    [hamlet.id]: { active_timestamp: t0, idle_timestamp: t0 },
  });
  t.equal(first.server_timestamp, t0);
  const id1 = first.presence_last_update_id as number;
  t.ok(id1 >= 1, 'a sequence number');
  // A first report is news for everyone.
  const evs = presenceEvents(ts, from);
  t.equal(evs.length, 1);
  t.same(evs[0]!.users, activeIds(ts), 'to every active user');
  t.same(evs[0]!.event, {
    type: 'presence',
    user_id: hamlet.id,
    email: hamlet.email,
    server_timestamp: t0,
    presence: { website: { client: 'website', status: 'active', timestamp: t0, pushable: false } },
  });

  // Nothing changed since id1: nothing returned, same id.
  const again = await ping(t, api, 'othello', { status: 'idle', ping_only: true });
  t.same(again, { result: 'success', msg: '' }, 'ping_only: no presence data');
  const othello = fx.users.othello!;
  const inc = await ping(t, api, 'hamlet', { status: 'active', last_update_id: id1 });
  t.same(Object.keys(inc.presences as object), [String(othello.id)], 'only what changed');
  t.same(
    (inc.presences as Record<string, unknown>)[othello.id],
    {
      active_timestamp: ts.server.store.users.byId(othello.id)!.date_joined,
      idle_timestamp: t0,
    },
    'idle, never active: active_timestamp is when the user joined',
  );
  const id2 = inc.presence_last_update_id as number;
  t.ok(id2 > id1);

  // Routine pings (several windows, every minute) change nothing clients show: no event.
  from = ts.events.length;
  clock.advance(30);
  const same = await ping(t, api, 'hamlet', { status: 'active', last_update_id: id2 });
  t.same(same.presences, {}, 'a ping within 55 s stores nothing');
  t.equal(same.presence_last_update_id, id2, 'the id the client sent back');
  clock.advance(30);
  const later = await ping(t, api, 'hamlet', { status: 'active', last_update_id: id2 });
  t.same(later.presences, {
    [hamlet.id]: { active_timestamp: t0 + 60, idle_timestamp: t0 + 60 },
  });
  t.ok((later.presence_last_update_id as number) > id2);
  clock.advance(60);
  await ping(t, api, 'hamlet', { status: 'idle', ping_only: true });
  t.same(presenceEvents(ts, from), [], 'no event for pings of an online user');

  // Back after a long absence: everyone is told at once.
  clock.advance(600);
  from = ts.events.length;
  await ping(t, api, 'hamlet', { status: 'active', ping_only: true });
  const back = presenceEvents(ts, from);
  t.equal(back.length, 1, 'coming back online is an event');
  t.match(back[0]!.event, {
    user_id: hamlet.id,
    presence: { website: { status: 'active', timestamp: clock.seconds } },
  });
  // Idle after a long absence is no news.
  clock.advance(600);
  from = ts.events.length;
  await ping(t, api, 'hamlet', { status: 'idle', ping_only: true });
  t.same(presenceEvents(ts, from), []);
});

t.test('legacy format, history limit, slim_presence', async (t) => {
  const { ts, clock } = await start(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  const othello = fx.users.othello!;
  const t0 = clock.seconds;
  await ping(t, api, 'othello', { status: 'idle', ping_only: true }); // idle: never active
  clock.advance(20 * 86400);
  const now = clock.seconds;
  const legacy = await ping(t, api, 'hamlet', { status: 'active' });
  t.same(
    legacy.presences,
    {
      [hamlet.email]: {
        aggregated: { client: 'website', status: 'active', timestamp: now },
        website: { client: 'website', status: 'active', timestamp: now, pushable: false },
      },
    },
    'othello, 20 days ago, is past the 14-day default',
  );
  t.equal(legacy.presence_last_update_id, 2);

  const slim = await ping(t, api, 'hamlet', {
    status: 'active',
    slim_presence: true,
    history_limit_days: 30,
  });
  const othelloJoined = ts.server.store.users.byId(othello.id)!.date_joined;
  t.same(
    slim.presences,
    {
      [hamlet.id]: { active_timestamp: now, idle_timestamp: now },
      [othello.id]: { active_timestamp: othelloJoined, idle_timestamp: t0 },
    },
    'never active: active_timestamp is when the user joined',
  );

  // A legacy user idle for more than two minutes shows its last connection, idle.
  clock.advance(180);
  const realm = await api.get('iago', 'realm/presence');
  assertMatchesOpenApi(t, '/realm/presence', 'get', realm.body);
  const body = assertSuccess(t, realm);
  t.same(body.presences, {
    [hamlet.email]: {
      aggregated: { client: 'website', status: 'idle', timestamp: now },
      website: { client: 'website', status: 'idle', timestamp: now, pushable: false },
    },
  });
  t.equal(body.server_timestamp, clock.seconds);
});

t.test("one user's presence", async (t) => {
  const { ts, clock } = await start(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  assertError(
    t,
    await api.get('othello', 'users/hamlet@zulip.com/presence'),
    'No presence data for hamlet@zulip.com',
  );
  assertError(
    t,
    await api.get('othello', `users/${hamlet.id}/presence`),
    `No presence data for ${hamlet.id}`,
  );
  assertError(t, await api.get('othello', 'users/nobody@zulip.com/presence'), 'No such user');
  assertError(t, await api.get('othello', 'users/99999/presence'), 'No such user');
  const t0 = clock.seconds;
  await ping(t, api, 'hamlet', { status: 'active', ping_only: true });
  for (const key of [hamlet.email, String(hamlet.id)]) {
    const res = await api.get('othello', `users/${key}/presence`);
    assertMatchesOpenApi(t, '/users/{user_id_or_email}/presence', 'get', res.body);
    t.same(assertSuccess(t, res).presence, {
      website: { status: 'active', timestamp: t0 },
      aggregated: { status: 'active', timestamp: t0 },
    });
  }
  clock.advance(201);
  const res = await api.get('othello', `users/${hamlet.email}/presence`);
  t.same(
    assertSuccess(t, res).presence,
    {
      website: { status: 'idle', timestamp: t0 },
      aggregated: { status: 'offline', timestamp: t0 },
    },
    'past the offline threshold',
  );
});

t.test('invisible mode: presence_enabled off shows the user offline', async (t) => {
  const { ts, clock } = await start(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  await ping(t, api, 'hamlet', { status: 'active', ping_only: true });
  const q = await register(t, api, 'othello', { event_types: ['presence'], slim_presence: true });
  let from = ts.events.length;
  assertSuccess(t, await api.patch('hamlet', 'settings', { presence_enabled: false }));
  const evs = presenceEvents(ts, from);
  t.equal(evs.length, 1, 'everyone is told at once');
  t.same(evs[0]!.users, activeIds(ts));
  const got = await pollEvents(t, api, 'othello', q.queue_id, q.last_event_id, true);
  t.equal(got.length, 1);
  t.notOk('email' in got[0]!, 'slim_presence queues get no email');
  const website = (got[0]!.presence as { website: { status: string; timestamp: number } }).website;
  // Pushed back past the offline threshold (200 s) by the settings change's own clock.
  t.ok(clock.seconds - website.timestamp >= 199, 'shown offline');

  // Reports are not recorded while invisible.
  from = ts.events.length;
  clock.advance(600);
  const res = await ping(t, api, 'hamlet', { status: 'active', last_update_id: -1 });
  const mine = (
    res.presences as Record<string, { active_timestamp: number; idle_timestamp: number }>
  )[hamlet.id]!;
  t.ok(clock.seconds - mine.idle_timestamp > 200, 'still offline');
  t.same(presenceEvents(ts, from), []);
  const one = assertSuccess(t, await api.get('othello', `users/${hamlet.id}/presence`));
  t.match(one.presence, { aggregated: { status: 'offline' } });

  // Visible again: active now, announced.
  from = ts.events.length;
  assertSuccess(t, await api.patch('hamlet', 'settings', { presence_enabled: true }));
  t.equal(presenceEvents(ts, from).length, 1);
});

t.test('presence disabled in the realm; large realms get no online events', async (t) => {
  const { ts } = await start(t);
  const { api } = ts;
  setRealmSettings(ts, { presence_disabled: true });
  const from = ts.events.length;
  const res = await ping(t, api, 'hamlet', { status: 'active', last_update_id: -1 });
  t.same(res.presences, {});
  t.equal(res.presence_last_update_id, -1);
  t.same(presenceEvents(ts, from), [], 'no event');
  const reg = await register(t, api, 'othello', { fetch_event_types: ['presence'] });
  t.same(reg.body.presences, {});

  const { ts: big } = await start(t, { presenceEventUserLimit: 3 });
  const before = big.events.length;
  await ping(t, big.api, 'hamlet', { status: 'active', ping_only: true });
  t.same(presenceEvents(big, before), [], 'more active users than the limit: no event');
});

t.test('register snapshot', async (t) => {
  const { ts, clock } = await start(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  const t0 = clock.seconds;
  await ping(t, api, 'hamlet', { status: 'active', ping_only: true });
  const slim = await register(t, api, 'othello', {
    fetch_event_types: ['presence'],
    slim_presence: true,
  });
  t.same(slim.body.presences, { [hamlet.id]: { active_timestamp: t0, idle_timestamp: t0 } });
  t.equal(slim.body.presence_last_update_id, 1);
  t.equal(slim.body.server_timestamp, t0);
  const legacy = await register(t, api, 'othello', { fetch_event_types: ['presence'] });
  t.same(Object.keys(legacy.body.presences as object), [hamlet.email]);
  clock.advance(20 * 86400);
  const limited = await register(t, api, 'othello', {
    fetch_event_types: ['presence'],
    slim_presence: true,
  });
  t.same(limited.body.presences, {}, '14 days by default');
  t.equal(limited.body.presence_last_update_id, -1);
  const longer = await register(t, api, 'othello', {
    fetch_event_types: ['presence'],
    slim_presence: true,
    presence_history_limit_days: 30,
  });
  t.same(Object.keys(longer.body.presences as object), [String(hamlet.id)]);
});

t.test('presence reaches the store in batches and when the server closes', async (t) => {
  const { ts, clock } = await start(t, { presenceFlushMs: 60_000 });
  const { api, fx, server, dataDir } = ts;
  const { realms } = server.context;
  const store = server.store;
  await ping(t, api, 'hamlet', { status: 'active', ping_only: true });
  await ping(t, api, 'othello', { status: 'idle', ping_only: true });
  t.same(store.presence.byRealm(fx.realmId), [], 'not written on each report');
  const flushed = await realms.get(fx.realmId)!.ask('presence.flush', {});
  t.same(flushed, { written: 2 }, 'one batch');
  t.equal(store.presence.byRealm(fx.realmId).length, 2);
  t.same(await realms.get(fx.realmId)!.ask('presence.flush', {}), { written: 0 });
  clock.advance(120);
  await ping(t, api, 'hamlet', { status: 'active', ping_only: true });
  await server.close();
  const reopened = Store.open(dataDir, { backgroundCheckpoint: false });
  t.teardown(() => reopened.close());
  const row = reopened.presence.byRealm(fx.realmId).find((r) => r.user_id === fx.users.hamlet!.id);
  t.equal(row?.last_active_time, clock.seconds, 'the last change was written at close');
});

t.test('a brand-new user whose first report is idle: active_timestamp is the join', async (t) => {
  // As the reference (lib/presence.py user_presence_datetime_with_date_joined_default): a user
  // never reported active has no last active time, and every format stands in their join date
  // for it, so a user who joined moments ago shows as active (a current active_timestamp) until
  // the offline threshold has passed since joining, whatever they report. Then only their
  // connection (idle_timestamp) stays current.
  const { ts, clock } = await start(t);
  const { api, fx } = ts;
  const created = assertSuccess(
    t,
    await api.post('iago', 'users', {
      email: 'newbie@zulip.com',
      password: 'pw-123456',
      full_name: 'New Person',
    }),
  );
  const newbieId = created.user_id as number;
  const joined = ts.server.store.users.byId(newbieId)!.date_joined;
  t.equal(joined, clock.seconds, 'joined now (the server’s clock)');
  const key = assertSuccess(
    t,
    await api.post(null, 'fetch_api_key', { username: 'newbie@zulip.com', password: 'pw-123456' }),
  ).api_key as string;
  const newbie = { email: 'newbie@zulip.com', api_key: key };
  const idle = async () => {
    const res = await api.post(newbie, 'users/me/presence', { status: 'idle', ping_only: true });
    assertSuccess(t, res, 'newbie reports idle');
  };

  const first = await ping(t, api, 'hamlet', { status: 'active', last_update_id: -1 });
  const fetched = first.presence_last_update_id as number;
  clock.advance(30);
  let from = ts.events.length;
  await idle();
  const t1 = clock.seconds;
  const seen = await ping(t, api, 'hamlet', { status: 'active', last_update_id: fetched });
  t.same(
    (seen.presences as Record<string, unknown>)[newbieId],
    { active_timestamp: joined, idle_timestamp: t1 },
    'modern: active_timestamp is the join (30 s ago), idle_timestamp the report',
  );
  const evs = presenceEvents(ts, from);
  t.equal(evs.length, 1, 'a first report is an event');
  t.same(
    evs[0]!.event.presence,
    { website: { client: 'website', status: 'active', timestamp: joined, pushable: false } },
    'the event says active since the join, as the reference’s',
  );
  t.ok(
    evs[0]!.users.includes(newbieId) && evs[0]!.users.includes(fx.users.hamlet!.id),
    'to the realm’s users',
  );
  const one = assertSuccess(t, await api.get('othello', `users/${newbieId}/presence`));
  t.match(
    one.presence,
    { aggregated: { status: 'active', timestamp: joined } },
    'legacy: active within two minutes of the join',
  );

  // Idle reports every minute: past the threshold since joining, the join is no longer current.
  from = ts.events.length;
  for (let i = 0; i < 4; i++) {
    clock.advance(60);
    await idle();
  }
  const now = clock.seconds;
  t.ok(now - joined > 200, 'the offline threshold (200 s) has passed since the join');
  t.same(presenceEvents(ts, from), [], 'idle reports of a connected user: no event');
  const later = await ping(t, api, 'hamlet', { status: 'active', last_update_id: fetched });
  const rec = (
    later.presences as Record<string, { active_timestamp: number; idle_timestamp: number }>
  )[newbieId]!;
  t.equal(rec.active_timestamp, joined, 'still the join: never reported active');
  t.ok(now - rec.idle_timestamp < 200, 'connected: shown idle, no longer active');
  const legacy = assertSuccess(t, await api.get('othello', `users/${newbieId}/presence`));
  t.match(legacy.presence, { aggregated: { status: 'idle' } }, 'legacy: idle');
});

t.test('deactivated, then reactivated: offline from the deactivation on', async (t) => {
  const { ts, clock } = await start(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  // Hamlet is deactivated while active (his sessions and queues end), and is reactivated soon
  // after, within the offline threshold: he has not been active since, so he is offline.
  await ping(t, api, 'hamlet', { status: 'active', ping_only: true });
  clock.advance(5);
  assertSuccess(t, await api.delete('iago', `users/${hamlet.id}`));
  clock.advance(5);
  // A client fetches while he is deactivated: its position goes past his record (not in it).
  const during = await ping(t, api, 'othello', { status: 'active', last_update_id: -1 });
  t.notOk(String(hamlet.id) in (during.presences as object), 'no presence while deactivated');
  clock.advance(5);
  assertSuccess(t, await api.post('iago', `users/${hamlet.id}/reactivate`));
  clock.advance(5);
  const one = assertSuccess(t, await api.get('othello', `users/${hamlet.id}/presence`));
  t.match(one.presence, { aggregated: { status: 'offline' } }, 'his presence: offline');
  const realm = assertSuccess(t, await api.get('othello', 'realm/presence'));
  const legacy = (realm.presences as Record<string, { aggregated: { status: string } }>)[
    hamlet.email
  ]!;
  t.equal(legacy.aggregated.status, 'idle', "the realm's presence: not active");
  const snap = assertSuccess(
    t,
    await api.post('othello', 'register', {
      slim_presence: true,
      fetch_event_types: '["presence"]',
    }),
  );
  const times = (snap.presences as Record<string, { active_timestamp: number }>)[hamlet.id]!;
  t.ok(clock.seconds - times.active_timestamp > 200, 'a new snapshot: offline', {
    age: clock.seconds - times.active_timestamp,
  });
  // The client that fetched while he was deactivated gets his record in its next fetch.
  const next = await ping(t, api, 'othello', {
    status: 'active',
    last_update_id: during.presence_last_update_id,
  });
  const again = (next.presences as Record<string, { active_timestamp: number }>)[hamlet.id];
  t.ok(again && clock.seconds - again.active_timestamp > 200, 'the next fetch brings it', {
    again,
  });
  // An old record (past the threshold already) keeps its times.
  clock.advance(600);
  const before = assertSuccess(t, await api.get('othello', `users/${hamlet.id}/presence`));
  assertSuccess(t, await api.delete('iago', `users/${hamlet.id}`));
  assertSuccess(t, await api.post('iago', `users/${hamlet.id}/reactivate`));
  const after = assertSuccess(t, await api.get('othello', `users/${hamlet.id}/presence`));
  t.same(after.presence, before.presence, 'an offline user: unchanged');
});
