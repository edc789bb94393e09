/**
 * The event WebSockets (src/http/socket.ts) as the HTTP guard holds them, in its own thread.
 *
 * Relaying an upgraded connection byte for byte costs every frame two more system calls (uWS
 * writes it to its Unix socket, the guard reads it and writes it again), and one event fanned out
 * to thousands of sockets is thousands of frames at once: that relay alone kept the WebSocket
 * fan-out above twice a bare server's latency (docs/benchmarks.md "fanout"). So the guard ends
 * the WebSocket itself. It asks the main thread whether to accept the upgrade (as a plain request
 * through uWS: authentication, rate limits, the queue; any refusal goes back to the client as it
 * is), then answers the handshake, closes its connection to uWS, and from then on frames travel
 * between the threads in batches (./socket-batch.ts): one message per fan-out, each frame written
 * once, to the client's socket.
 *
 * What uWS did for these sockets is done here: no compression, 16 KiB frames at most (1009
 * beyond), a ping when a socket has been quiet and a close when it stays silent (uWS's 120 s idle
 * timeout), and a close with 4002 when a client reads so slowly that its unsent bytes pass the
 * bound (wsMaxBackpressureBytes); its queue keeps what it has not acknowledged.
 */
import type net from 'node:net';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { SOCKET_OP, SocketBatchBuilder, readBatch, type SocketBatch } from './socket-batch.js';

/** The upgrade request as the guard read it (header names in lower case). */
export type SocketRequest = { url: string; headers: Record<string, string> };

/**
 * A socket quiet for a period is pinged; one silent for a period after its ping is closed. Each
 * socket is looked at once a period, in one of IDLE_SLICES slices spread over it: pinging every
 * socket at once (5,000 in the capacity bench) held the guard's thread for about 250 ms, every
 * request and frame of the server waiting behind it.
 */
const IDLE_PERIOD_MS = 60_000;
const IDLE_SLICES = 10;
const MAX_FRAME = 16 * 1024;
/** The close code for a socket past its backpressure bound (CLOSE.BACKPRESSURE of the queues). */
export const CLOSE_BACKPRESSURE = 4002;
/** How long a socket closed for backpressure has to read its close frame. */
const DROP_GRACE_MS = 5_000;

type Held = {
  ws: WebSocket;
  socket: net.Socket;
  /** Something came from it (a frame, a pong) since its last look. */
  heard: boolean;
  /** Pinged at its last look, nothing heard since. */
  pinged: boolean;
};

export class GuardSockets {
  private readonly server = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: MAX_FRAME,
    // The subprotocol the main thread chose for this request (ws asks only when one is offered).
    handleProtocols: (_offered, req) => (req as Chosen).chosenProtocol || false,
  });
  private readonly held = new Map<number, Held>();
  private out = new SocketBatchBuilder();
  private flushing = false;
  private readonly idleTimer: NodeJS.Timeout;
  /** The slice of the sockets the idle sweep looks at next. */
  private idleSlice = 0;

  constructor(
    /** Posts a batch to the main thread. */
    private readonly post: (batch: SocketBatch) => void,
    /** Unsent bytes past which a socket is closed (4002). */
    private readonly maxBackpressure: number,
    idlePeriodMs = IDLE_PERIOD_MS,
  ) {
    this.idleTimer = setInterval(() => this.sweepIdle(), idlePeriodMs / IDLE_SLICES);
    this.idleTimer.unref();
  }

  /** Sockets open (a socket closed for backpressure is no longer counted). */
  get size(): number {
    return this.held.size;
  }

  /**
   * Completes the handshake of an upgrade the main thread accepted as socket `id`. `rest` is what
   * the client sent after its request (normally nothing: it waits for the answer).
   */
  accept(id: number, protocol: string, client: net.Socket, request: SocketRequest, rest: Buffer) {
    const req = {
      method: 'GET',
      url: request.url,
      headers: request.headers,
      chosenProtocol: protocol,
    } as unknown as IncomingMessage;
    if (client.destroyed) {
      this.report(id, SOCKET_OP.CLOSED);
      return;
    }
    let opened = false;
    client.on('error', () => client.destroy());
    // A handshake ws refuses (a bad key or version) is answered 400 and destroyed by ws.
    client.once('close', () => {
      if (!opened) this.report(id, SOCKET_OP.CLOSED);
    });
    this.server.handleUpgrade(req, client, rest, (ws) => {
      opened = true;
      // (Nothing heard yet: a client that never speaks is pinged at its first look.)
      const held: Held = { ws, socket: client, heard: false, pinged: false };
      this.held.set(id, held);
      this.report(id, SOCKET_OP.OPEN);
      ws.on('message', (data: RawData, isBinary: boolean) => {
        held.heard = true;
        this.report(id, isBinary ? SOCKET_OP.BINARY : SOCKET_OP.TEXT, data as Buffer);
      });
      ws.on('pong', () => (held.heard = true));
      // A frame breaking the protocol (over 16 KiB, bad UTF-8): ws has sent the close frame
      // (1009, 1007, 1002) and closes the socket itself; destroying it now would lose that frame.
      ws.on('error', () => {});
      ws.on('close', () => {
        if (this.held.get(id) !== held) return; // dropped already
        this.held.delete(id);
        this.report(id, SOCKET_OP.CLOSED);
      });
    });
    client.resume();
  }

  /** An accepted socket that will not be opened: the main thread forgets it. */
  abandon(id: number): void {
    if (!this.held.has(id)) this.report(id, SOCKET_OP.CLOSED);
  }

  /** Where the answers to the long-polls the guard holds go (./guard-polls.ts). */
  onPollAnswer: ((id: number, answer: Uint8Array, close: boolean) => void) | null = null;

  /** A batch from the main thread: frames to send, sockets to close, answers to held polls. */
  apply(batch: SocketBatch): void {
    // A frame sent to many sockets (one event fanned out) is framed once, written whole to each
    // socket: one write, no per-socket framing. (ws's own sender writes nothing of its own here
    // but pings and closes, each whole: without compression nothing of it is ever held back.)
    const framed = new Map<number, Buffer>();
    readBatch(batch, (id, op, payload, code) => {
      if (op === SOCKET_OP.POLL_ANSWER) {
        this.onPollAnswer?.(id, payload, code === 1);
        return;
      }
      const held = this.held.get(id);
      if (held === undefined) return; // gone already (its CLOSED is on its way)
      const { ws, socket } = held;
      if (ws.readyState !== ws.OPEN) return;
      if (op === SOCKET_OP.CLOSE) {
        try {
          ws.close(code, Buffer.from(payload).toString('utf8'));
        } catch {
          ws.terminate(); // a code or reason ws refuses: the socket ends all the same
        }
        return;
      }
      // (A payload stored once in the batch has one offset, whichever sockets it goes to.)
      const key = payload.byteOffset * 2 + (op === SOCKET_OP.BINARY ? 1 : 0);
      let frame = framed.get(key);
      if (frame === undefined) {
        frame = serverFrame(payload, op === SOCKET_OP.BINARY);
        framed.set(key, frame);
      }
      socket.write(frame);
      if (socket.writableLength > this.maxBackpressure) this.drop(id, held);
    });
  }

  /**
   * A client that reads too slowly: its socket is over for its queue now (as uWS reported a
   * socket it ended), closed with 4002 behind what is buffered, destroyed if that is not read
   * within a few seconds.
   */
  private drop(id: number, held: Held): void {
    this.held.delete(id);
    this.report(id, SOCKET_OP.CLOSED);
    held.ws.close(CLOSE_BACKPRESSURE, 'backpressure');
    setTimeout(() => held.ws.terminate(), DROP_GRACE_MS).unref();
  }

  /** Closes every socket (the server is going away): 1001, then destroyed a second later. */
  endAll(): void {
    clearInterval(this.idleTimer);
    for (const { ws } of this.held.values()) {
      ws.close(1001, 'server shutting down');
      setTimeout(() => ws.terminate(), 1000).unref();
    }
  }

  /** One slice of the sockets: the quiet ones are pinged, the silent ones since closed. */
  private sweepIdle(): void {
    const slice = this.idleSlice;
    this.idleSlice = (slice + 1) % IDLE_SLICES;
    for (const [id, held] of this.held) {
      if (id % IDLE_SLICES !== slice) continue;
      if (held.heard) {
        held.heard = false;
        held.pinged = false;
      } else if (held.pinged) {
        held.ws.terminate();
      } else if (held.ws.readyState === held.ws.OPEN) {
        held.pinged = true;
        held.ws.ping();
      }
    }
  }

  /** Tells the main thread about a socket (or a held poll), in this turn's batch. */
  report(id: number, op: (typeof SOCKET_OP)[keyof typeof SOCKET_OP], payload?: Buffer) {
    this.out.add(id, op, payload ?? null);
    if (this.flushing) return;
    this.flushing = true;
    // After this turn's reads: one message for every frame that arrived in them.
    setImmediate(() => {
      this.flushing = false;
      this.post(this.out.take());
    });
  }
}

type Chosen = IncomingMessage & { chosenProtocol: string };

/** A whole unmasked, unfragmented frame (RFC 6455 §5.2), as a server sends it. */
function serverFrame(payload: Uint8Array, binary: boolean): Buffer {
  const n = payload.byteLength;
  const header = n < 126 ? 2 : n < 0x10000 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + n);
  frame[0] = 0x80 | (binary ? 0x2 : 0x1); // FIN, opcode
  if (n < 126) frame[1] = n;
  else if (n < 0x10000) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(n / 0x100000000), 2);
    frame.writeUInt32BE(n >>> 0, 6);
  }
  frame.set(payload, header);
  return frame;
}
