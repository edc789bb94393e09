/**
 * Large JSON answers clients fetch often are compressed when accepted (src/http/compress.ts;
 * docs/web.md "Compression"): register, GET /messages and the lists, as brotli or gzip by the
 * client's Accept-Encoding, decoding to the same answer; small answers and other endpoints as
 * they are; the /json/ routes alike.
 */
import zlib from 'node:zlib';
import t from 'tap';
import { formEncode } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { BrowserSession } from '../helpers/session.js';
import { request, type RawResponse } from '../helpers/uploads.js';

function decoded(r: RawResponse): Record<string, unknown> {
  const enc = r.headers['content-encoding'];
  const bytes =
    enc === 'br'
      ? zlib.brotliDecompressSync(r.body)
      : enc === 'gzip'
        ? zlib.gunzipSync(r.body)
        : r.body;
  return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
}

t.test('register, messages and lists: compressed as the client asks', async (t) => {
  const { url, fx, api } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const ch = await createChannel(api, 'hamlet', 'long talk');
  for (let i = 0; i < 30; i++)
    await sendChannelMessage(api, 'hamlet', ch, 'words', `message ${i}: ${'blah '.repeat(20)}`);
  const messages = `/api/v1/messages?${formEncode({ anchor: 'newest', num_before: 50, num_after: 0 })}`;

  const plain = await request(api, 'GET', 'hamlet', messages);
  t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: as it is');
  t.equal(plain.headers.vary, 'Accept-Encoding');
  const answer = decoded(plain);
  t.equal((answer.messages as unknown[]).length, 30);
  for (const [accept, coding] of [
    ['gzip, deflate', 'gzip'],
    ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['identity', undefined],
  ] as const) {
    const r = await request(api, 'GET', 'hamlet', messages, undefined, {
      'accept-encoding': accept,
    });
    t.equal(r.status, 200);
    t.equal(r.headers['content-encoding'], coding, `${accept}: ${coding ?? 'none'}`);
    t.equal(r.headers.vary, 'Accept-Encoding');
    t.same(decoded(r), answer, 'the same answer');
    if (coding)
      t.ok(r.body.length < plain.body.length / 3, `${plain.body.length} → ${r.body.length} bytes`);
  }

  const register = await request(api, 'POST', 'hamlet', '/api/v1/register', Buffer.alloc(0), {
    'accept-encoding': 'gzip',
    'content-type': 'application/x-www-form-urlencoded',
  });
  t.equal(register.headers['content-encoding'], 'gzip', 'register');
  t.ok(decoded(register).queue_id, 'a queue');
  const users = await request(api, 'GET', 'hamlet', '/api/v1/users', undefined, {
    'accept-encoding': 'gzip',
  });
  t.equal(users.headers['content-encoding'], 'gzip', 'the user list');
  t.equal(decoded(users).result, 'success');
  // The channel lists too, once large enough (small here): Vary says they may be.
  for (const path of ['/api/v1/users/me/subscriptions', '/api/v1/streams']) {
    const r = await request(api, 'GET', 'hamlet', path, undefined, { 'accept-encoding': 'gzip' });
    t.equal(r.headers.vary, 'Accept-Encoding', path);
    t.equal(decoded(r).result, 'success');
  }

  // Small answers, and endpoints that do not ask for it, go as they are.
  const topics = await request(api, 'GET', 'hamlet', `/api/v1/users/me/${ch}/topics`, undefined, {
    'accept-encoding': 'gzip',
  });
  t.ok(topics.body.length < 1024, `a small answer (${topics.body.length} bytes)`);
  t.equal(topics.headers['content-encoding'], undefined, 'as it is');
  const me = await request(api, 'GET', 'hamlet', '/api/v1/users/me', undefined, {
    'accept-encoding': 'gzip',
  });
  t.equal(me.headers['content-encoding'], undefined, 'GET /users/me: as it is');

  // The browser's routes alike.
  const session = await BrowserSession.must(url, hamlet);
  const viaSession = await request(
    api,
    'GET',
    null,
    messages.replace('/api/v1/', '/json/'),
    undefined,
    {
      cookie: `confab_session=${session.token}`,
      'accept-encoding': 'gzip, deflate',
    },
  );
  t.equal(viaSession.headers['content-encoding'], 'gzip', '/json/messages');
  t.same(decoded(viaSession), answer);
});
