/**
 * The web client's reducer against the real server: a ChatState built from one user's register
 * and kept live by their event stream (src/client/events.ts) holds the same unread counts,
 * subscriptions and topic settings as a fresh register after another user sends channel and
 * direct messages (with mentions), messages are read and marked unread again, a topic is moved,
 * a message is deleted, a channel muted and a topic muted — the reference's verify_action idea,
 * applied to the client.
 */
import t from 'tap';
import { ConfabClient } from '../../src/client/api.js';
import { EventStream } from '../../src/client/events.js';
import type { ServerEvent } from '../../src/client/types.js';
import { ChatState, TOPIC } from '../../web/state/chat.js';
import { REGISTER_PARAMS } from '../../web/state/register.js';
import { until } from '../helpers/events.js';
import { startServer } from '../helpers/server.js';

const PARAMS = REGISTER_PARAMS;

const clock = {
  now: () => Date.now(),
  timers: {
    setTimeout: (fn: () => void, ms: number): unknown => setTimeout(fn, ms),
    clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>),
  },
};

function summary(s: ChatState) {
  const c = s.unread.counts({ mutedTopic: (id, topic) => s.mutedTopic(id, topic) });
  return {
    total: c.total,
    mentions: c.mentions,
    dmTotal: c.dmTotal,
    streams: [...c.streams].sort((a, b) => a[0] - b[0]),
    topics: [...c.topics.values()]
      .map((x) => `${x.streamId}/${x.topic.toLowerCase()}:${x.count}:${x.muted}`)
      .sort(),
    dms: [...c.dms].sort(),
    unreadIds: s.unread.ids(),
    subs: [...s.subs.values()].map((x) => `${x.name}:${x.is_muted}`).sort(),
  };
}

t.test('events applied to the snapshot equal a fresh snapshot', async (t) => {
  const ts = await startServer(t);
  const client = (name: string) => {
    const u = ts.fx.users[name]!;
    return new ConfabClient({
      baseUrl: ts.url,
      auth: { kind: 'basic', email: u.email, apiKey: u.api_key },
    });
  };
  const hamlet = client('hamlet');
  const othello = client('othello');
  const iago = client('iago');
  for (const c of [hamlet, othello, iago]) await c.subscribe(['Denmark', 'Venice']);
  const reg0 = await hamlet.register({ ...PARAMS, fetch_event_types: ['subscription'] });
  const denmark = reg0.subscriptions!.find((s) => s.name === 'Denmark')!.stream_id;
  const venice = reg0.subscriptions!.find((s) => s.name === 'Venice')!.stream_id;
  await hamlet.deleteQueue(reg0.queue_id);

  let state: ChatState | null = null;
  const seen: ServerEvent[] = [];
  const stream = new EventStream({
    client: hamlet,
    register: PARAMS,
    onRegister: (r) => (state = new ChatState(r, clock)),
    onEvents: (events) => {
      seen.push(...events);
      state!.apply(events);
    },
  });
  t.teardown(() => stream.stop());
  await stream.start();

  const ids: number[] = [];
  const send = async (c: ConfabClient, m: Parameters<ConfabClient['sendMessage']>[0]) => {
    ids.push((await c.sendMessage(m)).id);
    return ids.at(-1)!;
  };
  await send(othello, {
    type: 'stream',
    to: denmark,
    topic: 'castle',
    content: 'hello @**Hamlet**',
  });
  await send(othello, { type: 'stream', to: denmark, topic: 'castle', content: 'two' });
  await send(iago, { type: 'stream', to: denmark, topic: 'ghost', content: 'boo' });
  const moved = await send(iago, { type: 'stream', to: venice, topic: 'trade', content: 'ships' });
  await send(iago, { type: 'stream', to: venice, topic: 'trade', content: 'more ships' });
  await send(othello, { type: 'direct', to: [ts.fx.users.hamlet!.id], content: 'psst' });
  const groupDm = await send(othello, {
    type: 'direct',
    to: [ts.fx.users.hamlet!.id, ts.fx.users.iago!.id],
    content: 'all three',
  });
  const doomed = await send(iago, {
    type: 'stream',
    to: venice,
    topic: 'doomed',
    content: 'to be deleted',
  });
  await send(othello, {
    type: 'stream',
    to: denmark,
    topic: 'castle',
    content: '@**all** wildcard',
  });

  await hamlet.updateFlags([ids[1]!, groupDm], 'add', 'read');
  await hamlet.updateFlags([groupDm], 'remove', 'read');
  await iago.editMessage(moved, { topic: 'commerce', propagate_mode: 'change_all' });
  await iago.deleteMessage(doomed).catch(() => ts.api.delete('desdemona', `messages/${doomed}`));
  await hamlet.updateSubscription(venice, 'is_muted', true);
  await hamlet.request('POST', '/user_topics', {
    stream_id: denmark,
    topic: 'ghost',
    visibility_policy: TOPIC.MUTED,
  });
  await hamlet.request('POST', '/user_topics', {
    stream_id: venice,
    topic: 'commerce',
    visibility_policy: TOPIC.FOLLOWED,
  });
  const last = await send(othello, {
    type: 'stream',
    to: denmark,
    topic: 'castle',
    content: 'the end',
  });

  await until(() => seen.some((e) => e.type === 'message' && e.message.id === last), 'every event');
  const fresh = await hamlet.register(PARAMS);
  await hamlet.deleteQueue(fresh.queue_id);
  const live = summary(state!);
  const again = summary(new ChatState(fresh, clock));
  t.same(live, again, 'the same state both ways');
  t.ok(live.total > 0 && live.mentions >= 1 && live.dmTotal === 2, 'something to compare');
  t.ok(
    live.topics.some((x) => /^\d+\/commerce:\d+:false$/.test(x)),
    'the moved topic, followed in a muted channel',
  );
});
