/**
 * A setting the server (or the admin tool) cannot start with: a bad environment variable, a bad
 * first-start setting, a data directory it cannot use. The message names the setting and says
 * what is wrong; it is the whole of what the operator needs, so the start says it on one line,
 * without a stack trace (src/main.ts).
 */
export class SettingsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SettingsError';
  }
}
