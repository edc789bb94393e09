/**
 * The two spellings of the wire names (docs/api.md "Wire names", src/lib/wire-names.ts): every
 * alias accepted on input, both directions; the version fields under both names; single-valued
 * fields spelled by the client's identity (User-Agent) or by the server setting; a queue keeping
 * the spelling of the client that registered it, across a restart too.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { restartServer, startServer } from '../helpers/server.js';
import { dialectFor } from '../../src/lib/wire-names.js';
import { useExternalAvatars } from '../helpers/realms.js';

const PYTHON = { 'user-agent': 'ZulipPython/0.9.1 (Debian GNU/Linux; 12)' };
const TERMINAL = { 'user-agent': 'ZulipTerminal/0.7.0 Linux-6.1.0-x86_64-with-glibc2.36' };
const FLUTTER = { 'user-agent': 'ZulipFlutter/30.0.274 (Android 14)' };
const CURL = { 'user-agent': 'curl/7.88.1' };

type Reaction = { emoji_name: string; reaction_type: string; user_id: number };

t.test('the dialect by User-Agent and by the setting', (t) => {
  for (const ua of [
    'ZulipPython/0.9.1 (Debian GNU/Linux; 12)',
    'ZulipTerminal/0.7.0 Linux',
    'ZulipFlutter/0.0.15+15 (Android 14)',
    'ZulipFlutter',
    'ZulipMobile/flutter',
    'ZulipElectron/5.11.1',
    'ZulipGit/0.9.1 (Linux; 6)',
    'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)',
  ]) {
    t.equal(dialectFor('auto', ua), 'reference', ua);
  }
  for (const ua of ['', 'curl/7.88.1', 'Mozilla/5.0 (X11; Linux)', 'zulipish/1', 'node-fetch']) {
    t.equal(dialectFor('auto', ua), 'spec', JSON.stringify(ua));
  }
  t.equal(dialectFor('spec', 'ZulipPython/0.9.1'), 'spec', 'WIRE_NAMES=spec wins');
  t.equal(dialectFor('reference', 'curl/7.88.1'), 'reference', 'WIRE_NAMES=reference wins');
  t.end();
});

t.test('version fields under both names', async (t) => {
  const { api } = await startServer(t);
  for (const res of [
    await api.get(null, 'server_settings'),
    await api.post('hamlet', 'register', { fetch_event_types: ['realm'] }),
  ]) {
    const body = assertSuccess(t, res);
    t.equal(body.zulip_feature_level, body.service_feature_level);
    t.equal(body.zulip_version, body.service_version);
    t.equal(body.zulip_merge_base, body.service_merge_base);
    t.type(body.zulip_feature_level, 'number');
    t.type(body.zulip_version, 'string');
  }
});

t.test('client_gravatar and client_extavatar, every endpoint that reads it', async (t) => {
  const { api, fx, server } = await startServer(t);
  // They matter in a realm that uses external avatars (by default none is external).
  await useExternalAvatars(server, fx.realmId);
  const ch = await createChannel(api, 'hamlet', 'avatars');
  await sendChannelMessage(api, 'hamlet', ch, 't', 'hello');
  const hamlet = fx.users.hamlet!.id;

  const avatarOf = {
    register: async (p: Record<string, unknown>) => {
      const body = assertSuccess(
        t,
        await api.post('othello', 'register', { fetch_event_types: ['realm_user'], ...p }),
      );
      return (body.realm_users as { user_id: number; avatar_url: string | null }[]).find(
        (u) => u.user_id === hamlet,
      )!.avatar_url;
    },
    users: async (p: Record<string, unknown>) => {
      const body = assertSuccess(t, await api.get('othello', 'users', p));
      return (body.members as { user_id: number; avatar_url: string | null }[]).find(
        (u) => u.user_id === hamlet,
      )!.avatar_url;
    },
    user: async (p: Record<string, unknown>) =>
      (
        assertSuccess(t, await api.get('othello', `users/${hamlet}`, p)).user as {
          avatar_url: string | null;
        }
      ).avatar_url,
    messages: async (p: Record<string, unknown>) => {
      const body = assertSuccess(
        t,
        await api.get('hamlet', 'messages', { anchor: 'newest', num_before: 1, ...p }),
      );
      return (body.messages as { avatar_url: string | null }[])[0]!.avatar_url;
    },
  };
  for (const [name, get] of Object.entries(avatarOf)) {
    t.equal(await get({}), null, `${name}: external avatars left to the client by default`);
    for (const param of ['client_gravatar', 'client_extavatar']) {
      t.match(await get({ [param]: false }), /^https:\/\//, `${name}: ${param}=false → a URL`);
      t.equal(await get({ [param]: true }), null, `${name}: ${param}=true → null`);
    }
  }
  assertError(
    t,
    await api.get('othello', 'users', { client_gravatar: 'maybe' }),
    'client_gravatar is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  const both = await api.get('othello', 'users', {
    client_gravatar: true,
    client_extavatar: false,
  });
  t.notOk(both.body.ignored_parameters_unsupported, 'neither spelling is ignored');
  t.match(
    (both.body.members as { user_id: number; avatar_url: string | null }[]).find(
      (u) => u.user_id === hamlet,
    )!.avatar_url,
    /^https:/,
    'the spec spelling wins when both are sent',
  );
});

t.test('the APNs token under both paths', async (t) => {
  const { api, server, fx } = await startServer(t);
  const tokens = () =>
    server.store.db
      .prepare('SELECT token FROM push_device_tokens WHERE user_id = ?')
      .pluck()
      .all(fx.users.hamlet!.id);
  const token = 'c0ffee';
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/apns_device_token', { token, appid: 'org.zulip.Zulip' }),
  );
  t.same(tokens(), [token], 'registered under the reference path');
  assertSuccess(t, await api.delete('hamlet', 'users/me/ios_push_device_token', { token }));
  t.same(tokens(), [], 'removed under the spec path');
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/ios_push_device_token', { token, appid: 'org.zulip.Zulip' }),
  );
  assertSuccess(t, await api.delete('hamlet', 'users/me/apns_device_token', { token }));
  t.same(tokens(), [], 'removed under the reference path');
  assertError(
    t,
    await api.post('hamlet', 'users/me/apns_device_token', { token: 'xyz', appid: 'a' }),
    'Invalid APNS token',
  );
});

t.test('the extra emoji: both reaction types in, each client its spelling out', async (t) => {
  const { api } = await startServer(t);
  const ch = await createChannel(api, 'hamlet', 'reactions');
  await api.post('othello', 'users/me/subscriptions', { subscriptions: [{ name: 'reactions' }] });
  const id = await sendChannelMessage(api, 'hamlet', ch, 't', 'react to me');
  const specQueue = await register(t, api, 'othello', { event_types: ['reaction'] });
  const refQueue = await api.post(
    'othello',
    'register',
    { event_types: ['reaction'] },
    { headers: TERMINAL },
  );
  const refQueueId = assertSuccess(t, refQueue).queue_id as string;

  const add = (type: string, who = 'hamlet') =>
    api.post(who, `messages/${id}/reactions`, {
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: type,
    });
  assertSuccess(t, await add('zulip_extra_emoji'), 'the reference spelling is accepted');
  assertSuccess(t, await add('service_extra_emoji', 'othello'), 'so is the spec spelling');
  assertError(t, await add('zulip_extra_emoji'), 'Reaction already exists.', {
    code: 'REACTION_ALREADY_EXISTS',
  });

  const fetched = async (headers: Record<string, string>) => {
    const body = assertSuccess(t, await api.get('cordelia', `messages/${id}`, {}, { headers }));
    return ((body.message as { reactions: Reaction[] }).reactions ?? []).map(
      (r) => r.reaction_type,
    );
  };
  t.same(await fetched(CURL), ['service_extra_emoji', 'service_extra_emoji'], 'spec client');
  t.same(await fetched(PYTHON), ['zulip_extra_emoji', 'zulip_extra_emoji'], 'reference client');
  const list = assertSuccess(
    t,
    await api.get(
      'othello',
      'messages',
      { anchor: id, num_before: 0, num_after: 0 },
      { headers: FLUTTER },
    ),
  );
  t.same(
    (list.messages as { reactions: Reaction[] }[])[0]!.reactions.map((r) => r.reaction_type),
    ['zulip_extra_emoji', 'zulip_extra_emoji'],
    'GET /messages too',
  );

  const specEvents = await events(t, api, 'othello', specQueue.queue_id, -1, true);
  t.same(
    specEvents.map((e) => e.reaction_type),
    ['service_extra_emoji', 'service_extra_emoji'],
    'the spec queue',
  );
  // Polled with a reference User-Agent: the queue keeps the spelling it was registered with.
  const refEvents = assertSuccess(
    t,
    await api.get(
      'othello',
      'events',
      { queue_id: refQueueId, last_event_id: -1, dont_block: true },
      { headers: CURL },
    ),
  ).events as { reaction_type: string; emoji_name: string }[];
  t.same(
    refEvents.map((e) => [e.reaction_type, e.emoji_name]),
    [
      ['zulip_extra_emoji', 'zulip'],
      ['zulip_extra_emoji', 'zulip'],
    ],
    'the reference queue',
  );

  assertSuccess(
    t,
    await api.delete('hamlet', `messages/${id}/reactions`, {
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: 'zulip_extra_emoji',
    }),
    'removed under the reference spelling',
  );
  assertSuccess(
    t,
    await api.delete('othello', `messages/${id}/reactions`, {
      emoji_code: 'zulip',
      reaction_type: 'service_extra_emoji',
    }),
    'removed under the spec spelling',
  );
  t.same(await fetched(PYTHON), [], 'both gone');
});

t.test('a user status with the extra emoji', async (t) => {
  const { api, fx } = await startServer(t);
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/status', {
      status_text: 'on it',
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: 'zulip_extra_emoji',
    }),
  );
  const status = async (headers: Record<string, string>) =>
    (
      assertSuccess(
        t,
        await api.get(
          'othello',
          `users/${fx.users.hamlet!.id}/status`,
          {},
          {
            headers,
          },
        ),
      ).status as { reaction_type: string }
    ).reaction_type;
  t.equal(await status(CURL), 'service_extra_emoji');
  t.equal(await status(PYTHON), 'zulip_extra_emoji');
  const snapshot = async (headers: Record<string, string>) =>
    (
      assertSuccess(
        t,
        await api.post('othello', 'register', { fetch_event_types: ['user_status'] }, { headers }),
      ).user_status as Record<string, { reaction_type: string }>
    )[String(fx.users.hamlet!.id)]!.reaction_type;
  t.equal(await snapshot(CURL), 'service_extra_emoji', 'register, spec client');
  t.equal(await snapshot(FLUTTER), 'zulip_extra_emoji', 'register, reference client');
});

t.test('emoji sets: both spellings in, each client its spelling out', async (t) => {
  const { api } = await startServer(t);
  const specQueue = await register(t, api, 'hamlet', {
    event_types: ['user_settings', 'update_display_settings'],
  });
  const refQueueId = assertSuccess(
    t,
    await api.post(
      'hamlet',
      'register',
      { event_types: ['user_settings', 'update_display_settings', 'realm_user_settings_defaults'] },
      { headers: PYTHON },
    ),
  ).queue_id as string;

  assertSuccess(t, await api.patch('hamlet', 'settings', { emojiset: 'google-blob' }));
  assertSuccess(t, await api.patch('hamlet', 'settings/display', { emojiset: 'google' }));
  assertSuccess(t, await api.patch('hamlet', 'settings', { emojiset: 'vendorb' }));
  assertSuccess(t, await api.patch('hamlet', 'settings', { emojiset: 'twitter' }), 'unchanged');
  assertError(t, await api.patch('hamlet', 'settings', { emojiset: 'apple' }), 'Invalid emojiset');
  assertSuccess(
    t,
    await api.patch('desdemona', 'realm/user_settings_defaults', { emojiset: 'twitter' }),
  );

  const snapshot = async (headers: Record<string, string>) =>
    assertSuccess(
      t,
      await api.post(
        'hamlet',
        'register',
        {
          fetch_event_types: [
            'user_settings',
            'update_display_settings',
            'realm_user_settings_defaults',
          ],
        },
        { headers },
      ),
    );
  const spec = await snapshot(CURL);
  const ref = await snapshot(TERMINAL);
  type Settings = { emojiset: string; emojiset_choices: { key: string; text: string }[] };
  t.equal((spec.user_settings as Settings).emojiset, 'vendorb');
  t.equal((ref.user_settings as Settings).emojiset, 'twitter');
  t.equal(spec.emojiset, 'vendorb', 'legacy top-level field, spec');
  t.equal(ref.emojiset, 'twitter', 'legacy top-level field, reference');
  t.same((ref.user_settings as Settings).emojiset_choices.map((c) => c.key).sort(), [
    'google',
    'google-blob',
    'text',
    'twitter',
  ]);
  t.same((spec.user_settings as Settings).emojiset_choices.map((c) => c.key).sort(), [
    'text',
    'vendora',
    'vendora-blob',
    'vendorb',
  ]);
  t.same((ref.emojiset_choices as Settings['emojiset_choices']).map((c) => c.key).sort(), [
    'google',
    'google-blob',
    'text',
    'twitter',
  ]);
  t.equal((spec.realm_user_settings_defaults as Settings).emojiset, 'vendorb');
  t.equal((ref.realm_user_settings_defaults as Settings).emojiset, 'twitter');

  const specEvents = await events(t, api, 'hamlet', specQueue.queue_id, -1, true);
  t.same(
    specEvents.map((e) => e.value ?? e.setting),
    ['vendora-blob', 'vendora-blob', 'vendora', 'vendora', 'vendorb', 'vendorb'],
    'spec queue: user_settings and update_display_settings',
  );
  const refEvents = await events(t, api, 'hamlet', refQueueId, -1, true);
  t.same(
    refEvents.map((e) => `${e.type}:${String(e.value ?? e.setting)}`),
    [
      'user_settings:google-blob',
      'update_display_settings:google-blob',
      'user_settings:google',
      'update_display_settings:google',
      'user_settings:twitter',
      'update_display_settings:twitter',
      'realm_user_settings_defaults:twitter',
    ],
    'reference queue',
  );
});

t.test('WIRE_NAMES forces one spelling for everybody', async (t) => {
  for (const [mode, headers, expected] of [
    ['reference', CURL, 'twitter'],
    ['spec', PYTHON, 'vendorb'],
  ] as const) {
    const { api } = await startServer(t, { wireNames: mode });
    assertSuccess(t, await api.patch('hamlet', 'settings', { emojiset: 'vendorb' }));
    const body = assertSuccess(
      t,
      await api.post('hamlet', 'register', { fetch_event_types: ['user_settings'] }, { headers }),
    );
    t.equal((body.user_settings as { emojiset: string }).emojiset, expected, mode);
  }
});

t.test('a queue keeps its dialect across a graceful restart', async (t) => {
  const first = await startServer(t);
  const { api, fx, server, dataDir } = first;
  const ch = await createChannel(api, 'hamlet', 'restarts');
  const id = await sendChannelMessage(api, 'hamlet', ch, 't', 'before the restart');
  const refQueue = assertSuccess(
    t,
    await api.post(
      'hamlet',
      'register',
      { event_types: ['reaction', 'restart'] },
      { headers: TERMINAL },
    ),
  ).queue_id as string;
  const specQueue = (await register(t, api, 'hamlet', { event_types: ['reaction', 'restart'] }))
    .queue_id;
  await server.close();

  const { api: api2 } = await restartServer(t, dataDir, fx);
  assertSuccess(t, await api2.post('hamlet', `messages/${id}/reactions`, { emoji_name: 'zulip' }));
  const ref = await events(t, api2, 'hamlet', refQueue, -1, true);
  t.match(ref, [
    {
      type: 'restart',
      zulip_version: String,
      service_version: String,
      zulip_feature_level: Number,
    },
    { type: 'reaction', reaction_type: 'zulip_extra_emoji' },
  ]);
  const spec = await events(t, api2, 'hamlet', specQueue, -1, true);
  t.match(spec, [{ type: 'restart' }, { type: 'reaction', reaction_type: 'service_extra_emoji' }]);
});
