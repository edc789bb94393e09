/**
 * The answer to a long-poll the HTTP guard holds (./guard-polls.ts), written as uWS would have
 * written it but into bytes: the router writes a held answer through the same `send` as any other
 * (status, headers, rate-limit headers, a large body in slices), and this collects it and hands the
 * whole HTTP response over, for the guard to write to the client.
 */
import type { HttpResponse } from './uws.js';

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

  constructor(
    /** The whole response; `close`: the connection is to end after it. */
    private readonly done: (response: Buffer, close: boolean) => void,
  ) {}

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

  onAborted(): this {
    return this;
  }

  private add(bytes: Buffer): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private finish(close: boolean): void {
    if (this.finished) return;
    this.finished = true;
    const head =
      `HTTP/1.1 ${this.status}\r\n${this.head}` +
      (close ? 'Connection: close\r\n' : '') +
      `Content-Length: ${this.size}\r\n\r\n`;
    this.done(Buffer.concat([Buffer.from(head, 'latin1'), ...this.parts]), close);
  }
}
