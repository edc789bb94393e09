/**
 * Typing notifications (POST /typing): who gets which event. Reference: actions/typing.py.
 * Typing changes no stored state, so the endpoint publishes these events directly (through the
 * EventPublisher seam), not through a realm mutation.
 */
import { MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS } from './limits.js';
import type { OutboundEvent } from './events.js';

export type TypingOp = 'start' | 'stop';

/** The facts typing needs about a user. */
export type TypingPerson = {
  user_id: number;
  email: string;
  is_active: boolean;
  receives_typing_notifications: boolean;
};

/**
 * Direct-message typing: the event names every participant (the sender included); it goes to the
 * active participants who receive typing notifications (the sender too, as the reference).
 */
export function directTypingEvent(
  sender: Pick<TypingPerson, 'user_id' | 'email'>,
  participants: readonly TypingPerson[],
  op: TypingOp,
): OutboundEvent {
  return {
    event: {
      type: 'typing',
      op,
      message_type: 'direct',
      sender: { user_id: sender.user_id, email: sender.email },
      recipients: participants.map((p) => ({ user_id: p.user_id, email: p.email })),
    },
    users: participants
      .filter((p) => p.is_active && p.receives_typing_notifications)
      .map((p) => p.user_id),
  };
}

/**
 * Channel typing: to the channel's active subscribers who receive typing notifications — and to
 * nobody in a channel with more than MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS subscribers. Only
 * queues registered with `stream_typing_notifications` receive it (the publisher's rule).
 * `subscribers` are the channel's active subscribers.
 */
export function channelTypingEvent(
  sender: Pick<TypingPerson, 'user_id' | 'email'>,
  op: TypingOp,
  streamId: number,
  topic: string,
  subscribers: readonly TypingPerson[],
): OutboundEvent | null {
  if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return null;
  return {
    event: {
      type: 'typing',
      op,
      message_type: 'stream',
      sender: { user_id: sender.user_id, email: sender.email },
      stream_id: streamId,
      topic,
    },
    users: subscribers.filter((p) => p.receives_typing_notifications).map((p) => p.user_id),
  };
}

/**
 * Typing while editing a message (POST /messages/{id}/typing): a `typing_edit_message` event to
 * whoever would be told of the edit — a direct message's active participants, or the channel's
 * active subscribers (none over MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) — who receive typing
 * notifications. `audience` is those participants or subscribers.
 */
export function editTypingEvent(
  senderId: number,
  messageId: number,
  op: TypingOp,
  recipient:
    { type: 'channel'; channel_id: number; topic: string } | { type: 'direct'; user_ids: number[] },
  audience: readonly TypingPerson[],
): OutboundEvent | null {
  if (recipient.type === 'channel' && audience.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) {
    return null;
  }
  return {
    event: {
      type: 'typing_edit_message',
      op,
      sender_id: senderId,
      message_id: messageId,
      recipient,
    },
    users: audience
      .filter((p) => p.is_active && p.receives_typing_notifications)
      .map((p) => p.user_id),
  };
}
