/**
 * The long-polls (`GET /api/v1/events`) the HTTP guard holds itself, in its thread.
 *
 * A relayed connection holds three file descriptors in the server's process (./guard.ts), and a
 * long-poll is held for up to a minute: with thousands of long-polling clients, the open-files
 * limit, not the CPU, set how many users the server could hold. So the guard asks uWS about a
 * poll (a connection's first request, on a route only it knows; ./router.ts answers it), and one
 * the main thread would hold is answered `200` with `X-Guard-Poll: <id>` and nothing else: the
 * guard closes its connection to uWS and holds the client's alone (one descriptor). The main
 * thread sends the poll's whole HTTP answer later, in the batches the event WebSockets use
 * (./socket-batch.ts); the guard writes it, and the client's next request starts on a fresh
 * connection to uWS. A poll uWS answers at once (events were waiting, or an error) is forwarded
 * and the connection starts afresh the same way. A client that goes away while its poll is held
 * is reported, and the main thread releases the poll as uWS would have on an aborted request.
 *
 * The next request after a poll is most often the client's next poll. When it is a plain one
 * (./guard.ts `plainPoll`), it does not go to uWS at all (`ask`): its fields go to the main thread
 * in the batches, which serves it as uWS would have (src/http/socket.ts, GuardSocketHost) and
 * sends its answer back the same way, at once or when events come. A long-polling client then
 * costs no connection to uWS per poll (a connect, an accept, a PROXY header, a verdict, a close,
 * in both threads), which at 10,000 users was what the guard spent most on.
 */
import type net from 'node:net';
import type { PollFields } from './poll-answer.js';

/** What a client may send while its poll is held (its next request, pipelined). */
const MAX_BUFFERED = 64 * 1024;
/** How long an answer that came before the poll's verdict waits for it. */
const EARLY_ANSWER_MS = 10_000;
/** A poll the main thread never answers (it answers within a minute) is closed after this. */
const HELD_LIMIT_MS = 5 * 60_000;
/** How often held polls are checked against HELD_LIMIT_MS (and parked ones, PARKED_IDLE_MS). */
const SWEEP_MS = 30_000;
/**
 * A connection whose poll is answered and which sends no next request is ended after this, as
 * uWS ends a connection idle between requests (10 s); the sweep's period comes on top.
 */
const PARKED_IDLE_MS = 10_000;

/** A released client's error listener: the socket is destroyed (`this` is the socket). */
function destroyOnError(this: net.Socket): void {
  this.destroy();
}

type Client = {
  socket: net.Socket;
  /** The poll being answered; null: answered, waiting for the client's next request. */
  poll: number | null;
  /** When its poll was taken, or (parked) when it was answered. */
  since: number;
  buffered: Buffer[];
  size: number;
  listeners: {
    data: (chunk: Buffer) => void;
    end: () => void;
    error: () => void;
    close: () => void;
  };
};

export class GuardPolls {
  /** Polls held, by id. */
  private readonly held = new Map<number, Client>();
  /** Clients whose poll is answered, waiting for their next request. */
  private readonly parked = new Set<Client>();
  /** Answers that arrived before their poll's verdict (the two travel different ways). */
  private readonly early = new Map<number, { bytes: Uint8Array; close: boolean; at: number }>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly heldLimitMs: number;
  private readonly parkedIdleMs: number;
  /** Has the main thread serve a poll asked without uWS (`ask`): its id and fields. */
  onAsk: (id: number, fields: PollFields) => void = () => {};
  /** The last id given to a poll asked without uWS (`ask`): -1, -2, … */
  private nextAsked = 0;

  constructor(
    /** Tells the main thread a held poll's client is gone (or will not be held). */
    private readonly closed: (id: number) => void,
    /** Relays the client's next request (its first bytes) on a fresh connection to uWS. */
    private readonly next: (socket: net.Socket, first: Buffer) => void,
    private readonly now: () => number = Date.now,
    /** HELD_LIMIT_MS, PARKED_IDLE_MS and SWEEP_MS by default (tests shorten them). */
    limits: { heldLimitMs?: number; parkedIdleMs?: number; sweepMs?: number } = {},
  ) {
    this.heldLimitMs = limits.heldLimitMs ?? HELD_LIMIT_MS;
    this.parkedIdleMs = limits.parkedIdleMs ?? PARKED_IDLE_MS;
    this.sweeper = setInterval(() => this.sweep(), limits.sweepMs ?? SWEEP_MS);
    this.sweeper.unref();
  }

  /** Connections held (each one file descriptor). */
  get size(): number {
    return this.held.size + this.parked.size;
  }

  /** Polls waiting for their answer. */
  get waiting(): number {
    return this.held.size;
  }

  /**
   * Holds `socket` until the main thread answers poll `id`; `rest` is what the client sent after
   * the poll's request (normally nothing).
   */
  hold(id: number, socket: net.Socket, rest: Buffer): void {
    const client = this.adopt(socket, id, rest);
    if (client === null) {
      this.closed(id);
      return;
    }
    this.held.set(id, client);
    const early = this.early.get(id);
    if (early !== undefined) {
      this.early.delete(id);
      this.answer(id, early.bytes, early.close);
    }
  }

  /**
   * A poll (`fields`, read from the client's next request after a poll: HttpGuard.relay) that the
   * main thread is to serve with no connection to uWS: the guard holds `socket` under an id of its
   * own (negative, apart from the main thread's) until the answer comes, which it then is
   * whether the poll was held or answered at once. `rest`: what the client sent after it.
   */
  ask(socket: net.Socket, fields: PollFields, rest: Buffer): void {
    const id = (this.nextAsked = this.nextAsked <= -0x7fffffff ? -1 : this.nextAsked - 1);
    const client = this.adopt(socket, id, rest);
    if (client === null) return; // gone already: nothing was asked
    this.held.set(id, client);
    this.onAsk(id, fields);
  }

  /** A client whose poll was answered at once: its next request starts afresh. */
  park(socket: net.Socket, rest: Buffer): void {
    if (socket.readableEnded && rest.length === 0) {
      socket.end(); // the client ended its side after the request: the answer is its last
      return;
    }
    const client = this.adopt(socket, null, rest);
    if (client !== null) this.resume(client);
  }

  /** A held poll's verdict that will not be followed (its client is gone): forget its answer. */
  abandon(id: number): void {
    this.early.delete(id);
    this.closed(id);
  }

  /** The answer to poll `id` (the whole HTTP response); `close`: the connection ends after it. */
  answer(id: number, bytes: Uint8Array, close: boolean): void {
    const client = this.held.get(id);
    if (client === undefined) {
      if (id < 0) return; // asked without uWS (`ask`), and its client is gone
      // Its verdict has not been read yet, or its client is gone (then this expires unclaimed).
      this.expireEarly();
      this.early.set(id, { bytes, close, at: this.now() });
      return;
    }
    this.held.delete(id);
    client.poll = null;
    const { socket } = client;
    if (socket.destroyed) return;
    socket.write(bytes);
    if (close) {
      this.release(client);
      socket.end();
      return;
    }
    this.resume(client);
  }

  /** Ends every held connection (the server is going away). */
  endAll(): void {
    clearInterval(this.sweeper);
    for (const client of [...this.held.values(), ...this.parked]) {
      client.socket.end();
      setTimeout(() => client.socket.destroy(), 1000).unref();
    }
  }

  /** Takes `socket` over from the relay (its listeners removed, paused); null if it is unusable. */
  private adopt(socket: net.Socket, poll: number | null, rest: Buffer): Client | null {
    if (socket.destroyed) return null;
    if (poll !== null && socket.readableEnded) {
      socket.destroy(); // it left while the poll was asked about (see ended)
      return null;
    }
    const client: Client = {
      socket,
      poll,
      since: this.now(),
      buffered: rest.length > 0 ? [rest] : [],
      size: rest.length,
      listeners: {
        data: (chunk) => this.received(client, chunk),
        end: () => this.ended(client),
        error: () => socket.destroy(),
        close: () => this.gone(client),
      },
    };
    socket.on('data', client.listeners.data);
    socket.on('end', client.listeners.end);
    socket.on('error', client.listeners.error);
    socket.on('close', client.listeners.close);
    socket.resume();
    return client;
  }

  /** Bytes from a client: held while its poll is, else its next request. */
  private received(client: Client, chunk: Buffer): void {
    if (client.poll === null) {
      this.release(client);
      this.next(client.socket, chunk);
      return;
    }
    client.size += chunk.length;
    if (client.size > MAX_BUFFERED) {
      client.socket.destroy(); // far more than a client waiting for its answer sends
      return;
    }
    client.buffered.push(chunk);
  }

  /** The poll is answered: what the client sent meanwhile goes on, or its next request will. */
  private resume(client: Client): void {
    if (client.buffered.length === 0) {
      client.since = this.now();
      this.parked.add(client);
      return;
    }
    const first = Buffer.concat(client.buffered);
    this.release(client);
    this.next(client.socket, first);
  }

  private ended(client: Client): void {
    if (client.poll !== null) {
      // As uWS takes a client's FIN while its answer is pending: the client is gone (a poll is
      // held for up to a minute; a client that still waits keeps its side open).
      client.socket.destroy();
      return;
    }
    this.release(client);
    client.socket.end();
  }

  private gone(client: Client): void {
    this.parked.delete(client);
    if (client.poll !== null && this.held.get(client.poll) === client) {
      this.held.delete(client.poll);
      this.closed(client.poll);
    }
  }

  /** Hands the client back (to the relay, or to its end): its listeners go, it is paused. */
  private release(client: Client): void {
    this.parked.delete(client);
    const { socket, listeners } = client;
    socket.pause();
    socket.off('data', listeners.data);
    socket.off('end', listeners.end);
    socket.off('error', listeners.error);
    socket.off('close', listeners.close);
    // A client ended or destroyed from here on is the relay's (or no one's) to clean up. (One such
    // listener per socket: a connection's polls pass through here one after another, and a poll
    // served without uWS comes back here without the relay clearing its listeners.)
    if (!socket.listeners('error').includes(destroyOnError)) socket.on('error', destroyOnError);
  }

  private expireEarly(): void {
    const limit = this.now() - EARLY_ANSWER_MS;
    for (const [id, e] of this.early) if (e.at < limit) this.early.delete(id);
  }

  private sweep(): void {
    this.expireEarly();
    const limit = this.now() - this.heldLimitMs;
    // Its 'close' listener (`gone`) reports the poll closed, as for a client that left.
    for (const client of this.held.values()) if (client.since < limit) client.socket.destroy();
    // A client idle since its answer holds a descriptor for nothing: its connection is ended
    // (what it still sends is dropped; a client's library opens a new one for its next request).
    const idle = this.now() - this.parkedIdleMs;
    for (const client of [...this.parked]) {
      if (client.since >= idle) continue;
      const { socket } = client;
      this.release(client);
      socket.end();
      socket.resume();
      setTimeout(() => socket.destroy(), 1000).unref();
    }
  }
}
