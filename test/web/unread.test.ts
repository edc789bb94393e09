/**
 * web/state/unread.ts: which unread messages belong to a narrow (unreadIn), for the narrows the
 * bookkeeping can tell; the message list counts with it the unread messages it has not fetched.
 * Where `n` goes (nextUnread), muted topics and channels passed over.
 */
import t from 'tap';
import {
  ALL,
  channelNarrow,
  dmNarrow,
  isNarrow,
  searchNarrow,
  topicNarrow,
  type Narrow,
} from '../../web/state/narrow.js';
import { TOPIC, topicMuted } from '../../web/state/muting.js';
import { nextUnread, Unread, unreadIn, type UnreadWhere } from '../../web/state/unread.js';

const SELF = 5;
// Unread: 10-12 in #9 > Logo (11 mentions the user), 13 in #9 > colours, 20 in #3 > lunch,
// 30 from user 6, 31 in the group with 6 and 7.
const unread = Unread.fromRegister(SELF, {
  count: 7,
  streams: [
    { stream_id: 9, topic: 'Logo', unread_message_ids: [10, 11, 12] },
    { stream_id: 9, topic: 'colours', unread_message_ids: [13] },
    { stream_id: 3, topic: 'lunch', unread_message_ids: [20] },
  ],
  pms: [{ other_user_id: 6, unread_message_ids: [30] }],
  huddles: [{ user_ids_string: '5,6,7', unread_message_ids: [31] }],
  mentions: [11],
  old_unreads_missing: false,
});

const noneMuted = () => false;

const idsIn = (n: Narrow, mutedTopic: (streamId: number, topic: string) => boolean = noneMuted) => {
  const pred = unreadIn(n, mutedTopic);
  return pred ? unread.ids(pred) : null;
};

t.test('the narrows the bookkeeping can tell', (t) => {
  t.same(idsIn(ALL), [10, 11, 12, 13, 20, 30, 31], 'all messages');
  t.same(idsIn(isNarrow('unread')), [10, 11, 12, 13, 20, 30, 31], 'is:unread');
  t.same(idsIn(channelNarrow(9)), [10, 11, 12, 13], 'a channel');
  t.same(idsIn(topicNarrow(9, 'logo')), [10, 11, 12], 'a topic, whatever its case');
  t.same(idsIn(isNarrow('dm')), [30, 31], 'direct messages');
  t.same(idsIn(dmNarrow([6], SELF)), [30], 'a conversation');
  t.same(idsIn(dmNarrow([7, 6, SELF], SELF)), [31], 'a group conversation');
  t.same(idsIn(isNarrow('mentioned')), [11], 'mentions');
  t.same(
    idsIn({ terms: [...channelNarrow(9).terms, ...isNarrow('mentioned').terms], near: null }),
    [11],
    'terms together',
  );
  t.end();
});

t.test('all messages leave out muted topics, as the feed does; their views do not', (t) => {
  // #9 > Logo muted (by its policy or its channel: mutedTopic decides, muting.ts).
  const muted = (streamId: number, topic: string) => streamId === 9 && topic === 'Logo';
  t.same(idsIn(ALL, muted), [13, 20, 30, 31], 'all messages: not the muted topic');
  t.same(
    idsIn({ terms: [{ operator: 'in', operand: 'home', negated: false }], near: null }, muted),
    [13, 20, 30, 31],
    'in:home the same',
  );
  t.same(idsIn(channelNarrow(9), muted), [10, 11, 12, 13], 'its channel still counts it');
  t.same(idsIn(topicNarrow(9, 'Logo'), muted), [10, 11, 12], 'and so does the topic');
  t.end();
});

t.test('the others: null (only a fetch tells)', (t) => {
  t.equal(unreadIn(searchNarrow(channelNarrow(9), 'logo'), noneMuted), null, 'a search');
  t.equal(unreadIn(isNarrow('starred'), noneMuted), null, 'starred');
  t.equal(
    unreadIn(
      { terms: [{ operator: 'channel', operand: '9', negated: true }], near: null },
      noneMuted,
    ),
    null,
    'a negated term',
  );
  t.end();
});

t.test('a personal mention counts in a muted topic or channel; @all there does not', (t) => {
  // The reference's unread.update_message_for_mention: an unread mention counts when it is
  // unmuted, or when it names the user (or a group of theirs: the `mentioned` flag) wherever it
  // is. Muting a channel or topic must not hide that someone called for you.
  const u = new Unread(SELF);
  const msg = (id: number, stream_id: number, subject: string) =>
    ({ id, type: 'stream', stream_id, subject }) as Parameters<Unread['addMessage']>[0];
  u.addMessage(msg(40, 9, 'muted topic'), ['mentioned']);
  u.addMessage(msg(41, 9, 'muted topic'), ['stream_wildcard_mentioned']);
  u.addMessage(msg(42, 9, 'muted topic'), []);
  u.addMessage(msg(43, 3, 'open'), ['topic_wildcard_mentioned']);
  const muted = (streamId: number) => streamId === 9;
  const c = u.counts({ mutedTopic: muted });
  t.equal(c.mentions, 2, 'the personal mention in the muted topic and @topic in an open one');
  t.equal(c.total, 1, 'the muted topic stays out of the total');
  t.same([...c.mutedMentions], [9], 'a channel whose muted topic names the user');
  t.same(
    u.ids((_w, mentioned) => mentioned),
    [40, 41, 43],
    'the mentions view has all three',
  );

  // Register's `mentions` leaves out wildcard mentions in muted conversations (the reference's
  // get_raw_unread_data), so what it lists counts; an edit's flags decide again.
  const r = Unread.fromRegister(SELF, {
    count: 1,
    streams: [{ stream_id: 9, topic: 'muted topic', unread_message_ids: [50] }],
    pms: [],
    huddles: [],
    mentions: [50],
    old_unreads_missing: false,
  });
  t.equal(r.counts({ mutedTopic: muted }).mentions, 1, "register's mention counts");
  t.same(
    [...r.counts({ mutedTopic: muted }).mutedMentions],
    [9],
    "the channel's muted count shows for it (the sidebar)",
  );
  r.setMentioned(50, ['wildcard_mentioned']);
  t.equal(r.counts({ mutedTopic: muted }).mentions, 0, 'edited to @all only: no longer');
  t.equal(r.counts({ mutedTopic: muted }).mutedMentions.size, 0, '…nor the muted count');
  r.setMentioned(50, ['mentioned']);
  t.equal(r.counts({ mutedTopic: muted }).mentions, 1, 'edited to name the user: again');
  // Marked unread again (the event's message_details say `mentioned`): as the reference, direct.
  r.markRead([50]);
  r.markUnread(50, { kind: 'stream', streamId: 9, topic: 'muted topic' }, true);
  t.equal(r.counts({ mutedTopic: muted }).mentions, 1, 'marked unread again: counts');
  t.end();
});

t.test('n: the next unread topic, muted topics and channels passed over', (t) => {
  // In the sidebar's order (newest first): #3 general: lunch, quiet (muted), zebra. #9 design,
  // muted: alpha, beta (muted by the channel), kept (unmuted), spam (muted as such), Wanted
  // (followed). #7: not subscribed.
  const u = Unread.fromRegister(SELF, {
    count: 11,
    streams: [
      { stream_id: 3, topic: 'lunch', unread_message_ids: [30] },
      { stream_id: 3, topic: 'quiet', unread_message_ids: [28] },
      { stream_id: 3, topic: 'zebra', unread_message_ids: [26] },
      { stream_id: 9, topic: 'alpha', unread_message_ids: [19] },
      { stream_id: 9, topic: 'beta', unread_message_ids: [18] },
      { stream_id: 9, topic: 'kept', unread_message_ids: [17] },
      { stream_id: 9, topic: 'spam', unread_message_ids: [16] },
      { stream_id: 9, topic: 'Wanted', unread_message_ids: [14] },
      { stream_id: 7, topic: 'gone', unread_message_ids: [40] },
    ],
    pms: [{ other_user_id: 6, unread_message_ids: [50] }],
    huddles: [],
    mentions: [],
    old_unreads_missing: false,
  });
  const policies = new Map<string, number>([
    ['3/quiet', TOPIC.MUTED],
    ['9/kept', TOPIC.UNMUTED],
    ['9/spam', TOPIC.MUTED],
    ['9/wanted', TOPIC.FOLLOWED],
  ]);
  const policy = (id: number, topic: string) =>
    policies.get(`${id}/${topic.toLowerCase()}`) ?? TOPIC.INHERIT;
  const channelMuted = (id: number) => id === 9;
  const mutedTopic = (id: number, topic: string) => topicMuted(policy(id, topic), channelMuted(id));
  const counts = u.counts({ mutedTopic });
  // What the channels' loaded topics say of their newest message: of mango and rest, read.
  let loaded = new Map<string, number>([
    ['3/mango', 27],
    ['9/rest', 15],
  ]);
  const next = (at: Parameters<typeof nextUnread>[1]['at']): UnreadWhere | null =>
    nextUnread(counts, {
      channels: [3, 9],
      channelMuted,
      mutedTopic,
      topicMutedItself: (id, topic) => policy(id, topic) === TOPIC.MUTED,
      latest: (id, topic) => loaded.get(`${id}/${topic.toLowerCase()}`),
      at,
    });
  const topic = (streamId: number, name: string): UnreadWhere => ({
    kind: 'stream',
    streamId,
    topic: name,
  });

  t.same(next(null), topic(3, 'lunch'), 'from All messages: the first, in the sidebar order');
  t.same(next({ streamId: 3, topic: 'lunch' }), topic(3, 'zebra'), 'a muted topic passed over');
  t.same(next({ streamId: 3, topic: 'LUNCH' }), topic(3, 'zebra'), 'the topic read, any case');
  t.same(
    next({ streamId: 3, topic: 'mango' }),
    topic(3, 'zebra'),
    'a topic read to the end: the next after it, not the first',
  );
  t.same(next({ streamId: 3, topic: undefined }), topic(3, 'lunch'), "a channel's view: its own");
  t.same(
    next({ streamId: 3, topic: 'zebra' }),
    topic(9, 'kept'),
    "a muted channel: only the topics unmuted or followed, the channel's muted ones passed over",
  );
  t.same(next({ streamId: 9, topic: 'kept' }), topic(9, 'Wanted'), 'then the followed one');
  t.same(next({ streamId: 9, topic: 'Wanted' }), { kind: 'dm', key: '6' }, 'then conversations');
  t.same(next({ dm: '6' }), topic(3, 'lunch'), 'and round again from the first');
  t.same(
    next({ streamId: 9, topic: undefined }),
    topic(9, 'kept'),
    "a muted channel's own view: its unmuted topics",
  );
  t.same(
    next({ streamId: 9, topic: 'alpha' }),
    topic(9, 'beta'),
    'reading a muted topic of a muted channel: on through the channel',
  );
  t.same(next({ streamId: 9, topic: 'beta' }), topic(9, 'kept'), '…in its order');
  t.same(
    next({ streamId: 9, topic: 'Kept' }),
    topic(9, 'Wanted'),
    'from an unmuted topic, back to passing the muted ones',
  );
  t.same(
    next({ streamId: 9, topic: 'rest' }),
    topic(9, 'Wanted'),
    'a topic muted as such stays passed over while reading the channel',
  );
  t.same(
    next({ streamId: 7, topic: 'gone' }),
    topic(3, 'lunch'),
    'an unsubscribed channel is never the answer; from it, the first',
  );
  loaded = new Map([
    ['3/zebra', 40],
    ['3/mango', 27],
  ]);
  t.same(next(null), topic(3, 'zebra'), 'a newer message read in zebra: zebra first, as listed');
  t.same(next({ streamId: 3, topic: 'zebra' }), topic(3, 'lunch'), '…then lunch');
  loaded = new Map([['3/mango', 27]]);

  t.notOk(
    [null, { streamId: 3, topic: 'zebra' }, { dm: '6' }].some((at) => {
      const n = next(at);
      return (
        n?.kind === 'stream' && (n.topic === 'quiet' || n.topic === 'spam' || n.streamId === 7)
      );
    }),
    'never a topic muted as such, nor one of a channel left',
  );

  const one = Unread.fromRegister(SELF, {
    count: 1,
    streams: [{ stream_id: 3, topic: 'lunch', unread_message_ids: [30] }],
    pms: [],
    huddles: [],
    mentions: [],
    old_unreads_missing: false,
  });
  const only = one.counts({ mutedTopic });
  const opts = { channels: [3], channelMuted, mutedTopic, topicMutedItself: () => false };
  t.equal(
    nextUnread(only, { ...opts, at: { streamId: 3, topic: 'lunch' } }),
    null,
    'only this one: none',
  );
  t.same(nextUnread(only, { ...opts, at: null }), topic(3, 'lunch'), 'from elsewhere: that one');
  t.end();
});
