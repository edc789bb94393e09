/**
 * Pure rules for draft content and topics, as the reference applies them to messages
 * (lib/message.py normalize_body, truncate_topic): drafts are stored the way the message would be
 * sent. Lengths are in Unicode code points.
 */
import { JsonableError } from './errors.js';
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from './limits.js';

/** Cuts `s` to `max` code points, ending with `marker` when it had to cut. */
export function truncateContent(s: string, max: number, marker: string): string {
  const cps = Array.from(s);
  if (cps.length <= max) return s;
  return cps.slice(0, max - Array.from(marker).length).join('') + marker;
}

/**
 * Message content as stored: trailing whitespace and leading blank lines removed; empty or
 * null-byte content refused; over-long content cut with a note.
 */
export function normalizeBody(body: string): string {
  const trimmed = body.trimEnd().replace(/^\n+/, '');
  if (trimmed.length === 0) throw new JsonableError('Message must not be empty');
  if (trimmed.includes('\0')) throw new JsonableError('Message must not contain null bytes');
  return truncateContent(trimmed, MAX_MESSAGE_LENGTH, '\n[message truncated]');
}

/** A topic cut to the longest allowed, ending with "..." when cut. */
export function truncateTopic(topic: string): string {
  return truncateContent(topic, MAX_TOPIC_LENGTH, '...');
}

/** Latest timestamp the API accepts (the end of year 9999, as the reference's datetimes). */
export const MAX_TIMESTAMP = 253402300799;

export class DraftsDisabledError extends JsonableError {
  constructor() {
    super('User has disabled synchronizing drafts.');
  }
}
