/**
 * The browser app's login (docs/web.md "Sessions"; src/http/sessions.ts):
 *
 *   POST /json/login            `username` (the e-mail address) and `password` → the session
 *                               cookie, and `user_id`, `email`, `csrf_token`; wrong credentials:
 *                               401 AUTHENTICATION_FAILED (challenge `Session`, never Basic)
 *   GET  /json/session          the same fields for a live session, 401 otherwise; with
 *                               `optional=true`, no session is an answer too (200, the fields
 *                               null): what the app asks on load, where a 401 is a console error
 *   POST /json/logout           ends the session (if any) and clears the cookie
 *   POST /json/fetch_api_key    the logged-in user's API key, for their password (the app's
 *                               "show my API key"; reference: views/auth.py json_fetch_api_key)
 *
 * Logging in counts against the same limits as POST /api/v1/fetch_api_key (passwordLogin), and
 * respects the realm's login methods; a cross-site login is refused (login CSRF).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { RawBody } from '../http/respond.js';
import { loginFailed } from '../http/request-log.js';
import {
  clearedSessionCookie,
  csrfTokenOf,
  newSessionToken,
  sessionCookie,
  sessionKey,
} from '../http/sessions.js';
import { JsonableError, UnauthorizedError } from '../lib/errors.js';
import { bool, ownNulRule, str } from '../lib/params.js';
import { verifyPassword } from '../lib/password.js';
import { passwordLogin } from './auth.js';

/** A JSON success answer with headers of its own (the cookie), never stored by a cache. */
function answer(data: Record<string, unknown>, headers: Record<string, string> = {}): RawBody {
  return new RawBody(JSON.stringify({ result: 'success', msg: '', ...data }), 'application/json', {
    'Cache-Control': 'no-store',
    ...headers,
  });
}

export const login = endpoint({
  method: 'POST',
  path: '/json/login',
  auth: 'none',
  sessionAuth: 'only',
  params: z.object({ username: str(), password: ownNulRule(str()) }), // a password: only hashed
  handle: async ({ server, realm, req }, p) => {
    const user = await passwordLogin(server, realm, req, p.username, p.password);
    const token = newSessionToken();
    const age = server.config.sessionAgeSeconds;
    await realm!.ask('session.create', {
      user_id: user.id,
      token_hash: sessionKey(token),
      lifetime_seconds: age,
    });
    return answer(
      { user_id: user.id, email: user.delivery_email, csrf_token: csrfTokenOf(token) },
      { 'Set-Cookie': sessionCookie(server.config, token, age) },
    );
  },
});

export const getSession = endpoint({
  method: 'GET',
  path: '/json/session',
  // A request without a live session reaches the handler: a 401 but for `optional`.
  auth: 'optional',
  sessionAuth: 'only',
  params: z.object({ optional: bool().default(false) }),
  handle: (ctx, p) => {
    const session = ctx.req.browser?.session;
    if (!session) {
      if (!p.optional) throw new UnauthorizedError();
      return answer({ user_id: null, email: null, csrf_token: null });
    }
    return answer({
      user_id: session.user.id,
      email: session.user.delivery_email,
      csrf_token: session.csrfToken,
    });
  },
});

export const logout = endpoint({
  method: 'POST',
  path: '/json/logout',
  auth: 'optional',
  sessionAuth: 'only',
  params: z.object({}),
  handle: async (ctx) => {
    const session = ctx.req.browser?.session;
    if (session && ctx.realm)
      await ctx.realm.ask('session.delete', { token_hash: session.tokenHash });
    return answer({}, { 'Set-Cookie': clearedSessionCookie(ctx.server.config) });
  },
});

export const fetchApiKeyBySession = endpoint({
  method: 'POST',
  path: '/json/fetch_api_key',
  auth: 'user',
  sessionAuth: 'only',
  params: z.object({ password: ownNulRule(str()).default('') }), // only hashed
  handle: async (ctx, p) => {
    const { server, realm, user, req } = ctx;
    if (realm.view.settings.password_auth_enabled) {
      server.limits?.loginAttempt(req, realm.id, user.delivery_email);
      if (!(await verifyPassword(p.password, user.password_hash))) {
        loginFailed(req, 'password', user.delivery_email, realm.id);
        throw new JsonableError('Password is incorrect.');
      }
      server.limits?.loginSucceeded(realm.id, user.delivery_email);
    }
    return answer({ api_key: user.api_key, email: user.delivery_email });
  },
});
