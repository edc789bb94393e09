/**
 * HOOK FOR THE DRAFTS AREA — deleteAllServerDraftsOf.
 *
 * When a user turns `enable_drafts_synchronization` off (PATCH /settings), the reference deletes
 * every draft it stores for them, sending no event: the drafts stop being synchronized, the
 * copies in clients are untouched (do_change_user_setting). The settings mutation calls this hook
 * inside its transaction at exactly that moment.
 *
 * Drafts are not stored yet: the drafts area (PATCH /drafts/{draft_id} and friends) adds their
 * table. It fills in this function — delete the user's draft rows through the Store, emit
 * nothing — and nothing else in the settings area needs to change. Until then there is nothing to
 * delete.
 */
import type { MutationContext } from './context.js';

export function deleteAllServerDraftsOf(_ctx: MutationContext, _userId: number): void {
  // No drafts table exists yet (see above).
}
