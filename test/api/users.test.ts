/**
 * Users: create (who may, and the refusals), get one, get all, get self; fetch_api_key.
 * Responses are checked against the OpenAPI description.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { activeUserIds } from '../helpers/fixtures.js';
import { useExternalAvatars } from '../helpers/realms.js';

t.test('POST /users: only administrators with can_create_users', async (t) => {
  const { api } = await startServer(t);
  const params = (who: string) => ({
    email: `new-by-${who}@zulip.com`,
    password: 'pw-123456',
    full_name: `New ${who}`,
  });
  // iago: administrator with can_create_users.
  const ok = await api.post('iago', 'users', params('iago'));
  assertSuccess(t, ok);
  assertMatchesOpenApi(t, '/users', 'post', ok.body);
  // desdemona: owner without can_create_users.
  assertError(
    t,
    await api.post('desdemona', 'users', params('desdemona')),
    'User not authorized to create users',
  );
  for (const who of ['shiva', 'hamlet', 'polonius']) {
    assertError(
      t,
      await api.post(who, 'users', params(who)),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
  }
});

t.test('POST /users: refusals', async (t) => {
  const { api } = await startServer(t);
  assertError(
    t,
    await api.post('iago', 'users', {
      email: 'hamlet@zulip.com',
      password: 'pw-123456',
      full_name: 'Dup',
    }),
    "Email 'hamlet@zulip.com' already in use",
  );
  assertError(
    t,
    await api.post('iago', 'users', {
      email: 'HAMLET@zulip.com',
      password: 'pw-123456',
      full_name: 'Dup',
    }),
    "Email 'HAMLET@zulip.com' already in use",
    {},
  );
  assertError(
    t,
    await api.post('iago', 'users', {
      email: 'not-an-email',
      password: 'pw-123456',
      full_name: 'Xavier',
    }),
    'Bad name or username',
  );
  assertError(
    t,
    await api.post('iago', 'users', { email: 'w@zulip.com', password: 'abc', full_name: 'Weak' }),
    'The password is too weak.',
  );
  assertError(
    t,
    await api.post('iago', 'users', {
      email: 'n@zulip.com',
      password: 'pw-123456',
      full_name: '  ',
    }),
    'Name too short!',
  );
  assertError(
    t,
    await api.post('iago', 'users', {
      email: 'n@zulip.com',
      password: 'pw-123456',
      full_name: 'x'.repeat(101),
    }),
    'Name too long!',
  );
});

t.test('a created user can log in and is visible to others', async (t) => {
  const { api } = await startServer(t);
  const created = assertSuccess(
    t,
    await api.post('iago', 'users', {
      email: 'newbie@zulip.com',
      password: 'pw-123456',
      full_name: 'Newbie',
    }),
  );
  const login = await api.post(null, 'fetch_api_key', {
    username: 'newbie@zulip.com',
    password: 'pw-123456',
  });
  const creds = assertSuccess(t, login);
  assertMatchesOpenApi(t, '/fetch_api_key', 'post', login.body);
  t.equal(creds.user_id, created.user_id);
  t.equal(creds.email, 'newbie@zulip.com');
  const me = await api.get(
    { email: 'newbie@zulip.com', api_key: creds.api_key as string },
    'users/me',
  );
  assertSuccess(t, me);
  t.equal(me.body.role, 400, 'a member');
  const seen = await api.get('hamlet', `users/${String(created.user_id)}`);
  t.equal((assertSuccess(t, seen).user as { full_name: string }).full_name, 'Newbie');
});

t.test('GET /users/{user_id}: each role sees each role', async (t) => {
  const { api, fx } = await startServer(t);
  const expectations: Record<
    string,
    { role: number; is_admin: boolean; is_owner: boolean; is_guest: boolean }
  > = {
    desdemona: { role: 100, is_admin: true, is_owner: true, is_guest: false },
    iago: { role: 200, is_admin: true, is_owner: false, is_guest: false },
    shiva: { role: 300, is_admin: false, is_owner: false, is_guest: false },
    hamlet: { role: 400, is_admin: false, is_owner: false, is_guest: false },
    polonius: { role: 600, is_admin: false, is_owner: false, is_guest: true },
  };
  for (const viewer of Object.keys(expectations)) {
    for (const [name, exp] of Object.entries(expectations)) {
      const res = await api.get(viewer, `users/${fx.users[name]!.id}`);
      const user = assertSuccess(t, res, `${viewer} reads ${name}`).user as Record<string, unknown>;
      t.match(user, {
        ...exp,
        user_id: fx.users[name]!.id,
        email: `${name}@zulip.com`,
        is_active: true,
        is_bot: false,
      });
      assertMatchesOpenApi(t, '/users/{user_id}', 'get', res.body, {
        allowExtra: ['is_billing_admin'],
      });
    }
  }
  assertError(t, await api.get('hamlet', 'users/99999'), 'No such user');
});

t.test('client_extavatar and custom profile fields', async (t) => {
  const { api, fx, server } = await startServer(t);
  await useExternalAvatars(server, fx.realmId); // what client_extavatar is about
  const withUrl = await api.get('hamlet', `users/${fx.users.othello!.id}`, {
    client_extavatar: false,
  });
  t.match(
    (withUrl.body.user as { avatar_url: string }).avatar_url,
    /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/,
  );
  const withoutUrl = await api.get('hamlet', `users/${fx.users.othello!.id}`);
  t.equal(
    (withoutUrl.body.user as { avatar_url: unknown }).avatar_url,
    null,
    'default client_extavatar=true: null',
  );

  // A profile field with a value for othello, through the realm actor (the profile-field
  // endpoints come with the settings work; the mutations exist already).
  const realm = server.context.realms.get(fx.realmId)!;
  const { id: fieldId } = await realm.ask('profile_field.create', {
    name: 'Phone',
    hint: '',
    type: 1,
    field_data: {},
    display_in_profile_summary: false,
    required: false,
    editable_by_user: true,
  });
  await realm.ask('user.profile_data.update', {
    user_id: fx.users.othello!.id,
    data: [{ id: fieldId, value: '+1 555', rendered_value: '<p>+1 555</p>' }],
  });

  const plain = await api.get('hamlet', `users/${fx.users.othello!.id}`);
  t.notOk('profile_data' in (plain.body.user as object), 'profile_data only when asked');
  const full = await api.get('hamlet', `users/${fx.users.othello!.id}`, {
    include_custom_profile_fields: true,
  });
  t.same((full.body.user as { profile_data: unknown }).profile_data, {
    [String(fieldId)]: { value: '+1 555', rendered_value: '<p>+1 555</p>' },
  });
  assertMatchesOpenApi(t, '/users/{user_id}', 'get', full.body, {
    allowExtra: ['is_billing_admin'],
  });

  const all = await api.get('hamlet', 'users', { include_custom_profile_fields: true });
  const members = assertSuccess(t, all).members as { user_id: number; profile_data: object }[];
  t.same(members.find((m) => m.user_id === fx.users.othello!.id)?.profile_data, {
    [String(fieldId)]: { value: '+1 555', rendered_value: '<p>+1 555</p>' },
  });
  t.same(members.find((m) => m.user_id === fx.users.hamlet!.id)?.profile_data, {});
});

t.test('GET /users lists everyone, including deactivated users', async (t) => {
  const { api, fx } = await startServer(t);
  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  const res = await api.get('othello', 'users');
  const members = assertSuccess(t, res).members as { user_id: number; is_active: boolean }[];
  t.equal(members.length, 9, 'the fixture users and the notification bot');
  t.equal(members.find((m) => m.user_id === fx.users.prospero!.id)?.is_active, false);
  assertMatchesOpenApi(t, '/users', 'get', res.body, { allowExtra: ['is_billing_admin'] });
  const some = await api.get('othello', 'users', {
    user_ids: [fx.users.iago!.id, fx.users.hamlet!.id],
  });
  t.same(
    (assertSuccess(t, some).members as { user_id: number }[])
      .map((m) => m.user_id)
      .sort((a, b) => a - b),
    [fx.users.iago!.id, fx.users.hamlet!.id].sort((a, b) => a - b),
  );
  assertError(
    t,
    await api.get('othello', 'users', { user_ids: [424242] }),
    'Invalid user ID: 424242',
  );
});

t.test('GET /users/me', async (t) => {
  const { api, fx } = await startServer(t);
  const res = await api.get('polonius', 'users/me');
  const me = assertSuccess(t, res);
  t.match(me, {
    user_id: fx.users.polonius!.id,
    email: 'polonius@zulip.com',
    role: 600,
    is_guest: true,
    max_message_id: -1,
  });
  assertMatchesOpenApi(t, '/users/me', 'get', res.body);
});

t.test(
  'GET /users/me follows every change to what it shows (its answer is kept serialized)',
  async (t) => {
    const { api, fx, server } = await startServer(t);
    const me = async () => assertSuccess(t, await api.get('hamlet', 'users/me'));
    const first = await me();
    t.match(first, {
      full_name: 'Hamlet',
      max_message_id: -1,
      is_admin: false,
      profile_data: {},
    });
    t.same(await me(), first, 'asked again, nothing changed: the same answer');

    // The user's own row: a new name.
    assertSuccess(t, await api.patch('hamlet', 'settings', { full_name: 'Prince Hamlet' }));
    t.equal((await me()).full_name, 'Prince Hamlet', 'after a change of name');

    // Another's change to the user's row: a role.
    assertSuccess(t, await api.patch('iago', `users/${fx.users.hamlet!.id}`, { role: 200 }));
    t.match(await me(), { is_admin: true, role: 200 }, 'after a change of role');

    // A message received: max_message_id.
    const sent = assertSuccess(
      t,
      await api.post('othello', 'messages', {
        type: 'private',
        to: [fx.users.hamlet!.id],
        content: 'hi',
      }),
    );
    t.equal((await me()).max_message_id, sent.id, 'after a message');

    // Profile data: a value of the user's, then the field itself renamed away (deleted).
    const field = assertSuccess(
      t,
      await api.post('iago', 'realm/profile_fields', { name: 'Phone', field_type: 1 }),
    ).id as number;
    assertSuccess(
      t,
      await api.patch('hamlet', 'users/me/profile_data', { data: [{ id: field, value: '555' }] }),
    );
    t.match(
      (await me()).profile_data,
      { [String(field)]: { value: '555' } },
      'after a profile value',
    );
    assertSuccess(t, await api.delete('iago', `realm/profile_fields/${field}`));
    t.same((await me()).profile_data, {}, 'after the field was deleted');

    // The realm's row: avatars shown from the external host (hamlet has no uploaded avatar).
    const before = (await me()).avatar_url as string;
    await useExternalAvatars(server, fx.realmId);
    const after = (await me()).avatar_url as string;
    t.not(after, before, 'after the realm changed its avatar setting');
    t.match(after, /gravatar/);
  },
);

t.test('delivery_email is hidden from events and shown to admins and to oneself', async (t) => {
  const { api, fx } = await startServer(t);
  const asAdmin = (await api.get('iago', `users/${fx.users.hamlet!.id}`)).body.user as {
    delivery_email: string;
  };
  t.equal(asAdmin.delivery_email, 'hamlet@zulip.com');
  const asSelf = (await api.get('hamlet', `users/${fx.users.hamlet!.id}`)).body.user as {
    delivery_email: string;
  };
  t.equal(asSelf.delivery_email, 'hamlet@zulip.com');
});

t.test('deactivating users: permissions and the last owner', async (t) => {
  const { api, fx } = await startServer(t);
  assertError(
    t,
    await api.delete('hamlet', `users/${fx.users.othello!.id}`),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await api.delete('iago', `users/${fx.users.desdemona!.id}`),
    'Must be an organization owner',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  const last = await api.delete('desdemona', `users/${fx.users.desdemona!.id}`);
  assertError(t, last, 'Cannot deactivate the only organization owner', {
    code: 'CANNOT_DEACTIVATE_LAST_USER',
  });
  assertSuccess(t, await api.get('othello', 'users/me'), 'othello authenticates before');
  assertSuccess(t, await api.delete('iago', `users/${fx.users.othello!.id}`));
  assertError(t, await api.get('othello', 'users/me'), 'Account is deactivated', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  assertError(
    t,
    await api.delete('iago', `users/${fx.users.othello!.id}`),
    'User is already deactivated',
  );
});

t.test('POST /fetch_api_key failures', async (t) => {
  const { api, fx } = await startServer(t);
  assertError(
    t,
    await api.post(null, 'fetch_api_key', { username: 'hamlet@zulip.com', password: 'nope' }),
    'Your username or password is incorrect',
    { status: 401, code: 'AUTHENTICATION_FAILED' },
  );
  assertError(
    t,
    await api.post(null, 'fetch_api_key', { username: 'nobody@zulip.com', password: 'nope' }),
    'Your username or password is incorrect',
    { status: 401, code: 'AUTHENTICATION_FAILED' },
  );
  assertError(
    t,
    await api.post(null, 'fetch_api_key', { username: 'hamlet@zulip.com' }),
    "Missing 'password' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
  assertSuccess(t, await api.delete('iago', `users/${fx.users.hamlet!.id}`));
  assertError(
    t,
    await api.post(null, 'fetch_api_key', {
      username: 'hamlet@zulip.com',
      password: 'secret-hamlet',
    }),
    'Account is deactivated',
    { status: 401, code: 'USER_DEACTIVATED' },
  );
  const ok = await api.post(
    null,
    'fetch_api_key',
    { username: 'OTHELLO@zulip.com', password: 'secret-othello' },
    { encoding: 'multipart' },
  );
  t.equal(
    assertSuccess(t, ok).api_key,
    fx.users.othello!.api_key,
    'e-mail matched case-insensitively; multipart body',
  );
});

t.test(
  'creating and deactivating users emits realm_user events to every active user',
  async (t) => {
    const { api, fx, events } = await startServer(t);
    const everyone = activeUserIds(fx);
    events.length = 0;
    const created = assertSuccess(
      t,
      await api.post('iago', 'users', {
        email: 'ev@zulip.com',
        password: 'pw-123456',
        full_name: 'Ev',
      }),
    );
    const add = events.find((e) => e.event.type === 'realm_user' && e.event.op === 'add');
    t.match(add?.event, { person: { user_id: created.user_id, full_name: 'Ev', role: 400 } });
    t.same(
      [...add!.users].sort((a, b) => a - b),
      [...everyone, created.user_id as number].sort((a, b) => a - b),
    );
    t.equal(
      (add!.event.person as { delivery_email: unknown }).delivery_email,
      null,
      'no real address in a broadcast',
    );

    events.length = 0;
    assertSuccess(t, await api.delete('iago', `users/${fx.users.othello!.id}`));
    t.same(
      events.map((e) => e.event),
      [
        {
          type: 'realm_user',
          op: 'update',
          person: { user_id: fx.users.othello!.id, is_active: false },
        },
      ],
    );
  },
);

t.test('the realm actor itself refuses user administration to non-administrators', async (t) => {
  const { fx, server } = await startServer(t);
  const realm = server.context.realms.get(fx.realmId)!;
  const hamlet = fx.users.hamlet!.id;
  // What an endpoint that forgot its check would ask.
  await t.rejects(
    realm.ask('user.create', {
      acting_user_id: hamlet,
      email: 'sneaky@zulip.com',
      full_name: 'Sneaky',
      password_hash: null,
      role: 400,
      welcome: null,
    }),
    { message: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  await t.rejects(
    realm.ask('user.create', {
      acting_user_id: fx.users.shiva!.id,
      email: 'sneaky@zulip.com',
      full_name: 'Sneaky',
      password_hash: null,
      role: 400,
      welcome: null,
    }),
    { message: 'Must be an organization administrator' },
    'moderators neither',
  );
  await t.rejects(
    realm.ask('user.create', {
      acting_user_id: fx.users.desdemona!.id,
      email: 'sneaky@zulip.com',
      full_name: 'Sneaky',
      password_hash: null,
      role: 400,
      welcome: null,
    }),
    { message: 'User not authorized to create users' },
    'an owner without can_create_users neither',
  );
  t.notOk(realm.view.userByEmail('sneaky@zulip.com'), 'nobody was created');
  await t.rejects(
    realm.ask('user.deactivate', { acting_user_id: hamlet, user_id: fx.users.othello!.id }),
    { message: 'Must be an organization administrator' },
  );
  t.equal(realm.view.user(fx.users.othello!.id)?.is_active, 1, 'othello is still active');
  await t.rejects(
    realm.ask('linkifier.add', {
      acting_user_id: hamlet,
      pattern: '#(?P<id>[0-9]+)',
      url_template: 'https://example.com/{id}',
    }),
    { message: 'Must be an organization administrator' },
  );
  await t.rejects(
    realm.ask('playground.add', {
      acting_user_id: hamlet,
      name: 'Python',
      pygments_language: 'python',
      url_template: 'https://python.example/?code={code}',
    }),
    { message: 'Must be an organization administrator' },
  );
  await t.rejects(
    realm.ask('realm.user_settings_defaults.update', {
      acting_user_id: hamlet,
      settings: { enter_sends: true },
    }),
    { message: 'Must be an organization administrator' },
  );
});
