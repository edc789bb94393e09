/**
 * POST /typing: direct typing fan-out (participants who receive typing notifications), channel
 * typing validation and capability filtering, and refusals.
 * Reference tests: zerver/tests/test_typing.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { events, register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { channelTypingEvent } from '../../src/lib/typing.js';

/** No settings endpoint exists yet: set a personal setting as a later PATCH /settings would. */
function setUserSetting(s: TestServer, who: string, settings: Record<string, unknown>): void {
  const { store, realms } = s.server.context;
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

t.test('channel typing: validation, and an unknown channel', async (t) => {
  const s = await startServer(t);
  const { api } = s;
  for (const type of ['stream', 'channel']) {
    const res = await api.post('hamlet', 'typing', { type, op: 'start', topic: 'lunch' });
    assertError(t, res, 'Missing channel ID');
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
      {
        code: 'INVALID_JSON',
      },
    );
    // No channel exists before the channels area merges: every id is unknown.
    assertError(
      t,
      await api.post('hamlet', 'typing', { type, op: 'start', stream_id: 1, topic: 'lunch' }),
      'Invalid channel ID',
    );
  }
  setUserSetting(s, 'hamlet', { send_stream_typing_notifications: false });
  assertError(
    t,
    await api.post('hamlet', 'typing', { type: 'channel', op: 'start', stream_id: 1, topic: 'x' }),
    'User has disabled typing notifications for channel messages',
  );
});

t.test('channel typing events reach only queues with stream_typing_notifications', async (t) => {
  const { api, server, fx } = await startServer(t);
  const capable = await register(t, api, 'othello', {
    client_capabilities: { notification_settings_null: false, stream_typing_notifications: true },
  });
  const legacy = await register(t, api, 'othello');
  const sub = (who: string) => ({
    user_id: fx.users[who]!.id,
    email: `${who}@zulip.com`,
    is_active: true,
    receives_typing_notifications: true,
  });
  const ev = channelTypingEvent(sub('hamlet'), 'start', 7, '', [sub('hamlet'), sub('othello')])!;
  server.context.publisher.publish(fx.realmId, [ev]);
  const got = assertSuccess(
    t,
    await api.get('othello', 'events', {
      queue_id: capable.queue_id,
      last_event_id: -1,
      dont_block: true,
    }),
  );
  assertMatchesOpenApi(t, '/events', 'get', got);
  t.match(got.events, [
    { type: 'typing', message_type: 'stream', stream_id: 7, topic: 'general chat' },
  ]);
  t.same(await events(t, api, 'othello', legacy.queue_id, -1, true), []);
});
