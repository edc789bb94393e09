/**
 * web/state/narrow.ts: the reference's `#narrow/...` URL scheme both ways (the links Confab's
 * renderer writes open the narrow they name), the API form of a narrow, which messages a
 * narrow holds, and which messages a move takes by default.
 */
import t from 'tap';
import type { Message } from '../../src/client/types.js';
import { encodeChannel, hashUtilEncode } from '../../src/lib/markdown/urls.js';
import {
  ALL,
  apiNarrow,
  channelNarrow,
  decodeHashComponent,
  dmNarrow,
  encodeHashComponent,
  isNarrow,
  matches,
  messageHash,
  narrowAfterMove,
  narrowHash,
  narrowKey,
  parseHash,
  placeAfterMove,
  placementAround,
  placementInView,
  PROPAGATE_FOR,
  searchNarrow,
  senderNarrow,
  senderOf,
  topicMove,
  topicNarrow,
  type Names,
  composeKeyChannel,
} from '../../web/state/narrow.js';

const names: Names = {
  channelName: (id) => ({ 9: 'design team', 3: 'general' })[id],
  channelId: (n) => ({ 'design team': 9, general: 3 })[n],
  userName: (id) => ({ 5: 'Hamlet Prince', 6: 'Othello' })[id],
  userId: (e) => ({ 'hamlet@zulip.com': 5, 'othello@zulip.com': 6 })[e],
  selfId: 1,
};

t.test('hash components as the reference encodes them', (t) => {
  t.equal(
    encodeHashComponent('https://www.zulipexample.com'),
    'https.3A.2F.2Fwww.2Ezulipexample.2Ecom',
  );
  t.equal(
    decodeHashComponent('https.3A.2F.2Fwww.2Ezulipexample.2Ecom'),
    'https://www.zulipexample.com',
  );
  for (const s of ['a (b).c', '100% done', 'naïve ✔ topic', 'x/y?z#w', '']) {
    t.equal(decodeHashComponent(encodeHashComponent(s)), s, `round trip of ${JSON.stringify(s)}`);
    t.equal(encodeHashComponent(s), hashUtilEncode(s), 'the same as the server renderer');
  }
  t.end();
});

t.test('links the server renders parse to the narrow they name', (t) => {
  const topic = 'logo (v2). 100%';
  const href = `/#narrow/channel/${encodeChannel(9, 'design team')}/topic/${hashUtilEncode(topic)}/near/42`;
  const n = parseHash(href.slice(href.indexOf('#')), names)!;
  t.same(n.terms, [
    { operator: 'channel', operand: '9', negated: false },
    { operator: 'topic', operand: topic, negated: false },
  ]);
  t.equal(n.near, 42);
  const ch = parseHash(`#narrow/channel/${encodeChannel(3, 'general')}`, names)!;
  t.same(ch, channelNarrow(3));
  t.end();
});

t.test('the fragments of the app, both ways', (t) => {
  const cases: [string, ReturnType<typeof parseHash>][] = [
    ['', ALL],
    ['#feed', ALL],
    ['#all_messages', ALL],
    ['#narrow/channel/9-design-team', channelNarrow(9)],
    ['#narrow/stream/9-design-team', channelNarrow(9)],
    ['#narrow/stream/general', channelNarrow(3)],
    ['#narrow/channel/9-design-team/topic/lunch', topicNarrow(9, 'lunch')],
    ['#narrow/stream/9-x/subject/lunch', topicNarrow(9, 'lunch')],
    ['#narrow/dm/5-Hamlet-Prince', dmNarrow([5], 1)],
    ['#narrow/dm/5,6-group', dmNarrow([6, 5], 1)],
    ['#narrow/pm-with/hamlet@zulip.com,othello@zulip.com', dmNarrow([5, 6], 1)],
    ['#narrow/dm/1-me', dmNarrow([1], 1)],
    ['#narrow/is/mentioned', isNarrow('mentioned')],
    ['#narrow/is/private', isNarrow('dm')],
    ['#narrow/search/hello.20world', searchNarrow(ALL, 'hello world')],
    ['#settings', null],
    ['#narrow/channel', null],
    ['#narrow/stream/no-such-channel', null],
    ['#narrow/near/abc', null],
  ];
  for (const [hash, want] of cases) t.same(parseHash(hash, names), want, hash || '(empty)');
  t.equal(
    narrowHash(topicNarrow(9, 'a.b (c)'), names),
    '#narrow/channel/9-design-team/topic/a.2Eb.20.28c.29',
  );
  t.equal(narrowHash(dmNarrow([5], 1), names), '#narrow/dm/5-Hamlet-Prince');
  t.equal(narrowHash(dmNarrow([6, 5], 1), names), '#narrow/dm/5,6-group');
  t.equal(narrowHash(ALL, names), '#feed');
  t.equal(narrowHash({ ...channelNarrow(3), near: 7 }, names), '#narrow/channel/3-general/near/7');
  for (const n of [
    topicNarrow(9, 'x y.z'),
    dmNarrow([5, 6], 1),
    isNarrow('starred'),
    searchNarrow(channelNarrow(3), 'q r'),
  ]) {
    t.same(parseHash(narrowHash(n, names), names), n, `round trip ${narrowKey(n)}`);
  }
  t.end();
});

t.test('a link to a message names a direct conversation by all its people', (t) => {
  const at = (n: ReturnType<typeof dmNarrow>, near: number) => ({ ...n, near });
  t.equal(messageHash(at(dmNarrow([5], 1), 42), names), '#narrow/dm/1,5-dm/near/42');
  t.equal(messageHash(at(dmNarrow([6, 5], 1), 43), names), '#narrow/dm/1,5,6-group/near/43');
  t.equal(messageHash(at(dmNarrow([1], 1), 44), names), '#narrow/dm/1-dm/near/44', 'with oneself');
  // Opened by Hamlet (5): his conversation with user 1, at the message.
  t.same(parseHash('#narrow/dm/1,5-dm/near/42', { ...names, selfId: 5 }), at(dmNarrow([1], 5), 42));
  t.same(parseHash(messageHash(at(dmNarrow([5], 1), 42), names), names), at(dmNarrow([5], 1), 42));
  // A channel's message: as narrowHash.
  const topic = { ...topicNarrow(9, 'logo'), near: 7 };
  t.equal(messageHash(topic, names), narrowHash(topic, names));
  t.end();
});

t.test("one person's messages (a profile card's View messages sent)", (t) => {
  t.equal(narrowHash(senderNarrow(5), names), '#narrow/sender/5-Hamlet-Prince', 'as the reference');
  const cases: [string, ReturnType<typeof parseHash>][] = [
    ['#narrow/sender/5-Hamlet-Prince', senderNarrow(5)],
    ['#narrow/sender/5', senderNarrow(5)],
    ['#narrow/sender/hamlet@zulip.com', senderNarrow(5)],
    ['#narrow/from/hamlet@zulip.com', senderNarrow(5)],
    ['#narrow/sender/me', senderNarrow(1)],
    ['#narrow/sender/nobody@zulip.com', null],
  ];
  for (const [hash, want] of cases) t.same(parseHash(hash, names), want, hash);
  t.same(parseHash(narrowHash(senderNarrow(6), names), names), senderNarrow(6), 'round trip');
  t.same(apiNarrow(senderNarrow(5)), [{ operator: 'sender', operand: 5 }]);
  t.equal(senderOf(senderNarrow(5)), 5);
  t.equal(senderOf(searchNarrow(senderNarrow(5), 'x')), undefined, 'only the narrow of it alone');
  t.equal(senderOf(dmNarrow([5], 1)), undefined);
  t.not(narrowKey(senderNarrow(5)), narrowKey(dmNarrow([5], 1)), 'not the conversation');
  t.end();
});

t.test('the API form of a narrow', (t) => {
  t.same(apiNarrow(topicNarrow(9, 'x')), [
    { operator: 'channel', operand: 9 },
    { operator: 'topic', operand: 'x' },
  ]);
  t.same(apiNarrow(dmNarrow([6, 5], 1)), [{ operator: 'dm', operand: [5, 6] }]);
  t.same(apiNarrow(ALL), [{ operator: 'in', operand: 'home' }], 'all messages: in:home');
  t.same(
    apiNarrow(searchNarrow(ALL, 'hi')),
    [{ operator: 'search', operand: 'hi' }],
    'a search from it: not (muted messages are found, as in the reference)',
  );
  t.equal(
    narrowKey(topicNarrow(9, 'Lunch')),
    narrowKey(topicNarrow(9, 'lunch')),
    'topics without case',
  );
  t.end();
});

t.test('which messages a narrow holds', (t) => {
  const base = { sender_full_name: '', sender_email: '', timestamp: 0, content: '', reactions: [] };
  const s: Message = {
    ...base,
    id: 1,
    sender_id: 5,
    type: 'stream',
    stream_id: 9,
    subject: 'Lunch',
    display_recipient: 'design team',
  };
  const dm: Message = {
    ...base,
    id: 2,
    sender_id: 5,
    type: 'private',
    subject: '',
    display_recipient: [
      { id: 1, email: '', full_name: '' },
      { id: 5, email: '', full_name: '' },
    ],
  };
  const ctx = {
    selfId: 1,
    flags: [] as string[],
    mutedTopic: () => false,
    topicMutedItself: () => false,
  };
  t.equal(matches(ALL, s, ctx), true);
  t.equal(matches(channelNarrow(9), s, ctx), true);
  t.equal(matches(channelNarrow(3), s, ctx), false);
  t.equal(matches(topicNarrow(9, 'lunch'), s, ctx), true, 'topic without case');
  t.equal(matches(dmNarrow([5], 1), dm, ctx), true);
  t.equal(matches(dmNarrow([5, 6], 1), dm, ctx), false);
  t.equal(matches(isNarrow('dm'), dm, ctx), true);
  t.equal(matches(isNarrow('mentioned'), s, ctx), false);
  t.equal(matches(isNarrow('mentioned'), s, { ...ctx, flags: ['mentioned'] }), true);
  t.equal(matches(senderNarrow(5), s, ctx), true, 'sent by them');
  t.equal(matches(senderNarrow(5), dm, ctx), true, 'a direct message too');
  t.equal(matches(senderNarrow(6), s, ctx), false, 'not by another');
  t.equal(matches(searchNarrow(ALL, 'x'), s, ctx), undefined, 'search: the server decides');
  t.equal(
    matches(searchNarrow(channelNarrow(3), 'x'), s, ctx),
    false,
    'unless another term rules it out',
  );
  t.end();
});

t.test('a topic moved onward: where its view and its compose box go', (t) => {
  const renamed = {
    stream_id: 3,
    orig_subject: 'kickoff',
    subject: 'week plan',
    propagate_mode: 'change_all',
  };
  const mv = topicMove(renamed, 'week plan')!;
  t.same(mv, {
    from: { streamId: 3, topic: 'kickoff' },
    to: { streamId: 3, topic: 'week plan' },
    whole: true,
  });
  // Another channel alone: the topic is the one the messages kept.
  t.same(topicMove({ stream_id: 3, new_stream_id: 9, propagate_mode: 'change_later' }, 'logo'), {
    from: { streamId: 3, topic: 'logo' },
    to: { streamId: 9, topic: 'logo' },
    whole: false,
  });
  // One message moved, or a content edit: nothing follows.
  t.equal(topicMove({ ...renamed, propagate_mode: 'change_one' }, 'week plan'), null);
  t.equal(topicMove({ stream_id: 3, propagate_mode: 'change_all' }, 'x'), null);

  t.same(narrowAfterMove(topicNarrow(3, 'KICKOFF'), mv), topicNarrow(3, 'week plan'));
  t.same(
    narrowAfterMove(searchNarrow(topicNarrow(3, 'kickoff'), 'lunch'), mv),
    searchNarrow(topicNarrow(3, 'week plan'), 'lunch'),
  );
  t.equal(narrowAfterMove(topicNarrow(3, 'other'), mv), null);
  t.equal(narrowAfterMove(topicNarrow(9, 'kickoff'), mv), null);
  t.equal(narrowAfterMove(channelNarrow(3), mv), null);
  t.same(placeAfterMove({ streamId: 3, topic: 'Kickoff' }, mv), mv.to);
  t.equal(placeAfterMove({ streamId: 3, topic: 'other' }, mv), null);
  t.end();
});

t.test("a move's default: by the message's place in its topic, as the reference's", (t) => {
  t.same(PROPAGATE_FOR, { first: 'change_all', intermediate: 'change_later', last: 'change_one' });
  // Topic t of channel 1: 10, 12, 14; topic u: 11, 13, 15.
  const msgs = new Map(
    [10, 11, 12, 13, 14, 15].map((id) => [id, { id, stream_id: 1, subject: id % 2 ? 'u' : 'T' }]),
  );
  const get = (id: number) => msgs.get(id);
  const at = (id: number) => msgs.get(id)!;
  const topic = { narrow: topicNarrow(1, 't'), ids: [10, 12, 14], foundOldest: true };
  t.equal(placementInView({ ...topic, foundNewest: true }, at(10), get), 'first');
  t.equal(placementInView({ ...topic, foundNewest: true }, at(12), get), 'intermediate');
  t.equal(placementInView({ ...topic, foundNewest: true }, at(14), get), 'last');
  t.equal(
    placementInView({ ...topic, foundNewest: false }, at(14), get),
    'intermediate',
    'the last fetched of a topic that goes on',
  );
  t.equal(
    placementInView({ ...topic, ids: [10, 12, 14, 14.001], foundNewest: true }, at(14), get),
    'last',
    'a message being sent (its local echo) is not one of the topic yet',
  );
  const channel = {
    narrow: channelNarrow(1),
    ids: [10, 11, 12, 13, 14, 15],
    foundOldest: true,
    foundNewest: true,
  };
  t.equal(placementInView(channel, at(10), get), 'first', "a channel's view: by its topic");
  t.equal(placementInView(channel, at(12), get), 'intermediate');
  t.equal(placementInView(channel, at(14), get), 'last', 'not the last of the view, of its topic');
  t.equal(placementInView({ ...channel, narrow: ALL }, at(13), get), 'intermediate');
  t.equal(
    placementInView({ ...channel, ids: [12, 13, 14, 15], foundOldest: false }, at(12), get),
    null,
    'older messages not fetched: the server is asked',
  );
  t.equal(
    placementInView({ ...channel, narrow: searchNarrow(ALL, 'x') }, at(12), get),
    'last',
    'a search: only the message, as for the last',
  );
  t.equal(
    placementInView({ ...channel, narrow: isNarrow('starred') }, at(12), get),
    null,
    'a view of some messages of topics: the server is asked',
  );
  t.equal(placementAround(12, [{ id: 12 }, { id: 14 }]), 'first');
  t.equal(placementAround(12, [{ id: 10 }, { id: 12 }, { id: 14 }]), 'intermediate');
  t.equal(placementAround(12, [{ id: 10 }, { id: 12 }]), 'last');
  t.end();
});

t.test('composeKeyChannel: the channel the compose key `c` addresses', (t) => {
  const ch = channelNarrow(7);
  t.equal(composeKeyChannel(ch, [3, 7]), 7, 'the channel shown');
  t.equal(composeKeyChannel(topicNarrow(7, 'a'), [3, 7]), 7, 'a topic’s channel');
  t.equal(composeKeyChannel(ALL, [3, 7]), null, 'no channel shown: to choose');
  t.equal(composeKeyChannel(null, [3, 7]), null, 'a view of its own (Recent): to choose');
  t.equal(composeKeyChannel(null, []), null, 'subscribed to none');
  t.equal(composeKeyChannel(null, [3]), 3, 'Recent, subscribed to one: that one');
  t.equal(composeKeyChannel(ALL, [3]), 3, 'All messages, subscribed to one: that one');
  t.equal(composeKeyChannel(ch, [3]), 3, 'another channel shown, subscribed to one: that one');
  t.end();
});
