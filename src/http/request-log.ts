/**
 * The end of every request: its log line (info level, when request logging is on) and its
 * metrics. The line names the route pattern, never the path or query string (which can hold
 * e-mail addresses, file names or narrow terms), and nothing of the body or the credentials; it
 * names the client (its address, X-Forwarded-For's behind a trusted proxy, and its User-Agent).
 * The line is built from these fields alone (../observability/access-line.ts) and written in
 * batches (../observability/log.ts LogOutput).
 */
import { log, logAccess } from '../observability/log.js';
import { observeLoginFailure, observeRequest } from '../observability/metrics.js';
import type { RequestContext } from './request.js';

/** The status logged for a request whose client went away before the answer (as nginx does). */
export const CLIENT_CLOSED = 499;

/** `route`: the endpoint's path pattern, or UNMATCHED_ROUTE. */
export function requestFinished(ctx: RequestContext, route: string, logRequests: boolean): void {
  const ms = performance.now() - ctx.startedAt;
  const status = ctx.status === 0 ? CLIENT_CLOSED : ctx.status;
  observeRequest(ctx.method, route, status, ms);
  if (logRequests) {
    logAccess({
      reqId: ctx.reqId,
      method: ctx.method,
      url: route,
      status,
      ms: Math.round(ms * 10) / 10,
      userId: ctx.userId,
      realmId: ctx.realmId,
      address: ctx.knownClientAddress,
      userAgent: ctx.userAgent,
    });
  }
}

/** The route of requests no endpoint matched (404, 405). */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * A failed login: a wrong password (`password`: POST /fetch_api_key, /json/login), or credentials
 * refused on a request (`api_key`: a wrong key, a deactivated account or realm). A warning line
 * names the client's address and User-Agent and the username tried (never the secret), so that
 * failures can be traced and fed to fail2ban (docs/operations.md "Logs"); and the metric.
 */
export function loginFailed(
  ctx: RequestContext,
  method: 'password' | 'api_key',
  username: string,
  realmId: number | null,
): void {
  observeLoginFailure(method);
  log.warn(
    {
      reqId: ctx.reqId,
      auth: method,
      username: username.slice(0, 100),
      realmId,
      address: ctx.clientAddress(),
      userAgent: ctx.userAgent,
    },
    'login failed',
  );
}
