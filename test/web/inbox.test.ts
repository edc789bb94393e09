/**
 * web/state/inbox.ts, the Inbox view's data: the unread conversations grouped (direct messages
 * first, newest first; channels pinned first, muted after, then by name; topics newest first),
 * counted (a channel's total, mentions marked), filtered (unmuted/all/followed topics, words,
 * channels the user is not in, conversations only with muted people), the rows the keys move
 * between (collapsed groups keep their headers), what storage gives back, whom a
 * direct-message row marks, the sidebar's views in order (the home view first); and, through
 * ChatState, the events that keep it (a new message, reads, a topic moved, muting, a rename).
 */
import t from 'tap';
import type {
  Message,
  RegisterResponse,
  ServerEvent,
  Subscription,
} from '../../src/client/types.js';
import { ChatState, TOPIC } from '../../web/state/chat.js';
import {
  groupKey,
  inboxContext,
  inboxData,
  inboxRows,
  inboxRowTarget,
  parseCollapsed,
  parseTopics,
  viewEntries,
  type InboxContext,
} from '../../web/state/inbox.js';
import type { UnreadConversation } from '../../web/state/unread.js';
import { FakeTimers } from '../helpers/fake-timers.js';

const SELF = 1;
const NAMES: Record<number, string> = { 1: 'Me', 2: 'Hamlet', 3: 'Othello', 4: 'Iago' };

const topic = (
  streamId: number,
  name: string,
  count: number,
  lastId: number,
  mentioned = false,
): UnreadConversation => ({
  key: `${streamId}\u0000${name.toLowerCase()}`,
  where: { kind: 'stream', streamId, topic: name },
  count,
  mentioned,
  lastId,
});
const dmc = (
  ids: string,
  count: number,
  lastId: number,
  mentioned = false,
): UnreadConversation => ({
  key: `dm:${ids}`,
  where: { kind: 'dm', key: ids },
  count,
  mentioned,
  lastId,
});

const CHANNELS: Record<number, { name: string; pinned: boolean; muted: boolean }> = {
  10: { name: 'general', pinned: false, muted: false },
  11: { name: 'Design', pinned: false, muted: false },
  12: { name: 'announce', pinned: true, muted: false },
  13: { name: 'aardvark', pinned: false, muted: true },
};

function ctx(o: Partial<InboxContext> = {}): InboxContext {
  return {
    selfId: SELF,
    channel: (id) => CHANNELS[id],
    mutedTopic: (id) => CHANNELS[id]?.muted ?? false,
    followed: () => false,
    userMuted: () => false,
    dmName: (ids) => ids.map((id) => NAMES[id] ?? '?').join(', '),
    ...o,
  };
}

t.test('grouped, ordered and counted', (t) => {
  const inbox = inboxData(
    [
      topic(10, 'lunch', 2, 5),
      topic(10, 'Plans', 1, 9, true),
      topic(11, 'logo', 3, 4),
      topic(12, 'news', 1, 1),
      dmc('2', 2, 3),
      dmc('2,3', 1, 8, true),
      topic(99, 'secret', 4, 10),
    ],
    ctx(),
  );
  t.same(
    inbox.dms.map((d) => [d.key, d.count, d.mentioned, d.label]),
    [
      ['dm:2,3', 1, true, 'Hamlet, Othello'],
      ['dm:2', 2, false, 'Hamlet'],
    ],
    'DMs newest first',
  );
  t.same(
    inbox.channels.map((c) => c.name),
    ['announce', 'Design', 'general'],
    'pinned first, then by name without case; a channel the user is not in left out',
  );
  const general = inbox.channels[2]!;
  t.equal(general.count, 3, 'the channel’s total');
  t.equal(general.mentioned, true, 'a topic’s mention marks its channel');
  t.same(
    general.topics.map((x) => [x.topic, x.count]),
    [
      ['Plans', 1],
      ['lunch', 2],
    ],
    'topics newest first',
  );
  t.equal(inbox.channels[1]!.mentioned, false);
  t.end();
});

t.test('muting and the topics filter', (t) => {
  const convs = [
    topic(13, 'zoo', 2, 1),
    topic(10, 'quiet', 1, 2),
    topic(10, 'loud', 1, 3),
    topic(11, 'logo', 1, 4),
  ];
  const c = ctx({
    mutedTopic: (id, name) => id === 13 || name === 'quiet',
    followed: (id, name) => name === 'loud' || id === 11,
  });
  const unmuted = inboxData(convs, c);
  t.same(
    unmuted.channels.map((x) => [x.name, x.topics.map((y) => y.topic)]),
    [
      ['Design', ['logo']],
      ['general', ['loud']],
    ],
    'muted topics and channels left out by default',
  );
  t.equal(unmuted.channels[1]!.count, 1, 'the total counts the topics shown');
  const all = inboxData(convs, c, 'all');
  t.same(
    all.channels.map((x) => x.name),
    ['Design', 'general', 'aardvark'],
    'all topics: a muted channel after the others',
  );
  t.equal(all.channels[1]!.topics.find((x) => x.topic === 'quiet')!.muted, true);
  t.same(
    inboxData(convs, c, 'followed').channels.map((x) => [x.name, x.topics.map((y) => y.topic)]),
    [
      ['Design', ['logo']],
      ['general', ['loud']],
    ],
    'followed topics only',
  );
  t.end();
});

t.test('words and muted people', (t) => {
  const convs = [
    topic(10, 'lunch plans', 1, 1),
    topic(11, 'logo', 1, 2),
    dmc('3', 1, 3),
    dmc('4', 1, 4),
  ];
  const words = (text: string) => {
    const i = inboxData(convs, ctx({ userMuted: (id) => id === 4 }), 'unmuted', text);
    return [
      ...i.dms.map((d) => d.label),
      ...i.channels.flatMap((c) => c.topics.map((x) => x.topic)),
    ];
  };
  t.same(words(''), ['Othello', 'logo', 'lunch plans'], 'a DM with a muted person only: left out');
  t.same(words('GEN plans'), ['lunch plans'], 'every word, in the channel’s name and topic');
  t.same(words('oth'), ['Othello'], 'DMs by their people');
  t.same(words('nothing'), []);
  t.same(
    inboxData([dmc('2,4', 1, 1)], ctx({ userMuted: (id) => id === 4 })).dms.length,
    1,
    'a group with someone not muted stays',
  );
  t.end();
});

t.test('direct-message rows: whom they mark (a group none: its icon)', (t) => {
  const inbox = inboxData([dmc('2', 1, 3), dmc('2,3', 2, 2), dmc('1', 1, 1)], ctx());
  t.same(
    inbox.dms.map((d) => [d.key, d.person]),
    [
      ['dm:2', 2],
      ['dm:2,3', null],
      ['dm:1', SELF],
    ],
    'the other person; a group: none; one’s own conversation: oneself',
  );
  t.end();
});

t.test('the sidebar’s views: the home view first (it alone counted)', (t) => {
  t.same(viewEntries('inbox'), ['inbox', 'recent', 'all']);
  t.same(viewEntries('recent_topics'), ['recent', 'inbox', 'all']);
  t.same(viewEntries('all_messages'), ['all', 'inbox', 'recent']);
  t.same(viewEntries(undefined), ['all', 'inbox', 'recent'], 'none set: All messages (homePage)');
  t.same(viewEntries(7), ['all', 'inbox', 'recent'], 'not a name: All messages');
  t.end();
});

t.test('rows, collapsed groups, storage', (t) => {
  const inbox = inboxData(
    [topic(10, 'a', 1, 1), topic(10, 'b', 1, 2), topic(11, 'c', 1, 3), dmc('2', 1, 4)],
    ctx(),
  );
  const kinds = (collapsed: string[]) =>
    inboxRows(inbox, new Set(collapsed)).map((r) => `${r.kind}:${r.key}`);
  t.same(kinds([]), [
    'dm-header:dm',
    'dm:dm:2',
    'channel:channel:11',
    'topic:11\u0000c',
    'channel:channel:10',
    'topic:10\u0000b',
    'topic:10\u0000a',
  ]);
  t.same(
    kinds(['dm', groupKey(10)]),
    ['dm-header:dm', 'channel:channel:11', 'topic:11\u0000c', 'channel:channel:10'],
    'a collapsed group keeps its header',
  );
  t.same(inboxRows({ dms: [], channels: [] }, new Set()), [], 'nothing unread: no rows');
  t.same([...parseCollapsed(['dm', 'channel:4', 'x', 5, 'channel:'])], ['dm', 'channel:4']);
  t.same([...parseCollapsed('dm')], []);
  t.equal(parseTopics('all'), 'all');
  t.equal(parseTopics('followed'), 'followed');
  t.equal(parseTopics('nope'), 'unmuted');
  t.end();
});

// ---- Through ChatState: the events keep it -------------------------------------------------

const sub = (id: number, name: string, o: Partial<Subscription> = {}): Subscription => ({
  stream_id: id,
  name,
  description: '',
  color: '#76ce90',
  invite_only: false,
  is_muted: false,
  pin_to_top: false,
  desktop_notifications: null,
  ...o,
});

function register(): RegisterResponse {
  return {
    queue_id: 'q',
    last_event_id: -1,
    user_id: SELF,
    email: 'me@x',
    full_name: 'Me',
    realm_users: [1, 2, 3].map((id) => ({
      user_id: id,
      email: `${id}@x`,
      full_name: NAMES[id]!,
      is_bot: false,
    })),
    subscriptions: [sub(10, 'general'), sub(11, 'design')],
    unread_msgs: {
      count: 4,
      streams: [
        { stream_id: 10, topic: 'lunch', unread_message_ids: [1, 2] },
        { stream_id: 11, topic: 'logo', unread_message_ids: [3] },
      ],
      pms: [{ other_user_id: 2, unread_message_ids: [4] }],
      huddles: [],
      mentions: [2],
      old_unreads_missing: false,
    },
    user_topics: [],
    max_message_id: 4,
    realm_user_groups: [],
  };
}

function msg(id: number, o: Partial<Message> = {}): Message {
  return {
    id,
    sender_id: 2,
    sender_full_name: 'Hamlet',
    sender_email: '2@x',
    timestamp: 1_700_000_000 + id,
    content: `<p>m${id}</p>`,
    type: 'stream',
    stream_id: 10,
    subject: 'lunch',
    display_recipient: 'general',
    reactions: [],
    ...o,
  };
}

let eventId = 0;
const ev = (e: Record<string, unknown>) => ({ id: eventId++, ...e }) as unknown as ServerEvent;

t.test('the closed compose box’s words and target for the focused row', (t) => {
  const inbox = inboxData([topic(10, '', 1, 1), dmc('2', 1, 4), dmc('1', 1, 5)], ctx());
  const names = {
    selfId: SELF,
    channelName: (id: number) => `ch${id}`,
    topicName: (topic: string) => (topic === '' ? 'general chat' : topic),
  };
  const got = inboxRows(inbox, new Set()).map((r) => {
    const x = inboxRowTarget(r, names);
    return [x.label, x.to, x.narrow === null];
  });
  t.same(got, [
    ['Compose message', { kind: 'dm', userIds: [] }, true],
    ['Message yourself', { kind: 'dm', userIds: [SELF] }, false],
    [`Message ${inbox.dms[1]!.label}`, { kind: 'dm', userIds: [2] }, false],
    ['Compose message', { kind: 'stream', streamId: 10, topic: '' }, false],
    ['Message #ch10 > general chat', { kind: 'stream', streamId: 10, topic: '' }, false],
  ]);
  t.end();
});

t.test('ChatState: from register, then events', (t) => {
  const clock = new FakeTimers();
  const s = new ChatState(register(), { now: clock.now, timers: clock.timers });
  const shown = () => {
    const i = inboxData(s.unread.conversations(), inboxContext(s));
    return [
      ...i.dms.map((d) => `${d.label} ${d.count}`),
      ...i.channels.map(
        (c) =>
          `${c.name} ${c.count}${c.mentioned ? '@' : ''} [${c.topics.map((x) => `${x.topic} ${x.count}`).join(', ')}]`,
      ),
    ];
  };
  t.same(shown(), ['Hamlet 1', 'design 1 [logo 1]', 'general 2@ [lunch 2]'], 'from register');

  s.apply([ev({ type: 'message', message: msg(5, { subject: 'plans' }), flags: [] })]);
  t.same(
    shown(),
    ['Hamlet 1', 'design 1 [logo 1]', 'general 3@ [plans 1, lunch 2]'],
    'a new message',
  );

  s.apply([ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [1, 2, 4] })]);
  t.same(shown(), ['design 1 [logo 1]', 'general 1 [plans 1]'], 'read elsewhere: rows go');

  s.apply([
    ev({
      type: 'update_message',
      message_id: 3,
      message_ids: [3],
      stream_id: 11,
      new_stream_id: 10,
      orig_subject: 'logo',
      subject: 'brand',
      propagate_mode: 'change_all',
      edit_timestamp: 1,
    }),
  ]);
  t.same(shown(), ['general 2 [plans 1, brand 1]'], 'a topic moved to another channel');

  s.apply([
    ev({
      type: 'user_topic',
      stream_id: 10,
      topic_name: 'plans',
      last_updated: 1,
      visibility_policy: TOPIC.MUTED,
    }),
  ]);
  t.same(shown(), ['general 1 [brand 1]'], 'a topic muted: left out');

  s.apply([
    ev({
      type: 'stream',
      op: 'update',
      stream_id: 10,
      name: 'general',
      property: 'name',
      value: 'town square',
    }),
  ]);
  t.same(shown(), ['town square 1 [brand 1]'], 'a channel renamed');

  s.apply([
    ev({ type: 'subscription', op: 'update', stream_id: 10, property: 'is_muted', value: true }),
  ]);
  t.same(shown(), [], 'its channel muted: nothing left');
  t.end();
});
