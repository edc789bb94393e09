/**
 * web/state/muting.ts and the combined feed (All messages): which topics are muted (a topic's
 * visibility policy and its channel's is_muted, as the reference's
 * user_topics.is_topic_visible_in_home), and how ChatState keeps the feed without them (the
 * server is asked for `in:home`, loader.test.ts): arrivals of a muted topic stay out of it while
 * they join the topic's own view; muting drops what the feed shows at once; unmuting makes it
 * stale (fetched again: what muting kept out is only on the server). A channel's view leaves
 * out its topics muted as such (the reference's Filter.excludes_muted_topics with
 * user_topics.is_topic_muted), a muted channel's other topics shown there; leaving a muted
 * channel keeps its muting.
 */
import t from 'tap';
import type {
  Message,
  RegisterResponse,
  ServerEvent,
  Subscription,
} from '../../src/client/types.js';
import { ChatState } from '../../web/state/chat.js';
import {
  followChoice,
  mutedBy,
  muteChoice,
  policyChoices,
  policyShown,
  TOPIC,
  topicMuted,
  unmutePolicy,
} from '../../web/state/muting.js';
import {
  ALL,
  apiNarrow,
  channelNarrow,
  dmNarrow,
  hidesMutedTopics,
  hidesMutedTopicsWhenDrawn,
  isNarrow,
  MAX_NARROW_TERMS,
  matches,
  searchNarrow,
  senderNarrow,
  topicNarrow,
  type Narrow,
} from '../../web/state/narrow.js';
import { unreadIn } from '../../web/state/unread.js';
import { FakeTimers } from '../helpers/fake-timers.js';

t.test("the recipient bar's visibility menu: its choices by the channel's muting", (t) => {
  const { INHERIT, MUTED, UNMUTED, FOLLOWED } = TOPIC;
  const menu = (policy: number, channelMuted: boolean) =>
    policyChoices(policy, channelMuted).map((c) => `${c.checked ? '*' : ''}${c.label}`);
  // As the reference's popover: Unmute only in a muted channel, or where the topic is unmuted.
  t.same(menu(INHERIT, false), ['Mute', '*Default', 'Follow'], 'a channel not muted');
  t.same(menu(MUTED, false), ['*Mute', 'Default', 'Follow'], 'a muted topic');
  t.same(menu(FOLLOWED, false), ['Mute', 'Default', '*Follow'], 'a followed topic');
  t.same(
    menu(UNMUTED, false),
    ['Mute', 'Default', '*Unmute', 'Follow'],
    'unmuted, the channel not',
  );
  t.same(menu(INHERIT, true), ['Mute', '*Default', 'Unmute', 'Follow'], 'a muted channel');
  t.same(menu(UNMUTED, true), ['Mute', 'Default', '*Unmute', 'Follow'], 'unmuted in a muted one');
  t.same(
    policyChoices(INHERIT, true).map((c) => c.policy),
    [MUTED, INHERIT, UNMUTED, FOLLOWED],
    'each sets its policy',
  );
  t.end();
});

t.test('what the recipient bar shows of a policy', (t) => {
  const { INHERIT, MUTED, UNMUTED, FOLLOWED } = TOPIC;
  t.same(
    [INHERIT, MUTED, UNMUTED, FOLLOWED].map((p) => [policyShown(p).kind, policyShown(p).always]),
    [
      ['inherit', false],
      ['muted', true],
      ['unmuted', true],
      ['followed', true],
    ],
    'the default only on hover or focus; a choice the user made always',
  );
  t.equal(policyShown(FOLLOWED).label, 'You follow this topic.');
  t.end();
});

t.test("the sidebar topic menu's Follow and Mute items", (t) => {
  const { INHERIT, MUTED, UNMUTED, FOLLOWED } = TOPIC;
  t.same(followChoice(INHERIT, false), { policy: FOLLOWED, label: 'Follow topic' });
  t.same(followChoice(FOLLOWED, false), { policy: INHERIT, label: 'Unfollow topic' });
  t.same(
    followChoice(FOLLOWED, true),
    { policy: UNMUTED, label: 'Unfollow topic' },
    'unfollowed in a muted channel: unmuted, not silent',
  );
  t.same(muteChoice(INHERIT, false), { policy: MUTED, label: 'Mute topic' });
  t.same(muteChoice(MUTED, false), { policy: INHERIT, label: 'Unmute topic' });
  t.same(
    muteChoice(INHERIT, true),
    { policy: UNMUTED, label: 'Unmute topic' },
    "muted by its channel: unmuting sets 'unmuted'",
  );
  t.same(muteChoice(FOLLOWED, true), { policy: MUTED, label: 'Mute topic' }, 'followed: not muted');
  t.end();
});

t.test('which topics are muted: the policy, then the channel', (t) => {
  const { INHERIT, MUTED, UNMUTED, FOLLOWED } = TOPIC;
  // [policy, channel muted, topic muted]
  const table: [number, boolean, boolean][] = [
    [INHERIT, false, false],
    [MUTED, false, true],
    [UNMUTED, false, false],
    [FOLLOWED, false, false],
    [INHERIT, true, true],
    [MUTED, true, true],
    [UNMUTED, true, false],
    [FOLLOWED, true, false],
  ];
  for (const [policy, channelMuted, muted] of table)
    t.equal(
      topicMuted(policy, channelMuted),
      muted,
      `policy ${policy}, channel muted ${channelMuted}`,
    );
  t.end();
});

const OPEN = 1;
const QUIET = 2; // a muted channel

function msg(id: number, streamId: number | null, topic = 'lunch'): Message {
  const base = {
    id,
    sender_id: 2,
    sender_full_name: 'Iago',
    sender_email: '',
    timestamp: id,
    content: `<p>${id}</p>`,
    reactions: [],
  };
  return streamId === null
    ? {
        ...base,
        type: 'private',
        subject: '',
        display_recipient: [
          { id: 1, email: '', full_name: 'Hamlet' },
          { id: 2, email: '', full_name: 'Iago' },
        ],
      }
    : { ...base, type: 'stream', stream_id: streamId, subject: topic, display_recipient: 'c' };
}

function sub(stream_id: number, is_muted: boolean): Subscription {
  return { stream_id, name: `c${stream_id}`, is_muted } as Subscription;
}

function setup(userTopics: { stream_id: number; topic_name: string; visibility_policy: number }[]) {
  const clock = new FakeTimers();
  const reg = {
    queue_id: 'q',
    last_event_id: -1,
    user_id: 1,
    email: '',
    full_name: 'Hamlet',
    subscriptions: [sub(OPEN, false), sub(QUIET, true)],
    user_topics: userTopics.map((u) => ({ ...u, last_updated: 0 })),
  } as RegisterResponse;
  const s = new ChatState(reg, { now: clock.now, timers: clock.timers });
  let event = 0;
  const apply = (e: Record<string, unknown>) =>
    s.apply([{ id: event++, ...e } as unknown as ServerEvent]);
  const arrive = (m: Message) => apply({ type: 'message', message: m, flags: [] });
  const policy = (stream_id: number, topic_name: string, visibility_policy: number) =>
    apply({ type: 'user_topic', stream_id, topic_name, last_updated: 1, visibility_policy });
  const muteChannel = (stream_id: number, value: boolean) =>
    apply({ type: 'subscription', op: 'update', stream_id, property: 'is_muted', value });
  const leave = (stream_id: number) =>
    apply({ type: 'subscription', op: 'remove', subscriptions: [{ stream_id, name: '' }] });
  const join = (stream_id: number, muted: boolean) =>
    apply({ type: 'subscription', op: 'add', subscriptions: [sub(stream_id, muted)] });
  /** A list as a fetch left it: loaded, reaching the newest, with these messages. */
  const loaded = (n: Narrow, messages: Message[]) => {
    const l = s.list(n);
    s.ingest(messages, n);
    l.setInitial(
      messages.map((m) => m.id),
      true,
      true,
      null,
    );
    return l;
  };
  return { s, arrive, policy, muteChannel, leave, join, loaded };
}

t.test('the feed matches what is not muted; other views match regardless', (t) => {
  const { s } = setup([
    { stream_id: OPEN, topic_name: 'Noise', visibility_policy: TOPIC.MUTED },
    { stream_id: QUIET, topic_name: 'kept', visibility_policy: TOPIC.UNMUTED },
    { stream_id: QUIET, topic_name: 'watched', visibility_policy: TOPIC.FOLLOWED },
  ]);
  const ctx = s.matchContext([]);
  const inFeed = (m: Message) => matches(ALL, m, ctx);
  t.equal(inFeed(msg(1, OPEN)), true, 'a topic of an open channel');
  t.equal(inFeed(msg(2, OPEN, 'noise')), false, 'its muted topic (whatever its case)');
  t.equal(inFeed(msg(3, QUIET)), false, 'a topic of a muted channel');
  t.equal(inFeed(msg(4, QUIET, 'kept')), true, 'its unmuted topic');
  t.equal(inFeed(msg(5, QUIET, 'watched')), true, 'its followed topic');
  t.equal(inFeed(msg(6, null)), true, 'a direct message');
  const home: Narrow = { terms: [{ operator: 'in', operand: 'home', negated: false }], near: null };
  t.equal(matches(home, msg(3, QUIET), ctx), false, 'in:home: the same rule');
  t.equal(matches(home, msg(4, QUIET, 'kept'), ctx), true);
  t.equal(matches(topicNarrow(OPEN, 'noise'), msg(2, OPEN, 'noise'), ctx), true, 'its topic');
  t.equal(matches(channelNarrow(QUIET), msg(3, QUIET), ctx), true, 'its channel');
  t.equal(
    matches(searchNarrow(ALL, 'x'), msg(2, OPEN, 'noise'), ctx),
    undefined,
    'a search from the feed: the server decides (muted messages are found)',
  );
  t.end();
});

t.test('a message of a muted topic or channel does not join the feed, but its views', (t) => {
  const { arrive, loaded } = setup([
    { stream_id: OPEN, topic_name: 'noise', visibility_policy: TOPIC.MUTED },
    { stream_id: QUIET, topic_name: 'kept', visibility_policy: TOPIC.UNMUTED },
  ]);
  const feed = loaded(ALL, [msg(1, OPEN)]);
  const topic = loaded(topicNarrow(OPEN, 'noise'), []);
  const channel = loaded(channelNarrow(QUIET), []);
  arrive(msg(2, OPEN, 'noise'));
  arrive(msg(3, QUIET));
  arrive(msg(4, QUIET, 'kept'));
  arrive(msg(5, null));
  t.same(feed.ids, [1, 4, 5], 'the feed: the unmuted topic of the muted channel and the DM');
  t.same(topic.ids, [2], 'the muted topic has its message');
  t.same(channel.ids, [3, 4], 'the muted channel has both of its');
  t.end();
});

t.test('muting drops from the feed at once; unmuting makes it stale', (t) => {
  const { s, arrive, policy, muteChannel, loaded } = setup([]);
  const feed = loaded(ALL, [msg(1, OPEN), msg(2, OPEN, 'other'), msg(3, null)]);
  const topic = loaded(topicNarrow(OPEN, 'lunch'), [msg(1, OPEN)]);
  const mark = s.mutingMark();

  policy(OPEN, 'Lunch', TOPIC.MUTED);
  t.same(feed.ids, [2, 3], 'the muted topic left the feed');
  t.equal(feed.stale, false, 'nothing to fetch: the feed holds the rest');
  t.same(topic.ids, [1], 'its own view keeps it');
  t.equal(topic.stale, false);
  t.ok(s.mutingChangedSince(mark), 'a fetch on its way is told');
  arrive(msg(4, OPEN, 'lunch'));
  t.same(feed.ids, [2, 3], 'a new message to it stays out of the feed');
  t.same(topic.ids, [1, 4], 'and joins its view');

  policy(OPEN, 'lunch', TOPIC.INHERIT);
  t.equal(feed.stale, true, 'unmuted: fetched again (its messages are only on the server)');
  t.equal(topic.stale, false, 'its view holds them already');

  // The same for a channel, and a topic unmuted in a muted one.
  const again = loaded(ALL, [msg(1, OPEN), msg(2, OPEN, 'other'), msg(3, null), msg(4, OPEN)]);
  t.equal(again, feed, 'one list for the feed');
  muteChannel(OPEN, true);
  t.same(feed.ids, [3], 'the muted channel left the feed');
  t.equal(feed.stale, false);
  policy(OPEN, 'other', TOPIC.UNMUTED);
  t.equal(feed.stale, true, 'a topic unmuted in it: fetched again');
  feed.setInitial([2, 3], true, true, null);
  policy(OPEN, 'other', TOPIC.FOLLOWED);
  t.equal(feed.stale, false, 'unmuted to followed: still shown, nothing to fetch');
  t.same(feed.ids, [2, 3]);
  muteChannel(OPEN, false);
  t.equal(feed.stale, true, 'the channel unmuted: fetched again');
  t.end();
});

t.test('all the feed held muted: fetched again (an empty run has no end to page from)', (t) => {
  const { policy, loaded } = setup([]);
  const feed = loaded(ALL, [msg(1, OPEN), msg(2, OPEN)]);
  feed.foundOldest = false; // the server has older messages
  policy(OPEN, 'lunch', TOPIC.MUTED);
  t.same(feed.ids, [], 'all of it muted');
  t.equal(feed.stale, true, 'fetched again: older messages may not be muted');
  const whole = setup([]);
  const known = whole.loaded(ALL, [msg(3, OPEN), msg(4, OPEN)]);
  whole.muteChannel(OPEN, true);
  t.same(known.ids, [], 'all of it muted');
  t.equal(known.stale, false, 'the run was the whole feed: nothing more to fetch');
  t.end();
});

t.test('unread counts: the feed leaves muted topics out of its total', (t) => {
  const { s, arrive, policy } = setup([]);
  arrive(msg(1, OPEN));
  arrive(msg(2, QUIET));
  arrive(msg(3, null));
  t.equal(s.unreadCounts().total, 2, 'the muted channel is not counted');
  policy(QUIET, 'lunch', TOPIC.FOLLOWED);
  t.equal(s.unreadCounts().total, 3, 'its followed topic is');
  policy(OPEN, 'lunch', TOPIC.MUTED);
  t.equal(s.unreadCounts().total, 2, 'a muted topic is not');
  t.end();
});

t.test("which views leave out muted topics as a channel's does", (t) => {
  const table: [string, Narrow, boolean][] = [
    ['a channel', channelNarrow(OPEN), true],
    [
      'a channel, unread',
      {
        ...channelNarrow(OPEN),
        terms: [...channelNarrow(OPEN).terms, ...isNarrow('unread').terms],
      },
      true,
    ],
    ['a topic', topicNarrow(OPEN, 'x'), false],
    ['a search in a channel', searchNarrow(channelNarrow(OPEN), 'x'), false],
    ['the feed (its own rule, in:home)', ALL, false],
    ['starred', isNarrow('starred'), false],
    ['mentions', isNarrow('mentioned'), false],
    ['direct messages', isNarrow('dm'), false],
    ['a conversation', dmNarrow([2], 1), false],
    ['a sender', senderNarrow(2), false],
  ];
  for (const [what, n, hides] of table) t.equal(hidesMutedTopics(n), hides, what);
  t.end();
});

t.test("a channel's view is asked without its muted topics, by their names", (t) => {
  const { s } = setup([
    { stream_id: OPEN, topic_name: 'Noise', visibility_policy: TOPIC.MUTED },
    { stream_id: OPEN, topic_name: 'Zed', visibility_policy: TOPIC.MUTED },
    { stream_id: OPEN, topic_name: 'watched', visibility_policy: TOPIC.FOLLOWED },
    { stream_id: QUIET, topic_name: 'hush', visibility_policy: TOPIC.MUTED },
    { stream_id: QUIET, topic_name: 'kept', visibility_policy: TOPIC.UNMUTED },
  ]);
  const asked = (n: Narrow) => apiNarrow(n, s);
  t.same(
    asked(channelNarrow(OPEN)),
    [
      { operator: 'channel', operand: OPEN },
      { operator: 'is', operand: 'muted', negated: true },
    ],
    'a channel not muted: -is:muted (there, its topics muted as such)',
  );
  t.same(
    asked(channelNarrow(QUIET)),
    [
      { operator: 'channel', operand: QUIET },
      { operator: 'topic', operand: 'hush', negated: true },
    ],
    'a muted channel: its topic muted as such, by name (-is:muted would leave out all but kept)',
  );
  t.same(asked(topicNarrow(OPEN, 'Noise')), [
    { operator: 'channel', operand: OPEN },
    { operator: 'topic', operand: 'Noise' },
  ]);
  t.same(asked(ALL), [{ operator: 'in', operand: 'home' }]);
  t.same(apiNarrow(channelNarrow(OPEN)), [{ operator: 'channel', operand: OPEN }], 'no muting');
  // More muted topics than a narrow may hold (the server refuses more than 100 terms).
  const many = Array.from({ length: 150 }, (_, i) => `t${1000 + i}`);
  const big = apiNarrow(channelNarrow(QUIET), {
    channelMuted: () => true,
    mutedTopicsIn: () => many,
  });
  t.equal(big.length, MAX_NARROW_TERMS, 'as many as a narrow may hold');
  t.same(big[1], { operator: 'topic', operand: 't1000', negated: true });
  t.end();
});

t.test('which views leave out muted topics as they draw them (across channels)', (t) => {
  const unreadOf = (n: Narrow): Narrow => ({
    ...n,
    terms: [...n.terms, ...isNarrow('unread').terms],
  });
  const table: [string, Narrow, boolean][] = [
    ['a sender', senderNarrow(2), true],
    ['unread', isNarrow('unread'), true],
    ['mentions (whose messages all mention the user: none hidden)', isNarrow('mentioned'), true],
    ['a sender, unread', unreadOf(senderNarrow(2)), true],
    ['a channel (asked without them: hidesMutedTopics)', channelNarrow(OPEN), false],
    ['a channel, unread (likewise)', unreadOf(channelNarrow(OPEN)), false],
    ['a topic', topicNarrow(OPEN, 'x'), false],
    ['a topic, unread', unreadOf(topicNarrow(OPEN, 'x')), false],
    ['a search', searchNarrow(ALL, 'x'), false],
    ["a sender's search", searchNarrow(senderNarrow(2), 'x'), false],
    ['the feed (in:home)', ALL, false],
    ['starred', isNarrow('starred'), false],
    ['direct messages', isNarrow('dm'), false],
    ['a conversation', dmNarrow([2], 1), false],
    [
      'is:muted',
      { terms: [{ operator: 'is', operand: 'muted', negated: false }], near: null },
      false,
    ],
    [
      'one message',
      { terms: [{ operator: 'id', operand: '5', negated: false }], near: null },
      false,
    ],
  ];
  for (const [what, n, hides] of table) t.equal(hidesMutedTopicsWhenDrawn(n), hides, what);
  t.end();
});

t.test("a sender's view draws without topics muted as such, but mentions of the user", (t) => {
  const { s, policy, arrive, loaded } = setup([
    { stream_id: OPEN, topic_name: 'noise', visibility_policy: TOPIC.MUTED },
    { stream_id: QUIET, topic_name: 'kept', visibility_policy: TOPIC.UNMUTED },
  ]);
  const mention = { ...msg(5, OPEN, 'Noise'), flags: ['mentioned'] };
  const all = [msg(1, OPEN), msg(2, OPEN, 'noise'), msg(3, QUIET), msg(4, null), mention];
  const sender = loaded(senderNarrow(2), all);
  t.same(sender.ids, [1, 2, 3, 4, 5], 'the list holds them all (its paging is by its ids)');
  t.same(
    s.drawnIds(sender),
    [1, 3, 4, 5],
    "drawn: not the muted topic's, but a muted channel's other topics, a DM, a mention",
  );
  const topic = loaded(topicNarrow(OPEN, 'noise'), [msg(2, OPEN, 'noise')]);
  t.same(s.drawnIds(topic), [2], 'its own topic shows it');
  arrive(msg(6, OPEN, 'noise'));
  t.same(s.drawnIds(sender), [1, 3, 4, 5], 'a new message there: not drawn either');
  policy(OPEN, 'noise', TOPIC.INHERIT);
  t.same(s.drawnIds(sender), [1, 2, 3, 4, 5, 6], 'unmuted: drawn at once, nothing to fetch');
  policy(OPEN, 'lunch', TOPIC.MUTED);
  t.same(s.drawnIds(sender), [2, 3, 4, 5, 6], 'another topic muted: its message gone at once');
  t.end();
});

t.test("a channel's view matches, and is joined by, what is not muted as such", (t) => {
  const { s, arrive, loaded } = setup([
    { stream_id: OPEN, topic_name: 'noise', visibility_policy: TOPIC.MUTED },
    { stream_id: QUIET, topic_name: 'hush', visibility_policy: TOPIC.MUTED },
  ]);
  const ctx = s.matchContext([]);
  t.equal(matches(channelNarrow(OPEN), msg(1, OPEN, 'Noise'), ctx), false, 'its muted topic');
  t.equal(matches(channelNarrow(OPEN), msg(2, OPEN), ctx), true, 'another topic');
  t.equal(matches(channelNarrow(QUIET), msg(3, QUIET), ctx), true, 'a muted channel: its topic');
  t.equal(matches(channelNarrow(QUIET), msg(4, QUIET, 'hush'), ctx), false, 'but one muted');
  const channel = loaded(channelNarrow(OPEN), [msg(2, OPEN)]);
  const topic = loaded(topicNarrow(OPEN, 'noise'), []);
  arrive(msg(5, OPEN, 'noise'));
  arrive(msg(6, OPEN, 'other'));
  t.same(channel.ids, [2, 6], "the muted topic's new message stays out of the channel's view");
  t.same(topic.ids, [5], "and joins the topic's");
  t.end();
});

t.test("a channel's view follows its topics' muting, not the channel's", (t) => {
  const { s, policy, muteChannel, loaded } = setup([]);
  const channel = loaded(channelNarrow(OPEN), [msg(1, OPEN), msg(2, OPEN, 'other')]);
  const quiet = loaded(channelNarrow(QUIET), [msg(3, QUIET)]);
  const mark = s.mutingMark();
  policy(OPEN, 'LUNCH', TOPIC.MUTED);
  t.same(channel.ids, [2], "the topic muted left its channel's view at once");
  t.equal(channel.stale, false);
  t.ok(s.mutingChangedSince(mark), 'a fetch on its way is asked again');
  t.same(quiet.ids, [3], "another channel's view is left alone");
  policy(OPEN, 'lunch', TOPIC.INHERIT);
  t.equal(channel.stale, true, 'unmuted: fetched again');
  t.equal(quiet.stale, false);
  channel.setInitial([1, 2], true, true, null);
  muteChannel(OPEN, true);
  t.same(channel.ids, [1, 2], 'the channel muted: its own view shows it all');
  t.equal(channel.stale, false);
  muteChannel(OPEN, false);
  t.equal(channel.stale, false, 'unmuted: nothing to fetch');
  policy(QUIET, 'lunch', TOPIC.UNMUTED);
  t.equal(quiet.stale, false, 'unmuting in a muted channel: its view had the topic already');
  t.end();
});

t.test("a channel's unread past the window leave its muted topics out", (t) => {
  const { s } = setup([{ stream_id: OPEN, topic_name: 'noise', visibility_policy: TOPIC.MUTED }]);
  const inChannel = unreadIn(
    channelNarrow(QUIET),
    (id, topic) => s.mutedTopic(id, topic),
    (id, topic) => s.topicMutedItself(id, topic),
  )!;
  const inOpen = unreadIn(
    channelNarrow(OPEN),
    (id, topic) => s.mutedTopic(id, topic),
    (id, topic) => s.topicMutedItself(id, topic),
  )!;
  const where = (streamId: number, topic: string) =>
    ({ kind: 'stream', streamId, topic }) as Parameters<typeof inOpen>[0];
  t.equal(inOpen(where(OPEN, 'Noise'), false), false, 'its muted topic');
  t.equal(inOpen(where(OPEN, 'lunch'), false), true);
  t.equal(inChannel(where(QUIET, 'lunch'), false), true, "a muted channel's own view counts it");
  t.end();
});

t.test("leaving a muted channel keeps its muting; joining again brings the server's", (t) => {
  const { s, leave, join, loaded } = setup([]);
  const feed = loaded(ALL, [msg(1, OPEN), msg(2, null)]);
  leave(QUIET);
  t.equal(s.mutedTopic(QUIET, 'lunch'), true, 'left, still muted (as the server keeps it)');
  t.equal(feed.stale, false, 'the feed stays as it is');
  join(QUIET, true);
  t.equal(feed.stale, false, 'joined again, muted as before: nothing changes');
  leave(QUIET);
  join(QUIET, false);
  t.equal(s.mutedTopic(QUIET, 'lunch'), false);
  t.equal(feed.stale, true, 'joined again unmuted (unmuted meanwhile): the feed is fetched again');
  feed.setInitial([1, 2], true, true, null);
  leave(OPEN);
  t.same(feed.ids, [1, 2], 'an open channel left: its messages stay');
  join(OPEN, true);
  t.same(feed.ids, [2], 'joined again as muted (muted elsewhere meanwhile): they leave the feed');
  t.end();
});

t.test('what mutes a topic one sends to, and what unmutes it (the notice)', (t) => {
  const { INHERIT, MUTED, UNMUTED, FOLLOWED } = TOPIC;
  // [policy, channel muted, muted by]
  const table: [number, boolean, 'channel' | 'topic' | null][] = [
    [INHERIT, false, null],
    [MUTED, false, 'topic'],
    [UNMUTED, false, null],
    [FOLLOWED, false, null],
    [INHERIT, true, 'channel'],
    [MUTED, true, 'channel'],
    [UNMUTED, true, null],
    [FOLLOWED, true, null],
  ];
  for (const [policy, channelMuted, by] of table) {
    t.equal(mutedBy(policy, channelMuted), by, `policy ${policy}, channel muted ${channelMuted}`);
    // Whatever mutes it, the policy "Unmute topic" sets shows it in the feed.
    if (by) t.equal(topicMuted(unmutePolicy(channelMuted), channelMuted), false, 'unmuted so');
  }
  const { s } = setup([{ stream_id: OPEN, topic_name: 'noise', visibility_policy: MUTED }]);
  t.equal(s.mutedBy(OPEN, 'Noise'), 'topic');
  t.equal(s.mutedBy(QUIET, 'lunch'), 'channel');
  t.equal(s.mutedBy(OPEN, 'lunch'), null);
  t.end();
});
