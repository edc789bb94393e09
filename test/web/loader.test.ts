/**
 * web/state/loader.ts with a fake `GET /messages`: the first fetch opens at the first unread
 * message, older and newer pages join the run on the right side, one fetch per direction at a
 * time, a failure is kept on the list (shown with a retry) instead of thrown (the messages that
 * arrived meanwhile shown in the list, none held for a later answer), and an answer is taken with
 * what the events did while it was on its way (asked again when more changes, or more arrivals
 * and deletions, came than are kept; or, for the feed, when the user's muting changed).
 */
import t from 'tap';
import type { GetMessages } from '../../src/client/api.js';
import type {
  Message,
  MessagesResponse,
  RegisterResponse,
  ServerEvent,
} from '../../src/client/types.js';
import { ChatState, MAX_CHANGES_KEPT } from '../../web/state/chat.js';
import { Loader } from '../../web/state/loader.js';
import { MAX_HELD } from '../../web/state/message-list.js';
import { ALL, channelNarrow, searchNarrow, topicNarrow } from '../../web/state/narrow.js';
import { FakeTimers } from '../helpers/fake-timers.js';

const ALL_IDS = Array.from({ length: 1000 }, (_, i) => i + 1);
const UNREAD_FROM = 900;

function msg(id: number): Message {
  return {
    id,
    sender_id: 2,
    sender_full_name: 'H',
    sender_email: '',
    timestamp: id,
    content: '',
    type: 'stream',
    stream_id: 1,
    subject: 't',
    display_recipient: 'c',
    reactions: [],
    flags: id >= UNREAD_FROM ? [] : ['read'],
  };
}

/** The server's answer for an anchor, as GET /messages gives it. */
function answer(q: GetMessages): MessagesResponse {
  let at: number;
  if (q.anchor === 'first_unread') at = ALL_IDS.indexOf(UNREAD_FROM);
  else if (q.anchor === 'newest') at = ALL_IDS.length - 1;
  else if (q.anchor === 'oldest') at = 0;
  else at = ALL_IDS.indexOf(q.anchor);
  const incl = q.include_anchor === false ? 0 : 1;
  const before = ALL_IDS.slice(Math.max(0, at - q.num_before), at);
  const self = incl ? [ALL_IDS[at]!] : [];
  const after = ALL_IDS.slice(at + 1, at + 1 + q.num_after);
  const ids = [...before, ...self, ...after];
  return {
    messages: ids.map(msg),
    anchor: ALL_IDS[at]!,
    found_anchor: true,
    found_oldest: ids[0] === 1 || (q.num_before > 0 && at - q.num_before <= 0),
    found_newest: ids.at(-1) === 1000 || at + q.num_after >= ALL_IDS.length - 1,
    history_limited: false,
  };
}

function setup() {
  const clock = new FakeTimers();
  const reg = {
    queue_id: 'q',
    last_event_id: -1,
    user_id: 1,
    email: '',
    full_name: '',
  } as RegisterResponse;
  const s = new ChatState(reg, { now: clock.now, timers: clock.timers });
  const asked: GetMessages[] = [];
  let fail = false;
  const loader = new Loader(s, (q) => {
    asked.push(q);
    return fail ? Promise.reject(new Error('offline')) : Promise.resolve(answer(q));
  });
  return { s, loader, asked, setFail: (v: boolean) => (fail = v) };
}

t.test('opens at the first unread, pages both ways', async (t) => {
  const { s, loader, asked } = setup();
  const list = s.list(ALL);
  await loader.open(list, 'first_unread');
  t.equal(asked.length, 1);
  t.same(
    asked[0]!.narrow,
    [{ operator: 'in', operand: 'home' }],
    'all messages: without what is muted, as the reference asks',
  );
  t.ok(list.windowIds().includes(UNREAD_FROM), 'the first unread is in the window');
  t.equal(s.messages.size, list.size, 'the messages are stored');
  await loader.open(list, 'first_unread');
  t.equal(asked.length, 1, 'an open list is not fetched again');
  const first = list.ids[0]!;
  await Promise.all([loader.older(list), loader.older(list)]);
  t.equal(asked.length, 2, 'one fetch per direction at a time');
  t.equal(asked[1]!.anchor, first);
  t.equal(asked[1]!.include_anchor, false);
  t.equal(list.ids[0], first - 100);
  await loader.newer(list);
  t.equal(list.foundNewest, true);
  t.equal(list.ids.at(-1), 1000);
  const before = asked.length;
  await loader.newer(list);
  t.equal(asked.length, before, 'nothing newer to fetch');
});

t.test('a failed fetch is kept on the list', async (t) => {
  const { s, loader, setFail } = setup();
  const list = s.list(ALL);
  setFail(true);
  await loader.open(list, 'newest');
  t.equal(list.error, 'offline');
  t.equal(list.loaded, false);
  setFail(false);
  await loader.open(list, 'newest');
  t.equal(list.error, null);
  t.equal(list.ids.at(-1), 1000);
});

/** A loader whose fetches are answered when the test says, in any order. */
function heldSetup() {
  const clock = new FakeTimers();
  const reg = {
    queue_id: 'q',
    last_event_id: -1,
    user_id: 1,
    email: '',
    full_name: '',
  } as RegisterResponse;
  const s = new ChatState(reg, { now: clock.now, timers: clock.timers });
  // answer(r): the server's answer for the query, or `r`; fail(): the fetch fails.
  const held: { q: GetMessages; answer: (r?: MessagesResponse) => void; fail: () => void }[] = [];
  const loader = new Loader(
    s,
    (q) =>
      new Promise((resolve, reject) =>
        held.push({
          q,
          answer: (r) => resolve(r ?? answer(q)),
          fail: () => reject(new Error('offline')),
        }),
      ),
  );
  return { s, loader, held };
}

const tick = () => new Promise((r) => setImmediate(r));

t.test('two opens of one list: the later one counts, whichever answer comes first', async (t) => {
  const { s, loader, held } = heldSetup();
  const list = s.list(ALL);
  const first = loader.open(list, 200);
  const second = loader.open(list, 'newest');
  t.equal(held.length, 2);
  held[0]!.answer();
  await first;
  t.equal(list.loading, true, 'still loading: the later open is not answered yet');
  held[1]!.answer();
  await second;
  t.equal(list.loading, false);
  t.equal(list.ids.at(-1), 1000, 'the run is the one asked for last (the newest)');
  t.equal(list.windowIds().at(-1), 1000, 'and so is the window');

  // Answered in the order asked: the same.
  const other = s.list({
    terms: [{ operator: 'channel', operand: '1', negated: false }],
    near: null,
  });
  const a = loader.open(other, 'newest');
  const b = loader.open(other, 200);
  held[2]!.answer();
  held[3]!.answer();
  await Promise.all([a, b]);
  t.ok(other.windowIds().includes(200), 'the window is at the message asked for last');
});

t.test('a page fetched for a run that was replaced meanwhile is dropped', async (t) => {
  const { s, loader, held } = heldSetup();
  const list = s.list(ALL);
  const open = loader.open(list, 500);
  held[0]!.answer();
  await open;
  const first = list.ids[0]!;
  t.equal(first, 400);
  const older = loader.older(list);
  t.equal(held[1]!.q.anchor, first, 'older messages asked for');
  // Meanwhile the run goes stale (messages moved into the narrow) and is fetched again at the
  // newest: the older page no longer borders it.
  list.stale = true;
  const again = loader.open(list, 'newest');
  held[2]!.answer();
  await again;
  t.equal(list.ids[0], 900);
  held[1]!.answer();
  await older;
  await tick();
  t.equal(list.ids[0], 900, "the old run's page is not put above the new run");
  const gaps = list.ids.filter((id, i) => i > 0 && id !== list.ids[i - 1]! + 1);
  t.same(gaps, [], 'the run has no gap');
});

t.test(
  '"Jump to the newest": the answer is taken with what the events did meanwhile',
  async (t) => {
    const { s, loader, held } = heldSetup();
    const list = s.list(ALL);
    const open = loader.open(list, 500);
    held[0]!.answer();
    await open;
    t.equal(list.foundNewest, false, 'opened away from the newest');
    let event = 0;
    const ev = (e: Record<string, unknown>) => ({ id: event++, ...e }) as unknown as ServerEvent;

    // The newest asked for; while it is on its way a message arrives, one shown is starred (its
    // row changes), and one the answer holds is deleted.
    const jump = loader.open(list, 'newest');
    s.apply([
      ev({ type: 'message', message: msg(1001), flags: [] }),
      ev({ type: 'update_message_flags', op: 'add', flag: 'starred', messages: [500], all: false }),
      ev({ type: 'delete_message', message_type: 'stream', message_ids: [950] }),
    ]);
    held[1]!.answer(); // made before those events: 900-1000
    await jump;
    t.equal(list.loading, false);
    t.equal(list.ids[0], 900, 'the run the answer brought');
    t.same(list.ids.slice(-3), [999, 1000, 1001], 'with the message that arrived, after it');
    t.equal(list.has(950), false, 'without the one deleted');
    t.same(
      list.ids.filter((id, i) => i > 0 && id <= list.ids[i - 1]!),
      [],
      'ascending, no duplicates',
    );
    t.equal(list.windowIds().at(-1), 1001, 'the window at the newest');
    t.equal(list.atNewest(), true);
  },
);

t.test('an answer made after a message that arrived meanwhile holds it once', async (t) => {
  const { s, loader, held } = heldSetup();
  const list = s.list(ALL);
  const open = loader.open(list, 500);
  held[0]!.answer();
  await open;
  const jump = loader.open(list, 'newest');
  s.apply([{ id: 0, type: 'message', message: msg(1001), flags: [] } as unknown as ServerEvent]);
  const r = answer(held[1]!.q);
  held[1]!.answer({ ...r, messages: [...r.messages.slice(1), msg(1001)] });
  await jump;
  t.same(list.ids.slice(-3), [999, 1000, 1001]);
  t.equal(list.ids.filter((id) => id === 1001).length, 1, 'once');
  t.equal(list.windowIds().at(-1), 1001);
});

t.test('a page is taken without the messages deleted while it was on its way', async (t) => {
  const { s, loader, held } = heldSetup();
  const list = s.list(ALL);
  const open = loader.open(list, 500);
  held[0]!.answer();
  await open;
  t.same([list.ids[0], list.ids.at(-1)], [400, 600]);
  const older = loader.older(list);
  const newer = loader.newer(list);
  // Deleted while the pages are on their way (each page made before): one in each.
  s.apply([
    { id: 0, type: 'delete_message', message_type: 'stream', message_ids: [350, 650] },
  ] as unknown as ServerEvent[]);
  held[1]!.answer();
  held[2]!.answer();
  await Promise.all([older, newer]);
  t.same([list.ids[0], list.ids.at(-1)], [300, 700], 'both pages joined the run');
  t.equal(list.has(350), false, 'not the one deleted above');
  t.equal(list.has(650), false, 'nor the one below');
  const again = loader.older(list);
  held[3]!.answer();
  await again;
  t.equal(list.ids[0], 200);
  t.equal(list.ids.length, 501 - 2, 'the run whole but for the two deleted');
});

t.test(
  'a page is taken with the edits, moves and reactions made while it was on its way',
  async (t) => {
    const { s, loader, held } = heldSetup();
    const list = s.list(topicNarrow(1, 't'));
    const open = loader.open(list, 500);
    held[0]!.answer();
    await open;
    t.same([list.ids[0], list.ids.at(-1)], [400, 600]);
    const older = loader.older(list);
    const smile = { emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' };
    // Made while the page is on its way, to messages the state does not hold yet.
    s.apply([
      {
        id: 0,
        type: 'update_message',
        user_id: 2,
        message_id: 350,
        message_ids: [350],
        edit_timestamp: 9,
        rendered_content: '<p>edited</p>',
      },
      {
        id: 1,
        type: 'update_message',
        user_id: 2,
        message_id: 360,
        message_ids: [360],
        edit_timestamp: 9,
        stream_id: 1,
        orig_subject: 't',
        subject: 'u',
      },
      { id: 2, type: 'reaction', op: 'add', message_id: 370, user_id: 2, ...smile },
      { id: 3, type: 'reaction', op: 'add', message_id: 380, user_id: 2, ...smile },
      {
        id: 4,
        type: 'update_message_flags',
        op: 'add',
        flag: 'starred',
        messages: [390],
        all: false,
      },
      {
        id: 5,
        type: 'update_message',
        user_id: 2,
        message_id: 250,
        message_ids: [250],
        edit_timestamp: 10,
        rendered_content: '<p>late</p>',
      },
    ] as ServerEvent[]);
    // The page was made before the events, but for 380 (its reaction already there).
    const page = answer(held[1]!.q);
    const m380 = page.messages.find((m) => m.id === 380)!;
    m380.reactions = [{ ...smile, user_id: 2 }];
    held[1]!.answer(page);
    await older;
    t.equal(list.ids[0], 300, 'the page joined the run');
    t.equal(s.messages.get(350)?.content, '<p>edited</p>', 'the edit shown');
    t.equal(s.messages.get(350)?.last_edit_timestamp, 9);
    t.equal(list.has(360), false, 'the message moved away is left out');
    t.equal(s.messages.get(360)?.subject, 'u');
    t.equal(s.messages.get(370)?.reactions.length, 1, 'the reaction shown');
    t.equal(s.messages.get(380)?.reactions.length, 1, 'a reaction the page had is not doubled');
    t.ok(s.messages.get(390)?.flags.includes('starred'), 'the star shown');
    // A later page (asked with no fetch in flight) is made after them: not given them again.
    const again = loader.older(list);
    held[2]!.answer();
    await again;
    t.equal(list.ids[0], 200);
    t.equal(s.messages.get(250)?.content, '', 'what the earlier fetch saw is forgotten');
  },
);

t.test(
  'a failed fetch of a list shown: the messages that arrived meanwhile are shown',
  async (t) => {
    const { s, loader, held } = heldSetup();
    const list = s.list(ALL);
    const open = loader.open(list, 'newest');
    held[0]!.answer();
    await open;
    t.equal(list.atNewest(), true);
    // Fetched again (it went stale), while it stays shown; a message arrives meanwhile.
    list.stale = true;
    const again = loader.open(list, 'newest');
    s.apply([{ id: 0, type: 'message', message: msg(1001), flags: [] } as unknown as ServerEvent]);
    held[1]!.fail();
    await again;
    t.equal(list.error, 'offline', 'the failure shown (with a retry)');
    t.equal(list.ids.at(-1), 1001, 'the message that arrived joined the list shown');
    t.equal(list.windowIds().at(-1), 1001, 'in the window, which was at the newest');
    // Deleted afterwards: a later answer made before it does not bring it back.
    s.apply([
      { id: 1, type: 'delete_message', message_type: 'stream', message_ids: [1001] },
    ] as unknown as ServerEvent[]);
    t.equal(list.has(1001), false);
    const retry = loader.open(list, 'newest');
    held[2]!.answer();
    await retry;
    t.equal(list.error, null);
    t.equal(list.ids.at(-1), 1000, 'the deleted message stays gone');
  },
);

t.test('more changes than are kept while a page is on its way: it is fetched again', async (t) => {
  const { s, loader, held } = heldSetup();
  const list = s.list(ALL);
  const open = loader.open(list, 500);
  held[0]!.answer();
  await open;
  const older = loader.older(list);
  const smile = { emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' };
  // A reaction to a message of the page, then more stars and unstars than are kept.
  const events: Record<string, unknown>[] = [
    { type: 'reaction', op: 'add', message_id: 350, user_id: 2, ...smile },
  ];
  for (let i = 0; i < MAX_CHANGES_KEPT; i++)
    events.push({
      type: 'update_message_flags',
      op: i % 2 ? 'remove' : 'add',
      flag: 'starred',
      messages: [500],
      all: false,
    });
  s.apply(events.map((e, id) => ({ id, ...e }) as unknown as ServerEvent));
  held[1]!.answer(); // made before the events: 350 without the reaction
  await tick();
  t.equal(held.length, 3, 'the page asked for again');
  t.equal(list.ids[0], 400, 'the first answer not taken');
  const again = answer(held[2]!.q); // made after them
  again.messages.find((m) => m.id === 350)!.reactions = [{ ...smile, user_id: 2 }];
  held[2]!.answer(again);
  await older;
  t.equal(list.ids[0], 300, 'the page joined the run');
  t.equal(s.messages.get(350)?.reactions.length, 1, 'with the reaction made meanwhile');
  t.equal(loader.fetches, 3);
});

t.test(
  "a search's highlighting: kept by its list, shown while the message is unchanged",
  async (t) => {
    const clock = new FakeTimers();
    const reg: RegisterResponse = {
      queue_id: 'q',
      last_event_id: -1,
      user_id: 1,
      email: '',
      full_name: '',
    };
    const s = new ChatState(reg, { now: clock.now, timers: clock.timers });
    const mk = (id: number, content: string, subject = 't'): Message => ({
      ...msg(id),
      content,
      subject,
    });
    const hl = (w: string) => `<span class="highlight">${w}</span>`;
    // The feed (fetched first: its copies have no highlighting), and the search for "lunch".
    const feedAnswer = [mk(1, '<p>lunch at noon</p>', 'lunch'), mk(2, '<p>no match</p>')];
    const searchAnswer = [
      {
        ...mk(1, '<p>lunch at noon</p>', 'lunch'),
        match_content: `<p>${hl('lunch')} at noon</p>`,
        match_subject: hl('lunch'),
      } as Message,
    ];
    const loader = new Loader(s, (q) => {
      // The feed is asked for as in:home, the search by its words.
      const messages = q.narrow.some((x) => x.operator === 'search') ? searchAnswer : feedAnswer;
      return Promise.resolve({
        messages: structuredClone(messages),
        anchor: 0,
        found_anchor: false,
        found_oldest: true,
        found_newest: true,
        history_limited: false,
      });
    });
    const feed = s.list(ALL);
    await loader.open(feed, 'newest');
    const search = s.list(searchNarrow(ALL, 'lunch'));
    await loader.open(search, 'newest');
    const m1 = s.messages.get(1)!;
    t.same(
      search.highlighted(m1),
      { content: `<p>${hl('lunch')} at noon</p>`, subject: hl('lunch') },
      'a message stored already (by the feed) is highlighted in the search',
    );
    t.same(feed.highlighted(m1), {}, 'not in the feed');
    t.notOk('match_content' in m1, 'the stored message carries no highlighting');
    t.same(search.highlighted(s.messages.get(2)!), {}, 'none for a message the search lacks');

    s.apply([
      {
        id: 0,
        type: 'update_message',
        user_id: 2,
        message_id: 1,
        message_ids: [1],
        edit_timestamp: 9,
        rendered_content: '<p>lunch at one</p>',
      },
    ] as ServerEvent[]);
    t.same(
      search.highlighted(s.messages.get(1)!),
      { content: undefined, subject: hl('lunch') },
      'an edit: the content shown as it is now, the topic still highlighted',
    );
    s.apply([
      {
        id: 1,
        type: 'update_message',
        user_id: 2,
        message_id: 1,
        message_ids: [1],
        edit_timestamp: 10,
        stream_id: 1,
        orig_subject: 'lunch',
        subject: 'lunch plans',
      },
    ] as ServerEvent[]);
    t.same(search.highlighted(s.messages.get(1)!), {}, 'a move: the topic as it is now');

    search.remove([1]);
    t.same(search.highlighted(m1), {}, 'a message gone from the list takes its highlighting along');
  },
);

t.test(
  "a search's highlighting survives a re-render that leaves the words as they were",
  async (t) => {
    const clock = new FakeTimers();
    const reg: RegisterResponse = {
      queue_id: 'q',
      last_event_id: -1,
      user_id: 1,
      email: '',
      full_name: '',
    };
    const s = new ChatState(reg, { now: clock.now, timers: clock.timers });
    const hl = (w: string) => `<span class="highlight">${w}</span>`;
    // An image still loading (its thumbnail comes later, as a re-render), words around it.
    const loading = '<img src="/static/images/loading/loader-black.svg" alt="">';
    const thumb = '<img src="/user_uploads/thumbnail/a.png/840x560.webp" alt="">';
    const content = (img: string) =>
      `<p>Lunch &amp; <em>lunch again</em> at noon</p><div class="message_inline_image">${img}</div>`;
    const answer = [
      {
        ...msg(1),
        content: content(loading),
        subject: 'lunch',
        match_content: `<p>${hl('Lunch')} &amp; <em>${hl('lunch')} again</em> at noon</p><div class="message_inline_image">${loading}</div>`,
        match_subject: hl('lunch'),
      } as Message,
    ];
    const loader = new Loader(s, () =>
      Promise.resolve({
        messages: structuredClone(answer),
        anchor: 0,
        found_anchor: false,
        found_oldest: true,
        found_newest: true,
        history_limited: false,
      }),
    );
    const search = s.list(searchNarrow(ALL, 'lunch'));
    await loader.open(search, 'newest');
    const update = (e: object, id: number) =>
      s.apply([
        { id, type: 'update_message', user_id: 2, message_id: 1, message_ids: [1], ...e },
      ] as ServerEvent[]);

    // The thumbnail made: the server renders the message again (rendering_only).
    update({ rendering_only: true, rendered_content: content(thumb) }, 0);
    t.same(
      search.highlighted(s.messages.get(1)!),
      {
        content: `<p>${hl('Lunch')} &amp; <em>${hl('lunch')} again</em> at noon</p><div class="message_inline_image">${thumb}</div>`,
        subject: hl('lunch'),
      },
      'a re-render with the same words: the new HTML, the same words highlighted',
    );
    // The topic renamed (the content as it was): the content still highlighted.
    update({ edit_timestamp: 10, stream_id: 1, orig_subject: 'lunch', subject: 'meals' }, 1);
    t.same(
      search.highlighted(s.messages.get(1)!).content,
      `<p>${hl('Lunch')} &amp; <em>${hl('lunch')} again</em> at noon</p><div class="message_inline_image">${thumb}</div>`,
      'a move: the content still highlighted',
    );
    t.equal(search.highlighted(s.messages.get(1)!).subject, undefined, 'the topic as it is now');
    // The words edited: the content as it is now (which words match, the server would say).
    update({ edit_timestamp: 11, rendered_content: '<p>Dinner at eight</p>' + content(thumb) }, 2);
    t.equal(search.highlighted(s.messages.get(1)!).content, undefined, 'an edit: no highlighting');
  },
);

t.test(
  'more arrivals and deletions than are held while a fetch is on its way: it is fetched again',
  async (t) => {
    const { s, loader, held } = heldSetup();
    const list = s.list(ALL);
    const open = loader.open(list, 500);
    held[0]!.answer();
    await open;
    let event = 0;
    const ev = (e: Record<string, unknown>) => ({ id: event++, ...e }) as unknown as ServerEvent;
    // The newest asked for; while it is on its way one message it holds is deleted, and more
    // messages arrive than are held for it.
    const jump = loader.open(list, 'newest');
    const last = 1001 + MAX_HELD;
    const events = [ev({ type: 'delete_message', message_type: 'stream', message_ids: [950] })];
    for (let id = 1001; id <= last; id++)
      events.push(ev({ type: 'message', message: msg(id), flags: [] }));
    s.apply(events);
    held[1]!.answer(); // made before the events: 900-1000, 950 with them
    await tick();
    t.equal(held.length, 3, 'the newest asked for again');
    t.equal(list.loading, true, 'the first answer not taken');
    t.equal(list.has(950), false);
    // Made after them: the newest messages, without the one deleted.
    const ids = Array.from({ length: 101 }, (_, i) => last - 100 + i);
    held[2]!.answer({
      messages: ids.map(msg),
      anchor: last,
      found_anchor: true,
      found_oldest: false,
      found_newest: true,
      history_limited: false,
    });
    await jump;
    t.equal(list.loading, false);
    t.same([list.ids[0], list.ids.at(-1), list.size], [last - 100, last, 101], 'its run, once');
    t.equal(list.windowIds().at(-1), last, 'the window at the newest');
    t.equal(loader.fetches, 3);
    // Later arrivals join as before (nothing held is left over).
    s.apply([ev({ type: 'message', message: msg(last + 1), flags: [] })]);
    t.equal(list.ids.at(-1), last + 1);
  },
);

t.test('a page fetched while more came than are held is asked again too', async (t) => {
  const { s, loader, held } = heldSetup();
  const list = s.list(ALL);
  const open = loader.open(list, 500);
  held[0]!.answer();
  await open;
  const older = loader.older(list);
  // Deleted while the page is on its way: one of it, then more than are held (none shown).
  const gone = [350, ...Array.from({ length: MAX_HELD }, (_, i) => 5000 + i)];
  s.apply([
    { id: 0, type: 'delete_message', message_type: 'stream', message_ids: gone },
  ] as unknown as ServerEvent[]);
  held[1]!.answer(); // made before: with 350
  await tick();
  t.equal(held.length, 3, 'the page asked for again');
  const again = answer(held[2]!.q);
  again.messages = again.messages.filter((m) => m.id !== 350);
  held[2]!.answer(again);
  await older;
  t.equal(list.ids[0], 300, 'the page joined the run');
  t.equal(list.has(350), false, 'without the message deleted meanwhile');
});

t.test("the feed's fetch on its way when the muting changes is asked again", async (t) => {
  const { s, loader, held } = heldSetup();
  const feed = s.list(ALL);
  const topic = s.list(topicNarrow(1, 't'));
  const open = loader.open(feed, 500);
  const openTopic = loader.open(topic, 500);
  // Muted while both are on their way: the feed's answer was made with the topic in it.
  s.apply([
    {
      id: 0,
      type: 'user_topic',
      stream_id: 1,
      topic_name: 't',
      last_updated: 1,
      visibility_policy: 1,
    },
  ] as ServerEvent[]);
  held[0]!.answer();
  held[1]!.answer();
  await openTopic;
  t.equal(topic.size, 201, "the topic's answer is taken: muting does not change its view");
  await tick();
  t.equal(held.length, 3, 'the feed is asked for again');
  t.equal(held[2]!.q.anchor, 500);
  t.equal(feed.loading, true, 'its first answer not taken');
  // Made after the muting: the server leaves the muted topic out (here all of it).
  held[2]!.answer({
    messages: [],
    anchor: 0,
    found_anchor: false,
    found_oldest: true,
    found_newest: true,
    history_limited: false,
  });
  await open;
  t.equal(feed.loaded, true);
  t.equal(feed.size, 0, 'the feed holds none of the muted topic');
  t.equal(loader.fetches, 3);
});

t.test(
  "a channel's view is asked without its muted topics, again when the muting changes",
  async (t) => {
    const { s, loader, held } = heldSetup();
    let event = 0;
    const apply = (e: Record<string, unknown>) =>
      s.apply([{ id: event++, ...e } as unknown as ServerEvent]);
    const policy = (topic_name: string, visibility_policy: number) =>
      apply({ type: 'user_topic', stream_id: 1, topic_name, last_updated: 1, visibility_policy });
    const muteChannel = (value: boolean) =>
      apply({ type: 'subscription', op: 'update', stream_id: 1, property: 'is_muted', value });
    apply({
      type: 'subscription',
      op: 'add',
      subscriptions: [{ stream_id: 1, name: 'c', is_muted: true }],
    });
    policy('Other', 1);
    const channel = s.list(channelNarrow(1));
    const open = loader.open(channel, 500);
    t.same(
      held[0]!.q.narrow,
      [
        { operator: 'channel', operand: 1 },
        { operator: 'topic', operand: 'Other', negated: true },
      ],
      'a muted channel: its muted topics by name',
    );
    // Its topic muted while the fetch is on its way: the answer was made with the topic in it.
    policy('t', 1);
    held[0]!.answer();
    await tick();
    t.equal(held.length, 2, 'asked again');
    t.same(held[1]!.q.narrow, [
      { operator: 'channel', operand: 1 },
      { operator: 'topic', operand: 'Other', negated: true },
      { operator: 'topic', operand: 't', negated: true },
    ]);
    // The channel unmuted meanwhile: asked again as a channel not muted.
    muteChannel(false);
    held[1]!.answer();
    await tick();
    t.equal(held.length, 3, 'asked again');
    t.same(held[2]!.q.narrow, [
      { operator: 'channel', operand: 1 },
      { operator: 'is', operand: 'muted', negated: true },
    ]);
    held[2]!.answer({
      messages: [],
      anchor: 0,
      found_anchor: false,
      found_oldest: true,
      found_newest: true,
      history_limited: false,
    });
    await open;
    t.equal(channel.size, 0, 'the view holds none of the muted topic');
    t.equal(loader.fetches, 3);
  },
);
