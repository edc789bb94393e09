/**
 * One keep-alive HTTP/1.1 client connection over a raw socket, one request at a time, for the
 * benches' client processes (node:http would cost the client more than the server spends
 * answering). Responses are framed by Content-Length; bodies are returned as strings.
 *
 * The server closes connections left idle (uWebSockets: 10 s), which a spare connection can be
 * between phases: a request on a closed connection first reconnects, and a request whose
 * connection closes before its answer resolves with status 0 (the caller counts it an error).
 * A gzipped answer (setAcceptEncoding) is gunzipped, as a real client's library does, unless the
 * caller takes less of it (BodyReader).
 */
import net from 'node:net';
import zlib from 'node:zlib';

export type HttpAnswer = { status: number; body: string; at: number };

/**
 * What a caller takes from a successful answer's body when it needs less than all of it as text:
 * `raw` is the body as it came (gzipped when `gzipped`). A bench's clients share the server's
 * machine, so they read only what they use: inflating and decoding every presence answer (a
 * 10,000-member realm's, about 670 KB inflated, every user every minute) cost them more CPU than
 * the server spent sending it.
 */
export type BodyReader = (raw: Buffer, gzipped: boolean) => string;

/** Reads nothing: the answer's status and timing are all the caller uses. */
export const skipBody: BodyReader = () => '';

/**
 * Reads one numeric field, `"name":<number>`, as its digits ('' when absent): from the plain
 * bytes without decoding them, or from as little of a gzipped body as holds it (the server's
 * answers put their own fields in the first blocks, before the large shared parts).
 */
export function numberField(name: string): BodyReader {
  const key = Buffer.from(`"${name}":`);
  const digits = (text: Buffer, at: number): string => {
    let end = at + key.length;
    while (end < text.length && (text[end] === 0x2d || (text[end]! >= 0x30 && text[end]! <= 0x39)))
      end++;
    return text.subarray(at + key.length, end).toString('latin1');
  };
  return (raw, gzipped) => {
    if (!gzipped) {
      const at = raw.lastIndexOf(key);
      return at === -1 ? '' : digits(raw, at);
    }
    // A gzip member whose header has no optional fields is 10 bytes, then raw deflate.
    if (raw.length > 10 && raw[0] === 0x1f && raw[1] === 0x8b && raw[3] === 0) {
      const prefix = zlib.inflateRawSync(raw.subarray(10, 10 + 4096), {
        finishFlush: zlib.constants.Z_SYNC_FLUSH,
      });
      const at = prefix.indexOf(key);
      if (at !== -1 && at + key.length + 24 < prefix.length) return digits(prefix, at);
    }
    const whole = zlib.gunzipSync(raw);
    const at = whole.lastIndexOf(key);
    return at === -1 ? '' : digits(whole, at);
  };
}

/**
 * The Accept-Encoding every request of this process sends ('' none). Real clients send
 * `gzip, deflate` (Python's requests, the apps), and the server then gzips the large answers it
 * builds around shared parts (src/http/gzip.ts); answers come back gunzipped.
 */
let acceptEncoding = '';

export function setAcceptEncoding(value: string): void {
  acceptEncoding = value;
}

/** Wall-clock milliseconds with microseconds, comparable across processes on one host. */
export const now = (): number => performance.timeOrigin + performance.now();

export const basicAuth = (u: { email: string; api_key: string }): string =>
  'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64');

/** A keep-alive connection idle longer than this is replaced rather than reused. */
const IDLE_REUSE_MS = 5000;

export class HttpConn {
  private sock!: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  /** Chunks received since `buf` was last assembled, and how many bytes are still wanted. */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private wanted = 0;
  private pending: ((r: HttpAnswer) => void) | null = null;
  private reader: BodyReader | null = null;
  private open: Promise<void>;
  private lastUsed = performance.now();

  constructor(
    private readonly port: number,
    private readonly onError: (err: Error) => void = () => {},
  ) {
    this.open = this.connect();
  }

  private connect(): Promise<void> {
    const sock = net.connect(this.port, '127.0.0.1');
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.parts = [];
    this.partsBytes = 0;
    this.wanted = 0;
    sock.setNoDelay(true);
    sock.on('data', (chunk: Buffer) => this.onData(chunk));
    sock.on('error', (err) => this.onError(err));
    sock.on('close', () => {
      const p = this.pending;
      this.pending = null;
      p?.({ status: 0, body: '', at: now() });
    });
    return new Promise((resolve) => sock.once('connect', () => resolve()));
  }

  connected(): Promise<void> {
    return this.open;
  }

  /**
   * Sends one whole request (head and body, already serialized) and resolves with its answer;
   * `read`: what of a successful answer's body the caller takes (all of it as text otherwise).
   */
  async request(data: string | Buffer, read: BodyReader | null = null): Promise<HttpAnswer> {
    const state = this.sock.readyState;
    if (performance.now() - this.lastUsed > IDLE_REUSE_MS && state === 'open') {
      // uWS closes a connection idle for 10 s; writing as its FIN arrives gets a reset. A client
      // busy elsewhere may not have seen the FIN yet: an idle connection is not reused.
      this.sock.removeAllListeners('close');
      this.sock.destroy();
    }
    this.lastUsed = performance.now();
    if (this.sock.destroyed || (state !== 'open' && state !== 'opening'))
      this.open = this.connect();
    await this.open;
    return new Promise((resolve) => {
      this.pending = resolve;
      this.reader = read;
      this.sock.write(data);
    });
  }

  private onData(chunk: Buffer): void {
    const at = now();
    // A large answer (a big realm's register: megabytes) arrives in many chunks: they are kept
    // apart and joined once it is whole, not copied again on every chunk.
    this.parts.push(chunk);
    this.partsBytes += chunk.length;
    if (this.partsBytes < this.wanted) return;
    this.buf =
      this.buf.length === 0 && this.parts.length === 1
        ? this.parts[0]!
        : Buffer.concat([this.buf, ...this.parts]);
    this.parts = [];
    this.partsBytes = 0;
    this.wanted = 0;
    for (;;) {
      const headerEnd = this.buf.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const head = this.buf.subarray(0, headerEnd).toString('latin1');
      const m = /\r\ncontent-length: *(\d+)/i.exec(head);
      const len = m ? Number(m[1]) : 0;
      const total = headerEnd + 4 + len;
      if (this.buf.length < total) {
        this.wanted = total - this.buf.length;
        return;
      }
      const status = Number(head.slice(9, 12));
      const raw = this.buf.subarray(headerEnd + 4, total);
      // What follows the answer is copied out: a view would keep the whole answer's memory.
      this.buf =
        this.buf.length === total ? Buffer.alloc(0) : Buffer.from(this.buf.subarray(total));
      const p = this.pending;
      const read = this.reader;
      this.pending = null;
      this.reader = null;
      this.lastUsed = performance.now();
      const gzipped = /\r\ncontent-encoding: *gzip/i.test(head);
      if (read !== null && status >= 200 && status < 300) {
        p?.({ status, body: read(raw, gzipped), at });
      } else if (gzipped) {
        // Off this thread (zlib's pool), as another machine's client would: a large presence or
        // register answer inflated here would hold up every other connection's receipt time.
        zlib.gunzip(raw, (err, plain) => {
          if (err) this.onError(err);
          p?.({ status: err ? 0 : status, body: err ? '' : plain.toString('utf8'), at });
        });
      } else p?.({ status, body: raw.toString('utf8'), at });
    }
  }

  close(): void {
    this.sock.destroy();
  }
}

/** A serialized request: `method path`, Basic credentials, and a form body when given. */
export function httpRequest(
  method: string,
  pathAndQuery: string,
  user: { email: string; api_key: string },
  form?: string,
): string {
  const head =
    `${method} ${pathAndQuery} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basicAuth(user)}\r\n` +
    'User-Agent: ConfabBench/1\r\n' +
    (acceptEncoding === '' ? '' : `Accept-Encoding: ${acceptEncoding}\r\n`);
  if (form === undefined) return head + '\r\n';
  return (
    head +
    `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(form)}` +
    `\r\n\r\n${form}`
  );
}
