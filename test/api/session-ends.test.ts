/**
 * How browser sessions end (src/mutations/sessions.ts; docs/web.md "Sessions"): expiry, a new
 * password (the session that set it stays), a new API key, deactivation of the user or the
 * realm (a later reactivation brings none back); how many a user may hold; and logins counted
 * against the same limit as POST /fetch_api_key.
 */
import t from 'tap';
import { DEFAULT_RATE_LIMITS } from '../../src/config.js';
import { MAX_SESSIONS_PER_USER } from '../../src/mutations/sessions.js';
import { assertError, assertSuccess } from '../helpers/api.js';
import { startServer } from '../helpers/server.js';
import { BrowserSession } from '../helpers/session.js';

const live = async (s: BrowserSession) => (await s.get('session')).status === 200;

t.test('a session expires after SESSION_COOKIE_AGE', async (t) => {
  let now = Date.now();
  const { url, fx } = await startServer(t, { clock: () => now, sessionAgeSeconds: 3600 });
  const { response, session } = await BrowserSession.login(
    url,
    fx.users.hamlet!.email,
    fx.users.hamlet!.password,
  );
  t.match(String(response.headers['set-cookie']), /Max-Age=3600;/, 'the cookie says so too');
  now += 3599_000;
  t.ok(await live(session!), 'alive just before');
  now += 2000;
  t.notOk(await live(session!), 'over after an hour');
  t.equal((await session!.get('users/me')).status, 401);
});

t.test('a new password ends the sessions; the one that set it stays', async (t) => {
  const { url, fx, api } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const here = await BrowserSession.must(url, hamlet);
  const elsewhere = await BrowserSession.must(url, hamlet);
  const othello = await BrowserSession.must(url, fx.users.othello!);
  assertSuccess(
    t,
    await here.patch('settings', { old_password: hamlet.password, new_password: 'brand-new-1' }),
  );
  t.ok(await live(here), 'the session that changed it');
  t.notOk(await live(elsewhere), "the user's other session ended");
  t.ok(await live(othello), "another user's is untouched");
  t.ok((await BrowserSession.login(url, hamlet.email, 'brand-new-1')).session, 'new password');

  // Through the API (no session of the request's own): every session ends.
  assertSuccess(
    t,
    await api.patch('hamlet', 'settings', { old_password: 'brand-new-1', new_password: 'third-1' }),
  );
  t.notOk(await live(here));
});

t.test('the operator sets a password or a new API key: sessions end', async (t) => {
  const { url, fx, server } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const realm = server.context.realms.get(fx.realmId)!;
  const s1 = await BrowserSession.must(url, hamlet);
  await realm.ask('user.api_key.regenerate', { user_id: hamlet.id });
  t.notOk(await live(s1), 'a new API key');
  const s2 = await BrowserSession.must(url, hamlet);
  await realm.ask('user.password.set', { user_id: hamlet.id, password_hash: null });
  t.notOk(await live(s2), 'a password set (here: removed) by the operator');
});

t.test('deactivation ends sessions; reactivation brings none back', async (t) => {
  const { url, fx, api, server } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const s = await BrowserSession.must(url, hamlet);
  const other = await BrowserSession.must(url, fx.users.othello!);
  assertSuccess(t, await api.delete('iago', `users/${hamlet.id}`));
  t.notOk(await live(s), 'the deactivated user');
  t.ok(await live(other), 'others stay');
  const again = await BrowserSession.login(url, hamlet.email, hamlet.password);
  assertError(t, again.response, 'Account is deactivated', {
    status: 401,
    code: 'USER_DEACTIVATED',
  });
  assertSuccess(t, await api.post('iago', `users/${hamlet.id}/reactivate`));
  t.notOk(await live(s), 'not revived by reactivation');
  const rows = server.store.db
    .prepare('SELECT count(*) AS n FROM sessions WHERE user_id = ?')
    .get(hamlet.id) as { n: number };
  t.equal(rows.n, 0, 'the rows are gone');

  const iago = await BrowserSession.must(url, fx.users.iago!);
  assertSuccess(t, await api.post('desdemona', 'realm/deactivate'));
  t.notOk(await live(other), 'the realm deactivated: every session');
  t.notOk(await live(iago));
  const realm = server.context.realms.get(fx.realmId)!;
  await realm.ask('realm.reactivate', {});
  t.notOk(await live(iago), 'not revived by reactivation');
});

t.test('at most MAX_SESSIONS_PER_USER sessions: the oldest goes', async (t) => {
  let now = Date.now();
  const { url, fx } = await startServer(t, { clock: () => now });
  const hamlet = fx.users.hamlet!;
  const sessions: BrowserSession[] = [];
  for (let i = 0; i < MAX_SESSIONS_PER_USER + 2; i++) {
    now += 1000; // one a second: an order of age
    sessions.push(await BrowserSession.must(url, hamlet));
  }
  t.notOk(await live(sessions[0]!), 'the oldest ended');
  t.notOk(await live(sessions[1]!));
  t.ok(await live(sessions[2]!), 'the rest live');
  t.ok(await live(sessions[sessions.length - 1]!));
});

t.test('logins count against the username, as fetch_api_key', async (t) => {
  const { url, fx, api } = await startServer(t, {
    rateLimits: { ...DEFAULT_RATE_LIMITS, authenticate_by_username: [[1800, 3]] },
  });
  const hamlet = fx.users.hamlet!;
  for (let i = 0; i < 2; i++)
    t.equal((await BrowserSession.login(url, hamlet.email, 'wrong')).response.status, 401);
  // One budget with the API's password login.
  t.equal(
    (await api.post(null, 'fetch_api_key', { username: hamlet.email, password: 'x' })).status,
    401,
  );
  const limited = await BrowserSession.login(url, hamlet.email, hamlet.password);
  assertError(t, limited.response, 'API usage exceeded rate limit', {
    status: 429,
    code: 'RATE_LIMIT_HIT',
  });
  t.ok(limited.response.headers['retry-after'], 'Retry-After');
  t.ok(
    (await BrowserSession.login(url, fx.users.othello!.email, fx.users.othello!.password)).session,
    'another username is not limited',
  );
});
