/**
 * web/state/loader.ts with a fake `GET /messages`: the first fetch opens at the first unread
 * message, older and newer pages join the run on the right side, one fetch per direction at a
 * time, a failure is kept on the list (shown with a retry) instead of thrown, and an answer is
 * taken with what the events did while it was on its way.
 */
import t from 'tap';
import type { GetMessages } from '../../src/client/api.js';
import type {
  Message,
  MessagesResponse,
  RegisterResponse,
  ServerEvent,
} from '../../src/client/types.js';
import { ChatState } from '../../web/state/chat.js';
import { Loader } from '../../web/state/loader.js';
import { ALL } from '../../web/state/narrow.js';
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
  t.same(asked[0]!.narrow, []);
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
  // answer(r): the server's answer for the query, or `r`.
  const held: { q: GetMessages; answer: (r?: MessagesResponse) => void }[] = [];
  const loader = new Loader(
    s,
    (q) => new Promise((resolve) => held.push({ q, answer: (r) => resolve(r ?? answer(q)) })),
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
