/**
 * Users' statuses, as the reference's web app keeps them (web/src/user_status.ts): a short text
 * and an emoji each user may set (`POST /users/me/status`), from register's `user_status` and
 * kept by `user_status` events (which carry only what changed). What the status dialog offers
 * (its presets) and sends (only what differs from the status now) is here too. Framework-free.
 */
import type { UserStatus } from '../../src/client/types.js';

/** The longest status text the server takes, in characters (its MAX_STATUS_TEXT_LENGTH). */
export const MAX_STATUS_TEXT = 60;

export type StatusEmoji = { name: string; code: string; type: string };

/** A status as the app shows it: a text ('' for none) and an emoji (null for none). */
export type Status = { text: string; emoji: StatusEmoji | null };

export const NO_STATUS: Status = { text: '', emoji: null };

/** Whether a status says anything. */
export function hasStatus(s: Status | undefined): s is Status {
  return s !== undefined && (s.text !== '' || s.emoji !== null);
}

/**
 * A status with what an API object (a snapshot's entry, an event) says applied: each field it
 * carries replaces the old one ('' clears), the others stay.
 */
export function applyStatus(old: Status, change: UserStatus): Status {
  let { text, emoji } = old;
  if (change.status_text !== undefined) text = change.status_text;
  if (change.emoji_name !== undefined) {
    emoji =
      change.emoji_name === ''
        ? null
        : {
            name: change.emoji_name,
            code: change.emoji_code ?? '',
            type: change.reaction_type ?? 'unicode_emoji',
          };
  }
  return text === old.text && emoji === old.emoji ? old : { text, emoji };
}

/** Everyone's status as this page last heard it. */
export class UserStatuses {
  private readonly byUser = new Map<number, Status>();

  constructor(snapshot?: Record<string, UserStatus>) {
    for (const [key, s] of Object.entries(snapshot ?? {})) {
      const id = Number(key);
      if (Number.isInteger(id)) this.apply(id, s);
    }
  }

  /** A user's status (NO_STATUS when they set none). */
  get(userId: number): Status {
    return this.byUser.get(userId) ?? NO_STATUS;
  }

  /** A `user_status` event (or a snapshot's entry); true when what is shown changed. */
  apply(userId: number, change: UserStatus): boolean {
    const old = this.get(userId);
    const next = applyStatus(old, change);
    if (next === old) return false;
    if (hasStatus(next)) this.byUser.set(userId, next);
    else this.byUser.delete(userId);
    return true;
  }
}

/** The statuses the dialog offers, as the reference's (a text with its emoji). */
export const PRESETS: readonly { text: string; emoji: string }[] = [
  { text: 'Busy', emoji: 'working_on_it' },
  { text: 'In a meeting', emoji: 'calendar' },
  { text: 'Commuting', emoji: 'bus' },
  { text: 'Out sick', emoji: 'hurt' },
  { text: 'Vacationing', emoji: 'palm_tree' },
  { text: 'Working remotely', emoji: 'house' },
  { text: 'At the office', emoji: 'office' },
];

function sameEmoji(a: StatusEmoji | null, b: StatusEmoji | null): boolean {
  return a === b || (!!a && !!b && a.name === b.name && a.code === b.code && a.type === b.type);
}

/** The text as the server will keep it (trimmed, at most MAX_STATUS_TEXT characters). */
export function cleanText(text: string): string {
  return [...text.trim()].slice(0, MAX_STATUS_TEXT).join('').trim();
}

/**
 * What `POST /users/me/status` is to be sent to go from `now` to `next` (the text trimmed): only
 * what differs; null when nothing does (the dialog's Save is then off).
 */
export function statusRequest(
  now: Status,
  next: Status,
): {
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
} | null {
  const out: {
    status_text?: string;
    emoji_name?: string;
    emoji_code?: string;
    reaction_type?: string;
  } = {};
  const text = cleanText(next.text);
  if (text !== now.text) out.status_text = text;
  if (!sameEmoji(now.emoji, next.emoji)) {
    out.emoji_name = next.emoji?.name ?? '';
    if (next.emoji) {
      out.emoji_code = next.emoji.code;
      out.reaction_type = next.emoji.type;
    }
  }
  return Object.keys(out).length ? out : null;
}
