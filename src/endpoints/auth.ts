/**
 * POST /api/v1/fetch_api_key — password login for API clients. Reference: views/auth.py
 * api_fetch_api_key. The password is checked before the account's state is revealed, so the
 * deactivation answers cannot be used to probe which addresses have accounts. The browser's login
 * (POST /json/login, ./session.ts) checks its password the same way (`passwordLogin`).
 */
import { z } from 'zod';
import type { RealmRuntime } from '../../actors/registry.js';
import type { ServerContext } from '../context.js';
import { endpoint } from '../http/endpoint.js';
import type { RequestContext } from '../http/request.js';
import {
  AuthenticationFailedError,
  JsonableError,
  RealmDeactivatedError,
  UserDeactivatedError,
} from '../lib/errors.js';
import { ownNulRule, str } from '../lib/params.js';
import { verifyPassword } from '../lib/password.js';
import { loginFailed } from '../http/request-log.js';
import type { UserRow } from '../storage/users.js';

/**
 * A hash of nothing in particular, verified when the account does not exist (constant timing):
 * at the cost the server hashes passwords at (`scryptN`). At a fixed 2^15 a test server's
 * (2^10) unknown accounts cost 32 times its real ones: seconds each on a loaded machine.
 */
const dummyHash = (scryptN: number) =>
  `scrypt$${scryptN}$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;

/**
 * The account an e-mail address and password log into, in the realm of the request's host, or
 * the refusal: every attempt counts against the username's login limit; the realm's login
 * methods (GET /server_settings `authentication_methods`) decide whether a password may log in.
 */
export async function passwordLogin(
  server: ServerContext,
  realm: RealmRuntime | undefined,
  req: RequestContext,
  username: string,
  password: string,
): Promise<UserRow> {
  if (!realm) throw new JsonableError('Invalid subdomain', { code: 'INVALID_SUBDOMAIN' });
  // Every attempt counts against the username (reference: backends.py rate_limit_auth), even one
  // with the right password once over the limit; a successful login forgets the attempts.
  server.limits?.loginAttempt(req, realm.id, username);
  const user = realm.view.userByEmail(username.trim());
  const ok = await verifyPassword(
    password,
    user?.password_hash ?? dummyHash(server.config.scryptN),
  );
  if (!user || !ok) {
    loginFailed(req, 'password', username, realm.id);
    throw new AuthenticationFailedError();
  }
  server.limits?.loginSucceeded(realm.id, username);
  if (!realm.view.settings.password_auth_enabled) {
    throw new JsonableError('Password authentication is disabled in this organization', {
      code: 'PASSWORD_AUTH_DISABLED',
      status: 401,
    });
  }
  if (!user.is_active) throw new UserDeactivatedError();
  if (realm.view.deactivated) throw new RealmDeactivatedError();
  return user;
}

export const fetchApiKey = endpoint({
  method: 'POST',
  path: '/api/v1/fetch_api_key',
  auth: 'none',
  params: z.object({ username: str(), password: ownNulRule(str()) }), // a password: only hashed
  handle: async ({ server, realm, req }, p) => {
    const user = await passwordLogin(server, realm, req, p.username, p.password);
    return { api_key: user.api_key, email: user.delivery_email, user_id: user.id };
  },
});
