/**
 * The event WebSocket for browsers, GET /json/events/socket (src/http/socket.ts; docs/web.md
 * "The event WebSocket"): authenticated by the session cookie, never Basic, and only from the
 * page's own origin; the same frames, subprotocols and acknowledgements as /api/v1/events/socket.
 */
import t, { type Test } from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { openSocket, type SocketClient, type SocketOpen } from '../helpers/events.js';
import { startServer } from '../helpers/server.js';
import { BrowserSession } from '../helpers/session.js';

const PATH = '/json/events/socket';

function refused(t: Test, r: SocketOpen, status: number, code: string): void {
  if ('client' in r) {
    t.fail('the socket opened');
    r.client.ws.terminate();
    return;
  }
  t.equal(r.status, status, `refused: ${status}`);
  t.equal(r.body.code, code, code);
}

t.test('a browser session streams its queue over /json/events/socket', async (t) => {
  const { url, fx, api } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const session = await BrowserSession.must(url, hamlet);
  const reg = assertSuccess(
    t,
    await session.post('register', { event_types: ['message'], apply_markdown: true }),
  );
  const query = { queue_id: reg.queue_id as string, last_event_id: -1 };
  const origin = new URL(url).origin;
  const headers = { cookie: `confab_session=${session.token}`, origin };
  const sockets: SocketClient[] = [];
  t.teardown(() => sockets.forEach((s) => s.ws.terminate()));

  for (const protocols of [[], ['msgpack', 'json']]) {
    const open = await openSocket(url, null, query, protocols, { path: PATH, headers });
    if (!('client' in open)) {
      t.fail(`refused: ${open.status} ${JSON.stringify(open.body)}`);
      return;
    }
    const client = open.client;
    sockets.push(client);
    t.equal(client.protocol, protocols.length ? 'msgpack' : '', `subprotocol ${client.protocol}`);
    const sent = assertSuccess(
      t,
      await api.post('othello', 'messages', { type: 'private', to: [hamlet.id], content: 'hi' }),
    );
    const [ev] = await client.nextEvents(1);
    t.match(ev, { type: 'message', message: { id: sent.id, content: '<p>hi</p>' } });
    client.ack(ev!.id, client.protocol === 'msgpack');
    query.last_event_id = ev!.id;
    await client.close();
  }
});

t.test('who may open it: the session, from its own page', async (t) => {
  const { url, fx } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const session = await BrowserSession.must(url, hamlet);
  const reg = assertSuccess(t, await session.post('register', { event_types: ['message'] }));
  const query = { queue_id: reg.queue_id as string, last_event_id: -1 };
  const origin = new URL(url).origin;
  const cookie = `confab_session=${session.token}`;
  const open = (headers: Record<string, string>, user: typeof hamlet | null = null) =>
    openSocket(url, user, query, [], { path: PATH, headers });

  refused(t, await open({ cookie }), 403, 'CSRF_FAILED'); // no Origin: not from a page
  refused(t, await open({ cookie, origin: 'https://evil.example' }), 403, 'CSRF_FAILED');
  refused(t, await open({ cookie, origin: 'null' }), 403, 'CSRF_FAILED');
  refused(t, await open({ cookie, origin, 'sec-fetch-site': 'cross-site' }), 403, 'CSRF_FAILED');

  const noSession = await open({ origin });
  refused(t, noSession, 401, 'UNAUTHORIZED');
  if (!('client' in noSession))
    t.equal(noSession.headers['www-authenticate'], 'Session realm="confab"', 'never Basic');
  // The API key does not open the browsers' socket; the cookie does not open the API's.
  refused(t, await open({ origin }, hamlet), 401, 'UNAUTHORIZED');
  const cookieOnApi = await openSocket(url, null, query, [], { headers: { cookie, origin } });
  refused(t, cookieOnApi, 401, 'UNAUTHORIZED');
  if (!('client' in cookieOnApi))
    t.match(cookieOnApi.headers['www-authenticate'], /^Basic /, 'the API keeps Basic');

  // Another user's session cannot attach to this queue.
  const othello = await BrowserSession.must(url, fx.users.othello!);
  refused(
    t,
    await open({ cookie: `confab_session=${othello.token}`, origin }),
    400,
    'BAD_EVENT_QUEUE_ID',
  );

  const ok = await open({ cookie, origin, 'sec-fetch-site': 'same-origin' });
  t.ok('client' in ok, 'the page itself');
  if ('client' in ok) await ok.client.close();

  // After logout the cookie opens nothing.
  assertSuccess(t, await session.post('logout'));
  refused(t, await open({ cookie, origin }), 401, 'UNAUTHORIZED');
});
