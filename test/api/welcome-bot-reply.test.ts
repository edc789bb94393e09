/**
 * The Welcome Bot answers direct messages (src/lib/welcome.ts welcomeBotReply,
 * src/mutations/welcome.ts, src/endpoints/messages.ts; the reference's send_welcome_bot_response
 * from do_send_messages): a human's direct message to the bot alone gets one answer chosen by the
 * message's keyword, after the message, through the send path (an event to the user's queue,
 * unread for them). Group direct messages, bots' messages and the bot's own get none; a send
 * retried with the same local id gets no second one; an answer that fails leaves the send
 * successful and the bot answering the next message.
 */
import t, { type Test } from 'tap';
import { assertSuccess, type ApiClient, type Who } from '../helpers/api.js';
import { events, register, type Ev } from '../helpers/events.js';
import { addWelcomeBot } from '../helpers/fixtures.js';
import type { FetchedMessage } from '../helpers/messages.js';
import { CLUSTER_MODE, startServer } from '../helpers/server.js';
import { welcomeBotReply } from '../../src/lib/welcome.js';

const WELCOME_BOT = 'welcome-bot@zulip.com';
const ONE_PROCESS = CLUSTER_MODE && 'cluster mode: patches the server process';

t.setTimeout(120_000);

type Msg = FetchedMessage & { display_recipient: { id: number }[] | string };

/** The account's direct messages with Welcome Bot (raw markdown), oldest first. */
async function withBot(t: Test, api: ApiClient, who: Who, botId: number): Promise<Msg[]> {
  const res = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 1000,
    num_after: 0,
    narrow: JSON.stringify([{ operator: 'dm', operand: [botId] }]),
    apply_markdown: false,
  });
  return assertSuccess(t, res, 'GET /messages').messages as Msg[];
}

async function sendDm(t: Test, api: ApiClient, who: Who, to: number[], content: string) {
  const res = await api.post(who, 'messages', { type: 'direct', to: JSON.stringify(to), content });
  return assertSuccess(t, res, `DM ${JSON.stringify(content)}`).id as number;
}

/** Polls the queue until a message event from the bot arrives; every message event until then. */
async function untilBotMessage(
  t: Test,
  api: ApiClient,
  who: string,
  q: { queue_id: string; last_event_id: number },
  botId: number,
): Promise<Ev[]> {
  const seen: Ev[] = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const got = await events(t, api, who, q.queue_id, q.last_event_id);
    for (const e of got) {
      q.last_event_id = Math.max(q.last_event_id, e.id);
      if (e.type !== 'message') continue;
      seen.push(e);
      if ((e.message as { sender_id: number }).sender_id === botId) return seen;
    }
  }
  t.fail('no message from Welcome Bot arrived');
  return seen;
}

t.test('a direct message to the bot gets one answer, by keyword, live and unread', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const botId = await addWelcomeBot(ts.server, fx);
  const hamlet = fx.users.hamlet!;
  const q = await register(t, api, 'hamlet', { event_types: '["message"]', apply_markdown: true });

  const cases: [string, string][] = [
    ['Theme', 'theme'],
    ['  keyboard shortcuts ', 'keyboard shortcuts'],
    ['channels', 'channels'],
    ['streams', 'channels'],
    ['topic', 'topics'],
    ['apps', 'apps'],
    ['profile', 'profile'],
    ['formatting', 'formatting'],
    ['help', 'help'],
    ['?', 'help'],
    ['what is this?', 'other'],
  ];
  const texts = new Set<string>();
  for (const [said, kind] of cases) {
    const sentId = await sendDm(t, api, 'hamlet', [botId], said);
    const arrived = await untilBotMessage(t, api, 'hamlet', q, botId);
    const ids = arrived.map((e) => (e.message as { id: number }).id);
    t.same(ids.slice(0, -1), [sentId], `${kind}: the user's message, then the answer`);
    const answer = arrived.at(-1)!;
    const m = answer.message as { id: number; content: string; display_recipient: unknown };
    t.ok(m.id > sentId, `${kind}: the answer comes after the message`);
    t.notOk((answer.flags as string[]).includes('read'), `${kind}: unread for the user`);
    t.notOk((answer.flags as string[]).includes('starred'), `${kind}: not starred`);
    t.match(m.content, /^<p>|^<ul>/, `${kind}: rendered`);
    const stored = (await withBot(t, api, 'hamlet', botId)).at(-1)!;
    t.equal(stored.id, m.id);
    t.equal(stored.content, welcomeBotReply(said), `${kind}: the ${kind} answer`);
    texts.add(stored.content);
  }
  t.equal(texts.size, 9, 'one text per keyword, and the default');
  t.match(welcomeBotReply('help'), /`apps`.*`profile`.*`theme`.*`channels`.*`topics`/);
  t.match(welcomeBotReply('nonsense'), /`help`/, 'the default lists the keywords, help too');

  // Each message got exactly one answer: the conversation alternates.
  const all = await withBot(t, api, 'hamlet', botId);
  t.same(
    all.map((m) => m.sender_id),
    cases.flatMap(() => [hamlet.id, botId]),
    'one answer per message, each after its message',
  );
  const register2 = assertSuccess(
    t,
    await api.post('hamlet', 'register', {
      fetch_event_types: '["message","update_message_flags"]',
    }),
  );
  const unread = register2.unread_msgs as {
    pms: { other_user_id: number; unread_message_ids: number[] }[];
  };
  const pm = unread.pms.find((p) => p.other_user_id === botId);
  const answers = all.filter((m) => m.sender_id === botId).map((m) => m.id);
  t.ok(
    answers.every((id) => pm?.unread_message_ids.includes(id)),
    'every answer unread for the user, in register’s unread_msgs',
    { answers, unread: pm?.unread_message_ids },
  );
});

t.test('no answer to a group direct message, a bot, or the bot itself', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const botId = await addWelcomeBot(ts.server, fx);
  const othello = fx.users.othello!;

  // A group direct message with the bot in it.
  const group = await sendDm(t, api, 'hamlet', [botId, othello.id], 'help');
  // A bot's direct message to the bot.
  const made = assertSuccess(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Hamlet Bot', short_name: 'hambot' }),
  );
  const botWho = { email: 'hambot-bot@testserver.local', api_key: made.api_key as string };
  const fromBot = await sendDm(t, api, botWho, [botId], 'help');
  // Then a direct message that is answered: any answer to the ones before would come before it.
  const q = await register(t, api, 'hamlet', { event_types: '["message"]', apply_markdown: true });
  const last = await sendDm(t, api, 'hamlet', [botId], 'help');
  await untilBotMessage(t, api, 'hamlet', q, botId);

  const hamletFeed = await withBot(t, api, 'hamlet', botId);
  t.same(
    hamletFeed.map((m) => m.sender_id),
    [fx.users.hamlet!.id, botId],
    'only the one-to-one message was answered',
  );
  t.equal(hamletFeed[0]!.id, last);
  const groupMsgs = assertSuccess(
    t,
    await api.get('hamlet', 'messages', {
      anchor: 'newest',
      num_before: 100,
      num_after: 0,
      narrow: JSON.stringify([{ operator: 'dm', operand: [botId, othello.id] }]),
    }),
  ).messages as Msg[];
  t.same(
    groupMsgs.map((m) => m.id),
    [group],
    'the group direct message: no answer',
  );
  const botFeed = await withBot(t, api, botWho, botId);
  t.same(
    botFeed.map((m) => m.id),
    [fromBot],
    'the bot’s message: no answer',
  );
});

t.test('the bot’s own direct message is not answered', { skip: ONE_PROCESS }, async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const botId = await addWelcomeBot(ts.server, fx);
  const self = ts.server.store.users.byId(botId)!;
  const botWho = { email: WELCOME_BOT, api_key: self.api_key };
  const q = await register(t, api, 'hamlet', { event_types: '["message"]', apply_markdown: true });
  const own = await sendDm(t, api, botWho, [fx.users.hamlet!.id], 'help');
  const toSelf = await sendDm(t, api, botWho, [botId], 'help');
  const last = await sendDm(t, api, 'hamlet', [botId], 'theme');
  const arrived = await untilBotMessage(t, api, 'hamlet', q, botId);
  // The bot's own message to hamlet is a message from the bot too: the first to arrive.
  t.equal((arrived.at(-1)!.message as { id: number }).id, own, 'its message to hamlet arrives');
  const more = await untilBotMessage(t, api, 'hamlet', q, botId);
  const ids = more.map((e) => (e.message as { id: number }).id);
  t.equal(ids[0], last, 'then hamlet’s message');
  t.ok(ids.at(-1)! > last, 'then the answer to it');
  const feed = await withBot(t, api, 'hamlet', botId);
  t.same(
    feed.map((m) => m.id),
    [own, last, ids.at(-1)],
    'no answer to the bot’s own message',
  );
  const selfFeed = await withBot(t, api, botWho, botId);
  t.same(
    selfFeed.map((m) => m.id),
    [toSelf],
    'nor its message to itself',
  );
});

t.test('a retried send gets no second answer', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const botId = await addWelcomeBot(ts.server, fx);
  const q = await register(t, api, 'hamlet', { event_types: '["message"]', apply_markdown: true });
  const send = () =>
    api.post('hamlet', 'messages', {
      type: 'direct',
      to: JSON.stringify([botId]),
      content: 'apps',
      queue_id: q.queue_id,
      local_id: '1.01',
    });
  const first = assertSuccess(t, await send()).id as number;
  await untilBotMessage(t, api, 'hamlet', q, botId);
  const again = assertSuccess(t, await send()).id as number;
  t.equal(again, first, 'the retry is the same message');
  await sendDm(t, api, 'hamlet', [botId], 'theme');
  await untilBotMessage(t, api, 'hamlet', q, botId);
  const feed = await withBot(t, api, 'hamlet', botId);
  t.same(
    feed.map((m) => m.content),
    ['apps', welcomeBotReply('apps'), 'theme', welcomeBotReply('theme')],
    'one answer to the message sent twice',
  );
});

t.test('an answer that fails leaves the send successful', { skip: ONE_PROCESS }, async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const botId = await addWelcomeBot(ts.server, fx);
  const renderer = ts.server.context.renderer;
  const render = renderer.render.bind(renderer);
  let failed = 0;
  renderer.render = (content, ...rest) => {
    if (content === welcomeBotReply('theme')) {
      failed++;
      return Promise.reject(new Error('deliberate failure rendering the answer, for a test'));
    }
    return render(content, ...rest);
  };
  t.teardown(() => {
    renderer.render = render;
  });
  const q = await register(t, api, 'hamlet', { event_types: '["message"]', apply_markdown: true });
  const res = await api.post('hamlet', 'messages', {
    type: 'direct',
    to: JSON.stringify([botId]),
    content: 'theme',
  });
  const sent = assertSuccess(t, res, 'the send succeeds').id as number;
  // The next message is answered; the failed answer never comes.
  await sendDm(t, api, 'hamlet', [botId], 'topics');
  await untilBotMessage(t, api, 'hamlet', q, botId);
  t.equal(failed, 1, 'the answer to the first failed');
  const feed = await withBot(t, api, 'hamlet', botId);
  t.same(
    feed.map((m) => m.content),
    ['theme', 'topics', welcomeBotReply('topics')],
    'the message stays; no answer to it; the next is answered',
  );
  t.equal(feed[0]!.id, sent);
});
