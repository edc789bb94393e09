/**
 * Rules about channel names, descriptions, topics and channel options that do not depend on the
 * realm's data. Messages are the reference's (lib/string_validation.py, lib/retention.py).
 */
import { JsonableError } from './errors.js';
import { MAX_CHANNEL_NAME_LENGTH } from './limits.js';
import { codePointLength } from './strings.js';

export const MAX_USER_GROUP_NAME_LENGTH = 100;
/** What clients show for the empty topic (register `realm_empty_topic_display_name`). */
export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

export const TOPICS_POLICIES = [
  'inherit',
  'allow_empty_topic',
  'disable_empty_topic',
  'empty_topic_only',
] as const;
export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];

/** A channel's topics policy in effect: its own, or the realm's when it inherits. */
export function effectiveTopicsPolicy(
  channelPolicy: string,
  realmPolicy: TopicsPolicy,
): TopicsPolicy {
  const own = channelPolicy as TopicsPolicy;
  return own !== 'inherit' ? own : realmPolicy;
}

function isNonCharacter(cp: number): boolean {
  return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe;
}

/** 1-based position (in code points) of the first unprintable character, or null. */
export function firstUnprintable(s: string): number | null {
  let i = 0;
  for (const ch of s) {
    i++;
    const cp = ch.codePointAt(0)!;
    if (/[\p{Cc}\p{Cs}]/u.test(ch) || isNonCharacter(cp)) return i;
  }
  return null;
}

export function checkChannelName(name: string): void {
  if (name.trim() === '') throw new JsonableError("Channel name can't be empty.");
  if (codePointLength(name) > MAX_CHANNEL_NAME_LENGTH)
    throw new JsonableError(
      `Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`,
    );
  const pos = firstUnprintable(name);
  if (pos !== null)
    throw new JsonableError(`Invalid character in channel name, at position ${pos}.`);
}

/** Descriptions are one line: newlines become spaces. */
export function normalizeDescription(description: string): string {
  return description.replace(/\r?\n/g, ' ');
}

/**
 * message_retention_days as sent: a positive number of days, `unlimited` (-1) or `realm_default`
 * (null: the realm's setting).
 */
export function parseRetentionDays(value: string | number): number | null {
  if (value === 'realm_default') return null;
  if (value === 'unlimited') return -1;
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw new JsonableError(
    `Bad value for 'message_retention_days': ${typeof value === 'string' ? value : String(value)}`,
    { code: 'REQUEST_VARIABLE_INVALID', extra: { var_name: 'message_retention_days' } },
  );
}

/** A topic as sent by clients: the display name of the empty topic means the empty topic. */
export function canonicalTopic(topic: string): string {
  const t = topic.trim();
  return t === EMPTY_TOPIC_DISPLAY_NAME ? '' : t;
}
