/**
 * Code playgrounds (administrators). Reference: views/realm_playgrounds.py. The administrator
 * check comes before any parameter is looked at, as the reference's decorator order.
 */
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import {
  OrganizationAdministratorRequiredError,
  RequestVariableMissingError,
} from '../lib/errors.js';
import { ownNulRule, pathInt, str } from '../lib/params.js';
import { checkPlayground, checkPygmentsLanguage } from '../lib/playgrounds.js';
import { Role } from '../lib/roles.js';
import type { UserRow } from '../storage/users.js';

function requireAdmin(user: UserRow): void {
  if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
}

/** POST /api/v1/realm/playgrounds — answers the new playground's `id`. */
export const addPlayground = endpoint({
  method: 'POST',
  path: '/api/v1/realm/playgrounds',
  params: z.object({
    name: str().optional(),
    pygments_language: ownNulRule(str()).optional(), // "Invalid characters in pygments language"
    url_template: str().optional(),
  }),
  handle: async ({ realm, user }: AuthedCtx, p) => {
    requireAdmin(user);
    for (const k of ['name', 'pygments_language', 'url_template'] as const)
      if (p[k] === undefined) throw new RequestVariableMissingError(k);
    checkPygmentsLanguage(p.pygments_language!);
    const values = checkPlayground({
      name: p.name!,
      pygments_language: p.pygments_language!,
      url_template: p.url_template!,
    });
    return realm.ask('playground.add', { ...values, acting_user_id: user.id });
  },
});

/** DELETE /api/v1/realm/playgrounds/{playground_id} */
export const removePlayground = endpoint({
  method: 'DELETE',
  path: '/api/v1/realm/playgrounds/:playground_id',
  params: z.object({ playground_id: pathInt() }),
  handle: async ({ realm, user }: AuthedCtx, p) => {
    requireAdmin(user);
    return realm.ask('playground.remove', {
      acting_user_id: user.id,
      playground_id: p.playground_id,
    });
  },
});
