/**
 * Custom profile fields as the API shows them (register `custom_profile_fields`, the
 * `custom_profile_fields` event). Reference: CustomProfileField.as_dict and ALL_FIELD_TYPES.
 */
import type { CustomProfileFieldRow } from '../storage/users.js';

export function formatProfileField(f: CustomProfileFieldRow) {
  return {
    id: f.id,
    name: f.name,
    type: f.type,
    hint: f.hint,
    field_data: f.field_data,
    order: f.sort_order,
    required: f.required === 1,
    editable_by_user: f.editable_by_user === 1,
    ...(f.display_in_profile_summary ? { display_in_profile_summary: true } : {}),
  };
}

/** The field types this server supports: keyword → {id, name}, sorted by name as the reference. */
export const CUSTOM_PROFILE_FIELD_TYPES: Readonly<Record<string, { id: number; name: string }>> = {
  DATE: { id: 4, name: 'Date' },
  EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
  URL: { id: 5, name: 'Link' },
  SELECT: { id: 3, name: 'List of options' },
  PRONOUNS: { id: 8, name: 'Pronouns' },
  LONG_TEXT: { id: 2, name: 'Text (long)' },
  SHORT_TEXT: { id: 1, name: 'Text (short)' },
  USER: { id: 6, name: 'Users' },
};
