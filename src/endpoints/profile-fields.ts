/**
 * Custom profile fields (administrators define them; everyone reads them) and a user's own values
 * for them. Reference: views/custom_profile_fields.py.
 *
 * Text values (short and long text) are markdown, rendered here with the realm's render context
 * before the change enters the realm actor (channel links limited to what the editor may see).
 */
import { z } from 'zod';
import type { AuthedCtx } from '../http/endpoint.js';
import { endpoint } from '../http/endpoint.js';
import { HumanUsersOnlyError } from '../lib/errors.js';
import { bool, int, intList, intValue, json, pathInt, str } from '../lib/params.js';
import { checkFieldDataShape, isRenderableFieldType } from '../lib/profile-fields.js';
import { formatProfileField } from '../queries/profile-fields.js';
import { renderDescription } from '../queries/render-context.js';

/** GET /api/v1/realm/profile_fields */
export const listProfileFields = endpoint({
  method: 'GET',
  path: '/api/v1/realm/profile_fields',
  params: z.object({}),
  handle: ({ realm }) => ({ custom_fields: realm.view.profileFields().map(formatProfileField) }),
});

const fieldData = () => json(z.unknown()).transform((v) => checkFieldDataShape(v));

/** POST /api/v1/realm/profile_fields — administrators. */
export const createProfileField = endpoint({
  method: 'POST',
  path: '/api/v1/realm/profile_fields',
  params: z.object({
    name: str().default(''),
    hint: str().default(''),
    field_type: int(),
    field_data: fieldData().optional(),
    display_in_profile_summary: bool().default(false),
    required: bool().default(false),
    editable_by_user: bool().default(true),
  }),
  handle: ({ realm, user }, p) =>
    realm.ask('profile_field.create', {
      acting_user_id: user.id,
      name: p.name,
      hint: p.hint,
      type: p.field_type,
      field_data: p.field_data ?? {},
      display_in_profile_summary: p.display_in_profile_summary,
      required: p.required,
      editable_by_user: p.editable_by_user,
    }),
});

/** PATCH /api/v1/realm/profile_fields — reorder (administrators). */
export const reorderProfileFields = endpoint({
  method: 'PATCH',
  path: '/api/v1/realm/profile_fields',
  params: z.object({ order: intList() }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('profile_field.reorder', { acting_user_id: user.id, order: p.order });
    return {};
  },
});

/** PATCH /api/v1/realm/profile_fields/{field_id} — administrators. */
export const updateProfileField = endpoint({
  method: 'PATCH',
  path: '/api/v1/realm/profile_fields/:field_id',
  params: z.object({
    field_id: pathInt(),
    name: str().optional(),
    hint: str().optional(),
    field_data: fieldData().optional(),
    display_in_profile_summary: bool().optional(),
    required: bool().optional(),
    editable_by_user: bool().optional(),
  }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('profile_field.update', {
      acting_user_id: user.id,
      field_id: p.field_id,
      ...(p.name !== undefined ? { name: p.name } : {}),
      ...(p.hint !== undefined ? { hint: p.hint } : {}),
      ...(p.field_data !== undefined ? { field_data: p.field_data } : {}),
      ...(p.display_in_profile_summary !== undefined
        ? { display_in_profile_summary: p.display_in_profile_summary }
        : {}),
      ...(p.required !== undefined ? { required: p.required } : {}),
      ...(p.editable_by_user !== undefined ? { editable_by_user: p.editable_by_user } : {}),
    });
    return {};
  },
});

/** DELETE /api/v1/realm/profile_fields/{field_id} — administrators; users' values go with it. */
export const deleteProfileField = endpoint({
  method: 'DELETE',
  path: '/api/v1/realm/profile_fields/:field_id',
  params: z.object({ field_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('profile_field.delete', { acting_user_id: user.id, field_id: p.field_id });
    return {};
  },
});

/** One `{id, value}` of profile_data: a string, or user ids for a person-picker field. */
export const profileDataEntry = () =>
  z.strictObject({
    id: intValue(),
    value: z.union([z.string(), z.array(intValue())], { error: '{var} is not an allowed_type' }),
  });

/**
 * The entries with their markdown rendered for text fields (`editorId`'s channel access decides
 * channel links). Unknown fields are left to the mutation, which refuses them.
 */
export function withRenderedValues(
  ctx: AuthedCtx,
  editorId: number,
  entries: readonly { id: number; value: unknown }[],
): { id: number; value: unknown; rendered_value: string | null }[] {
  const { server, realm } = ctx;
  const types = new Map(realm.view.profileFields().map((f) => [f.id, f.type]));
  return entries.map((e) => {
    const type = types.get(e.id);
    const rendered =
      type !== undefined && isRenderableFieldType(type) && typeof e.value === 'string'
        ? renderDescription(server.config, server.store, realm.view, e.value, editorId)
        : null;
    return { id: e.id, value: e.value, rendered_value: rendered };
  });
}

/** PATCH /api/v1/users/me/profile_data */
export const updateOwnProfileData = endpoint({
  method: 'PATCH',
  path: '/api/v1/users/me/profile_data',
  params: z.object({ data: json(z.array(profileDataEntry(), { error: '{var} is not a list' })) }),
  handle: async (ctx, p) => {
    const { realm, user } = ctx;
    if (user.is_bot) throw new HumanUsersOnlyError();
    await realm.ask('user.profile_data.update', {
      user_id: user.id,
      data: withRenderedValues(ctx, user.id, p.data),
    });
    return {};
  },
});

/** DELETE /api/v1/users/me/profile_data — `data`: the ids of the fields to clear. */
export const removeOwnProfileData = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/me/profile_data',
  params: z.object({ data: intList() }),
  handle: async ({ realm, user }, p) => {
    if (user.is_bot) throw new HumanUsersOnlyError();
    await realm.ask('user.profile_data.remove', { user_id: user.id, field_ids: p.data });
    return {};
  },
});
