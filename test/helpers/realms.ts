/** What doCreateRealm needs for a realm in a bare Store (unit tests without a server). */
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
