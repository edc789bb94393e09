/**
 * The end of every request: its log line (info level, when request logging is on) and its
 * metrics. The line names the route pattern, never the path or query string (which can hold
 * e-mail addresses, file names or narrow terms), and nothing of the body or the credentials.
 */
import { log } from '../observability/log.js';
import { observeRequest } from '../observability/metrics.js';
import type { RequestContext } from './request.js';

/** The status logged for a request whose client went away before the answer (as nginx does). */
export const CLIENT_CLOSED = 499;

/** `route`: the endpoint's path pattern, or UNMATCHED_ROUTE. */
export function requestFinished(ctx: RequestContext, route: string, logRequests: boolean): void {
  const ms = performance.now() - ctx.startedAt;
  const status = ctx.status === 0 ? CLIENT_CLOSED : ctx.status;
  observeRequest(ctx.method, route, status, ms);
  if (logRequests) {
    log.info(
      {
        reqId: ctx.reqId,
        method: ctx.method,
        url: route,
        status,
        ms: Math.round(ms * 10) / 10,
        userId: ctx.userId,
        realmId: ctx.realmId,
      },
      'request',
    );
  }
}

/** The route of requests no endpoint matched (404, 405). */
export const UNMATCHED_ROUTE = '(unmatched)';
