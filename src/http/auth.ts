/**
 * Authentication of API requests: HTTP Basic with `email:api_key`, against the realm chosen by the
 * Host's subdomain. Every failure is a 401 UNAUTHORIZED with a WWW-Authenticate challenge; the
 * message says why, as the reference's (validate_api_key / validate_account_and_subdomain).
 */
import type { RealmRegistry, RealmRuntime } from '../../actors/registry.js';
import { UnauthorizedError } from '../lib/errors.js';
import { loginFailed } from './request-log.js';
import { safeEqual } from '../lib/password.js';
import type { ReadStore } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';
import type { RequestLimits } from './rate-limits.js';
import type { RequestContext } from './request.js';

/** `chat.example.com` → '' (root); `eng.chat.example.com` → 'eng'; unrelated hosts → ''. */
export function subdomainFromHost(host: string, externalHost: string): string {
  const hostname = stripPort(host.trim().toLowerCase());
  const root = stripPort(externalHost.trim().toLowerCase());
  if (hostname === root || !hostname.endsWith('.' + root)) return '';
  return hostname.slice(0, -(root.length + 1));
}

function stripPort(h: string): string {
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1); // [::1]:9991
  const i = h.lastIndexOf(':');
  return i === -1 ? h : h.slice(0, i);
}

export function resolveRealm(
  realms: RealmRegistry,
  host: string,
  externalHost: string,
): RealmRuntime | undefined {
  return realms.byHostHeader(host, subdomainUnder(externalHost));
}

/** The last `subdomainFromHost` bound to a root (one per server: not made again per request). */
let boundRoot: { root: string; subdomainOf: (host: string) => string } | null = null;

function subdomainUnder(externalHost: string): (host: string) => string {
  if (boundRoot?.root !== externalHost) {
    boundRoot = { root: externalHost, subdomainOf: (h) => subdomainFromHost(h, externalHost) };
  }
  return boundRoot.subdomainOf;
}

/** Decodes `Basic base64(email:api_key)`; throws the 401 the reference gives for each failure. */
export function parseBasicAuth(header: string): { email: string; apiKey: string } {
  if (header === '') throw new UnauthorizedError();
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'basic') {
    throw new UnauthorizedError('This endpoint requires HTTP basic authentication.');
  }
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new UnauthorizedError('Invalid authorization header for basic auth');
  return { email: decoded.slice(0, colon), apiKey: decoded.slice(colon + 1) };
}

/**
 * The user a request's `Authorization` header authenticates, or the 401. With `limits`, failed
 * attempts count against the client's address together with the account tried (unknown accounts
 * share one count per address), and that pair, once over its limit, gets the 429 before its
 * credentials are even checked — so one account's failures, or an attacker's, never refuse
 * another account's valid key from the same address (a NAT, a proxy).
 */
export function authenticate(
  store: ReadStore,
  realm: RealmRuntime | undefined,
  header: string,
  limits: RequestLimits | null = null,
  ctx: RequestContext | null = null,
): UserRow {
  // A header that authenticated before, with no change to any user of the realm since (the cache
  // is cleared on every user reload: deactivation, key rotation, ...), authenticates again.
  const cached = realm?.view.cachedAuth(header);
  if (cached && !realm!.view.deactivated) return cached;
  if (ctx === null || header === '') return checkCredentials(store, realm, header);
  const email = triedEmail(header);
  // The account tried, for counting its failures: a user id of the realm, or '*'.
  const tried = limits === null || email === '' ? undefined : realm?.view.userByEmail(email);
  const account = tried ? String(tried.id) : '*';
  limits?.checkAuthentication(ctx, account);
  try {
    return checkCredentials(store, realm, header);
  } catch (err) {
    if (err instanceof UnauthorizedError) {
      limits?.authenticationFailed(ctx, account);
      loginFailed(ctx, 'api_key', email, realm?.id ?? null);
    }
    throw err;
  }
}

/** The e-mail address a Basic header names ('' if it names none). */
function triedEmail(header: string): string {
  try {
    return parseBasicAuth(header).email;
  } catch {
    return '';
  }
}

function checkCredentials(
  store: ReadStore,
  realm: RealmRuntime | undefined,
  header: string,
): UserRow {
  const { email, apiKey } = parseBasicAuth(header);
  const user = realm?.view.userByEmail(email);
  if (user && safeEqual(user.api_key, apiKey)) {
    if (!user.is_active) throw new UnauthorizedError('Account is deactivated');
    if (realm!.view.deactivated)
      throw new UnauthorizedError('This organization has been deactivated');
    realm!.view.rememberAuth(header, user);
    return user;
  }
  // Not a user of this realm with this key: a valid key of another realm's account gets the
  // reference's more helpful message.
  const elsewhere = store.users.byApiKey(apiKey);
  if (
    elsewhere &&
    elsewhere.delivery_email.toLowerCase() === email.toLowerCase() &&
    elsewhere.realm_id !== realm?.id
  ) {
    throw new UnauthorizedError('Account is not associated with this subdomain');
  }
  throw new UnauthorizedError('Invalid API key');
}
