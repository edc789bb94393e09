/**
 * The compose box's state modules: typing notifications sent with the register periods (and not
 * more often), drafts kept per conversation across reloads (bounded), autocomplete tokens and
 * ranking, emoji search and reaction chips, the rows of a message window, notification choices.
 */
import t from 'tap';
import type { Message } from '../../src/client/types.js';
import {
  applyCandidate,
  channelCandidates,
  commandCandidates,
  emojiCandidates,
  mentionCandidates,
  notifiedMentions,
  rank,
  tokenAt,
  topicCandidates,
} from '../../web/state/autocomplete.js';
import {
  draftKey,
  Drafts,
  MAX_DRAFTS,
  type DraftTo,
  type StorageLike,
} from '../../web/state/drafts.js';
import { buildEmojiIndex, emojiText, reactionChips, searchEmoji } from '../../web/state/emoji.js';
import { pageTitle, shouldNotify, type NotifyContext } from '../../web/state/notify.js';
import { buildRows } from '../../web/state/rows.js';
import { TypingSender, type TypingTo } from '../../web/state/typing.js';
import type { StoredMessage } from '../../web/state/chat.js';
import { FakeTimers } from '../helpers/fake-timers.js';

t.test('typing: start at once, renewed by the wait period, stop when idle or sent', (t) => {
  const clock = new FakeTimers();
  const sent: string[] = [];
  const periods = { startedWaitMs: 30_000, stoppedWaitMs: 12_000, startedExpiryMs: 45_000 };
  const s = new TypingSender(
    (op, to) => sent.push(`${op}:${to.type}`),
    periods,
    clock.now,
    clock.timers,
  );
  const to: TypingTo = { type: 'stream', stream_id: 1, topic: 'x' };
  s.typed(to, false);
  t.same(sent, ['start:stream']);
  for (let i = 0; i < 20; i++) {
    clock.advance(1_000);
    s.typed(to, false);
  }
  t.same(sent, ['start:stream'], 'no repeat within the wait period');
  for (let i = 0; i < 15; i++) {
    clock.advance(1_000);
    s.typed(to, false);
  }
  t.same(sent, ['start:stream', 'start:stream'], 'renewed after 30 s');
  clock.advance(12_000);
  t.same(sent.at(-1), 'stop:stream', 'stopped after 12 s idle');
  t.equal(clock.pending, 0, 'no timer while idle');
  s.typed(to, false);
  s.typed({ type: 'direct', to: [2] }, false);
  t.same(sent.slice(-3), ['start:stream', 'stop:stream', 'start:direct'], 'another conversation');
  s.typed({ type: 'direct', to: [2] }, true);
  t.same(sent.at(-1), 'stop:direct', 'emptied');
  s.stop();
  t.equal(sent.length, 7, 'stop only once');
  t.end();
});

class MemoryStorage implements StorageLike {
  data = new Map<string, string>();
  getItem(k: string) {
    return this.data.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.data.set(k, v);
  }
  removeItem(k: string) {
    this.data.delete(k);
  }
}

t.test('drafts: per conversation, across reloads, bounded', (t) => {
  const clock = new FakeTimers();
  const storage = new MemoryStorage();
  const d = new Drafts(storage, '1@realm', clock.now);
  d.set({ type: 'stream', streamId: 1, topic: 'Lunch' }, 'see you');
  d.set({ type: 'direct', userIds: [3, 2] }, 'psst');
  const again = new Drafts(storage, '1@realm', clock.now);
  t.equal(
    again.get({ type: 'stream', streamId: 1, topic: 'lunch' }),
    'see you',
    'after a reload; topic without case',
  );
  t.equal(again.get({ type: 'direct', userIds: [2, 3] }), 'psst');
  t.equal(new Drafts(storage, '2@realm', clock.now).size, 0, 'another account sees none');
  again.set({ type: 'direct', userIds: [2, 3] }, '  ');
  t.equal(new Drafts(storage, '1@realm', clock.now).size, 1, 'a blank draft is forgotten');
  for (let i = 0; i < MAX_DRAFTS + 20; i++) {
    clock.advance(1);
    again.set({ type: 'stream', streamId: 2, topic: `t${i}` }, `d${i}`);
  }
  t.equal(again.size, MAX_DRAFTS, 'bounded');
  t.equal(
    again.get({ type: 'stream', streamId: 2, topic: `t${MAX_DRAFTS + 19}` }),
    `d${MAX_DRAFTS + 19}`,
    'the newest kept',
  );
  clock.advance(31 * 86_400_000);
  t.equal(new Drafts(storage, '1@realm', clock.now).size, 0, 'old drafts dropped');
  storage.setItem('confab.drafts.bad', '{not json');
  t.equal(new Drafts(storage, 'bad', clock.now).size, 0, 'a damaged entry is ignored');
  t.end();
});

t.test('drafts: a message being sent is none, unless typed over or refused', (t) => {
  const clock = new FakeTimers();
  const d = new Drafts(new MemoryStorage(), '1@realm', clock.now);
  const poll: DraftTo = { type: 'stream', streamId: 1, topic: 'lunch' };
  const other: DraftTo = { type: 'direct', userIds: [2] };
  d.set(poll, '/poll Where?');
  d.set(other, 'psst');
  const rev = d.rev.value;
  const done = d.sending(poll, '/poll Where?');
  t.ok(d.rev.value > rev, 'the view and count are told');
  t.same(
    d.all().map((x) => x.content),
    ['psst'],
    'on its way: not listed',
  );
  t.equal(d.size, 1, 'nor counted');
  t.equal(d.get(poll), '/poll Where?', 'but kept, for a failure');
  t.equal(d.byKey(draftKey(poll))?.content, '/poll Where?', 'and found by its key');
  d.set(poll, '/poll Where? Here');
  t.equal(d.size, 2, 'typed over meanwhile: a draft again');
  d.set(poll, '/poll Where?');
  t.equal(d.size, 1, 'back to the text being sent: not');
  done();
  t.equal(d.size, 2, 'refused: a draft again');
  done();
  t.equal(d.size, 2, 'ended twice: no harm');
  const sent = d.sending(poll, '/poll Where?');
  d.delete(poll);
  sent();
  t.same(
    d.all().map((x) => x.content),
    ['psst'],
    'sent: deleted',
  );
  // A later send to the same conversation is not ended by an earlier one's end.
  const first = d.sending(other, 'psst');
  d.sending(other, 'psst');
  first();
  t.equal(d.size, 0, 'the same text sent again: still on its way');
  t.end();
});

t.test('autocomplete tokens', (t) => {
  t.match(tokenAt('hi @ham', 7), { kind: 'mention', query: 'ham', start: 3 });
  t.match(tokenAt('hi @**ham', 9), { kind: 'mention', query: 'ham' });
  t.match(tokenAt('@_Ham Pr', 8), { kind: 'mention', query: 'Ham Pr', silent: true });
  t.match(tokenAt('see #gen', 8), { kind: 'channel', query: 'gen', start: 4 });
  t.match(tokenAt('nice :thu', 9), { kind: 'emoji', query: 'thu', start: 5 });
  t.equal(tokenAt('mail a@b', 8), null, 'not inside a word');
  t.equal(tokenAt('12:30', 5), null, 'not a time');
  t.equal(tokenAt('@**Hamlet** ', 12), null, 'not after a completed mention');
  t.equal(tokenAt('hi\n@x', 2), null, 'only up to the caret');
  t.match(tokenAt('/po', 3), { kind: 'command', query: 'po', start: 0, end: 3 });
  t.match(tokenAt('/', 1), { kind: 'command', query: '' });
  t.equal(tokenAt('see /po', 7), null, 'a command only starts the message');
  t.equal(tokenAt('hi\n/po', 6), null, 'not on a later line');
  t.equal(tokenAt('/poll ', 6), null, 'not once a space follows');
  t.same(
    commandCandidates('').map((c) => c.label),
    ['/poll', '/todo', '/me'],
  );
  t.same(
    commandCandidates('T').map((c) => [c.insert, c.detail]),
    [['/todo', 'Create a to-do list']],
  );
  const chosen = applyCandidate('/p', tokenAt('/p', 2)!, commandCandidates('p')[0]!);
  t.same(chosen, { text: '/poll ', caret: 6 });
  t.end();
});

t.test('autocomplete candidates and their text', (t) => {
  const people = {
    users: [
      { user_id: 1, full_name: 'Hamlet', email: 'h@x' },
      { user_id: 2, full_name: 'Othello', email: 'o@x' },
      { user_id: 3, full_name: 'King Hamlet', email: 'k@x' },
      { user_id: 4, full_name: 'Othello', email: 'o2@x' },
    ],
    groups: [
      { id: 1, name: 'hamlet-fans', description: 'fans' },
      { id: 2, name: 'role:members', description: '' },
    ],
  };
  const c = mentionCandidates('ham', people, false);
  t.same(
    c.map((x) => x.label).slice(0, 3),
    ['Hamlet', 'hamlet-fans', 'King Hamlet'],
    'prefix first, then word',
  );
  t.same(
    mentionCandidates('oth', people, false).map((x) => x.insert),
    ['@**Othello|2**', '@**Othello|4**'],
    'ids for shared names',
  );
  t.equal(mentionCandidates('ham', people, true)[0]!.insert, '@_**Hamlet**', 'silent');
  t.equal(mentionCandidates('al', people, false)[0]!.insert, '@**all**');
  t.equal(mentionCandidates('role', people, false).length, 0, 'system groups not offered');
  const chans = channelCandidates('g', [
    { stream_id: 1, name: 'general', description: '' },
    { stream_id: 2, name: 'design', description: '' },
  ]);
  t.same(
    chans.map((x) => x.insert),
    ['#**general**', '#**design**'],
  );
  const tok = tokenAt('hi @ha', 6)!;
  t.same(applyCandidate('hi @ha', tok, c[0]!), { text: 'hi @**Hamlet** ', caret: 15 });
  t.same(
    topicCandidates('lu', ['lunch', 'plans', 'Late lunch']).map((x) => x.label),
    ['lunch', 'Late lunch'],
  );
  t.same(
    rank(['b', 'ab', 'abc'], 'ab', (x) => x),
    ['ab', 'abc'],
  );
  t.end();
});

t.test('emoji: index, search, autocomplete, chips', (t) => {
  const idx = buildEmojiIndex(
    { '1f44d': ['+1', 'thumbs_up', 'like'], '1f389': ['tada'], '1f642': ['smile'] },
    {
      7: {
        id: '7',
        name: 'party_parrot',
        source_url: '/user_avatars/1/emoji/7.gif',
        deactivated: false,
      },
      8: { id: '8', name: 'gone', source_url: '', deactivated: true },
    },
  );
  t.same(
    idx.canonical.map((e) => e.name),
    ['+1', 'tada', 'party_parrot', 'smile'],
    'popular first',
  );
  t.same(
    searchEmoji(idx, 'thu').map((e) => e.name),
    ['thumbs_up'],
  );
  t.same(
    searchEmoji(idx, 'parrot').map((e) => e.name),
    ['party_parrot'],
  );
  const hearts = buildEmojiIndex(
    {
      '2665': ['hearts'],
      '1f49e': ['revolving_hearts'],
      '2764': ['heart', 'love'],
      '1f498': ['heart_with_arrow'],
    },
    {},
  );
  t.same(
    searchEmoji(hearts, 'heart').map((e) => e.name),
    ['heart', 'hearts', 'heart_with_arrow', 'revolving_hearts'],
    'the very name first, then names starting with it (shorter first), then containing it',
  );
  t.same(
    searchEmoji(hearts, 'LOVE').map((e) => e.name),
    ['love'],
    'an alias, by any case',
  );
  t.equal(idx.byName.has('gone'), false, 'deactivated custom emoji left out');
  t.equal(emojiCandidates('tad', idx.names)[0]!.insert, ':tada:');
  t.same(
    emojiCandidates('th', idx.names).map((c) => c.label),
    ['thumbs_up'],
    'prefix matches, shorter first',
  );
  t.equal(emojiCandidates('s', idx.names)[0]!.label, 'smile', 'the shorter name first');
  t.equal(emojiText('1f44d'), '👍');
  t.equal(emojiText('1f468-200d-1f4bb'), '👨‍💻');
  t.equal(emojiText('zz'), '', 'malformed');
  const chips = reactionChips(
    [
      { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: 2 },
      { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: 2 },
      { emoji_name: 'like', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: 1 },
    ],
    1,
  );
  t.same(
    chips.map((c) => [c.emoji_name, c.count, c.mine]),
    [
      ['+1', 2, true],
      ['tada', 1, false],
    ],
  );
  t.end();
});

t.test('rows: dates, recipient bars, sender groups', (t) => {
  const m = (id: number, o: Partial<Message>): Message => ({
    id,
    sender_id: 2,
    sender_full_name: 'H',
    sender_email: '',
    timestamp: 1000,
    content: '',
    type: 'stream',
    stream_id: 1,
    subject: 'a',
    display_recipient: 'c',
    reactions: [],
    ...o,
  });
  const rows = buildRows(
    [
      m(1, {}),
      m(2, { timestamp: 1100 }),
      m(3, { sender_id: 3, timestamp: 1200 }),
      m(4, { subject: 'b', timestamp: 1300 }),
      m(5, { subject: 'b', timestamp: 1300 + 11 * 60 }),
      m(6, { subject: 'b', timestamp: 90_000 }),
    ],
    { selfId: 1, dayOf: (ts) => String(Math.floor(ts / 86_400)) },
  );
  t.same(
    rows.map((r) =>
      r.kind === 'message' ? `m${r.message.id}${r.showSender ? '+' : ''}` : r.kind[0],
    ),
    ['r', 'm1+', 'm2', 'm3+', 'r', 'm4+', 'm5+', 'd', 'r', 'm6+'],
  );
  // A me-message has its sender's name (its action runs on from it), and so has the message
  // after it, as in the reference.
  const me = buildRows([m(1, {}), m(2, { is_me_message: true }), m(3, {}), m(4, {})], {
    selfId: 1,
    dayOf: () => 'd',
  });
  t.same(
    me.map((r) =>
      r.kind === 'message' ? `m${r.message.id}${r.showSender ? '+' : ''}` : r.kind[0],
    ),
    ['r', 'm1+', 'm2+', 'm3+', 'm4'],
  );
  t.end();
});

t.test('notifications follow the settings', (t) => {
  const msg = (o: Partial<StoredMessage>): StoredMessage => ({
    id: 1,
    sender_id: 2,
    sender_full_name: 'H',
    sender_email: '',
    timestamp: 0,
    content: '',
    type: 'stream',
    stream_id: 1,
    subject: 'a',
    display_recipient: 'c',
    reactions: [],
    flags: [],
    ...o,
  });
  const ctx: NotifyContext = {
    selfId: 1,
    settings: {
      twenty_four_hour_time: false,
      color_scheme: 1,
      enable_desktop_notifications: true,
      enable_stream_desktop_notifications: false,
    },
    sub: undefined,
    mutedTopic: false,
    followedTopic: false,
    seeing: false,
  };
  const dm = msg({ type: 'private', display_recipient: [] });
  t.equal(shouldNotify(dm, ctx), true, 'a direct message');
  t.equal(
    shouldNotify(dm, {
      ...ctx,
      settings: { ...ctx.settings, enable_desktop_notifications: false },
    }),
    false,
    'turned off',
  );
  t.equal(shouldNotify(msg({ flags: ['mentioned'] }), ctx), true, 'a mention');
  t.equal(
    shouldNotify(msg({ flags: ['mentioned'] }), { ...ctx, mutedTopic: true }),
    true,
    'a mention in a muted topic',
  );
  t.equal(shouldNotify(msg({}), ctx), false, 'a plain channel message');
  t.equal(
    shouldNotify(msg({}), { ...ctx, sub: { desktop_notifications: true } as never }),
    true,
    "the channel's setting",
  );
  t.equal(
    shouldNotify(msg({ flags: ['stream_wildcard_mentioned'] }), ctx),
    true,
    'a wildcard mention',
  );
  t.equal(shouldNotify(msg({ sender_id: 1, flags: ['mentioned'] }), ctx), false, 'one’s own');
  t.equal(shouldNotify(dm, { ...ctx, seeing: true }), false, 'already looking at it');
  t.equal(pageTitle(3, 'general', 'Acme'), '(3) general - Acme - Confab');
  t.equal(pageTitle(0, 'general', 'Acme'), 'general - Acme - Confab');
  // The reference's "view - realm - product", with the name once when the realm is named after
  // the product (the default realm's name).
  t.equal(pageTitle(0, '#sandbox', 'Confab'), '#sandbox - Confab', 'the default realm');
  t.equal(pageTitle(2, '#sandbox', ' confab '), '(2) #sandbox - Confab', 'whatever its case');
  t.equal(pageTitle(0, 'All messages', ''), 'All messages - Confab', 'no realm name');
  t.end();
});

t.test('the people a message notifies by mention (notifiedMentions)', (t) => {
  const users = [
    { user_id: 5, full_name: 'Hamlet' },
    { user_id: 6, full_name: 'Othello' },
    { user_id: 7, full_name: 'Twin' },
    { user_id: 8, full_name: 'Twin' },
  ];
  t.same(notifiedMentions('@**Othello** and @**hamlet**, @**Othello** again', users), [6, 5]);
  t.same(notifiedMentions('@**Twin** is ambiguous; @**Twin|8** is not', users), [8]);
  t.same(notifiedMentions('@**Twin|9** names no one', users), []);
  t.same(notifiedMentions('@_**Hamlet** @**all** @*group* @**Nobody**', users), [], 'none');
  t.same(notifiedMentions('`@**Hamlet**`\n```\n@**Othello**\n```\n@**Twin|7**', users), [7]);
  t.same(notifiedMentions('~~~quote\n@**Othello** said\n~~~', users), [], 'quoted: no one');
  t.same(notifiedMentions('```\n@**Othello** in an open fence', users), [], 'a fence to the end');
  t.end();
});
