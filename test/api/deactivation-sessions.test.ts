/**
 * Nothing lingers after a deactivation (issue 10.5): deactivating a user (DELETE /users/{id}) or
 * the organization (POST /realm/deactivate) answers their held polls, closes their WebSockets
 * with 4003 (docs/events.md) and deletes their queues; their next request is refused by
 * authentication. Reference: actions/users.py do_deactivate_user, actions/realm_settings.py
 * do_deactivate_realm (whose `realm` `deactivated` event flushes held polls).
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { mustOpen, poll, register, until, type Ev } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test('a deactivated user: held poll answered, socket closed, queues gone', async (t) => {
  const { api, server, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const held = await register(t, api, 'hamlet');
  const streamed = await register(t, api, 'hamlet');
  const other = await register(t, api, 'othello');
  const pending = poll(api, 'hamlet', held.queue_id, -1);
  await until(() => server.context.queues.consumers().waiting === 1, 'the poll is held');
  const ws = await mustOpen(t, server.url, hamlet, {
    queue_id: streamed.queue_id,
    last_event_id: -1,
  });
  await until(() => server.context.queues.consumers().streaming === 1, 'the socket is attached');

  assertSuccess(t, await api.delete('iago', `users/${hamlet.id}`), 'deactivate');
  const answer = await pending;
  assertSuccess(t, answer, 'the held poll is answered');
  t.same(answer.body.events, [], 'with what it had');
  t.match(await ws.closed, { code: 4003, reason: 'deactivated' }, 'the socket is closed: 4003');
  t.equal(server.context.queues.forUser(hamlet.id).length, 0, 'every queue of the user is gone');
  assertError(t, await poll(api, 'hamlet', held.queue_id, -1), 'Account is deactivated', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  const seen = (await poll(api, 'othello', other.queue_id, -1, true)).body.events as Ev[];
  t.match(
    seen.find((e) => e.type === 'realm_user'),
    { op: 'update', person: { user_id: hamlet.id, is_active: false } },
    'the others learn it, and keep their queues',
  );
});

t.test('a deactivated organization: everyone flushed, sockets closed, queues gone', async (t) => {
  const { api, server, fx } = await startServer(t);
  assertError(t, await api.post('iago', 'realm/deactivate'), 'Must be an organization owner', {
    code: 'UNAUTHORIZED_PRINCIPAL',
  });
  const held = await register(t, api, 'hamlet');
  const streamed = await register(t, api, 'othello');
  const pending = poll(api, 'hamlet', held.queue_id, -1);
  await until(() => server.context.queues.consumers().waiting === 1, 'the poll is held');
  const ws = await mustOpen(t, server.url, fx.users.othello!, {
    queue_id: streamed.queue_id,
    last_event_id: -1,
  });
  await until(() => server.context.queues.consumers().streaming === 1, 'the socket is attached');

  const res = await api.post('desdemona', 'realm/deactivate');
  assertSuccess(t, res, 'the owner deactivates it');
  const answer = await pending;
  assertSuccess(t, answer, 'the held poll is answered');
  assertMatchesOpenApi(t, '/events', 'get', answer.body);
  t.match(
    answer.body.events,
    [{ type: 'realm', op: 'deactivated', realm_id: fx.realmId }],
    'with the deactivation event, as the reference',
  );
  const closed = await ws.closed;
  t.equal(closed.code, 4003, 'the socket is closed: 4003');
  t.equal(server.context.queues.size, 0, 'every queue of the realm is gone');
  assertError(t, await api.get('hamlet', 'users/me'), 'This organization has been deactivated', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  assertError(t, await api.post('othello', 'register'), 'This organization has been deactivated', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
});
