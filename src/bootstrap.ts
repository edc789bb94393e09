/**
 * First start: on a data directory without realms, create the first realm (on the root domain)
 * with its owner, default channels and welcome messages (src/realm-setup.ts), so `npm start` on a
 * fresh clone gives something to log in to and somewhere to write.
 *
 * The realm's name and the owner's e-mail and name come from the settings FIRST_REALM_NAME,
 * FIRST_OWNER_EMAIL and FIRST_OWNER_NAME (or `npm start -- --realm-name … --owner-email …
 * --owner-name …`), checked before anything else happens. `npm start` (src/main.ts) creates the
 * realm only once the server listens, so a start that cannot listen creates nothing, and writes
 * the owner's one-time password and API key to a file only its user can read
 * (DATA_DIR/first-owner.txt), never to the log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RealmRegistry } from '../actors/registry.js';
import { nowSeconds, type ServerConfig } from './config.js';
import { isValidEmail } from './lib/email-validation.js';
import { JsonableError } from './lib/errors.js';
import { SettingsError } from './lib/settings-error.js';
import { generatePassword, hashPassword } from './lib/password.js';
import { checkRealmName } from './lib/realm-settings.js';
import { realmUrl } from './lib/urls.js';
import { checkFullName } from './lib/user-rules.js';
import type { CreateRealmResult } from './mutations/realms.js';
import { createRealmWithDefaults } from './realm-setup.js';
import type { Store } from './storage/store.js';
import { RenderPool } from '../workers/pool.js';

export type FirstRealmCredentials = CreateRealmResult & {
  password: string;
  realm_string_id: string;
};

/** What the first realm is called and who owns it. */
export type FirstRealmSettings = { realmName: string; ownerEmail: string; ownerFullName: string };

export const DEFAULT_FIRST_REALM: FirstRealmSettings = {
  realmName: 'Confab',
  ownerEmail: 'owner@example.com',
  ownerFullName: 'Organization Owner',
};

/** The file in the data directory that holds the first owner's credentials. */
export const FIRST_OWNER_FILE = 'first-owner.txt';

/**
 * The first realm's settings: flags (`--realm-name`, `--owner-email`, `--owner-name`) over the
 * environment (FIRST_REALM_NAME, FIRST_OWNER_EMAIL, FIRST_OWNER_NAME) over the defaults. Throws an
 * Error naming the setting for a value the realm could not be created with.
 */
export function firstRealmSettings(
  env: NodeJS.ProcessEnv,
  flags: { 'realm-name'?: string; 'owner-email'?: string; 'owner-name'?: string } = {},
): FirstRealmSettings {
  const pick = (flag: string | undefined, value: string | undefined) =>
    flag ?? (value === undefined || value === '' ? undefined : value);
  const realmName = checkRealmName(
    pick(flags['realm-name'], env.FIRST_REALM_NAME) ?? DEFAULT_FIRST_REALM.realmName,
    (_, message) => {
      throw new SettingsError(`bad first-start setting: FIRST_REALM_NAME ${message}`);
    },
  );
  const ownerEmail = (
    pick(flags['owner-email'], env.FIRST_OWNER_EMAIL) ?? DEFAULT_FIRST_REALM.ownerEmail
  ).trim();
  if (!isValidEmail(ownerEmail))
    throw new SettingsError('bad first-start setting: FIRST_OWNER_EMAIL is not an e-mail address');
  let ownerFullName: string;
  try {
    ownerFullName = checkFullName(
      pick(flags['owner-name'], env.FIRST_OWNER_NAME) ?? DEFAULT_FIRST_REALM.ownerFullName,
    );
  } catch (err) {
    throw new SettingsError(
      `bad first-start setting: FIRST_OWNER_NAME: ${err instanceof JsonableError ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return { realmName, ownerEmail, ownerFullName };
}

/** The running server's realms and renderer, for a first realm made while it serves. */
export type FirstRealmRuntime = { realms: RealmRegistry; renderer: RenderPool };

/**
 * Creates the first realm if the data directory has none; null if it has one. With `runtime`
 * (the running server's), the realm is made through the server's own realm actors; without, with
 * temporary ones whose events have no audience.
 */
export async function ensureFirstRealm(
  store: Store,
  config: Pick<ServerConfig, 'scryptN' | 'externalHost' | 'externalScheme' | 'clock'>,
  settings: FirstRealmSettings = DEFAULT_FIRST_REALM,
  runtime?: FirstRealmRuntime,
): Promise<FirstRealmCredentials | null> {
  if (store.realms.all().length > 0) return null;
  const password = generatePassword();
  const hash = await hashPassword(password, config.scryptN);
  const realms = runtime?.realms ?? new RealmRegistry(store, { publish: () => {} });
  const renderer = runtime?.renderer ?? new RenderPool();
  try {
    const created = await createRealmWithDefaults({ config, store, renderer }, realms, {
      name: settings.realmName,
      string_id: '',
      owner_email: settings.ownerEmail,
      owner_full_name: settings.ownerFullName,
      owner_password_hash: hash,
      owner_can_create_users: true,
      now: nowSeconds(config),
    });
    return { ...created, password, realm_string_id: '' };
  } finally {
    if (!runtime) {
      realms.closeAll();
      await renderer.close();
    }
  }
}

/**
 * Writes the first owner's credentials to DATA_DIR/first-owner.txt, readable by the server's user
 * only (0600), whole or not at all (a temporary file renamed into place, synced), as KEY=value
 * lines a person or a script can read. Returns the file's path.
 */
export function writeFirstOwnerFile(
  dataDir: string,
  config: Pick<ServerConfig, 'externalHost' | 'externalScheme'>,
  realmName: string,
  creds: FirstRealmCredentials,
): string {
  const file = path.join(dataDir, FIRST_OWNER_FILE);
  const text = [
    '# The first realm of this Confab server and its owner, written once at the first start.',
    '# Log in with these, change the password, then delete this file.',
    `realm_name=${realmName}`,
    `realm_url=${realmUrl(config, creds.realm_string_id)}`,
    `email=${creds.email}`,
    `password=${creds.password}`,
    `api_key=${creds.api_key}`,
    '',
  ].join('\n');
  const partial = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(partial, 'w', 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(partial, file);
  return file;
}
