/**
 * Register snapshot: `realm_linkifiers` (empty unless the client declared the
 * `linkifier_url_template` capability, as the reference does) and the legacy `realm_filters`
 * (always empty since URL templates replaced format strings).
 */
import type { StateContributor } from '../initial-state.js';
import { linkifiersOf } from '../linkifiers.js';

export const realmLinkifiersState: StateContributor = {
  types: ['realm_linkifiers'],
  fill(req, state) {
    state.realm_linkifiers = req.capabilities.linkifier_url_template
      ? linkifiersOf(req.store, req.realm).map((l) => ({ ...l }))
      : [];
  },
};

export const realmFiltersState: StateContributor = {
  types: ['realm_filters'],
  fill(_req, state) {
    state.realm_filters = [];
  },
};
