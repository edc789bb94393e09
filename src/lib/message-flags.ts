/**
 * Per-user message flags, stored as a bitmask in user_messages.flags. Bit positions are ours
 * (storage only); names are API. `read` = bit 0 and `starred` = bit 1 are relied on by partial
 * indexes in migration 0002.
 */
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
} as const;
export type MessageFlag = keyof typeof MESSAGE_FLAG_BITS;

/** Flags a user may change with POST /messages/flags (the others are computed by the server). */
export const USER_EDITABLE_FLAGS: readonly MessageFlag[] = ['read', 'starred', 'collapsed'];

/** The flag names of a bitmask, in the order clients see them. */
export function flagNames(mask: number): MessageFlag[] {
  const out: MessageFlag[] = [];
  for (const [name, bit] of Object.entries(MESSAGE_FLAG_BITS) as [MessageFlag, number][]) {
    if ((mask & bit) !== 0) out.push(name);
  }
  return out;
}

export function flagMask(names: readonly MessageFlag[]): number {
  let mask = 0;
  for (const n of names) mask |= MESSAGE_FLAG_BITS[n];
  return mask;
}
