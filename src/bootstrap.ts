/**
 * First boot: on an empty data directory, create a first realm (on the root domain) with its
 * owner, its default channels and welcome messages (src/realm-setup.ts), so `npm start` on a
 * fresh clone gives something to log in to and somewhere to write.
 */
import { RealmRegistry } from '../actors/registry.js';
import { nowSeconds, type ServerConfig } from './config.js';
import { generatePassword, hashPassword } from './lib/password.js';
import type { CreateRealmResult } from './mutations/realms.js';
import { createRealmWithDefaults } from './realm-setup.js';
import type { Store } from './storage/store.js';
import { RenderPool } from '../workers/pool.js';

export type FirstRealmCredentials = CreateRealmResult & {
  password: string;
  realm_string_id: string;
};

export async function ensureFirstRealm(
  store: Store,
  config: Pick<ServerConfig, 'scryptN' | 'externalHost' | 'externalScheme' | 'clock'>,
): Promise<FirstRealmCredentials | null> {
  if (store.realms.all().length > 0) return null;
  const password = generatePassword();
  const hash = await hashPassword(password, config.scryptN);
  // No server runs yet: the realm's actor is a temporary one whose events have no audience.
  const realms = new RealmRegistry(store, { publish: () => {} });
  const renderer = new RenderPool();
  try {
    const created = await createRealmWithDefaults({ config, store, renderer }, realms, {
      name: 'Confab',
      string_id: '',
      owner_email: 'owner@example.com',
      owner_full_name: 'Organization Owner',
      owner_password_hash: hash,
      owner_can_create_users: true,
      now: nowSeconds(config),
    });
    return { ...created, password, realm_string_id: '' };
  } finally {
    realms.closeAll();
    await renderer.close();
  }
}
