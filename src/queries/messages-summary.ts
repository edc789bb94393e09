/**
 * Per-user message facts other areas show (GET /users/me `max_message_id`). Until the message
 * store exists there are no messages, which the API reports as -1.
 */
import type { Store } from '../storage/store.js';

export function maxMessageIdFor(_store: Store, _userId: number): number {
  return -1;
}
