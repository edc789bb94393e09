/**
 * Routes for operators, outside the API: no realm, no authentication, no rate limit.
 *
 *   GET /health    200 {"status":"ok",...} when the database answers and the event loop is
 *                  responsive; 503 with the same shape otherwise (and during shutdown).
 *   GET /metrics   Prometheus text (src/observability/metrics.ts). Open to loopback clients;
 *                  anyone else needs `Authorization: Bearer <METRICS_TOKEN>` (403 without a
 *                  configured token). A request that came through a proxy (X-Forwarded-For) counts
 *                  as local only if the trusted-proxy walk ends at a loopback address.
 */
import crypto from 'node:crypto';
import { internalErrorBody, JsonableError } from '../lib/errors.js';
import type { HealthMonitor } from '../observability/health.js';
import { METRICS_CONTENT_TYPE, metricsText } from '../observability/metrics.js';
import { normalizeAddress, type ProxyTrust } from './client-address.js';
import { RequestContext } from './request.js';
import { NO_ACCESS_LOG, requestFinished } from './request-log.js';
import { send, sendError } from './respond.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

export type OpsRoutesOptions = {
  health: HealthMonitor;
  metricsToken: string | null;
  /** The reverse proxies TRUSTED_PROXIES names (ServerContext.proxyTrust). */
  proxyTrust: ProxyTrust | null;
};

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.');
}

function tokenMatches(header: string, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (m === null) return false;
  const a = crypto.createHash('sha256').update(m[1]!).digest();
  const b = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(a, b);
}

export function mountOpsRoutes(app: TemplatedApp, opts: OpsRoutesOptions): void {
  app.get('/health', (res: HttpResponse, req: HttpRequest) => {
    const ctx = new RequestContext(req, 0, 'GET');
    res.onAborted(() => ctx.markAborted());
    const report = opts.health.report();
    send(res, ctx, report.status === 'ok' ? 200 : 503, JSON.stringify(report), 'application/json', {
      'Cache-Control': 'no-store',
    });
    requestFinished(ctx, '/health', NO_ACCESS_LOG);
  });

  app.get('/metrics', (res: HttpResponse, req: HttpRequest) => {
    const ctx = new RequestContext(req, 0, 'GET');
    const forwardedFor = req.getHeader('x-forwarded-for');
    res.onAborted(() => ctx.markAborted());
    ctx.bindClient(res, req, opts.proxyTrust);
    const peer = normalizeAddress(ctx.peerAddress());
    // Through a proxy (X-Forwarded-For), the client is local only if a trusted proxy says so: a
    // reverse proxy on this machine must not open the metrics to everyone it serves.
    const local =
      isLoopback(peer) &&
      (forwardedFor === '' ||
        (opts.proxyTrust?.trusts(peer) === true && isLoopback(ctx.clientAddress())));
    const allowed =
      local || (opts.metricsToken !== null && tokenMatches(ctx.authorization, opts.metricsToken));
    if (!allowed) {
      const noToken = opts.metricsToken === null; // local clients only
      const msg = noToken
        ? 'Metrics are served only to local clients.'
        : 'A valid metrics token is required.';
      const headers: Record<string, string> = noToken ? {} : { 'WWW-Authenticate': 'Bearer' };
      sendError(
        res,
        ctx,
        new JsonableError(msg, { code: 'UNAUTHORIZED', status: noToken ? 403 : 401, headers }),
      );
      requestFinished(ctx, '/metrics', NO_ACCESS_LOG);
      return;
    }
    metricsText().then(
      (text) => {
        send(res, ctx, 200, text, METRICS_CONTENT_TYPE);
        requestFinished(ctx, '/metrics', NO_ACCESS_LOG);
      },
      () => {
        send(res, ctx, 500, JSON.stringify(internalErrorBody()));
        requestFinished(ctx, '/metrics', NO_ACCESS_LOG);
      },
    );
  });
}
