/**
 * Custom profile fields and users' values for them. Reference: actions/custom_profile_fields.py.
 * Rendering of text values happens before the command (it carries rendered_value).
 */
import { JsonableError } from '../lib/errors.js';
import { formatProfileField } from '../queries/profile-fields.js';
import type { MutationContext } from './context.js';

export { formatProfileField };

export type CreateProfileFieldCommand = {
  name: string;
  hint: string;
  type: number;
  field_data: string;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
};

export function checkCreateProfileField(
  ctx: MutationContext,
  cmd: CreateProfileFieldCommand,
): { id: number } {
  const { store, realm } = ctx;
  if (store.users.profileFieldsByRealm(realm.id).some((f) => f.name === cmd.name)) {
    throw new JsonableError('A field with that label already exists.');
  }
  const id = store.users.insertProfileField({
    realm_id: realm.id,
    name: cmd.name,
    hint: cmd.hint,
    type: cmd.type,
    field_data: cmd.field_data,
    sort_order: store.users.maxProfileFieldOrder(realm.id) + 1,
    display_in_profile_summary: cmd.display_in_profile_summary ? 1 : 0,
    required: cmd.required ? 1 : 0,
    editable_by_user: cmd.editable_by_user ? 1 : 0,
  });
  ctx.emit(
    {
      type: 'custom_profile_fields',
      fields: store.users.profileFieldsByRealm(realm.id).map(formatProfileField),
    },
    realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => realm.invalidateProfiles());
  return { id };
}

export type UpdateProfileDataCommand = {
  user_id: number;
  data: { id: number; value: string; rendered_value: string | null }[];
};

export function doUpdateProfileData(
  ctx: MutationContext,
  cmd: UpdateProfileDataCommand,
): Record<string, never> {
  const { store, realm } = ctx;
  const fields = new Set(store.users.profileFieldsByRealm(realm.id).map((f) => f.id));
  for (const d of cmd.data) {
    if (!fields.has(d.id)) throw new JsonableError(`Field id ${d.id} not found.`);
  }
  const everyone = realm.activeUsers().map((u) => u.id);
  for (const d of cmd.data) {
    store.users.upsertProfileValue({
      user_id: cmd.user_id,
      field_id: d.id,
      value: d.value,
      rendered_value: d.rendered_value,
    });
    ctx.emit(
      {
        type: 'realm_user',
        op: 'update',
        person: {
          user_id: cmd.user_id,
          custom_profile_field: {
            id: d.id,
            value: d.value,
            ...(d.rendered_value !== null ? { rendered_value: d.rendered_value } : {}),
          },
        },
      },
      everyone,
    );
  }
  ctx.afterCommit(() => realm.invalidateProfiles(cmd.user_id));
  return {};
}
