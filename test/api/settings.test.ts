/**
 * PATCH /settings against the real server: every kind of setting, the reference's refusals, the
 * name, the password, the e-mail address (started here, completed by the confirmation link), the
 * aliases, and the events through real queues — `user_settings` to the user's own queues, the
 * legacy twins only to queues without `user_settings_object`, realm_user updates to everyone —
 * with the snapshot a client keeps from them equal to a fresh one.
 * Reference tests: zerver/tests/test_settings.py, test_events.py (test_change_*).
 */
import t from 'tap';
import { assertError, assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { applyEvents } from '../helpers/apply-events.js';
import { register, type Ev } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { kind, Listener } from '../helpers/queues.js';
import { startServer } from '../helpers/server.js';
import { TestSmtp } from '../helpers/smtp.js';
import { insertUserRow } from '../../src/mutations/users.js';
import { REGISTER_SPEC_EXTRAS, USER_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { useExternalAvatars } from '../helpers/realms.js';

const MODERN = { client_capabilities: { user_settings_object: true } };

t.test('settings reach the own queues, with legacy twins only for older clients', async (t) => {
  const { api, fx } = await startServer(t);
  const modern = await Listener.open(t, api, 'hamlet', MODERN, { allowExtra: USER_SPEC_EXTRAS });
  const legacy = await Listener.open(t, api, 'hamlet', {}, { allowExtra: USER_SPEC_EXTRAS });
  const other = await Listener.open(t, api, 'othello', MODERN, { allowExtra: USER_SPEC_EXTRAS });

  const res = await api.patch('hamlet', 'settings', {
    twenty_four_hour_time: true,
    color_scheme: 2,
    web_home_view: 'recent_topics',
    emojiset: 'vendorb',
    default_language: 'de',
    enable_sounds: false,
    notification_sound: 'ding',
    email_notifications_batching_period_seconds: 600,
    web_font_size_px: 14,
    display_emoji_reaction_users: false,
    timezone: 'Asia/Kolkata',
  });
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/settings', 'patch', body);
  t.notOk('ignored_parameters_unsupported' in body, 'every parameter was known');

  const settingKinds = [
    'user_settings update twenty_four_hour_time',
    'user_settings update color_scheme',
    'user_settings update web_home_view',
    'user_settings update emojiset',
    'user_settings update default_language',
    'user_settings update enable_sounds',
    'user_settings update notification_sound',
    'user_settings update email_notifications_batching_period_seconds',
    'user_settings update web_font_size_px',
    'user_settings update display_emoji_reaction_users',
    'user_settings update timezone',
    'realm_user update',
  ];
  const got = await modern.drain(t);
  t.same(got.map(kind).sort(), [...settingKinds].sort(), 'modern queue: user_settings only');
  t.match(
    got.find((e) => e.property === 'default_language'),
    { value: 'de', language_name: 'Deutsch' },
  );
  t.match(
    got.find((e) => e.type === 'realm_user'),
    {
      person: { user_id: fx.users.hamlet!.id, timezone: 'Asia/Kolkata', email: 'hamlet@zulip.com' },
    },
  );

  const old = await legacy.drain(t);
  t.same(
    old.map(kind).sort(),
    [
      ...settingKinds,
      // Legacy twins, for settings that existed before the user_settings event.
      'update_display_settings twenty_four_hour_time',
      'update_display_settings color_scheme',
      'update_display_settings web_home_view',
      'update_display_settings emojiset',
      'update_display_settings default_language',
      'update_display_settings timezone',
      'update_global_notifications enable_sounds',
      'update_global_notifications notification_sound',
      'update_global_notifications email_notifications_batching_period_seconds',
    ].sort(),
    'legacy queue: user_settings and the legacy twins',
  );
  t.match(
    old.find((e) => e.setting_name === 'default_language'),
    {
      user: 'hamlet@zulip.com',
      setting: 'de',
      language_name: 'Deutsch',
    },
  );

  // Another user learns only the time zone (everyone sees it).
  t.same((await other.drain(t)).map(kind), ['realm_user update']);

  // A client that applied these events holds what a new snapshot says.
  for (const q of [modern, legacy]) {
    const state = structuredClone(q.snapshot);
    applyEvents(state, q.got);
    const fresh = (await register(t, api, 'hamlet', q === modern ? MODERN : {})).body;
    assertMatchesOpenApi(t, '/register', 'post', fresh, { allowExtra: REGISTER_SPEC_EXTRAS });
    for (const key of ['user_settings', 'realm_users', 'twenty_four_hour_time', 'timezone']) {
      if (key in fresh) t.same(state[key], fresh[key], `${key} after the events`);
    }
    if (q === legacy) {
      for (const key of ['emojiset', 'default_language', 'enable_sounds', 'notification_sound'])
        t.same(state[key], fresh[key], `legacy ${key} after the events`);
    }
  }
  const settings = (await register(t, api, 'hamlet', MODERN)).body.user_settings as Record<
    string,
    unknown
  >;
  t.match(settings, {
    twenty_four_hour_time: true,
    color_scheme: 2,
    emojiset: 'vendorb',
    default_language: 'de',
    timezone: 'Asia/Kolkata',
    web_font_size_px: 14,
  });

  // Setting what is already set changes nothing and tells nobody.
  assertSuccess(t, await api.patch('hamlet', 'settings', { color_scheme: 2 }));
  t.same(await modern.drain(t), []);
});

t.test('every value is checked; a refused request changes nothing', async (t) => {
  const { api } = await startServer(t);
  const q = await Listener.open(t, api, 'hamlet', MODERN);
  const refusals: [Record<string, unknown>, string, string?][] = [
    [{ twenty_four_hour_time: 'yes' }, 'twenty_four_hour_time is not valid JSON', 'INVALID_JSON'],
    [{ twenty_four_hour_time: 1 }, 'twenty_four_hour_time is not a boolean'],
    [{ color_scheme: 4 }, 'Invalid color_scheme'],
    [{ web_channel_default_view: 3 }, 'Invalid web_channel_default_view'],
    [{ email_address_visibility: 6 }, 'Invalid email_address_visibility'],
    [{ emojiset: 'apple' }, 'Invalid emojiset'],
    [{ web_home_view: 'feed' }, 'Invalid web_home_view'],
    [{ web_animate_image_previews: 'sometimes' }, 'Invalid web_animate_image_previews'],
    [{ default_language: 'xx' }, 'Invalid default_language'],
    [{ notification_sound: 'boing' }, "Invalid notification sound 'boing'"],
    [
      { email_notifications_batching_period_seconds: 0 },
      'Invalid email batching period: 0 seconds',
    ],
    [
      { email_notifications_batching_period_seconds: 604801 },
      'Invalid email batching period: 604801 seconds',
    ],
    [{ web_font_size_px: -1 }, 'web_font_size_px is too small'],
    [
      { web_line_height_percent: 'high' },
      'web_line_height_percent is not valid JSON',
      'INVALID_JSON',
    ],
    [{ timezone: 'Mars/Olympus_Mons' }, 'timezone is not a recognized time zone'],
    [{ timezone: 'us/eastern' }, 'timezone is not a recognized time zone'],
    [{ timezone: 'GMT+05:00' }, 'timezone is not a recognized time zone'],
    // The valid setting in the same request is not applied either.
    [{ enter_sends: true, color_scheme: 9 }, 'Invalid color_scheme'],
  ];
  for (const [params, msg, code] of refusals) {
    assertError(t, await api.patch('hamlet', 'settings', params), msg, code ? { code } : {});
  }
  t.same(await q.drain(t), [], 'no event for a refused request');
  const settings = (await register(t, api, 'hamlet', MODERN)).body.user_settings as Record<
    string,
    unknown
  >;
  t.equal(settings.enter_sends, false, 'nothing half-written');

  // Database names as the reference accepts them: canonical, links, and UTC.
  for (const tz of ['America/New_York', 'Asia/Kolkata', 'US/Eastern', 'UTC', 'Etc/GMT+5']) {
    assertSuccess(t, await api.patch('hamlet', 'settings', { timezone: tz }), tz);
  }
  // Every emoji set the spec names.
  for (const emojiset of ['vendora', 'vendora-blob', 'vendorb', 'text']) {
    assertSuccess(t, await api.patch('hamlet', 'settings', { emojiset }), emojiset);
  }

  // Unknown parameters are reported; dense_mode is known (and has no effect).
  const body = assertSuccess(
    t,
    await api.patch('hamlet', 'settings', { dense_mode: false, frobnicate: 1, enter_sends: true }),
  );
  t.same(body.ignored_parameters_unsupported, ['frobnicate']);
  assertMatchesOpenApi(t, '/settings', 'patch', body);
  const evs = await q.drain(t);
  t.notOk(
    evs.some((e) => e.property === 'dense_mode'),
    'dense_mode is not announced (it is no longer a setting)',
  );
  t.ok(evs.some((e) => e.property === 'enter_sends' && e.value === true));
});

t.test('the deprecated aliases change settings as PATCH /settings does', async (t) => {
  const { api } = await startServer(t);
  const q = await Listener.open(t, api, 'cordelia', MODERN);
  assertSuccess(t, await api.patch('cordelia', 'settings/display', { left_side_userlist: true }));
  assertSuccess(
    t,
    await api.patch('cordelia', 'settings/notifications', {
      enable_stream_push_notifications: true,
    }),
  );
  t.same((await q.drain(t)).map(kind), [
    'user_settings update left_side_userlist',
    'user_settings update enable_stream_push_notifications',
  ]);
  assertError(
    t,
    await api.patch('cordelia', 'settings/display', { color_scheme: 0 }),
    'Invalid color_scheme',
  );
});

t.test('turning draft synchronization off', async (t) => {
  const { api } = await startServer(t);
  const q = await Listener.open(t, api, 'hamlet', MODERN);
  assertSuccess(t, await api.patch('hamlet', 'settings', { enable_drafts_synchronization: false }));
  t.same(
    (await q.drain(t)).map((e) => [kind(e), e.value]),
    [['user_settings update enable_drafts_synchronization', false]],
  );
});

t.test('full_name: the name rules, name_changes_disabled, unique names', async (t) => {
  const { api, server, fx } = await startServer(t);
  const everyone = await Listener.open(t, api, 'othello');
  const res = await api.patch('hamlet', 'settings', { full_name: '  Prince Hamlet  ' });
  assertSuccess(t, res);
  t.match(await everyone.drain(t), [
    {
      type: 'realm_user',
      op: 'update',
      person: { user_id: fx.users.hamlet!.id, full_name: 'Prince Hamlet' },
    },
  ]);
  const me = assertSuccess(t, await api.get('hamlet', 'users/me'));
  t.equal(me.full_name, 'Prince Hamlet', 'stored trimmed');

  for (const [name, msg] of [
    ['H', 'Name too short!'],
    ['   ', 'Name too short!'],
    ['x'.repeat(101), 'Name too long!'],
    ['Ham*let', 'Invalid characters in name!'],
    ['Ham@let', 'Invalid characters in name!'],
    ['Ham\u0007let', 'Invalid characters in name!'],
    ['Hamlet|12', 'Invalid format!'],
  ] as const) {
    assertError(t, await api.patch('hamlet', 'settings', { full_name: name }), msg, {});
  }

  const realm = server.context.realms.get(fx.realmId)!;
  await realm.ask('realm.update_settings', {
    acting_user_id: null,
    settings: { require_unique_names: true },
  });
  assertError(
    t,
    await api.patch('hamlet', 'settings', { full_name: 'OTHELLO' }),
    'Unique names required in this organization.',
  );

  // With name changes disabled, a member's change is silently ignored; an administrator's is not.
  await realm.ask('realm.update_settings', {
    acting_user_id: null,
    settings: { name_changes_disabled: true },
  });
  await everyone.drain(t);
  assertSuccess(t, await api.patch('hamlet', 'settings', { full_name: 'Hamlet Again' }));
  t.equal(assertSuccess(t, await api.get('hamlet', 'users/me')).full_name, 'Prince Hamlet');
  assertSuccess(t, await api.patch('iago', 'settings', { full_name: 'Iago the Admin' }));
  t.equal(assertSuccess(t, await api.get('iago', 'users/me')).full_name, 'Iago the Admin');
  t.match(
    (await everyone.drain(t)).map((e) => e.person),
    [{ user_id: fx.users.iago!.id, full_name: 'Iago the Admin' }],
  );
});

t.test('password: the old one is required; the new one works at once', async (t) => {
  const { api, fx, server } = await startServer(t);
  const q = await Listener.open(t, api, 'hamlet');
  const email = fx.users.hamlet!.email;
  assertError(
    t,
    await api.patch('hamlet', 'settings', { old_password: 'not it', new_password: 'new-secret-1' }),
    'Wrong password!',
  );
  assertError(
    t,
    await api.patch('hamlet', 'settings', { new_password: 'new-secret-1' }),
    'Wrong password!',
  );
  assertError(
    t,
    await api.patch('hamlet', 'settings', { old_password: 'secret-hamlet', new_password: 'abc' }),
    'New password is too weak!',
  );
  // Length in characters (code points), as the reference counts: 5 emoji are 10 UTF-16 units.
  assertError(
    t,
    await api.patch('hamlet', 'settings', {
      old_password: 'secret-hamlet',
      new_password: '\u{1F511}'.repeat(5),
    }),
    'New password is too weak!',
  );
  assertSuccess(
    t,
    await api.patch('hamlet', 'settings', {
      old_password: 'secret-hamlet',
      new_password: 'new-secret-1',
    }),
  );
  t.same(await q.drain(t), [], 'a password change tells no client');
  const login = (password: string) =>
    api.post(null, 'fetch_api_key', { username: email, password });
  assertSuccess(t, await login('new-secret-1'), 'the new password logs in');
  assertError(t, await login('secret-hamlet'), 'Your username or password is incorrect', {
    status: 401,
    code: 'AUTHENTICATION_FAILED',
  });
  // With password login off for the realm, no password is right.
  const realm = server.context.realms.get(fx.realmId)!;
  await realm.ask('realm.update_settings', {
    acting_user_id: null,
    settings: { password_auth_enabled: false },
  });
  assertError(
    t,
    await api.patch('hamlet', 'settings', {
      old_password: 'new-secret-1',
      new_password: 'another-one',
    }),
    'Wrong password!',
  );
});

t.test('email: a confirmed change, through the confirmation link', async (t) => {
  const smtp = await TestSmtp.start(t);
  const { api, fx, server, url } = await startServer(t, { smtpUrl: smtp.url });
  // An external avatar follows the address (in a realm that uses them).
  await useExternalAvatars(server, fx.realmId);
  const mails = smtp.mails;
  const delivered = () => server.context.mailer!.runDue();
  await delivered();
  mails.length = 0; // the fixture's welcome mails
  const hamlet = { ...fx.users.hamlet! };
  const self = await Listener.open(t, api, 'hamlet', MODERN, { allowExtra: USER_SPEC_EXTRAS });
  const other = await Listener.open(t, api, 'othello', MODERN, { allowExtra: USER_SPEC_EXTRAS });

  for (const [email, msg] of [
    ['not-an-address', 'Invalid address.'],
    ['othello@zulip.com', 'Already has an account.'],
    ['OTHELLO@zulip.com', 'Already has an account.'],
    ['someone@mailinator.com', 'Please use your real email address.'],
  ] as const) {
    assertError(t, await api.patch('hamlet', 'settings', { email }), msg);
  }
  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  assertError(
    t,
    await api.patch('hamlet', 'settings', { email: 'prospero@zulip.com' }),
    'Account has been deactivated.',
  );
  await delivered();
  t.equal(mails.length, 0, 'no confirmation for a refused address');
  await self.drain(t);
  await other.drain(t);

  // The change waits for the confirmation; the old address still logs in.
  assertSuccess(t, await api.patch('hamlet', 'settings', { email: '  prince@elsinore.dk ' }));
  await delivered();
  t.equal(mails.length, 1);
  t.same(mails[0]!.to, ['prince@elsinore.dk']);
  const link = /(http\S+\/accounts\/confirm_new_email\/([a-z0-9]{24}))/.exec(mails[0]!.text);
  t.ok(link, 'the message carries the confirmation link');
  t.equal(assertSuccess(t, await api.get('hamlet', 'users/me')).delivery_email, hamlet.email);
  t.same(await self.drain(t), [], 'nothing announced before the confirmation');

  // Setting the current address again is no change at all.
  assertSuccess(t, await api.patch('hamlet', 'settings', { email: hamlet.email }));
  await delivered();
  t.equal(mails.length, 1);

  const path = new URL(link![1]!).pathname;
  const bogus = await rawRequest(url, { method: 'GET', path: '/accounts/confirm_new_email/nope' });
  t.equal(bogus.status, 404);
  t.equal(bogus.body.msg, "Whoops. We couldn't find your confirmation link in the system.");

  const done = await rawRequest(url, { method: 'GET', path });
  t.equal(done.status, 200, 'confirmed', { body: done.text });
  t.equal(done.body.email, 'prince@elsinore.dk');
  await delivered();
  t.same(mails[1]?.to, [hamlet.email], 'the old address is told');
  fx.users.hamlet!.email = 'prince@elsinore.dk'; // the test client logs in with the new one

  // The same link works once.
  const again = await rawRequest(url, { method: 'GET', path });
  t.equal(again.status, 404);
  t.equal(again.body.msg, 'The confirmation link has expired or been deactivated.');

  const person = (e: Ev) => e.person;
  t.match((await self.drain(t)).map(person), [
    { user_id: hamlet.id, delivery_email: 'prince@elsinore.dk' },
    { user_id: hamlet.id, avatar_source: 'G', avatar_url: /^https:\/\/secure\.gravatar\.com/ },
    { user_id: hamlet.id, new_email: 'prince@elsinore.dk' },
  ]);
  // The address is public (email_address_visibility "everyone"): others learn it too.
  t.match((await other.drain(t)).map(person), [
    { delivery_email: 'prince@elsinore.dk' },
    { avatar_version: 1 },
    { new_email: 'prince@elsinore.dk' },
  ]);

  // The new address is the login; the old one no longer is.
  const me = await rawRequest(url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { authorization: basicAuth('prince@elsinore.dk', hamlet.api_key) },
  });
  t.equal(me.status, 200);
  t.equal(me.body.email, 'prince@elsinore.dk');
  const oldLogin = await rawRequest(url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { authorization: basicAuth(hamlet.email, hamlet.api_key) },
  });
  t.equal(oldLogin.status, 401);

  // A pending request expires after a day, and a newer one replaces it.
  const realm = server.context.realms.get(fx.realmId)!;
  const ask = (email: string) =>
    realm.ask('user.settings.update', {
      user_id: fx.users.cordelia!.id,
      email_change: { new_email: email, confirmation_key: `key-for-${email}` },
      settings: {},
      fake_email_domain: 'testserver.local',
    });
  await ask('first@elsinore.dk');
  await ask('second@elsinore.dk');
  const replaced = await rawRequest(url, {
    method: 'GET',
    path: '/accounts/confirm_new_email/key-for-first@elsinore.dk',
  });
  t.equal(replaced.status, 404, 'the earlier request was revoked');
  server.store.db.prepare('UPDATE email_change_requests SET created_at = created_at - 86401').run();
  const expired = await rawRequest(url, {
    method: 'GET',
    path: '/accounts/confirm_new_email/key-for-second@elsinore.dk',
  });
  t.equal(expired.body.msg, 'The confirmation link has expired or been deactivated.');

  // With address changes disabled, members may not start one; administrators may.
  await realm.ask('realm.update_settings', {
    acting_user_id: null,
    settings: { email_changes_disabled: true },
  });
  assertError(
    t,
    await api.patch('othello', 'settings', { email: 'moor@venice.it' }),
    'Email address changes are disabled in this organization.',
  );
  assertSuccess(t, await api.patch('iago', 'settings', { email: 'ensign@venice.it' }));
});

t.test('email_address_visibility: who sees the real address, and the address shown', async (t) => {
  const { api, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const q = {
    iago: await Listener.open(t, api, 'iago', {}, { allowExtra: USER_SPEC_EXTRAS }),
    shiva: await Listener.open(t, api, 'shiva', {}, { allowExtra: USER_SPEC_EXTRAS }),
    othello: await Listener.open(t, api, 'othello', {}, { allowExtra: USER_SPEC_EXTRAS }),
    polonius: await Listener.open(t, api, 'polonius', {}, { allowExtra: USER_SPEC_EXTRAS }),
  };
  const fake = `user${hamlet.id}@testserver.local`;
  // Administrators only: everyone below them loses the real address; the shown one changes.
  assertSuccess(t, await api.patch('hamlet', 'settings', { email_address_visibility: 3 }));
  const persons = async (l: Listener) =>
    (await l.drain(t)).filter((e) => e.type === 'realm_user').map((e) => e.person);
  t.same(await persons(q.iago), [{ user_id: hamlet.id, new_email: fake }], 'admins keep it');
  for (const l of [q.shiva, q.othello, q.polonius]) {
    t.same(
      await persons(l),
      [
        { user_id: hamlet.id, delivery_email: null },
        { user_id: hamlet.id, new_email: fake },
      ],
      `${l.who} loses it`,
    );
  }
  const seenBy = async (who: string) =>
    assertSuccess(t, await api.get(who, `users/${hamlet.id}`)).user as Record<string, unknown>;
  t.match(await seenBy('othello'), { email: fake, delivery_email: null });
  t.match(await seenBy('iago'), { email: fake, delivery_email: hamlet.email });
  t.match(await seenBy('hamlet'), { email: fake, delivery_email: hamlet.email });

  // Members: moderators and members see it again; guests still do not; `email` stays hidden.
  assertSuccess(t, await api.patch('hamlet', 'settings', { email_address_visibility: 2 }));
  t.same(await persons(q.iago), []);
  for (const l of [q.shiva, q.othello])
    t.same(await persons(l), [{ user_id: hamlet.id, delivery_email: hamlet.email }]);
  t.same(await persons(q.polonius), []);

  // Everyone again: the real address is the shown one.
  assertSuccess(t, await api.patch('hamlet', 'settings', { email_address_visibility: 1 }));
  t.same(await persons(q.polonius), [
    { user_id: hamlet.id, delivery_email: hamlet.email },
    { user_id: hamlet.id, new_email: hamlet.email },
  ]);
  t.same(await persons(q.othello), [{ user_id: hamlet.id, new_email: hamlet.email }]);
  t.match(await seenBy('polonius'), { email: hamlet.email, delivery_email: hamlet.email });
});

t.test('endpoints for people refuse bots', async (t) => {
  const { api, fx, server, events } = await startServer(t);
  // No API creates bots yet: one is written the way user creation writes accounts.
  const { realms } = server.context;
  const store = server.store;
  const realm = realms.get(fx.realmId)!;
  const apiKey = 'B'.repeat(32);
  const botId = store.transaction(() =>
    insertUserRow(store, fx.realmId, {
      email: 'helper-bot@zulip.com',
      full_name: 'Helper Bot',
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
  realm.view.reloadUser(botId);
  const bot = { email: 'helper-bot@zulip.com', api_key: apiKey };
  const refused = 'This endpoint does not accept bot requests.';
  assertError(t, await api.patch(bot, 'settings', { enter_sends: true }), refused);
  assertError(t, await api.patch(bot, 'users/me/profile_data', { data: [] }), refused);
  assertError(t, await api.post(bot, 'users/me/android_gcm_reg_id', { token: 'x' }), refused);

  // Its owner administers it: name and role (a member may not make it an administrator).
  assertSuccess(t, await api.patch('hamlet', `users/${botId}`, { full_name: 'Useful Bot' }));
  assertError(
    t,
    await api.patch('hamlet', `users/${botId}`, { role: 200 }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  t.equal(realm.view.user(botId)?.full_name, 'Useful Bot');
  t.match(
    events.filter((e) => e.event.type === 'realm_bot'),
    [
      {
        event: {
          type: 'realm_bot',
          op: 'update',
          bot: { user_id: botId, full_name: 'Useful Bot' },
        },
        users: [fx.users.hamlet!.id],
      },
    ],
    'the owner learns it as a bot change too',
  );
});
