/**
 * Per-user message flags, stored as a bitmask in user_messages.flags. Bit positions are ours
 * (storage only); names are API. `read` = bit 0 and `starred` = bit 1 are relied on by partial
 * indexes in migration 0002, `is_private` = bit 9 by migration 0005.
 */
import { JsonableError } from './errors.js';

export const MESSAGE_FLAG_BITS = {
  read: 1 << 0,
  starred: 1 << 1,
  collapsed: 1 << 2,
  mentioned: 1 << 3,
  stream_wildcard_mentioned: 1 << 4,
  topic_wildcard_mentioned: 1 << 5,
  group_mentioned: 1 << 6,
  has_alert_word: 1 << 7,
  historical: 1 << 8,
  is_private: 1 << 9,
  active_mobile_push_notification: 1 << 10,
  /** Confab's own: a missed-message mail was scheduled for this message (never mailed twice). */
  email_notified: 1 << 11,
} as const;
export type MessageFlag = keyof typeof MESSAGE_FLAG_BITS;

/** Flags a user may change with POST /messages/flags (the others are computed by the server). */
export const USER_EDITABLE_FLAGS: readonly MessageFlag[] = ['read', 'starred', 'collapsed'];

/** Flags kept for the server's own use: never shown to clients, not accepted from them. */
export const NON_API_FLAGS: ReadonlySet<string> = new Set([
  'is_private',
  'active_mobile_push_notification',
  'email_notified',
]);

/** What a message the user can read but never received looks like (no user_messages row). */
export const HISTORICAL_FLAGS = MESSAGE_FLAG_BITS.read | MESSAGE_FLAG_BITS.historical;

/** Any kind of mention of the user (`is:mentioned`). */
export const MENTION_FLAGS =
  MESSAGE_FLAG_BITS.mentioned |
  MESSAGE_FLAG_BITS.stream_wildcard_mentioned |
  MESSAGE_FLAG_BITS.topic_wildcard_mentioned |
  MESSAGE_FLAG_BITS.group_mentioned;

const WILDCARD_BITS =
  MESSAGE_FLAG_BITS.stream_wildcard_mentioned | MESSAGE_FLAG_BITS.topic_wildcard_mentioned;

const FLAG_ENTRIES = Object.entries(MESSAGE_FLAG_BITS) as [MessageFlag, number][];

/** The flag names of a bitmask, in the order clients see them (server-only flags included). */
export function flagNames(mask: number): MessageFlag[] {
  const out: MessageFlag[] = [];
  for (const [name, bit] of FLAG_ENTRIES) {
    if ((mask & bit) !== 0) out.push(name);
  }
  return out;
}

const apiNamesCache = new Map<number, readonly string[]>();

/**
 * The flags a client sees for a bitmask: without the server-only flags, and with the deprecated
 * `wildcard_mentioned` (= stream or topic wildcard mention) that older clients read. The result
 * is shared between callers (cached per mask): do not modify it.
 */
export function apiFlagNames(mask: number): readonly string[] {
  let names = apiNamesCache.get(mask);
  if (!names) {
    const list: string[] = flagNames(mask).filter((n) => !NON_API_FLAGS.has(n));
    if ((mask & WILDCARD_BITS) !== 0) list.push('wildcard_mentioned');
    names = list;
    if (apiNamesCache.size < 4096) apiNamesCache.set(mask, names);
  }
  return names;
}

export function flagMask(names: readonly MessageFlag[]): number {
  let mask = 0;
  for (const n of names) mask |= MESSAGE_FLAG_BITS[n];
  return mask;
}

/**
 * The flag a client names in POST /messages/flags, or the reference's refusal: unknown names and
 * server-only flags are "Invalid flag", the computed ones "Flag not editable".
 */
export function editableFlagBit(flag: string): number {
  if (!Object.hasOwn(MESSAGE_FLAG_BITS, flag) || NON_API_FLAGS.has(flag)) {
    throw new JsonableError(`Invalid flag: '${flag}'`);
  }
  if (!(USER_EDITABLE_FLAGS as readonly string[]).includes(flag)) {
    throw new JsonableError(`Flag not editable: '${flag}'`);
  }
  return MESSAGE_FLAG_BITS[flag as MessageFlag];
}
