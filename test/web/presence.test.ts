/**
 * web/state/presence.ts: a user's status from their times and the server's, the answers and
 * events that change it (people go offline when a later answer leaves them out), whether the
 * page counts as active, and the people list's order and filter.
 */
import t from 'tap';
import {
  Activity,
  IDLE_AFTER_MS,
  peopleList,
  personMatches,
  Presence,
  presenceText,
  statusFromRaw,
  type Person,
  type PresenceStatus,
} from '../../web/state/presence.js';
import { PAGE_SIZE, pageOf } from '../../web/state/users.js';

const T = 1_700_000_000;
const LIMIT = 140;

t.test('statusFromRaw: active, then idle, then offline, by the threshold', (t) => {
  t.equal(statusFromRaw({ server_timestamp: T, active_timestamp: T - 10 }, LIMIT), 'active');
  t.equal(
    statusFromRaw({ server_timestamp: T, active_timestamp: T - 139, idle_timestamp: T }, LIMIT),
    'active',
    'a recent active report wins over a newer idle one',
  );
  t.equal(
    statusFromRaw({ server_timestamp: T, active_timestamp: T - 140, idle_timestamp: T - 5 }, LIMIT),
    'idle',
    'at the threshold the active report is too old; connected recently: idle',
  );
  t.equal(
    statusFromRaw(
      { server_timestamp: T, active_timestamp: T - 500, idle_timestamp: T - 140 },
      LIMIT,
    ),
    'offline',
  );
  t.equal(statusFromRaw({ server_timestamp: T }, LIMIT), 'offline', 'no times: offline');
  t.end();
});

t.test('Presence: the snapshot, a later answer, events', (t) => {
  const p = new Presence(LIMIT, {
    presences: {
      '1': { active_timestamp: T - 5, idle_timestamp: T - 5 },
      '2': { active_timestamp: T - 1000, idle_timestamp: T - 20 },
      '3': { active_timestamp: T - 1000, idle_timestamp: T - 1000 },
    },
    server_timestamp: T,
    presence_last_update_id: 7,
  });
  t.same(
    [1, 2, 3, 4].map((id) => p.status(id)),
    ['active', 'idle', 'offline', 'offline'],
  );
  t.equal(p.lastUpdateId, 7);

  // A minute later only user 2 changed: user 1, left out, is judged by the new time (still
  // active); the answer's id is the next fetch's start.
  p.setInfo({ '2': { active_timestamp: T + 60, idle_timestamp: T + 60 } }, T + 60, 9);
  t.same(
    [1, 2, 3].map((id) => p.status(id)),
    ['active', 'active', 'offline'],
  );
  t.equal(p.lastUpdateId, 9);

  // Past the threshold with nothing new of user 1: offline.
  p.setInfo({}, T + 5 + LIMIT, 9);
  t.equal(p.status(1), 'offline', 'left out past the threshold: offline');
  t.equal(p.status(2), 'active', 'user 2 reported at T+60');

  // A user comes online (the event's legacy format), and one goes idle.
  p.fromEvent(3, { website: { status: 'active', timestamp: T + 200 } }, T + 200);
  t.equal(p.status(3), 'active');
  p.fromEvent(2, { website: { status: 'idle', timestamp: T + 300 } }, T + 300);
  t.equal(p.status(2), 'idle', 'its active report is now too old, its connection recent');
  // An older report does not undo a newer one.
  p.fromEvent(3, { website: { status: 'active', timestamp: T + 100 } }, T + 210);
  t.equal(p.status(3), 'active');
  t.end();
});

t.test('Presence without a snapshot', (t) => {
  const p = new Presence(LIMIT);
  t.equal(p.lastUpdateId, -1, 'the first fetch asks for everyone');
  t.equal(p.status(1), 'offline');
  p.setInfo({ x: { active_timestamp: T }, '5': { active_timestamp: T } }, T, 3);
  t.equal(p.status(5), 'active', 'a key that is no user id is skipped');
  t.end();
});

t.test('Activity: active with the focus or input, idle after five minutes without', (t) => {
  const a = new Activity(0, true);
  t.equal(a.status(0), 'active', 'opened with the focus');
  t.equal(a.newUserInput, true, 'a page load counts as input');
  t.equal(a.status(IDLE_AFTER_MS - 1), 'active');
  t.equal(a.status(IDLE_AFTER_MS), 'idle');
  t.equal(a.touch(IDLE_AFTER_MS + 10, false), true, 'back after idle: report at once');
  t.equal(a.status(IDLE_AFTER_MS + 10), 'active');
  t.equal(a.touch(IDLE_AFTER_MS + 20, true), false, 'still active: no extra report');
  a.newUserInput = false;
  a.touch(IDLE_AFTER_MS + 30, false);
  t.equal(a.newUserInput, false, 'the focus alone is no input');
  a.touch(IDLE_AFTER_MS + 40, true);
  t.equal(a.newUserInput, true);

  const b = new Activity(0, false);
  t.equal(b.status(0), 'idle', 'opened in the background: idle until the user comes');
  t.equal(b.touch(1, true), true);
  t.end();
});

const people: Person[] = [
  { user_id: 1, full_name: 'Zoe Self', email: 'zoe@example.com' },
  { user_id: 2, full_name: 'Élise Martin', email: 'elise@example.com' },
  { user_id: 3, full_name: 'Bob Idle', email: 'bob@example.com' },
  { user_id: 4, full_name: 'alice Active', email: 'alice@example.com' },
  { user_id: 5, full_name: 'Carl Offline', email: 'carl@example.com' },
  { user_id: 6, full_name: 'A Bot', email: 'bot@example.com', is_bot: true },
  { user_id: 7, full_name: 'Gone User', email: 'gone@example.com', is_active: false },
  { user_id: 8, full_name: 'Anna Active', email: 'anna@example.com' },
];
const statuses: Record<number, PresenceStatus> = {
  1: 'active',
  3: 'idle',
  4: 'active',
  8: 'active',
};
const statusOf = (id: number) => statuses[id] ?? 'offline';
const names = (ps: Person[]) => ps.map((p) => p.full_name);

t.test('peopleList: self first, then active, idle, offline, each by name', (t) => {
  t.same(names(peopleList(people, statusOf, 1)), [
    'Zoe Self',
    'alice Active',
    'Anna Active',
    'Bob Idle',
    'Carl Offline',
    'Élise Martin',
  ]);
  t.same(
    names(peopleList(people, statusOf, 1, 'a')),
    ['alice Active', 'Anna Active'],
    'filtered (no bot, though "A Bot" matches)',
  );
  t.notOk(names(peopleList(people, statusOf, 1)).includes('Gone User'), 'no deactivated user');
  t.same(names(peopleList(people, statusOf, 8)).slice(0, 2), ['Anna Active', 'alice Active']);
  t.same(
    names(peopleList(people, statusOf, 8, 'a')),
    ['alice Active', 'Anna Active'],
    'filtering, the user (Anna here) is sorted as anyone',
  );
  t.same(
    names(peopleList(people, statusOf, 1, 'self')),
    ['Zoe Self'],
    'self found by a later word of the name',
  );
  t.end();
});

t.test('the people list a page at a time (pageOf, as the Users panel)', (t) => {
  const crowd: Person[] = Array.from({ length: 250 }, (_, i) => ({
    user_id: 100 + i,
    full_name: `Member ${String(i).padStart(3, '0')}`,
  }));
  const all = [...people, ...crowd];
  const list = peopleList(all, statusOf, 1);
  t.equal(list.length, 256, 'six people and the crowd (no bot, no deactivated user)');
  let page = pageOf(list, PAGE_SIZE);
  t.equal(page.rows.length, 100, 'a hundred drawn at first');
  t.same(names(page.rows).slice(0, 4), ['Zoe Self', 'alice Active', 'Anna Active', 'Bob Idle']);
  t.equal(page.more, 'Show 100 more (100 of 256 shown)');
  page = pageOf(list, page.rows.length + PAGE_SIZE);
  t.same(page.rows.slice(0, 100), list.slice(0, 100), 'the next page adds to the first');
  t.equal(page.more, 'Show 56 more (200 of 256 shown)');
  page = pageOf(list, page.rows.length + PAGE_SIZE);
  t.equal(page.rows.length, 256);
  t.equal(page.more, null, 'all drawn: no button');
  const filtered = peopleList(all, statusOf, 1, 'member 1');
  t.equal(filtered.length, 100, 'Member 100 to 199');
  t.equal(pageOf(filtered, PAGE_SIZE).more, null, 'a page exactly: no button');
  t.end();
});

t.test('personMatches: word starts, any order, accents and case ignored, email', (t) => {
  const elise = people[1]!;
  t.ok(personMatches(elise, 'eli'));
  t.ok(personMatches(elise, 'MART'));
  t.ok(personMatches(elise, 'martin el'), 'words in any order');
  t.notOk(personMatches(elise, 'artin'), 'not inside a word');
  t.ok(personMatches(elise, 'elise@'), 'the email');
  t.ok(personMatches(elise, '  '), 'an empty filter matches');
  t.notOk(personMatches(elise, 'eli x'));
  t.end();
});

t.test('Presence.lastActive: the last active report (idle: the last of either)', (t) => {
  const p = new Presence(LIMIT, {
    presences: {
      '1': { active_timestamp: T - 10 },
      '2': { active_timestamp: T - 600, idle_timestamp: T - 20 },
      '3': { active_timestamp: T - 3600, idle_timestamp: T - 1800 },
      '4': { idle_timestamp: T - 9000 },
    },
    server_timestamp: T,
  });
  t.equal(p.lastActive(1), T - 10, 'active');
  t.equal(p.lastActive(2), T - 20, 'idle: its newer idle report');
  t.equal(p.lastActive(3), T - 3600, 'offline: the last active report, not the idle one');
  t.equal(p.lastActive(4), undefined, 'offline and never active');
  t.equal(p.lastActive(5), undefined, 'nothing known');
  t.end();
});

t.test("presenceText: the card's words, as the reference's", (t) => {
  const now = new Date(2026, 5, 15, 12, 0, 0).getTime();
  const ago = (s: number) => now / 1000 - s;
  t.equal(presenceText('active', ago(5), now), 'Active now');
  t.equal(presenceText('idle', ago(400), now), 'Idle');
  t.equal(presenceText('offline', undefined, now), 'Not active in the last year');
  t.equal(presenceText('offline', ago(150), now), 'Active 2 minutes ago');
  t.equal(presenceText('offline', ago(61), now), 'Active 1 minute ago');
  t.equal(presenceText('offline', ago(59 * 60 + 59), now), 'Active 59 minutes ago');
  t.equal(presenceText('offline', ago(3600), now), 'Active an hour ago');
  t.equal(presenceText('offline', ago(5 * 3600 + 10), now), 'Active 5 hours ago');
  t.equal(presenceText('offline', ago(24 * 3600), now), 'Active yesterday');
  t.equal(presenceText('offline', ago(36 * 3600), now), 'Active yesterday', 'midnight yesterday');
  t.equal(presenceText('offline', ago(40 * 3600), now), 'Active 2 days ago', 'by the calendar');
  t.equal(presenceText('offline', ago(89 * 86400), now), 'Active 89 days ago');
  const march = new Date(2026, 2, 3, 9, 0).getTime() / 1000;
  t.equal(presenceText('offline', march, now), 'Active on Mar 3', '90 days or more: the date');
  const lastYear = new Date(2025, 2, 3, 9, 0).getTime() / 1000;
  t.equal(presenceText('offline', lastYear, now), 'Active on Mar 3, 2025');
  t.equal(presenceText('offline', now / 1000 + 30, now), 'Active 0 minutes ago', 'a clock ahead');
  t.end();
});
