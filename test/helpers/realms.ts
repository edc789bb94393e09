/** What doCreateRealm needs for a realm in a bare Store (unit tests without a server). */
import type { RealmRuntime } from '../../actors/registry.js';
import type { CreateRealmParams } from '../../src/mutations/realms.js';

export const realmParams = (stringId: string, name = 'Test'): CreateRealmParams => ({
  name,
  string_id: stringId,
  owner_email: `owner@${stringId || 'root'}.example.com`,
  owner_full_name: 'Owner',
  owner_password_hash: null,
  owner_can_create_users: true,
  now: 1_700_000_000,
});

/**
 * Opts a realm into external avatars (src/lib/avatars.ts): users without an uploaded avatar are
 * shown with the external host's images, and client_extavatar has its effect. For the tests of
 * that behaviour; the default is the server's own image.
 */
export async function useExternalAvatars(
  server: { context: { realms: { get(id: number): RealmRuntime | undefined } } },
  realmId: number,
  on = true,
): Promise<void> {
  await server.context.realms
    .get(realmId)!
    .ask('realm.update_settings', { acting_user_id: null, settings: { external_avatars: on } });
}
