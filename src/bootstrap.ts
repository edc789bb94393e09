/**
 * First boot: on an empty data directory, create a first realm (on the root domain) and its owner,
 * so `npm start` on a fresh clone gives something to log in to.
 */
import { doCreateRealm, type CreateRealmResult } from './mutations/realms.js';
import { generatePassword, hashPassword } from './lib/password.js';
import { nowSeconds, type ServerConfig } from './config.js';
import type { Store } from './storage/store.js';

export type FirstRealmCredentials = CreateRealmResult & {
  password: string;
  realm_string_id: string;
};

export async function ensureFirstRealm(
  store: Store,
  config: Pick<ServerConfig, 'scryptN' | 'clock'>,
): Promise<FirstRealmCredentials | null> {
  if (store.realms.all().length > 0) return null;
  const password = generatePassword();
  const hash = await hashPassword(password, config.scryptN);
  const created = doCreateRealm(store, {
    name: 'Confab',
    string_id: '',
    owner_email: 'owner@example.com',
    owner_full_name: 'Organization Owner',
    owner_password_hash: hash,
    owner_can_create_users: true,
    now: nowSeconds(config),
  });
  return { ...created, password, realm_string_id: '' };
}
