/**
 * Register snapshot, `realm_bot` type: the bots the caller administers (every bot but the system
 * bots for an administrator, their own otherwise), with their API keys. Reference:
 * fetch_initial_state_data `if want("realm_bot")` (get_owned_bot_dicts).
 */
import { ownedBots } from '../bots.js';
import type { StateContributor } from '../initial-state.js';

export const botsState: StateContributor = {
  types: ['realm_bot'],
  fill(req, state) {
    state.realm_bots = req.user === null ? [] : ownedBots(req.realm, req.store, req.user);
  },
};
