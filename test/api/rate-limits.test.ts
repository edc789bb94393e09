/**
 * Rate limits over HTTP (docs/robustness.md "Rate limits"), on small rules and a clock the test moves:
 * per user, per address for requests without credentials, per username for POST /fetch_api_key,
 * per address and account for failed HTTP Basic authentications; the event-queue budget of its own (long-polls
 * and sockets keep working while the API budget is spent); X-Forwarded-For believed only from a
 * trusted proxy. Reference: zerver/tests/test_external.py RateLimitTests, test_auth_backends.py.
 */
import http from 'node:http';
import t, { type Test } from 'tap';
import { DEFAULT_RATE_LIMITS, type RateLimitRules } from '../../src/config.js';
import {
  assertError,
  assertSuccess,
  basicAuth,
  rawRequest,
  type ApiResponse,
} from '../helpers/api.js';
import { mustOpen, openSocket, poll, register, until } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { BrowserSession } from '../helpers/session.js';
import { ENDPOINTS } from '../../src/endpoints/index.js';

function limited(rules: Partial<RateLimitRules>) {
  const clock = { ms: 10_000_000, advance: (s: number) => void (clock.ms += s * 1000) };
  return {
    clock,
    opts: {
      rateLimits: { ...DEFAULT_RATE_LIMITS, ...rules },
      rateLimitClock: () => clock.ms,
    },
  };
}

function assertRateLimited(t: Test, res: ApiResponse, retryAfter: number): void {
  assertError(t, res, 'API usage exceeded rate limit', { status: 429, code: 'RATE_LIMIT_HIT' });
  t.equal(res.body['retry-after'], retryAfter, 'retry-after (seconds)');
  t.equal(res.headers['retry-after'], String(retryAfter), 'Retry-After header');
  t.equal(res.headers['x-ratelimit-remaining'], '0', 'X-RateLimit-Remaining: 0');
  assertMatchesOpenApi(t, '/rest-error-handling', 'post', res.body, { status: '429' });
}

t.test(
  'per user: 200 per minute by default, here 5; others unaffected; back after the wait',
  async (t) => {
    const { clock, opts } = limited({ api_by_user: [[60, 5]] });
    const { api } = await startServer(t, opts);
    for (let i = 0; i < 5; i++) {
      const before = Math.floor(Date.now() / 1000);
      const res = await api.get('hamlet', 'users/me');
      assertSuccess(t, res);
      t.equal(res.headers['x-ratelimit-limit'], '5', 'X-RateLimit-Limit');
      t.equal(res.headers['x-ratelimit-remaining'], String(4 - i), 'X-RateLimit-Remaining');
      const reset = Number(res.headers['x-ratelimit-reset']);
      const after = Math.floor(Date.now() / 1000);
      t.ok(
        reset >= before + 12 * (i + 1) && reset <= after + 12 * (i + 1),
        'X-RateLimit-Reset: Unix time when the whole budget is back',
      );
    }
    assertRateLimited(t, await api.get('hamlet', 'users/me'), 12);
    // Malformed requests and other endpoints share the budget (counted before the parameters).
    assertRateLimited(
      t,
      await api.get('hamlet', 'users/me/subscriptions', { include_subscribers: 'x' }),
      12,
    );
    assertRateLimited(t, await api.post('hamlet', 'users/me/alert_words', {}), 12);
    assertSuccess(
      t,
      await api.get('othello', 'users/me'),
      'another user has a budget of their own',
    );
    clock.advance(11);
    assertRateLimited(t, await api.get('hamlet', 'users/me'), 1);
    clock.advance(1);
    const back = await api.get('hamlet', 'users/me');
    assertSuccess(t, back, 'one more after 60 / 5 seconds');
    t.equal(back.headers['x-ratelimit-remaining'], '0');
    clock.advance(60);
    for (let i = 0; i < 5; i++)
      assertSuccess(t, await api.get('hamlet', 'users/me'), 'budget whole');
  },
);

t.test('a request that went through the limit still answers its own error', async (t) => {
  const { opts } = limited({ api_by_user: [[60, 5]] });
  const { api } = await startServer(t, opts);
  const res = await api.get('hamlet', 'users/me/subscriptions', { include_subscribers: 'x' });
  assertError(t, res, 'include_subscribers is not valid JSON', { code: 'INVALID_JSON' });
  t.equal(res.headers['x-ratelimit-remaining'], '4', 'and it was counted');
});

t.test('long-polling and WebSockets have a budget of their own', async (t) => {
  const { clock, opts } = limited({ api_by_user: [[60, 3]], events_by_user: [[60, 4]] });
  const ts = await startServer(t, opts);
  const { api, fx, server } = ts;
  const q = await register(t, api, 'hamlet', { event_types: ['alert_words'] });
  await api.get('hamlet', 'users/me');
  await api.get('hamlet', 'users/me');
  assertRateLimited(t, await api.get('hamlet', 'users/me'), 20);

  // A poll held while the API budget is spent is answered by the next event.
  const held = poll(api, 'hamlet', q.queue_id, -1);
  await until(() => server.context.queues.consumers().waiting === 1, 'the poll is held');
  clock.advance(20);
  assertSuccess(t, await api.post('hamlet', 'users/me/alert_words', { alert_words: ['x'] }));
  const got = assertSuccess(t, await held, 'the held poll is answered');
  t.match(got.events, [{ type: 'alert_words', id: 0 }]);
  t.equal((await held).headers['x-ratelimit-limit'], '4', 'counted in the events budget');

  // A socket while the API budget is spent again.
  assertRateLimited(t, await api.get('hamlet', 'users/me'), 20);
  const socket = await mustOpen(t, ts.url, fx.users.hamlet!, {
    queue_id: q.queue_id,
    last_event_id: 0,
  });
  t.ok(socket, 'the socket opens');
  socket.ws.terminate();

  // The events budget is its own (4 per minute, one every 15 s): the poll 20 s ago has been
  // refilled, the socket took one, three polls take the rest.
  for (let i = 0; i < 3; i++) assertSuccess(t, await poll(api, 'hamlet', q.queue_id, 0, true));
  assertRateLimited(t, await poll(api, 'hamlet', q.queue_id, 0, true), 15);
  const refused = await openSocket(ts.url, fx.users.hamlet!, {
    queue_id: q.queue_id,
    last_event_id: 0,
  });
  t.match(
    refused,
    {
      status: 429,
      body: { result: 'error', code: 'RATE_LIMIT_HIT', msg: 'API usage exceeded rate limit' },
    },
    'an upgrade over the events budget is refused before the upgrade',
  );
});

t.test('without credentials: per address; X-Forwarded-For ignored unless trusted', async (t) => {
  const { clock, opts } = limited({ api_by_ip: [[60, 3]] });
  const { api } = await startServer(t, opts);
  for (let i = 0; i < 3; i++) {
    const res = await api.get(
      null,
      'server_settings',
      {},
      {
        headers: { 'x-forwarded-for': `198.51.100.${i}` },
      },
    );
    assertSuccess(t, res);
    t.equal(res.headers['x-ratelimit-remaining'], String(2 - i));
  }
  const res = await api.get(
    null,
    'server_settings',
    {},
    {
      headers: { 'x-forwarded-for': '198.51.100.99' },
    },
  );
  assertRateLimited(t, res, 20);
  // Every route without credentials shares the address's budget.
  assertRateLimited(t, await api.post(null, 'fetch_api_key', { username: 'a', password: 'b' }), 20);
  assertRateLimited(t, await api.post(null, 'register', {}), 20);
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'authenticated requests count per user');
  clock.advance(20);
  assertSuccess(t, await api.get(null, 'server_settings'));
});

t.test('behind a trusted proxy, each forwarded client has its own budget', async (t) => {
  const { opts } = limited({ api_by_ip: [[60, 2]] });
  const { api } = await startServer(t, { ...opts, trustedProxies: ['127.0.0.1'] });
  const from = (ip: string) =>
    api.get(null, 'server_settings', {}, { headers: { 'x-forwarded-for': `10.9.9.9, ${ip}` } });
  assertSuccess(t, await from('203.0.113.1'));
  assertSuccess(t, await from('203.0.113.1'));
  assertRateLimited(t, await from('203.0.113.1'), 30);
  assertSuccess(t, await from('203.0.113.2'), 'another client behind the proxy');
  assertSuccess(t, await from('2001:db8:1:2::1'));
  assertSuccess(t, await from('2001:db8:1:2::ffff'));
  assertRateLimited(t, await from('2001:db8:1:2:abcd::1'), 30);
  assertSuccess(t, await from('2001:db8:1:3::1'), 'IPv6 clients are counted by /64');
  assertSuccess(t, await api.get(null, 'server_settings'), 'the proxy itself, without the header');
});

t.test('fetch_api_key: attempts per username, even the right password once over', async (t) => {
  const { clock, opts } = limited({ authenticate_by_username: [[1800, 2]] });
  const { api, fx } = await startServer(t, opts);
  const hamlet = fx.users.hamlet!;
  const login = (username: string, password: string) =>
    api.post(null, 'fetch_api_key', { username, password });
  assertError(t, await login(hamlet.email, 'wrong'), 'Your username or password is incorrect', {
    status: 401,
    code: 'AUTHENTICATION_FAILED',
  });
  assertError(t, await login(` ${hamlet.email.toUpperCase()} `, 'wrong'), /incorrect/, {
    status: 401,
    code: 'AUTHENTICATION_FAILED',
  });
  assertRateLimited(t, await login(hamlet.email, hamlet.password), 900);
  const other = fx.users.othello!;
  t.equal(
    assertSuccess(t, await login(other.email, other.password)).api_key,
    other.api_key,
    'another username is not affected',
  );
  clock.advance(900);
  t.equal(
    assertSuccess(t, await login(hamlet.email, hamlet.password)).api_key,
    hamlet.api_key,
    'after the wait, the right password works',
  );
  // A successful login forgets the failures: two more may fail.
  await login(hamlet.email, 'wrong');
  await login(hamlet.email, 'wrong');
  assertRateLimited(t, await login(hamlet.email, 'wrong'), 900);
});

t.test('failed HTTP Basic authentications, per address and account', async (t) => {
  const { clock, opts } = limited({ failed_authentication_by_ip: [[60, 3]] });
  const { fx, url } = await startServer(t, { ...opts, trustedProxies: ['127.0.0.1'] });
  const hamlet = fx.users.hamlet!;
  const as = (email: string, key: string, ip = '203.0.113.7') =>
    rawRequest(url, {
      method: 'GET',
      path: '/api/v1/users/me',
      headers: {
        host: 'testserver.local',
        authorization: basicAuth(email, key),
        'x-forwarded-for': ip,
      },
    });
  // hamlet authenticates once from this address (his header is then cached as valid).
  assertSuccess(t, await as(hamlet.email, hamlet.api_key));
  for (let i = 0; i < 3; i++) {
    assertError(t, await as(hamlet.email, `guess-${i}`), 'Invalid API key', {
      status: 401,
      code: 'UNAUTHORIZED',
    });
  }
  assertRateLimited(t, await as(hamlet.email, 'guess-3'), 20);
  assertSuccess(t, await as(hamlet.email, hamlet.api_key), 'credentials known good still pass');
  // Behind the same address (a NAT, a proxy), other accounts' valid keys are not refused.
  const othello = fx.users.othello!;
  assertSuccess(t, await as(othello.email, othello.api_key), "another account's key passes");
  // Nor by guesses at many accounts, or at accounts that do not exist.
  const cordelia = fx.users.cordelia!;
  for (const who of [othello, fx.users.iago!]) {
    for (let i = 0; i < 3; i++) await as(who.email, `guess-${i}`);
    assertRateLimited(t, await as(who.email, 'guess-3'), 20);
  }
  for (let i = 0; i < 3; i++) await as(`nobody${i}@zulip.com`, 'guess');
  assertRateLimited(t, await as('nobody9@zulip.com', 'guess'), 20);
  assertSuccess(t, await as(cordelia.email, cordelia.api_key), 'a valid key still passes');
  assertError(t, await as(hamlet.email, 'guess-4', '203.0.113.8'), 'Invalid API key', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  t.pass('the same account from another address is not affected');
  const noCredentials = await rawRequest(url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { host: 'testserver.local', 'x-forwarded-for': '203.0.113.7' },
  });
  assertError(t, noCredentials, 'Not logged in: API authentication or user session required', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  clock.advance(20);
  assertError(t, await as(hamlet.email, 'guess-6'), 'Invalid API key', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
});

t.test('rate limits off: no headers, no 429', async (t) => {
  const { api } = await startServer(t); // the test default: rateLimits null
  for (let i = 0; i < 250; i++) {
    const res = await api.get('hamlet', 'users/me');
    if (res.status !== 200) {
      t.fail(`request ${i}: ${res.status}`);
      return;
    }
    if (i === 0) t.equal(res.headers['x-ratelimit-limit'], undefined, 'no X-RateLimit-Limit');
  }
  t.pass('250 requests in a row, all answered');
});

t.test(
  'every registered endpoint counts: once the budgets are spent each answers 429 and changes nothing',
  async (t) => {
    const { opts } = limited({
      api_by_user: [[60, 1]],
      events_by_user: [[60, 1]],
      api_by_ip: [[60, 1]],
    });
    const { api, url, events } = await startServer(t, opts);
    const hamlet = api.fx.users.hamlet!;
    // Spend each budget with one request (malformed requests count too); the browser's login
    // is one without credentials.
    const browser = await BrowserSession.must(url, hamlet);
    assertSuccess(t, await api.get('hamlet', 'users/me'));
    await api.get('hamlet', 'events');
    t.equal((await api.get(null, 'server_settings')).status, 429, 'the address is over');
    const eventsBefore = events.length;
    let checked = 0;
    // Media routes count against no per-user limit, as the reference's (a page loads many).
    const counted = ENDPOINTS.filter((ep) => ep.rateLimitBucket !== null);
    for (const ep of counted) {
      const path = ep.path
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '1' : seg.startsWith('*') ? 'a/b.txt' : seg))
        .join('/');
      const headers: Record<string, string> = { host: 'testserver.local' };
      if (ep.sessionAuth === 'only') {
        headers.cookie = `confab_session=${browser.token}`;
        headers['x-csrf-token'] = browser.csrfToken;
      } else if (ep.auth !== 'none') {
        headers.authorization = basicAuth(hamlet.email, hamlet.api_key);
      }
      const res = await rawRequest(url, { method: ep.method, path, headers });
      if (res.status !== 429 || res.body.code !== 'RATE_LIMIT_HIT') {
        t.fail(`${ep.method} ${ep.path}: ${res.status} ${res.text.slice(0, 200)}`);
      } else {
        checked++;
      }
    }
    t.equal(checked, counted.length, `all ${counted.length} endpoints refused`);
    t.equal(events.length, eventsBefore, 'no event: nothing was changed');
    const media = ENDPOINTS.filter((ep) => ep.rateLimitBucket === null).map((ep) => ep.path);
    t.same(
      media.sort(),
      [
        '/avatar/:who',
        '/avatar/:who/medium',
        '/user_uploads/*path_id',
        '/user_uploads/thumbnail/*rest',
      ],
      'the media routes only',
    );
    const avatar = await rawRequest(url, {
      method: 'GET',
      path: `/avatar/${hamlet.id}`,
      headers: { authorization: basicAuth(hamlet.email, hamlet.api_key) },
    });
    t.equal(avatar.status, 302, 'an avatar still loads');
  },
);

/** An answer's header names and values in the order they came on the wire. */
function rawHead(
  url: string,
  path: string,
  user: { email: string; api_key: string },
): Promise<{ status: number; head: string[] }> {
  return new Promise((resolve, reject) => {
    http
      .get(
        new URL(path, url),
        { headers: { Authorization: basicAuth(user.email, user.api_key) }, agent: false },
        (res) => {
          res.resume();
          res.on('end', () => {
            const head: string[] = [];
            for (let i = 0; i < res.rawHeaders.length; i += 2)
              head.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
            resolve({ status: res.statusCode!, head });
          });
        },
      )
      .on('error', reject);
  });
}

t.test(
  "an answer's head: Content-Type, the answer's own headers, then the X-RateLimit-* lines, once each",
  async (t) => {
    const { clock, opts } = limited({ api_by_user: [[60, 2]], events_by_user: [[60, 4]] });
    const ts = await startServer(t, opts);
    const { api, fx, server } = ts;
    const hamlet = fx.users.hamlet!;
    // The server's clock when it took the request lies between the test's before it was sent and
    // after it was answered; a second can turn in between (the more likely, the more loaded the
    // machine), so the line is matched against that span, not against the second after.
    const seconds = () => Math.floor(Date.now() / 1000);
    const reset = (before: number, budgetSeconds: number) => {
      const after = seconds();
      const ok = Array.from({ length: after - before + 2 }, (_, i) => before + budgetSeconds + i);
      return new RegExp(`^X-RateLimit-Reset: (${ok.join('|')})$`);
    };
    // Uws adds Date, Content-Length (and, by build, its own mark) after what the server wrote.
    const own = (head: string[]) =>
      head.filter((h) => !/^(Date|Content-Length|uWebSockets):/i.test(h));

    // Answered within the route's callback.
    const okSent = seconds();
    const ok = await rawHead(ts.url, '/api/v1/users/me', hamlet);
    t.equal(ok.status, 200);
    t.match(own(ok.head), [
      'Content-Type: application/json',
      'X-RateLimit-Limit: 2',
      'X-RateLimit-Remaining: 1',
      reset(okSent, 30),
    ]);
    t.equal(own(ok.head).length, 4, 'nothing else');

    // Refused, with a header of the error's own.
    await api.get('hamlet', 'users/me');
    const refusedSent = seconds();
    const refused = await rawHead(ts.url, '/api/v1/users/me', hamlet);
    t.equal(refused.status, 429);
    t.match(own(refused.head), [
      'Content-Type: application/json',
      /^Retry-After: \d+$/,
      'X-RateLimit-Limit: 2',
      'X-RateLimit-Remaining: 0',
      reset(refusedSent, 60),
    ]);
    t.equal(own(refused.head).length, 5, 'nothing else');

    // Answered later, outside the route's callback: a held poll.
    clock.advance(60);
    const q = await register(t, api, 'hamlet', { event_types: ['alert_words'] });
    const held = rawHead(
      ts.url,
      `/api/v1/events?queue_id=${encodeURIComponent(q.queue_id)}&last_event_id=-1`,
      hamlet,
    );
    await until(() => server.context.queues.consumers().waiting === 1, 'the poll is held');
    assertSuccess(t, await api.post('hamlet', 'users/me/alert_words', { alert_words: ['x'] }));
    const later = await held;
    t.equal(later.status, 200);
    t.match(own(later.head), [
      'Content-Type: application/json',
      'X-RateLimit-Limit: 4',
      /^X-RateLimit-Remaining: \d+$/,
      /^X-RateLimit-Reset: \d+$/,
    ]);
    t.equal(own(later.head).length, 4, 'nothing else');
  },
);
