/**
 * Declaring an endpoint: method, path, who may call it, one zod schema for its parameters (path
 * parameters included, by name), and the handler. The HTTP layer does everything else: body,
 * realm, authentication, decoding, the response envelope and errors.
 *
 *   export const getUser = endpoint({
 *     method: 'GET',
 *     path: '/api/v1/users/:user_id',
 *     params: z.object({ user_id: pathInt(), client_extavatar: bool().default(true) }),
 *     handle: (ctx, p) => ({ user: ... }),
 *   });
 */
import type { z } from 'zod';
import type { RealmRuntime } from '../../actors/registry.js';
import type { ServerContext } from '../context.js';
import { compileParams, type CompiledParams, type ParamSchema } from '../lib/params.js';
import { dialectFor, type Dialect } from '../lib/wire-names.js';
import type { UserRow } from '../storage/users.js';
import type { UserBucket } from './rate-limits.js';
import type { SessionAuth } from './sessions.js';
import type { HttpMethod, RequestContext } from './request.js';

/**
 * `user`: HTTP Basic required. `optional`: anonymous callers allowed (spectators of realms with
 * public access). `none`: no authentication at all (server settings, logging in).
 */
export type AuthMode = 'user' | 'optional' | 'none';

export type HandlerCtx = {
  server: ServerContext;
  req: RequestContext;
  realm: RealmRuntime | undefined;
  user: UserRow | null;
};

export type AuthedCtx = HandlerCtx & { realm: RealmRuntime; user: UserRow };

/**
 * The spelling this request's client gets where only one can be sent (src/lib/wire-names.ts):
 * by its User-Agent, unless the server forces one.
 */
export function requestDialect(ctx: HandlerCtx): Dialect {
  return dialectFor(ctx.server.config.wireNames, ctx.req.userAgent);
}

type CtxFor<A extends AuthMode> = A extends 'user' ? AuthedCtx : HandlerCtx;

export type EndpointDef<S extends ParamSchema, A extends AuthMode> = {
  method: Exclude<HttpMethod, 'HEAD' | 'OPTIONS'>;
  /**
   * Full path; `:name` segments are path parameters, decoded by the schema key of that name. A
   * last segment `*name` takes the rest of the path, slashes included (percent-decoded).
   */
  path: string;
  auth?: A;
  params: S;
  /** alias → canonical parameter name (e.g. `subject` → `topic`). */
  aliases?: Record<string, string>;
  /** Accept multipart file parts, streamed to disk, up to the server's upload size limit. */
  acceptsFiles?: { maxFiles: number };
  /**
   * The body is not decoded into parameters but handed over as it came (`req.rawBody`, any
   * content type): incoming webhooks, whose payloads are the sender's. Parameters come from the
   * query string only.
   */
  rawBody?: boolean;
  /** Further request headers the handler reads (`req.headers`; lower case). */
  headers?: readonly string[];
  /**
   * Which per-user rate limit the endpoint counts against (default `api`; event queues `events`;
   * null: none, as the reference's media routes, which a page asks for many at once).
   */
  rateLimitBucket?: UserBucket | null;
  /**
   * Whether incoming-webhook bots may call it (they may only post: sending messages and reading
   * their own account, as the reference's `allow_incoming_webhooks` routes).
   */
  incomingWebhookBots?: boolean;
  /**
   * The endpoint also takes a browser session (src/http/sessions.ts): `also` for the media
   * routes (the cookie when no Authorization header is sent); `only` for the /json/ routes.
   */
  sessionAuth?: SessionAuth;
  /** Its (large, often fetched) JSON answer is compressed when the client accepts it (compress.ts). */
  compressAnswer?: boolean;
  /** Test-only routes (src/endpoints/testing.ts): where the router throws for them. */
  testFault?: TestFault;
  handle: (ctx: CtxFor<A>, params: z.output<S>) => unknown;
};

/**
 * Where a test-only route makes the router throw, to show that each step of a request answers an
 * unexpected exception with a 500 and that the process lives on: on arrival (before the request
 * is set up), on a chunk of the body after the first, or when the parsed body is handed on.
 */
export type TestFault = 'arrival' | 'body-chunk' | 'body-end';

export type Endpoint = {
  method: Exclude<HttpMethod, 'HEAD' | 'OPTIONS'>;
  path: string;
  /** The path as uWS routes it (`*name` becomes `*`). */
  uwsPath: string;
  auth: AuthMode;
  /** `:name` parameters in order, then the `*name` one if any. */
  pathParamNames: readonly string[];
  /** Segments before a trailing `*name` (null without one). */
  wildcardDepth: number | null;
  compiled: CompiledParams<ParamSchema>;
  acceptsFiles: { maxFiles: number } | null;
  rawBody: boolean;
  headers: readonly string[];
  rateLimitBucket: UserBucket | null;
  incomingWebhookBots: boolean;
  /** How a browser session authenticates it (null: it does not). */
  sessionAuth: SessionAuth | null;
  compressAnswer: boolean;
  testFault?: TestFault;
  handle: (ctx: HandlerCtx, params: unknown) => unknown;
};

export function endpoint<S extends ParamSchema, A extends AuthMode = 'user'>(
  def: EndpointDef<S, A>,
): Endpoint {
  const segments = def.path.split('/');
  const pathParamNames = segments.filter((seg) => seg.startsWith(':')).map((seg) => seg.slice(1));
  let wildcardDepth: number | null = null;
  const last = segments[segments.length - 1]!;
  if (last.startsWith('*')) {
    pathParamNames.push(last.slice(1));
    wildcardDepth = segments.length - 2; // without the leading '' and the wildcard itself
  }
  if (segments.slice(0, -1).some((seg) => seg.startsWith('*'))) {
    throw new Error(`${def.path}: only the last segment may be a wildcard`);
  }
  for (const name of pathParamNames) {
    if (!(name in def.params.shape))
      throw new Error(`${def.path}: no schema for path parameter ${name}`);
  }
  return {
    method: def.method,
    path: def.path,
    uwsPath: wildcardDepth === null ? def.path : segments.slice(0, -1).join('/') + '/*',
    auth: def.auth ?? 'user',
    pathParamNames,
    wildcardDepth,
    compiled: compileParams(def.params, def.aliases, pathParamNames),
    acceptsFiles: def.acceptsFiles ?? null,
    rawBody: def.rawBody ?? false,
    headers: def.headers ?? [],
    rateLimitBucket: def.rateLimitBucket === undefined ? 'api' : def.rateLimitBucket,
    incomingWebhookBots: def.incomingWebhookBots ?? false,
    sessionAuth: def.sessionAuth ?? null,
    compressAnswer: def.compressAnswer ?? false,
    ...(def.testFault ? { testFault: def.testFault } : {}),
    handle: def.handle as (ctx: HandlerCtx, params: unknown) => unknown,
  };
}

/**
 * The same endpoint served at a second path (a wire name existing clients spell differently, as
 * `/users/me/apns_device_token` beside the spec's `/users/me/ios_push_device_token`). The path
 * must have the same `:name` parameters and no wildcard.
 */
export function endpointAlsoAt(ep: Endpoint, path: string): Endpoint {
  const names = path
    .split('/')
    .filter((seg) => seg.startsWith(':'))
    .map((seg) => seg.slice(1));
  if (ep.wildcardDepth !== null || names.join('/') !== ep.pathParamNames.join('/')) {
    throw new Error(`${path}: not an alias of ${ep.path}`);
  }
  return { ...ep, path, uwsPath: path };
}
