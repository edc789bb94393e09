/**
 * A registered event queue, kept live: `POST /register`, then the queue's events over Confab's
 * event WebSocket (docs/events.md) or by long-polling `GET /events`, with nothing lost or
 * delivered twice across the changes between them.
 *
 * - The socket is preferred when an `openSocket` is given. A socket that closes unasked, or fails
 *   to open, hands over to long-polling at once from the last event received (the queue keeps
 *   everything not acknowledged), and the socket is tried again later (`socketRetryMs`, doubling).
 * - Any failure to reach the server (a restart, a network change) is retried with jittered
 *   exponential backoff on the same queue; the status says `reconnecting` meanwhile.
 * - Silence is a failure too: the server sends a heartbeat when it has had nothing to send for a
 *   while, so a socket that brings nothing, or a poll not answered, within register's
 *   `event_queue_longpoll_timeout_seconds` is taken for lost (a server frozen or a network that
 *   drops packets keeps a connection open, saying nothing). A poll with `dont_block` should be
 *   answered at once: it is given `quickTimeoutMs`.
 * - `BAD_EVENT_QUEUE_ID` (the queue expired, was discarded or the server lost it), a socket closed
 *   with 4001, or an acknowledgement the queue cannot honour: register again and hand the new
 *   snapshot to `onRegister` (`again` = true), which replaces the caller's state.
 * - 401 (the session or key is no longer valid) and 4003 (deactivated): stop, `onFatal`.
 *
 * Events are handed over in order, each id once (ids at or below the last one seen are dropped).
 * Acknowledgements: a poll acknowledges by its `last_event_id`; on the socket an acknowledgement
 * frame follows each batch, coalesced over `ackDelayMs`.
 */
import { ApiError, NetworkError, type ConfabClient, type Params } from './api.js';
import type { RegisterResponse, ServerEvent } from './types.js';

/** The WebSocket surface used (browsers' WebSocket and the `ws` package both have it). */
export type SocketLike = {
  binaryType: string;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
};

/** Opens a socket: the URL, the subprotocol, and the client's auth headers (Node only). */
export type OpenSocket = (
  url: string,
  protocol: string,
  headers: Record<string, string>,
) => SocketLike;

/** MessagePack frames (e.g. msgpackr's pack/unpack); without one, frames are JSON. */
export type FrameCodec = { decode(data: Uint8Array): unknown; encode(value: unknown): Uint8Array };

export type Timers = {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

export type StreamStatus = 'registering' | 'live' | 'reconnecting' | 'stopped';
export type Transport = 'socket' | 'poll' | null;

export type EventStreamOptions = {
  client: ConfabClient;
  /** `POST /register` parameters. */
  register: Params;
  openSocket?: OpenSocket | null;
  msgpack?: FrameCodec;
  /** The snapshot; `again` when the queue was lost and registered anew (replace all state). */
  onRegister: (state: RegisterResponse, again: boolean) => void;
  onEvents: (events: ServerEvent[]) => void;
  onStatus?: (status: StreamStatus, transport: Transport, error?: unknown) => void;
  /** The stream stopped for good: the credentials were refused or the user deactivated. */
  onFatal?: (error: Error) => void;
  timers?: Timers;
  random?: () => number;
  /** First retry delay after a failure, doubling up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * A poll not answered, or a socket that brought nothing, in this time is taken for lost
   * (default: register's `event_queue_longpoll_timeout_seconds`, 90 s).
   */
  pollTimeoutMs?: number;
  /** The same for a poll with `dont_block`, answered at once by a server that is there (15 s). */
  quickTimeoutMs?: number;
  /**
   * How long after falling back to polling to try the socket again: `socketReturnMs` (5 s) when
   * the socket had worked (a restart, a dropped connection), else `socketRetryMs` (5 min),
   * doubling with each attempt that fails to open, up to 16×.
   */
  socketRetryMs?: number;
  socketReturnMs?: number;
  ackDelayMs?: number;
};

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class EventStream {
  queueId: string | null = null;
  lastEventId = -1;
  status: StreamStatus = 'registering';
  transport: Transport = null;

  private readonly o: EventStreamOptions;
  private readonly timers: Timers;
  private readonly random: () => number;
  /** Bumped whenever the current connection is abandoned; callbacks of older ones do nothing. */
  private gen = 0;
  private stopped = false;
  private failures = 0;
  private socket: SocketLike | null = null;
  private poll: AbortController | null = null;
  private retryTimer: unknown = null;
  private retryFn: (() => void) | null = null;
  private socketRetryTimer: unknown = null;
  /** Socket attempts in a row that failed to open (0: use the socket). */
  private socketFailures = 0;
  private socketWorked = false;
  private ackTimer: unknown = null;
  /** The socket's silence watchdog: armed as it opens, re-armed by every frame. */
  private quietTimer: unknown = null;
  /** Whether the current socket has opened (a silent handshake counts as a failure to open). */
  private socketOpen = false;
  private acked = -1;
  private pollTimeoutMs: number;

  constructor(opts: EventStreamOptions) {
    this.o = opts;
    this.timers = opts.timers ?? realTimers;
    this.random = opts.random ?? Math.random;
    this.pollTimeoutMs = opts.pollTimeoutMs ?? 90_000;
  }

  /** Registers and starts receiving; resolves once the first snapshot was handed over. */
  async start(): Promise<void> {
    await this.registerQueue(false);
  }

  /** Stops; with `deleteQueue`, also tells the server to drop the queue (best effort). */
  stop(opts: { deleteQueue?: boolean } = {}): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abandon();
    this.setStatus('stopped', null);
    if (opts.deleteQueue && this.queueId !== null) {
      this.o.client.deleteQueue(this.queueId, { keepalive: true }).catch(() => undefined);
    }
  }

  /**
   * Try at once instead of waiting out a backoff (the browser came back online, or in view, or
   * the user asked); a poll still waiting for a server that has not answered is sent again.
   */
  reconnectNow(): void {
    if (this.stopped) return;
    if (this.status === 'reconnecting' && this.poll !== null && this.socket === null) {
      this.failures = 0;
      return this.startPolling(true);
    }
    if (this.retryTimer === null || this.retryFn === null) return;
    const fn = this.retryFn;
    this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.retryFn = null;
    this.failures = 0;
    fn();
  }

  // ---- Registration --------------------------------------------------------------------

  private async registerQueue(again: boolean): Promise<void> {
    this.abandon();
    this.setStatus(again ? 'reconnecting' : 'registering', null);
    const gen = this.gen;
    for (;;) {
      if (this.stopped || gen !== this.gen) return;
      try {
        const r = await this.o.client.register(this.o.register);
        if (this.stopped || gen !== this.gen) return;
        this.queueId = r.queue_id;
        this.lastEventId = r.last_event_id;
        this.acked = r.last_event_id;
        if (this.o.pollTimeoutMs === undefined && r.event_queue_longpoll_timeout_seconds) {
          this.pollTimeoutMs = r.event_queue_longpoll_timeout_seconds * 1000;
        }
        this.failures = 0;
        this.o.onRegister(r, again);
        this.connect();
        return;
      } catch (e) {
        if (this.fatal(e)) return;
        if (!this.retryable(e) && !again) throw e;
        this.setStatus('reconnecting', null, e);
        await this.sleep(this.backoff());
      }
    }
  }

  private reregister(): void {
    if (this.stopped) return;
    this.registerQueue(true).catch((e: unknown) => this.die(e));
  }

  // ---- Connections ------------------------------------------------------------------------

  /** Abandons the current socket or poll and any scheduled retry. */
  private abandon(): void {
    this.gen++;
    if (this.retryTimer !== null) this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    // A registration waiting out a backoff wakes up and sees it was abandoned (or stopped).
    const wake = this.retryFn;
    this.retryFn = null;
    wake?.();
    if (this.socketRetryTimer !== null) this.timers.clearTimeout(this.socketRetryTimer);
    this.socketRetryTimer = null;
    this.flushAck();
    this.closeSocket();
    this.poll?.abort();
    this.poll = null;
  }

  private closeSocket(): void {
    this.quiet(null);
    const s = this.socket;
    if (!s) return;
    this.socket = null;
    s.onopen = s.onmessage = s.onclose = s.onerror = null;
    try {
      s.close(1000);
    } catch {
      // already closed
    }
  }

  private connect(): void {
    if (this.stopped) return;
    if (this.o.openSocket && this.socketFailures === 0) this.openSocket();
    else this.startPolling(true);
  }

  private openSocket(): void {
    const open = this.o.openSocket;
    if (!open || this.queueId === null || this.stopped) return;
    const gen = this.gen;
    const client = this.o.client;
    const protocol = this.o.msgpack ? 'msgpack' : 'json';
    this.closeSocket();
    let s: SocketLike;
    try {
      s = open(
        client.socketUrl(this.queueId, this.lastEventId),
        protocol,
        client.authHeaders('GET'),
      );
    } catch {
      this.socketFailed(gen, false);
      return;
    }
    this.socket = s;
    s.binaryType = 'arraybuffer';
    // Watched from the start: a handshake a frozen server never answers is given up too.
    this.socketOpen = false;
    this.quiet(s);
    let opened = false;
    s.onopen = () => {
      if (gen !== this.gen || this.socket !== s) return;
      opened = true;
      this.socketOpen = true;
      this.failures = 0;
      this.socketFailures = 0;
      this.socketWorked = true;
      // A poll held meanwhile was finished by the server; what it had comes again here.
      this.poll?.abort();
      this.poll = null;
      this.acked = this.lastEventId;
      this.setStatus('live', 'socket');
      this.quiet(s);
    };
    s.onmessage = (ev) => {
      if (gen !== this.gen || this.socket !== s) return;
      this.quiet(s);
      this.onFrame(ev.data);
    };
    s.onerror = () => undefined; // a close follows
    s.onclose = (ev) => {
      if (gen !== this.gen || this.socket !== s) return;
      this.socket = null;
      this.quiet(null);
      if (ev.code === 4001 || ev.code === 4000) {
        // The queue is gone, or another consumer took it (never this client, which does not
        // poll while its socket is attached): start afresh.
        return this.reregister();
      }
      if (ev.code === 4003) {
        return this.die(
          new ApiError(401, { code: 'USER_DEACTIVATED', msg: 'Account is deactivated' }, null),
        );
      }
      this.socketFailed(gen, opened);
    };
  }

  /**
   * The socket closed unasked (or never opened): long-poll from the last event received at once,
   * and try the socket again after a poll succeeds (soon if it had worked, else after
   * `socketRetryMs`, doubling with each attempt that fails to open).
   */
  private socketFailed(gen: number, hadOpened: boolean): void {
    if (gen !== this.gen || this.stopped) return;
    if (!hadOpened) this.socketFailures++;
    if (this.transport === 'socket') this.setStatus('live', 'poll');
    this.startPolling(true);
  }

  /**
   * (Re-)arms the watchdog of socket `s` (null: disarms it): nothing on it, not even a heartbeat
   * (or no answer to its handshake), for the poll timeout, and it is closed as lost;
   * long-polling (at once, `dont_block`) tells whether the server is there.
   */
  private quiet(s: SocketLike | null): void {
    if (this.quietTimer !== null) this.timers.clearTimeout(this.quietTimer);
    this.quietTimer = null;
    if (s === null) return;
    const gen = this.gen;
    this.quietTimer = this.timers.setTimeout(() => {
      this.quietTimer = null;
      if (gen !== this.gen || this.socket !== s || this.stopped) return;
      if (!this.socketOpen) this.socketFailures++;
      this.closeSocket();
      this.setStatus('reconnecting', null, new NetworkError('the event socket went silent'));
      this.startPolling(true);
    }, this.pollTimeoutMs);
  }

  private scheduleSocketRetry(): void {
    if (!this.o.openSocket || this.socketRetryTimer !== null || this.socket !== null) return;
    const base = this.socketWorked
      ? (this.o.socketReturnMs ?? 5_000)
      : (this.o.socketRetryMs ?? 300_000);
    const ms = base * Math.min(16, 2 ** Math.max(0, this.socketFailures - 1));
    const gen = this.gen;
    this.socketRetryTimer = this.timers.setTimeout(() => {
      this.socketRetryTimer = null;
      if (gen !== this.gen || this.stopped || this.socket !== null) return;
      this.openSocket();
    }, ms);
  }

  private onFrame(data: unknown): void {
    let frame: unknown;
    try {
      if (typeof data === 'string') frame = JSON.parse(data);
      else if (this.o.msgpack) {
        const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : (data as Uint8Array);
        frame = this.o.msgpack.decode(bytes);
      } else return;
    } catch {
      return;
    }
    if (frame === null || typeof frame !== 'object') return;
    const f = frame as { result?: string; code?: string; events?: unknown[] };
    if (f.result === 'error') {
      if (f.code === 'BAD_EVENT_QUEUE_ID') this.reregister();
      return;
    }
    if (Array.isArray(f.events)) {
      const events = f.events as ServerEvent[];
      this.deliver(events);
      // A lone heartbeat is acknowledged at once (no timer for an idle connection); other
      // events are acknowledged together, a little later.
      if (events.every((e) => e.type === 'heartbeat')) this.flushAck();
      else this.scheduleAck();
    }
  }

  private scheduleAck(): void {
    if (this.ackTimer !== null || this.lastEventId <= this.acked) return;
    this.ackTimer = this.timers.setTimeout(() => {
      this.ackTimer = null;
      this.flushAck();
    }, this.o.ackDelayMs ?? 1000);
  }

  private flushAck(): void {
    if (this.ackTimer !== null) this.timers.clearTimeout(this.ackTimer);
    this.ackTimer = null;
    const s = this.socket;
    if (!s || this.lastEventId <= this.acked) return;
    const ack = { last_event_id: this.lastEventId };
    try {
      s.send(this.o.msgpack ? this.o.msgpack.encode(ack) : JSON.stringify(ack));
      this.acked = this.lastEventId;
    } catch {
      // the socket is closing; the next connection acknowledges by its last_event_id
    }
  }

  private startPolling(first: boolean): void {
    if (this.stopped || this.queueId === null) return;
    this.poll?.abort();
    const ctl = new AbortController();
    this.poll = ctl;
    const gen = this.gen;
    const queueId = this.queueId;
    let timedOut = false;
    // After a failure or a hand-over, an immediate answer tells whether the server is there.
    const dontBlock = first || this.status !== 'live';
    const timeout = dontBlock
      ? Math.min(this.pollTimeoutMs, this.o.quickTimeoutMs ?? 15_000)
      : this.pollTimeoutMs;
    const timer = this.timers.setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, timeout);
    this.o.client.getEvents(queueId, this.lastEventId, { dontBlock, signal: ctl.signal }).then(
      (r) => {
        this.timers.clearTimeout(timer);
        if (gen !== this.gen || this.poll !== ctl) return;
        this.poll = null;
        this.failures = 0;
        this.setStatus('live', 'poll');
        this.deliver(r.events as ServerEvent[]);
        // While a socket is opening, no new poll: it would take the queue from the socket.
        if (this.socket !== null) return;
        this.scheduleSocketRetry();
        this.startPolling(false);
      },
      (e: unknown) => {
        this.timers.clearTimeout(timer);
        if (gen !== this.gen || this.poll !== ctl) return;
        this.poll = null;
        if (this.socket !== null) return;
        if (this.fatal(e)) return;
        if (!timedOut && e instanceof ApiError && !e.transient) return this.reregister();
        // Not answered in time (no heartbeat came): as good as refused, the server is not there.
        this.setStatus('reconnecting', null, timedOut ? new NetworkError('no answer') : e);
        // A long poll that timed out is tried again at once (once); the rest wait a backoff.
        if (timedOut && !dontBlock) return this.startPolling(true);
        this.later(() => this.startPolling(true), this.backoff());
      },
    );
  }

  // ---- Delivery and bookkeeping -----------------------------------------------------------

  private deliver(events: ServerEvent[]): void {
    const fresh = events.filter((e) => typeof e.id === 'number' && e.id > this.lastEventId);
    if (fresh.length === 0) return;
    this.lastEventId = fresh[fresh.length - 1]!.id;
    try {
      this.o.onEvents(fresh);
    } catch (e) {
      // A consumer's bug must not stop the stream; it is reported where the caller looks.
      console.error('Confab client: an event handler failed', e);
    }
  }

  private fatal(e: unknown): boolean {
    if (
      e instanceof ApiError &&
      (e.status === 401 || e.code === 'USER_DEACTIVATED' || e.code === 'REALM_DEACTIVATED')
    ) {
      this.die(e);
      return true;
    }
    return false;
  }

  private die(e: unknown): void {
    if (this.stopped) return;
    this.stop();
    this.o.onFatal?.(e instanceof Error ? e : new Error(String(e)));
  }

  private retryable(e: unknown): boolean {
    return e instanceof NetworkError || (e instanceof ApiError && e.transient);
  }

  private backoff(): number {
    const min = this.o.minBackoffMs ?? 1000;
    const max = this.o.maxBackoffMs ?? 30_000;
    const ms = Math.min(max, min * 2 ** this.failures);
    this.failures++;
    return ms / 2 + (this.random() * ms) / 2;
  }

  /** Runs `fn` after `ms`, unless the connection is abandoned first; reconnectNow runs it now. */
  private later(fn: () => void, ms: number): void {
    const gen = this.gen;
    this.retryFn = () => {
      if (gen === this.gen && !this.stopped) fn();
    };
    this.retryTimer = this.timers.setTimeout(() => {
      const f = this.retryFn;
      this.retryTimer = null;
      this.retryFn = null;
      f?.();
    }, ms);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.retryFn = resolve;
      this.retryTimer = this.timers.setTimeout(() => {
        this.retryTimer = null;
        this.retryFn = null;
        resolve();
      }, ms);
    });
  }

  private setStatus(status: StreamStatus, transport: Transport, error?: unknown): void {
    if (this.status === status && this.transport === transport) return;
    this.status = status;
    this.transport = transport;
    this.o.onStatus?.(status, transport, error);
  }
}
