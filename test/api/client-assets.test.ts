/**
 * Files clients fetch outside the JSON API: the emoji data file register names
 * (`server_emoji_data_url`) and the avatar redirects (`/avatar/{id}`, `/avatar/{email}`,
 * `/medium`), as the reference serves them.
 */
import crypto from 'node:crypto';
import t from 'tap';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { setRealmSettings } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';
import { emojiCodeForName } from '../../src/lib/emoji/index.js';

t.test('the emoji data file', async (t) => {
  const { api, url } = await startServer(t);
  const state = assertSuccess(
    t,
    await api.post('hamlet', 'register', { fetch_event_types: ['realm'] }),
  );
  const dataUrl = new URL(state.server_emoji_data_url as string);
  t.equal(dataUrl.origin, 'http://testserver.local', 'on the realm');
  const res = await rawRequest(url, { method: 'GET', path: dataUrl.pathname });
  t.equal(res.status, 200, 'served without credentials');
  t.equal(res.headers['content-type'], 'application/json');
  t.match(res.headers['cache-control'], /max-age=\d+/);
  const data = res.body as { code_to_names: Record<string, string[]> };
  const codes = Object.keys(data.code_to_names);
  t.ok(codes.length > 100, `${codes.length} emoji`);
  t.same(data.code_to_names[emojiCodeForName('smile')!]![0], 'smile', 'canonical name first');
  t.ok(
    Object.values(data.code_to_names).every((names) => Array.isArray(names) && names.length > 0),
    'every code has its names',
  );
  t.ok(codes.every((c) => /^[0-9a-f]{4,6}(-[0-9a-f]{4,6})*$/.test(c) && !c.includes('fe0f')));
  const stale = await rawRequest(url, {
    method: 'GET',
    path: '/static/generated/emoji/emoji_api.0000.json',
  });
  t.equal(stale.status, 404, 'another name is not found');
});

t.test('avatar redirects', async (t) => {
  const ts = await startServer(t);
  const { url, fx } = ts;
  const hamlet = fx.users.hamlet!;
  const auth = { authorization: basicAuth(fx.users.othello!.email, fx.users.othello!.api_key) };
  const get = (path: string, headers: Record<string, string> = auth) =>
    rawRequest(url, { method: 'GET', path, headers });
  const md5 = (s: string) => crypto.createHash('md5').update(s).digest('hex');

  // By default, the server's own image (test/api/avatars.test.ts); the external host's once the
  // realm opts in.
  t.equal(
    (await get(`/avatar/${hamlet.id}`)).headers.location,
    '/static/images/default-avatar.png?version=1',
  );
  t.equal(
    (await get('/avatar/stranger@example.com')).headers.location,
    '/static/images/default-avatar.png?version=1',
  );
  setRealmSettings(ts, { external_avatars: true });
  const byId = await get(`/avatar/${hamlet.id}`);
  t.equal(byId.status, 302);
  t.equal(
    byId.headers.location,
    `https://secure.gravatar.com/avatar/${md5(hamlet.email)}?d=identicon&version=1`,
  );
  t.equal(
    (await get(`/avatar/${hamlet.email}`)).headers.location,
    byId.headers.location,
    'by address',
  );
  t.equal(
    (await get(`/avatar/${hamlet.id}/medium`)).headers.location,
    `${byId.headers.location}&s=500`,
    'medium',
  );
  t.equal(
    (await get(`/avatar/${hamlet.id}?s=medium`)).headers.location,
    `${byId.headers.location}&s=medium`,
    'the query string is passed on',
  );
  t.equal(
    (await get('/avatar/stranger@example.com')).headers.location,
    `https://secure.gravatar.com/avatar/${md5('stranger@example.com')}?d=identicon&version=1`,
    'an unknown address: its identicon',
  );
  t.equal((await get(`/avatar/${hamlet.id}`, {})).status, 401, 'credentials needed');
  setRealmSettings(ts, { enable_spectator_access: true });
  t.equal((await get(`/avatar/${hamlet.id}`, {})).status, 302, 'spectators: by id');
  t.equal((await get(`/avatar/${hamlet.email}`, {})).status, 401, 'spectators: not by address');
});
