/**
 * Writing responses: one corked write, status before headers, nothing after the client left.
 * Bodies are JSON (`{"result":"success","msg":"",...}` or the error shape); a handler that already
 * holds serialized JSON (event batches) returns a RawJson to skip a second stringify.
 */
import type { FileHandle } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import {
  internalErrorBody,
  JsonableError,
  SESSION_CHALLENGE,
  storageFullError,
} from '../lib/errors.js';
import type { RateStatus } from '../lib/rate-limit.js';
import { hasWritableField, sharedJsonWriter } from '../lib/json-bytes.js';
import { preserializedChunks } from '../lib/preserialized.js';
import { acceptsGzip, gzipParts, hasSharedPart } from './gzip.js';
import { NO_HEADERS, type RequestContext } from './request.js';
import type { HttpResponse } from './uws.js';
import { reportUnexpected, type Where } from './unexpected.js';

/** `404 Not Found`, by status (Node's reason phrases). */
const STATUS_LINES: Record<number, string> = Object.fromEntries(
  Object.entries(STATUS_CODES).map(([code, text]) => [code, `${code} ${text}`]),
);

export function statusLine(status: number): string {
  return STATUS_LINES[status] ?? `${status} Status`;
}

/** A pre-serialized JSON body, sent as it is. */
export class RawJson {
  constructor(
    /** The body; bytes are UTF-8 (an event batch's body shared by the consumers given it). */
    readonly json: string | Buffer,
  ) {}
}

/**
 * A response answered later, by whoever holds it (a held long-poll), and written at that moment:
 * no promise hop between the answer and the corked write. The holder calls `answer` once (before
 * or after the router bound it); the router writes the value as a handler's return value.
 */
export class HeldResponse {
  private writer: ((value: unknown) => void) | null = null;
  private early: { value: unknown } | null = null;
  private answered = false;

  answer(value: unknown): void {
    if (this.answered) return;
    this.answered = true;
    if (this.writer) this.writer(value);
    else this.early = { value };
  }

  /** The router: how to write the answer. */
  bind(writer: (value: unknown) => void): void {
    this.writer = writer;
    if (this.early) {
      const { value } = this.early;
      this.early = null;
      writer(value);
    }
  }
}

/** Any other body (files): bytes, a content type and headers. */
export class RawBody {
  constructor(
    readonly body: Buffer | string,
    readonly contentType: string,
    readonly headers: Record<string, string> = {},
    readonly status = 200,
  ) {}
}

/**
 * A file streamed from disk (uploads): read a chunk at a time and written as the client takes it
 * (uWS backpressure), never held whole in memory. The handler opens the file, so a missing file is
 * still answered as an error before any byte goes out; the router closes the handle.
 */
export class FileBody {
  constructor(
    readonly file: FileHandle,
    readonly size: number,
    readonly contentType: string,
    readonly headers: Record<string, string> = {},
  ) {}
}

/**
 * Writes a response. `body` may be a list of Buffers (a large answer assembled from shared
 * serialized parts, successBody): they go out as they are, without being joined first.
 */
export function send(
  res: HttpResponse,
  ctx: RequestContext,
  status: number,
  body: string | Buffer | readonly Buffer[],
  contentType = 'application/json',
  headers: Readonly<Record<string, string>> = NO_HEADERS,
  closeConnection = false,
): void {
  if (ctx.aborted || ctx.done) return;
  ctx.answering(status);
  // A string that may be large in bytes is measured in bytes: its length counts UTF-16 units, and
  // a slice-at-a-time answer announced with that size would never complete (non-Latin text).
  if (typeof body === 'string' && body.length * 3 > LARGE_BODY) body = Buffer.from(body);
  let parts = typeof body === 'string' || Buffer.isBuffer(body) ? null : body;
  let size = parts ? parts.reduce((a, c) => a + c.length, 0) : (body as string | Buffer).length;
  // An answer built around large shared parts goes gzipped to a client that takes it (gzip.ts).
  if (parts && contentType === 'application/json' && hasSharedPart(parts)) {
    const gzipped = acceptsGzip(ctx.acceptEncoding) ? gzipParts(parts) : null;
    headers = gzipped
      ? { ...headers, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' }
      : { ...headers, Vary: 'Accept-Encoding' };
    if (gzipped) {
      parts = gzipped;
      size = gzipped.reduce((a, c) => a + c.length, 0);
    }
  }
  const large = !closeConnection && size > LARGE_BODY;
  const whole = large ? null : parts ? Buffer.concat(parts) : (body as string | Buffer);
  // Inside the route's own callback uWS has corked the connection already (./router.ts sets
  // `corked`): written at once, without a callback for res.cork to call back into.
  if (ctx.corked) writeAnswer(res, ctx, status, contentType, headers, whole, closeConnection);
  else res.cork(() => writeAnswer(res, ctx, status, contentType, headers, whole, closeConnection));
  if (large) {
    const slices = parts ?? [body as Buffer];
    sendInSlices(res, ctx, slices, size);
  }
}

/** The status line and headers, then `body` if given (null: a large body follows in slices). */
function writeAnswer(
  res: HttpResponse,
  ctx: RequestContext,
  status: number,
  contentType: string,
  headers: Readonly<Record<string, string>>,
  body: string | Buffer | null,
  closeConnection: boolean,
): void {
  writeHead(res, ctx, status, contentType, headers);
  if (body !== null) {
    res.end(body, closeConnection);
    ctx.ended = true;
  }
}

/**
 * The status line and headers of an answer: Content-Type, `headers`, then the request's
 * X-RateLimit-* lines. Without `headers` (most answers) that is one call into uWS
 * (writeHeadBlock); `headers` (an error's Allow, Retry-After, WWW-Authenticate, a file's) go one
 * call each.
 */
export function writeHead(
  res: HttpResponse,
  ctx: RequestContext,
  status: number,
  contentType: string,
  headers: Readonly<Record<string, string>>,
): void {
  if (headers !== NO_HEADERS && hasKeys(headers)) {
    res.writeStatus(statusLine(status) + '\r\nContent-Type: ' + contentType);
    for (const k in headers) res.writeHeader(k, headers[k]!);
    if (ctx.rate !== null) writeRateLimitHeaders(res, ctx.rate, ctx.rateTakenAt);
  } else {
    writeHeadBlock(res, statusLine(status) + '\r\nContent-Type: ' + contentType, ctx);
  }
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * Writes `head` (a status line and header lines, CRLF between them, none after), with the request's
 * X-RateLimit-* lines after it, as one status line: uWS writes `HTTP/1.1 <status>\r\n` around what
 * it is given, exactly the bytes of writeStatus and a writeHeader call per header, in one call
 * into uWS instead of one per header (each such call cost ~0.15 µs here, as much as the limiter
 * itself; docs/benchmarks.md, issue 31 row 1). What goes in is the server's own: status texts,
 * content types the code names, and numbers — never a client's bytes.
 */
function writeHeadBlock(res: HttpResponse, head: string, ctx: RequestContext): void {
  const rate = ctx.rate;
  if (rate === null) {
    res.writeStatus(head);
    return;
  }
  res.writeStatus(
    head +
      '\r\nX-RateLimit-Limit: ' +
      rate.limit +
      '\r\nX-RateLimit-Remaining: ' +
      rate.remaining +
      '\r\nX-RateLimit-Reset: ' +
      rateLimitReset(rate, ctx.rateTakenAt),
  );
}

/** Bodies above this go out a slice at a time (sendInSlices). */
const LARGE_BODY = 64 * 1024;

/**
 * A large body (a big realm's register snapshot, a long message history) offered a slice at a
 * time, each when the socket can take it. Given whole to `end`, what the socket cannot take at once
 * goes into uWS's buffer for the connection, which keeps its size for the connection's life: a few
 * megabytes held per keep-alive connection that ever received a large answer.
 */
function sendInSlices(
  res: HttpResponse,
  ctx: RequestContext,
  parts: readonly Buffer[],
  total: number,
): void {
  let part = 0;
  let from = 0; // in parts[part]
  const next = (): Buffer => {
    while (from === parts[part]!.length) {
      part++;
      from = 0;
    }
    const slice = parts[part]!.subarray(from, from + LARGE_BODY);
    from += slice.length;
    return slice;
  };
  writeChunks(res, ctx, total, next, 'respond', () => {});
}

/**
 * Writes a body of `total` bytes after its head (large answers, files: ./file-stream.ts), a chunk
 * at a time, each offered with tryEnd: what the socket does not take at once waits for onWritable,
 * and `next` (the chunk after the last, or a promise of it: a file's read) is not asked for more
 * until it went out. Memory per response is one chunk; uWS writes Content-Length (tryEnd's total).
 * `done` is called once: the body went out, its client left, or a failure (reported as unexpected
 * at `where`) closed the connection, the only honest end once part of the body may be out.
 */
export function writeChunks(
  res: HttpResponse,
  ctx: RequestContext,
  total: number,
  next: () => Buffer | Promise<Buffer>,
  where: Where,
  done: () => void,
): void {
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  const fail = (err: unknown) => {
    if (finished) return;
    abandonAnswer(res, ctx, err, where);
    finish();
  };
  ctx.onAbort(finish);
  // The chunk the socket did not take whole, and the write offset it starts at.
  let pending: Buffer | null = null;
  let pendingAt = 0;
  /**
   * Offers `chunk` (null: asks `next` for one), then the chunks after it, until the body is out
   * or it waits: for a read (true) or for the socket (false: onWritable resumes).
   */
  const offer = (chunk: Buffer | null): boolean => {
    try {
      while (!finished) {
        if (chunk === null) {
          const c = next();
          if (c instanceof Promise) {
            c.then(offer, fail);
            return true;
          }
          chunk = c;
        }
        const at = res.getWriteOffset();
        let ok = false;
        let complete = false;
        res.cork(() => {
          [ok, complete] = res.tryEnd(chunk!, total);
        });
        if (complete) {
          // Written whole: as for a small answer given to `end`, no abort can concern it, and the
          // router must not attach its abort handler to it (uWS refuses any use of a response
          // that is complete: it threw, and 'internal server error' was logged after a sound
          // answer).
          ctx.ended = true;
          finish();
        } else if (!ok) {
          pending = chunk;
          pendingAt = at;
          return false;
        }
        chunk = null;
      }
    } catch (err) {
      fail(err);
    }
    return true;
  };
  res.onWritable((offset) => {
    const chunk = pending;
    pending = null;
    return chunk === null || offer(chunk.subarray(offset - pendingAt));
  });
  offer(null);
}

/**
 * After an unexpected failure while answering (reported at `where`): part of the answer, its
 * Content-Length at least, may be out, so closing the connection is the only honest end.
 */
export function abandonAnswer(
  res: HttpResponse,
  ctx: RequestContext,
  err: unknown,
  where: Where,
): void {
  reportUnexpected(err, where, { reqId: ctx.reqId, method: ctx.method });
  if (ctx.aborted) return;
  try {
    res.close();
  } catch {
    // answered, or its client gone
  }
}

/**
 * The reference's rate-limit headers (/api/http-headers): the limit, the requests left, and the
 * Unix time at which the whole budget is back.
 */
function writeRateLimitHeaders(res: HttpResponse, rate: RateStatus, takenAt: number): void {
  res.writeHeader('X-RateLimit-Limit', String(rate.limit));
  res.writeHeader('X-RateLimit-Remaining', String(rate.remaining));
  res.writeHeader('X-RateLimit-Reset', String(rateLimitReset(rate, takenAt)));
}

/** X-RateLimit-Reset's value: when the window ends, in whole seconds since the epoch. */
function rateLimitReset(rate: RateStatus, takenAt: number): number {
  return Math.floor(takenAt + rate.resetSeconds);
}

const SUCCESS_PREFIX = '{"result":"success","msg":""';

/**
 * `{"result":"success","msg":"",...data}`; `data`'s preserialized fields (src/lib/preserialized.ts)
 * are written as they are.
 */
export function successJson(data: object | undefined, ignored: readonly string[]): string | Buffer {
  const body = successBody(data, ignored);
  return typeof body === 'string' || Buffer.isBuffer(body) ? body : Buffer.concat(body);
}

/**
 * successJson as `send` takes it: a string, or, when `data` has preserialized fields, Buffers to
 * write one after the other — shared ones (a large realm's presence or user lists) as they are,
 * and the strings between them each encoded once (joinChunks).
 */
export function successBody(
  data: object | undefined,
  ignored: readonly string[],
  /**
   * A large answer (`compressAnswer` endpoints): written straight into bytes if a field of it
   * writes its own JSON (largeSuccess).
   */
  large = false,
): string | Buffer | Buffer[] {
  const raw = preserializedChunks(data);
  if (raw.length === 0) {
    return (large && largeSuccess(data, ignored)) || plainSuccess(data, ignored);
  }
  const tail =
    ignored.length > 0 ? `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}}` : '}';
  const json = data === undefined ? '{}' : JSON.stringify(data);
  const head = json.length <= 2 ? SUCCESS_PREFIX : SUCCESS_PREFIX + ',' + json.slice(1, -1);
  const out: Buffer[] = [];
  let strings: string[] = [];
  for (const c of [head, ...raw, tail]) {
    if (typeof c === 'string') {
      strings.push(c);
      continue;
    }
    if (strings.length > 0) out.push(joinChunks(strings));
    strings = [];
    out.push(c);
  }
  if (strings.length > 0) out.push(joinChunks(strings));
  return out;
}

/**
 * `{"result":"success","msg":"",...data}` for `data` without preserialized fields: `data`'s JSON
 * with the prefix put in front of its first key, not a wrapper object made by spreading `data`
 * (copying each property) and then serialized (a small answer's largest cost on the request path).
 * Where the two could differ, the wrapper is used: keys `result`/`msg` (the wrapper keeps them
 * first), an integer-like first key (the wrapper would put it before `result`), a `toJSON`, or
 * ignored parameters (rare). A text that `send` would encode anyway (its LARGE_BODY test) is
 * written into a Buffer here at once, the prefix and the JSON each encoded once: the answer's
 * text is made once, never copied around the prefix (a 100-message fetch's ~50 KB).
 */
function plainSuccess(data: object | undefined, ignored: readonly string[]): string | Buffer {
  if (data === undefined) return ignored.length > 0 ? wrapped(data, ignored) : SUCCESS_EMPTY;
  if (!prefixable(data, ignored) || typeof (data as { toJSON?: unknown }).toJSON === 'function')
    return wrapped(data, ignored);
  const json = JSON.stringify(data);
  if (json.length <= 2) return SUCCESS_EMPTY;
  const first = json.charCodeAt(2); // {"k...
  if (json.charCodeAt(0) !== 0x7b || (first >= 0x30 && first <= 0x39))
    return wrapped(data, ignored);
  if (json.length * 3 <= LARGE_BODY) return SUCCESS_PREFIX + ',' + json.slice(1);
  const body = json.slice(1); // a view of `json`, not a copy
  const out = Buffer.allocUnsafe(SUCCESS_PREFIX_COMMA_BYTES + Buffer.byteLength(body));
  out.write(SUCCESS_PREFIX_COMMA, 0, 'latin1');
  out.write(body, SUCCESS_PREFIX_COMMA_BYTES);
  return out;
}

/**
 * plainSuccess's answer for a large one with a field that writes its own JSON (GET /messages'
 * messages), written straight into bytes by src/lib/json-bytes.ts: no text of it is made on the
 * heap (JSON.stringify's pieces and their flat copy were half of a message fetch's allocation).
 * The data's JSON is written after room for the prefix, whose comma then takes the place of the
 * data's `{`. Null where plainSuccess would not prefix the data's own JSON, where no field writes
 * itself (for plain objects JSON.stringify is the faster: ~100 against ~140 µs of CPU for 48 KB),
 * or where the writer does not take the value.
 */
function largeSuccess(data: object | undefined, ignored: readonly string[]): Buffer | null {
  if (data === undefined || !prefixable(data, ignored) || !hasWritableField(data)) return null;
  const writer = sharedJsonWriter();
  const at = SUCCESS_PREFIX_COMMA_BYTES - 1; // the data's `{` lands on the prefix's comma
  if (!writer.write(data, at)) return null;
  const b = writer.buf;
  if (writer.pos === at + 2) return Buffer.from(SUCCESS_EMPTY); // {}
  const first = b[at + 2]!; // {"k...
  if (first >= 0x30 && first <= 0x39) return null; // an integer-like first key: the wrapper
  b.write(SUCCESS_PREFIX_COMMA, 0, 'latin1');
  return writer.take(0);
}

/** Whether `data`'s JSON may follow the success prefix (nothing ignored, no own result/msg). */
function prefixable(data: object, ignored: readonly string[]): boolean {
  return ignored.length === 0 && !Array.isArray(data) && !('result' in data) && !('msg' in data);
}

/** The answer as one JSON.stringify of a shallow wrapper (plainSuccess's exceptions). */
function wrapped(data: object | undefined, ignored: readonly string[]): string {
  // Keys of `data` named result/msg are overwritten in place: they stay first, as the prefix's.
  return JSON.stringify(
    ignored.length > 0
      ? { result: 'success', msg: '', ...data, ignored_parameters_unsupported: ignored }
      : { result: 'success', msg: '', ...data },
  );
}

const SUCCESS_EMPTY = SUCCESS_PREFIX + '}';
const SUCCESS_PREFIX_COMMA = SUCCESS_PREFIX + ',';
const SUCCESS_PREFIX_COMMA_BYTES = SUCCESS_PREFIX_COMMA.length;

/**
 * JSON chunks as one Buffer, each written once into it: Buffers (a cached megabyte of JSON) are
 * copied, never re-encoded, and strings (a presence answer's hundreds of small entries) are
 * encoded in place, without a Buffer of their own each.
 */
export function joinChunks(chunks: readonly (string | Buffer)[]): Buffer {
  const sizes = chunks.map((c) => (typeof c === 'string' ? Buffer.byteLength(c) : c.length));
  const out = Buffer.allocUnsafe(sizes.reduce((a, n) => a + n, 0));
  let offset = 0;
  chunks.forEach((c, i) => {
    if (typeof c === 'string') out.write(c, offset);
    else c.copy(out, offset);
    offset += sizes[i]!;
  });
  return out;
}

/**
 * Answers `err`: a JsonableError as itself, a full disk as 507, anything else as a 500 (reported
 * as unexpected, with the request's id and `where` it was caught).
 */
export function sendError(
  res: HttpResponse,
  ctx: RequestContext,
  err: unknown,
  closeConnection = false,
  where: Where = 'handler',
): void {
  const answer = errorAnswer(ctx, err);
  send(res, ctx, answer.status, answer.body, 'application/json', answer.headers, closeConnection);
  // After the answer: a fatal condition (a corrupt database) stops the process here.
  if (answer.unexpected) reportUnexpected(err, where, { reqId: ctx.reqId, method: ctx.method });
}

/** The error answer for `err`: its status, JSON body and headers; `unexpected` for a 500. */
export function errorAnswer(
  ctx: RequestContext,
  err: unknown,
): {
  status: number;
  body: string;
  headers: Readonly<Record<string, string>>;
  unexpected: boolean;
} {
  const full = err instanceof JsonableError ? null : storageFullError(err);
  if (full) {
    console.error(`507 on ${ctx.method} ${ctx.path}: the disk is full (${String(err)})`);
    err = full;
  }
  if (err instanceof JsonableError) {
    // A browser's request never gets a Basic challenge: the browser would ask for a password in
    // its own dialog (src/http/sessions.ts).
    const headers =
      err.httpStatus === 401 && ctx.browser?.bySession
        ? { ...err.headers, 'WWW-Authenticate': SESSION_CHALLENGE }
        : err.headers;
    return {
      status: err.httpStatus,
      body: JSON.stringify(err.toBody()),
      headers,
      unexpected: false,
    };
  }
  return { status: 500, body: JSON.stringify(internalErrorBody()), headers: {}, unexpected: true };
}
