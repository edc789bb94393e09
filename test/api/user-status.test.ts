/**
 * User status: setting text and emoji (only what is passed changes), clearing, the emoji checks
 * (the reactions' ones), the deprecated `away` (= not presence_enabled), `user_status` events to
 * every active user, GET /users/{id}/status, and the register snapshot.
 * Reference: zerver/tests/test_user_status.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { eventsSince } from '../helpers/channels.js';
import { events as pollEvents, register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { activeUserIds } from '../helpers/fixtures.js';

t.test('setting, changing and clearing a status', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  const all = activeUserIds(fx);
  const get = async () => {
    const res = await api.get('othello', `users/${hamlet.id}/status`);
    assertMatchesOpenApi(t, '/users/{user_id}/status', 'get', res.body);
    return assertSuccess(t, res).status;
  };
  t.same(await get(), {}, 'nothing set');

  const q = await register(t, api, 'othello', { event_types: ['user_status'] });
  let from = ts.events.length;
  const res = await api.post('hamlet', 'users/me/status', {
    status_text: '  on vacation  ',
    emoji_name: 'car',
  });
  assertMatchesOpenApi(t, '/users/me/status', 'post', res.body);
  assertSuccess(t, res);
  t.same(await get(), {
    status_text: 'on vacation',
    emoji_name: 'car',
    emoji_code: '1f697',
    reaction_type: 'unicode_emoji',
  });
  const evs = eventsSince(ts, from);
  t.same(evs, [
    {
      event: {
        type: 'user_status',
        user_id: hamlet.id,
        status_text: 'on vacation',
        emoji_name: 'car',
        emoji_code: '1f697',
        reaction_type: 'unicode_emoji',
      },
      users: all,
    },
  ]);
  const got = await api.get('othello', 'events', {
    queue_id: q.queue_id,
    last_event_id: q.last_event_id,
    dont_block: true,
  });
  assertMatchesOpenApi(t, '/events', 'get', got.body);
  t.equal((assertSuccess(t, got).events as unknown[]).length, 1);

  // Only what is passed changes.
  from = ts.events.length;
  assertSuccess(t, await api.post('hamlet', 'users/me/status', { status_text: 'back soon' }));
  t.same(await get(), {
    status_text: 'back soon',
    emoji_name: 'car',
    emoji_code: '1f697',
    reaction_type: 'unicode_emoji',
  });
  t.same(eventsSince(ts, from)[0]!.event, {
    type: 'user_status',
    user_id: hamlet.id,
    status_text: 'back soon',
  });
  // An empty emoji name clears the emoji; empty text clears the text.
  assertSuccess(t, await api.post('hamlet', 'users/me/status', { emoji_name: '' }));
  t.same(await get(), { status_text: 'back soon' });
  assertSuccess(t, await api.post('hamlet', 'users/me/status', { status_text: '' }));
  t.same(await get(), {});

  // Explicit code and type; custom-emoji-free realm; the extra emoji.
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/status', {
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: 'service_extra_emoji',
    }),
  );
  t.same(await get(), {
    emoji_name: 'zulip',
    emoji_code: 'zulip',
    reaction_type: 'service_extra_emoji',
  });
  await pollEvents(t, api, 'othello', q.queue_id, q.last_event_id, true);
});

t.test('refusals', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const post = (p: Record<string, unknown>) => api.post('hamlet', 'users/me/status', p);
  assertError(t, await post({}), 'Client did not pass any new values.');
  assertError(
    t,
    await post({ status_text: 'x'.repeat(61) }),
    'status_text is too long (limit: 60 characters)',
  );
  // Characters are code points, as the reference counts: 60 emoji are 120 UTF-16 units.
  assertSuccess(t, await post({ status_text: '\u{1F697}'.repeat(60) }), '60 emoji');
  assertError(
    t,
    await post({ status_text: '\u{1F697}'.repeat(61) }),
    'status_text is too long (limit: 60 characters)',
  );
  assertSuccess(t, await post({ status_text: ` ${'x'.repeat(60)} ` }), '60 after trimming');
  // Nothing the status is made of: that comes first.
  assertError(t, await post({ emoji_code: '1f697' }), 'Client did not pass any new values.');
  assertError(
    t,
    await post({ status_text: 'x', reaction_type: 'unicode_emoji' }),
    'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
  );
  assertError(t, await post({ emoji_name: 'invalid' }), "Emoji 'invalid' does not exist");
  assertError(t, await post({ emoji_name: 'car', emoji_code: 'ffff' }), 'Invalid emoji code.');
  assertError(t, await post({ emoji_name: 'smile', emoji_code: '1f697' }), 'Invalid emoji name.');
  assertError(
    t,
    await post({ emoji_name: 'car', emoji_code: '1f697', reaction_type: 'other' }),
    'Invalid emoji type.',
  );
  assertError(
    t,
    await post({ emoji_name: 'car', emoji_code: '999', reaction_type: 'realm_emoji' }),
    'Invalid custom emoji.',
  );
  assertError(t, await post({ away: 'maybe' }), 'away is not valid JSON', {
    code: 'INVALID_JSON',
  });
  assertError(t, await api.get('hamlet', 'users/99999/status'), 'No such user');
  // Nothing was stored by a refused request.
  const status = assertSuccess(t, await api.get('hamlet', `users/${fx.users.hamlet!.id}/status`));
  t.same(status.status, { status_text: 'x'.repeat(60) });
});

t.test('away is the presence_enabled setting; register user_status', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!;
  const othello = fx.users.othello!;
  const from = ts.events.length;
  assertSuccess(t, await api.post('hamlet', 'users/me/status', { away: true }));
  const types = eventsSince(ts, from).map((e) => e.event.type);
  t.ok(types.includes('user_settings'), 'the setting changed');
  t.ok(types.includes('presence'), 'shown offline');
  t.same(eventsSince(ts, from).find((e) => e.event.type === 'user_status')!.event, {
    type: 'user_status',
    user_id: hamlet.id,
    away: true,
  });
  const settings = await register(t, api, 'hamlet', { fetch_event_types: ['user_settings'] });
  t.equal((settings.body.user_settings as { presence_enabled: boolean }).presence_enabled, false);
  t.same(assertSuccess(t, await api.get('othello', `users/${hamlet.id}/status`)).status, {
    away: true,
  });

  assertSuccess(t, await api.post('othello', 'users/me/status', { status_text: 'busy' }));
  const reg = await register(t, api, 'cordelia', { fetch_event_types: ['user_status'] });
  assertMatchesOpenApi(t, '/register', 'post', reg.body, { allowExtra: REGISTER_SPEC_EXTRAS });
  t.same(reg.body.user_status, {
    [hamlet.id]: { away: true },
    [othello.id]: { status_text: 'busy' },
  });
  assertSuccess(t, await api.post('hamlet', 'users/me/status', { away: false }));
  const after = await register(t, api, 'cordelia', { fetch_event_types: ['user_status'] });
  t.same(after.body.user_status, { [othello.id]: { status_text: 'busy' } });
});
