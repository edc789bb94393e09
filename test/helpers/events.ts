/**
 * Event-queue helpers for tests: register a queue, long-poll it, attach a WebSocket (the `ws`
 * package as the client, JSON or msgpack frames), and wait for frames without sleeping.
 */
import type http from 'node:http';
import type { Test } from 'tap';
import WebSocket from 'ws';
import { decodePacked } from '../../src/delivery/wire.js';
import { assertSuccess, basicAuth, type ApiClient, type ApiResponse, type Params } from './api.js';
import { CLUSTER_MODE } from './server.js';

export type Ev = { id: number; type: string; [k: string]: unknown };

export async function register(
  t: Test,
  api: ApiClient,
  who: string,
  params: Params = {},
): Promise<{ queue_id: string; last_event_id: number; body: Record<string, unknown> }> {
  const res = await api.post(who, 'register', params);
  const body = assertSuccess(t, res, `register ${who}`);
  return { queue_id: body.queue_id as string, last_event_id: body.last_event_id as number, body };
}

export function poll(
  api: ApiClient,
  who: string,
  queueId: string,
  lastEventId: number,
  dontBlock = false,
): Promise<ApiResponse> {
  return api.get(who, 'events', {
    queue_id: queueId,
    last_event_id: lastEventId,
    ...(dontBlock ? { dont_block: true } : {}),
  });
}

/** The events of a successful poll. */
export async function events(
  t: Test,
  api: ApiClient,
  who: string,
  queueId: string,
  lastEventId: number,
  dontBlock = false,
): Promise<Ev[]> {
  const res = await poll(api, who, queueId, lastEventId, dontBlock);
  const body = assertSuccess(t, res, `GET /events for ${who}`);
  return body.events as Ev[];
}

const ARRIVAL_LIMIT_MS = 30_000;

/**
 * The events of a non-blocking poll once at least `count` are there. In one process an event is in
 * its queues before the request that caused it is answered, so the first poll is final. In a
 * cluster, typing and presence events reach other nodes' queues over plain NATS a moment later
 * (docs/cluster.md, "Events and queues"), so there the poll is repeated until they have arrived,
 * for at most ARRIVAL_LIMIT_MS (a bound on a broken test, generous for a loaded machine whose
 * nodes run in processes of their own; the caller's assertion then fails with the diff).
 */
export async function arrivedEvents(
  t: Test,
  api: ApiClient,
  who: string,
  queueId: string,
  lastEventId: number,
  count: number,
): Promise<Ev[]> {
  const start = Date.now();
  for (;;) {
    const got = await events(t, api, who, queueId, lastEventId, true);
    if (!CLUSTER_MODE || got.length >= count || Date.now() - start > ARRIVAL_LIMIT_MS) return got;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A WebSocket client that queues incoming frames and hands them out in order. */
export class SocketClient {
  private frames: unknown[] = [];
  private waiters: ((f: unknown) => void)[] = [];
  closed: Promise<{ code: number; reason: string }>;
  readonly protocol: string;

  constructor(readonly ws: WebSocket) {
    this.protocol = ws.protocol;
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const frame = isBinary ? decodePacked(data) : (JSON.parse(data.toString('utf8')) as unknown);
      const w = this.waiters.shift();
      if (w) w(frame);
      else this.frames.push(frame);
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code: number, reason: Buffer) =>
        resolve({ code, reason: reason.toString() }),
      );
    });
  }

  /** The next frame (waits for it). */
  next(): Promise<Record<string, unknown>> {
    const f = this.frames.shift();
    if (f !== undefined) return Promise.resolve(f as Record<string, unknown>);
    return new Promise((resolve) =>
      this.waiters.push((x) => resolve(x as Record<string, unknown>)),
    );
  }

  /** Frames until `n` events arrived; returns the events. */
  async nextEvents(n: number): Promise<Ev[]> {
    const out: Ev[] = [];
    while (out.length < n) {
      const frame = await this.next();
      if (frame.result !== 'success') throw new Error(`error frame ${JSON.stringify(frame)}`);
      out.push(...(frame.events as Ev[]));
    }
    return out;
  }

  ack(lastEventId: number, binary = false): void {
    this.ws.send(binary ? encodeAck(lastEventId) : JSON.stringify({ last_event_id: lastEventId }));
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close();
    return this.closed;
  }
}

function encodeAck(lastEventId: number): Buffer {
  // Any MessagePack encoder; the server decodes with msgpackr.
  return Buffer.from([0x81, 0xad, ...Buffer.from('last_event_id'), ...uint(lastEventId)]);
}

function uint(n: number): number[] {
  if (n < 0) return [0xd0, n & 0xff];
  if (n < 128) return [n];
  return [0xcd, (n >> 8) & 0xff, n & 0xff];
}

export type SocketOpen =
  | { client: SocketClient }
  | { status: number; body: Record<string, unknown>; headers: http.IncomingHttpHeaders };

/** Opens the events socket; resolves with the client, or with the HTTP refusal. */
export function openSocket(
  baseUrl: string,
  user: { email: string; api_key: string } | null,
  query: Record<string, string | number>,
  protocols: string[] = [],
  /** Another path (the browsers' socket), and headers of the handshake (cookie, Origin). */
  opts: { path?: string; headers?: Record<string, string> } = {},
): Promise<SocketOpen> {
  const url = new URL(opts.path ?? '/api/v1/events/socket', baseUrl.replace(/^http/, 'ws'));
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, {
      headers: {
        ...(user ? { authorization: basicAuth(user.email, user.api_key) } : {}),
        ...opts.headers,
      },
    });
    ws.once('open', () => resolve({ client: new SocketClient(ws) }));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(text) as Record<string, unknown>,
          headers: res.headers,
        });
      });
    });
    ws.once('error', (err) => reject(err));
  });
}

export async function mustOpen(
  t: Test,
  baseUrl: string,
  user: { email: string; api_key: string },
  query: Record<string, string | number>,
  protocols: string[] = [],
): Promise<SocketClient> {
  const r = await openSocket(baseUrl, user, query, protocols);
  if (!('client' in r)) {
    t.fail(`socket refused: ${r.status} ${JSON.stringify(r.body)}`);
    throw new Error('socket refused');
  }
  t.teardown(() => r.client.ws.terminate());
  return r.client;
}

/**
 * Waits until `cond()` holds (for server-side state that has no event of its own, e.g. "the poll
 * is now held"): re-checked on each turn of the event loop at first, then every millisecond, so
 * that a long wait sleeps in the event loop instead of spinning a core the server under test
 * (and, in CI, the other jobs) need. Gives up (failing) after `limitMs`, a bound on a broken
 * test, not a timing assertion.
 */
export async function until(cond: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  const start = Date.now();
  for (let turn = 0; !cond(); turn++) {
    if (Date.now() - start > limitMs) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => (turn < 64 ? setImmediate(r) : setTimeout(r, 1)));
  }
}
