/**
 * What a handler may know about the HTTP request. uWS's HttpRequest is valid only during the
 * synchronous route callback, so everything needed later is copied here at once.
 */
import type { RateStatus } from '../lib/rate-limit.js';
import type { BrowserRequest } from './sessions.js';
import { clientAddress, ipv4FromBytes, type ProxyTrust } from './client-address.js';
import type { HttpRequest, HttpResponse } from './uws.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT' | 'HEAD' | 'OPTIONS';

export type UploadedFile = {
  field: string;
  filename: string;
  mimeType: string;
  /** Where the file was streamed to; the handler moves or deletes it. */
  tmpPath: string;
  size: number;
};

/** No headers: one frozen empty object, shared. */
export const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze(
  Object.create(null) as Record<string, string>,
);

/**
 * The names of the headers every request's context reads, as bytes: uWS takes them as they are,
 * where a string is first copied into a UTF-8 buffer of its own on each call.
 */
const AUTHORIZATION = Buffer.from('authorization');
const HOST = Buffer.from('host');
const ACCEPT_ENCODING = Buffer.from('accept-encoding');
const USER_AGENT = Buffer.from('user-agent');

/** Request ids: unique in this process, short (a per-boot prefix and a counter). */
const REQ_ID_PREFIX = Date.now().toString(36).slice(-5);
let reqCounter = 0;

export class RequestContext {
  /**
   * The context made last: a request handler's own, if it made one, once it has begun (the
   * boundary that catches what a handler throws names the request by it: ./unexpected.ts).
   */
  static latest: RequestContext | null = null;
  /** The request's id in log lines (`reqId`): made when first asked for (most requests never are). */
  get reqId(): string {
    return (this.id ??= `${REQ_ID_PREFIX}-${(++reqCounter).toString(36)}`);
  }
  private id: string | undefined = undefined;
  /** The status written (0 until then); for the request's log line and metrics. */
  status = 0;
  /** Counted and logged (./request-log.ts requestFinished: once per request). */
  finished = false;
  /** Who made the request, once authenticated (log line). */
  userId: number | null = null;
  realmId: number | null = null;
  readonly method: HttpMethod;
  readonly path: string;
  readonly query: string;
  readonly authorization: string;
  readonly contentType: string;
  /** null when absent; NaN when not digits (uWS then closes the connection after the callback). */
  readonly contentLength: number | null;
  readonly host: string;
  /** The Accept-Encoding header ('' when absent): large answers go gzipped (src/http/gzip.ts). */
  readonly acceptEncoding: string;
  readonly userAgent: string;
  readonly pathParams: string[];
  readonly startedAt = performance.now();
  aborted = false;
  /** The answer is held by design (a long-poll: ./respond.ts HeldResponse): never "slow". */
  held = false;
  /**
   * With LOG_REQUESTS=errors, the slowness (ms) from which a request's line is written, whose
   * address is then read as its answer is written (./respond.ts send); -1 otherwise.
   */
  logSlowerThanMs = -1;
  /**
   * True while the route's own callback runs (./router.ts): uWS has corked the connection for it,
   * so an answer written then needs no res.cork of its own (./respond.ts send).
   */
  corked = false;
  /** Set once a response has been written (or the connection closed by us). */
  done = false;
  /**
   * Set once the whole response went to uWS (./respond.ts send: one `end`, or the last slice of
   * a large body): nothing of it is left to write, so no abort can concern it (the router
   * attaches `onAborted` only otherwise).
   */
  ended = false;
  files: UploadedFile[] = [];
  /**
   * True while a handler's promise holds `files` (it moves them into place): a client leaving
   * then does not remove them under it; they are removed, if still there, when it settles.
   */
  filesInHandler = false;
  /** File parts beyond what the endpoint accepts (`acceptsFiles.maxFiles`): counted, not stored. */
  extraFiles = 0;
  /** The body as received, for endpoints that read it themselves (`rawBody`: webhooks). */
  rawBody: Buffer | null = null;
  /**
   * The headers the endpoint asked for (`headers`), by lower-case name, when present (an empty
   * object shared by every request of an endpoint that asks for none: the router sets its own).
   */
  headers: Readonly<Record<string, string>> = NO_HEADERS;
  /** The client's standing in the rate limit applied to the request (X-RateLimit-* headers). */
  rate: RateStatus | null = null;
  /** When `rate` was taken: UNIX seconds by the server's clock (X-RateLimit-Reset counts from it). */
  rateTakenAt = 0;
  /** X-Forwarded-For, copied only when a trusted proxy is configured (see client-address.ts). */
  forwardedFor = '';
  /** Its JSON answer is compressed when large and accepted (./compress.ts). */
  compressAnswer = false;
  /** Routes a browser session may authenticate: its headers and session (./sessions.ts). */
  browser: BrowserRequest | null = null;
  /**
   * The live response, for reading the peer address on demand: uWS asks for it anew on each call
   * (~1 µs), and only the access log, unauthenticated requests and failed authentications need it.
   */
  private peer: HttpResponse | null = null;
  private peerText: string | null = null;
  /** peerText is dotted IPv4 made from uWS's bytes: canonical already (client-address.ts). */
  private peerDotted = false;
  private client: string | null = null;
  private trust: ProxyTrust | null = null;
  private abortListeners: (() => void)[] | null = null;

  /**
   * `method` is passed when the route already knows it (saves a call into uWS on the hot path);
   * body headers are read only for methods that carry a body.
   */
  constructor(
    req: HttpRequest,
    paramCount: number,
    method?: HttpMethod,
    wildcardDepth: number | null = null,
  ) {
    this.method = method ?? (req.getCaseSensitiveMethod().toUpperCase() as HttpMethod);
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    this.authorization = req.getHeader(AUTHORIZATION);
    if (this.method === 'GET') {
      this.contentType = '';
      this.contentLength = null;
    } else {
      this.contentType = req.getHeader('content-type');
      const cl = req.getHeader('content-length');
      this.contentLength = cl === '' ? null : Number(cl);
    }
    this.host = req.getHeader(HOST);
    this.acceptEncoding = req.getHeader(ACCEPT_ENCODING);
    this.userAgent = req.getHeader(USER_AGENT);
    const params: string[] = [];
    const named = wildcardDepth === null ? paramCount : paramCount - 1;
    for (let i = 0; i < named; i++) params.push(decodeURIComponentSafe(req.getParameter(i)));
    if (wildcardDepth !== null) {
      // The rest of the raw path after the route's fixed segments, decoded as a whole.
      params.push(
        decodeURIComponentSafe(
          this.path
            .split('/')
            .slice(wildcardDepth + 1)
            .join('/'),
        ),
      );
    }
    this.pathParams = params;
    RequestContext.latest = this;
  }

  /**
   * The connection's peer address: dotted for an IPv4 peer, otherwise as uWS writes it ('' once
   * the client has gone).
   */
  peerAddress(): string {
    if (this.peerText !== null) return this.peerText;
    if (this.peer === null || this.aborted || this.done) return '';
    const dotted = ipv4FromBytes(new Uint8Array(this.peer.getRemoteAddress()));
    this.peerDotted = dotted !== null;
    this.peerText = dotted ?? Buffer.from(this.peer.getRemoteAddressAsText()).toString('latin1');
    return this.peerText;
  }

  /**
   * Lets `peerAddress` and `clientAddress` read the connection's address later, behind the
   * reverse proxies `trust` names (whose X-Forwarded-For is read now).
   */
  bindClient(res: HttpResponse, req: HttpRequest, trust: ProxyTrust | null): void {
    this.peer = res;
    this.trust = trust;
    if (trust !== null) this.forwardedFor = req.getHeader('x-forwarded-for');
  }

  /**
   * The client's address (client-address.ts: the peer, or X-Forwarded-For behind a trusted
   * proxy), read once while the request is live ('' after, if it never was).
   */
  clientAddress(): string {
    if (this.client !== null) return this.client;
    const peer = this.peerAddress();
    // No proxy's word to weigh, and the peer canonical already: the peer as it is.
    const address =
      this.peerDotted && (this.trust === null || this.forwardedFor === '')
        ? peer
        : clientAddress(peer, this.forwardedFor, this.trust);
    if (address !== '') this.client = address;
    return address;
  }

  /**
   * Readies the request for the access log (LOG_REQUESTS): `all` names every client, read now
   * while the connection is there to ask; `errors` reads it at a failed or slow answer
   * (`answering`). After `bindClient`.
   */
  followAccessLog(log: { logRequests: string; slowRequestMs: number }): void {
    if (log.logRequests === 'all') this.clientAddress();
    else if (log.logRequests === 'errors') this.logSlowerThanMs = log.slowRequestMs;
  }

  /**
   * Marks the request answered with `status` (`done`), as its status is written. With
   * LOG_REQUESTS=errors, a failed or slow request's line names the client, whose address is read
   * first, while it is there to ask.
   */
  answering(status: number): void {
    if (
      this.logSlowerThanMs >= 0 &&
      (status >= 400 || (!this.held && performance.now() - this.startedAt >= this.logSlowerThanMs))
    )
      this.clientAddress();
    this.done = true;
    this.status = status;
  }

  /** The client's address if it was read (the access log's; '' if not). */
  get knownClientAddress(): string {
    return this.client ?? '';
  }

  /** Calls `fn` if the client goes away before the response (at once if it already has). */
  onAbort(fn: () => void): void {
    if (this.aborted) {
      fn();
      return;
    }
    (this.abortListeners ??= []).push(fn);
  }

  markAborted(): void {
    this.aborted = true;
    const listeners = this.abortListeners;
    this.abortListeners = null;
    if (listeners) for (const fn of listeners) fn();
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
