/**
 * The typed client module (src/client) against the real server, from Node with API-key (Basic)
 * auth, as bots and scripts use it: typed calls and their errors; an EventStream over long-polls,
 * over the WebSocket in JSON and in MessagePack; the socket killed mid-stream (long-poll takes
 * over without loss or duplicates, then the socket comes back); a graceful server restart on the
 * same queue; a lost queue (registered again, `again` = true); a deactivated user (stopped).
 * The browser's session auth is tested in test/browser/.
 */
import { Packr } from 'msgpackr';
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { ApiError, ConfabClient, NetworkError } from '../../src/client/api.js';
import { EventStream, type OpenSocket, type SocketLike } from '../../src/client/events.js';
import type { MessageEvent, RegisterResponse, ServerEvent } from '../../src/client/types.js';
import { createServer } from '../../src/server.js';
import { until } from '../helpers/events.js';
import { relay } from '../helpers/relay.js';
import { tinyPng } from '../helpers/images.js';
import { seedRealm } from '../helpers/fixtures.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { setRealmSettings } from '../helpers/channels.js';
import { startServer, TEST_SERVER_OPTIONS, type TestServer } from '../helpers/server.js';

function clientFor(url: string, who: { email: string; api_key: string }): ConfabClient {
  return new ConfabClient({
    baseUrl: url,
    auth: { kind: 'basic', email: who.email, apiKey: who.api_key },
    userAgent: 'ConfabTest/1',
  });
}

const nodeSocket: OpenSocket = (url, protocol, headers) =>
  new WebSocket(url, protocol, { headers }) as unknown as SocketLike;

/** An EventStream recording what it hands over. */
function recorder(
  t: Test,
  client: ConfabClient,
  extra: Partial<ConstructorParameters<typeof EventStream>[0]> = {},
) {
  const rec = {
    events: [] as ServerEvent[],
    registers: [] as { state: RegisterResponse; again: boolean }[],
    statuses: [] as string[],
    fatal: null as Error | null,
    contents: () =>
      rec.events
        .filter((e): e is MessageEvent => e.type === 'message')
        .map((e) => e.message.content),
  };
  const stream = new EventStream({
    client,
    register: { event_types: ['message', 'restart', 'heartbeat'], apply_markdown: true },
    onRegister: (state, again) => rec.registers.push({ state, again }),
    onEvents: (events) => rec.events.push(...events),
    onStatus: (s, tr) => rec.statuses.push(`${s}:${tr ?? '-'}`),
    onFatal: (e) => (rec.fatal = e),
    minBackoffMs: 20,
    maxBackoffMs: 200,
    ackDelayMs: 10,
    ...extra,
  });
  t.teardown(() => stream.stop());
  return { rec, stream };
}

async function channel(ts: TestServer, name: string, users: string[]): Promise<number> {
  for (const u of users) {
    const c = clientFor(ts.url, ts.fx.users[u]!);
    await c.subscribe([name]);
  }
  const c = clientFor(ts.url, ts.fx.users[users[0]!]!);
  const reg = await c.register({ fetch_event_types: ['subscription'], event_types: ['message'] });
  const id = reg.subscriptions!.find((s) => s.name === name)!.stream_id;
  await c.deleteQueue(reg.queue_id);
  return id;
}

t.test('typed calls and their answers', async (t) => {
  const ts = await startServer(t);
  const hamlet = clientFor(ts.url, ts.fx.users.hamlet!);
  const othello = clientFor(ts.url, ts.fx.users.othello!);
  const denmark = await channel(ts, 'Denmark', ['hamlet', 'othello']);

  const sent = await hamlet.sendMessage({
    type: 'stream',
    to: denmark,
    topic: 'castle',
    content: 'To **be**',
  });
  assertMatchesOpenApi(t, '/messages', 'post', sent);
  const dm = await hamlet.sendMessage({
    type: 'direct',
    to: [ts.fx.users.othello!.id],
    content: 'hi',
  });
  t.ok(dm.id > sent.id, 'a direct message');

  const got = await othello.getMessages({
    anchor: 'newest',
    num_before: 10,
    num_after: 0,
    narrow: [{ operator: 'channel', operand: denmark }],
  });
  assertMatchesOpenApi(t, '/messages', 'get', got);
  t.same(
    got.messages.map((m) => m.content),
    ['<p>To <strong>be</strong></p>'],
    'rendered HTML',
  );
  t.equal(got.found_newest, true);

  const rendered = await hamlet.render('*hi*');
  t.equal(rendered.rendered, '<p><em>hi</em></p>');

  await othello.addReaction(sent.id, { emoji_name: 'smile' });
  const dup = await othello.addReaction(sent.id, { emoji_name: 'smile' }).catch((e: unknown) => e);
  t.ok(dup instanceof ApiError, 'a duplicate reaction is an ApiError');
  t.equal((dup as ApiError).code, 'REACTION_ALREADY_EXISTS');
  t.equal((dup as ApiError).status, 400);
  t.equal((dup as ApiError).transient, false);
  await othello.removeReaction(sent.id, { emoji_name: 'smile' });

  await hamlet.editMessage(sent.id, { content: 'Not to be' });
  await hamlet.editMessage(sent.id, { topic: 'ramparts', propagate_mode: 'change_all' });
  const topics = await hamlet.topics(denmark);
  t.same(
    topics.topics.map((x) => x.name),
    ['ramparts'],
    'the topic moved',
  );

  const flags = await othello.updateFlags([sent.id], 'add', 'read');
  t.same(flags.messages, [sent.id]);

  // The message menu's calls: its versions, who read it, unread from it on.
  const history = await othello.messageHistory(sent.id);
  assertMatchesOpenApi(t, '/messages/{message_id}/history', 'get', history);
  t.same(
    history.message_history.map((v) => [v.topic, v.prev_topic]),
    [
      ['castle', undefined],
      ['castle', undefined],
      ['ramparts', 'castle'],
    ],
    'the versions, oldest first: sent, edited, moved',
  );
  const off = await hamlet.readReceipts(sent.id).catch((e: unknown) => e);
  t.ok(off instanceof ApiError, 'read receipts off in the organization: refused');
  t.equal((off as ApiError).status, 400);
  setRealmSettings(ts, { enable_read_receipts: true });
  const receipts = await hamlet.readReceipts(sent.id);
  assertMatchesOpenApi(t, '/messages/{message_id}/read_receipts', 'get', receipts);
  t.same(receipts.user_ids, [ts.fx.users.othello!.id], 'Othello read it');
  const unread = await othello.updateFlagsForNarrow({
    anchor: sent.id,
    include_anchor: true,
    num_before: 0,
    num_after: 10,
    narrow: [{ operator: 'channel', operand: denmark }],
    op: 'remove',
    flag: 'read',
  });
  assertMatchesOpenApi(t, '/messages/flags/narrow', 'post', unread);
  t.same(
    [unread.processed_count, unread.updated_count, unread.found_newest],
    [2, 1, true],
    'unread from the message on (the notice of the move after it, unread already)',
  );
  t.same((await hamlet.readReceipts(sent.id)).user_ids, [], 'no longer read');

  const up = await hamlet.upload(new Blob(['hello file']), 'hello.txt');
  t.match(up.url, /^\/user_uploads\/.+\/hello\.txt$/, 'an upload answers its URL');
  // A custom emoji: the same multipart path to /realm/emoji/{name}; the server's refusal an ApiError.
  await hamlet.uploadEmoji('hello_png', new Blob([new Uint8Array(tinyPng())]), 'hello.png');
  const listed = await hamlet.request<{
    emoji: Record<string, { name: string; author_id: number }>;
  }>('GET', '/realm/emoji');
  t.same(
    Object.values(listed.emoji).map((e) => [e.name, e.author_id]),
    [['hello_png', ts.fx.users.hamlet!.id]],
    'the emoji is the uploader’s',
  );
  const notImage = await hamlet
    .uploadEmoji('hello_txt', new Blob(['hello file']), 'hello.txt')
    .catch((e: unknown) => e);
  t.ok(notImage instanceof ApiError, 'a file that is no image is refused');
  t.equal((notImage as ApiError).status, 400);
  t.match((notImage as ApiError).message, /Invalid image format/);

  const notMine = await othello.deleteMessage(sent.id).catch((e: unknown) => e);
  t.ok(notMine instanceof ApiError, "deleting another's message is refused");
  await ts.api.delete('desdemona', `messages/${sent.id}`);

  const wrong = clientFor(ts.url, { email: 'hamlet@zulip.com', api_key: 'x'.repeat(32) });
  const denied = await wrong.register({}).catch((e: unknown) => e);
  t.ok(denied instanceof ApiError);
  t.equal((denied as ApiError).status, 401, 'a wrong key: 401');

  // One's own API key: a new one, the client holding the old one refused after.
  const iago = clientFor(ts.url, ts.fx.users.iago!);
  await t.rejects(iago.ownApiKey('whatever'), 'shown for a password to browser sessions only');
  const renewed = await iago.regenerateApiKey();
  t.not(renewed.api_key, ts.fx.users.iago!.api_key, 'a new key');
  const stale = await iago.register({}).catch((e: unknown) => e);
  t.equal((stale as ApiError).status, 401, 'the old key is refused');
  const iagoAgain = clientFor(ts.url, { ...ts.fx.users.iago!, api_key: renewed.api_key });
  t.ok((await iagoAgain.register({})).queue_id, 'the new key works');

  const nowhere = new ConfabClient({ baseUrl: 'http://127.0.0.1:1', auth: hamlet.auth });
  const net = await nowhere.register({}).catch((e: unknown) => e);
  t.ok(net instanceof NetworkError, 'no server: a NetworkError');

  const settings = await ConfabClient.serverSettings(ts.url);
  t.equal(settings.result, 'success');
});

for (const mode of ['poll', 'json', 'msgpack'] as const) {
  t.test(
    `an event stream over ${mode === 'poll' ? 'long-polls' : `the socket (${mode})`}`,
    async (t) => {
      const ts = await startServer(t);
      const denmark = await channel(ts, 'Denmark', ['hamlet', 'othello']);
      const othello = clientFor(ts.url, ts.fx.users.othello!);
      const hamlet = clientFor(ts.url, ts.fx.users.hamlet!);
      const packr = new Packr({ useRecords: false });
      const { rec, stream } = recorder(t, othello, {
        openSocket: mode === 'poll' ? null : nodeSocket,
        msgpack:
          mode === 'msgpack'
            ? { decode: (b) => packr.unpack(b) as unknown, encode: (v) => packr.pack(v) }
            : undefined,
      });
      await stream.start();
      t.equal(rec.registers.length, 1);
      await until(() => stream.status === 'live', 'live');
      t.equal(stream.transport, mode === 'poll' ? 'poll' : 'socket');
      for (let i = 0; i < 5; i++) {
        await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: `m${i}` });
      }
      await until(() => rec.contents().length === 5, 'five messages');
      t.same(rec.contents(), ['<p>m0</p>', '<p>m1</p>', '<p>m2</p>', '<p>m3</p>', '<p>m4</p>']);
      const ids = rec.events.map((e) => e.id);
      t.same(
        ids,
        [...ids].sort((a, b) => a - b),
        'ids in order, each once',
      );
      if (mode !== 'poll') {
        // Acknowledged over the socket: the queue no longer holds what was received.
        await until(() => {
          const q = ts.server.context.queues.get(stream.queueId!);
          return q !== undefined && q.queue.size === 0;
        }, 'acknowledged');
        t.pass('the socket acknowledged the events');
      }
    },
  );
}

t.test(
  'the socket killed: long-polling takes over without loss, then the socket again',
  async (t) => {
    const ts = await startServer(t);
    const denmark = await channel(ts, 'Denmark', ['hamlet', 'othello']);
    const othello = clientFor(ts.url, ts.fx.users.othello!);
    const hamlet = clientFor(ts.url, ts.fx.users.hamlet!);
    const sockets: WebSocket[] = [];
    let refuse = false;
    const { rec, stream } = recorder(t, othello, {
      openSocket: (url, protocol, headers) => {
        if (refuse) throw new Error('no sockets here');
        const ws = new WebSocket(url, protocol, { headers });
        sockets.push(ws);
        return ws as unknown as SocketLike;
      },
      socketRetryMs: 50,
      socketReturnMs: 50,
    });
    await stream.start();
    await until(() => stream.transport === 'socket', 'socket');
    await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'before' });
    await until(() => rec.contents().length === 1, 'first message');

    refuse = true;
    sockets[0]!.terminate(); // no close frame: an abnormal close (1006), as a dropped connection
    for (let i = 0; i < 3; i++) {
      await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: `during${i}` });
    }
    await until(() => rec.contents().length === 4, 'messages while the socket is gone');
    t.equal(stream.transport, 'poll', 'long-polling');

    refuse = false;
    await until(() => stream.transport === 'socket', 'the socket back', 30_000);
    await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'after' });
    await until(() => rec.contents().length === 5, 'the last message');
    t.same(
      rec.contents(),
      ['<p>before</p>', '<p>during0</p>', '<p>during1</p>', '<p>during2</p>', '<p>after</p>'],
      'every message once, in order',
    );
    t.equal(rec.registers.length, 1, 'the same queue throughout');
  },
);

t.test('a graceful restart: the same queue, nothing lost or repeated', async (t) => {
  const dataDir = t.testdir();
  const first = await createServer({ ...TEST_SERVER_OPTIONS, dataDir });
  let closed = false;
  t.teardown(() => (closed ? undefined : first.close()));
  const fx = await seedRealm(first);
  const { url, target } = await relay(t);
  target.port = first.port;
  const ts = { url, fx } as TestServer;
  const denmark = await channel(ts, 'Denmark', ['hamlet', 'othello']);
  const othello = clientFor(url, fx.users.othello!);
  const hamlet = clientFor(url, fx.users.hamlet!);
  const { rec, stream } = recorder(t, othello, { openSocket: nodeSocket, socketReturnMs: 50 });
  await stream.start();
  await until(() => stream.transport === 'socket', 'socket');
  await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'one' });
  await until(() => rec.contents().length === 1, 'one');

  await first.close();
  closed = true;
  await until(() => stream.status === 'reconnecting', 'reconnecting while the server is down');
  const second = await createServer({ ...TEST_SERVER_OPTIONS, dataDir });
  t.teardown(() => second.close());
  target.port = second.port;
  await until(() => stream.status === 'live', 'live again', 30_000);
  await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'two' });
  await until(() => rec.contents().length === 2, 'two');
  t.same(rec.contents(), ['<p>one</p>', '<p>two</p>']);
  t.ok(
    rec.events.some((e) => e.type === 'restart'),
    'the restart event',
  );
  t.equal(rec.registers.length, 1, 'no new registration');
  t.ok(rec.statuses.includes('reconnecting:-'), 'said it was reconnecting');
  await until(() => stream.transport === 'socket', 'back on the socket', 30_000);
  t.pass('back on the socket');
});

t.test('a socket whose handshake is never answered: given up, long-polling instead', async (t) => {
  const ts = await startServer(t);
  const denmark = await channel(ts, 'Denmark', ['hamlet', 'othello']);
  const othello = clientFor(ts.url, ts.fx.users.othello!);
  const hamlet = clientFor(ts.url, ts.fx.users.hamlet!);
  let opened = 0;
  let closed = 0;
  // A socket that never opens, closes nor errs (a handshake lost on its way).
  const silent: OpenSocket = () => {
    opened++;
    return {
      binaryType: '',
      onopen: null,
      onmessage: null,
      onclose: null,
      onerror: null,
      send: () => undefined,
      close: () => void closed++,
    };
  };
  const { rec, stream } = recorder(t, othello, {
    openSocket: silent,
    pollTimeoutMs: 500,
    socketRetryMs: 60_000,
  });
  await stream.start();
  await until(() => stream.transport === 'poll', 'long-polling', 10_000);
  t.equal(opened, 1, 'one socket tried');
  t.equal(closed, 1, 'and given up');
  await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'polled' });
  await until(() => rec.contents().length === 1, 'the message, by long-polling');
  t.equal(opened, 1, 'no new socket before socketRetryMs');
});

for (const mode of ['socket', 'poll'] as const) {
  t.test(`a frozen server (${mode}): the silence taken for lost, then caught up`, async (t) => {
    // Heartbeats every 300 ms; the client gives up on 1 s of silence (its pollTimeoutMs).
    const ts = await startServer(t, { heartbeatMs: 300, heartbeatJitterMs: 0 });
    const front = await relay(t);
    front.target.port = ts.server.port;
    const denmark = await channel(ts, 'Denmark', ['hamlet', 'othello']);
    const othello = clientFor(front.url, ts.fx.users.othello!);
    const hamlet = clientFor(ts.url, ts.fx.users.hamlet!);
    const { rec, stream } = recorder(t, othello, {
      openSocket: mode === 'socket' ? nodeSocket : null,
      pollTimeoutMs: 1000,
      quickTimeoutMs: 300,
      socketReturnMs: 50,
    });
    await stream.start();
    await until(() => stream.transport === (mode === 'socket' ? 'socket' : 'poll'), mode);
    await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'before' });
    await until(() => rec.contents().length === 1, 'before');

    front.freeze();
    const frozenAt = Date.now();
    await until(() => stream.status === 'reconnecting', 'reconnecting', 10_000);
    const silent = Date.now() - frozenAt;
    t.ok(silent >= 900, `not before the silence (${silent} ms)`);
    await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'frozen' });
    front.thaw();
    await until(() => stream.status === 'live', 'live again', 10_000);
    await until(() => rec.contents().length === 2, 'the message sent meanwhile');
    await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'after' });
    await until(() => rec.contents().length === 3, 'after');
    t.same(rec.contents(), ['<p>before</p>', '<p>frozen</p>', '<p>after</p>'], 'each once');
    t.equal(rec.registers.length, 1, 'the same queue');
    if (mode === 'socket')
      await until(() => stream.transport === 'socket', 'back on the socket', 10_000);
  });

  t.test(`a lost queue (${mode}): registered again`, async (t) => {
    const ts = await startServer(t);
    const denmark = await channel(ts, 'Denmark', ['hamlet', 'othello']);
    const othello = clientFor(ts.url, ts.fx.users.othello!);
    const hamlet = clientFor(ts.url, ts.fx.users.hamlet!);
    const { rec, stream } = recorder(t, othello, {
      openSocket: mode === 'socket' ? nodeSocket : null,
    });
    await stream.start();
    await until(() => stream.status === 'live', 'live');
    const firstQueue = stream.queueId!;
    await othello.deleteQueue(firstQueue);
    await until(() => rec.registers.length === 2, 'registered again');
    t.equal(rec.registers[1]!.again, true, 'marked as a new snapshot');
    t.not(stream.queueId, firstQueue, 'a new queue');
    await until(() => stream.status === 'live', 'live again');
    await hamlet.sendMessage({ type: 'stream', to: denmark, topic: 't', content: 'after' });
    await until(() => rec.contents().length === 1, 'a message on the new queue');
  });
}

t.test('a deactivated user: the stream stops for good', async (t) => {
  const ts = await startServer(t);
  const othello = clientFor(ts.url, ts.fx.users.othello!);
  const { rec, stream } = recorder(t, othello, { openSocket: nodeSocket });
  await stream.start();
  await until(() => stream.transport === 'socket', 'socket');
  const res = await ts.api.delete('desdemona', `users/${ts.fx.users.othello!.id}`);
  t.equal(res.status, 200);
  await until(() => rec.fatal !== null, 'fatal');
  t.equal(stream.status, 'stopped');
});

t.test('channels: created with their settings and people, members, changes', async (t) => {
  const ts = await startServer(t);
  const hamlet = clientFor(ts.url, ts.fx.users.hamlet!);
  const id = (who: string) => ts.fx.users[who]!.id;
  const made = await hamlet.createChannel({
    name: 'Council',
    description: 'Plans',
    invite_only: true,
    history_public_to_subscribers: false,
    principals: [id('hamlet'), id('othello')],
  });
  assertMatchesOpenApi(t, '/users/me/subscriptions', 'post', made);
  const subs = await ts.api.get('othello', 'users/me/subscriptions');
  const council = (
    subs.body.subscriptions as {
      name: string;
      stream_id: number;
      description: string;
      invite_only: boolean;
      history_public_to_subscribers: boolean;
    }[]
  ).find((s) => s.name === 'Council')!;
  t.same(
    [council.description, council.invite_only, council.history_public_to_subscribers],
    ['Plans', true, false],
    'with its description and privacy, Othello in it',
  );

  const members = await hamlet.channelMembers(council.stream_id);
  assertMatchesOpenApi(t, '/streams/{stream_id}/members', 'get', members);
  t.same([...members.subscribers].sort(), [id('hamlet'), id('othello')].sort());

  await hamlet.addSubscribers('Council', [id('cordelia')]);
  await hamlet.unsubscribe(['Council'], [id('othello')]);
  t.same(
    [...(await hamlet.channelMembers(council.stream_id)).subscribers].sort(),
    [id('hamlet'), id('cordelia')].sort(),
    'one added, one removed (its creator administers it)',
  );

  await hamlet.updateChannel(council.stream_id, { description: 'New plans', new_name: 'Cabinet' });
  const after = await ts.api.get('hamlet', `streams/${council.stream_id}`);
  const stream = after.body.stream as { name: string; description: string };
  t.same([stream.name, stream.description], ['Cabinet', 'New plans'], 'renamed, described');

  const cordelia = clientFor(ts.url, ts.fx.users.cordelia!);
  const refused = await cordelia.unsubscribe(['Cabinet'], [id('hamlet')]).catch((e: unknown) => e);
  t.ok(refused instanceof ApiError, 'a member may not remove others: an ApiError');
  t.match((refused as ApiError).message, /permission/i, "with the server's words");
});
