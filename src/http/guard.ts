/**
 * The HTTP guard: a thin TCP relay in front of uWebSockets.js (HTTP_GUARD, on by default; run in a
 * thread of its own by guard-thread.ts; see docs/robustness.md "Odd but legal HTTP") so that every
 * well-formed request gets an answer.
 *
 * This uWS build (v20.30, uWebSockets ~v20.44) gives up on two kinds of legal request without
 * answering (verified with raw sockets, test/api/http-guard.test.ts):
 *  - a header name with a token character other than letters, digits and `-` (`X_Custom`,
 *    `X.Custom`, `X~Custom`, ...): its parser takes the head for incomplete and waits for more
 *    bytes until its 10 s idle timeout, then closes;
 *  - a method other than the nine it knows (GET POST HEAD PUT DELETE CONNECT OPTIONS TRACE PATCH),
 *    e.g. QUERY, PROPFIND, or `get`: its router has no node for it, even for `any`, and closes the
 *    connection at once.
 * Neither reaches JavaScript, so the guard looks at each request head before uWS does:
 *  - a header whose name is a token uWS does not take is dropped and the request served without it
 *    (what nginx does with `ignore_invalid_headers`);
 *  - an unknown method, or a head that is not HTTP at all in a way uWS would hang on (a header line
 *    without a colon, a name with spaces, obsolete line folding), is replaced by a request for a
 *    route only the guard knows (a random path), which answers 501 or 400 in the API's error format
 *    and closes the connection; nothing more is read from it. Because the answer comes from uWS in
 *    the connection's order, pipelined requests before it are answered first.
 * The event WebSockets end here (./guard-sockets.ts): their upgrade (a connection's first request)
 * is asked about as a plain request on a route only the guard knows, and an accepted one is
 * answered and held by the guard. So are long-polls (./guard-polls.ts): a connection's first
 * `GET /api/v1/events` is asked about on another such route, and one the server would hold is
 * held here instead, with the connection to uWS closed; the polls that follow on that
 * connection are read here and served by the main thread without uWS (`plainPoll`). HTTP/1.0
 * requests, which uWS never answers, pass as HTTP/1.1. Everything else passes unchanged: request
 * bodies (Content-Length or chunked framing is followed to find the next head), other WebSocket
 * upgrades (raw from then on), responses. uWS listens on a Unix socket in a private directory; the guard opens each connection
 * with a PROXY protocol v2 header carrying the client's address, which uWS reads as the proxied
 * address (RequestContext.peerAddress).
 *
 * Cost: every byte crosses one more socket pair in this process (two reads and two writes per
 * request and response, on the relay's thread) — see docs/robustness.md for the measured figures.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { GuardPolls } from './guard-polls.js';
import { closingError, type PollFields } from './poll-answer.js';
import type { GuardSockets, SocketRequest } from './guard-sockets.js';
import { WriteSlabs } from './write-slabs.js';

const KNOWN_METHODS = new Set([
  'GET',
  'POST',
  'HEAD',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
]);
const REQUEST_LINE = /^([^ ]+) [^ ]+ HTTP\/1\.[01]$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A `Connection` header that asks for the connection to end after the answer. */
const CONNECTION_CLOSE = /(^|,)\s*close\s*(,|$)/i;
/** Header names uWS parses (RFC 9110's recommended set). */
const UWS_NAME = /^[0-9A-Za-z-]+$/;
const CRLF2 = Buffer.from('\r\n\r\n');
/**
 * The longest request head (request line and headers) taken; a longer one is answered 431. uWS's
 * own limit depends on how the bytes arrive (a head that comes in one read, up to its 512 KiB
 * receive buffer, is taken whole), and the guard passes each head in one write, so the guard
 * keeps the bound, at uWS's one-read size (what clients could send before the guard).
 */
const MAX_HEAD = 512 * 1024;
const MAX_CHUNK_LINE = 4096;
/**
 * Lingering close: once uWS has ended a connection whose client is still sending (a request
 * refused from its head while its body arrives), the client gets the answer and a FIN, and what it
 * still sends is read and dropped for at most this long and this many bytes, then the connection
 * is destroyed. Closing at once, with its bytes unread, would send a reset, which can make the
 * client lose the answer before it read it (RFC 9112 §9.6).
 */
const LINGER_MS = 5_000;
const LINGER_BYTES = 64 * 1024 * 1024;
/** How long a connection to uWS refused for a full accept queue (EAGAIN) is tried again. */
const CONNECT_PATIENCE_MS = 5_000;

/**
 * File descriptors one relayed connection holds in this process: the client's socket, the relay's
 * connection to uWS, and uWS's end of it. The process's open-files limit therefore bounds the
 * connections the server can hold with the guard at a third of what it could without it.
 */
export const FDS_PER_RELAY = 3;
/** Descriptors left for everything but relays: the database, uploads, threads, logs, NATS. */
export const FD_RESERVE = 512;
/** Refused connections lingering at once (each holds a descriptor); beyond, closed at once. */
const MAX_REFUSED_LINGERING = 256;

/** The process's open-files limit (soft; Node raises it to the hard one), or null if unknown. */
export function openFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'latin1'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** How many connections the guard can relay within `limit` descriptors (null: no known bound). */
export function relayCapacity(limit: number | null): number {
  if (limit === null) return Number.MAX_SAFE_INTEGER;
  return Math.floor(descriptorBudget(limit) / FDS_PER_RELAY);
}

/**
 * The descriptors the guard's connections may hold within `limit`: three per relayed connection,
 * one per event WebSocket or long-poll it holds itself (null: no known bound).
 */
export function descriptorBudget(limit: number | null): number {
  if (limit === null) return Number.MAX_SAFE_INTEGER;
  return Math.max(16 * FDS_PER_RELAY, limit - FD_RESERVE);
}

/**
 * Whether a new connection can be taken while `relays` connections are relayed and `sockets`
 * event WebSockets and long-polls held: within the connection limit, and its relay's descriptors
 * within the budget (a connection is relayed until it turns out to be an event socket or a poll).
 */
export function roomForOneMore(
  relays: number,
  sockets: number,
  limits: { maxRelays: number; maxDescriptors: number },
): boolean {
  return (
    relays + sockets < limits.maxRelays &&
    (relays + 1) * FDS_PER_RELAY + sockets <= limits.maxDescriptors
  );
}

/**
 * The answer to a connection the server cannot hold (the connection limit reached, or uWS could
 * not be reached for it): the API's error format, then the connection ends.
 */
const BUSY_ANSWER = closingError(
  '503 Service Unavailable',
  'The server is holding as many connections as it can; try again shortly',
  'Retry-After: 5\r\n',
);

/**
 * Where the guard sends the requests uWS could not answer: `<prefix>/<status>/<what>`; and, when it
 * holds the event WebSockets itself (./guard-sockets.ts), the public path of their upgrades,
 * asked about as `<prefix>/socket?<query>`, and that of the long-polls (./guard-polls.ts), asked
 * about as `<prefix>/poll?<query>`.
 */
export type GuardRoutes = { prefix: string; socket?: string; poll?: string };

/** Headers of an upgrade the guard ends itself that uWS is not shown (the rest are). */
const HANDSHAKE_ONLY = new Set([
  'upgrade',
  'connection',
  'expect',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
]);
/** What a client may send after an upgrade request before the answer (held meanwhile). */
const MAX_HELD = 64 * 1024;

type Mode =
  | { kind: 'head' }
  | { kind: 'body'; left: number }
  | { kind: 'chunk-size' }
  | { kind: 'chunk-data'; left: number }
  | { kind: 'trailers' }
  | { kind: 'raw' }
  /**
   * An event-socket upgrade or a long-poll is being asked about: what follows is held (up to
   * MAX_HELD).
   */
  | { kind: 'socket'; held: Buffer[]; size: number; overflow: boolean }
  | { kind: 'discard' };

/**
 * Follows the requests of one connection (client to server) and says what to forward. Pure: no
 * I/O, fed bytes, returns bytes.
 */
export class RequestScanner {
  private mode: Mode = { kind: 'head' };
  private pending: Buffer = Buffer.alloc(0);
  /** Request heads seen on this connection. */
  private heads = 0;
  /** The event-socket upgrade being asked about (mode 'socket'). */
  socketRequest: SocketRequest | null = null;
  /** A long-poll is being asked about (mode 'socket'). */
  pollAsked = false;
  /** A HEAD went to uWS (its answer's length has no body: answers are no longer counted). */
  private headSent = false;

  constructor(
    private readonly routes: GuardRoutes,
    /** Answers uWS has completed on this connection (null: not known; see ResponseCounter). */
    private readonly answered: () => number | null = () => null,
    /** Whether a long-poll is to be held by the guard now (HttpGuard.pollsShort). */
    private readonly holdPoll: () => boolean = () => true,
  ) {}

  /** Between requests: nothing of a next request seen yet. */
  get idle(): boolean {
    return this.mode.kind === 'head' && this.pending.length === 0;
  }

  /** A request was refused: everything after it is dropped. */
  get refused(): boolean {
    return this.mode.kind === 'discard';
  }

  /** The bytes to pass on for this chunk (possibly rewritten heads). */
  feed(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (buf.length > 0) {
      const m = this.mode;
      switch (m.kind) {
        case 'raw':
          out.push(buf);
          return out;
        case 'discard':
          return out;
        case 'socket':
          if (m.overflow) return out;
          m.held.push(Buffer.from(buf));
          m.size += buf.length;
          if (m.size > MAX_HELD) {
            m.overflow = true;
            m.held = [];
          }
          return out;
        case 'body':
        case 'chunk-data': {
          const n = Math.min(m.left, buf.length);
          out.push(buf.subarray(0, n));
          buf = buf.subarray(n);
          m.left -= n;
          if (m.left === 0)
            this.mode = m.kind === 'body' ? { kind: 'head' } : { kind: 'chunk-size' };
          break;
        }
        case 'head': {
          const end = buf.indexOf(CRLF2);
          if (end === -1) {
            if (buf.length > MAX_HEAD) {
              out.push(this.refuse(431, 'head'));
              return out;
            }
            this.pending = Buffer.from(buf);
            return out;
          }
          if (end + 4 > MAX_HEAD) {
            out.push(this.refuse(431, 'head'));
            return out;
          }
          const head = buf.subarray(0, end + 4);
          buf = buf.subarray(end + 4);
          out.push(this.head(head));
          break;
        }
        case 'chunk-size': {
          const eol = buf.indexOf('\r\n');
          if (eol === -1) {
            if (buf.length > MAX_CHUNK_LINE) {
              this.mode = { kind: 'raw' };
              continue;
            }
            this.pending = Buffer.from(buf);
            return out;
          }
          const line = buf.subarray(0, eol).toString('latin1');
          const size = /^([0-9A-Fa-f]{1,15})(;.*)?$/.exec(line);
          out.push(buf.subarray(0, eol + 2));
          buf = buf.subarray(eol + 2);
          if (!size)
            this.mode = { kind: 'raw' }; // uWS refuses it; nothing to follow
          else {
            const n = parseInt(size[1]!, 16);
            this.mode = n === 0 ? { kind: 'trailers' } : { kind: 'chunk-data', left: n + 2 };
          }
          break;
        }
        case 'trailers': {
          // The last chunk is followed by trailer lines and an empty line.
          if (buf.length >= 2 && buf[0] === 13 && buf[1] === 10) {
            out.push(buf.subarray(0, 2));
            buf = buf.subarray(2);
            this.mode = { kind: 'head' };
            break;
          }
          const end = buf.indexOf(CRLF2);
          if (end === -1) {
            if (buf.length > MAX_HEAD) {
              this.mode = { kind: 'raw' };
              continue;
            }
            this.pending = Buffer.from(buf);
            return out;
          }
          out.push(buf.subarray(0, end + 4));
          buf = buf.subarray(end + 4);
          this.mode = { kind: 'head' };
          break;
        }
      }
    }
    return out;
  }

  /** One complete head (through its empty line): passed on, cleaned, or replaced. */
  private head(head: Buffer): Buffer {
    const text = head.toString('latin1');
    const lines = text.slice(0, -4).split('\r\n');
    const requestLine = lines[0]!;
    const method = REQUEST_LINE.exec(requestLine)?.[1];
    if (method === undefined || !TOKEN.test(method)) {
      // Not an HTTP/1.x request line (HTTP/0.9, the HTTP/2 preface, garbage): uWS closes it.
      this.mode = { kind: 'raw' };
      return head;
    }
    let dropped = false;
    const kept: string[] = [requestLine];
    const contentLength: string[] = [];
    const transferEncoding: string[] = [];
    let upgrade = false;
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      if (!TOKEN.test(name)) return this.refuse(400, 'header'); // no colon, spaces, folding
      if (!UWS_NAME.test(name)) {
        dropped = true;
        continue;
      }
      kept.push(line);
      const lower = name.toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (lower === 'content-length') contentLength.push(value);
      else if (lower === 'transfer-encoding') transferEncoding.push(value);
      else if (lower === 'upgrade') upgrade = true;
      headers[lower] = lower in headers ? `${headers[lower]}, ${value}` : value;
    }
    if (!KNOWN_METHODS.has(method)) return this.refuse(501, method);
    // This uWS build never answers an HTTP/1.0 request (it waits, then times out): it is passed
    // on as HTTP/1.1 (the answer's version, as RFC 9112 §2.3 has it), closed after its answer
    // unless it asked to be kept alive, HTTP/1.0's default being to close.
    if (requestLine.endsWith(' HTTP/1.0')) {
      kept[0] = `${requestLine.slice(0, -3)}1.1`;
      if (!/(^|,)\s*keep-alive\s*(,|$)/i.test(headers.connection ?? '')) {
        for (let i = kept.length - 1; i > 0; i--)
          if (headerName(kept[i]!) === 'connection') kept.splice(i, 1);
        kept.push('Connection: close');
        headers.connection = 'close';
      }
      dropped = true; // (rebuilt)
    }
    // Only as the connection's first request (as WebSocket clients send it): after others, uWS's
    // answers to them would come first, and the guard does not count answers; such an upgrade is
    // relayed as it was before the guard held sockets.
    const first = ++this.heads === 1;
    if (method === 'HEAD') this.headSent = true;
    const target = requestLine.slice(requestLine.indexOf(' ') + 1, requestLine.lastIndexOf(' '));
    const q = target.indexOf('?');
    const bodiless = transferEncoding.length === 0 && contentLength.every((v) => /^0+$/.test(v));
    // A long-poll, once every request before it on this connection is answered (its answer is then
    // the next bytes from uWS; after each poll the guard starts afresh: ./guard-polls.ts).
    // HTTP/1.0, `Connection: close` or `Expect` are relayed as before.
    if (
      (first || (!this.headSent && this.answered() === this.heads - 1)) &&
      !upgrade &&
      method === 'GET' &&
      this.routes.poll !== undefined &&
      (q === -1 ? target : target.slice(0, q)) === this.routes.poll &&
      bodiless &&
      requestLine.endsWith(' HTTP/1.1') &&
      !CONNECTION_CLOSE.test(headers.connection ?? '') &&
      headers.expect === undefined &&
      this.holdPoll()
    ) {
      this.pollAsked = true;
      this.mode = { kind: 'socket', held: [], size: 0, overflow: false };
      return Buffer.from(
        [
          `GET ${this.routes.prefix}/poll${q === -1 ? '' : target.slice(q)} HTTP/1.1`,
          ...kept.slice(1),
        ]
          .join('\r\n')
          .concat('\r\n\r\n'),
        'latin1',
      );
    }
    if (first && upgrade && method === 'GET' && this.routes.socket !== undefined) {
      if (
        (q === -1 ? target : target.slice(0, q)) === this.routes.socket &&
        bodiless &&
        handshakeTaken(headers)
      ) {
        // Asked about as a plain request; the answer decides (see HttpGuard.relay).
        this.socketRequest = { url: target, headers };
        this.mode = { kind: 'socket', held: [], size: 0, overflow: false };
        const shown = kept.slice(1).filter((l) => !HANDSHAKE_ONLY.has(headerName(l)));
        return Buffer.from(
          [`GET ${this.routes.prefix}/socket${q === -1 ? '' : target.slice(q)} HTTP/1.1`, ...shown]
            .join('\r\n')
            .concat('\r\n\r\n'),
          'latin1',
        );
      }
    }
    this.mode = framing(contentLength, transferEncoding, upgrade);
    return dropped ? Buffer.from(kept.join('\r\n') + '\r\n\r\n', 'latin1') : head;
  }

  /** An upgrade or a long-poll is being asked about: uWS's next answer is the guard's to read. */
  get asking(): boolean {
    return this.socketRequest !== null || this.pollAsked;
  }

  /**
   * The asked-about upgrade was accepted, or the asked-about poll is held or answered: what the
   * client sent after it (the socket's first bytes, the connection's next request). The scanner
   * is done with this connection.
   */
  takeSocket(): Buffer | null {
    const m = this.mode;
    this.mode = { kind: 'discard' };
    if (m.kind !== 'socket' || m.overflow) return null; // more than a client sends: not one
    return Buffer.concat(m.held);
  }

  /** The asked-about upgrade was refused (answered as it is): back to reading requests. */
  socketRefused(): Buffer[] {
    const m = this.mode;
    this.socketRequest = null;
    this.pollAsked = false;
    if (m.kind === 'socket' && m.overflow) {
      this.mode = { kind: 'discard' }; // where the next request starts is lost
      return [];
    }
    this.mode = { kind: 'head' };
    return m.kind === 'socket' && m.size > 0 ? this.feed(Buffer.concat(m.held)) : [];
  }

  /** Replaces the request by one for the guard's route; nothing more is read. */
  private refuse(status: 400 | 431 | 501, what: string): Buffer {
    this.mode = { kind: 'discard' };
    return Buffer.from(
      `GET ${this.routes.prefix}/${status}/${encodeURIComponent(what)} HTTP/1.1\r\n` +
        'Host: guard\r\nConnection: close\r\n\r\n',
      'latin1',
    );
  }
}

/**
 * Counts uWS's complete answers on one connection (server to client), so that the guard knows
 * when every request it passed on has been answered: a long-poll is asked about only then (its
 * answer is then the next bytes from uWS). Every answer of Confab's carries a Content-Length (no
 * endpoint streams without one); one that does not, an upgrade's, or a HEAD's (its length
 * without a body) ends the counting for the connection (`lost`), and its polls are relayed.
 */
export class ResponseCounter {
  /** Final answers complete so far. */
  done = 0;
  lost = false;
  private partial: Buffer | null = null;
  /** Body bytes still to come of the answer under way. */
  private left = 0;

  feed(chunk: Buffer): void {
    let buf = chunk;
    while (!this.lost && buf.length > 0) {
      if (this.left > 0) {
        const n = Math.min(this.left, buf.length);
        this.left -= n;
        buf = buf.subarray(n);
        if (this.left === 0) this.done++;
        continue;
      }
      const joined = this.partial === null ? buf : Buffer.concat([this.partial, buf]);
      this.partial = null;
      const end = joined.indexOf(CRLF2);
      if (end === -1) {
        if (joined.length > MAX_HEAD) this.lost = true;
        else this.partial = Buffer.from(joined);
        return;
      }
      const head = joined.subarray(0, end).toString('latin1');
      buf = joined.subarray(end + 4);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      if (status === undefined || status === '101') {
        this.lost = true;
        return;
      }
      if (status.startsWith('1')) continue; // 100 Continue: the answer is still to come
      const length = /\r\ncontent-length: *(\d{1,15})\r?$/im.exec(head)?.[1];
      if (length === undefined || /\r\ntransfer-encoding:/i.test(head)) {
        this.lost = true;
        return;
      }
      this.left = Number(length);
      if (this.left === 0) this.done++;
    }
  }
}

/**
 * uWS's answer to an asked-about upgrade or long-poll, once complete: an accepted upgrade names its
 * socket (`X-Guard-Socket`, `X-Guard-Protocol`), a held poll its poll (`X-Guard-Poll`); anything
 * else is passed to the client. `whole`: the answer's end is known (Content-Length) and it leaves
 * the connection open. Null: incomplete.
 */
export function socketVerdict(
  answer: Buffer,
): { socket: number | null; protocol: string; poll: number | null; whole: boolean } | null {
  const end = answer.indexOf(CRLF2);
  if (end === -1) {
    return answer.length > MAX_HEAD
      ? { socket: null, protocol: '', poll: null, whole: false }
      : null;
  }
  const lines = answer.subarray(0, end).toString('latin1').split('\r\n');
  let length: number | null = null;
  let socket: number | null = null;
  let poll: number | null = null;
  let protocol = '';
  let close = false;
  for (const line of lines.slice(1)) {
    const name = headerName(line);
    const value = line.slice(line.indexOf(':') + 1).trim();
    if (name === 'content-length') length = /^\d{1,15}$/.test(value) ? Number(value) : null;
    else if (name === 'x-guard-socket') socket = /^\d{1,9}$/.test(value) ? Number(value) : null;
    else if (name === 'x-guard-poll') poll = /^\d{1,9}$/.test(value) ? Number(value) : null;
    else if (name === 'x-guard-protocol') protocol = value;
    else if (name === 'connection') close = /close/i.test(value);
  }
  // Without a length the answer's end is unknown: it is passed on as it comes.
  if (length === null) return { socket: null, protocol: '', poll: null, whole: false };
  if (answer.length < end + 4 + length) return null;
  const ok = /^HTTP\/1\.1 200 /.test(lines[0]!);
  return {
    socket: ok ? socket : null,
    protocol,
    poll: ok && length === 0 ? poll : null,
    whole: !close && answer.length === end + 4 + length,
  };
}

/**
 * A long-poll the guard can have served without a connection to uWS (./guard-polls.ts `ask`):
 * the first request in `bytes`, when it is a complete, plain `GET <poll>` over HTTP/1.1 (no body,
 * no upgrade, no `Connection: close` or `Expect`, every header one uWS parses). Its fields, as
 * uWS would have shown them (the first of a repeated header), and the bytes after it; null for
 * anything else, which is relayed as ever.
 */
export function plainPoll(
  bytes: Buffer,
  pollPath: string,
  peer: string,
): { fields: PollFields; rest: Buffer } | null {
  const end = bytes.indexOf(CRLF2);
  if (end === -1 || end + 4 > MAX_HEAD) return null;
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const requestLine = lines[0]!;
  if (!requestLine.startsWith('GET ') || !requestLine.endsWith(' HTTP/1.1')) return null;
  const target = requestLine.slice(4, -9);
  const q = target.indexOf('?');
  if ((q === -1 ? target : target.slice(0, q)) !== pollPath) return null;
  const fields: PollFields = {
    target,
    authorization: '',
    host: '',
    acceptEncoding: '',
    userAgent: '',
    forwardedFor: '',
    peer,
  };
  const seen = new Set<string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!UWS_NAME.test(name)) return null; // dropped or refused by the relay's scanner
    const lower = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (lower === 'content-length') {
      if (!/^0+$/.test(value)) return null;
    } else if (
      lower === 'transfer-encoding' ||
      lower === 'upgrade' ||
      lower === 'expect' ||
      (lower === 'connection' && CONNECTION_CLOSE.test(value))
    ) {
      return null;
    }
    if (seen.has(lower)) continue;
    seen.add(lower);
    if (lower === 'authorization') fields.authorization = value;
    else if (lower === 'host') fields.host = value;
    else if (lower === 'accept-encoding') fields.acceptEncoding = value;
    else if (lower === 'user-agent') fields.userAgent = value;
    else if (lower === 'x-forwarded-for') fields.forwardedFor = value;
  }
  return { fields, rest: bytes.subarray(end + 4) };
}

const TOKEN_LIST = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(\s*,\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*$/;

/**
 * Whether the guard can answer this handshake itself (ws takes exactly these): version 13, a
 * well-formed key, a subprotocol offer that is a list of distinct tokens. Any other is relayed to
 * uWS, which treats it as it always did, rather than being refused after the server accepted it.
 */
function handshakeTaken(headers: Record<string, string>): boolean {
  if (headers['sec-websocket-version'] !== '13') return false;
  if (!/^[+/0-9A-Za-z]{22}==$/.test(headers['sec-websocket-key'] ?? '')) return false;
  if (!/^websocket$/i.test(headers.upgrade ?? '')) return false;
  const offer = headers['sec-websocket-protocol'];
  if (offer === undefined) return true;
  if (!TOKEN_LIST.test(offer)) return false;
  const tokens = offer.split(',').map((p) => p.trim());
  return new Set(tokens).size === tokens.length;
}

function headerName(line: string): string {
  return line.slice(0, line.indexOf(':')).toLowerCase();
}

/** How the body after a head is framed (RFC 9112 §6.3); 'raw' when uWS will refuse it anyway. */
function framing(contentLength: string[], transferEncoding: string[], upgrade: boolean): Mode {
  if (upgrade) return { kind: 'raw' };
  if (transferEncoding.length > 0) {
    if (transferEncoding.length > 1 || contentLength.length > 0) return { kind: 'raw' };
    return /(^|,)\s*chunked$/i.test(transferEncoding[0]!)
      ? { kind: 'chunk-size' }
      : { kind: 'raw' };
  }
  if (contentLength.length === 0) return { kind: 'head' };
  if (contentLength.length > 1 || !/^\d{1,15}$/.test(contentLength[0]!)) return { kind: 'raw' };
  const n = Number(contentLength[0]);
  return n === 0 ? { kind: 'head' } : { kind: 'body', left: n };
}

const PROXY_V2_SIGNATURE = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);

/** A PROXY protocol v2 header naming the client of `socket` (LOCAL when it cannot be told). */
export function proxyHeader(socket: net.Socket): Buffer {
  const src = plainAddress(socket.remoteAddress ?? '');
  const dst = plainAddress(socket.localAddress ?? '');
  const sport = socket.remotePort ?? 0;
  const dport = socket.localPort ?? 0;
  if (net.isIPv4(src) && net.isIPv4(dst)) {
    const h = Buffer.alloc(16 + 12);
    PROXY_V2_SIGNATURE.copy(h);
    h[12] = 0x21; // version 2, PROXY
    h[13] = 0x11; // TCP over IPv4
    h.writeUInt16BE(12, 14);
    Buffer.from(src.split('.').map(Number)).copy(h, 16);
    Buffer.from(dst.split('.').map(Number)).copy(h, 20);
    h.writeUInt16BE(sport, 24);
    h.writeUInt16BE(dport, 26);
    return h;
  }
  if (net.isIPv6(src) && net.isIPv6(dst)) {
    const h = Buffer.alloc(16 + 36);
    PROXY_V2_SIGNATURE.copy(h);
    h[12] = 0x21;
    h[13] = 0x21; // TCP over IPv6
    h.writeUInt16BE(36, 14);
    ipv6Bytes(src).copy(h, 16);
    ipv6Bytes(dst).copy(h, 32);
    h.writeUInt16BE(sport, 48);
    h.writeUInt16BE(dport, 50);
    return h;
  }
  const h = Buffer.alloc(16);
  PROXY_V2_SIGNATURE.copy(h);
  h[12] = 0x20; // version 2, LOCAL
  return h;
}

/** An address as PROXY v2 carries it: IPv4-mapped IPv6 as IPv4, without an IPv6 zone. */
function plainAddress(addr: string): string {
  const bare = addr.replace(/%.*$/, '');
  return bare.startsWith('::ffff:') && net.isIPv4(bare.slice(7)) ? bare.slice(7) : bare;
}

/** The 16 bytes of an IPv6 address (with `::` and an embedded IPv4 tail). */
export function ipv6Bytes(addr: string): Buffer {
  const out = Buffer.alloc(16);
  let text = addr;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    Buffer.from(v4[1]!.split('.').map(Number)).copy(out, 12);
    text = text.slice(0, -v4[1]!.length) + '0:0';
  }
  const [left, right] = text.includes('::') ? text.split('::') : [text, null];
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const groups =
    right === null ? l : [...l, ...Array<string>(8 - l.length - r.length).fill('0'), ...r];
  groups.forEach((g, i) => {
    if (i < 8 && !(v4 && i >= 6)) out.writeUInt16BE(parseInt(g, 16) || 0, i * 2);
  });
  return out;
}

const SOCKET_DIR_PREFIX = 'confab-http-';
const SOCKET_FILE = 'uws.sock';

/** A private directory for uWS's Unix socket (short path: sun_path holds 108 bytes). */
export function privateSocketPath(): { dir: string; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), SOCKET_DIR_PREFIX));
  fs.chmodSync(dir, 0o700);
  return { dir, file: path.join(dir, SOCKET_FILE) };
}

/**
 * Removes the private socket directories that servers of this user left behind when they were
 * killed (SIGKILL, a crash: a clean stop removes its own), each an empty directory around a dead
 * socket. A directory goes only when it is older than `minAgeMs` (a server starting now may not
 * listen yet) and its socket refuses a connection or is missing; one that accepts, or does not
 * answer within a second, is kept. Returns how many were removed.
 */
export async function removeStaleSocketDirs(tmp = os.tmpdir(), minAgeMs = 60_000): Promise<number> {
  const uid = process.getuid?.();
  const now = Date.now();
  let names: string[];
  try {
    names = (await fs.promises.readdir(tmp)).filter((n) => n.startsWith(SOCKET_DIR_PREFIX));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const dir = path.join(tmp, name);
    try {
      const st = await fs.promises.lstat(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      if (now - st.mtimeMs < minAgeMs) continue;
      if (!(await socketRefuses(path.join(dir, SOCKET_FILE)))) continue;
      await fs.promises.rm(dir, { recursive: true, force: true });
      removed++;
    } catch {
      // gone meanwhile, or not ours to remove: left as it is
    }
  }
  return removed;
}

/** Whether nothing listens on the Unix socket `file` (refused, or no such file). */
function socketRefuses(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ path: file });
    const timer = setTimeout(() => done(false), 1000);
    const done = (refused: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(refused);
    };
    sock.once('connect', () => done(false));
    sock.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' || err.code === 'ENOENT'),
    );
  });
}

/**
 * The guard's private routes; `held`: the paths of the event sockets and long-polls it holds
 * itself.
 */
export function guardRoutes(held?: { socket: string; poll: string }): GuardRoutes {
  const prefix = `/.guard-${crypto.randomBytes(12).toString('hex')}`;
  return held === undefined ? { prefix } : { prefix, ...held };
}

type WriteCallback = (error?: Error | null) => void;

/** Every read from uWS lands here (one thread, read callbacks run one at a time). */
const UPSTREAM_READ_BUFFER = Buffer.allocUnsafe(64 * 1024);
/** Where those reads are copied on their way to clients. */
const WRITE_SLABS = new WriteSlabs(UPSTREAM_READ_BUFFER.length);

/**
 * The connection to uWS. A failed write does not destroy it, as it would a plain socket: uWS
 * closes its side at once after refusing a request from its head (413 for an upload declared too
 * large) while the body is still being relayed, and its answer is then still to be read from this
 * socket. The failure is reported to `onWriteError` and the write counted as done.
 */
class Upstream extends net.Socket {
  onWriteError: () => void = () => {};

  override _write(chunk: unknown, encoding: BufferEncoding, cb: WriteCallback): void {
    super._write(chunk, encoding, this.written(cb));
  }

  override _writev(
    chunks: { chunk: unknown; encoding: BufferEncoding }[],
    cb: WriteCallback,
  ): void {
    // net.Socket has its own _writev (typed optional on Duplex).
    super._writev?.(chunks, this.written(cb));
  }

  private written(cb: WriteCallback): WriteCallback {
    return (error) => {
      if (error) this.onWriteError();
      cb();
    };
  }
}

/** The relay: accepts on the public address, forwards to uWS's Unix socket. */
export class HttpGuard {
  private readonly server: net.Server;
  /** Open relays: client socket → its connection to uWS. */
  private readonly relays = new Map<net.Socket, net.Socket>();
  /** Connections whose connection to uWS is being made. */
  private connecting = 0;
  /** Refused connections still lingering (their answer sent, their bytes read and dropped). */
  private refusedLingering = 0;
  /** Connections refused since the last `takeRefused()`. */
  private refused = 0;

  constructor(
    private readonly upstream: string,
    private readonly routes: GuardRoutes,
    /** Connections relayed at once; one beyond is answered 503 (BUSY_ANSWER) and closed. */
    readonly maxRelays: number = Number.MAX_SAFE_INTEGER,
    /** The event WebSockets, when the guard holds them (routes.socket is their path). */
    private readonly sockets: GuardSockets | null = null,
    /** Descriptors its connections may hold (descriptorBudget); past it, 503 as well. */
    readonly maxDescriptors: number = Number.MAX_SAFE_INTEGER,
    /** The long-polls, when the guard holds them (routes.poll is their path). */
    private readonly polls: GuardPolls | null = null,
    /** Whether it holds every poll it can, or only once its descriptors run short. */
    private readonly holdPolls: 'auto' | 'always' = 'auto',
  ) {
    // Half-open: a client that ends its side after the request still gets the answer.
    this.server = net.createServer({ noDelay: true, allowHalfOpen: true }, (c) => this.relay(c));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  /**
   * Stops accepting; open connections go on until either side closes them. Resolves once every
   * byte already received has reached uWS and uWS has had a turn to read it (at most a second),
   * so that a request that arrived before the shutdown is in uWS's hands — counted in flight —
   * when the shutdown looks at what is in flight.
   */
  async close(): Promise<void> {
    this.server.close();
    const pending = [...this.relays.values()].filter(
      (u) => !u.destroyed && (u.connecting || u.writableLength > 0),
    );
    await Promise.race([
      Promise.all(
        pending.map(
          (u) =>
            new Promise<void>((resolve) => {
              const check = () => {
                if (u.destroyed || (!u.connecting && u.writableLength === 0)) resolve();
                else setImmediate(check);
              };
              check();
            }),
        ),
      ),
      new Promise<void>((resolve) => setTimeout(resolve, 1000).unref()),
    ]);
    // Two turns of the loop: uWS accepts and reads in a poll phase between them.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /**
   * Ends every connection once uWS has sent what it will: each upstream side is ended (uWS closes,
   * the answer already on its way still reaches the client), and whatever is left a second later is
   * destroyed.
   */
  endAll(): void {
    this.sockets?.endAll();
    this.polls?.endAll();
    for (const [client, upstream] of this.relays) {
      upstream.end();
      setTimeout(() => {
        client.destroy();
        upstream.destroy();
      }, 1000).unref();
    }
  }

  /**
   * Whether a poll is to be held here rather than relayed: always, or (`auto`) once the guard's
   * connections hold three quarters of the descriptors or connections it may. Holding a poll
   * saves two descriptors but costs a new connection to uWS for the client's next request (more
   * CPU in the capacity bench at 5,000 users: docs/benchmarks.md), so by default it is what the
   * guard does when it would otherwise run out.
   */
  private pollsShort(): boolean {
    if (this.holdPolls === 'always') return true;
    const relays = this.relays.size + this.connecting;
    const held = (this.sockets?.size ?? 0) + (this.polls?.size ?? 0);
    return (
      (relays * FDS_PER_RELAY + held) * 4 > this.maxDescriptors * 3 ||
      (relays + held) * 4 > this.maxRelays * 3
    );
  }

  /** How many connections were refused (503) since the last call. */
  takeRefused(): number {
    const n = this.refused;
    this.refused = 0;
    return n;
  }

  /**
   * Answers 503 on a connection the server cannot hold and ends it; what the client still sends
   * is read and dropped for a while (a lingering close, so that it reads the answer), unless too
   * many refused connections linger already.
   */
  private refuse(client: net.Socket): void {
    this.refused++;
    client.on('error', () => client.destroy());
    if (this.refusedLingering >= MAX_REFUSED_LINGERING) {
      client.end(BUSY_ANSWER, () => client.destroy());
      return;
    }
    this.refusedLingering++;
    const timer = setTimeout(() => client.destroy(), LINGER_MS);
    client.on('close', () => {
      clearTimeout(timer);
      this.refusedLingering--;
    });
    client.end(BUSY_ANSWER);
    client.resume();
  }

  /**
   * Relays a connection to uWS: a new one, or (`first`: its next request's first bytes) one whose
   * long-poll the guard held (./guard-polls.ts).
   */
  relay(client: net.Socket, first: Buffer | null = null): void {
    // A poll after a poll the guard held (what a long-polling client sends next): served through
    // the main thread's batches, with no connection to uWS at all (./guard-polls.ts `ask`).
    if (first !== null && this.polls !== null && this.routes.poll !== undefined) {
      const poll = plainPoll(first, this.routes.poll, plainAddress(client.remoteAddress ?? ''));
      if (poll !== null) {
        this.polls.ask(client, poll.fields, poll.rest);
        return;
      }
    }
    const held = (this.sockets?.size ?? 0) + (this.polls?.size ?? 0);
    if (!roomForOneMore(this.relays.size + this.connecting, held, this)) {
      this.refuse(client);
      return;
    }
    // The connection to uWS first, the client's bytes waiting meanwhile. A burst of connections
    // (every long-polling client polling again after one event: a new connection each) can fill
    // the Unix socket's accept queue while the main thread is busy; a connect refused so
    // (EAGAIN) is tried again shortly.
    client.pause();
    client.on('error', () => client.destroy());
    const reading = { forward: (_n: number, _buf: Uint8Array): boolean => true };
    // (Node reads `onread` from the constructor's options; its types list it only for connect's.)
    const options: net.SocketConstructorOpts & { onread: net.OnReadOpts } = {
      allowHalfOpen: true,
      onread: { buffer: UPSTREAM_READ_BUFFER, callback: (n, buf) => reading.forward(n, buf) },
    };
    const since = Date.now();
    let attempts = 0;
    this.connecting++;
    const attempt = () => {
      const server = new Upstream(options).connect({ path: this.upstream });
      const failed = (err: NodeJS.ErrnoException) => {
        server.off('connect', connected);
        server.destroy();
        if (client.destroyed) {
          this.connecting--;
          return;
        }
        if (err.code === 'EAGAIN' && Date.now() - since < CONNECT_PATIENCE_MS) {
          setTimeout(attempt, Math.min(50, 2 ** attempts++));
          return;
        }
        // uWS could not be reached for this connection (out of descriptors, say): the client
        // hears 503 rather than a connection closed without an answer.
        this.connecting--;
        client.removeAllListeners('error');
        this.refuse(client);
      };
      const connected = () => {
        server.off('error', failed);
        this.connecting--;
        if (client.destroyed) {
          server.destroy();
          return;
        }
        this.relayOn(client, server, reading, first);
      };
      server.once('error', failed);
      server.once('connect', connected);
    };
    attempt();
  }

  /** Relays `client` on `server`, connected to uWS (`reading`: where its reads go). */
  private relayOn(
    client: net.Socket,
    server: Upstream,
    reading: { forward: (n: number, buf: Uint8Array) => boolean },
    first: Buffer | null,
  ): void {
    // uWS's answer passes on as it is, with backpressure from the client. It is read into the
    // thread's one read buffer (no stream machinery per read: the relay's largest cost when one
    // event goes out to thousands of WebSockets) and copied out before the next read, into the
    // thread's recycled slabs (./write-slabs.ts), or, for a client with bytes still queued, into
    // a copy of its own (so that a slow client pins at most one slab).
    reading.forward = (n: number, buf: Uint8Array): boolean => {
      if (asking) return answered(Buffer.from(buf.subarray(0, n)));
      const { bytes, slab } =
        client.writableLength > 0
          ? { bytes: Buffer.from(buf.subarray(0, n)), slab: null }
          : WRITE_SLABS.copy(buf.subarray(0, n));
      if (counter !== null && !counter.lost) counter.feed(bytes);
      const ok =
        slab === null ? client.write(bytes) : client.write(bytes, () => WRITE_SLABS.release(slab));
      if (ok) return true;
      client.once('drain', () => server.resume());
      return false; // pauses reading from uWS
    };
    this.relays.set(client, server);
    // The PROXY header goes out with the first request bytes, in one write: this uWS build never
    // signals the end of an empty body (a POST with Content-Length: 0) when the PROXY header
    // reached it in a read of its own, so such a request would wait for its idle timeout.
    let preface: Buffer | null = proxyHeader(client);
    // uWS's answers are counted where polls may be asked about after other requests.
    const counter = this.polls === null ? null : new ResponseCounter();
    const scanner = new RequestScanner(
      this.routes,
      () => (counter === null || counter.lost ? null : counter.done),
      () => this.pollsShort(),
    );
    /** An event-socket upgrade or a poll was asked about: uWS's answer is read here first. */
    let asking = false;
    let answer: Buffer = Buffer.alloc(0);
    /** The connection to uWS is done with: the client is the guard's own from here. */
    const detach = () => {
      this.relays.delete(client);
      client.pause();
      for (const e of ['data', 'end', 'error', 'close'] as const) client.removeAllListeners(e);
      for (const e of ['end', 'error', 'close'] as const) server.removeAllListeners(e);
      server.on('error', () => {});
      server.destroy();
    };
    /** The answer so far; returns whether to go on reading from uWS. */
    const answered = (bytes: Buffer): boolean => {
      answer = answer.length === 0 ? bytes : Buffer.concat([answer, bytes]);
      const verdict = socketVerdict(answer);
      if (verdict === null) return true; // not all of it yet
      asking = false;
      if (scanner.pollAsked && this.polls !== null && (verdict.poll !== null || verdict.whole)) {
        // A held poll (its answer will come from the main thread), or one answered at once:
        // either way the client's next request starts on a fresh connection to uWS.
        const rest = scanner.takeSocket();
        detach();
        if (verdict.poll === null && !client.destroyed) client.write(answer);
        if (rest === null) {
          client.destroy(); // it sent far more than a client waiting for an answer does
          if (verdict.poll !== null) this.polls.abandon(verdict.poll);
        } else if (verdict.poll !== null) this.polls.hold(verdict.poll, client, rest);
        else this.polls.park(client, rest);
        return false;
      }
      if (verdict.socket !== null && this.sockets !== null && scanner.socketRequest !== null) {
        // Accepted: the guard ends the WebSocket itself; the connection to uWS is done with.
        const request = scanner.socketRequest;
        const rest = scanner.takeSocket();
        detach();
        if (rest === null) {
          client.destroy(); // it sent far more than a client waiting for an answer does
          this.sockets.abandon(verdict.socket);
          return false;
        }
        try {
          this.sockets.accept(verdict.socket, verdict.protocol, client, request, rest);
        } catch {
          client.destroy(); // (its CLOSED is reported by accept's close listener, or never opened)
          this.sockets.abandon(verdict.socket);
        }
        return false;
      }
      // Refused (or not an answer the guard understands): the client gets it as it is.
      if (counter !== null) {
        if (verdict.whole) counter.done++;
        else counter.lost = true;
      }
      const ok = client.write(answer);
      answer = Buffer.alloc(0);
      for (const part of scanner.socketRefused()) server.write(part);
      if (ok) return true;
      client.once('drain', () => server.resume());
      return false;
    };
    /** uWS takes no more bytes (it closed, or a write to it failed): the client's are dropped. */
    let dropping = false;
    /** uWS's side is over: its answer forwarded, the client's side ended (FIN). */
    let ended = false;
    /** Bytes dropped: bounded, beyond it the connection is destroyed. */
    let dropped = 0;
    let lingerTimer: NodeJS.Timeout | null = null;
    const destroy = () => {
      client.destroy();
      server.destroy();
    };
    const linger = () => {
      if (!client.destroyed) lingerTimer ??= setTimeout(destroy, LINGER_MS);
    };
    const drop = () => {
      if (dropping) return;
      dropping = true;
      client.resume(); // it may wait for a 'drain' of uWS's side
      linger(); // uWS has closed: its end is on its way, bound the wait in any case
    };
    server.onWriteError = drop;

    const onData = (chunk: Buffer) => {
      if (dropping || scanner.refused) {
        dropped += chunk.length;
        if (dropped > LINGER_BYTES) destroy();
        return;
      }
      let ok = true;
      const parts = scanner.feed(chunk);
      if (scanner.asking && !asking && answer.length === 0) asking = true;
      if (preface !== null && parts.length > 0) {
        parts[0] = Buffer.concat([preface, parts[0]!]);
        preface = null;
      }
      for (const part of parts) {
        ok = server.write(part) && ok;
        if (dropping) return;
      }
      if (!ok) {
        client.pause();
        server.once('drain', () => client.resume());
      }
    };
    client.on('data', onData);
    // A client that ends its side after the request still gets the answer. (Once both sides
    // of the client's socket have ended, it is destroyed by itself.)
    client.on('end', () => {
      if (!dropping) server.end();
    });

    // uWS ended, closed or reset its side (it resets when it closes with request bytes unread):
    // whatever it sent before is forwarded, then the client's side ends (FIN after the answer).
    // A client between requests is done with; one still sending is lingered on, reading and
    // dropping its bytes, so that it reads the answer instead of a reset.
    const upstreamOver = () => {
      if (ended || client.destroyed) return;
      ended = true;
      dropping = true;
      if (asking) {
        asking = false;
        client.write(answer); // what uWS said before it ended, if anything
      }
      client.resume();
      if (client.readableEnded || (scanner.idle && dropped === 0)) {
        client.end(() => client.destroy());
        return;
      }
      client.end();
      linger();
    };
    server.on('end', upstreamOver);
    server.on('error', upstreamOver);
    server.on('close', upstreamOver);
    /**
     * The client is gone. While a poll is asked about, uWS's verdict is still read: a poll the
     * main thread holds is then reported gone (GuardPolls.hold), else it would wait for its answer.
     */
    const clientGone = () => {
      client.destroy();
      if (lingerTimer !== null) clearTimeout(lingerTimer);
      this.relays.delete(client);
      if (asking && scanner.pollAsked && this.polls !== null) {
        setTimeout(() => server.destroy(), LINGER_MS).unref(); // (uWS answers at once)
        return;
      }
      server.destroy();
    };
    client.on('error', clientGone);
    client.on('close', clientGone);
    client.resume(); // (paused while uWS was connected to; new bytes come after `first`)
    if (first !== null) onData(first);
  }
}
