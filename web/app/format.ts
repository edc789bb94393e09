/**
 * Presentation helpers: times and days in the browser's time zone, avatar initials and colours,
 * the text of the server's HTML (for notifications and previews).
 */

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `14:05` or `2:05 PM`, as the user's setting says. */
export function clock(ts: number, twentyFour: boolean): string {
  const d = new Date(ts * 1000);
  if (twentyFour) return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const h = d.getHours() % 12 || 12;
  return `${h}:${pad(d.getMinutes())} ${d.getHours() < 12 ? 'AM' : 'PM'}`;
}

const dayKeys = new Map<number, string>();

/** A local calendar day, as a key (`2026-12-03`); remembered per minute of time. */
export function dayKey(ts: number): string {
  const minute = Math.floor(ts / 60);
  let key = dayKeys.get(minute);
  if (key === undefined) {
    if (dayKeys.size > 20_000) dayKeys.clear();
    const d = new Date(minute * 60_000);
    key = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    dayKeys.set(minute, key);
  }
  return key;
}

const DAY_FMT = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  month: 'short',
  day: 'numeric',
});
const YEAR_FMT = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  year: 'numeric',
});
const FULL_FMT = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short' });

/** "Today", "Yesterday", "Mon, Dec 1", or "Dec 1, 2025". */
export function dayLabel(ts: number, now = Date.now()): string {
  const key = dayKey(ts);
  if (key === dayKey(now / 1000)) return 'Today';
  if (key === dayKey(now / 1000 - 86_400)) return 'Yesterday';
  const d = new Date(ts * 1000);
  return d.getFullYear() === new Date(now).getFullYear() ? DAY_FMT.format(d) : YEAR_FMT.format(d);
}

const fullTimes = new Map<number, string>();

/** The full date and time (a message's tooltip); remembered, formatting is not cheap. */
export function fullTime(ts: number): string {
  let s = fullTimes.get(ts);
  if (s === undefined) {
    if (fullTimes.size > 5000) fullTimes.clear();
    s = FULL_FMT.format(new Date(ts * 1000));
    fullTimes.set(ts, s);
  }
  return s;
}

/** Up to two initials of a name. */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const first = words[0]?.[0] ?? '?';
  const last = words.length > 1 ? (words[words.length - 1]![0] ?? '') : '';
  return (first + last).toUpperCase();
}

/** A stable, readable background colour for a user's initials. */
export function avatarColor(id: number): string {
  const hue = (id * 137.508) % 360;
  return `hsl(${hue.toFixed(0)} 45% 46%)`;
}

/** The text of rendered HTML (never inserted as HTML: only read as text). */
export function htmlText(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  return (doc.body.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** In web/state/format.ts (the local echo's look, tested with the state). */
export { escapeHtml, plainHtml } from '../state/format.js';
