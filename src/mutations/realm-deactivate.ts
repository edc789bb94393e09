/**
 * Deactivating an organization (POST /realm/deactivate, owners) and reactivating it (internal: the
 * reference does it through a confirmation link). A deactivated realm refuses every API request
 * ("This organization has been deactivated"); its data stays. Everyone active is told (`realm`
 * `deactivated`, which flushes held polls), then every session of the realm ends: event queues
 * deleted, sockets closed. Reference: actions/realm_settings.py do_deactivate_realm,
 * do_reactivate_realm.
 */
import { OrganizationOwnerRequiredError, RealmDeactivatedError } from '../lib/errors.js';
import { Role } from '../lib/roles.js';
import type { MutationContext } from './context.js';
import { endLoginSessions } from './sessions.js';

export type DeactivateRealmCommand = { acting_user_id: number };

export function checkDeactivateRealm(ctx: MutationContext, cmd: DeactivateRealmCommand): void {
  const { store, realm } = ctx;
  const actor = store.users.byId(cmd.acting_user_id);
  if (!actor || actor.realm_id !== realm.id || actor.role !== Role.OWNER) {
    throw new OrganizationOwnerRequiredError();
  }
  if (realm.deactivated) throw new RealmDeactivatedError();
}

/**
 * do_deactivate_realm: nobody can log in or use an API key any more; every user is told
 * (`realm` `deactivated`), as the reference tells them before their clients stop; then every
 * session of the realm ends (queues deleted, sockets closed).
 */
export function doDeactivateRealm(ctx: MutationContext): Record<string, never> {
  const { store, realm } = ctx;
  store.realms.setDeactivated(realm.id, true);
  ctx.emit(
    { type: 'realm', op: 'deactivated', realm_id: realm.id },
    realm.activeUsers().map((u) => u.id),
  );
  endLoginSessions(ctx, 'realm');
  ctx.afterCommit(() => realm.reloadRealm());
  ctx.endSessions('realm');
  return {};
}

export function doReactivateRealm(
  ctx: MutationContext,
  _cmd: Record<string, never>,
): Record<string, never> {
  ctx.store.realms.setDeactivated(ctx.realm.id, false);
  ctx.afterCommit(() => ctx.realm.reloadRealm());
  return {};
}
