/**
 * The user's own API key (src/endpoints/api-key.ts; the web app's Settings → Account):
 * POST /users/me/api_key/regenerate by HTTP Basic and by the browser session (/json/, with its
 * CSRF token), the old key refused at once, the other browser sessions ended and the asking one
 * kept, bots refused; POST /json/fetch_api_key then shows the new key. Against the real server.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { startServer } from '../helpers/server.js';
import { BrowserSession } from '../helpers/session.js';

t.test('by the API: a new key, the old one refused at once', async (t) => {
  const { api, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const elsewhere = await BrowserSession.must(api.baseUrl, hamlet);
  const body = assertSuccess(t, await api.post('hamlet', 'users/me/api_key/regenerate'));
  t.same(Object.keys(body).sort(), ['api_key', 'msg', 'result']);
  const fresh = body.api_key as string;
  t.match(fresh, /^[A-Za-z0-9]{32}$/);
  t.not(fresh, hamlet.api_key);
  const old = await api.get('hamlet', 'users/me');
  t.equal(old.status, 401, 'the old key no longer works');
  const me = assertSuccess(t, await api.get({ ...hamlet, api_key: fresh }, 'users/me'));
  t.equal(me.user_id, hamlet.id, 'the new one does');
  t.equal((await elsewhere.get('session')).status, 401, 'browser sessions ended');
  assertSuccess(t, await api.get('othello', 'users/me'), "another user's key is untouched");
});

t.test('by the browser session: the asking session stays, the others end', async (t) => {
  const { api, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const page = await BrowserSession.must(api.baseUrl, hamlet);
  const other = await BrowserSession.must(api.baseUrl, hamlet);
  const noCsrf = await page.post('users/me/api_key/regenerate', {}, { csrf: false });
  t.equal(noCsrf.status, 403, 'needs the CSRF token');
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'nothing changed then');

  const body = assertSuccess(t, await page.post('users/me/api_key/regenerate'));
  const fresh = body.api_key as string;
  t.not(fresh, hamlet.api_key);
  t.equal((await api.get('hamlet', 'users/me')).status, 401, 'the old key no longer works');
  assertSuccess(t, await page.get('session'), 'the session that asked is still logged in');
  t.equal((await other.get('session')).status, 401, 'the other session ended');
  const shown = assertSuccess(
    t,
    await page.post('fetch_api_key', { password: hamlet.password }),
    'the key, for the password',
  );
  t.equal(shown.api_key, fresh, 'is the new one');
});

t.test("people only: a bot's key is renewed by its owner", async (t) => {
  const { api } = await startServer(t);
  const made = assertSuccess(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Key Bot', short_name: 'keybot' }),
  );
  const bot = { email: 'keybot-bot@testserver.local', api_key: made.api_key as string };
  assertError(
    t,
    await api.post(bot, 'users/me/api_key/regenerate'),
    'This endpoint does not accept bot requests.',
  );
  assertSuccess(t, await api.get(bot, 'users/me'), "the bot's key still works");
});
