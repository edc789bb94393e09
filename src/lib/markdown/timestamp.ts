/**
 * `<time:…>`: the text between `<time:` and `>` read as a date and time the way the reference
 * reads it (a lenient date parser in the manner of python-dateutil, then a Unix timestamp), or
 * null when it is neither. A time without a zone is UTC; missing date parts are today's (UTC).
 * Zone abbreviations are the reference's list of common ones (ambiguous ones take its choice).
 */

/** Abbreviation → offset in seconds east of UTC (the reference's common_timezones). */
const ZONES: Record<string, number> = {
  SST: -39600,
  HST: -36000,
  AKST: -32400,
  HDT: -32400,
  AKDT: -28800,
  PST: -28800,
  MST: -25200,
  PDT: -25200,
  CST: -21600,
  MDT: -21600,
  CDT: -18000,
  EST: -18000,
  AST: -14400,
  EDT: -14400,
  NST: -12600,
  ADT: -10800,
  NDT: -9000,
  GMT: 0,
  UTC: 0,
  UT: 0,
  Z: 0,
  WET: 0,
  BST: 3600,
  CET: 3600,
  MET: 3600,
  WAT: 3600,
  WEST: 3600,
  CAT: 7200,
  CEST: 7200,
  EET: 7200,
  MEST: 7200,
  SAST: 7200,
  EAT: 10800,
  EEST: 10800,
  IDT: 10800,
  MSK: 10800,
  PKT: 18000,
  IST: 19800,
  WIB: 25200,
  AWST: 28800,
  HKT: 28800,
  WITA: 28800,
  JST: 32400,
  KST: 32400,
  WIT: 32400,
  ACST: 34200,
  AEST: 36000,
  CHST: 36000,
  ACDT: 37800,
  AEDT: 39600,
  NZST: 43200,
  NZDT: 46800,
};

const MONTHS = [
  ['jan', 'january'],
  ['feb', 'february'],
  ['mar', 'march'],
  ['apr', 'april'],
  ['may'],
  ['jun', 'june'],
  ['jul', 'july'],
  ['aug', 'august'],
  ['sep', 'sept', 'september'],
  ['oct', 'october'],
  ['nov', 'november'],
  ['dec', 'december'],
];
const MONTH_BY_NAME = new Map<string, number>();
MONTHS.forEach((names, i) => names.forEach((n) => MONTH_BY_NAME.set(n, i + 1)));
const WEEKDAYS = new Set(
  'mon monday tue tues tuesday wed wednesday thu thur thurs thursday fri friday sat saturday sun sunday'.split(
    ' ',
  ),
);
/** Words the parser skips, as dateutil's "jump" list. */
const SKIP = new Set(['at', 'on', 'and', 'ad', 'of', 'the', 'st', 'nd', 'rd', 'th', 'm', 't']);

type Parts = {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  ms?: number;
  /** Seconds east of UTC. */
  offset?: number;
};

class Invalid extends Error {}

function setOnce(p: Parts, key: keyof Parts, v: number): void {
  if (p[key] !== undefined) throw new Invalid();
  p[key] = v;
}

const TOKEN = /\d+(?:\.\d+)?|[A-Za-z]+|[+-]|:|\S/g;

/** Reads loose date text into parts; throws Invalid when it cannot. */
function parseParts(text: string): Parts {
  const p: Parts = {};
  const tokens = [...text.matchAll(TOKEN)].map((m) => m[0]);
  if (tokens.length === 0) throw new Invalid();
  const loose: number[] = []; // numbers not yet placed (day, month, year)
  let pendingHour = false;
  let i = 0;
  const peek = (k = 0) => tokens[i + k];
  while (i < tokens.length) {
    const tok = tokens[i]!;
    const lower = tok.toLowerCase();
    if (/^\d/.test(tok)) {
      // ISO date 2017-12-31 (or 2017/12/31, 2017.12.31)
      if (
        tok.length === 4 &&
        ['-', '/', '.'].includes(peek(1) ?? '') &&
        /^\d{1,2}$/.test(peek(2) ?? '') &&
        peek(3) === peek(1) &&
        /^\d{1,2}/.test(peek(4) ?? '')
      ) {
        setOnce(p, 'year', Number(tok));
        setOnce(p, 'month', Number(peek(2)));
        const d = peek(4)!;
        const dm = /^(\d{1,2})$/.exec(d);
        if (!dm) throw new Invalid();
        setOnce(p, 'day', Number(dm[1]));
        i += 5;
        // 2017-12-31T10:30 reads the T as a separator.
        if (peek()?.toUpperCase().startsWith('T') && /^T(\d{1,2})?$/i.test(peek()!)) {
          const rest = peek()!.slice(1);
          if (rest) {
            tokens[i] = rest;
          } else i++;
        }
        continue;
      }
      // Time 10:30[:00[.123]]
      if (peek(1) === ':' && /^\d{1,2}$/.test(tok)) {
        setOnce(p, 'hour', Number(tok));
        const mm = peek(2);
        if (!mm || !/^\d{1,2}$/.test(mm)) throw new Invalid();
        setOnce(p, 'minute', Number(mm));
        i += 3;
        if (peek() === ':' && /^\d{1,2}(?:\.\d+)?$/.test(peek(1) ?? '')) {
          const s = Number(peek(1));
          setOnce(p, 'second', Math.floor(s));
          p.ms = Math.round((s - Math.floor(s)) * 1000);
          i += 2;
        }
        pendingHour = true;
        continue;
      }
      // 5th, 1st, 22nd
      if (/^(st|nd|rd|th)$/i.test(peek(1) ?? '') && /^\d{1,2}$/.test(tok)) {
        setOnce(p, 'day', Number(tok));
        i += 2;
        continue;
      }
      // A number followed by am/pm is an hour.
      if (/^(am|pm|a|p)$/i.test(peek(1) ?? '') && /^\d{1,2}$/.test(tok)) {
        setOnce(p, 'hour', Number(tok));
        pendingHour = true;
        i++;
        continue;
      }
      if (/^\d{8}$/.test(tok) && p.year === undefined) {
        setOnce(p, 'year', Number(tok.slice(0, 4)));
        setOnce(p, 'month', Number(tok.slice(4, 6)));
        setOnce(p, 'day', Number(tok.slice(6)));
        i++;
        continue;
      }
      if (tok.includes('.') || tok.length > 4) throw new Invalid();
      loose.push(Number(tok));
      if (tok.length > 2) loose[loose.length - 1] = -Number(tok); // marks a written-out year
      i++;
      continue;
    }
    if (/^[A-Za-z]+$/.test(tok)) {
      const month = MONTH_BY_NAME.get(lower);
      if (month !== undefined) {
        setOnce(p, 'month', month);
        i++;
        continue;
      }
      if (WEEKDAYS.has(lower) || SKIP.has(lower)) {
        i++;
        continue;
      }
      if (/^(am|pm|a|p)$/.test(lower)) {
        if (!pendingHour || p.hour === undefined || p.hour > 12 || p.hour === 0)
          throw new Invalid();
        if (lower.startsWith('p') && p.hour < 12) p.hour += 12;
        else if (lower.startsWith('a') && p.hour === 12) p.hour = 0;
        pendingHour = false;
        i++;
        if (peek()?.toLowerCase() === 'm' && lower.length === 1) i++;
        continue;
      }
      const zone = ZONES[tok.toUpperCase()];
      if (zone !== undefined && (p.hour !== undefined || p.day !== undefined)) {
        setOnce(p, 'offset', zone);
        i++;
        // UTC+3, GMT-05:00
        if ((peek() === '+' || peek() === '-') && /^\d/.test(peek(1) ?? '')) {
          p.offset = undefined;
          continue;
        }
        continue;
      }
      throw new Invalid();
    }
    if ((tok === '+' || tok === '-') && p.hour !== undefined && /^\d/.test(peek(1) ?? '')) {
      // +05:30, +0530, +05
      const sign = tok === '-' ? -1 : 1;
      const n = peek(1)!;
      let h: number;
      let m = 0;
      if (/^\d{4}$/.test(n)) {
        h = Number(n.slice(0, 2));
        m = Number(n.slice(2));
        i += 2;
      } else if (/^\d{1,2}$/.test(n)) {
        h = Number(n);
        i += 2;
        if (peek() === ':' && /^\d{2}$/.test(peek(1) ?? '')) {
          m = Number(peek(1));
          i += 2;
        }
      } else throw new Invalid();
      const off = sign * (h * 3600 + m * 60);
      // An offset of a day or more is not an offset.
      if (Math.abs(off) >= 86400) throw new Invalid();
      p.offset = off;
      continue;
    }
    if ([',', '/', '.', '-'].includes(tok)) {
      i++;
      continue;
    }
    throw new Invalid();
  }
  placeLoose(p, loose);
  return p;
}

/** Day, month and year given as bare numbers: month first (dateutil's default), a long one is the year. */
function placeLoose(p: Parts, loose: number[]): void {
  const rest: number[] = [];
  for (const n of loose) {
    if (n < 0) setOnce(p, 'year', -n);
    else rest.push(n);
  }
  for (const n of rest) {
    if (p.month === undefined && n >= 1 && n <= 12 && p.day === undefined && rest.length > 1)
      p.month = n;
    else if (p.day === undefined && n >= 1 && n <= 31) p.day = n;
    else if (p.year === undefined) p.year = n < 100 ? (n < 50 ? 2000 + n : 1900 + n) : n;
    else throw new Invalid();
  }
}

function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

const MIN_MS = Date.UTC(1, 0, 1);
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function utcDate(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number) {
  const dt = new Date(0);
  dt.setUTCFullYear(y, mo - 1, d);
  dt.setUTCHours(h, mi, s, ms);
  return dt.getTime();
}

/** ISO 8601 as the reference writes it: no milliseconds unless there are some, `Z` for UTC. */
function iso(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  let out = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  if (d.getUTCMilliseconds()) out += `.${pad(d.getUTCMilliseconds(), 3)}000`;
  return out + 'Z';
}

/** The `datetime` value for `<time:text>`, or null when the text is not a time. */
export function parseTimestamp(text: string, now: Date = new Date()): string | null {
  if (text.length > 100) return null;
  try {
    const p = parseParts(text);
    if (
      p.hour !== undefined &&
      p.day === undefined &&
      p.month === undefined &&
      p.year === undefined
    ) {
      // A time alone: today.
    }
    const year = p.year ?? now.getUTCFullYear();
    const month = p.month ?? now.getUTCMonth() + 1;
    const day = p.day ?? now.getUTCDate();
    const hour = p.hour ?? 0;
    const minute = p.minute ?? 0;
    const second = p.second ?? 0;
    if (year < 1 || year > 9999 || month < 1 || month > 12) return null;
    if (day < 1 || day > daysInMonth(year, month)) return null;
    if (hour > 23 || minute > 59 || second > 59) return null;
    let ms = utcDate(year, month, day, hour, minute, second, p.ms ?? 0);
    if (p.offset !== undefined) ms -= p.offset * 1000;
    if (ms < MIN_MS || ms > MAX_MS) return null;
    return iso(ms);
  } catch (e) {
    if (!(e instanceof Invalid)) throw e;
  }
  // A Unix timestamp (seconds, possibly fractional).
  if (!/^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/i.test(text)) return null;
  const seconds = Number(text);
  if (!Number.isFinite(seconds)) return null;
  const ms = Math.round(seconds * 1000);
  if (ms < MIN_MS || ms > MAX_MS) return null;
  return iso(ms);
}
