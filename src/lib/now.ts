/**
 * The server's "now" (ServerConfig.clock), apart from src/config.ts so that what needs only this
 * does not load the settings' parser with it (the admin tool's command table: src/manage.ts).
 */
import type { ServerConfig } from '../config.js';

/** The server's "now" in UNIX seconds (ServerConfig.clock): the one source of time. */
export function nowSeconds(config: Pick<ServerConfig, 'clock'>): number {
  return Math.floor(config.clock() / 1000);
}
