/**
 * web/state/recent.ts, the Recent conversations view's data: conversations from the messages
 * seen (fetched or arrived), newest activity first, senders newest first, participation; moves
 * and deletions; the rows with the unread counts (mentions marked), the user's muting and the
 * filters (DMs, unread, participated, which topics, words); the columns' sorting; `r` and `c` on
 * a row; and, through ChatState, the events
 * that keep it (a new message takes its row to the top, reads, moves, deletions). Also
 * roving.ts's roveRows (the rows' keys).
 */
import t from 'tap';
import type {
  Message,
  RegisterResponse,
  ServerEvent,
  Subscription,
} from '../../src/client/types.js';
import { ChatState, TOPIC } from '../../web/state/chat.js';
import { dmNarrow, topicNarrow } from '../../web/state/narrow.js';
import {
  DEFAULT_FILTERS,
  DEFAULT_SORT,
  nextSort,
  parseFilters,
  RecentConversations,
  recentRows,
  relativeTime,
  rowCompose,
  shownParticipants,
  sortRows,
  type RecentFilters,
  type RowContext,
} from '../../web/state/recent.js';
import { roveRows } from '../../web/state/roving.js';
import { FakeTimers } from '../helpers/fake-timers.js';

const SELF = 1;
const NAMES: Record<number, string> = { 1: 'Me', 2: 'Hamlet', 3: 'Othello', 4: 'Iago' };

function msg(id: number, o: Partial<Message> = {}): Message {
  return {
    id,
    sender_id: 2,
    sender_full_name: NAMES[o.sender_id ?? 2]!,
    sender_email: 'x@x',
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

function dm(id: number, ids: number[], sender: number): Message {
  return msg(id, {
    type: 'private',
    sender_id: sender,
    subject: '',
    stream_id: undefined,
    display_recipient: ids.map((i) => ({ id: i, email: `${i}@x`, full_name: NAMES[i]! })),
  });
}

function ctx(o: Partial<RowContext> = {}): RowContext {
  return {
    selfId: SELF,
    subscribed: (id) => id === 10 || id === 11,
    channelName: (id) => (id === 10 ? 'general' : id === 11 ? 'design' : 'secret'),
    mutedTopic: () => false,
    followed: () => false,
    userName: (id) => NAMES[id] ?? 'Unknown',
    userMuted: () => false,
    unread: () => undefined,
    ...o,
  };
}

const keys = (rows: { key: string }[]) => rows.map((r) => r.key);
const with_ = (f: Partial<RecentFilters>): RecentFilters => ({ ...DEFAULT_FILTERS, ...f });

t.test('conversations: one per topic or DM conversation, newest activity first', (t) => {
  const r = new RecentConversations(SELF);
  r.add([
    msg(1),
    msg(2, { subject: 'logo', stream_id: 11 }),
    dm(3, [1, 2], 2),
    msg(4, { subject: 'LUNCH', sender_id: 3 }),
    dm(5, [1, 2, 3], 1),
  ]);
  const list = r.list();
  t.equal(list.length, 4, 'topics compare without case');
  t.same(keys(list), ['dm:2,3', '10\u0000lunch', 'dm:2', '11\u0000logo']);
  const lunch = list[1]!;
  t.equal(lunch.lastId, 4);
  t.same(lunch.senders, [3, 2], 'the newest sender first');
  t.equal(lunch.participated, false);
  t.equal(list[0]!.participated, true, 'the user sent to the group conversation');
  t.same(list[0]!.kind === 'dm' && list[0]!.ids, [2, 3], 'the other participants');
  const rev = r.rev.peek();
  r.add([msg(1)]);
  t.equal(r.rev.peek(), rev, 'a message seen again changes nothing');
  r.add([msg(6, { stream_id: 11, subject: 'logo' })]);
  t.equal(r.list()[0]!.key, '11\u0000logo', 'a new message takes its conversation to the top');
  t.end();
});

t.test('moves and deletions', (t) => {
  const r = new RecentConversations(SELF);
  r.add([msg(1), msg(2, { sender_id: 1 }), msg(3, { subject: 'other' })]);
  r.move([2], 11, 'moved');
  t.same(keys(r.list()), ['10\u0000other', '11\u0000moved', '10\u0000lunch']);
  t.equal(r.list()[2]!.participated, false, 'the user’s message went with the move');
  r.move([1], undefined, 'other');
  t.same(keys(r.list()), ['10\u0000other', '11\u0000moved'], 'emptied topic gone');
  t.same(r.list()[0]!.senders, [2]);
  r.remove([3]);
  t.equal(r.list()[0]!.key, '11\u0000moved', 'the topic’s newest deleted: ordered by the next');
  t.equal(r.list().find((c) => c.key === '10\u0000other')!.lastId, 1);
  r.remove([1, 2, 99]);
  t.equal(r.size, 0);
  r.add([msg(99, { subject: 'late' })]);
  t.equal(r.size, 0, 'a fetch answered after a deletion does not bring the message back');
  r.move([5], 11, 'x');
  t.equal(r.size, 0, 'a move of messages not seen does nothing');
  t.end();
});

t.test('fetched: how far back, and whether the first message was reached', (t) => {
  const r = new RecentConversations(SELF);
  r.fetched([msg(7), msg(5)], false);
  t.same(r.oldestFetched, { id: 5, timestamp: 1_700_000_005 });
  t.equal(r.foundOldest, false);
  r.fetched([msg(2)], true);
  t.equal(r.oldestFetched!.id, 2);
  t.equal(r.foundOldest, true);
  t.equal(r.size, 1);
  t.end();
});

t.test('rows: what the user can see, unread counts and mentions, the filters', (t) => {
  const r = new RecentConversations(SELF);
  r.add([
    msg(1),
    msg(2, { stream_id: 11, subject: 'logo', sender_id: 1 }),
    msg(3, { stream_id: 12, subject: 'hidden' }),
    dm(4, [1, 2], 2),
    msg(5, { subject: 'quiet' }),
    dm(6, [1, 4], 4),
    dm(7, [1], 1),
  ]);
  const unread = new Map([
    ['10\u0000lunch', { count: 2, mentioned: true }],
    ['dm:2', { count: 1, mentioned: false }],
  ]);
  const c = ctx({
    unread: (k) => unread.get(k),
    mutedTopic: (id, topic) => id === 10 && topic === 'quiet',
    followed: (id, topic) => id === 11 && topic === 'logo',
    userMuted: (id) => id === 4,
  });
  const rows = recentRows(r.list(), c, DEFAULT_FILTERS);
  t.same(
    keys(rows),
    ['dm:1', 'dm:2', '11\u0000logo', '10\u0000lunch'],
    'not a channel one is not in, a muted topic, a conversation only with muted people',
  );
  const lunch = rows.find((x) => x.key === '10\u0000lunch')!;
  t.equal(lunch.unread, 2);
  t.equal(lunch.mentioned, true);
  t.equal(lunch.label, 'general > lunch');
  t.equal(rows[1]!.label, 'Hamlet');
  t.equal(rows[0]!.label, 'Me', 'one’s own conversation is never hidden as muted');

  t.same(keys(recentRows(r.list(), c, with_({ dms: false }))), ['11\u0000logo', '10\u0000lunch']);
  t.same(keys(recentRows(r.list(), c, with_({ unread: true }))), ['dm:2', '10\u0000lunch']);
  t.same(keys(recentRows(r.list(), c, with_({ participated: true }))), ['dm:1', '11\u0000logo']);
  const all = recentRows(r.list(), c, with_({ topics: 'all', dms: false }));
  t.same(keys(all), ['10\u0000quiet', '11\u0000logo', '10\u0000lunch'], 'muted topics too');
  t.equal(all[0]!.muted, true, 'marked muted');
  t.same(keys(recentRows(r.list(), c, with_({ topics: 'followed', dms: false }))), [
    '11\u0000logo',
  ]);
  t.same(keys(recentRows(r.list(), c, with_({ text: 'GEN lun' }))), ['10\u0000lunch'], 'words');
  t.same(keys(recentRows(r.list(), c, with_({ text: 'design' }))), ['11\u0000logo'], 'channel');
  t.same(keys(recentRows(r.list(), c, with_({ text: 'haml' }))), ['dm:2'], 'people');
  t.same(recentRows(r.list(), c, with_({ text: 'nothing' })), []);
  t.end();
});

t.test('filters from storage; participants; times', (t) => {
  t.same(parseFilters(null), DEFAULT_FILTERS);
  t.same(parseFilters({ dms: false, unread: true, topics: 'followed', text: 'x' }), {
    ...DEFAULT_FILTERS,
    dms: false,
    unread: true,
    topics: 'followed',
  });
  t.same(parseFilters({ dms: 'yes', topics: 'bogus' }), DEFAULT_FILTERS, 'bad values: defaults');
  t.same(shownParticipants([5, 4, 3, 2, 1, 0], 4), { shown: [5, 4, 3, 2], more: 2 });
  t.same(shownParticipants([5], 4), { shown: [5], more: 0 });
  const now = 1_700_000_000_000;
  const day = () => 'a day';
  t.equal(relativeTime(1_700_000_000 - 30, now, day), 'just now');
  t.equal(relativeTime(1_700_000_000 - 300, now, day), '5 min ago');
  t.equal(relativeTime(1_700_000_000 - 7200, now, day), '2 h ago');
  t.equal(relativeTime(1_700_000_000 - 200_000, now, day), 'a day');
  t.end();
});

t.test('sorting by a column: Channel, Topic, Unread, Time (the default)', (t) => {
  const r = new RecentConversations(SELF);
  r.add([
    msg(1, { stream_id: 11, subject: 'Zebra' }),
    msg(2, { subject: 'apple' }),
    dm(3, [1, 3], 3),
    msg(4, { stream_id: 11, subject: 'mango' }),
    dm(5, [1, 2], 2),
    msg(6, { subject: 'Banana' }),
  ]);
  const unread: Record<string, number> = { '11\u0000zebra': 3, '10\u0000apple': 1, 'dm:3': 1 };
  const rows = recentRows(
    r.list(),
    ctx({ unread: (k) => (unread[k] ? { count: unread[k], mentioned: false } : undefined) }),
    DEFAULT_FILTERS,
  );
  const name = (id: number) => (id === 10 ? 'general' : 'Design');
  const by = (sort: Parameters<typeof sortRows>[1]) =>
    sortRows(rows, sort, name).map((x) => (x.kind === 'dm' ? x.label : x.topic));
  t.same(by(DEFAULT_SORT), ['Banana', 'Hamlet', 'mango', 'Othello', 'apple', 'Zebra'], 'newest');
  t.same(by({ by: 'time', desc: false }), [
    'Zebra',
    'apple',
    'Othello',
    'mango',
    'Hamlet',
    'Banana',
  ]);
  t.same(
    by({ by: 'channel', desc: false }),
    ['Hamlet', 'Othello', 'mango', 'Zebra', 'Banana', 'apple'],
    'DMs first (by people), then channels by name without case; ties newest first',
  );
  t.same(by({ by: 'channel', desc: true }), [
    'Banana',
    'apple',
    'mango',
    'Zebra',
    'Othello',
    'Hamlet',
  ]);
  t.same(
    by({ by: 'topic', desc: false }),
    ['apple', 'Banana', 'Hamlet', 'mango', 'Othello', 'Zebra'],
    'topics and people’s names, without case',
  );
  t.same(
    by({ by: 'unread', desc: true }),
    ['Zebra', 'Othello', 'apple', 'Banana', 'Hamlet', 'mango'],
    'most unread first, ties by the newest',
  );
  t.same(by({ by: 'unread', desc: false }).slice(0, 3), ['mango', 'Hamlet', 'Banana']);
  t.same(
    rows.map((x) => x.key),
    keys(r.list()),
    'the rows given are left as they were',
  );

  t.same(nextSort(DEFAULT_SORT, 'time'), { by: 'time', desc: false }, 'the same column: turned');
  t.same(nextSort({ by: 'time', desc: false }, 'time'), DEFAULT_SORT);
  t.same(nextSort(DEFAULT_SORT, 'unread'), { by: 'unread', desc: false }, 'another: up first');
  t.end();
});

t.test('r on a row: where it goes, what the compose box is addressed to', (t) => {
  const r = new RecentConversations(SELF);
  r.add([msg(1, { stream_id: 11, subject: 'logo' }), dm(2, [1, 2, 3], 2), dm(3, [1], 1)]);
  const rows = recentRows(r.list(), ctx(), DEFAULT_FILTERS);
  const [self, group, topic] = rows;
  t.same(rowCompose(topic!, SELF), {
    narrow: topicNarrow(11, 'logo'),
    to: { kind: 'stream', streamId: 11, topic: 'logo' },
  });
  t.same(rowCompose(group!, SELF), {
    narrow: dmNarrow([2, 3], SELF),
    to: { kind: 'dm', userIds: [2, 3] },
  });
  t.same(
    rowCompose(self!, SELF),
    { narrow: dmNarrow([SELF], SELF), to: { kind: 'dm', userIds: [SELF] } },
    'one’s own conversation: addressed to oneself, as the Inbox’s',
  );
  // `c` is the view's compose key (shell.tsx; narrow.ts composeKeyChannel, test/web/narrow).
  t.end();
});

t.test('roveRows: ↓ ↑ j k without wrapping, Home, End', (t) => {
  t.equal(roveRows('ArrowDown', 0, 3), 1);
  t.equal(roveRows('j', 1, 3), 2);
  t.equal(roveRows('ArrowDown', 2, 3), 2, 'the last stays');
  t.equal(roveRows('ArrowUp', 0, 3), 0, 'the first stays');
  t.equal(roveRows('k', 2, 3), 1);
  t.equal(roveRows('Home', 2, 3), 0);
  t.equal(roveRows('End', 0, 3), 2);
  t.equal(roveRows('ArrowDown', 7, 3), 2, 'from past the end: the last');
  t.equal(roveRows('Enter', 0, 3), undefined);
  t.equal(roveRows('ArrowDown', 0, 0), undefined, 'no rows');
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
      count: 2,
      streams: [{ stream_id: 10, topic: 'lunch', unread_message_ids: [1, 2] }],
      pms: [],
      huddles: [],
      mentions: [2],
      old_unreads_missing: false,
    },
    user_topics: [],
    max_message_id: 3,
    realm_user_groups: [],
  };
}

let eventId = 0;
const ev = (e: Record<string, unknown>) => ({ id: eventId++, ...e }) as unknown as ServerEvent;

t.test('ChatState: fetched messages, then events move rows and counts', (t) => {
  const clock = new FakeTimers();
  const s = new ChatState(register(), { now: clock.now, timers: clock.timers });
  s.ingest([msg(1), msg(2), msg(3, { stream_id: 11, subject: 'logo' })]);
  const rowsNow = () =>
    recentRows(
      s.recent.list(),
      ctx({
        subscribed: (id) => s.subs.has(id),
        mutedTopic: (id, topic) => s.mutedTopic(id, topic),
        followed: (id, topic) => s.topicPolicy(id, topic) === TOPIC.FOLLOWED,
        unread: (k) => s.unread.byConversation().get(k),
      }),
      DEFAULT_FILTERS,
    );
  t.same(keys(rowsNow()), ['11\u0000logo', '10\u0000lunch']);
  t.same(
    rowsNow().map((r) => [r.unread, r.mentioned]),
    [
      [0, false],
      [2, true],
    ],
  );

  s.apply([ev({ type: 'message', message: msg(4, { sender_id: 3 }), flags: [] })]);
  t.same(keys(rowsNow()), ['10\u0000lunch', '11\u0000logo'], 'a new message: its row on top');
  t.equal(rowsNow()[0]!.unread, 3);
  t.same(rowsNow()[0]!.senders, [3, 2]);

  s.apply([ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [1, 2, 4] })]);
  t.same(
    rowsNow().map((r) => r.unread),
    [0, 0],
    'read elsewhere: the count drops',
  );

  s.apply([
    ev({
      type: 'update_message',
      message_id: 3,
      message_ids: [3],
      stream_id: 11,
      orig_subject: 'logo',
      subject: 'brand',
      propagate_mode: 'change_all',
      edit_timestamp: 1,
    }),
  ]);
  t.same(keys(rowsNow()), ['10\u0000lunch', '11\u0000brand'], 'a renamed topic');

  s.apply([ev({ type: 'delete_message', message_ids: [4], message_type: 'stream' })]);
  t.same(rowsNow()[0]!.senders, [2], 'a deleted message’s sender goes');
  s.apply([ev({ type: 'delete_message', message_ids: [1, 2], message_type: 'stream' })]);
  t.same(keys(rowsNow()), ['11\u0000brand'], 'all its messages deleted: the row goes');
  t.end();
});
