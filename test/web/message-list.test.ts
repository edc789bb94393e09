/**
 * web/state/message-list.ts: the window the DOM holds stays within WINDOW_MAX whatever happens
 * (paging both ways, 2,000 live messages), the run in memory within LIST_MAX, and the window
 * follows new messages only when it showed the newest; what is held for a fetch in flight stays
 * within MAX_HELD.
 */
import t from 'tap';
import {
  LIST_MAX,
  MAX_HELD,
  MessageList,
  STEP,
  WINDOW,
  WINDOW_MAX,
} from '../../web/state/message-list.js';
import { ALL } from '../../web/state/narrow.js';

const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

t.test('the first window opens around the anchor', (t) => {
  const l = new MessageList(ALL);
  l.setInitial(range(1, 201), false, true, 150);
  t.ok(l.start <= l.indexAtOrAfter(150) && l.indexAtOrAfter(150) < l.end, 'the anchor is in it');
  t.ok(l.end - l.start <= WINDOW);
  const newest = new MessageList(ALL);
  newest.setInitial(range(1, 501), false, true, null);
  t.equal(newest.end, 500, 'no anchor: at the newest');
  t.equal(newest.end - newest.start, WINDOW);
  t.equal(newest.atNewest(), true);
  t.end();
});

t.test('2,000 live messages: the window follows and stays bounded', (t) => {
  const l = new MessageList(ALL);
  l.setInitial(range(1, 101), true, true, null);
  let maxWindow = 0;
  let added = 0;
  for (let id = 101; id < 2101; id++) {
    if (l.addLive(id)) added++;
    maxWindow = Math.max(maxWindow, l.end - l.start);
  }
  t.equal(added, 2000, 'every one added');
  t.ok(maxWindow <= WINDOW_MAX, `window at most ${WINDOW_MAX} (was ${maxWindow})`);
  t.equal(l.windowIds().at(-1), 2100, 'the newest shown');
  t.ok(l.size <= LIST_MAX, `run at most ${LIST_MAX} (${l.size})`);
  t.equal(l.foundOldest, false, 'the dropped oldest are no longer "found"');
  t.equal(l.addLive(2100), false, 'a duplicate is ignored');
  t.end();
});

t.test('scrolled up, live messages do not move the window; the run stays bounded', (t) => {
  const l = new MessageList(ALL);
  l.setInitial(range(1, 1001), true, true, 10);
  const before = l.windowIds();
  for (let id = 1001; id < 3001; id++) l.addLive(id);
  t.same(l.windowIds(), before, 'the window did not move');
  t.ok(l.size <= LIST_MAX, `run at most ${LIST_MAX}`);
  t.equal(l.foundNewest, false, 'the newest were dropped, to be fetched again');
  t.equal(l.addLive(5000), false, 'later arrivals wait for that fetch');
  t.end();
});

t.test('paging both ways keeps the window bounded', (t) => {
  const l = new MessageList(ALL);
  l.setInitial(range(5000, 5200), false, false, 5100);
  // Up: fetch older pages and slide.
  for (let page = 0; page < 10; page++) {
    if (!l.canShowOlder()) {
      const first = l.ids[0]!;
      l.prepend(range(first - STEP, first), first - STEP <= 4000);
    }
    l.showOlder();
    t.ok(l.end - l.start <= WINDOW_MAX, `window bounded going up (page ${page})`);
  }
  t.equal(l.atOldest(), true, 'reached the oldest');
  t.equal(l.windowIds()[0], 4000);
  // Down again: slide over what the run holds, fetch the rest.
  for (let page = 0; page < 20 && !l.atNewest(); page++) {
    if (!l.canShowNewer()) {
      const last = l.ids.at(-1)!;
      l.append(range(last + 1, last + 1 + STEP), last + STEP >= 5499);
    }
    l.showNewer();
    t.ok(l.end - l.start <= WINDOW_MAX, `window bounded going down (page ${page})`);
    t.ok(l.size <= LIST_MAX);
  }
  t.equal(l.atNewest(), true);
  t.equal(l.windowIds().at(-1), 5499);
  t.end();
});

t.test('removing messages keeps the window consistent', (t) => {
  const l = new MessageList(ALL);
  l.setInitial(range(1, 401), true, true, null);
  const [s, e] = [l.start, l.end];
  l.remove([1, 2, 3, 399]);
  t.equal(l.start, s - 3);
  t.equal(l.end, e - 4);
  t.equal(l.windowIds().includes(399), false);
  t.equal(l.remove([9999]), false, 'nothing to remove');
  const small = new MessageList(ALL);
  small.setInitial([1, 2, 3], true, true, null);
  small.remove([1, 2, 3]);
  t.same([small.start, small.end, small.size], [0, 0, 0]);
  t.end();
});

t.test('messages arriving during a fetch are not lost', (t) => {
  const l = new MessageList(ALL);
  l.loading = true;
  t.equal(l.addLive(105), false, 'held while the first fetch is in flight');
  l.loading = false;
  l.setInitial(range(1, 105), true, true, null);
  t.equal(l.ids.at(-1), 105, 'joined the run: the answer reached the newest');
  const m = new MessageList(ALL);
  m.setInitial(range(1, 101), true, false, null);
  m.loadingNewer = true;
  m.addLive(250);
  m.loadingNewer = false;
  m.append(range(101, 201), true);
  t.equal(m.ids.at(-1), 250, 'after a newer page that reached the newest');
  const n = new MessageList(ALL);
  n.loading = true;
  n.addLive(300);
  n.loading = false;
  n.setInitial(range(1, 101), true, false, null);
  t.equal(n.has(300), false, 'not when the answer stops short of the newest (fetched later)');
  t.end();
});

t.test('a first fetch is answered with what the events did meanwhile', (t) => {
  // Arrived during the fetch: some the answer holds (made after them), some it does not.
  const l = new MessageList(ALL);
  l.setInitial(range(1, 101), true, false, 50);
  l.startLoading();
  l.addLive(203);
  l.addLive(201);
  l.addLive(204);
  l.remove([204, 150]); // deleted (or moved away) meanwhile: one that arrived, one answered
  l.loading = false;
  l.setInitial(range(101, 202), false, true, null);
  t.same(l.ids, [...range(101, 150), ...range(151, 202), 203], 'both, in order, once each');
  t.equal(l.windowIds().at(-1), 203, 'the window at the newest');
  t.equal(l.atNewest(), true);
  t.equal(l.stale, false);

  // Moved in meanwhile: the answer may not hold it, so the run stays stale.
  const m = new MessageList(ALL);
  m.setInitial(range(1, 101), true, false, 50);
  m.startLoading();
  m.markStale();
  m.loading = false;
  m.setInitial(range(101, 201), false, true, null);
  t.equal(m.stale, true, 'fetched again next time it is shown');

  // A fetch that failed: what it saw does not touch the next one's answer.
  const n = new MessageList(ALL);
  n.startLoading();
  n.remove([7]);
  n.markStale();
  n.loading = false;
  n.startLoading();
  n.loading = false;
  n.setInitial(range(1, 11), true, true, null);
  t.same(n.ids, range(1, 11), 'the next answer whole');
  t.equal(n.stale, false);

  // A newer page answered while a first fetch is in flight: the arrivals wait for that too.
  const o = new MessageList(ALL);
  o.setInitial(range(1, 101), true, false, 50);
  o.loadingNewer = true;
  o.startLoading();
  o.addLive(300);
  o.loadingNewer = false;
  o.append(range(101, 201), true);
  t.equal(o.ids.at(-1), 300, 'joined the run the page reached');
  o.loading = false;
  o.setInitial(range(150, 250), false, true, null);
  t.equal(o.ids.at(-1), 300, 'and the run the first fetch brought');
  t.end();
});

t.test('what is held for a fetch stays bounded: past MAX_HELD it is dropped', (t) => {
  const l = new MessageList(ALL);
  l.setInitial(range(1, 101), true, true, null);
  l.startLoading();
  const mark = l.holdMark();
  for (let id = 101; id < 101 + MAX_HELD; id++) l.addLive(id);
  t.equal(l.heldLostSince(mark), false, 'MAX_HELD arrivals are held');
  l.remove([50]);
  t.equal(l.heldLostSince(mark), true, 'one more: the holds are dropped');
  const again = l.holdMark();
  l.addLive(5000);
  t.equal(l.heldLostSince(again), false, 'a fetch started after that holds anew');
  // The fetch fails: the arrival held since joins the list shown, which lacks those dropped.
  l.fetchFailed(null);
  t.equal(l.ids.at(-1), 5000);
  t.equal(l.stale, true, 'so it is fetched again when shown next');
  t.end();
});
