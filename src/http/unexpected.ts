/**
 * Exceptions nothing expected, at the HTTP layer (docs/robustness.md "Unexpected exceptions").
 * Each path of a request catches its own (the router's phases, file streaming, held answers) and
 * answers 500 in the API's error format; what still escapes a uWS callback is caught here, at the
 * boundary, because uWS ends the process on an exception thrown through it (a route handler that
 * throws before answering makes uWS abort the process outright). Every catch is logged as an
 * error with the request's id where there is one, and counted (`confab_unexpected_errors_total`).
 */
import { fatalReason, internalErrorBody } from '../lib/errors.js';
import { log } from '../observability/log.js';
import { countUnexpected, observeRequest } from '../observability/metrics.js';
import { RequestContext } from './request.js';
import { NO_ACCESS_LOG, requestFinished, routeOfPattern } from './request-log.js';
import type { ShutdownGate } from './drain.js';
import type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_socket_context_t,
  WebSocket,
  WebSocketBehavior,
} from './uws.js';

/** Where an unexpected exception was caught (the log line's `where`, the metric's label). */
export type Where =
  | 'route' // a uWS route handler, synchronously (arrival, realm, authentication, handler)
  | 'body' // reading or parsing a request body
  | 'handler' // an asynchronous handler, or what runs when its promise settles
  | 'respond' // writing an answer (serializing it, a held answer, a large answer's slices)
  | 'stream' // streaming a file
  | 'socket' // a WebSocket callback
  | 'process'; // outside any request: the process-level last resort

/**
 * Hands a fatal condition on (a corrupt database: fatalReason) to whoever may stop the process:
 * the process-level last resort installs it (src/process-guard.ts); without one (tests, benches:
 * a server inside another program) fatal conditions are logged like any other.
 */
let onFatal: ((err: unknown, reason: string) => void) | null = null;

export function setFatalHandler(fn: ((err: unknown, reason: string) => void) | null): void {
  onFatal = fn;
}

/** Logs and counts an exception nobody expected; a fatal one also goes to the fatal handler. */
export function reportUnexpected(
  err: unknown,
  where: Where,
  fields: { reqId?: string; method?: string; route?: string } = {},
): void {
  try {
    countUnexpected(where);
    log.error(
      { err, where, ...fields },
      where === 'process'
        ? 'unexpected exception outside any request; the server goes on'
        : 'internal server error',
    );
  } catch {
    // A logger that throws (a closed destination) must not turn one failure into two.
  }
  const fatal = fatalReason(err);
  if (fatal !== null && onFatal !== null) onFatal(err, fatal);
}

const INTERNAL_ERROR_JSON = JSON.stringify(internalErrorBody());

/**
 * Answers 500 in the API's error format on a response that nothing else will answer, and closes
 * the connection (whatever threw may have left it half-written). A response already answered, or
 * whose client is gone, cannot be written: uWS throws, which is ignored here.
 */
export function answerInternalError(res: HttpResponse): void {
  try {
    res.cork(() => {
      res
        .writeStatus('500 Internal Server Error')
        .writeHeader('Content-Type', 'application/json')
        .end(INTERNAL_ERROR_JSON, true);
    });
  } catch {
    try {
      res.close();
    } catch {
      // answered already, or its client gone: nothing left to do
    }
  }
}

type RouteHandler = (res: HttpResponse, req: HttpRequest) => void | Promise<void>;

/**
 * A route handler that cannot throw through uWS: what it throws is reported with its request's id
 * (the RequestContext made during the call, if any) and answered 500 unless it was answered.
 */
export function guardRoute(handler: RouteHandler, route = ''): RouteHandler {
  return (res, req) => {
    const before = RequestContext.latest;
    try {
      const r = handler(res, req);
      // uWS ignores what a handler returns: a rejected promise would be nobody's.
      if (r instanceof Promise) {
        r.catch((err: unknown) => reportUnexpected(err, 'handler'));
      }
    } catch (err) {
      const ctx = RequestContext.latest !== before ? RequestContext.latest : null;
      let method = '';
      try {
        method = req.getCaseSensitiveMethod();
      } catch {
        // unreadable request: logged without it
      }
      // The route's pattern, never the path (it can hold e-mail addresses: ./request-log.ts).
      reportUnexpected(err, 'route', { ...(ctx ? { reqId: ctx.reqId } : {}), method, route });
      if (ctx !== null && (ctx.done || ctx.aborted)) return;
      if (ctx !== null) ctx.done = true;
      answerInternalError(res);
      // Counted as any answer (its log line is the error's, above), unless it was already (the
      // route's own end ran before the exception left it); thrown before the route made its
      // request's context, with a time of 0 (its arrival is not known).
      if (ctx === null)
        observeRequest((method || 'GET').toUpperCase(), routeOfPattern(route), 500, 0);
      else if (!ctx.finished) {
        ctx.status = 500;
        requestFinished(ctx, routeOfPattern(route), NO_ACCESS_LOG);
      }
    }
  };
}

/**
 * WebSocket callbacks that cannot throw through uWS: an upgrade is answered as a route; an open
 * socket whose callback threw is closed with 1011 (its client connects again; the event queue
 * keeps whatever was not acknowledged); a close callback's failure is reported.
 */
export function guardSocket<T>(behavior: WebSocketBehavior<T>, pattern = ''): WebSocketBehavior<T> {
  const out: WebSocketBehavior<T> = { ...behavior };
  const { upgrade } = behavior;
  if (upgrade) {
    out.upgrade = (res, req, context) => {
      const guarded = guardRoute((r, q) => upgrade(r, q, context), pattern);
      return guarded(res, req);
    };
  }
  for (const name of ['open', 'message', 'drain', 'ping', 'pong'] as const) {
    const fn: ((ws: WebSocket<T>, ...args: never[]) => unknown) | undefined = behavior[name];
    if (!fn) continue;
    (out as Record<string, unknown>)[name] = (ws: WebSocket<T>, ...args: never[]) => {
      try {
        const r = fn(ws, ...args);
        if (r instanceof Promise) r.catch((err: unknown) => failedSocket(ws, err));
      } catch (err) {
        failedSocket(ws, err);
      }
    };
  }
  const { close } = behavior;
  if (close) {
    out.close = (ws, code, message) => {
      try {
        close(ws, code, message);
      } catch (err) {
        reportUnexpected(err, 'socket');
      }
    };
  }
  return out;
}

function failedSocket<T>(ws: WebSocket<T>, err: unknown): void {
  reportUnexpected(err, 'socket');
  try {
    ws.end(1011, 'Internal server error');
  } catch {
    // closed already
  }
}

const ROUTE_METHODS = [
  'get',
  'post',
  'patch',
  'put',
  'del',
  'options',
  'head',
  'connect',
  'trace',
  'any',
] as const;

/**
 * Makes every route and WebSocket behavior later mounted on `app` go through guardRoute and
 * guardSocket, whoever mounts it; with a `gate`, through the shutdown's gate first (./drain.ts:
 * once closed, it answers new requests and upgrades itself, except on its exempt routes).
 */
export function guardApp(app: TemplatedApp, gate?: ShutdownGate): TemplatedApp {
  const gated = <H extends (res: HttpResponse, req: HttpRequest) => unknown>(
    pattern: string,
    handler: H,
  ): H =>
    gate === undefined || gate.exempt.has(pattern)
      ? handler
      : (((res: HttpResponse, req: HttpRequest) =>
          gate.refuse(res, req, pattern) ? undefined : handler(res, req)) as H);
  for (const m of ROUTE_METHODS) {
    const mount: (pattern: string, handler: RouteHandler) => TemplatedApp = app[m].bind(app);
    (app as unknown as Record<string, unknown>)[m] = (pattern: string, handler: RouteHandler) =>
      mount(pattern, guardRoute(gated(pattern, handler), pattern));
  }
  const ws = app.ws.bind(app);
  app.ws = <T>(pattern: string, behavior: WebSocketBehavior<T>) => {
    const { upgrade } = behavior;
    // (A behavior without `upgrade` is upgraded by uWS itself, past the gate: none is mounted.)
    const inner = upgrade
      ? {
          ...behavior,
          upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) =>
            gated(pattern, (r: HttpResponse, q: HttpRequest) => upgrade(r, q, context))(res, req),
        }
      : behavior;
    return ws<T>(pattern, guardSocket(inner, pattern));
  };
  return app;
}
