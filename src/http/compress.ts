/**
 * Compressed JSON answers for the large ones clients fetch often (docs/web.md "Compression"):
 * register, GET /messages, the user, channel, subscription and topic lists; endpoints opt in
 * (`compressAnswer`). An answer of at least COMPRESS_MIN_BYTES goes as brotli or gzip, whichever
 * the client's Accept-Encoding prefers (browsers send `br` only over https), compressed in zlib's
 * thread pool, so the main thread only hands the bytes over and writes the result. Smaller answers
 * go as they are (a packet or two: compressing them would cost more than it saves).
 *
 * Answers built around the large shared parts of a big realm (./gzip.ts) keep their own gzip,
 * made once per part and reused by every answer, which no per-answer compression can beat.
 */
import zlib from 'node:zlib';
import { chooseEncoding, hasSharedPart } from './gzip.js';
import type { RequestContext } from './request.js';
import { send, sendError } from './respond.js';
import type { HttpResponse } from './uws.js';

/** Answers smaller than this are sent as they are. */
export const COMPRESS_MIN_BYTES = 1024;

const VARY = { Vary: 'Accept-Encoding' };

/**
 * Brotli at quality 4 with a 256 KiB window (the default 4 MiB window is allocated per answer for
 * nothing: answers are smaller) and gzip at level 4: most of the size won, a fraction of the time
 * (bench/compress.bench.ts).
 */
const brotli = (size: number) => ({
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
    [zlib.constants.BROTLI_PARAM_LGWIN]: 18,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size,
  },
});
const GZIP = { level: 4 };

/**
 * Writes a compressible answer: compressed when it is large enough and the client takes it, else
 * as it is; calls `leave` once written (later, when compressed).
 */
export function sendCompressible(
  res: HttpResponse,
  ctx: RequestContext,
  body: string | Buffer | readonly Buffer[],
  leave: () => void,
): void {
  const parts = typeof body === 'string' || Buffer.isBuffer(body) ? null : body;
  const encoding =
    parts !== null && hasSharedPart(parts)
      ? null // ./gzip.ts's own, in send()
      : chooseEncoding(ctx.acceptEncoding, { br: true, gzip: true });
  const bytes =
    encoding === null
      ? null
      : parts !== null
        ? Buffer.concat(parts)
        : typeof body === 'string'
          ? Buffer.from(body)
          : (body as Buffer);
  if (encoding === null || bytes === null || bytes.length < COMPRESS_MIN_BYTES) {
    send(res, ctx, 200, bytes ?? body, 'application/json', VARY);
    leave();
    return;
  }
  const done = (err: Error | null, out: Buffer) => {
    try {
      // A failure of zlib (memory) leaves the answer uncompressed, not unanswered.
      if (err) send(res, ctx, 200, bytes, 'application/json', VARY);
      else send(res, ctx, 200, out, 'application/json', { ...VARY, 'Content-Encoding': encoding });
    } catch (inner) {
      sendError(res, ctx, inner, false, 'respond');
    } finally {
      leave();
    }
  };
  if (encoding === 'br') zlib.brotliCompress(bytes, brotli(bytes.length), done);
  else zlib.gzip(bytes, GZIP, done);
}
