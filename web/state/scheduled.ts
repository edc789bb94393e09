/**
 * Scheduled messages (the reference's "Schedule message" and its Scheduled messages view): the
 * user's messages the server is to send later, as register's `scheduled_messages` lists them and
 * the `scheduled_messages` events (add, update, remove) keep them, soonest first; the send times
 * the compose box's menu offers, computed from a given "now" in a given time zone (as the
 * reference's: today 9 AM or 4 PM while still ahead, tomorrow 9 AM and 4 PM, Monday 9 AM at the
 * end of the week); and whether the compose box creates a scheduled message, edits the one it was
 * loaded with, or sends at once. Framework-free: no DOM, no fetch.
 */
// The list the controller keeps from the first load (scheduled-store.ts); the compose box's and
// the view's parts, here, load with them.
export {
  ScheduledMessages,
  sidebarCount,
  type ScheduledEvent,
  type ScheduledMessage,
} from './scheduled-store.js';
import type { ScheduledMessage } from './scheduled-store.js';

/** The reference's shortest delay for a suggested time (MINIMUM_SCHEDULED_MESSAGE_DELAY). */
export const MIN_PRESET_DELAY_SECONDS = 5 * 60;

// ---- Times in a time zone ---------------------------------------------------------------------

export type Wall = { year: number; month: number; day: number; hour: number; minute: number };

const formats = new Map<string, Intl.DateTimeFormat>();

function partsFormat(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    formats.set(timeZone, f);
  }
  return f;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** The wall clock in `timeZone` at `ms`, with the weekday (0 = Sunday). */
export function wallTime(ms: number, timeZone: string): Wall & { weekday: number } {
  const p: Record<string, string> = {};
  for (const x of partsFormat(timeZone).formatToParts(new Date(ms))) p[x.type] = x.value;
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour) % 24,
    minute: Number(p.minute),
    weekday: WEEKDAYS.indexOf(p.weekday ?? ''),
  };
}

/**
 * The moment (ms) the wall clock in `timeZone` reads `w` (days past a month's end roll over, as
 * Date.UTC's do). A time skipped by a change to summer time comes out an hour later; a time that
 * happens twice, the first.
 */
export function zonedMs(w: Wall, timeZone: string): number {
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute);
  const offsetAt = (ms: number) => {
    const x = wallTime(ms, timeZone);
    return (
      Date.UTC(x.year, x.month - 1, x.day, x.hour, x.minute) - Math.floor(ms / 60_000) * 60_000
    );
  };
  const first = asUtc - offsetAt(asUtc);
  const second = asUtc - offsetAt(first);
  const reads = (ms: number) => {
    const x = wallTime(ms, timeZone);
    return Date.UTC(x.year, x.month - 1, x.day, x.hour, x.minute) === asUtc;
  };
  const fits = [first, second].filter(reads);
  // Neither reads it: a time the clocks skip, taken as the moment after the change.
  return fits.length ? Math.min(...fits) : Math.max(first, second);
}

export type Preset = { key: string; label: string; timestamp: number };

/**
 * The suggested send times at `nowMs` in `timeZone`, soonest first: today at 9 AM and 4 PM while
 * at least MIN_PRESET_DELAY_SECONDS ahead, else tomorrow's; two in all; and Monday at 9 AM from
 * Friday to Sunday (when not tomorrow's already).
 */
export function schedulePresets(nowMs: number, timeZone: string, twentyFour = false): Preset[] {
  const now = wallTime(nowMs, timeZone);
  const at = (days: number, hour: number) =>
    zonedMs({ year: now.year, month: now.month, day: now.day + days, hour, minute: 0 }, timeZone);
  const ahead = (ms: number) => ms - nowMs >= MIN_PRESET_DELAY_SECONDS * 1000;
  const candidates: [string, number][] = [
    ['today-9am', at(0, 9)],
    ['today-4pm', at(0, 16)],
    ['tomorrow-9am', at(1, 9)],
    ['tomorrow-4pm', at(1, 16)],
  ];
  const out = candidates.filter(([, ms]) => ahead(ms)).slice(0, 2);
  if (now.weekday === 5 || now.weekday === 6 || now.weekday === 0) {
    const days = (8 - now.weekday) % 7 || 7;
    const monday = at(days, 9);
    if (!out.some(([, ms]) => ms === monday)) out.push(['monday-9am', monday]);
  }
  return out.map(([key, ms]) => ({
    key,
    label: whenLabel(ms / 1000, nowMs, timeZone, twentyFour),
    timestamp: ms / 1000,
  }));
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function clockText(w: Wall, twentyFour: boolean): string {
  if (twentyFour) return `${pad(w.hour)}:${pad(w.minute)}`;
  return `${w.hour % 12 || 12}:${pad(w.minute)} ${w.hour < 12 ? 'AM' : 'PM'}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * When a message goes, in words: "Today at 4:00 PM", "Tomorrow at 9:00 AM", "Monday, Dec 7 at
 * 9:00 AM" (within the week to come), "Dec 24, 2027 at 9:00 AM" (another year).
 */
export function whenLabel(ts: number, nowMs: number, timeZone: string, twentyFour = false): string {
  const w = wallTime(ts * 1000, timeZone);
  const now = wallTime(nowMs, timeZone);
  const dayNumber = (x: Wall) => Date.UTC(x.year, x.month - 1, x.day) / 86_400_000;
  const days = dayNumber(w) - dayNumber(now);
  const time = clockText(w, twentyFour);
  if (days === 0) return `Today at ${time}`;
  if (days === 1) return `Tomorrow at ${time}`;
  const date = `${MONTHS[w.month - 1]} ${w.day}`;
  if (days > 1 && days < 7) return `${DAY_NAMES[w.weekday]}, ${date} at ${time}`;
  if (w.year === now.year) return `${date} at ${time}`;
  return `${date}, ${w.year} at ${time}`;
}

/** A date and time input's value (`2026-12-07T09:00`) for a moment, in `timeZone`. */
export function inputValue(ts: number, timeZone: string): string {
  const w = wallTime(ts * 1000, timeZone);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}`;
}

/** The moment (UNIX seconds) a date and time input's value names in `timeZone`; null if none. */
export function parseInputValue(value: string, timeZone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?$/.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59) return null;
  return Math.floor(zonedMs({ year, month, day, hour, minute }, timeZone) / 1000);
}

/** Why a chosen time cannot be taken (in the past, or none), or null. */
export function timeProblem(ts: number | null, nowMs: number): string | null {
  if (ts === null) return 'Choose a date and time.';
  if (ts * 1000 <= nowMs) return 'That time has passed: choose a time in the future.';
  return null;
}

// ---- What the compose box does -----------------------------------------------------------------

export type ScheduleTo =
  { kind: 'stream'; streamId: number; topic: string } | { kind: 'dm'; userIds: number[] };

export type ScheduleParams = {
  type: 'stream' | 'direct';
  to: number | number[];
  topic?: string;
  content: string;
  scheduled_delivery_timestamp: number;
};

export type ComposeAction =
  | { kind: 'send' }
  | { kind: 'create'; params: ScheduleParams }
  | { kind: 'edit'; id: number; params: ScheduleParams }
  | { kind: 'problem'; problem: string };

/**
 * What sending the compose box does: with no time chosen, send now, unless the box holds a
 * scheduled message being edited (then that one is changed, at its own time: PATCH, never a new
 * one); with a time, schedule (a new one, or the edited one moved to that time).
 */
export function composeAction(
  editing: ScheduledMessage | null | undefined,
  to: ScheduleTo,
  content: string,
  at: number | null,
  nowMs: number,
): ComposeAction {
  if (at === null && !editing) return { kind: 'send' };
  const when = at ?? editing!.scheduled_delivery_timestamp;
  const problem = timeProblem(when, nowMs);
  if (problem) {
    return {
      kind: 'problem',
      problem:
        at === null ? 'Its time has passed: choose a new time with “Schedule message”.' : problem,
    };
  }
  const params: ScheduleParams =
    to.kind === 'stream'
      ? {
          type: 'stream',
          to: to.streamId,
          topic: to.topic,
          content,
          scheduled_delivery_timestamp: when,
        }
      : { type: 'direct', to: to.userIds, content, scheduled_delivery_timestamp: when };
  return editing
    ? { kind: 'edit', id: editing.scheduled_message_id, params }
    : { kind: 'create', params };
}

/** A channel as a destination names it: its name, and whether it was archived. */
export type DestinationChannel = { name: string; archived: boolean };

/**
 * Where a scheduled message (or a draft) goes, in words: "To Othello", "#general › lunch". A
 * channel archived since (the message then fails to go) keeps its name, marked "(archived
 * channel)"; one the app does not know at all (a private channel the user was removed from) is
 * "Unknown channel" rather than a made-up name.
 */
export function destinationText(
  to:
    | { kind: 'dm'; userIds: readonly number[] }
    | { kind: 'stream'; streamId: number | null; topic: string },
  look: {
    channel: (id: number) => DestinationChannel | undefined;
    topic: (topic: string) => string;
    dm: (ids: readonly number[]) => string;
  },
): string {
  if (to.kind === 'dm') return `To ${look.dm(to.userIds)}`;
  if (to.streamId === null) return 'No channel';
  const ch = look.channel(to.streamId);
  const where = !ch
    ? 'Unknown channel'
    : ch.archived
      ? `#${ch.name} (archived channel)`
      : `#${ch.name}`;
  return `${where} › ${look.topic(to.topic)}`;
}
