/**
 * Register snapshot, `scheduled_messages` type: the user's undelivered scheduled messages (failed
 * ones included), soonest first, as GET /scheduled_messages lists them. Empty for spectators.
 */
import type { StateContributor } from '../initial-state.js';
import { scheduledMessagesOf } from '../scheduled-messages.js';

export const scheduledMessagesState: StateContributor = {
  types: ['scheduled_messages'],
  fill(req, state) {
    state.scheduled_messages = req.user === null ? [] : scheduledMessagesOf(req.store, req.user.id);
  },
};
