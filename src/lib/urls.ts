/** URLs clients see, built from EXTERNAL_HOST and the realm's subdomain. */
import crypto from 'node:crypto';
import type { ServerConfig } from '../config.js';

export function realmHost(config: Pick<ServerConfig, 'externalHost'>, stringId: string): string {
  return stringId === '' ? config.externalHost : `${stringId}.${config.externalHost}`;
}

export function realmUrl(
  config: Pick<ServerConfig, 'externalHost' | 'externalScheme'>,
  stringId: string,
): string {
  return `${config.externalScheme}://${realmHost(config, stringId)}`;
}

/** The default (external-host identicon) icon of a realm that has not uploaded one. */
export function realmIconUrl(stringId: string): string {
  const hash = crypto.createHash('md5').update(`realm:${stringId}`).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&s=100`;
}
