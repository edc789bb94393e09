/**
 * WebSocket push (the project's addition to the API; protocol in docs/events.md):
 *
 *   GET /api/v1/events/socket?queue_id=…&last_event_id=…   (Upgrade: websocket)
 *   GET /json/events/socket?queue_id=…&last_event_id=…      the same, for browsers
 *
 * Authentication and realm selection are those of HTTP (Basic e-mail:API key, Host); under /json/
 * the browser's session cookie instead (never Basic), and the handshake's Origin must be the page's
 * own (./sessions.ts: a page of another site cannot open a socket with the user's session). The
 * queue must be the caller's; `last_event_id` acknowledges as GET /events does. Any failure is
 * answered before the upgrade with the same JSON error GET /events would give. Once open, the
 * socket is its queue's consumer (src/delivery/consumer.ts): every pending and every new event
 * arrives in frames shaped like a GET /events response; the client acknowledges with
 * `{"last_event_id": N}` frames. Subprotocol `msgpack` switches both directions to MessagePack
 * (binary frames; src/delivery/socket-frames.ts). A socket whose unsent bytes pass
 * `wsMaxBackpressureBytes` is closed (4002); its queue keeps every unacknowledged event for the
 * next socket or poll.
 */
import { z } from 'zod';
import { CLOSE, type SocketConsumer } from '../delivery/consumer.js';
import type { QueueHandle } from '../delivery/queue.js';
import {
  chooseSubprotocol,
  errorFrame,
  eventsFrame,
  readAck,
  type FrameFormat,
} from '../delivery/socket-frames.js';
import type { ServerContext } from '../context.js';
import { JsonableError } from '../lib/errors.js';
import { compileParams, decodeParams, int, str } from '../lib/params.js';
import { authenticate, resolveRealm } from './auth.js';
import {
  authenticateSession,
  checkSocketOrigin,
  hasCredentials,
  readBrowserRequest,
} from './sessions.js';
import { parseUrlEncoded } from './body.js';
import type { Release } from './address-limits.js';
import { RequestContext } from './request.js';
import { requestFinished } from './request-log.js';
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

type Admitted = {
  rt: QueueHandle;
  format: FrameFormat;
  protocol: FrameFormat | '';
  /** Gives back the socket's share of its address's connections (./address-limits.ts). */
  release: Release | null;
};
type SocketData = Admitted & { consumer: SocketConsumer | null; closed: boolean };

const SocketParams = compileParams(z.object({ queue_id: str(), last_event_id: int() }));

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
      if (admitted !== null) {
        const data: SocketData = { ...admitted, consumer: null, closed: false };
        ctx.answering(101);
        res.cork(() => res.upgrade(data, key, admitted.protocol, extensions, context));
      }
      // An upgrade is counted as a request (its refusals too), until its 101 or its error.
      requestFinished(ctx, path, config);
    },

    open: (ws: WebSocket<SocketData>) => {
      const data = ws.getUserData();
      const binary = data.format === 'msgpack';
      const limit = config.wsMaxBackpressureBytes;
      // One corked send per frame through one function made here, not a closure per frame.
      let frame: string | Buffer = '';
      let status = 0;
      const sendFrame = () => {
        status = ws.send(frame, binary);
      };
      const consumer: SocketConsumer = {
        kind: 'socket',
        deliver(events) {
          if (data.closed) return;
          frame = eventsFrame(data.format, events);
          status = 0;
          ws.cork(sendFrame);
          frame = '';
          // 2: dropped over the limit (uWS closes it); also close when the buffer is past the bound.
          if (!data.closed && (status === 2 || ws.getBufferedAmount() > limit)) {
            data.closed = true;
            ws.end(CLOSE.BACKPRESSURE, 'backpressure');
          }
        },
        close(code, reason) {
          if (data.closed) return;
          data.closed = true;
          ws.end(code, reason);
        },
      };
      data.consumer = consumer;
      queues.attach(data.rt, consumer);
    },

    // Every frame from the client is an acknowledgement; a bad one is answered with an error frame.
    message: (ws: WebSocket<SocketData>, message: ArrayBuffer, isBinary: boolean) => {
      const data = ws.getUserData();
      try {
        queues.acknowledge(data.rt, readAck(new Uint8Array(message), isBinary, data.format));
      } catch (err) {
        if (!data.closed) ws.send(errorFrame(data.format, err), data.format === 'msgpack');
      }
    },

    close: (ws: WebSocket<SocketData>) => {
      const data = ws.getUserData();
      data.closed = true;
      data.release?.();
      if (data.consumer) queues.detach(data.rt, data.consumer);
    },
  });
  // A plain GET (no upgrade) of the socket's URL: say what it is rather than 404.
  app.get(path, (res: HttpResponse, req: HttpRequest) => {
    const ctx = new RequestContext(req, 0, 'GET');
    sendError(
      res,
      ctx,
      new JsonableError('This URL is a WebSocket: connect with an Upgrade request'),
    );
    requestFinished(ctx, path, config);
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
  ctx.bindClient(res, req, server.proxyTrust);
  ctx.followAccessLog(config);
  if (via === 'session') ctx.browser = readBrowserRequest(req, 'only', ctx.authorization);
  res.onAborted(() => ctx.markAborted());
  let release: Release | null = null;
  try {
    // The socket holds one of its address's connections from now until it closes.
    release = server.addressLimits?.admit(ctx, !hasCredentials(ctx)) ?? null;
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
