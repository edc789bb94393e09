/** Scheduled messages as the API shows them (the ScheduledMessage object of openapi.yaml). */
import { SEND_LATER } from '../lib/scheduled-messages.js';
import type { ScheduledMessageRow, ScheduledMessageType } from '../storage/scheduled-messages.js';
import type { ReadStore } from '../storage/store.js';

export type ApiScheduledMessage = {
  scheduled_message_id: number;
  type: ScheduledMessageType;
  to: number | number[];
  topic?: string;
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
};

/** The recipients as `to` lists them (the other participants, or the sender alone). */
export function directRecipientIds(row: Pick<ScheduledMessageRow, 'user_ids'>): number[] {
  return row.user_ids === '' ? [] : row.user_ids.split(',').map(Number);
}

export function formatScheduledMessage(row: ScheduledMessageRow): ApiScheduledMessage {
  const base = {
    scheduled_message_id: row.id,
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_delivery_timestamp: row.scheduled_timestamp,
    failed: row.failed === 1,
  };
  return row.type === 'stream'
    ? { ...base, type: 'stream', to: row.stream_id!, topic: row.topic }
    : { ...base, type: 'private', to: directRecipientIds(row) };
}

/** A user's undelivered scheduled messages (failed ones included), soonest first. */
export function scheduledMessagesOf(store: ReadStore, userId: number): ApiScheduledMessage[] {
  return store.scheduledMessages.pendingBySender(userId, SEND_LATER).map(formatScheduledMessage);
}

/** The user's own scheduled message (not a reminder), if there is one with this id. */
export function ownScheduledMessage(
  store: ReadStore,
  userId: number,
  id: number,
): ScheduledMessageRow | undefined {
  const row = store.scheduledMessages.byId(id);
  return row && row.sender_id === userId && row.delivery_type === SEND_LATER ? row : undefined;
}
