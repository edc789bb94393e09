/**
 * WebSocket push (the project's addition to the API; protocol in docs/events.md):
 *
 *   GET /api/v1/events/socket?queue_id=…&last_event_id=…   (Upgrade: websocket)
 *
 * Authentication and realm selection are those of HTTP (Basic e-mail:API key, Host). The queue must
 * be the caller's; `last_event_id` acknowledges as GET /events does. Any failure is answered
 * before the upgrade with the same JSON error GET /events would give. Once open, every pending
 * and every new event arrives in frames shaped like a GET /events response; the client acknowledges
 * with `{"last_event_id": N}` frames. Subprotocol `msgpack` switches both directions to MessagePack
 * (binary frames). A socket whose unsent bytes pass `wsMaxBackpressureBytes` is closed (4002); its
 * queue keeps every unacknowledged event for the next socket or poll.
 */
import { z } from 'zod';
import type { QueueHandle, SocketSink } from '../../actors/event-queue.machine.js';
import { CLOSE } from '../../actors/event-queue.machine.js';
import type { ServerContext } from '../context.js';
import { JsonableError } from '../lib/errors.js';
import {
  decodePacked,
  eventsResponseJson,
  eventsResponsePacked,
  type QueuedEvent,
} from '../lib/event-wire.js';
import { pack } from '../lib/pack.js';
import { compileParams, decodeParams, int, str } from '../lib/params.js';
import { getEvents } from '../endpoints/events.js';
import { authenticate, resolveRealm } from './auth.js';
import { parseUrlEncoded } from './body.js';
import { closingError, PollAnswer, PollRequest, type PollFields } from './poll-answer.js';
import { RequestContext } from './request.js';
import { mountDetachable, serveRequest, type InflightTracker } from './router.js';
import { sendError } from './respond.js';
import {
  SOCKET_OP,
  SocketBatchBuilder,
  readBatch,
  type SocketBatch,
  type SocketOp,
} from './socket-batch.js';
import {
  DISABLED_COMPRESSION,
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type us_socket_context_t,
  type WebSocket,
} from './uws.js';

export const EVENT_SOCKET_PATH = '/api/v1/events/socket';

type Format = 'json' | 'msgpack';
type Admitted = { rt: QueueHandle; format: Format; protocol: Format | '' };
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

/**
 * Mounts the socket's URL. Behind the HTTP guard, the guard holds the sockets (their upgrades
 * reach this thread as plain requests, their frames in batches): the returned host is its side of
 * them, for the listener to connect; without the guard, uWS holds them and null is returned.
 */
export function mountEventSocket(
  app: TemplatedApp,
  server: ServerContext,
  inflight: InflightTracker,
): GuardSocketHost | null {
  const { queues, config } = server;
  app.ws<SocketData>(EVENT_SOCKET_PATH, {
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
      const admitted = admit(server, res, req, ctx, protocolOffer);
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
      if (data.sink) queues.detachSocket(data.rt, data.sink);
    },
  });
  // A plain GET (no upgrade) of the socket's URL: say what it is rather than 404.
  app.get(EVENT_SOCKET_PATH, (res: HttpResponse, req: HttpRequest) => {
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
  return config.httpGuard ? new GuardSocketHost(server, inflight) : null;
}

/** The answer to a poll whose fields did not read (never from the guard's own code). */
const BAD_POLL_ANSWER = closingError('400 Bad Request', 'Malformed request');

/** Operations per message while a fan-out is under way (the rest leave when it ends). */
const STREAM_OPS = 256;
/** How long an accepted upgrade waits for the guard's handshake before it is forgotten. */
const HANDSHAKE_WAIT_MS = 30_000;

/**
 * This thread's side of the event sockets and long-polls the HTTP guard holds
 * (src/http/guard-sockets.ts, src/http/guard-polls.ts). The guard asks `<prefix>/socket?…` with
 * the upgrade's headers; an accepted upgrade is answered `200` naming a socket id (the guard then
 * answers the handshake), a refused one with the error. It asks `<prefix>/poll?…` with a
 * long-poll's: GET /events served as ever, except that a poll to be held is answered `200` naming
 * a poll id at once, and its answer goes to the guard later. The polls after it on the same
 * connection the guard reads itself and sends as fields (POLL_ASK): they are served here without
 * uWS (`pollAsked`), their answers going to the guard likewise. Frames, poll answers and closes go
 * both ways in batches (./socket-batch.ts): whatever the queues send in one turn of the loop
 * leaves in one message, a frame shared by many sockets stored once.
 */
export class GuardSocketHost {
  readonly path = EVENT_SOCKET_PATH;
  readonly pollPath = getEvents.path;
  readonly maxBackpressure: number;
  /** The guard's idle period for these sockets (config.httpGuardIdleMs; undefined: its default). */
  readonly idlePeriodMs: number | undefined;
  private nextId = 0;
  private nextPoll = 0;
  /** Polls the guard holds: what the request's end (or its client's departure) is to settle. */
  private readonly polls = new Map<number, { ctx: RequestContext; leave: () => void }>();
  /** Polls the guard asked about without uWS (POLL_ASK), by the guard's (negative) id. */
  private readonly asked = new Map<number, PollAnswer>();
  /** How many polls were asked so, since the start. */
  askedTotal = 0;
  /** Accepted, handshake not yet done. */
  private readonly accepted = new Map<number, SocketData>();
  private readonly open = new Map<number, SocketData>();
  private out = new SocketBatchBuilder();
  private flushing = false;
  private post: ((batch: SocketBatch) => void) | null = null;

  constructor(
    private readonly server: ServerContext,
    private readonly inflight: InflightTracker,
  ) {
    this.maxBackpressure = server.config.wsMaxBackpressureBytes;
    this.idlePeriodMs = server.config.httpGuardIdleMs;
  }

  /** Polls the guard holds now. */
  get heldPolls(): number {
    return this.polls.size + this.asked.size;
  }

  /** Mounts the routes the guard asks on; `post` sends a batch to the guard's thread. */
  mount(app: TemplatedApp, prefix: string, post: (batch: SocketBatch) => void): void {
    this.post = post;
    mountDetachable(
      app,
      `${prefix}/poll`,
      getEvents,
      this.server,
      this.inflight,
      (res, ctx, leave) => this.detachPoll(res, ctx, leave),
    );
    app.get(`${prefix}/socket`, (res: HttpResponse, req: HttpRequest) => {
      const ctx = new RequestContext(req, 0, 'GET');
      const admitted = admit(this.server, res, req, ctx, req.getHeader('sec-websocket-protocol'));
      if (admitted === null || ctx.aborted) return;
      const id = (this.nextId = (this.nextId % 0x7fffffff) + 1);
      this.accepted.set(id, { ...admitted, sink: null, closed: false });
      setTimeout(() => this.accepted.delete(id), HANDSHAKE_WAIT_MS).unref();
      res.cork(() =>
        res
          .writeHeader('X-Guard-Socket', String(id))
          .writeHeader('X-Guard-Protocol', admitted.protocol)
          .end(),
      );
    });
  }

  /** A batch from the guard: sockets opened and closed, frames received. */
  receive(batch: SocketBatch): void {
    readBatch(batch, (id, op, payload) => {
      if (op === SOCKET_OP.OPEN) this.opened(id);
      else if (op === SOCKET_OP.CLOSED) this.closed(id);
      else if (op === SOCKET_OP.POLL_CLOSED) this.pollClosed(id);
      else if (op === SOCKET_OP.POLL_ASK) this.pollAsked(id, payload);
      else {
        const data = this.open.get(id);
        if (data === undefined || data.closed) return;
        const reply = receiveFrame(this.server.queues, data, payload, op === SOCKET_OP.BINARY);
        if (reply !== null) this.send(id, reply, data.format === 'msgpack');
      }
    });
  }

  private opened(id: number): void {
    const data = this.accepted.get(id);
    if (data === undefined) {
      // Its handshake came too late (the acceptance is forgotten): the client is to ask again.
      this.queue(id, SOCKET_OP.CLOSE, 'handshake too late', 1011);
      return;
    }
    this.accepted.delete(id);
    this.open.set(id, data);
    const sink: SocketSink = {
      send: (events) => {
        if (!data.closed) this.send(id, eventsFrame(data, events), data.format === 'msgpack');
      },
      close: (code, reason) => {
        if (data.closed) return;
        data.closed = true;
        this.queue(id, SOCKET_OP.CLOSE, reason, code);
      },
    };
    data.sink = sink;
    this.server.queues.attachSocket(data.rt, sink);
  }

  /**
   * A poll to be held: uWS's request is answered now with the poll's id (the guard holds the
   * client's connection from then on), and the answer, written later, goes to the guard.
   */
  private detachPoll(res: HttpResponse, ctx: RequestContext, leave: () => void): HttpResponse {
    const id = (this.nextPoll = (this.nextPoll % 0x7fffffff) + 1);
    this.polls.set(id, { ctx, leave });
    res.cork(() => res.writeHeader('X-Guard-Poll', String(id)).end());
    return new PollAnswer((response, close) => {
      if (!this.polls.delete(id)) return; // its client is gone
      this.queue(id, SOCKET_OP.POLL_ANSWER, response, close ? 1 : 0);
    }).asResponse();
  }

  /**
   * A poll the guard read itself (src/http/guard.ts `plainPoll`), served as uWS would have served
   * it, into bytes; its answer, at once or later, goes to the guard under the guard's id.
   */
  private pollAsked(id: number, payload: Uint8Array): void {
    if (id >= 0 || this.asked.has(id)) return; // (the guard's ids are negative and unique)
    let fields: PollFields;
    try {
      fields = JSON.parse(Buffer.from(payload).toString('utf8')) as PollFields;
    } catch {
      this.queue(id, SOCKET_OP.POLL_ANSWER, BAD_POLL_ANSWER, 1);
      return;
    }
    const answer = new PollAnswer((response, close) => {
      if (!this.asked.delete(id)) return; // its client is gone
      this.queue(id, SOCKET_OP.POLL_ANSWER, response, close ? 1 : 0);
    }, fields.peer);
    this.asked.set(id, answer);
    this.askedTotal++;
    serveRequest(
      answer.asResponse(),
      new PollRequest(fields).asRequest(),
      getEvents,
      this.server,
      this.inflight,
    );
  }

  /** A held poll's client left before the answer: as uWS reports an aborted request. */
  private pollClosed(id: number): void {
    const asked = this.asked.get(id);
    if (asked !== undefined) {
      this.asked.delete(id);
      asked.abort();
      return;
    }
    const poll = this.polls.get(id);
    if (poll === undefined) return; // answered already
    this.polls.delete(id);
    poll.ctx.markAborted();
    poll.leave();
  }

  private closed(id: number): void {
    this.accepted.delete(id);
    const data = this.open.get(id);
    if (data === undefined) return;
    this.open.delete(id);
    data.closed = true;
    if (data.sink) this.server.queues.detachSocket(data.rt, data.sink);
  }

  private send(id: number, frame: string | Buffer, binary: boolean): void {
    this.queue(id, binary ? SOCKET_OP.BINARY : SOCKET_OP.TEXT, frame);
  }

  private queue(id: number, op: SocketOp, payload: string | Buffer, code = 0): void {
    this.out.add(id, op, payload, code);
    // A large fan-out leaves in parts, so that the guard writes the first frames while this
    // thread still frames the rest.
    if (this.out.count >= STREAM_OPS) {
      this.post?.(this.out.take());
      return;
    }
    if (this.flushing) return;
    this.flushing = true;
    // Once this turn's fan-out is done: one message for the rest of it.
    queueMicrotask(() => {
      this.flushing = false;
      if (!this.out.empty) this.post?.(this.out.take());
    });
  }
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
): Admitted | null {
  const { queues, config } = server;
  ctx.bindPeer(res, config.httpGuard);
  if (server.limits?.readsForwardedFor) ctx.forwardedFor = req.getHeader('x-forwarded-for');
  res.onAborted(() => ctx.markAborted());
  try {
    const realm = resolveRealm(server.realms, ctx.host, config.externalHost);
    const user = authenticate(server.store, realm, ctx.authorization, server.limits, ctx);
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
    return { rt, format: chosen === 'msgpack' ? 'msgpack' : 'json', protocol: chosen };
  } catch (err) {
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
