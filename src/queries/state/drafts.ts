/**
 * Register snapshot, `drafts` type: the user's most recently edited drafts, newest first (at most
 * 1000, as the reference). Empty for spectators, and for users who turned synchronization off
 * (their drafts were deleted then).
 */
import { formatDraft, MAX_DRAFTS_IN_REGISTER_RESPONSE } from '../drafts.js';
import type { StateContributor } from '../initial-state.js';

export const draftsState: StateContributor = {
  types: ['drafts'],
  fill(req, state) {
    state.drafts =
      req.user === null
        ? []
        : req.store.drafts
            .recentByUser(req.user.id, MAX_DRAFTS_IN_REGISTER_RESPONSE)
            .map(formatDraft);
  },
};
