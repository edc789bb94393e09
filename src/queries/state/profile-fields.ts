/**
 * Register snapshot, `custom_profile_fields` type: the realm's custom profile fields (none for
 * spectators, who cannot see profiles) and the field types this server supports.
 */
import type { StateContributor } from '../initial-state.js';
import { CUSTOM_PROFILE_FIELD_TYPES, formatProfileField } from '../profile-fields.js';

export const profileFieldsState: StateContributor = {
  types: ['custom_profile_fields'],
  fill(req, state) {
    state.custom_profile_fields =
      req.user === null ? [] : req.realm.profileFields().map(formatProfileField);
    state.custom_profile_field_types = CUSTOM_PROFILE_FIELD_TYPES;
  },
};
