/** URLs clients see, built from EXTERNAL_HOST and the realm's subdomain. */
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
