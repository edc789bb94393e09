/**
 * `GET /server_settings` for the login form and the app it opens: one request, not two. The
 * login form asks as it is drawn (the realm's name for its heading) and leaves its answer here;
 * the app opened from it takes that answer (once) instead of asking again. An app opened by a
 * session the page already had asks for its own. A failed answer is asked again by the app.
 */
import { ConfabClient } from '../../src/client/api.js';

type Settings = Record<string, unknown>;

let left: Promise<Settings> | null = null;

/** The login form's request: its answer is kept for the app opened next. */
export function settingsForLogin(): Promise<Settings> {
  left = ConfabClient.serverSettings(location.origin);
  return left;
}

/** The app's: the login form's answer when it left one (taken), else a request of its own. */
export function settingsForApp(): Promise<Settings> {
  const mine = left;
  left = null;
  const ask = () => ConfabClient.serverSettings(location.origin);
  return mine ? mine.catch(ask) : ask();
}
