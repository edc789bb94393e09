/**
 * The answer to a long-poll the HTTP guard holds (./guard-polls.ts), written as uWS would have
 * written it but into bytes: the router writes a held answer through the same `send` as any other
 * (status, headers, rate-limit headers, a large body in slices), and this collects it and hands the
 * whole HTTP response over, for the guard to write to the client.
 */
import type { HttpRequest, HttpResponse } from './uws.js';

/**
 * A whole HTTP answer in the API's error format that ends its connection (`extra`: more header
 * lines, each ending in CRLF): the guard's refusals and a poll it could not have served.
 */
export function closingError(status: string, msg: string, extra = ''): Buffer {
  const body = JSON.stringify({ result: 'error', msg, code: 'BAD_REQUEST' });
  return Buffer.from(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\n${extra}Connection: close\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/**
 * A long-poll's request as the guard read it (src/http/guard.ts `plainPoll`), for the main thread
 * to serve without uWS (GuardSocketHost): the target (path and query) and the headers it reads.
 */
export type PollFields = {
  target: string;
  authorization: string;
  host: string;
  acceptEncoding: string;
  userAgent: string;
  forwardedFor: string;
  /** The client's address, as the PROXY header would have carried it. */
  peer: string;
};

/** A poll's fields as the router reads a request from uWS (the methods it calls, nothing else). */
export class PollRequest {
  private readonly path: string;
  private readonly query: string | undefined;

  constructor(private readonly fields: PollFields) {
    const q = fields.target.indexOf('?');
    this.path = q === -1 ? fields.target : fields.target.slice(0, q);
    this.query = q === -1 ? undefined : fields.target.slice(q + 1);
  }

  asRequest(): HttpRequest {
    return this as unknown as HttpRequest;
  }

  getCaseSensitiveMethod(): string {
    return 'GET';
  }

  getUrl(): string {
    return this.path;
  }

  getQuery(): string | undefined {
    return this.query;
  }

  getParameter(): string {
    return '';
  }

  getHeader(name: string): string {
    switch (name) {
      case 'authorization':
        return this.fields.authorization;
      case 'host':
        return this.fields.host;
      case 'accept-encoding':
        return this.fields.acceptEncoding;
      case 'user-agent':
        return this.fields.userAgent;
      case 'x-forwarded-for':
        return this.fields.forwardedFor;
      default:
        return ''; // (a GET poll: no body headers)
    }
  }
}

type Body = string | Buffer | ArrayBuffer | Uint8Array;

function bytesOf(body: Body | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(body instanceof ArrayBuffer ? new Uint8Array(body) : body);
}

export class PollAnswer {
  private status = '200 OK';
  private head = '';
  private readonly parts: Buffer[] = [];
  private size = 0;
  private finished = false;
  private aborted: (() => void)[] = [];

  constructor(
    /** The whole response; `close`: the connection is to end after it. */
    private readonly done: (response: Buffer, close: boolean) => void,
    /** The client's address (a poll asked without uWS: PollFields.peer). */
    private readonly peer = '',
  ) {}

  /** The client left before the answer: as uWS calls a response's onAborted handler. */
  abort(): void {
    const fns = this.aborted;
    this.aborted = [];
    this.finished = true;
    for (const fn of fns) fn();
  }

  getRemoteAddressAsText(): ArrayBuffer {
    const bytes = Buffer.from(this.peer, 'latin1');
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  }

  getProxiedRemoteAddressAsText(): ArrayBuffer {
    return this.getRemoteAddressAsText();
  }

  /**
   * As the router's `send` takes a response: the methods it calls on uWS's, nothing else (a
   * poll's answer is JSON, never a file stream).
   */
  asResponse(): HttpResponse {
    return this as unknown as HttpResponse;
  }

  cork(fn: () => void): this {
    fn();
    return this;
  }

  writeStatus(status: string): this {
    this.status = status;
    return this;
  }

  writeHeader(name: string, value: string): this {
    // (Values come from the server's own code: no CR or LF in them.)
    this.head += `${name}: ${value}\r\n`;
    return this;
  }

  end(body?: Body, closeConnection = false): this {
    if (body !== undefined) this.add(bytesOf(body));
    this.finish(closeConnection);
    return this;
  }

  /** A slice of a large body (`total` bytes in all): taken whole, the socket is never full. */
  tryEnd(slice: Body, total: number): [boolean, boolean] {
    this.add(bytesOf(slice));
    if (this.size < total) return [true, false];
    this.finish(false);
    return [true, true];
  }

  getWriteOffset(): number {
    return this.size;
  }

  onWritable(): this {
    return this;
  }

  onAborted(fn?: () => void): this {
    if (fn !== undefined && !this.finished) this.aborted.push(fn);
    return this;
  }

  private add(bytes: Buffer): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private finish(close: boolean): void {
    if (this.finished) return;
    this.finished = true;
    this.aborted = [];
    const head =
      `HTTP/1.1 ${this.status}\r\n${this.head}` +
      (close ? 'Connection: close\r\n' : '') +
      `Content-Length: ${this.size}\r\n\r\n`;
    this.done(Buffer.concat([Buffer.from(head, 'latin1'), ...this.parts]), close);
  }
}
