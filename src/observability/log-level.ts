/**
 * The log levels and LOG_LEVEL's value, apart from the logger (log.ts) so that what only checks
 * the setting does not load pino: the admin tool, sending a command to the running server, logs
 * nothing (src/manage.ts).
 */
import { SettingsError } from '../lib/settings-error.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** LOG_LEVEL's value, if it names a level; throws for anything else (a typo should not go unseen). */
export function levelFromEnv(value: string | undefined): LogLevel | undefined {
  if (value === undefined || value === '') return undefined;
  const v = value.toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(v)) {
    throw new SettingsError(`bad environment: LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return v as LogLevel;
}
