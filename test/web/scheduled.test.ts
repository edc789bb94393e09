/**
 * web/state/scheduled.ts: the scheduled messages kept from register's snapshot and the
 * `scheduled_messages` events, soonest first; the suggested send times from a given "now" in a
 * given time zone (weekdays, the end of the week, summer time); the words for a time; the date
 * and time input's value both ways; what sending the compose box does (send, a new scheduled
 * message, or the edited one changed: PATCH, not a second one); the sidebar's count; and the
 * drafts' change counter the Drafts view follows.
 */
import t from 'tap';
import {
  composeAction,
  inputValue,
  parseInputValue,
  ScheduledMessages,
  schedulePresets,
  sidebarCount,
  timeProblem,
  whenLabel,
  zonedMs,
  type ScheduledMessage,
} from '../../web/state/scheduled.js';
import { Drafts } from '../../web/state/drafts.js';

const sm = (id: number, ts: number, extra: Partial<ScheduledMessage> = {}): ScheduledMessage => ({
  scheduled_message_id: id,
  type: 'stream',
  to: 9,
  topic: 'plans',
  content: `message ${id}`,
  rendered_content: `<p>message ${id}</p>`,
  scheduled_delivery_timestamp: ts,
  failed: false,
  ...extra,
});

const utc = (iso: string) => Date.parse(iso);

t.test('the list: snapshot, add, update, remove; soonest first', (t) => {
  const list = new ScheduledMessages([sm(1, 300), sm(2, 100)]);
  t.same(
    list.all().map((m) => m.scheduled_message_id),
    [2, 1],
    'soonest first',
  );
  const rev = list.rev.value;
  t.ok(list.apply({ type: 'scheduled_messages', op: 'add', scheduled_messages: [sm(3, 200)] }));
  t.same(
    list.all().map((m) => m.scheduled_message_id),
    [2, 3, 1],
  );
  t.ok(
    list.apply({
      type: 'scheduled_messages',
      op: 'update',
      scheduled_message: sm(2, 400, { content: 'changed', failed: true }),
    }),
  );
  t.same(
    list.all().map((m) => m.scheduled_message_id),
    [3, 1, 2],
    'rescheduled later: moves down',
  );
  t.equal(list.get(2)?.content, 'changed');
  t.equal(list.get(2)?.failed, true);
  t.ok(list.apply({ type: 'scheduled_messages', op: 'remove', scheduled_message_id: 3 }));
  t.notOk(
    list.apply({ type: 'scheduled_messages', op: 'remove', scheduled_message_id: 3 }),
    'removing one not there changes nothing',
  );
  t.equal(list.size, 2);
  t.equal(list.rev.value, rev + 3, 'each change bumps the counter once');
  t.same(
    new ScheduledMessages([sm(5, 100), sm(4, 100)]).all().map((m) => m.scheduled_message_id),
    [4, 5],
    'at the same time: the one scheduled first',
  );
  list.reset([]);
  t.equal(list.size, 0, 'a new snapshot replaces all');
  t.end();
});

t.test('suggested times on a weekday, in UTC', (t) => {
  const keys = (now: string, tz = 'UTC') => schedulePresets(utc(now), tz).map((p) => p.key);
  // 2026-12-02 is a Wednesday.
  t.same(keys('2026-12-02T08:00:00Z'), ['today-9am', 'today-4pm'], 'early: today');
  t.same(
    keys('2026-12-02T08:56:00Z'),
    ['today-4pm', 'tomorrow-9am'],
    '9 AM less than five minutes ahead: not offered',
  );
  t.same(keys('2026-12-02T17:00:00Z'), ['tomorrow-9am', 'tomorrow-4pm'], 'evening: tomorrow');
  const p = schedulePresets(utc('2026-12-02T08:00:00Z'), 'UTC');
  t.equal(p[0]!.timestamp, utc('2026-12-02T09:00:00Z') / 1000);
  t.equal(p[0]!.label, 'Today at 9:00 AM');
  t.equal(p[1]!.label, 'Today at 4:00 PM');
  t.equal(
    schedulePresets(utc('2026-12-02T08:00:00Z'), 'UTC', true)[1]!.label,
    'Today at 16:00',
    'a 24-hour clock when the user has one',
  );
  t.end();
});

t.test('suggested times at the end of the week: Monday 9 AM', (t) => {
  const p = schedulePresets(utc('2026-12-04T17:00:00Z'), 'UTC'); // a Friday
  t.same(
    p.map((x) => x.key),
    ['tomorrow-9am', 'tomorrow-4pm', 'monday-9am'],
  );
  t.equal(p[2]!.timestamp, utc('2026-12-07T09:00:00Z') / 1000, 'the next Monday');
  t.equal(p[2]!.label, 'Monday, Dec 7 at 9:00 AM');
  t.same(
    schedulePresets(utc('2026-12-05T10:00:00Z'), 'UTC').map((x) => x.key),
    ['today-4pm', 'tomorrow-9am', 'monday-9am'],
    'Saturday',
  );
  t.same(
    schedulePresets(utc('2026-12-06T20:00:00Z'), 'UTC').map((x) => x.key),
    ['tomorrow-9am', 'tomorrow-4pm'],
    'Sunday evening: tomorrow is Monday, not offered twice',
  );
  t.end();
});

t.test('suggested times follow the time zone and summer time', (t) => {
  // 13:00 UTC is 8 AM in New York (EST, UTC−5).
  const ny = schedulePresets(utc('2026-12-02T13:00:00Z'), 'America/New_York');
  t.equal(ny[0]!.key, 'today-9am');
  t.equal(ny[0]!.timestamp, utc('2026-12-02T14:00:00Z') / 1000, '9 AM in New York');
  // 23:30 UTC on Dec 2 is already Dec 3 in Tokyo (08:30).
  const tokyo = schedulePresets(utc('2026-12-02T23:30:00Z'), 'Asia/Tokyo');
  t.equal(tokyo[0]!.timestamp, utc('2026-12-03T00:00:00Z') / 1000, 'Tokyo’s own day');
  // Summer time begins in New York on 2026-03-08 at 2 AM: 9 AM that day is UTC−4.
  t.equal(
    zonedMs({ year: 2026, month: 3, day: 8, hour: 9, minute: 0 }, 'America/New_York'),
    utc('2026-03-08T13:00:00Z'),
  );
  t.equal(
    zonedMs({ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, 'America/New_York'),
    utc('2026-03-08T07:30:00Z'),
    'a skipped time: the hour after',
  );
  t.equal(
    zonedMs({ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, 'America/New_York'),
    utc('2026-11-01T05:30:00Z'),
    'a time that happens twice: the first',
  );
  // Friday evening before the change: Monday 9 AM is in summer time.
  const before = schedulePresets(utc('2026-03-06T23:00:00Z'), 'America/New_York');
  t.equal(before.at(-1)!.timestamp, utc('2026-03-09T13:00:00Z') / 1000);
  t.end();
});

t.test('times in words; the date and time input both ways', (t) => {
  const now = utc('2026-12-02T08:00:00Z');
  t.equal(whenLabel(utc('2026-12-02T21:00:00Z') / 1000, now, 'UTC'), 'Today at 9:00 PM');
  t.equal(whenLabel(utc('2026-12-03T00:05:00Z') / 1000, now, 'UTC'), 'Tomorrow at 12:05 AM');
  t.equal(whenLabel(utc('2026-12-05T12:00:00Z') / 1000, now, 'UTC'), 'Saturday, Dec 5 at 12:00 PM');
  t.equal(whenLabel(utc('2026-12-20T09:00:00Z') / 1000, now, 'UTC'), 'Dec 20 at 9:00 AM');
  t.equal(whenLabel(utc('2027-01-04T09:00:00Z') / 1000, now, 'UTC'), 'Jan 4, 2027 at 9:00 AM');
  t.equal(whenLabel(utc('2026-12-02T21:00:00Z') / 1000, now, 'UTC', true), 'Today at 21:00');
  const ts = utc('2026-12-02T14:30:00Z') / 1000;
  t.equal(inputValue(ts, 'America/New_York'), '2026-12-02T09:30');
  t.equal(parseInputValue('2026-12-02T09:30', 'America/New_York'), ts);
  t.equal(parseInputValue('2026-12-02T09:30:00', 'America/New_York'), ts, 'with seconds');
  t.equal(parseInputValue('', 'UTC'), null, 'nothing chosen');
  t.equal(parseInputValue('2026-13-02T09:30', 'UTC'), null, 'no 13th month');
  t.equal(parseInputValue('tomorrow', 'UTC'), null);
  t.equal(timeProblem(null, now), 'Choose a date and time.');
  t.match(timeProblem(now / 1000 - 60, now), /passed/);
  t.match(timeProblem(now / 1000, now), /passed/, 'now is not the future');
  t.equal(timeProblem(now / 1000 + 60, now), null);
  t.end();
});

t.test('sending the compose box: now, a new scheduled message, or the edited one', (t) => {
  const now = utc('2026-12-02T08:00:00Z');
  const later = now / 1000 + 3600;
  const topic = { kind: 'stream' as const, streamId: 9, topic: 'plans' };
  const dm = { kind: 'dm' as const, userIds: [4, 7] };
  t.same(composeAction(null, topic, 'hi', null, now), { kind: 'send' }, 'no time: sent now');
  t.same(composeAction(null, topic, 'hi', later, now), {
    kind: 'create',
    params: {
      type: 'stream',
      to: 9,
      topic: 'plans',
      content: 'hi',
      scheduled_delivery_timestamp: later,
    },
  });
  t.same(composeAction(null, dm, 'hi', later, now), {
    kind: 'create',
    params: { type: 'direct', to: [4, 7], content: 'hi', scheduled_delivery_timestamp: later },
  });
  t.match(composeAction(null, dm, 'hi', now / 1000 - 1, now), { kind: 'problem' }, 'a past time');
  const editing = sm(12, later + 600);
  t.same(
    composeAction(editing, dm, 'new text', null, now),
    {
      kind: 'edit',
      id: 12,
      params: {
        type: 'direct',
        to: [4, 7],
        content: 'new text',
        scheduled_delivery_timestamp: later + 600,
      },
    },
    'editing, sent: the same one changed at its own time, not a new one',
  );
  t.match(
    composeAction(editing, topic, 'x', later, now),
    { kind: 'edit', id: 12, params: { scheduled_delivery_timestamp: later } },
    'editing, a new time chosen: rescheduled',
  );
  const passed = sm(13, now / 1000 - 10);
  t.match(
    composeAction(passed, topic, 'x', null, now),
    { kind: 'problem', problem: /new time/ },
    'an edited one whose time has passed asks for a new time',
  );
  t.end();
});

t.test('the counts: none at zero; drafts count live', (t) => {
  t.equal(sidebarCount(0), null);
  t.equal(sidebarCount(3), 3);
  let ms = 1000;
  const drafts = new Drafts(null, '1@x', () => ms);
  const rev = drafts.rev.value;
  drafts.set({ type: 'stream', streamId: 1, topic: 'a' }, 'one');
  ms += 10;
  drafts.set({ type: 'direct', userIds: [2] }, 'two');
  t.equal(drafts.size, 2);
  t.equal(drafts.rev.value, rev + 2, 'each edit counted');
  drafts.set({ type: 'direct', userIds: [2] }, 'two');
  t.equal(drafts.rev.value, rev + 2, 'the same text again: no change');
  t.same(
    drafts.all().map((d) => d.content),
    ['two', 'one'],
    'the most recently edited first',
  );
  drafts.delete({ type: 'stream', streamId: 1, topic: 'A' });
  t.equal(drafts.size, 1, 'deleted (topics compared without case)');
  t.equal(drafts.rev.value, rev + 3);
  t.end();
});
