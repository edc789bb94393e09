/**
 * Linkifiers. Reference: views/realm_linkifiers.py (list_linkifiers, create_linkifier,
 * update_linkifier, delete_linkifier, reorder_linkifiers). Listing is for everyone; changes are
 * for administrators. Pattern and template are checked here (pure work) before the command goes
 * to the realm actor, which checks uniqueness and existence.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { JsonableError, OrganizationAdministratorRequiredError } from '../lib/errors.js';
import { LinkifierError, validateLinkifier } from '../lib/markdown/linkifiers.js';
import { intList, pathInt, str } from '../lib/params.js';
import { Role } from '../lib/roles.js';
import { linkifiersOf } from '../queries/linkifiers.js';
import type { UserRow } from '../storage/users.js';

function requireAdmin(user: UserRow): void {
  if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
}

/** The reference answers a refused pattern or template with the message and Django's `errors`. */
function checkLinkifier(pattern: string, urlTemplate: string): void {
  try {
    validateLinkifier(pattern, urlTemplate);
  } catch (err) {
    if (err instanceof LinkifierError)
      throw new JsonableError(err.message, { extra: { errors: { [err.field]: [err.message] } } });
    throw err;
  }
}

/** GET /api/v1/realm/linkifiers */
export const listLinkifiers = endpoint({
  method: 'GET',
  path: '/api/v1/realm/linkifiers',
  params: z.object({}),
  handle: ({ server, realm }) => ({
    linkifiers: linkifiersOf(server.store, realm.view).map((l) => ({ ...l })),
  }),
});

/** POST /api/v1/realm/filters */
export const createLinkifier = endpoint({
  method: 'POST',
  path: '/api/v1/realm/filters',
  params: z.object({ pattern: str(), url_template: str() }),
  handle: async ({ realm, user }, p) => {
    requireAdmin(user);
    checkLinkifier(p.pattern, p.url_template);
    return realm.ask('linkifier.add', {
      acting_user_id: user.id,
      pattern: p.pattern,
      url_template: p.url_template,
    });
  },
});

/** PATCH /api/v1/realm/filters/{filter_id} */
export const updateLinkifier = endpoint({
  method: 'PATCH',
  path: '/api/v1/realm/filters/:filter_id',
  params: z.object({ filter_id: pathInt(), pattern: str(), url_template: str() }),
  handle: async ({ realm, user }, p) => {
    requireAdmin(user);
    checkLinkifier(p.pattern, p.url_template);
    return realm.ask('linkifier.update', {
      acting_user_id: user.id,
      id: p.filter_id,
      pattern: p.pattern,
      url_template: p.url_template,
    });
  },
});

/** DELETE /api/v1/realm/filters/{filter_id} */
export const deleteLinkifier = endpoint({
  method: 'DELETE',
  path: '/api/v1/realm/filters/:filter_id',
  params: z.object({ filter_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    requireAdmin(user);
    return realm.ask('linkifier.remove', { acting_user_id: user.id, id: p.filter_id });
  },
});

/** PATCH /api/v1/realm/linkifiers — the processing order, as a list of every linkifier's id. */
export const reorderLinkifiers = endpoint({
  method: 'PATCH',
  path: '/api/v1/realm/linkifiers',
  params: z.object({ ordered_linkifier_ids: intList() }),
  handle: async ({ realm, user }, p) => {
    requireAdmin(user);
    return realm.ask('linkifier.reorder', {
      acting_user_id: user.id,
      ordered_linkifier_ids: p.ordered_linkifier_ids,
    });
  },
});
