/**
 * Mounting endpoints on uWS and running each request through the same steps:
 *   copy the request (sync) → read the body (limited) → pick the realm by Host → authenticate →
 *   decode parameters → handler → one corked JSON write.
 * Unknown paths answer a JSON 404, known paths with another method a JSON 405, and anything a
 * handler throws that is not a JsonableError is logged and answered 500 — the server keeps serving.
 * Each step's callbacks catch their own exceptions (body, handler, held answer, streaming): the
 * request is answered 500 if it still can be, releases what it held, and leaves (./unexpected.ts).
 */
import { countPatternAs, requestFinished, UNMATCHED_ROUTE } from './request-log.js';
import type { ServerContext } from '../context.js';
import { JsonableError, ResourceNotFoundError, RequestTooLargeError } from '../lib/errors.js';
import type { RawParams } from '../lib/params.js';
import { decodeParams } from '../lib/params.js';
import { BotType } from '../lib/roles.js';
import { authenticate, resolveRealm } from './auth.js';
import { authenticateSession, hasCredentials, readBrowserRequest } from './sessions.js';
import { sendCompressible } from './compress.js';
import type { Release } from './address-limits.js';
import {
  createBodySink,
  fileTooLarge,
  parseUrlEncoded,
  rawBodySink,
  type BodySink,
} from './body.js';
import type { AuditOrigin } from '../lib/audit.js';
import type { Endpoint, HandlerCtx } from './endpoint.js';
import { RequestContext } from './request.js';
import { streamFile } from './file-stream.js';
import { refuseEarly, type Linger } from './linger.js';
import {
  FileBody,
  HeldResponse,
  RawBody,
  RawJson,
  send,
  sendError,
  successBody,
} from './respond.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';
import { reportUnexpected, type Where } from './unexpected.js';
import { takeUploadSlot } from './upload-slots.js';
import type { RealmRuntime } from '../../actors/registry.js';
import type { UserRow } from '../storage/users.js';
import fs from 'node:fs';
import path from 'node:path';

/** Tracks requests between arrival and response, so shutdown can wait for them. */
export class InflightTracker {
  count = 0;
  private waiters: (() => void)[] = [];
  enter(): void {
    this.count++;
  }
  leave(): void {
    this.count--;
    if (this.count === 0) {
      const w = this.waiters;
      this.waiters = [];
      for (const fn of w) fn();
    }
  }
  /** Resolves when no request is in flight, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

const BODY_METHODS = new Set(['POST', 'PATCH', 'DELETE', 'PUT']);
/** The uWS app's method that mounts a route of each method an endpoint may have. */
const MOUNT = { GET: 'get', POST: 'post', PATCH: 'patch', DELETE: 'del', PUT: 'put' } as const;
/** The parameters of a request without any (most GETs): one shared empty object. */
const NO_PARAMS: RawParams = Object.freeze(Object.create(null) as RawParams);
/** The methods the server knows (others: 501); case-sensitive, as RFC 9110 §9.1 has it. */
const HTTP_METHODS = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'CONNECT',
]);
/** Slack over the file limit for the multipart framing and the other fields of an upload. */
const UPLOAD_ENVELOPE_BYTES = 1024 * 1024;

export function mountEndpoints(
  app: TemplatedApp,
  server: ServerContext,
  endpoints: readonly Endpoint[],
  inflight: InflightTracker,
): void {
  const seen = new Set<string>();
  for (const ep of endpoints) {
    const key = `${ep.method} ${ep.path}`;
    if (seen.has(key)) throw new Error(`route defined twice: ${key}`);
    seen.add(key);
    countPatternAs(ep.uwsPath, ep.path);
    app[MOUNT[ep.method]](ep.uwsPath, (res: HttpResponse, req: HttpRequest) =>
      onRequest(res, req, ep, server, inflight),
    );
  }
  const matchers = endpoints.map((ep) => ({ method: ep.method, re: patternToRegExp(ep.path) }));
  app.any('/*', (res, req) => {
    const method = req.getCaseSensitiveMethod();
    const ctx = new RequestContext(req, 0);
    ctx.corked = true; // the answer below is written within this callback
    res.onAborted(() => ctx.markAborted());
    if (server.config.logRequests !== 'off') {
      // Every answer here is an error (404, 405, 501): its line names the client.
      ctx.bindClient(res, req, server.proxyTrust);
      ctx.clientAddress();
    }
    const allowed = [...new Set(matchers.filter((m) => m.re.test(ctx.path)).map((m) => m.method))];
    if (!HTTP_METHODS.has(method)) {
      // RFC 9110 §9.1: a method the server does not know (the modern uWS build routes any token
      // here; the legacy one closes the connection before JavaScript sees it).
      sendError(
        res,
        ctx,
        new JsonableError(`Method not implemented: ${method.slice(0, 32)}`, { status: 501 }),
      );
    } else if (allowed.length > 0) {
      const err = new JsonableError(`Method Not Allowed (${ctx.method})`, {
        code: 'METHOD_NOT_ALLOWED',
        status: 405,
        extra: { allowed_methods: allowed },
        headers: { Allow: allowed.join(', ') },
      });
      sendError(res, ctx, err);
    } else {
      sendError(res, ctx, new ResourceNotFoundError());
    }
    ctx.corked = false;
    requestFinished(ctx, UNMATCHED_ROUTE, server.config);
  });
}

function patternToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .split('/')
    .map((seg) =>
      seg.startsWith(':')
        ? '[^/]+'
        : seg.startsWith('*')
          ? '.+'
          : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/** Throws where a test-only route asks for it (src/endpoints/testing.ts). */
function testFault(ep: Endpoint, at: Endpoint['testFault']): void {
  if (ep.testFault === at) throw new Error(`deliberate failure (${at}) for a test`);
}

/** Answers `err` (a 500 reported as unexpected at `where` unless it is a JsonableError); leaves. */
function failRequest(
  res: HttpResponse,
  ctx: RequestContext,
  err: unknown,
  leave: () => void,
  where: Where,
  closeConnection = false,
): void {
  try {
    sendError(res, ctx, err, closeConnection, where);
  } finally {
    leave();
  }
}

function onRequest(
  res: HttpResponse,
  req: HttpRequest,
  ep: Endpoint,
  server: ServerContext,
  inflight: InflightTracker,
): void {
  // Before anything is set up: only the boundary around every route (./unexpected.ts) is left.
  if (ep.testFault !== undefined) testFault(ep, 'arrival');
  const ctx = new RequestContext(req, ep.pathParamNames.length, ep.method, ep.wildcardDepth);
  ctx.corked = true; // until the callback returns: uWS corks the connection around it
  try {
    acceptRequest(res, req, ctx, ep, server, inflight);
  } finally {
    ctx.corked = false;
  }
}

/** onRequest's work once the request's context is made. */
function acceptRequest(
  res: HttpResponse,
  req: HttpRequest,
  ctx: RequestContext,
  ep: Endpoint,
  server: ServerContext,
  inflight: InflightTracker,
): void {
  ctx.bindClient(res, req, server.proxyTrust);
  ctx.followAccessLog(server.config);
  if (ep.sessionAuth !== null)
    ctx.browser = readBrowserRequest(req, ep.sessionAuth, ctx.authorization);
  ctx.compressAnswer = ep.compressAnswer;
  if (ep.headers.length > 0) {
    const headers = Object.create(null) as Record<string, string>;
    for (const name of ep.headers) {
      const value = req.getHeader(name);
      if (value !== '') headers[name] = value;
    }
    ctx.headers = headers;
  }
  inflight.enter();
  // What the request holds of its address's share (./address-limits.ts), given back in `leave`.
  let release: Release | null = null;
  // What the request holds, set as it is taken (an object: closures below change it).
  const held: Held = { sink: null, slot: null };
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    inflight.leave();
    release?.();
    try {
      held.slot?.();
      if (!ctx.filesInHandler) cleanupFiles(ctx);
      requestFinished(ctx, ep.path, server.config);
    } catch (err) {
      reportUnexpected(err, 'respond', { reqId: ctx.reqId, method: ctx.method });
    }
  };
  const limits = server.addressLimits;
  const anonymous = limits !== null && !hasCredentials(ctx);
  // Counted at once where an address is at a limit; otherwise only if still held at the end.
  const countLater = limits !== null && !limits.mayRefuse(anonymous);
  if (limits !== null && !countLater) {
    try {
      release = limits.admit(ctx, anonymous);
    } catch (err) {
      failRequest(res, ctx, err, leave, 'route', true);
      return;
    }
  }
  try {
    readRequest(res, ctx, ep, server, leave, held);
  } catch (err) {
    try {
      held.sink?.discard();
    } finally {
      failRequest(res, ctx, err, leave, 'route', true);
    }
  }
  // A request still held (a body to read, a handler's promise, a held poll) holds its address's
  // share from now until it leaves (./address-limits.ts mayRefuse).
  if (countLater && !left) release = limits.take(ctx, anonymous);
  // A response not written whole by now (those, a stream) learns of its client's leaving; one
  // already ended has nothing left to learn.
  if (!ctx.ended) {
    res.onAborted(() => {
      try {
        ctx.markAborted(); // what waits for the client (a held poll) lets go
        held.sink?.discard(); // partial uploads
      } catch (err) {
        reportUnexpected(err, 'route', { reqId: ctx.reqId, method: ctx.method });
      }
      leave();
    });
  }
}

/** What a request holds until it leaves: its body's parser (partial files), an upload slot. */
type Held = { sink: BodySink | null; slot: (() => void) | null };

/** The request's query string and body, then `run`. */
function readRequest(
  res: HttpResponse,
  ctx: RequestContext,
  ep: Endpoint,
  server: ServerContext,
  leave: () => void,
  held: Held,
): void {
  const hasBody = BODY_METHODS.has(ctx.method);
  const query =
    ctx.query !== ''
      ? parseUrlEncoded(ctx.query)
      : hasBody || ep.pathParamNames.length > 0
        ? (Object.create(null) as RawParams)
        : NO_PARAMS; // nothing is added: no body, no path parameters
  if (!hasBody) {
    run(res, ctx, ep, server, query, leave, null);
    return;
  }

  const limit = ep.acceptsFiles
    ? server.config.maxFileUploadBytes + UPLOAD_ENVELOPE_BYTES
    : server.config.maxRequestBytes;
  // An early refusal reads and drops the rest of the body, within bounds, before the connection
  // ends (./linger.ts): closing on a body still arriving can lose the answer.
  const refuseBeforeBody = (err: unknown) => {
    const linger = refuseEarly(res, ctx, err, ctx.contentLength === 0);
    if (linger !== null) res.onData((ab, isLast) => linger(ab.byteLength, isLast));
    leave();
  };
  if (ctx.contentLength !== null && ctx.contentLength > limit) {
    refuseBeforeBody(tooLarge(ep, server, limit));
    return;
  }
  // Files go to disk as they arrive: whoever sends them is known first (a refused request's body
  // is not read), and holds one of a few upload slots until the request is over (./upload-slots.ts).
  // (A cluster node identifies after its read barrier, as for any request: credentials made on
  // another node may not have reached it yet.)
  let known: Identity | null = null;
  if (ep.acceptsFiles && server.readBarrier === undefined) {
    try {
      known = identify(server, ctx, ep);
      if (known.user !== null) held.slot = takeUploadSlot(server, known.user.id);
    } catch (err) {
      refuseBeforeBody(err);
      return;
    }
  }
  let body: BodySink;
  try {
    body = ep.rawBody
      ? rawBodySink((raw) => (ctx.rawBody = raw))
      : createBodySink(
          ctx.contentType,
          ep.acceptsFiles
            ? {
                tmpDir: path.join(server.config.dataDir, 'tmp'),
                maxFileBytes: server.config.maxFileUploadBytes,
                maxFiles: ep.acceptsFiles.maxFiles,
                files: ctx.files,
                onExtraFile: () => void ctx.extraFiles++,
              }
            : null,
        );
  } catch (err) {
    refuseBeforeBody(err);
    return;
  }
  held.sink = body;
  let received = 0;
  // Paused while the disk is slower than the network. Never left paused once the body is in: a
  // paused socket cannot read the connection's next request (keep-alive).
  let paused = false;
  // After an early refusal: what takes the rest of the body (./linger.ts).
  let linger: Linger | null = null;
  const refuse = (err: unknown, isLast: boolean) => {
    body.discard();
    if (paused) {
      paused = false;
      res.resume();
    }
    linger = refuseEarly(res, ctx, err, isLast);
    leave();
  };
  const onChunk = (ab: ArrayBuffer, isLast: boolean) => {
    if (linger !== null) {
      linger(ab.byteLength, isLast);
      return;
    }
    if (ctx.done || ctx.aborted) return;
    // (After the first chunk, which may have started a file on disk.)
    if (ep.testFault !== undefined && received > 0) testFault(ep, 'body-chunk');
    const chunk = Buffer.from(new Uint8Array(ab)); // copies: uWS reuses `ab` after this callback
    received += chunk.length;
    if (received > limit) {
      refuse(tooLarge(ep, server, limit), isLast);
      return;
    }
    if (chunk.length > 0) body.write(chunk);
    if (body.failure) {
      // A file over the limit: answered now, the rest of the body is dropped as it comes.
      refuse(body.failure, isLast);
      return;
    }
    if (isLast) {
      if (paused) {
        paused = false;
        res.resume();
      }
    } else if (body.congested && !paused) {
      paused = true;
      res.pause();
      body.onDrain(() => {
        if (!paused || ctx.aborted || ctx.done) return;
        paused = false;
        try {
          res.resume();
        } catch (err) {
          reportUnexpected(err, 'body', { reqId: ctx.reqId, method: ctx.method });
        }
      });
    }
    if (isLast) {
      body.end().then(
        (body) => {
          // The body is whole: its files are the request's now (ctx.files), removed when it
          // leaves or its handler settles, no longer the parser's to discard on an abort.
          held.sink = null;
          // A client that left while its files were still being written had them removed
          // then (onAborted below): there is nothing to store, and nobody to answer.
          if (ctx.aborted && ep.acceptsFiles) return;
          try {
            if (ep.testFault !== undefined) testFault(ep, 'body-end');
            for (const k in body) query[k] = body[k]!; // body parameters win over the query string
            run(res, ctx, ep, server, query, leave, known);
          } catch (err) {
            failRequest(res, ctx, err, leave, 'body');
          }
        },
        (err: unknown) => failRequest(res, ctx, err, leave, 'body'),
      );
    }
  };
  res.onData((ab, isLast) => {
    try {
      onChunk(ab, isLast);
    } catch (err) {
      // The rest of the body is not read: the connection closes after the answer.
      try {
        body.discard();
      } finally {
        failRequest(res, ctx, err, leave, 'body', true);
      }
    }
  });
}

function tooLarge(ep: Endpoint, server: ServerContext, limit: number): JsonableError {
  return ep.acceptsFiles
    ? fileTooLarge(server.config.maxFileUploadBytes)
    : new RequestTooLargeError(limit);
}

/**
 * A cluster node first waits for its copy to hold every write acknowledged before the request
 * arrived, unless it owns the request's realm (ServerContext.readBarrier); then `runHere`.
 */
function run(
  res: HttpResponse,
  ctx: RequestContext,
  ep: Endpoint,
  server: ServerContext,
  raw: RawParams,
  leave: () => void,
  known: Identity | null,
): void {
  const barrier = server.readBarrier?.(
    resolveRealm(server.realms, ctx.host, server.config.externalHost)?.id,
  );
  if (!barrier) {
    runHere(res, ctx, ep, server, raw, leave, known);
    return;
  }
  barrier.then(
    () => runHere(res, ctx, ep, server, raw, leave, known),
    (err: unknown) => failRequest(res, ctx, err, leave, 'handler'),
  );
}

/** Where an API user's administrative action comes from (the audit log's origin). */
function apiOrigin(ctx: RequestContext, userId: number): AuditOrigin {
  return {
    via: 'api',
    user_id: userId,
    address: ctx.clientAddress(),
    user_agent: ctx.userAgent,
  };
}

/** Realm, authentication, parameters, handler, response. Never throws. */
function runHere(
  res: HttpResponse,
  ctx: RequestContext,
  ep: Endpoint,
  server: ServerContext,
  raw: RawParams,
  leave: () => void,
  known: Identity | null,
): void {
  let result: unknown;
  let ignored: string[];
  try {
    for (let i = 0; i < ep.pathParamNames.length; i++)
      raw[ep.pathParamNames[i]!] = ctx.pathParams[i]!;
    const { realm, user } = known ?? identify(server, ctx, ep);
    const decoded = decodeParams(ep.compiled, raw);
    ignored = decoded.ignored;
    // A user's changes carry who asked and from where, for the audit log (src/lib/audit.ts).
    const acting =
      user !== null && realm !== undefined && ctx.method !== 'GET'
        ? realm.actingFrom(() => apiOrigin(ctx, user.id))
        : realm;
    const hctx: HandlerCtx = { server, req: ctx, realm: acting, user };
    result = ep.handle(hctx, decoded.params);
  } catch (err) {
    failRequest(res, ctx, err, leave, 'route');
    return;
  }
  try {
    if (result instanceof HeldResponse) {
      ctx.held = true;
      result.bind((value) => respondWith(res, ctx, value, ignored, leave));
    } else if (result instanceof Promise) {
      if (ctx.files.length > 0) ctx.filesInHandler = true;
      result
        .then(
          (value: unknown) => respondWith(res, ctx, value, ignored, leave),
          (err: unknown) => failRequest(res, ctx, err, leave, 'handler'),
        )
        .finally(() => {
          if (!ctx.filesInHandler) return;
          ctx.filesInHandler = false;
          cleanupFiles(ctx); // what the handler did not move (removing a moved file is a no-op)
        });
    } else {
      respondWith(res, ctx, result, ignored, leave);
    }
  } catch (err) {
    failRequest(res, ctx, err, leave, 'respond');
  }
}

/** Who a request comes from, once its credentials were checked (and counted by the limits). */
type Identity = { realm: RealmRuntime | undefined; user: UserRow | null };

/** The realm by Host, authentication (credentials or session), the rate limits. Throws 4xx. */
function identify(server: ServerContext, ctx: RequestContext, ep: Endpoint): Identity {
  const realm = resolveRealm(server.realms, ctx.host, server.config.externalHost);
  const limits = server.limits;
  let user = null;
  if (ctx.browser !== null && ctx.browser.bySession) {
    user = authenticateSession(server, realm, ep.auth, ctx, ctx.browser);
    if (user !== null) ctx.userId = user.id;
  } else if (ep.auth === 'user' || (ep.auth === 'optional' && ctx.authorization !== '')) {
    user = authenticate(server.store, realm, ctx.authorization, limits, ctx);
    ctx.userId = user.id;
  }
  if (realm !== undefined) ctx.realmId = realm.id;
  // An incoming-webhook bot's key only posts (the reference's validate_api_key).
  if (user !== null && user.bot_type === BotType.INCOMING_WEBHOOK && !ep.incomingWebhookBots)
    throw new JsonableError('This API is not available to incoming webhook bots.');
  // Before the parameters, as the reference: malformed requests count too.
  if (limits !== null) {
    if (user !== null) limits.user(ctx, user.id, ep.rateLimitBucket);
    else limits.anonymous(ctx);
  }
  return { realm, user };
}

/** Adds `ignored_parameters_unsupported` to a pre-serialized success body. */
function withIgnored(body: string | Buffer, ignored: readonly string[]): string | Buffer {
  if (ignored.length === 0) return body;
  const json = typeof body === 'string' ? body : body.toString('utf8');
  if (!json.startsWith('{"result":"success"') || !json.endsWith('}')) {
    return json;
  }
  return `${json.slice(0, -1)},"ignored_parameters_unsupported":${JSON.stringify(ignored)}}`;
}

/**
 * Writes a handler's value; calls `leave` once the response is complete (streams: later). Never
 * throws: it also runs from whoever answers a held response (an event queue's flush).
 */
function respondWith(
  res: HttpResponse,
  ctx: RequestContext,
  value: unknown,
  ignored: readonly string[],
  leave: () => void,
): void {
  if (value instanceof FileBody) {
    streamFile(res, ctx, value, leave); // never throws: it answers its own failures
    return;
  }
  try {
    if (value instanceof RawJson) {
      send(res, ctx, 200, withIgnored(value.json, ignored));
    } else if (value instanceof RawBody) {
      send(res, ctx, value.status, value.body, value.contentType, value.headers);
    } else if (ctx.compressAnswer) {
      sendCompressible(res, ctx, successBody(value as object | undefined, ignored, true), leave);
      return;
    } else {
      send(res, ctx, 200, successBody(value as object | undefined, ignored));
    }
  } catch (err) {
    try {
      sendError(res, ctx, err, false, 'respond');
    } catch (inner) {
      reportUnexpected(inner, 'respond', { reqId: ctx.reqId, method: ctx.method });
    }
  }
  leave();
}

function cleanupFiles(ctx: RequestContext): void {
  for (const f of ctx.files) fs.rm(f.tmpPath, { force: true }, () => {});
}
