/**
 * Browser sessions (docs/web.md "Sessions"): how the web app is authenticated, never by the API
 * key, which its page never holds.
 *
 * - POST /json/login (src/endpoints/session.ts) makes a session: a random 256-bit token in the
 *   cookie `confab_session` (HttpOnly, SameSite=Lax, Path=/, Secure under https), stored
 *   server-side only as its hash, with an expiry (SESSION_COOKIE_AGE; two weeks by default, the
 *   reference's).
 * - `/json/<path>` serves every `/api/v1/<path>` endpoint, authenticated by that cookie alone
 *   (never HTTP Basic); media routes (`/user_uploads/*`, thumbnails, `/avatar/*`) take the cookie
 *   when the request has no Authorization header, as the reference's do.
 * - CSRF: an unsafe method under /json/ is refused (403 CSRF_FAILED) when the browser says it
 *   comes from another site (Sec-Fetch-Site, or an Origin other than the request's own), and,
 *   when a session authenticates it, unless it carries `X-CSRF-Token` with the session's token
 *   (given by login and GET /json/session; derived from the session's secret, so it is never
 *   stored, and says nothing about that secret).
 * - Every 401 a browser route answers challenges `Session`, never `Basic`: a browser shows its
 *   own login dialog for Basic, on a failed fetch or <img> alike.
 */
import crypto from 'node:crypto';
import type { RealmRuntime } from '../../actors/registry.js';
import { nowSeconds, type ServerConfig } from '../config.js';
import type { ServerContext } from '../context.js';
import { JsonableError, UnauthorizedError } from '../lib/errors.js';
import { safeEqual } from '../lib/password.js';
import type { UserRow } from '../storage/users.js';
import type { AuthMode } from './endpoint.js';
import type { RequestContext } from './request.js';
import type { HttpRequest } from './uws.js';

export const SESSION_COOKIE = 'confab_session';

/**
 * How an endpoint takes a session: `only` (the /json/ mirror: the cookie, never Basic), `also`
 * (media routes: Basic when the request carries an Authorization header, else the cookie).
 */
export type SessionAuth = 'only' | 'also';

/** A session that authenticated a request. */
export type Session = {
  user: UserRow;
  /** The stored key of the session (logout, a password change that keeps it). */
  tokenHash: string;
  csrfToken: string;
  expiresAt: number;
};

/** What a browser route reads of its request (copied while uWS's request is valid). */
export class BrowserRequest {
  /** The session that authenticated the request, once it did. */
  session: Session | null = null;
  constructor(
    readonly cookie: string,
    readonly origin: string,
    readonly fetchSite: string,
    readonly csrfToken: string,
    /** Authenticated by the session (a /json/ route, or no Authorization header); its 401s challenge `Session`. */
    readonly bySession: boolean,
  ) {}
}

export function readBrowserRequest(
  req: HttpRequest,
  mode: SessionAuth,
  authorization: string,
): BrowserRequest {
  return new BrowserRequest(
    req.getHeader('cookie'),
    req.getHeader('origin'),
    req.getHeader('sec-fetch-site'),
    req.getHeader('x-csrf-token'),
    mode === 'only' || authorization === '',
  );
}

/** Whether the request carries credentials (HTTP Basic, or a browser session's cookie). */
export function hasCredentials(ctx: RequestContext): boolean {
  return ctx.authorization !== '' || (ctx.browser?.cookie.includes(`${SESSION_COOKIE}=`) ?? false);
}

const TOKEN_FORM = /^[A-Za-z0-9_-]{43}$/;

/** A new session's secret: 32 random bytes, base64url (43 characters). */
export function newSessionToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** What the database keeps of a token. */
export function sessionKey(token: string): string {
  return crypto.createHash('sha256').update('confab session\0').update(token).digest('hex');
}

/** The CSRF token of a session: derived from its secret, and revealing nothing of it. */
export function csrfTokenOf(token: string): string {
  return crypto
    .createHash('sha256')
    .update('confab csrf\0')
    .update(token)
    .digest('base64url')
    .slice(0, 32);
}

/** The values of the session cookie in a Cookie header (a sibling host may have set a second). */
export function sessionTokens(cookieHeader: string): string[] {
  const out: string[] = [];
  if (cookieHeader === '') return out;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (TOKEN_FORM.test(value) && out.length < 4) out.push(value);
  }
  return out;
}

/** The Set-Cookie value that stores a session's token for `maxAge` seconds. */
export function sessionCookie(
  config: Pick<ServerConfig, 'externalScheme'>,
  token: string,
  maxAge: number,
): string {
  const secure = config.externalScheme === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; Max-Age=${Math.max(0, maxAge)}; Path=/; HttpOnly; SameSite=Lax${secure}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(config: Pick<ServerConfig, 'externalScheme'>): string {
  return sessionCookie(config, '', 0);
}

/**
 * The live session a token names in `realm`: not expired, its user active, the realm not
 * deactivated (those ends delete the rows too; this holds even before they are applied).
 */
export function findSession(
  server: ServerContext,
  realm: RealmRuntime | undefined,
  token: string,
): Session | null {
  if (!realm) return null;
  const tokenHash = sessionKey(token);
  const row = server.store.sessions.byTokenHash(tokenHash);
  if (!row || row.realm_id !== realm.id || row.expires_at <= nowSeconds(server.config)) return null;
  const user = realm.view.user(row.user_id);
  if (!user || !user.is_active || realm.view.deactivated) return null;
  return { user, tokenHash, csrfToken: csrfTokenOf(token), expiresAt: row.expires_at };
}

const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

function csrfError(reason: string): JsonableError {
  return new JsonableError(`CSRF error: ${reason}`, { code: 'CSRF_FAILED', status: 403 });
}

/**
 * Refuses an unsafe request a browser sent from another site: Sec-Fetch-Site other than
 * same-origin (or none: typed by the user), or an Origin other than this request's own. A
 * request with neither header (not a browser, or a very old one) passes here; a session still
 * needs its token.
 */
export function checkSameOrigin(
  config: Pick<ServerConfig, 'externalScheme'>,
  ctx: RequestContext,
  browser: BrowserRequest,
): void {
  const site = browser.fetchSite.toLowerCase();
  if (site !== '' && site !== 'same-origin' && site !== 'none') {
    throw csrfError('the request comes from another site.');
  }
  if (browser.origin === '') return;
  let origin: URL | null;
  try {
    origin = new URL(browser.origin);
  } catch {
    origin = null;
  }
  const ownHost = ctx.host.trim().toLowerCase();
  if (
    origin === null ||
    origin.protocol !== `${config.externalScheme}:` ||
    origin.host !== withoutDefaultPort(ownHost, config.externalScheme)
  ) {
    throw csrfError(`Origin checking failed - ${browser.origin.slice(0, 200)} is not this server.`);
  }
}

/**
 * The event WebSocket's handshake (GET /json/events/socket): browsers always send Origin there,
 * and it must be the page's own. Cookies go with a WebSocket to any site that asks, so without
 * this any page could open a socket with the user's session and read their events.
 */
export function checkSocketOrigin(
  config: Pick<ServerConfig, 'externalScheme'>,
  ctx: RequestContext,
  browser: BrowserRequest,
): void {
  if (browser.origin === '') throw csrfError('a WebSocket from a browser page carries its Origin.');
  checkSameOrigin(config, ctx, browser);
}

function withoutDefaultPort(host: string, scheme: 'http' | 'https'): string {
  const port = scheme === 'https' ? ':443' : ':80';
  return host.endsWith(port) ? host.slice(0, -port.length) : host;
}

/**
 * Authenticates a browser route's request by its session cookie: the user, or null (anonymous,
 * where the endpoint allows it: a stale cookie counts as none, as the reference's). Unsafe
 * methods are checked against cross-site requests first, and a session's need its CSRF token.
 */
export function authenticateSession(
  server: ServerContext,
  realm: RealmRuntime | undefined,
  auth: AuthMode,
  ctx: RequestContext,
  browser: BrowserRequest,
): UserRow | null {
  const unsafe = UNSAFE.has(ctx.method);
  if (unsafe) checkSameOrigin(server.config, ctx, browser);
  if (auth === 'none') return null;
  let session: Session | null = null;
  for (const token of sessionTokens(browser.cookie)) {
    session = findSession(server, realm, token);
    if (session !== null) break;
  }
  if (session === null) {
    if (auth === 'user') throw new UnauthorizedError();
    return null;
  }
  if (unsafe) {
    if (browser.csrfToken === '') throw csrfError('CSRF token missing.');
    if (!safeEqual(browser.csrfToken, session.csrfToken)) throw csrfError('CSRF token incorrect.');
  }
  browser.session = session;
  return session.user;
}
