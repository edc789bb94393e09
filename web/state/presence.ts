/**
 * Presence, as the reference's web app keeps and shows it (web/src/presence.ts, activity.ts,
 * buddy_data.ts): what the server said of each user (register's `presences`, the answers to
 * `POST /users/me/presence`, `presence` events), each user's status from it, whether this page
 * counts as active, and the people list's order and filter. Framework-free: no DOM, no fetch,
 * no clock of its own (times are passed in).
 */

export type PresenceStatus = 'active' | 'idle' | 'offline';

/** A user's presence in the modern format (UNIX seconds). */
export type PresenceTimes = { active_timestamp?: number; idle_timestamp?: number };

/** The times, with the server's time when they were current. */
export type RawPresence = PresenceTimes & { server_timestamp: number };

/** The legacy per-client presence of a `presence` event. */
export type PresenceEventInfo = Record<string, { status: string; timestamp: number }>;

/**
 * A user's status from their times, as of the server's time then: active while their last active
 * report is younger than the offline threshold, else idle while their last connection is, else
 * offline.
 */
export function statusFromRaw(raw: RawPresence, offlineThresholdSeconds: number): PresenceStatus {
  const age = (t: number | undefined) => raw.server_timestamp - (t ?? 0);
  if (age(raw.active_timestamp) < offlineThresholdSeconds) return 'active';
  if (age(raw.idle_timestamp) < offlineThresholdSeconds) return 'idle';
  return 'offline';
}

/** Everyone's presence as this page last heard it. */
export class Presence {
  /** `presence_last_update_id` of the last full answer (-1: none): the next fetch's start. */
  lastUpdateId: number;
  private readonly raw = new Map<number, RawPresence>();
  private readonly statuses = new Map<number, PresenceStatus>();

  constructor(
    readonly offlineThresholdSeconds: number,
    snapshot?: {
      presences?: Record<string, PresenceTimes>;
      server_timestamp?: number;
      presence_last_update_id?: number;
    },
  ) {
    this.lastUpdateId = -1;
    if (snapshot?.presences && snapshot.server_timestamp !== undefined)
      this.setInfo(
        snapshot.presences,
        snapshot.server_timestamp,
        snapshot.presence_last_update_id ?? -1,
      );
  }

  /** A user's status (offline when nothing is known of them). */
  status(userId: number): PresenceStatus {
    return this.statuses.get(userId) ?? 'offline';
  }

  /**
   * An answer with presences (register's, or a full `POST /users/me/presence`): those it holds
   * are replaced; everyone else shown active or idle is looked at again as of its time (only
   * what changed since `last_update_id` comes, so that is how people go offline).
   */
  setInfo(
    presences: Record<string, PresenceTimes>,
    serverTimestamp: number,
    lastUpdateId: number,
  ): void {
    this.lastUpdateId = lastUpdateId;
    const stale = new Set([...this.statuses].filter(([, s]) => s !== 'offline').map(([id]) => id));
    for (const [key, times] of Object.entries(presences)) {
      const id = Number(key);
      if (!Number.isInteger(id)) continue;
      stale.delete(id);
      this.put(id, {
        server_timestamp: serverTimestamp,
        active_timestamp: times.active_timestamp,
        idle_timestamp: times.idle_timestamp,
      });
    }
    for (const id of stale) this.fromEvent(id, null, serverTimestamp);
  }

  /** A `presence` event (legacy per-client format), or only a newer server time (`null`). */
  fromEvent(userId: number, info: PresenceEventInfo | null, serverTimestamp: number): void {
    const raw: RawPresence = { ...(this.raw.get(userId) ?? {}), server_timestamp: serverTimestamp };
    for (const rec of Object.values(info ?? {})) {
      if (rec.status === 'active' && rec.timestamp > (raw.active_timestamp ?? 0))
        raw.active_timestamp = rec.timestamp;
      if (rec.status === 'idle' && rec.timestamp > (raw.idle_timestamp ?? 0))
        raw.idle_timestamp = rec.timestamp;
    }
    this.put(userId, raw);
  }

  /**
   * The user's sessions ended (their deactivation): offline from now on, whatever their last
   * report said, until news of them comes (the server's record then says offline too).
   */
  sessionsEnded(userId: number): void {
    if (this.statuses.has(userId)) this.statuses.set(userId, 'offline');
  }

  /**
   * When the user was last active (UNIX seconds), as the reference's card says it: their last
   * active report (for someone idle, their last report of either kind); undefined when none is
   * known (never, or longer ago than the server keeps).
   */
  lastActive(userId: number): number | undefined {
    const raw = this.raw.get(userId);
    if (!raw) return undefined;
    const t =
      this.status(userId) === 'idle'
        ? Math.max(raw.active_timestamp ?? 0, raw.idle_timestamp ?? 0)
        : (raw.active_timestamp ?? 0);
    return t > 0 ? t : undefined;
  }

  private put(userId: number, raw: RawPresence): void {
    this.raw.set(userId, raw);
    this.statuses.set(userId, statusFromRaw(raw, this.offlineThresholdSeconds));
  }
}

/** Without input for this long the page reports the user idle (the reference's 5 minutes). */
export const IDLE_AFTER_MS = 5 * 60 * 1000;

/**
 * Whether this page's user is at it, as the reference's web app judges: active when the page
 * opened with the focus, and again at any input or focus; idle after IDLE_AFTER_MS without any.
 * `newUserInput`: input since the last report that reached the server.
 */
export class Activity {
  private lastInput: number | null;
  newUserInput = true;

  constructor(now: number, focused: boolean) {
    this.lastInput = focused ? now : null;
  }

  status(now: number): 'active' | 'idle' {
    return this.lastInput !== null && now - this.lastInput < IDLE_AFTER_MS ? 'active' : 'idle';
  }

  /**
   * The user did something (`input`: a key, the pointer; else the window took the focus). True
   * when they were idle until now: the server is to hear it at once, not at the next ping.
   */
  touch(now: number, input: boolean): boolean {
    const wasIdle = this.status(now) === 'idle';
    this.lastInput = now;
    if (input) this.newUserInput = true;
    return wasIdle;
  }
}

/** What the people list needs of a user. */
export type Person = {
  user_id: number;
  full_name: string;
  email?: string;
  /** The real address, where the server gives it to this user. */
  delivery_email?: string | null;
  is_bot?: boolean;
  is_active?: boolean;
};

/** Names compared as the app's lists sort them: case and accents aside. */
export const NAME_ORDER = new Intl.Collator(undefined, { sensitivity: 'base' });

/** Lower case without accents ("Élise" is found by "eli"). */
function fold(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/**
 * A person's name words and addresses folded, once per user object (the state replaces the
 * object when the user changes): a filter over a large organization folds only the filter.
 */
const foldedPeople = new WeakMap<Person, { words: string[]; addresses: string[] }>();

function foldedOf(p: Person): { words: string[]; addresses: string[] } {
  let f = foldedPeople.get(p);
  if (!f) {
    f = {
      words: fold(p.full_name).split(/\s+/),
      addresses: [p.email, p.delivery_email].filter((a): a is string => !!a).map(fold),
    };
    foldedPeople.set(p, f);
  }
  return f;
}

/**
 * The people list's filter as a test of a person: every word of it begins a word of their name
 * (in any order), or it begins their address (or their real one, where this user may see it).
 * An empty filter matches everyone.
 */
export function personMatcher(filter: string): (p: Person) => boolean {
  const q = fold(filter.trim());
  if (q === '') return () => true;
  const terms = q.split(/\s+/);
  return (p) => {
    const f = foldedOf(p);
    if (f.addresses.some((a) => a.startsWith(q))) return true;
    return terms.every((term) => f.words.some((w) => w.startsWith(term)));
  };
}

/** Whether a person matches the people list's filter (personMatcher). */
export function personMatches(p: Person, filter: string): boolean {
  return personMatcher(filter)(p);
}

const LEVEL: Record<PresenceStatus, number> = { active: 1, idle: 2, offline: 3 };

/**
 * The people list: active human users matching `filter`, the user themself first (unless
 * filtering), then active, idle, offline, each by name. Those `hidden` says (the muted: the
 * reference leaves them out of its buddy list entirely) are not listed, filter or not.
 */
export function peopleList(
  users: Iterable<Person>,
  statusOf: (id: number) => PresenceStatus,
  selfId: number,
  filter = '',
  hidden: (id: number) => boolean = () => false,
): Person[] {
  const filtering = filter.trim() !== '';
  const level = (p: Person) =>
    p.user_id === selfId && !filtering ? 0 : LEVEL[statusOf(p.user_id)];
  const matches = personMatcher(filter);
  return [...users]
    .filter((p) => !p.is_bot && p.is_active !== false && !hidden(p.user_id) && matches(p))
    .map((p) => ({ p, level: level(p) }))
    .sort((a, b) => a.level - b.level || NAME_ORDER.compare(a.p.full_name, b.p.full_name))
    .map((x) => x.p);
}

/** The words a screen reader says for a status (the dot shows it only in colour). */
export const STATUS_TEXT: Record<PresenceStatus, string> = {
  active: 'Active',
  idle: 'Idle',
  offline: 'Offline',
};

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * What a profile card says of someone's presence, as the reference's card: "Active now", "Idle",
 * or when they were last active ("Active 5 minutes ago", "Active 3 hours ago", "Active
 * yesterday", "Active 12 days ago", "Active on Mar 3", "Active on Mar 3, 2025"); "Not active in
 * the last year" when that is not known. `lastActive` in UNIX seconds, `nowMs` the page's time.
 */
export function presenceText(
  status: PresenceStatus,
  lastActive: number | undefined,
  nowMs: number,
): string {
  if (status === 'active') return 'Active now';
  if (status === 'idle') return 'Idle';
  if (lastActive === undefined) return 'Not active in the last year';
  const age = Math.max(0, nowMs / 1000 - lastActive);
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (age < HOUR) return `Active ${plural(Math.floor(age / MINUTE), 'minute')} ago`;
  if (age < DAY) {
    const hours = Math.floor(age / HOUR);
    return hours === 1 ? 'Active an hour ago' : `Active ${hours} hours ago`;
  }
  // Days by the calendar (in this browser's time zone), as one counts "yesterday".
  const then = new Date(lastActive * 1000);
  const now = new Date(nowMs);
  const midnight = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((midnight(now) - midnight(then)) / (DAY * 1000));
  if (days <= 1) return 'Active yesterday';
  if (days < 90) return `Active ${days} days ago`;
  const sameYear = then.getFullYear() === now.getFullYear();
  const date = then.toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    ...(sameYear ? {} : { year: 'numeric' }),
  });
  return `Active on ${date}`;
}
