/**
 * Outgoing webhooks against a real HTTP receiver on loopback: a mention in a channel and a direct
 * message POST the reference's payload to the bot's URL, and the answer's `content` comes back as
 * the bot's reply; a failing endpoint (5xx, a timeout, a private address refused) makes the bot's
 * owner get a notice from the notification bot; a call under way at a stop is made after the
 * restart (the durable queue), one that waited too long is dropped. Reference tests:
 * zerver/tests/test_outgoing_webhook_system.py, test_outgoing_webhook_interfaces.py.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { ApiClient, assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { TestClock } from '../helpers/clock.js';
import { until } from '../helpers/events.js';
import { captureLog } from '../helpers/log.js';
import { startServer, TEST_SERVER_OPTIONS, type TestServer } from '../helpers/server.js';
import { MAX_AGE_SECONDS, MAX_WAITING, PER_BOT } from '../../src/bots/outgoing-webhooks.js';
import { createServer } from '../../src/server.js';

type Received = { headers: http.IncomingHttpHeaders; body: Record<string, unknown> };

/** A receiver that answers each request with `answer` (a status and a body, or never). */
async function receiver(
  t: Test,
  answer: (r: Received) => { status: number; body: string } | 'hang',
): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) };
      got.push(r);
      const a = answer(r);
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

async function outgoingBot(t: Test, ts: TestServer, url: string) {
  const body = assertSuccess(
    t,
    await ts.api.post('hamlet', 'bots', {
      full_name: 'Echo Bot',
      short_name: 'echo',
      bot_type: 3,
      payload_url: JSON.stringify(url),
    }),
  );
  return { id: body.user_id as number, email: 'echo-bot@testserver.local' };
}

async function newest(t: Test, ts: TestServer, who: string, narrow: unknown) {
  const res = await ts.api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    apply_markdown: false,
    narrow,
  });
  return (assertSuccess(t, res).messages as Record<string, unknown>[])[0]!;
}

/** A channel message mentioning the bot. */
const mention = (ts: TestServer) =>
  ts.api.post('othello', 'messages', {
    type: 'stream',
    to: 'devel',
    topic: 'x',
    content: 'ping @**Echo Bot**',
  });

/** The newest notice the bot's owner got from the notification bot. */
const ownerNotice = (t: Test, ts: TestServer) =>
  newest(t, ts, 'hamlet', [{ operator: 'dm', operand: [ts.fx.notificationBotId] }]);

t.test('a mention and a direct message: the payload, and the reply', async (t) => {
  const rx = await receiver(t, (r) => ({
    status: 200,
    body: JSON.stringify({ content: `echo: ${r.body.data as string}` }),
  }));
  const ts = await startServer(t, { outgoingWebhookAllowPrivate: ['127.0.0.1'] });
  await createChannel(ts.api, 'hamlet', 'devel');
  const bot = await outgoingBot(t, ts, rx.url);
  const token = (
    assertSuccess(t, await ts.api.post('hamlet', 'register', { fetch_event_types: ['realm_bot'] }))
      .realm_bots as { services: { token: string }[] }[]
  )[0]!.services[0]!.token;

  assertSuccess(
    t,
    await ts.api.post('othello', 'messages', {
      type: 'stream',
      to: 'devel',
      topic: 'ping',
      content: '@**Echo Bot** hello',
    }),
  );
  await ts.server.context.outgoingWebhooks.settled();
  t.equal(rx.got.length, 1, 'one request');
  t.match(rx.got[0]!.body, {
    bot_email: bot.email,
    bot_full_name: 'Echo Bot',
    data: '@**Echo Bot** hello',
    trigger: 'mention',
    token,
    message: {
      sender_email: 'othello@zulip.com',
      content: '@**Echo Bot** hello',
      rendered_content: /user-mention/,
      display_recipient: 'devel',
      subject: 'ping',
      type: 'stream',
    },
  });
  t.equal(rx.got[0]!.headers['content-type'], 'application/json');
  const reply = await newest(t, ts, 'othello', [
    { operator: 'channel', operand: 'devel' },
    { operator: 'topic', operand: 'ping' },
  ]);
  t.match(reply, { sender_id: bot.id, content: 'echo: @**Echo Bot** hello' });

  // A direct message: the trigger says so, and the reply goes to the conversation.
  assertSuccess(
    t,
    await ts.api.post('cordelia', 'messages', { type: 'private', to: [bot.id], content: 'hi' }),
  );
  await ts.server.context.outgoingWebhooks.settled();
  t.equal(rx.got[1]?.body.trigger, 'direct_message');
  const dm = await newest(t, ts, 'cordelia', [{ operator: 'dm', operand: [bot.id] }]);
  t.match(dm, { sender_id: bot.id, content: 'echo: hi' });

  // The bot's own messages never call it.
  await ts.server.context.outgoingWebhooks.settled();
  t.equal(rx.got.length, 2, 'its replies did not call it again');
});

t.test('a failing endpoint: the owner is told', async (t) => {
  // The default timeout (ten seconds): a 5xx answer is the failure, however slow the machine.
  const rx = await receiver(t, () => ({ status: 500, body: '{"error":"db down"}' }));
  const ts = await startServer(t, { outgoingWebhookAllowPrivate: ['127.0.0.1'] });
  await createChannel(ts.api, 'hamlet', 'devel');
  await outgoingBot(t, ts, rx.url);
  assertSuccess(t, await mention(ts));
  await ts.server.context.outgoingWebhooks.settled();
  t.equal(rx.got.length, 3, 'a 5xx is tried three times');
  const notice = await ownerNotice(t, ts);
  t.equal(notice.sender_id, ts.fx.notificationBotId);
  t.match(notice.content, /to your bot @_\*\*Echo Bot\*\* triggered an outgoing webhook/);
  t.match(notice.content, /status code \*500\*/);
  t.match(notice.content, /db down/);
});

t.test('a hanging endpoint: timed out, the owner is told', async (t) => {
  // A short timeout, which only a request that is never answered reaches.
  const rx = await receiver(t, () => 'hang');
  const ts = await startServer(t, {
    outgoingWebhookAllowPrivate: ['127.0.0.1'],
    outgoingWebhookLimits: { timeoutMs: 300 },
  });
  await createChannel(ts.api, 'hamlet', 'devel');
  await outgoingBot(t, ts, rx.url);
  assertSuccess(t, await mention(ts));
  await ts.server.context.outgoingWebhooks.settled();
  const notice = await ownerNotice(t, ts);
  t.equal(notice.sender_id, ts.fx.notificationBotId);
  t.match(notice.content, /an error occurred:\n```\ntimed out\n```/);
});

t.test('a private address is refused unless allowed', async (t) => {
  const rx = await receiver(t, () => ({ status: 200, body: '{"content":"no"}' }));
  const ts = await startServer(t);
  await createChannel(ts.api, 'hamlet', 'devel');
  await outgoingBot(t, ts, rx.url);
  assertSuccess(
    t,
    await ts.api.post('othello', 'messages', {
      type: 'stream',
      to: 'devel',
      topic: 'x',
      content: '@**Echo Bot** go',
    }),
  );
  await ts.server.context.outgoingWebhooks.settled();
  t.equal(rx.got.length, 0, 'loopback was not called');
  const n = await newest(t, ts, 'hamlet', [{ operator: 'dm', operand: [ts.fx.notificationBotId] }]);
  t.match(n.content, /refused address/);
});

t.test('calls are durable: one under way at a stop is made after the restart', async (t) => {
  let mode: 'hang' | 'answer' = 'hang';
  const rx = await receiver(t, (r) =>
    mode === 'hang'
      ? 'hang'
      : { status: 200, body: JSON.stringify({ content: `late echo: ${r.body.data as string}` }) },
  );
  // The default timeout (ten seconds): the first call is still under way when the server stops
  // (a short one could end it, and the call be tried again, before the stop on a slow machine).
  const options = { outgoingWebhookAllowPrivate: ['127.0.0.1'] };
  const ts = await startServer(t, options);
  const bot = await outgoingBot(t, ts, rx.url);
  assertSuccess(
    t,
    await ts.api.post('cordelia', 'messages', { type: 'private', to: [bot.id], content: 'hi' }),
  );
  t.equal(ts.server.store.outgoingWebhookCalls.count(), 1, 'the call is queued in the store');
  await until(() => rx.got.length === 1, 'the first call');
  await ts.server.close(); // the call is under way, unanswered
  t.equal(rx.got.length, 1);

  mode = 'answer';
  const { testRoutes: _testRoutes, ...opts } = TEST_SERVER_OPTIONS;
  const again = await createServer({ ...opts, ...options, dataDir: ts.dataDir });
  t.teardown(() => again.close());
  await until(() => rx.got.length === 2, 'the call after the restart');
  await again.context.outgoingWebhooks.settled();
  t.equal(rx.got[1]!.body.data, 'hi', 'called again after the restart');
  const api = new ApiClient(again.url, ts.fx);
  const dm = await newest(t, { ...ts, server: again, api }, 'cordelia', [
    { operator: 'dm', operand: [bot.id] },
  ]);
  t.match(dm, { sender_id: bot.id, content: 'late echo: hi' }, 'the reply is posted');
  t.equal(again.store.outgoingWebhookCalls.count(), 0, 'and the call leaves the queue');
  await again.context.outgoingWebhooks.settled();
  t.equal(rx.got.length, 2, 'made once more, not twice');
});

t.test('the queue is bounded, and a call that waited too long is dropped', async (t) => {
  const rx = await receiver(t, () => ({ status: 200, body: '{}' }));
  const clock = new TestClock();
  const logs = captureLog(t);
  const ts = await startServer(t, {
    outgoingWebhookAllowPrivate: ['127.0.0.1'],
    clock: clock.now,
  });
  const bot = await outgoingBot(t, ts, rx.url);
  // Stopped: the call waits in the store past MAX_AGE_SECONDS, then the restart drops it.
  ts.server.context.outgoingWebhooks.close();
  assertSuccess(
    t,
    await ts.api.post('cordelia', 'messages', { type: 'private', to: [bot.id], content: 'old' }),
  );
  t.equal(ts.server.store.outgoingWebhookCalls.count(), 1);
  await ts.server.close();
  clock.advance(MAX_AGE_SECONDS + 1);
  const { testRoutes: _testRoutes, ...opts } = TEST_SERVER_OPTIONS;
  const again = await createServer({
    ...opts,
    outgoingWebhookAllowPrivate: ['127.0.0.1'],
    clock: clock.now,
    dataDir: ts.dataDir,
  });
  t.teardown(() => again.close());
  await again.context.outgoingWebhooks.settled();
  t.equal(rx.got.length, 0, 'not called');
  t.equal(again.store.outgoingWebhookCalls.count(), 0, 'dropped');
  t.ok(logs.some((l) => l.msg === 'outgoing webhook dropped: it waited too long'));
  t.equal(MAX_WAITING, 1000, 'at most 1,000 calls wait (more are dropped with a log line)');
});

t.test('a hanging endpoint holds at most two calls: other bots are called meanwhile', async (t) => {
  // Bot A's endpoint holds every request until released; bot B's answers at once.
  const held: http.ServerResponse[] = [];
  const slow = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    slow.closeAllConnections();
    slow.close();
  });
  const fast = await receiver(t, () => ({
    status: 200,
    body: JSON.stringify({ content: 'pong' }),
  }));
  const ts = await startServer(t, { outgoingWebhookAllowPrivate: ['127.0.0.1'] });
  await createChannel(ts.api, 'hamlet', 'ops');
  const bot = async (name: string, url: string) =>
    assertSuccess(
      t,
      await ts.api.post('hamlet', 'bots', {
        full_name: name,
        short_name: name.toLowerCase().replace(/ /g, ''),
        bot_type: 3,
        payload_url: JSON.stringify(url),
      }),
    ).user_id as number;
  await bot('Slow Bot', `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`);
  const fastId = await bot('Fast Bot', fast.url);

  const send = async (content: string) =>
    assertSuccess(
      t,
      await ts.api.post('othello', 'messages', { type: 'stream', to: 'ops', topic: 'x', content }),
    );
  for (let i = 0; i < 5; i++) await send(`@**Slow Bot** job ${i}`);
  await until(() => held.length === PER_BOT, 'the slow endpoint holding its calls', 60_000);
  await send('@**Fast Bot** ping');
  // The fast bot's reply comes while every call to the slow one is still held (before this fix
  // the slow bot took all four places and the fast call waited for their ten-second timeouts).
  for (const limit = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 50))) {
    const m = await newest(t, ts, 'othello', [{ operator: 'channel', operand: 'ops' }]);
    if (m.sender_id === fastId) {
      t.equal(m.content, 'pong', "the fast bot's reply");
      break;
    }
    if (Date.now() > limit) throw new Error('no reply from the fast bot');
  }
  t.equal(held.length, PER_BOT, `the slow endpoint got ${PER_BOT} calls, all still held`);
  t.equal(fast.got.length, 1);

  // Released, the slow bot's calls all get made, two at a time.
  const answer = (res: http.ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  let answered = 0;
  for (
    const limit = Date.now() + 60_000;
    answered < 5;
    await new Promise((r) => setTimeout(r, 20))
  ) {
    while (answered < held.length) answer(held[answered++]!);
    if (Date.now() > limit) throw new Error(`only ${answered} slow calls made`);
  }
  await ts.server.context.outgoingWebhooks.settled();
  t.equal(held.length, 5, 'each slow call made once');
  t.equal(ts.server.store.outgoingWebhookCalls.count(), 0, 'the queue is empty');
});

t.test(
  "a reply's widget_content: a valid form goes with it, anything else tells the owner",
  async (t) => {
    const form = {
      widget_type: 'zform',
      extra_data: {
        type: 'choices',
        heading: 'Deploy?',
        choices: [{ short_name: 'Y', long_name: 'Yes', reply: 'deploy' }],
      },
    };
    let widget: unknown = JSON.stringify(form);
    const rx = await receiver(t, () => ({
      status: 200,
      body: JSON.stringify({ content: 'Choose:', widget_content: widget }),
    }));
    const ts = await startServer(t, { outgoingWebhookAllowPrivate: ['127.0.0.1'] });
    await createChannel(ts.api, 'hamlet', 'devel');
    const bot = await outgoingBot(t, ts, rx.url);
    assertSuccess(t, await mention(ts));
    await ts.server.context.outgoingWebhooks.settled();
    const reply = await newest(t, ts, 'othello', [{ operator: 'channel', operand: 'devel' }]);
    t.match(reply, { sender_id: bot.id, content: 'Choose:' });
    const subs = reply.submessages as { sender_id: number; msg_type: string; content: string }[];
    t.equal(subs.length, 1);
    t.match(subs[0], { sender_id: bot.id, msg_type: 'widget' });
    t.same(JSON.parse(subs[0]!.content), form);

    widget = 'test';
    assertSuccess(t, await mention(ts));
    await ts.server.context.outgoingWebhooks.settled();
    const notice = await ownerNotice(t, ts);
    t.match(
      notice.content,
      /attempted to send a message in Zulip, but that request resulted in the following error:\n> Widgets: API programmer sent invalid JSON content\nThe response contains the following payload:/,
    );
    const last = await newest(t, ts, 'othello', [{ operator: 'channel', operand: 'devel' }]);
    t.equal(last.sender_id, ts.fx.users.othello!.id, 'no reply was sent');
  },
);
