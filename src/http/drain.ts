/**
 * The shutdown's grace (docs/operations.md, the SIGTERM paragraph). Closing the listening socket
 * at once, as the shutdown did, made the kernel reset every connection it had accepted into the
 * listen backlog that the server had not taken yet: their clients had sent a request and got a
 * reset, not knowing whether it was done (40 sends made at the instant of a SIGTERM under a write
 * load, test/api/shutdown-grace.test.ts: 5 or 9 of them reset in some runs, the others refused;
 * 27 of 40 reset in an earlier measurement). Now, on a signal, the server keeps taking
 * connections for a grace (SHUTDOWN_GRACE_MS, 1.5 s unless set: src/config.ts) while requests in
 * flight drain, and answers every new request, on a new connection or on one kept alive, `503` in
 * the API's error format with `Retry-After` and `Connection: close`: a clear answer, which
 * clients retry. The listening socket closes after the grace; a connection arriving at that very
 * instant is still reset (the kernel does so to any listener that closes), later ones are refused.
 *
 * The gate stands in front of every route and WebSocket upgrade mounted on the app (./uws.ts
 * createApp, ./unexpected.ts guardApp), except `exempt` ones: GET /health keeps answering its own
 * report (503, `shutting_down: true`) for load balancers, and GET /metrics its figures for
 * scrapers (a process is scrapeable until it is gone, the convention of Prometheus' exporters).
 * Each 503 ends as any answer does (./request-log.ts requestFinished): counted in the request
 * metrics under the route it was for, and logged as LOG_REQUESTS says.
 */
import { JsonableError } from '../lib/errors.js';
import type { ProxyTrust } from './client-address.js';
import { refuseEarly } from './linger.js';
import { RequestContext } from './request.js';
import {
  NO_ACCESS_LOG,
  requestFinished,
  routeOfPattern,
  type AccessLogSettings,
} from './request-log.js';
import { sendError } from './respond.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** The 503's Retry-After, in seconds: about as long as a restart takes to listen again. */
export const SHUTDOWN_RETRY_AFTER_S = 5;

/** 503 to a request that arrived during the shutdown. */
export class ShuttingDownError extends JsonableError {
  constructor() {
    super('The server is shutting down; try again', {
      code: 'BAD_REQUEST',
      status: 503,
      extra: { 'retry-after': SHUTDOWN_RETRY_AFTER_S },
      headers: { 'Retry-After': String(SHUTDOWN_RETRY_AFTER_S) },
    });
  }
}

export class ShutdownGate {
  private closed = false;
  /** Requests answered 503 since `close` (the shutdown's log line). */
  refused = 0;
  /** Route patterns the gate lets through during the shutdown. */
  readonly exempt: ReadonlySet<string>;

  /** The access log's settings, and the proxies whose X-Forwarded-For names the client. */
  private readonly access: AccessLogSettings;
  private readonly proxyTrust: ProxyTrust | null;

  constructor(
    exempt: readonly string[] = [],
    opts: { access?: AccessLogSettings; proxyTrust?: ProxyTrust | null } = {},
  ) {
    this.exempt = new Set(exempt);
    this.access = opts.access ?? NO_ACCESS_LOG;
    this.proxyTrust = opts.proxyTrust ?? null;
  }

  /** From now on, every new request is answered 503 (`refuse`). */
  close(): void {
    this.closed = true;
  }

  /**
   * Answers the request 503 and closes its connection once the gate is closed (true: the route
   * is not to run). A request with a body is answered at once and its body read and dropped
   * before the connection ends (./linger.ts): closing on a body still arriving could reset it.
   * `pattern`: the uWS pattern of the route the request matched (its metrics' route).
   */
  refuse(res: HttpResponse, req: HttpRequest, pattern: string): boolean {
    if (!this.closed) return false;
    this.refused++;
    const ctx = new RequestContext(req, 0);
    ctx.corked = true; // inside the route's callback: uWS has corked the connection
    res.onAborted(() => ctx.markAborted());
    if (this.access.logRequests !== 'off') {
      // Every answer here is an error (503): its line names the client.
      ctx.bindClient(res, req, this.proxyTrust);
      ctx.clientAddress();
    }
    const err = new ShuttingDownError();
    const bodyComing =
      (ctx.contentLength !== null && ctx.contentLength > 0) ||
      req.getHeader('transfer-encoding') !== '';
    if (bodyComing) {
      const linger = refuseEarly(res, ctx, err, false);
      if (linger !== null) res.onData((ab, isLast) => linger(ab.byteLength, isLast));
    } else {
      sendError(res, ctx, err, true);
    }
    ctx.corked = false;
    requestFinished(ctx, routeOfPattern(pattern), this.access);
    return true;
  }
}
