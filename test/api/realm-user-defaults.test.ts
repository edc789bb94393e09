/**
 * PATCH /realm/user_settings_defaults: administrators only; values checked as PATCH /settings
 * checks them; one `realm_user_settings_defaults` event per changed value, to every active user;
 * the register snapshot; accounts created afterwards start from the realm's defaults.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { eventsSince } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { activeUserIds } from '../helpers/fixtures.js';

t.test('realm defaults for new users', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const all = activeUserIds(fx);
  const patch = (who: string, p: Record<string, unknown>) =>
    api.patch(who, 'realm/user_settings_defaults', p);

  assertError(
    t,
    await patch('hamlet', { left_side_userlist: true }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await patch('shiva', { left_side_userlist: true }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );

  const from = ts.events.length;
  const res = await patch('iago', {
    left_side_userlist: true,
    web_home_view: 'recent_topics',
    color_scheme: 2,
    enter_sends: false, // the current value: no event
  });
  assertMatchesOpenApi(t, '/realm/user_settings_defaults', 'patch', res.body);
  assertSuccess(t, res);
  const ev = (property: string, value: unknown) => ({
    event: { type: 'realm_user_settings_defaults', op: 'update', property, value },
    users: all,
  });
  // One event per changed value (in the order the settings are listed), to every active user.
  t.same(eventsSince(ts, from), [
    ev('color_scheme', 2),
    ev('web_home_view', 'recent_topics'),
    ev('left_side_userlist', true),
  ]);
  const reg = await register(t, api, 'hamlet', {
    fetch_event_types: ['realm_user_settings_defaults'],
  });
  assertMatchesOpenApi(t, '/register', 'post', reg.body, { allowExtra: REGISTER_SPEC_EXTRAS });
  t.match(reg.body.realm_user_settings_defaults, {
    left_side_userlist: true,
    web_home_view: 'recent_topics',
    color_scheme: 2,
    enter_sends: false,
  });
  // Existing users keep their settings.
  const mine = await register(t, api, 'hamlet', { fetch_event_types: ['user_settings'] });
  t.match(mine.body.user_settings, { left_side_userlist: false, web_home_view: 'inbox' });

  // A new account starts from the realm's defaults.
  const created = assertSuccess(
    t,
    await api.post('iago', 'users', {
      email: 'newbie@zulip.com',
      password: 'a long password',
      full_name: 'New Bie',
    }),
  );
  const rows = ts.server.store.users.byId(created.user_id as number)!;
  const newbie = { email: 'newbie@zulip.com', api_key: rows.api_key };
  const theirs = assertSuccess(
    t,
    await api.post(newbie, 'register', { fetch_event_types: ['user_settings'] }),
  );
  t.match(theirs.user_settings, {
    left_side_userlist: true,
    web_home_view: 'recent_topics',
    color_scheme: 2,
  });

  // Back to the server's default: stored as no override.
  assertSuccess(t, await patch('iago', { left_side_userlist: false }));
  t.notOk('left_side_userlist' in JSON.parse(ts.server.store.realmUserDefaults.get(fx.realmId)));
});

t.test('values are checked as PATCH /settings checks them', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const patch = (p: Record<string, unknown>) =>
    api.patch('iago', 'realm/user_settings_defaults', p);
  assertError(t, await patch({ color_scheme: 7 }), 'Invalid color_scheme');
  assertError(t, await patch({ web_home_view: 'nowhere' }), 'Invalid web_home_view');
  assertError(
    t,
    await patch({ left_side_userlist: 'yes' }),
    'left_side_userlist is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  assertError(t, await patch({ notification_sound: 'boom' }), "Invalid notification sound 'boom'");
  assertError(
    t,
    await patch({ email_notifications_batching_period_seconds: -1 }),
    'Invalid email batching period: -1 seconds',
  );
  const before = ts.events.length;
  // Settings this endpoint does not take are ignored, as unknown parameters.
  const res = await patch({ default_language: 'de' });
  t.same(assertSuccess(t, res).ignored_parameters_unsupported, ['default_language']);
  t.equal(ts.events.length, before, 'nothing changed');
});
