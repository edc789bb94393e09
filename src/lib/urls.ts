/** URLs clients see, built from EXTERNAL_HOST and the realm's subdomain. */
import crypto from 'node:crypto';
import type { ServerConfig } from '../config.js';
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

/**
 * The default icon of a realm that has not uploaded one: the server's own image, or the external
 * host's identicon when the realm opted into external avatars (src/lib/avatars.ts).
 */
export function realmIconUrl(stringId: string, externalAvatars: boolean): string {
  if (!externalAvatars) return DEFAULT_REALM_ICON_PATH;
  const hash = crypto.createHash('md5').update(`realm:${stringId}`).digest('hex');
  return `${EXTERNAL_AVATAR_ORIGIN}/avatar/${hash}?d=identicon&s=100`;
}
