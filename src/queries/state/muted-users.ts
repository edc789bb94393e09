/** Register snapshot, `muted_users` type: the users the user muted, with when. */
import type { StateContributor } from '../initial-state.js';

export const mutedUsersState: StateContributor = {
  types: ['muted_users'],
  fill(req, state) {
    state.muted_users = req.user === null ? [] : req.store.mutedUsers.byUser(req.user.id);
  },
};
