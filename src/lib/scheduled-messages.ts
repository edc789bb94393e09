/**
 * Rules of scheduled messages that do not depend on the realm's data: the `to` parameter's forms
 * and the reference's messages (views/scheduled_messages.py, lib/recipient_parsing.py,
 * actions/scheduled_messages.py).
 */
import { JsonableError } from './errors.js';

/** delivery_type values: a message to send later, or a reminder. */
export const SEND_LATER = 1;
export const REMIND = 2;

/** How late a delivery may be before it is given up (SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES). */
export const LATE_CUTOFF_SECONDS = 10 * 60;

export const TOO_LATE_MESSAGE = 'Message could not be sent at the scheduled time.';

export class DeliveryTimeNotInFutureError extends JsonableError {
  constructor() {
    super('Scheduled delivery time must be in the future.');
  }
}

/** 404 with the generic code, as the reference's ResourceNotFoundError. */
export class ScheduledMessageDoesNotExistError extends JsonableError {
  constructor() {
    super('Scheduled message does not exist', { status: 404 });
  }
}

/** The API's recipient types, as scheduled messages store them ('direct' is 'private'). */
export function scheduledMessageType(apiType: string): 'stream' | 'private' {
  return apiType === 'stream' || apiType === 'channel' ? 'stream' : 'private';
}

/** A channel message's `to`: one channel id (`14` or `"14"`), as the reference's int(). */
export function parseScheduledChannelTo(raw: string): number {
  const s = raw.trim();
  if (!/^[+-]?[0-9]+$/.test(s)) throw new JsonableError('Invalid data type for channel ID');
  return Number(s);
}

/** A direct message's `to`: a JSON list of user ids (duplicates dropped). */
export function parseScheduledDirectTo(raw: string): number[] {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    data = raw;
  }
  if (!Array.isArray(data)) throw new JsonableError('Invalid data type for recipients');
  for (const id of data) {
    if (typeof id !== 'number' || !Number.isInteger(id)) {
      throw new JsonableError('Recipient list may only contain user IDs');
    }
  }
  return [...new Set(data as number[])];
}
