/** URLs clients see, built from EXTERNAL_HOST and the realm's subdomain. */
import crypto from 'node:crypto';
import type { ServerConfig } from '../config.js';
import type { RealmSettings } from './realm-settings.js';
import { DEFAULT_REALM_ICON_PATH, EXTERNAL_AVATAR_ORIGIN } from './avatars.js';

export function realmHost(config: Pick<ServerConfig, 'externalHost'>, stringId: string): string {
  return stringId === '' ? config.externalHost : `${stringId}.${config.externalHost}`;
}

export function realmUrl(
  config: Pick<ServerConfig, 'externalHost' | 'externalScheme'>,
  stringId: string,
): string {
  return `${config.externalScheme}://${realmHost(config, stringId)}`;
}

/** The path an uploaded realm icon is served at (src/endpoints/realm-icon.ts). */
export function uploadedRealmIconPath(realmId: number, fileName: string): string {
  return `/user_avatars/${realmId}/realm/${fileName}`;
}

/**
 * A realm's icon: the one an administrator uploaded (icon_source 'U'), else the default, the
 * server's own image or, when the realm opted into external avatars, the external host's
 * identicon (src/lib/avatars.ts).
 */
export function realmIconUrl(
  realm: { id: number; string_id: string },
  settings: Pick<RealmSettings, 'icon_source' | 'icon_file' | 'external_avatars'>,
): string {
  if (settings.icon_source === 'U' && settings.icon_file !== '') {
    return uploadedRealmIconPath(realm.id, settings.icon_file);
  }
  if (!settings.external_avatars) return DEFAULT_REALM_ICON_PATH;
  const hash = crypto.createHash('md5').update(`realm:${realm.string_id}`).digest('hex');
  return `${EXTERNAL_AVATAR_ORIGIN}/avatar/${hash}?d=identicon&s=100`;
}
