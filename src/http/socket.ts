/**
 * WebSocket push (the project's addition to the API; protocol in docs/events.md):
 *
 *   GET /api/v1/events/socket?queue_id=…&last_event_id=…   (Upgrade: websocket)
 *   GET /json/events/socket?queue_id=…&last_event_id=…      the same, for browsers
 *
 * Authentication and realm selection are those of HTTP (Basic e-mail:API key, Host); under /json/
 * the browser's session cookie instead (never Basic), and the handshake's Origin must be the page's
 * own (./sessions.ts: a page of another site cannot open a socket with the user's session). The queue must
 * be the caller's; `last_event_id` acknowledges as GET /events does. Any failure is answered
 * before the upgrade with the same JSON error GET /events would give. Once open, every pending
 * and every new event arrives in frames shaped like a GET /events response; the client acknowledges
 * with `{"last_event_id": N}` frames. Subprotocol `msgpack` switches both directions to MessagePack
 * (binary frames). A socket whose unsent bytes pass `wsMaxBackpressureBytes` is closed (4002); its
 * queue keeps every unacknowledged event for the next socket or poll.
 */
import { z } from 'zod';
import type { QueueHandle, SocketSink } from '../delivery/queue.js';
import { CLOSE } from '../delivery/queue.js';
import type { ServerContext } from '../context.js';
import { JsonableError } from '../lib/errors.js';
import {
  decodePacked,
  eventsResponseJson,
  eventsResponsePacked,
  type QueuedEvent,
} from '../delivery/wire.js';
import { pack } from '../lib/pack.js';
import { compileParams, decodeParams, int, str } from '../lib/params.js';
import { authenticate, resolveRealm } from './auth.js';
import {
  authenticateSession,
  checkSocketOrigin,
  readBrowserRequest,
  SESSION_COOKIE,
} from './sessions.js';
import { parseUrlEncoded } from './body.js';
import type { Release } from './address-limits.js';
import { RequestContext } from './request.js';
import { sendError } from './respond.js';
import {
  DISABLED_COMPRESSION,
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type us_socket_context_t,
  type WebSocket,
} from './uws.js';

export const EVENT_SOCKET_PATH = '/api/v1/events/socket';
export const BROWSER_EVENT_SOCKET_PATH = '/json/events/socket';

/** How a socket's handshake is authenticated: HTTP Basic, or the browser's session. */
type Via = 'api' | 'session';

type Format = 'json' | 'msgpack';
type Admitted = {
  rt: QueueHandle;
  format: Format;
  protocol: Format | '';
  /** Gives back the socket's share of its address's connections (./address-limits.ts). */
  release: Release | null;
};
type SocketData = Admitted & { sink: SocketSink | null; closed: boolean };

const SocketParams = compileParams(z.object({ queue_id: str(), last_event_id: int() }));
const AckFrame = z.object({ last_event_id: z.number().int() });

/** Picks the subprotocol from the client's offer: msgpack, else json, else none (JSON frames). */
export function chooseSubprotocol(offer: string): Format | '' | null {
  const offered = offer
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (offered.length === 0) return '';
  if (offered.includes('msgpack')) return 'msgpack';
  if (offered.includes('json')) return 'json';
  return null;
}

/** Mounts the socket's URLs: the API's and the browsers'. */
export function mountEventSocket(app: TemplatedApp, server: ServerContext): void {
  mountSocketAt(app, server, EVENT_SOCKET_PATH, 'api');
  mountSocketAt(app, server, BROWSER_EVENT_SOCKET_PATH, 'session');
}

function mountSocketAt(app: TemplatedApp, server: ServerContext, path: string, via: Via): void {
  const { queues, config } = server;
  app.ws<SocketData>(path, {
    compression: DISABLED_COMPRESSION,
    maxPayloadLength: 16 * 1024,
    // We close at wsMaxBackpressureBytes ourselves (4002, after the frames already buffered); uWS's
    // own limit, twice that, only catches a single frame too large to buffer (dropped: closed
    // at once, so a dropped frame never leaves a gap on an open socket).
    maxBackpressure: 2 * config.wsMaxBackpressureBytes,
    closeOnBackpressureLimit: 1,
    idleTimeout: 120,
    sendPingsAutomatically: true,

    upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
      const ctx = new RequestContext(req, 0, 'GET');
      const protocolOffer = req.getHeader('sec-websocket-protocol');
      const key = req.getHeader('sec-websocket-key');
      const extensions = req.getHeader('sec-websocket-extensions');
      const admitted = admit(server, res, req, ctx, protocolOffer, via);
      if (admitted === null) return;
      const data: SocketData = { ...admitted, sink: null, closed: false };
      res.cork(() => res.upgrade(data, key, admitted.protocol, extensions, context));
    },

    open: (ws: WebSocket<SocketData>) => {
      const data = ws.getUserData();
      const binary = data.format === 'msgpack';
      const limit = config.wsMaxBackpressureBytes;
      const sink: SocketSink = {
        send(events: readonly QueuedEvent[]) {
          if (data.closed) return;
          const frame = eventsFrame(data, events);
          let status = 0;
          ws.cork(() => {
            status = ws.send(frame, binary);
          });
          // 2: dropped over the limit (uWS closes it); also close when the buffer is past the bound.
          if (!data.closed && (status === 2 || ws.getBufferedAmount() > limit)) {
            data.closed = true;
            ws.end(CLOSE.BACKPRESSURE, 'backpressure');
          }
        },
        close(code: number, reason: string) {
          if (data.closed) return;
          data.closed = true;
          ws.end(code, reason);
        },
      };
      data.sink = sink;
      queues.attachSocket(data.rt, sink);
    },

    message: (ws: WebSocket<SocketData>, message: ArrayBuffer, isBinary: boolean) => {
      const data = ws.getUserData();
      const reply = receiveFrame(queues, data, new Uint8Array(message), isBinary);
      if (reply !== null && !data.closed) ws.send(reply, data.format === 'msgpack');
    },

    close: (ws: WebSocket<SocketData>) => {
      const data = ws.getUserData();
      data.closed = true;
      data.release?.();
      if (data.sink) queues.detachSocket(data.rt, data.sink);
    },
  });
  // A plain GET (no upgrade) of the socket's URL: say what it is rather than 404.
  app.get(path, (res: HttpResponse, req: HttpRequest) => {
    const ctx = new RequestContext(req, 0, 'GET');
    sendError(
      res,
      ctx,
      new JsonableError('This URL is a WebSocket: connect with an Upgrade request', {
        code: 'BAD_REQUEST',
        status: 400,
      }),
    );
  });
}

/**
 * Whether an upgrade of the socket's URL is accepted, with what it is for. Refused: answered with
 * the JSON error GET /events would give, and null.
 */
function admit(
  server: ServerContext,
  res: HttpResponse,
  req: HttpRequest,
  ctx: RequestContext,
  protocolOffer: string,
  via: Via,
): Admitted | null {
  const { queues, config } = server;
  ctx.bindPeer(res);
  if (server.limits?.readsForwardedFor || server.addressLimits?.readsForwardedFor)
    ctx.forwardedFor = req.getHeader('x-forwarded-for');
  if (via === 'session') ctx.browser = readBrowserRequest(req, 'only', ctx.authorization);
  res.onAborted(() => ctx.markAborted());
  let release: Release | null = null;
  try {
    // The socket holds one of its address's connections from now until it closes.
    const anonymous =
      ctx.browser === null
        ? ctx.authorization === ''
        : !ctx.browser.cookie.includes(`${SESSION_COOKIE}=`);
    release = server.addressLimits?.admit(ctx, anonymous) ?? null;
    const realm = resolveRealm(server.realms, ctx.host, config.externalHost);
    let user;
    if (ctx.browser !== null) {
      checkSocketOrigin(config, ctx, ctx.browser);
      user = authenticateSession(server, realm, 'user', ctx, ctx.browser)!;
    } else {
      user = authenticate(server.store, realm, ctx.authorization, server.limits, ctx);
    }
    // An upgrade counts as one request against the event-queue budget (GET /events's).
    server.limits?.user(ctx, user.id, 'events');
    const { params } = decodeParams(SocketParams, parseUrlEncoded(ctx.query));
    const rt = queues.access(user.id, params.queue_id);
    const chosen = chooseSubprotocol(protocolOffer);
    if (chosen === null) {
      throw new JsonableError(`Unsupported WebSocket subprotocol: ${protocolOffer}`);
    }
    queues.acknowledge(rt, params.last_event_id);
    ctx.done = true;
    return { rt, format: chosen === 'msgpack' ? 'msgpack' : 'json', protocol: chosen, release };
  } catch (err) {
    release?.();
    sendError(res, ctx, err, true);
    return null;
  }
}

/**
 * One frame from a client: every frame is an acknowledgement, one per frame received. The plain
 * JSON form is read without a parser; anything else goes through the full validation. Returns
 * the error frame to answer with, if any.
 */
function receiveFrame(
  queues: ServerContext['queues'],
  data: SocketData,
  message: Uint8Array,
  isBinary: boolean,
): string | Buffer | null {
  try {
    let lastEventId = isBinary ? null : plainAck(message);
    if (lastEventId === null) {
      const frame = parseFrame(message, isBinary, data.format);
      const parsed = AckFrame.safeParse(frame);
      if (!parsed.success) {
        throw new JsonableError('An acknowledgement frame is {"last_event_id": <integer>}');
      }
      lastEventId = parsed.data.last_event_id;
    }
    queues.acknowledge(data.rt, lastEventId);
    return null;
  } catch (err) {
    const body =
      err instanceof JsonableError
        ? err.toBody()
        : { result: 'error', msg: 'Invalid frame', code: 'BAD_REQUEST' };
    return data.format === 'msgpack' ? pack(body) : JSON.stringify(body);
  }
}

/** The frame carrying these events, in the socket's format. */
function eventsFrame(data: SocketData, events: readonly QueuedEvent[]): string | Buffer {
  return data.format === 'msgpack' ? eventsResponsePacked(events) : eventsResponseJson(events);
}

const ACK_KEY = Buffer.from('"last_event_id"');
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The id of a text frame that is exactly `{"last_event_id": N}` (JSON whitespace allowed, N an
 * integer of at most 15 digits), else null. Read from uWS's bytes in place: no copy, no string.
 */
export function plainAck(b: Uint8Array): number | null {
  const n = b.byteLength;
  if (n > 64) return null;
  let i = 0;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x7b) return null; // {
  while (isSpace(b[i])) i++;
  for (let k = 0; k < ACK_KEY.length; k++) if (b[i++] !== ACK_KEY[k]) return null;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x3a) return null; // :
  while (isSpace(b[i])) i++;
  const negative = b[i] === 0x2d; // -
  if (negative) i++;
  let value = 0;
  let digits = 0;
  for (let c = b[i]; c !== undefined && c >= 0x30 && c <= 0x39; c = b[++i]) {
    value = value * 10 + (c - 0x30);
    digits++;
  }
  if (digits === 0 || digits > 15) return null;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x7d) return null; // }
  while (isSpace(b[i])) i++;
  if (i !== n) return null;
  return negative ? -value : value;
}

function parseFrame(message: Uint8Array, isBinary: boolean, format: Format): unknown {
  const bytes = Buffer.from(message); // copy: uWS reuses `message`
  if (format === 'msgpack' && isBinary) {
    try {
      return decodePacked(bytes);
    } catch {
      throw new JsonableError('Invalid MessagePack frame');
    }
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw new JsonableError('Invalid JSON frame');
  }
}
