/**
 * web/state/chat.ts, the reducer: register's snapshot, then each event kind the app reduces —
 * messages into the lists they belong in and the unread counts (muted topics and channels
 * apart), flags both ways, reactions, edits, moves, deletions, subscriptions, users, typing,
 * presence — and the local echo replaced by the server's message. Against the real server (the
 * state a fresh register gives equals the state the events built): test/api/client-state.test.ts.
 */
import t from 'tap';
import type {
  Message,
  RegisterResponse,
  ServerEvent,
  Subscription,
} from '../../src/client/types.js';
import { renderMarkdown } from '../../src/lib/markdown/index.js';
import { ChatState, TOPIC } from '../../web/state/chat.js';
import { meAction, plainHtml } from '../../web/state/format.js';
import { CTX } from '../unit/markdown-cases.js';
import { ALL, channelNarrow, dmNarrow, isNarrow, topicNarrow } from '../../web/state/narrow.js';
import { FakeTimers } from '../helpers/fake-timers.js';

const SELF = 1;
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

function register(o: Partial<RegisterResponse> = {}): RegisterResponse {
  return {
    queue_id: 'q',
    last_event_id: -1,
    user_id: SELF,
    email: 'me@x',
    full_name: 'Me',
    realm_users: [
      { user_id: 1, email: 'me@x', full_name: 'Me', is_bot: false },
      { user_id: 2, email: 'h@x', full_name: 'Hamlet', is_bot: false },
      { user_id: 3, email: 'o@x', full_name: 'Othello', is_bot: false },
    ],
    subscriptions: [sub(10, 'general'), sub(11, 'noise', { is_muted: true })],
    unread_msgs: {
      count: 4,
      streams: [
        { stream_id: 10, topic: 'lunch', unread_message_ids: [5, 6] },
        { stream_id: 11, topic: 'chatter', unread_message_ids: [7] },
      ],
      pms: [{ other_user_id: 2, unread_message_ids: [8] }],
      huddles: [],
      mentions: [6],
      old_unreads_missing: false,
    },
    user_topics: [],
    max_message_id: 8,
    realm_user_groups: [],
    user_settings: {
      twenty_four_hour_time: false,
      color_scheme: 1,
      enable_desktop_notifications: true,
      enable_stream_desktop_notifications: false,
    },
    ...o,
  };
}

let nextEventId = 0;
function streamMsg(id: number, o: Partial<Message> = {}): Message {
  return {
    id,
    sender_id: 2,
    sender_full_name: 'Hamlet',
    sender_email: 'h@x',
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
const ev = (e: Record<string, unknown>) => ({ id: nextEventId++, ...e }) as unknown as ServerEvent;
const msgEvent = (m: Message, flags: string[] = [], local?: string) =>
  ev({ type: 'message', message: m, flags, local_message_id: local });

function state(o: Partial<RegisterResponse> = {}) {
  const clock = new FakeTimers();
  return { s: new ChatState(register(o), { now: clock.now, timers: clock.timers }), clock };
}

const mutedPred = (s: ChatState) => ({
  mutedTopic: (id: number, topic: string) => s.mutedTopic(id, topic),
});

t.test('counts from the snapshot, muted channels apart', (t) => {
  const { s } = state();
  const c = s.unread.counts(mutedPred(s));
  t.equal(c.total, 3, 'the muted channel is not in the total');
  t.same(c.streams.get(10), { unmuted: 2, muted: 0 });
  t.same(c.streams.get(11), { unmuted: 0, muted: 1 });
  t.equal(c.dms.get('2'), 1);
  t.equal(c.mentions, 1);
  t.equal(s.dms.has('2'), true, 'an unread conversation is listed');
  t.end();
});

t.test('new messages: lists, unread, conversations, topics', (t) => {
  const { s } = state();
  const all = s.list(ALL);
  all.setInitial([5, 6, 7, 8], true, true, null);
  const lunch = s.list(topicNarrow(10, 'Lunch'));
  lunch.setInitial([5, 6], true, true, null);
  const other = s.list(channelNarrow(11));
  other.setInitial([7], true, true, null);
  s.setTopics(10, [
    { name: 'lunch', max_id: 6 },
    { name: 'older', max_id: 3 },
  ]);
  s.apply([msgEvent(streamMsg(9, { subject: 'LUNCH' }))]);
  t.same(all.ids, [5, 6, 7, 8, 9]);
  t.same(lunch.ids, [5, 6, 9], 'topic compared without case');
  t.same(other.ids, [7]);
  t.equal(s.unread.counts(mutedPred(s)).total, 4);
  t.equal(s.topics.get(10)![0]!.maxId, 9);
  const dm = streamMsg(12, {
    type: 'private',
    stream_id: undefined,
    subject: '',
    display_recipient: [
      { id: 1, email: 'me@x', full_name: 'Me' },
      { id: 2, email: 'h@x', full_name: 'Hamlet' },
      { id: 3, email: 'o@x', full_name: 'Othello' },
    ],
  });
  const group = s.list(dmNarrow([3, 2], SELF));
  group.setInitial([], true, true, null);
  const arrived = s.apply([msgEvent(dm, ['mentioned'])]);
  t.equal(arrived.length, 1);
  t.same(group.ids, [12]);
  t.equal(s.dms.get('2,3'), 12);
  t.equal(s.unread.counts(mutedPred(s)).mentions, 2);
  const mentions = s.list(isNarrow('mentioned'));
  mentions.setInitial([], true, true, null);
  s.apply([msgEvent(streamMsg(13), ['read'])]);
  t.equal(s.unread.has(13), false, 'arrived read');
  t.same(mentions.ids, [], 'not a mention');
  t.end();
});

t.test('flags: read both ways, everything read, starred', (t) => {
  const { s } = state();
  s.ingest([streamMsg(5, { flags: [] })]);
  s.list(ALL).setInitial([5], false, true, null);
  s.apply([
    ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [5, 8], all: false }),
  ]);
  t.same(s.unread.ids(), [6, 7]);
  t.same(s.messages.get(5)!.flags, ['read']);
  s.apply([
    ev({
      type: 'update_message_flags',
      op: 'remove',
      flag: 'read',
      messages: [5, 8],
      all: false,
      message_details: {
        5: { type: 'stream', stream_id: 10, topic: 'lunch', mentioned: true },
        8: { type: 'private', user_ids: [2] },
      },
    }),
  ]);
  t.same(s.unread.ids(), [5, 6, 7, 8]);
  t.equal(s.unread.counts(mutedPred(s)).mentions, 2);
  t.same(s.messages.get(5)!.flags, []);
  s.apply([
    ev({ type: 'update_message_flags', op: 'add', flag: 'starred', messages: [5], all: false }),
  ]);
  t.same(s.messages.get(5)!.flags, ['starred']);
  s.apply([ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [], all: true })]);
  t.equal(s.unread.size, 0, 'all read');
  t.end();
});

t.test("the Starred view's count: stars both ways, deletions, the user's setting", (t) => {
  const { s } = state({ starred_messages: [5, 6] });
  t.equal(s.starredCount(), 2, 'from the snapshot');
  const rev = s.rev.starred.value;
  const star = (op: 'add' | 'remove', messages: number[]) =>
    s.apply([ev({ type: 'update_message_flags', op, flag: 'starred', messages, all: false })]);
  star('add', [7, 8]);
  t.equal(s.starredCount(), 4, 'starred');
  t.ok(s.rev.starred.value > rev, 'the sidebar told');
  star('add', [7]);
  t.equal(s.starredCount(), 4, 'starred again: counted once');
  star('remove', [5, 9]);
  t.equal(s.starredCount(), 3, 'unstarred (one that was not starred: nothing)');
  const before = s.rev.starred.value;
  s.apply([
    ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [6], all: false }),
  ]);
  t.equal(s.rev.starred.value, before, 'another flag: the count not drawn again');
  s.apply([ev({ type: 'delete_message', message_ids: [6, 10], message_type: 'stream' })]);
  t.equal(s.starredCount(), 2, 'a starred message deleted');
  s.apply([ev({ type: 'delete_message', message_id: 7, message_type: 'stream' })]);
  t.equal(s.starredCount(), 1, 'deleted, one at a time');
  t.ok(s.rev.starred.value > before, 'the sidebar told of the deletions');
  s.apply([
    ev({ type: 'user_settings', op: 'update', property: 'starred_message_counts', value: false }),
  ]);
  t.equal(s.starredCount(), null, 'no count when the user turned them off');
  s.apply([
    ev({ type: 'user_settings', op: 'update', property: 'starred_message_counts', value: true }),
  ]);
  t.equal(s.starredCount(), 1, 'and one again when on');
  t.equal(state().s.starredCount(), 0, 'none starred: a snapshot without any');
  t.end();
});

t.test('muting a topic and a channel, unmuting a topic in a muted channel', (t) => {
  const { s } = state();
  s.apply([
    ev({
      type: 'user_topic',
      stream_id: 10,
      topic_name: 'Lunch',
      last_updated: 0,
      visibility_policy: TOPIC.MUTED,
    }),
  ]);
  t.equal(s.unread.counts(mutedPred(s)).total, 1, 'the muted topic left the total');
  s.apply([
    ev({
      type: 'user_topic',
      stream_id: 11,
      topic_name: 'chatter',
      last_updated: 0,
      visibility_policy: TOPIC.UNMUTED,
    }),
  ]);
  t.equal(s.unread.counts(mutedPred(s)).total, 2, 'unmuted in a muted channel counts');
  s.apply([
    ev({ type: 'subscription', op: 'update', stream_id: 11, property: 'is_muted', value: false }),
  ]);
  t.equal(s.subs.get(11)!.is_muted, false);
  s.apply([
    ev({
      type: 'subscription',
      op: 'update',
      stream_id: 10,
      property: 'in_home_view',
      value: false,
    }),
  ]);
  t.equal(s.subs.get(10)!.is_muted, true, 'the legacy property too');
  t.end();
});

t.test("a widget's submessages: live, once each, and kept for a copy being fetched", (t) => {
  const { s } = state();
  const widget = {
    id: 1,
    message_id: 5,
    sender_id: 2,
    msg_type: 'widget',
    content: JSON.stringify({ widget_type: 'poll', extra_data: { question: 'Q', options: ['A'] } }),
  };
  s.ingest([streamMsg(5, { submessages: [widget] })]);
  const lunch = s.list(topicNarrow(10, 'lunch'));
  lunch.setInitial([5], true, true, null);
  const before = s.messages.get(5);
  const vote = {
    type: 'submessage',
    message_id: 5,
    submessage_id: 2,
    sender_id: 3,
    msg_type: 'widget',
    content: '{"type":"vote","key":"canned,0","vote":1}',
  };
  s.apply([ev(vote), ev(vote)]);
  t.same(
    s.messages.get(5)!.submessages!.map((x) => x.id),
    [1, 2],
    'added once',
  );
  t.not(s.messages.get(5), before, 'a new object (views compare identity)');
  // A message fetched while a vote arrived gets it.
  const other = s.list(topicNarrow(10, 'dinner'));
  s.fetchStarting();
  other.startLoading();
  s.apply([ev({ ...vote, message_id: 7, submessage_id: 3 })]);
  s.ingest([streamMsg(7, { subject: 'dinner', submessages: [{ ...widget, message_id: 7 }] })]);
  t.same(
    s.messages.get(7)!.submessages!.map((x) => x.id),
    [1, 3],
  );
  t.end();
});

t.test('reactions, edits, moves and deletions', (t) => {
  const { s } = state();
  s.ingest([streamMsg(5), streamMsg(6)]);
  const lunch = s.list(topicNarrow(10, 'lunch'));
  lunch.setInitial([5, 6], true, true, null);
  const dinner = s.list(topicNarrow(10, 'dinner'));
  dinner.setInitial([], true, true, null);
  const before = s.messages.get(5);
  const r = {
    message_id: 5,
    emoji_name: 'smile',
    emoji_code: '1f642',
    reaction_type: 'unicode_emoji',
  };
  s.apply([
    ev({ type: 'reaction', op: 'add', user_id: 2, ...r }),
    ev({ type: 'reaction', op: 'add', user_id: 2, ...r }),
  ]);
  t.equal(s.messages.get(5)!.reactions.length, 1, 'added once');
  t.not(s.messages.get(5), before, 'a new object (views compare identity)');
  s.apply([ev({ type: 'reaction', op: 'remove', user_id: 2, ...r })]);
  t.equal(s.messages.get(5)!.reactions.length, 0);

  s.apply([
    ev({
      type: 'update_message',
      message_id: 5,
      message_ids: [5],
      user_id: 2,
      edit_timestamp: 99,
      rendered_content: '<p>new</p>',
      content: 'new',
    }),
  ]);
  t.equal(s.messages.get(5)!.content, '<p>new</p>');
  t.equal(s.messages.get(5)!.last_edit_timestamp, 99);

  s.apply([
    ev({
      type: 'update_message',
      message_id: 5,
      message_ids: [5, 6],
      user_id: 2,
      edit_timestamp: 100,
      stream_id: 10,
      orig_subject: 'lunch',
      subject: 'dinner',
      propagate_mode: 'change_all',
    }),
  ]);
  t.same(lunch.ids, [], 'moved out of the old topic');
  t.equal(dinner.stale, true, 'the new topic is fetched again');
  t.equal(
    s.unread.where(6)?.kind === 'stream' && s.unread.where(6)!.kind === 'stream'
      ? (s.unread.where(6) as { topic: string }).topic
      : '',
    'dinner',
  );

  const all = s.list(ALL);
  all.setInitial([5, 6, 7], true, true, null);
  s.apply([ev({ type: 'delete_message', message_type: 'stream', message_ids: [6, 7] })]);
  t.same(all.ids, [5]);
  t.equal(s.messages.has(6), false);
  t.equal(s.unread.has(6), false);
  t.equal(s.unread.has(7), false);
  t.end();
});

t.test('the local echo is replaced by the server message', (t) => {
  const { s } = state();
  const all = s.list(ALL);
  all.setInitial([5, 6], true, true, null);
  const local = s.echo({
    type: 'stream',
    streamId: 10,
    topic: 'lunch',
    content: 'hi',
    html: '<p>hi</p>',
  });
  t.equal(all.ids.length, 3, 'shown at once');
  const echoId = all.ids[2]!;
  t.equal(s.messages.get(echoId)!.local_id, local);
  s.echoFailed(local);
  t.equal(s.messages.get(echoId)!.local_failed, true);
  t.equal(s.echoRetrying(local), true, 'a failed echo: sent again');
  t.equal(s.messages.get(echoId)!.local_failed, false, 'shown as sending');
  t.equal(s.echoRetrying(local), false, 'sending already: not sent twice');
  t.equal(s.echoRetrying('no-such-echo'), false, 'an echo gone: nothing to send');
  s.apply([msgEvent(streamMsg(20, { sender_id: SELF, content: '<p>hi</p>' }), ['read'], local)]);
  t.same(all.ids, [5, 6, 20], 'replaced, not doubled');
  t.equal(s.messages.has(echoId), false);
  t.equal(s.echoes.size, 0);
  t.end();
});

t.test('a me-message is echoed as the server’s copy will be drawn', (t) => {
  const { s } = state();
  const all = s.list(ALL);
  all.setInitial([5, 6], true, true, null);
  const content = '/me waves at everyone';
  const local = s.echo({
    type: 'stream',
    streamId: 10,
    topic: 'lunch',
    content,
    html: plainHtml(content),
  });
  const echo = s.messages.get(all.ids[2]!)!;
  const server = renderMarkdown(content, CTX);
  t.equal(echo.is_me_message, true, 'a me-message, as the server’s copy says');
  t.equal(echo.is_me_message, server.is_me_message);
  t.equal(meAction(echo.content), 'waves at everyone');
  t.equal(meAction(echo.content), meAction(server.rendered_content), 'the same action drawn');
  s.apply([
    msgEvent(
      streamMsg(20, { sender_id: SELF, content: server.rendered_content, is_me_message: true }),
      ['read'],
      local,
    ),
  ]);
  t.same(all.ids, [5, 6, 20]);
  const plain = s.echo({
    type: 'stream',
    streamId: 10,
    topic: 'lunch',
    content: 'hi',
    html: '<p>hi</p>',
  });
  t.equal(s.messages.get(s.echoes.get(plain)!)!.is_me_message, false, 'any other message: not one');
  t.end();
});

t.test('subscriptions, channels, users, groups, settings', (t) => {
  const { s } = state();
  s.apply([ev({ type: 'subscription', op: 'add', subscriptions: [sub(12, 'new')] })]);
  t.equal(s.subs.has(12), true);
  s.apply([
    ev({
      type: 'stream',
      op: 'update',
      stream_id: 12,
      name: 'new',
      property: 'name',
      value: 'renamed',
    }),
  ]);
  t.equal(s.channelName(12), 'renamed');
  s.apply([
    ev({
      type: 'stream',
      op: 'update',
      stream_id: 12,
      name: 'renamed',
      property: 'description',
      value: '**Soup**',
      rendered_description: '<p><strong>Soup</strong></p>',
    }),
  ]);
  t.same(
    [s.subs.get(12)?.description, s.channels.get(12)?.rendered_description],
    ['**Soup**', '<p><strong>Soup</strong></p>'],
    'a description with its HTML',
  );
  // The members of the channels whose settings are open: peer events (ChannelMembers).
  t.equal(s.members.shouldFetch(12), true);
  s.members.fetched(12, [1]);
  s.apply([ev({ type: 'subscription', op: 'peer_add', stream_ids: [12], user_ids: [2, 3] })]);
  s.apply([ev({ type: 'subscription', op: 'peer_remove', stream_ids: [12], user_ids: [3] })]);
  t.same([...s.members.get(12)!], [1, 2], 'peer_add and peer_remove reach the members');
  s.apply([
    ev({ type: 'subscription', op: 'remove', subscriptions: [{ stream_id: 12, name: 'renamed' }] }),
  ]);
  t.equal(s.subs.has(12), false);
  t.equal(s.channels.has(12), true, 'still known by name');
  s.apply([
    ev({ type: 'realm_user', op: 'update', person: { user_id: 2, full_name: 'Prince Hamlet' } }),
  ]);
  t.equal(s.userName(2), 'Prince Hamlet');
  s.apply([
    ev({
      type: 'realm_user',
      op: 'add',
      person: { user_id: 4, email: 'n@x', full_name: 'New', is_bot: false },
    }),
  ]);
  t.equal(s.userName(4), 'New');
  s.apply([
    ev({
      type: 'user_group',
      op: 'add',
      group: { id: 5, name: 'leads', description: '', members: [2] },
    }),
  ]);
  s.apply([ev({ type: 'user_group', op: 'add_members', group_id: 5, user_ids: [1] })]);
  t.equal(s.inGroup(5), true);
  // Subgroups: one in it through a subgroup, until that subgroup is taken out.
  s.apply([
    ev({
      type: 'user_group',
      op: 'add',
      group: { id: 6, name: 'reviewers', description: '', members: [] },
    }),
  ]);
  t.equal(s.inGroup(6), false);
  s.apply([ev({ type: 'user_group', op: 'add_subgroups', group_id: 6, direct_subgroup_ids: [5] })]);
  t.equal(s.inGroup(6), true, 'through its subgroup');
  t.same(s.groups.get(6)!.direct_subgroup_ids, [5]);
  s.apply([
    ev({ type: 'user_group', op: 'remove_subgroups', group_id: 6, direct_subgroup_ids: [5] }),
  ]);
  t.equal(s.inGroup(6), false, 'the subgroup taken out');
  s.apply([ev({ type: 'user_settings', op: 'update', property: 'color_scheme', value: 2 })]);
  t.equal(s.settings.color_scheme, 2);
  t.end();
});

t.test('a user renamed or given a new avatar: their messages shown with it', (t) => {
  const { s } = state();
  const all = s.list(ALL);
  all.setInitial([], true, true, null);
  s.apply([
    msgEvent(streamMsg(20)),
    msgEvent(streamMsg(21, { sender_id: 3, sender_full_name: 'Othello', sender_email: 'o@x' })),
  ]);
  const othellos = s.messages.get(21);
  const rev = all.rev.value;
  s.apply([
    ev({ type: 'realm_user', op: 'update', person: { user_id: 2, full_name: 'Prince Hamlet' } }),
  ]);
  t.equal(s.messages.get(20)!.sender_full_name, 'Prince Hamlet', 'the new name on the message');
  t.ok(all.rev.value > rev, 'its list drawn again');
  t.equal(s.messages.get(21), othellos, "another sender's message untouched");
  s.apply([
    ev({
      type: 'realm_user',
      op: 'update',
      person: { user_id: 2, avatar_url: '/avatar/2/new.png', avatar_version: 2 },
    }),
  ]);
  t.equal(s.messages.get(20)!.avatar_url, '/avatar/2/new.png', 'the new avatar');
  t.equal(s.messages.get(20)!.sender_full_name, 'Prince Hamlet', 'the name kept');
  const now = s.messages.get(20);
  s.apply([ev({ type: 'realm_user', op: 'update', person: { user_id: 2, timezone: 'UTC' } })]);
  t.equal(s.messages.get(20), now, 'another field: the messages untouched');
  t.end();
});

t.test('a user renamed: the messages that mention them drawn again (with the new name)', (t) => {
  const { s } = state();
  const all = s.list(ALL);
  all.setInitial([], true, true, null);
  const mention = '<p><span class="user-mention" data-user-id="2">@Hamlet</span> hi</p>';
  s.apply([
    msgEvent(streamMsg(30, { sender_id: 3, sender_full_name: 'Othello', content: mention })),
    msgEvent(streamMsg(31, { sender_id: 3, sender_full_name: 'Othello' })),
  ]);
  const mentioning = s.messages.get(30);
  const other = s.messages.get(31);
  s.apply([
    ev({ type: 'realm_user', op: 'update', person: { user_id: 2, full_name: 'Prince Hamlet' } }),
  ]);
  t.not(s.messages.get(30), mentioning, 'the message mentioning Hamlet is a new object');
  t.equal(s.messages.get(30)!.content, mention, 'its content as the server rendered it');
  t.equal(s.messages.get(31), other, 'one not mentioning him untouched');
  t.end();
});

t.test(
  'alert words changed: the messages flagged with one drawn again (with the words now)',
  (t) => {
    const { s } = state({ alert_words: ['release'] });
    const all = s.list(ALL);
    all.setInitial([], true, true, null);
    s.apply([
      msgEvent(streamMsg(40, { content: '<p>the release is out</p>' }), ['has_alert_word']),
      msgEvent(streamMsg(41, { content: '<p>lunch at noon</p>' })),
    ]);
    const alerted = s.messages.get(40);
    const other = s.messages.get(41);
    const rev = all.rev.value;
    s.apply([ev({ type: 'alert_words', alert_words: ['release', 'outage'] })]);
    t.same(s.alertWords, ['release', 'outage'], 'the words now');
    t.not(s.messages.get(40), alerted, 'the flagged message is a new object: its row draws again');
    t.same(s.messages.get(40), alerted, 'with nothing else changed');
    t.ok(all.rev.value > rev, 'its list drawn again');
    t.equal(s.messages.get(41), other, 'a message without the flag untouched');
    const again = s.messages.get(40);
    s.apply([ev({ type: 'alert_words', alert_words: [] })]);
    t.not(s.messages.get(40), again, 'every word removed: drawn again too (its marks go)');
    t.end();
  },
);

t.test('rev.messages: a stored message changed (the dialogs about one message follow it)', (t) => {
  const { s } = state();
  s.list(ALL).setInitial([], true, true, null);
  s.apply([msgEvent(streamMsg(50))]);
  let rev = s.rev.messages.value;
  s.apply([
    ev({
      type: 'update_message',
      message_id: 50,
      message_ids: [50],
      user_id: 2,
      edit_timestamp: 1_700_000_100,
      rendered_content: '<p>edited</p>',
      content: 'edited',
    }),
  ]);
  t.ok(s.rev.messages.value > rev, 'an edit');
  t.equal(
    s.messages.get(50)!.last_edit_timestamp,
    1_700_000_100,
    'with its time (history asks again)',
  );
  rev = s.rev.messages.value;
  s.apply([ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [50] })]);
  t.ok(s.rev.messages.value > rev, 'its read flag (the receipts ask again)');
  t.ok(s.messages.get(50)!.flags.includes('read'));
  rev = s.rev.messages.value;
  s.apply([ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [50] })]);
  s.apply([ev({ type: 'update_message_flags', op: 'add', flag: 'starred', messages: [999] })]);
  t.equal(s.rev.messages.value, rev, 'nothing changed, or a message not kept: no change told');
  t.end();
});

t.test('typing: shown, stopped by a message, lapsed', (t) => {
  const { s, clock } = state({ server_typing_started_expiry_period_milliseconds: 45_000 });
  const start = {
    type: 'typing',
    op: 'start',
    message_type: 'stream',
    sender: { user_id: 2, email: 'h@x' },
    stream_id: 10,
    topic: 'Lunch',
  };
  s.apply([ev(start)]);
  t.same(s.typing.who('stream:10:lunch'), [2]);
  s.apply([msgEvent(streamMsg(30))]);
  t.same(s.typing.who('stream:10:lunch'), [], 'their message ends it');
  s.apply([ev(start)]);
  clock.advance(44_000);
  t.same(s.typing.who('stream:10:lunch'), [2]);
  clock.advance(2_000);
  t.same(s.typing.who('stream:10:lunch'), [], 'lapsed without a renewal');
  t.equal(clock.pending, 0, 'no timer left running');
  s.apply([
    ev({
      type: 'typing',
      op: 'start',
      message_type: 'direct',
      sender: { user_id: 3, email: 'o@x' },
      recipients: [
        { user_id: 1, email: '' },
        { user_id: 3, email: '' },
      ],
    }),
  ]);
  t.same(s.typing.who('dm:3'), [3]);
  s.apply([
    ev({
      type: 'typing',
      op: 'stop',
      message_type: 'direct',
      sender: { user_id: 3, email: 'o@x' },
      recipients: [
        { user_id: 1, email: '' },
        { user_id: 3, email: '' },
      ],
    }),
  ]);
  t.same(s.typing.who('dm:3'), []);
  t.end();
});

t.test('permissions from realm settings and groups', (t) => {
  const groups = [
    { id: 7, name: 'role:members', description: '', members: [1, 2], direct_subgroup_ids: [] },
  ];
  const { s } = state({
    realm_user_groups: groups,
    realm_can_delete_own_message_group: 7,
    realm_can_delete_any_message_group: 99,
    realm_message_content_edit_limit_seconds: 600,
    realm_message_content_delete_limit_seconds: null,
    realm_can_move_messages_between_topics_group: 7,
    realm_move_messages_within_stream_limit_seconds: 3600,
  });
  const mine = streamMsg(5, { sender_id: SELF, timestamp: 1000 });
  t.equal(s.canEditContent(mine, 1500), true);
  t.equal(s.canEditContent(mine, 1700), false, 'past the edit limit');
  t.equal(s.canDelete(mine, 99_999), true, 'no delete limit');
  t.equal(s.canDelete(streamMsg(6), 1000), false, "another's message");
  t.equal(s.canEditTopic(streamMsg(6, { timestamp: 1000 }), 2000), true);
  t.equal(s.canEditTopic(streamMsg(6, { timestamp: 1000 }), 99_999), false, 'past the move limit');
  t.end();
});

t.test('lists are bounded, and their messages go with them', (t) => {
  const { s } = state();
  for (let i = 0; i < 15; i++) {
    const l = s.list(topicNarrow(10, `t${i}`));
    s.ingest([streamMsg(100 + i, { subject: `t${i}` })]);
    l.setInitial([100 + i], true, true, null);
  }
  t.equal(s.lists.size, 10);
  t.equal(s.messages.has(100), false, 'the oldest list is gone, and its message');
  t.equal(s.messages.has(114), true);
  t.end();
});

t.test('sidebar order, sorted once per change of the channels', (t) => {
  const { s } = state({
    subscriptions: [
      sub(10, 'zebra'),
      sub(11, 'Éclair'),
      sub(12, 'apple'),
      sub(13, 'mango', { pin_to_top: true }),
      sub(14, 'Banana'),
    ],
  });
  const first = s.sortedSubs();
  t.same(
    first.map((x) => x.name),
    ['mango', 'apple', 'Banana', 'Éclair', 'zebra'],
    'pinned first, then by name whatever the case and accents',
  );
  t.equal(s.sortedSubs(), first, 'the same list while nothing changed');
  s.apply([ev({ type: 'subscription', op: 'add', subscriptions: [sub(15, 'cherry')] })]);
  const second = s.sortedSubs();
  t.not(second, first, 'sorted again after a change');
  t.same(
    second.map((x) => x.name),
    ['mango', 'apple', 'Banana', 'cherry', 'Éclair', 'zebra'],
  );
  t.end();
});

t.test('pinned channels in a group of their own, moved there by the event', (t) => {
  const { s } = state({
    subscriptions: [sub(10, 'zebra'), sub(11, 'apple'), sub(12, 'mango', { pin_to_top: true })],
  });
  const names = () => {
    const g = s.channelGroups();
    return { pinned: g.pinned.map((x) => x.name), others: g.others.map((x) => x.name) };
  };
  t.same(names(), { pinned: ['mango'], others: ['apple', 'zebra'] });
  s.apply([
    ev({ type: 'subscription', op: 'update', stream_id: 10, property: 'pin_to_top', value: true }),
  ]);
  t.same(names(), { pinned: ['mango', 'zebra'], others: ['apple'] }, 'pinned by an event');
  s.apply([
    ev({ type: 'subscription', op: 'update', stream_id: 12, property: 'pin_to_top', value: false }),
    ev({ type: 'subscription', op: 'update', stream_id: 10, property: 'pin_to_top', value: false }),
  ]);
  t.same(names(), { pinned: [], others: ['apple', 'mango', 'zebra'] }, 'none pinned');
  t.end();
});

t.test("the server's echo of what this page marked read draws nothing again", (t) => {
  const { s } = state();
  s.ingest([streamMsg(5, { flags: [] }), streamMsg(6, { flags: [] })]);
  const list = s.list(topicNarrow(10, 'lunch'));
  list.setInitial([5, 6], true, true, null);
  t.same(s.markReadLocally([5, 6]), [5, 6]);
  const unreadRev = s.rev.unread.value;
  s.apply([
    ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [5, 6], all: false }),
  ]);
  t.equal(s.rev.unread.value, unreadRev, 'the counts did not change');
  t.same(s.messages.get(5)!.flags, ['read'], 'the messages carry the flag');
  const listRev = list.rev.value;
  const m5 = s.messages.get(5);
  s.apply([
    ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [5], all: false }),
  ]);
  t.equal(s.messages.get(5), m5, 'a flag already there leaves the message as it was');
  t.equal(list.rev.value, listRev, 'and its lists undrawn');
  s.apply([
    ev({ type: 'update_message_flags', op: 'add', flag: 'read', messages: [7], all: false }),
  ]);
  t.equal(s.rev.unread.value, unreadRev + 1, 'a message read elsewhere changes the counts');
  t.end();
});

t.test('a channel left, or archived: its unread messages counted nowhere but in mentions', (t) => {
  const { s } = state({
    subscriptions: [
      sub(10, 'general'),
      sub(11, 'noise', { is_muted: true }),
      sub(12, 'attic', { is_archived: true }),
    ],
    unread_msgs: {
      count: 6,
      streams: [
        { stream_id: 10, topic: 'lunch', unread_message_ids: [5, 6] },
        { stream_id: 11, topic: 'chatter', unread_message_ids: [7] },
        { stream_id: 12, topic: 'old', unread_message_ids: [9] },
      ],
      pms: [{ other_user_id: 2, unread_message_ids: [8] }],
      huddles: [],
      mentions: [6],
      old_unreads_missing: false,
    },
  });
  let c = s.unreadCounts();
  t.equal(c.total, 3, 'the archived channel is not in the total (general 2, a direct message)');
  t.equal(c.streams.has(12), false, 'nor has a count');
  t.equal(c.topics.has('12\u0000old'), false, 'nor its topic');

  s.apply([
    ev({ type: 'subscription', op: 'remove', subscriptions: [{ stream_id: 10, name: 'general' }] }),
  ]);
  c = s.unreadCounts();
  t.equal(c.total, 1, 'left: its unread messages leave the total (the title, All messages)');
  t.equal(c.streams.has(10), false, 'and the channel counts');
  t.equal(c.topics.has('10\u0000lunch'), false, 'and the topic counts (n passes them)');
  t.equal(c.mentions, 1, 'its mention still counts: the mentions view lists it');
  t.equal(s.unread.has(5), true, 'kept, for joining again');

  s.apply([ev({ type: 'subscription', op: 'add', subscriptions: [sub(10, 'general')] })]);
  c = s.unreadCounts();
  t.equal(c.total, 3, 'joined again: counted again');
  t.same(c.streams.get(10), { unmuted: 2, muted: 0 });
  t.end();
});

t.test('counts ask whether a topic is muted once per topic', (t) => {
  const { s } = state();
  s.apply([msgEvent(streamMsg(20)), msgEvent(streamMsg(21)), msgEvent(streamMsg(22))]);
  let asked = 0;
  const c = s.unread.counts({
    mutedTopic: (id, topic, key) => {
      asked++;
      return s.mutedTopic(id, topic, key);
    },
  });
  t.equal(c.topics.get('10\u0000lunch')?.count, 5, 'two from the snapshot, three new');
  t.equal(asked, 2, 'lunch and chatter');
  t.end();
});

t.test('before the people load, names come from messages, never "Unknown user"', (t) => {
  const { s } = state({ realm_users: undefined });
  t.equal(s.usersComplete, false);
  t.equal(s.userName(SELF), 'Me', 'oneself is known from the start');
  t.equal(s.userName(2), '…', 'a neutral mark for someone no message named yet');
  const usersRev = s.rev.users.value;
  s.ingest([
    streamMsg(30),
    streamMsg(31, {
      type: 'private',
      sender_id: SELF,
      sender_full_name: 'Me',
      display_recipient: [
        { id: SELF, email: 'me@x', full_name: 'Me' },
        { id: 3, email: 'o@x', full_name: 'Othello' },
      ],
    }),
  ]);
  t.equal(s.userName(2), 'Hamlet', "a sender's name");
  t.equal(s.userName(3), 'Othello', "a direct message's recipient");
  t.ok(s.rev.users.value > usersRev, 'the names drawn before are drawn again');
  s.apply([msgEvent(streamMsg(32, { sender_id: 4, sender_full_name: 'Iago' }))]);
  t.equal(s.userName(4), 'Iago', 'a new message names its sender too');
  s.setUsers([
    { user_id: 2, email: 'h@x', full_name: 'Hamlet Prince', is_bot: false },
    { user_id: 3, email: 'o@x', full_name: 'Othello', is_bot: false },
  ]);
  t.equal(s.userName(2), 'Hamlet Prince', 'the loaded people win');
  t.equal(s.userName(4), 'Unknown user', 'once loaded, someone missing is unknown');
  t.end();
});

t.test("a channel's topics fetched: the answer taken with what arrived meanwhile", (t) => {
  const { s } = state();
  s.askTopics(10);
  t.equal(s.topicsPending(10), true);
  // Arrives while the topics are on their way (the answer made before it).
  s.apply([msgEvent(streamMsg(20, { subject: 'fresh' })), msgEvent(streamMsg(21))]);
  t.equal(
    s.setTopics(10, [
      { name: 'lunch', max_id: 6 },
      { name: 'older', max_id: 3 },
    ]),
    true,
    'taken as it is',
  );
  t.same(
    s.topics.get(10)!.map((x) => [x.name, x.maxId]),
    [
      ['lunch', 21],
      ['fresh', 20],
      ['older', 3],
    ],
    'the new topic in, each at its newest message, newest first',
  );
  t.equal(s.topicsPending(10), false);

  // Messages moved while they are on their way: the answer may be older, ask again.
  s.askTopics(10);
  s.apply([
    ev({
      type: 'update_message',
      message_id: 21,
      message_ids: [21],
      user_id: 2,
      edit_timestamp: 100,
      stream_id: 10,
      orig_subject: 'lunch',
      subject: 'dinner',
      propagate_mode: 'change_one',
    }),
  ]);
  t.equal(s.setTopics(10, [{ name: 'lunch', max_id: 21 }]), false, 'to be asked again');
  t.ok(s.topics.has(10), 'shown until then');
  t.end();
});

t.test("a move or a deletion: the channel's topics kept shown while fetched again", (t) => {
  const { s } = state();
  t.ok(s.topicsToFetch(10), 'not held yet');
  s.askTopics(10);
  s.setTopics(10, [
    { name: 'lunch', max_id: 6 },
    { name: 'older', max_id: 3 },
  ]);
  t.notOk(s.topicsToFetch(10), 'held');
  const move = (o: Record<string, unknown>) =>
    ev({
      type: 'update_message',
      message_id: 6,
      message_ids: [6],
      user_id: 2,
      edit_timestamp: 100,
      stream_id: 10,
      ...o,
    });
  // Resolved (the whole topic renamed).
  s.apply([move({ orig_subject: 'lunch', subject: '✔ lunch', propagate_mode: 'change_all' })]);
  t.ok(s.topicsToFetch(10), 'to be fetched again');
  t.same(
    s.topics.get(10)!.map((x) => [x.name, x.maxId]),
    [
      ['✔ lunch', 6],
      ['older', 3],
    ],
    'the list held shown until the answer (no "Loading topics…"), the rename in it at once',
  );
  t.same(s.topicWent(10, 'LUNCH'), { streamId: 10, topic: '✔ lunch' }, 'where it went');
  t.equal(s.topicWent(10, 'older'), undefined, 'a topic not moved: none');
  s.askTopics(10);
  t.equal(
    s.setTopics(10, [
      { name: '✔ lunch', max_id: 7 },
      { name: 'older', max_id: 3 },
    ]),
    true,
  );
  t.notOk(s.topicsToFetch(10), 'up to date again');

  // Renamed after: followed on; back and forth (unresolved) ends where it is.
  s.apply([move({ orig_subject: '✔ lunch', subject: 'dinner', propagate_mode: 'change_all' })]);
  t.same(s.topicWent(10, 'lunch'), { streamId: 10, topic: 'dinner' }, 'after each move');
  s.apply([move({ orig_subject: 'dinner', subject: 'lunch', propagate_mode: 'change_all' })]);
  t.same(s.topicWent(10, 'lunch'), { streamId: 10, topic: 'lunch' }, 'back where it was');
  // One message moved: the topic stays, no move of it known; the list is fetched again.
  s.askTopics(10);
  s.setTopics(10, [{ name: 'older', max_id: 3 }]);
  s.apply([move({ orig_subject: 'older', subject: 'elsewhere', propagate_mode: 'change_one' })]);
  t.equal(s.topicWent(10, 'older'), undefined);
  t.ok(s.topicsToFetch(10));
  // To another channel: both channels' lists out of date (one held only).
  s.askTopics(10);
  s.setTopics(10, [{ name: 'older', max_id: 3 }]);
  s.apply([move({ new_stream_id: 11, propagate_mode: 'change_all' })]);
  t.ok(s.topicsToFetch(10));
  t.ok(s.topicsToFetch(11), 'not held: to be fetched anyway');
  t.notOk(s.topics.has(11));

  // A move while a fetch is on its way: the answer taken, still out of date, asked again.
  s.askTopics(10);
  s.apply([move({ orig_subject: 'older', subject: 'newer', propagate_mode: 'change_all' })]);
  t.equal(s.setTopics(10, [{ name: 'older', max_id: 3 }]), false);
  t.same(
    s.topics.get(10)!.map((x) => x.name),
    ['newer'],
    'the answer (from before the move) taken with the move applied',
  );
  t.ok(s.topicsToFetch(10), 'still to be fetched');
  t.end();
});

t.test('a move applied to the topics held at once: never the old name beside the new', (t) => {
  const { s } = state();
  // Held (a move to another channel names no topic: the app reads it from the message).
  s.apply([msgEvent(streamMsg(2, { subject: 'Dinner' }), ['read'])]);
  s.askTopics(10);
  s.setTopics(10, [
    { name: 'lunch', max_id: 6 },
    { name: 'older', max_id: 3 },
    { name: 'Dinner', max_id: 2 },
  ]);
  s.askTopics(11);
  s.setTopics(11, [{ name: 'chatter', max_id: 7 }]);
  const names = (id: number) => s.topics.get(id)!.map((x) => [x.name, x.maxId]);
  const move = (ids: number[], o: Record<string, unknown>) =>
    ev({
      type: 'update_message',
      message_id: ids[0],
      message_ids: ids,
      user_id: 2,
      edit_timestamp: 100,
      stream_id: 10,
      ...o,
    });
  // Renamed, then the notification bot's notice in the new topic (before any fetch answers).
  s.apply([
    move([5, 6], { orig_subject: 'lunch', subject: 'brunch', propagate_mode: 'change_all' }),
    msgEvent(streamMsg(30, { subject: 'brunch' })),
  ]);
  t.same(
    names(10),
    [
      ['brunch', 30],
      ['older', 3],
      ['Dinner', 2],
    ],
    'the new name in the old one’s place, the old gone',
  );
  // Renamed onto a topic there is (its name as it is spelled there), newest first.
  s.apply([move([3], { orig_subject: 'older', subject: 'dinner', propagate_mode: 'change_all' })]);
  t.same(
    names(10),
    [
      ['brunch', 30],
      ['Dinner', 3],
    ],
    'merged into the topic of that name',
  );
  // Only the later messages (a partial move): the topic stays; the new one shows at once.
  s.apply([
    move([30], { orig_subject: 'brunch', subject: 'later', propagate_mode: 'change_later' }),
  ]);
  t.same(
    names(10),
    [
      ['brunch', 30],
      ['later', 30],
      ['Dinner', 3],
    ],
    'both, the old one as it was until the fetch says what is left there',
  );
  // To another channel, keeping its name: out of this list, into the other's.
  s.apply([move([2, 3], { new_stream_id: 11, propagate_mode: 'change_all' })]);
  t.same(names(10), [
    ['brunch', 30],
    ['later', 30],
  ]);
  t.same(
    names(11),
    [
      ['chatter', 7],
      ['Dinner', 3],
    ],
    'in the channel where it went',
  );
  // One message alone: where it went at once too; what it left has no message held here, so
  // it stays as it was until the fetch says.
  s.apply([move([30], { orig_subject: 'later', subject: 'solo', propagate_mode: 'change_one' })]);
  t.same(names(10), [
    ['brunch', 30],
    ['later', 30],
    ['solo', 30],
  ]);
  t.end();
});

t.test('some of a topic moved away: it takes the place of its newest message left', (t) => {
  const { s } = state();
  // alpha 2, beta 3, alpha 4, beta 5, gamma 6: all held.
  s.apply(
    [
      [2, 'alpha'],
      [3, 'beta'],
      [4, 'alpha'],
      [5, 'beta'],
      [6, 'gamma'],
    ].map(([id, subject]) => msgEvent(streamMsg(id as number, { subject: subject as string }))),
  );
  s.askTopics(10);
  s.setTopics(10, [
    { name: 'gamma', max_id: 6 },
    { name: 'beta', max_id: 5 },
    { name: 'alpha', max_id: 4 },
  ]);
  const names = () => s.topics.get(10)!.map((x) => [x.name, x.maxId]);
  const move = (ids: number[], o: Record<string, unknown>) =>
    ev({
      type: 'update_message',
      message_id: ids[0],
      message_ids: ids,
      user_id: 2,
      edit_timestamp: 100,
      stream_id: 10,
      ...o,
    });
  // beta's newest (5) moved to a new topic alone: beta goes down to 3, the new one at 5.
  s.apply([move([5], { orig_subject: 'beta', subject: 'delta', propagate_mode: 'change_one' })]);
  t.same(
    names(),
    [
      ['gamma', 6],
      ['delta', 5],
      ['alpha', 4],
      ['beta', 3],
    ],
    'at once, not at the next fetch',
  );
  t.ok(s.topicsToFetch(10), 'still fetched again to settle it');
  // gamma's only message moved, to alpha (change_later): gamma held nothing else, so it stays
  // until the fetch; alpha comes up to 6.
  s.apply([move([6], { orig_subject: 'gamma', subject: 'alpha', propagate_mode: 'change_later' })]);
  t.same(names(), [
    ['gamma', 6],
    ['alpha', 6],
    ['delta', 5],
    ['beta', 3],
  ]);
  // An older message moved away (2 of alpha's 2, 4, 6): alpha keeps its place.
  s.apply([move([2], { orig_subject: 'alpha', subject: 'beta', propagate_mode: 'change_one' })]);
  t.same(names(), [
    ['gamma', 6],
    ['alpha', 6],
    ['delta', 5],
    ['beta', 3],
  ]);
  // To another channel, keeping the topic's name (read from the message held): alpha's 4 and 6
  // go to channel 11, alpha down to what it has left here (none held: as it was).
  s.askTopics(11);
  s.setTopics(11, [{ name: 'chatter', max_id: 1 }]);
  s.apply([move([4, 6], { new_stream_id: 11, propagate_mode: 'change_later' })]);
  t.same(
    s.topics.get(11)!.map((x) => [x.name, x.maxId]),
    [
      ['alpha', 6],
      ['chatter', 1],
    ],
  );
  t.same(names(), [
    ['gamma', 6],
    ['alpha', 6],
    ['delta', 5],
    ['beta', 3],
  ]);
  t.end();
});

t.test("user status: register's snapshot, events, the revision drawn again", (t) => {
  const { s } = state({ user_status: { '2': { status_text: 'Busy' } } });
  t.same(s.statuses.get(2), { text: 'Busy', emoji: null });
  const rev = s.rev.status.value;
  s.apply([
    ev({
      type: 'user_status',
      user_id: 3,
      status_text: 'Vacationing',
      emoji_name: 'palm_tree',
      emoji_code: '1f334',
      reaction_type: 'unicode_emoji',
    }),
  ]);
  t.same(s.statuses.get(3), {
    text: 'Vacationing',
    emoji: { name: 'palm_tree', code: '1f334', type: 'unicode_emoji' },
  });
  t.ok(s.rev.status.value > rev, 'drawn again');
  const after = s.rev.status.value;
  s.apply([ev({ type: 'user_status', user_id: 3, away: true })]);
  t.equal(s.rev.status.value, after, 'away alone changes no status');
  s.apply([ev({ type: 'user_status', user_id: 3, status_text: '', emoji_name: '' })]);
  t.same(s.statuses.get(3), { text: '', emoji: null }, 'cleared');
  t.end();
});

t.test("presence: register's snapshot, a presence event, a ping's answer, one's own", (t) => {
  const at = 1_700_000_000;
  const { s } = state({
    presences: {
      '2': { active_timestamp: at - 10, idle_timestamp: at - 10 },
      '3': { active_timestamp: at - 1000, idle_timestamp: at - 1000 },
    },
    server_timestamp: at,
    presence_last_update_id: 4,
    server_presence_offline_threshold_seconds: 140,
  });
  t.same([s.presenceOf(2), s.presenceOf(3)], ['active', 'offline']);
  t.equal(s.presence.lastUpdateId, 4, "the next ping's start");
  t.equal(s.presenceOf(SELF), 'active', 'one is active oneself');
  const rev = s.rev.presence.value;
  // Othello comes online: the event's legacy format, with the server's time.
  s.apply([
    ev({
      type: 'presence',
      user_id: 3,
      email: 'o@x',
      server_timestamp: at + 30,
      presence: { website: { client: 'website', status: 'active', timestamp: at + 30 } },
    }),
  ]);
  t.equal(s.presenceOf(3), 'active');
  t.ok(s.rev.presence.value > rev, 'drawn again');
  // A ping's answer past the threshold with nothing of Hamlet: offline; Othello's answer is new.
  s.setPresences({
    presences: { '3': { active_timestamp: at + 200, idle_timestamp: at + 200 } },
    server_timestamp: at + 200,
    presence_last_update_id: 9,
  });
  t.same([s.presenceOf(2), s.presenceOf(3)], ['offline', 'active']);
  t.equal(s.presence.lastUpdateId, 9);
  s.setPresences({});
  t.equal(s.presence.lastUpdateId, 9, 'a ping_only answer changes nothing');
  // Invisible mode: one shows offline to oneself too.
  s.apply([
    ev({ type: 'user_settings', op: 'update', property: 'presence_enabled', value: false }),
  ]);
  t.equal(s.presenceOf(SELF), 'offline');
  t.end();
});

t.test('presence: a deactivation ends the sessions, offline until news of them', (t) => {
  const at = 1_700_000_000;
  const { s } = state({
    presences: { '2': { active_timestamp: at - 10, idle_timestamp: at - 10 } },
    server_timestamp: at,
    presence_last_update_id: 4,
    server_presence_offline_threshold_seconds: 140,
  });
  t.equal(s.presenceOf(2), 'active');
  const rev = s.rev.presence.value;
  s.apply([ev({ type: 'realm_user', op: 'update', person: { user_id: 2, is_active: false } })]);
  t.equal(s.presenceOf(2), 'offline', 'offline at once (not at the threshold)');
  t.ok(s.rev.presence.value > rev, 'drawn again');
  // Reactivated soon after: still offline, also after an answer without him.
  s.apply([ev({ type: 'realm_user', op: 'update', person: { user_id: 2, is_active: true } })]);
  s.setPresences({ presences: {}, server_timestamp: at + 20, presence_last_update_id: 5 });
  t.equal(s.presenceOf(2), 'offline', 'not active again from the old report');
  t.equal(s.presence.lastActive(2), at - 10, 'his last activity is still known');
  // He comes back (the server's event): active.
  s.apply([
    ev({
      type: 'presence',
      user_id: 2,
      email: 'h@x',
      server_timestamp: at + 30,
      presence: { website: { client: 'website', status: 'active', timestamp: at + 30 } },
    }),
  ]);
  t.equal(s.presenceOf(2), 'active', 'active when he is');
  t.end();
});

t.test("presence turned off by the organization: everyone else offline, one's own as set", (t) => {
  const at = 1_700_000_000;
  const { s } = state({
    presences: { '2': { active_timestamp: at - 10, idle_timestamp: at - 10 } },
    server_timestamp: at,
    realm_presence_disabled: true,
  });
  // (The server sends no one's then; what a page had before the switch counts for nothing.)
  t.equal(s.presenceOf(2), 'offline', 'offline, as the reference draws them');
  t.equal(s.presenceOf(SELF), 'active', 'one is active oneself while one shares it');
  s.apply([ev({ type: 'realm', op: 'update', property: 'presence_disabled', value: false })]);
  t.equal(s.realm.presenceDisabled, false, 'the realm event turns it back on');
  t.equal(s.presenceOf(2), 'active');
  s.apply([ev({ type: 'realm', op: 'update', property: 'presence_disabled', value: true })]);
  t.equal(s.presenceOf(2), 'offline', 'and off again');
  t.end();
});

t.test("custom profile fields: register's list, its event, a value's realm_user update", (t) => {
  const field = { id: 4, name: 'Team', type: 1, hint: '', field_data: '', order: 0 };
  const { s } = state({ custom_profile_fields: [field] });
  t.same(s.profileFields, [field]);
  s.setUsers([
    {
      user_id: 2,
      email: 'h@x',
      full_name: 'Hamlet',
      is_bot: false,
      profile_data: { '4': { value: 'Infra' } },
    },
  ]);
  const rev = s.rev.users.value;
  s.apply([
    ev({
      type: 'realm_user',
      op: 'update',
      person: {
        user_id: 2,
        custom_profile_field: { id: 4, value: 'Web', rendered_value: '<p>Web</p>' },
      },
    }),
  ]);
  t.same(s.users.get(2)?.profile_data, { '4': { value: 'Web', rendered_value: '<p>Web</p>' } });
  t.notOk('custom_profile_field' in s.users.get(2)!, 'not kept on the user as it came');
  t.equal(s.users.get(2)?.full_name, 'Hamlet', 'the rest of the user as it was');
  t.ok(s.rev.users.value > rev, 'drawn again');
  s.apply([
    ev({
      type: 'realm_user',
      op: 'update',
      person: { user_id: SELF, custom_profile_field: { id: 4, value: 'Ops' } },
    }),
  ]);
  t.same(s.self.profile_data, { '4': { value: 'Ops' } }, "one's own, on self too");
  s.apply([
    ev({
      type: 'realm_user',
      op: 'update',
      person: { user_id: 2, custom_profile_field: { id: 4, value: null } },
    }),
  ]);
  t.same(s.users.get(2)?.profile_data, {}, 'removed');
  const next = s.rev.users.value;
  const fields = [
    { ...field, order: 1 },
    { ...field, id: 5, name: 'Editor', type: 3, order: 0 },
  ];
  s.apply([ev({ type: 'custom_profile_fields', fields })]);
  t.same(s.profileFields, fields, 'the whole list, as the event gives it');
  t.ok(s.rev.users.value > next, 'the cards and panels drawn again');
  t.end();
});
