/**
 * The end of every request: its metrics and, by LOG_REQUESTS (ServerConfig.logRequests), its log
 * line (info level): every request's (`all`); or only a failed or slow request's, with a summary
 * line of all of them each minute (`errors`, npm start's default: the line's cost, reading the
 * client's address from uWS, building and encoding the line, is a quarter of the whole request's
 * CPU time on the cheapest routes; docs/benchmarks.md, issue 31); or none (`off`). The line
 * names the route pattern, never the path or query string (which can hold e-mail addresses, file
 * names or narrow terms), and nothing of the body or the credentials; it names the client (its address, X-Forwarded-For's behind a trusted proxy, and its User-Agent).
 * The line is built from these fields alone (../observability/access-line.ts) and written in
 * batches (../observability/log.ts LogOutput).
 */
import type { LogRequests } from '../config.js';
import { log, logAccess } from '../observability/log.js';
import { observeLoginFailure, observeRequest } from '../observability/metrics.js';
import type { RequestContext } from './request.js';

/** What requestFinished needs of the server's configuration. */
export type AccessLogSettings = {
  readonly logRequests: LogRequests;
  readonly slowRequestMs: number;
};

/** For routes that never log a line (/health, /metrics). */
export const NO_ACCESS_LOG: AccessLogSettings = { logRequests: 'off', slowRequestMs: 0 };

/** The status logged for a request whose client went away before the answer (as nginx does). */
export const CLIENT_CLOSED = 499;

/** `route`: the endpoint's path pattern, or UNMATCHED_ROUTE. */
export function requestFinished(
  ctx: RequestContext,
  route: string,
  access: AccessLogSettings,
): void {
  if (ctx.finished) return;
  ctx.finished = true;
  const ms = performance.now() - ctx.startedAt;
  const status = ctx.status === 0 ? CLIENT_CLOSED : ctx.status;
  observeRequest(ctx.method, route, status, ms);
  const mode = access.logRequests;
  if (mode === 'off') return;
  if (mode === 'errors') {
    // A held long-poll is slow by design: not a slow request.
    const slow = !ctx.held && ms >= access.slowRequestMs;
    summary.count(status, ctx.held ? 0 : ms, slow);
    if (status < 400 && !slow) return;
  }
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

/** The summary line's period (LOG_REQUESTS=errors). */
export const SUMMARY_INTERVAL_MS = 60_000;

/**
 * The requests finished since the last summary line (of every server of the process: one, but for
 * tests and benches), by status class; `slow`, those at least LOG_SLOW_MS; `msMax`, the slowest
 * (a held long-poll counts as 0 ms).
 */
class RequestSummary {
  private requests = 0;
  private readonly statuses = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, '499': 0 };
  private slow = 0;
  private msMax = 0;
  private since = 0;
  private timer: NodeJS.Timeout | null = null;

  count(status: number, ms: number, slow: boolean): void {
    if (this.requests === 0) {
      this.since = Date.now();
      if (this.timer === null) {
        this.timer = setInterval(() => this.write(), SUMMARY_INTERVAL_MS);
        this.timer.unref();
      }
    }
    this.requests++;
    const s = this.statuses;
    if (status === CLIENT_CLOSED) s['499']++;
    else if (status >= 500) s['5xx']++;
    else if (status >= 400) s['4xx']++;
    else if (status >= 300) s['3xx']++;
    else s['2xx']++;
    if (slow) this.slow++;
    if (ms > this.msMax) this.msMax = ms;
  }

  /** The summary line, if any request finished since the last; counting starts afresh. */
  write(): void {
    if (this.requests === 0) {
      // Nothing in a whole period: the timer stops until the next request.
      if (this.timer !== null) clearInterval(this.timer);
      this.timer = null;
      return;
    }
    const s = this.statuses;
    log.info(
      {
        requests: this.requests,
        statuses: { ...s },
        slow: this.slow,
        msMax: Math.round(this.msMax * 10) / 10,
        seconds: Math.round((Date.now() - this.since) / 100) / 10,
      },
      'requests',
    );
    this.requests = 0;
    s['2xx'] = s['3xx'] = s['4xx'] = s['5xx'] = s['499'] = 0;
    this.slow = 0;
    this.msMax = 0;
  }
}

const summary = new RequestSummary();

/** Writes the summary line now (tests; the timer writes it each SUMMARY_INTERVAL_MS). */
export function writeRequestSummary(): void {
  summary.write();
}

/** The route of requests no endpoint matched (404, 405). */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The route a request is counted under, by the uWS pattern that matched it, where the two differ:
 * an endpoint whose last segment is a wildcard (`/user_uploads/*path_id`, mounted as
 * `/user_uploads/*`), and the catch-all of unmatched requests. For what answers a request before
 * its route's own code runs (the shutdown's gate: ./drain.ts), so that it is counted as the route
 * would count it. (Of the process, as the metrics are: every server mounts the same endpoints.)
 */
const routeByPattern = new Map<string, string>([['/*', UNMATCHED_ROUTE]]);

/** Requests matched by uWS `pattern` are counted as `route` (./router.ts mountEndpoints). */
export function countPatternAs(pattern: string, route: string): void {
  if (pattern !== route) routeByPattern.set(pattern, route);
}

/** The route a request matched by uWS `pattern` is counted under. */
export function routeOfPattern(pattern: string): string {
  return routeByPattern.get(pattern) ?? pattern;
}

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
