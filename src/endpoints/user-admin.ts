/**
 * Administration of users: PATCH /users/{user_id} (name, role, custom profile values) and
 * POST /users/{user_id}/reactivate. Reference: views/users.py update_user_backend,
 * reactivate_user_backend. Permissions (administrators; owners for the owner role; a bot's
 * owner for their bot) are checked in the realm actor (src/mutations/user-admin.ts).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { intValue, json, ownNulRule, pathInt, str } from '../lib/params.js';
import { ALL_ROLES, type Role } from '../lib/roles.js';
import { withRenderedValues } from './profile-fields.js';

const nullableEntry = () =>
  z.strictObject({
    id: intValue(),
    value: z.union([z.null(), z.string(), z.array(intValue())], {
      error: '{var} is not an allowed_type',
    }),
  });

/** PATCH /api/v1/users/{user_id} */
export const updateUser = endpoint({
  method: 'PATCH',
  path: '/api/v1/users/:user_id',
  params: z.object({
    user_id: pathInt(),
    full_name: ownNulRule(str()).optional(), // checkFullName
    role: json(
      intValue().refine((r) => (ALL_ROLES as readonly number[]).includes(r), {
        error: 'Invalid role',
      }),
    ).optional(),
    profile_data: json(z.array(nullableEntry(), { error: '{var} is not a list' })).optional(),
  }),
  handle: async (ctx, p) => {
    const { realm, user } = ctx;
    await realm.ask('user.update', {
      acting_user_id: user.id,
      user_id: p.user_id,
      ...(p.full_name !== undefined ? { full_name: p.full_name } : {}),
      ...(p.role !== undefined ? { role: p.role as Role } : {}),
      ...(p.profile_data !== undefined
        ? { profile_data: withRenderedValues(ctx, user.id, p.profile_data) }
        : {}),
    });
    return {};
  },
});

/** POST /api/v1/users/{user_id}/reactivate */
export const reactivateUser = endpoint({
  method: 'POST',
  path: '/api/v1/users/:user_id/reactivate',
  params: z.object({ user_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('user.reactivate', { acting_user_id: user.id, user_id: p.user_id });
    return {};
  },
});
