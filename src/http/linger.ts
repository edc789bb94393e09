/**
 * Early refusals with a lingering close (docs/robustness.md "Early refusals"). A request refused
 * before its body is read whole (413 over the size limit, 401 or 429 on an upload, a body of a
 * type it cannot take) is answered at once. Closing the connection right after would make the
 * kernel answer the body still arriving with a reset, and a reset can destroy the answer before
 * the client read it: nginx in front (`proxy_request_buffering off`) then answers 502 itself. So,
 * as HTTP servers do, the rest of the body is read and discarded, within bounds, before the
 * connection ends:
 *
 * - the answer goes out at once (status, headers with `Connection: close`, the JSON error) as one
 *   chunk of a chunked response, which keeps the response open: uWS.js lets a response be closed
 *   only until it is complete;
 * - the rest of the body is read and dropped; once it is all in, the response is completed and
 *   the connection ends without a reset (the client was told to close it; uWS closes it at once
 *   when the request said so, after its 10 s idle timeout otherwise);
 * - a client that stops sending (it read the answer) gets the response completed after
 *   LINGER_IDLE_MS without data;
 * - past LINGER_BYTES discarded, or LINGER_MS in all, the connection is closed as it is: a client
 *   still sending then had the answer long before.
 */
import { errorAnswer, sendError, writeHead } from './respond.js';
import type { RequestContext } from './request.js';
import type { HttpResponse } from './uws.js';
import { reportUnexpected } from './unexpected.js';

/**
 * Body bytes read and dropped after an early answer, at most. More than what can be in flight
 * after the client has the answer: through a proxy on loopback, the client's send buffer, the
 * proxy's receive and send buffers and the server's receive buffer hold up to ~20 MB together
 * (Linux's default maxima 4 + 6 + 4 + 6 MB). At 8 MiB a client that stopped sending as soon as it
 * had the answer was still cut off now and then through nginx, its answer destroyed by the reset
 * (a CI run of test/cluster/api-subset-b at b900b12: the 64 MiB streamed upload of
 * test/api/upload.test.ts aborted with ECONNRESET).
 */
export const LINGER_BYTES = 32 * 1024 * 1024;
/** How long the rest of a body is read after an early answer, at most. */
export const LINGER_MS = 10_000;
/** A client that sends nothing for this long gets the answer completed. */
export const LINGER_IDLE_MS = 500;

/** What a lingering request does with each chunk of the body arriving after the answer. */
export type Linger = (bytes: number, isLast: boolean) => void;

/**
 * Answers `err` at once and returns what to call with each later chunk of the body (none when the
 * body is already all in: then the answer is complete and the connection closes).
 */
export function refuseEarly(
  res: HttpResponse,
  ctx: RequestContext,
  err: unknown,
  bodyComplete: boolean,
): Linger | null {
  if (ctx.aborted || ctx.done) return null;
  if (bodyComplete) {
    sendError(res, ctx, err, true, 'body');
    return null;
  }
  const answer = errorAnswer(ctx, err);
  ctx.answering(answer.status);
  res.cork(() => {
    writeHead(res, ctx, answer.status, 'application/json', answer.headers);
    res.writeHeader('Connection', 'close');
    res.write(answer.body);
  });
  let discarded = 0;
  let over = false;
  let idle: NodeJS.Timeout | null = null;
  const finish = (how: 'end' | 'close') => {
    if (over) return;
    over = true;
    if (idle !== null) clearTimeout(idle);
    clearTimeout(total);
    if (ctx.aborted) return;
    try {
      if (how === 'end') res.cork(() => res.end());
      else res.close();
    } catch (err) {
      reportUnexpected(err, 'respond', { reqId: ctx.reqId, method: ctx.method });
    }
  };
  const armIdle = () => {
    if (idle !== null) clearTimeout(idle);
    idle = setTimeout(() => finish('end'), LINGER_IDLE_MS);
    idle.unref();
  };
  const total = setTimeout(() => finish('close'), LINGER_MS);
  total.unref();
  armIdle();
  if (answer.unexpected) reportUnexpected(err, 'body', { reqId: ctx.reqId, method: ctx.method });
  return (bytes, isLast) => {
    if (over) return;
    discarded += bytes;
    if (isLast) finish('end');
    else if (discarded > LINGER_BYTES) finish('close');
    else armIdle();
  };
}
