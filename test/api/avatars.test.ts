/**
 * Default avatars and realm icons point at this server, never at an outside host, unless the
 * realm opted into external avatars (src/lib/avatars.ts; docs/web.md "Avatars"): what avatar_url
 * the API gives (register, users, messages, message events, whatever client_extavatar says),
 * what /avatar/* answers, the default images themselves, the app page's policy, and opting in
 * with the admin tool.
 */
import t from 'tap';
import { assertSuccess, rawRequest } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { manage } from '../helpers/manage.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { request } from '../helpers/uploads.js';
import { startServer } from '../helpers/server.js';
import { useExternalAvatars } from '../helpers/realms.js';

const DEFAULT_AVATAR = '/static/images/default-avatar.png?version=1';
const OUTSIDE = /gravatar/;

t.test('by default every avatar and the realm icon are this server’s', async (t) => {
  const { api, fx, url } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const ch = await createChannel(api, 'hamlet', 'pictures', {
    principals: [hamlet.id, fx.users.othello!.id],
  });
  const q = await register(t, api, 'othello', { event_types: ['message'] });

  for (const client_extavatar of [undefined, true, false]) {
    const p = client_extavatar === undefined ? {} : { client_extavatar };
    const state = assertSuccess(
      t,
      await api.post('othello', 'register', { fetch_event_types: ['realm_user', 'realm'], ...p }),
    );
    t.notMatch(JSON.stringify(state), OUTSIDE, `register (${JSON.stringify(p)}): no outside host`);
    const users = state.realm_users as { avatar_url: string | null }[];
    t.ok(
      users.every((u) => u.avatar_url === DEFAULT_AVATAR),
      'each user: the default image',
    );
    t.equal(state.avatar_url, DEFAULT_AVATAR);
    t.equal(state.realm_icon_url, '/static/images/default-realm-icon.png');
    const members = assertSuccess(t, await api.get('othello', 'users', p)).members as {
      avatar_url: string | null;
    }[];
    t.ok(
      members.every((u) => u.avatar_url === DEFAULT_AVATAR),
      'GET /users',
    );
  }
  const settings = assertSuccess(t, await api.get(null, 'server_settings'));
  t.equal(settings.realm_icon, '/static/images/default-realm-icon.png', 'server_settings');

  await sendChannelMessage(api, 'hamlet', ch, 'hi', 'a picture of me?');
  const fetched = assertSuccess(
    t,
    await api.get('othello', 'messages', { anchor: 'newest', num_before: 1, num_after: 0 }),
  ).messages as { avatar_url: string | null }[];
  t.equal(fetched[0]!.avatar_url, DEFAULT_AVATAR, 'GET /messages');
  const events = assertSuccess(
    t,
    await api.get('othello', 'events', { queue_id: q.queue_id, last_event_id: -1 }),
  ).events as { type: string; message?: { avatar_url: string | null } }[];
  t.equal(
    events.find((e) => e.type === 'message')?.message?.avatar_url,
    DEFAULT_AVATAR,
    'a message event',
  );

  const redirect = await rawRequest(url, {
    method: 'GET',
    path: `/avatar/${hamlet.id}`,
    headers: {
      authorization: `Basic ${Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString('base64')}`,
    },
  });
  t.equal(redirect.status, 302);
  t.equal(redirect.headers.location, DEFAULT_AVATAR, '/avatar/{id}: to the default');

  // The images: PNGs, without credentials, cached, revalidated.
  for (const path of [
    '/static/images/default-avatar.png',
    '/static/images/default-realm-icon.png',
  ]) {
    const img = await request(api, 'GET', null, path);
    t.equal(img.status, 200, path);
    t.equal(img.headers['content-type'], 'image/png');
    t.same([...img.body.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'a PNG');
    t.ok(img.body.length > 200, `${img.body.length} bytes`);
    t.match(img.headers['cache-control'], /^public, max-age=\d+$/);
    t.equal(img.headers['x-content-type-options'], 'nosniff');
    const again = await request(api, 'GET', null, path, undefined, {
      'if-none-match': String(img.headers.etag),
    });
    t.equal(again.status, 304, 'revalidated');
  }

  const page = await request(api, 'GET', null, '/');
  t.notMatch(String(page.headers['content-security-policy']), /gravatar/, 'the page loads none');
});

t.test('a realm that opts in (the admin tool) uses the external host', async (t) => {
  const { api, fx, dataDir } = await startServer(t);
  const q = await register(t, api, 'othello', { event_types: ['realm'] });
  const on = await manage(dataDir, ['realm-external-avatars', '--realm', '', '--set', 'on']);
  t.equal(on.status, 0, on.stderr);
  t.same(on.json, { realm_id: fx.realmId, external_avatars: true });
  const shown = await manage(dataDir, ['realm-external-avatars', '--realm', '']);
  t.equal(shown.json.external_avatars, true, 'asked without --set: said');
  const bad = await manage(dataDir, ['realm-external-avatars', '--realm', '', '--set', 'maybe']);
  t.not(bad.status, 0, 'only on or off');

  const state = assertSuccess(
    t,
    await api.post('othello', 'register', { fetch_event_types: ['realm_user', 'realm'] }),
  );
  const users = state.realm_users as { avatar_url: string | null }[];
  t.ok(
    users.every((u) => u.avatar_url === null),
    'client_extavatar: left to the client',
  );
  t.match(state.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?/);
  t.match(state.realm_icon_url, /^https:\/\/secure\.gravatar\.com\//);
  t.notOk('realm_external_avatars' in state, 'not a register field');
  const events = assertSuccess(
    t,
    await api.get('othello', 'events', { queue_id: q.queue_id, last_event_id: -1 }),
  ).events as { type: string; op: string; property?: string; data?: Record<string, unknown> }[];
  t.match(
    events.filter((e) => e.type === 'realm'),
    [{ op: 'update_dict', property: 'icon', data: { icon_source: 'G', icon_url: /gravatar/ } }],
    'clients are told of the new realm icon (and nothing unknown to them)',
  );
  const page = await request(api, 'GET', null, '/');
  t.match(
    String(page.headers['content-security-policy']),
    /img-src 'self' data: blob: https:\/\/secure\.gravatar\.com;/,
    'the page may load them',
  );

  const off = await manage(dataDir, ['realm-external-avatars', '--realm', '', '--set', 'off']);
  t.equal(off.json.external_avatars, false);
  const back = assertSuccess(
    t,
    await api.post('othello', 'register', { fetch_event_types: ['realm_user'] }),
  );
  t.notMatch(JSON.stringify(back), /gravatar/, 'off again');
});

t.test(
  'user lists a register made before the realm opted in or out are not given after',
  async (t) => {
    const { api, fx, server } = await startServer(t);
    const avatars = async () =>
      (
        assertSuccess(
          t,
          await api.post('othello', 'register', { fetch_event_types: ['realm_user'] }),
        ).realm_users as { avatar_url: string | null }[]
      ).map((u) => u.avatar_url);
    t.ok(
      (await avatars()).every((a) => a === DEFAULT_AVATAR),
      'before: this server’s',
    );
    await useExternalAvatars(server, fx.realmId);
    t.ok(
      (await avatars()).every((a) => a === null),
      'opted in: left to the client',
    );
    await useExternalAvatars(server, fx.realmId, false);
    t.ok(
      (await avatars()).every((a) => a === DEFAULT_AVATAR),
      'opted out: this server’s again',
    );
  },
);
