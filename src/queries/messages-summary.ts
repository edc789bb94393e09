/**
 * Per-user message facts other areas show (GET /users/me `max_message_id`): the newest message the
 * user received, -1 when there is none.
 */
import type { ReadStore } from '../storage/store.js';

export function maxMessageIdFor(store: ReadStore, userId: number): number {
  return store.messages.maxMessageIdFor(userId);
}
