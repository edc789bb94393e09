/**
 * Streaming a file to a client with uWS backpressure (the pattern of uWS's VideoStreamer example):
 * read a chunk, offer it with tryEnd; if the socket cannot take all of it, keep the rest and wait
 * for onWritable, reading nothing more until it has gone out. Memory per download is one chunk.
 * uWS writes Content-Length itself (tryEnd's total size).
 */
import { writeHead, type FileBody } from './respond.js';
import { reportUnexpected } from './unexpected.js';
import type { RequestContext } from './request.js';
import type { HttpResponse } from './uws.js';

const CHUNK_BYTES = 64 * 1024;

/**
 * Writes `body` to `res`; calls `done` once, when the file went out or the transfer stopped. Never
 * throws: a failure (the file unreadable, anything unexpected) closes the connection (headers may
 * be out already), is logged, and releases the file.
 */
export function streamFile(
  res: HttpResponse,
  ctx: RequestContext,
  body: FileBody,
  done: () => void,
): void {
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    try {
      body.file.close().catch(() => {});
    } catch {
      // a handle that cannot even be asked to close: nothing more to release
    }
    done();
  };
  const fail = (err: unknown) => {
    if (finished) return;
    reportUnexpected(err, 'stream', { reqId: ctx.reqId, method: ctx.method });
    // Headers (and Content-Length) may be out: the only honest end is closing the connection.
    if (!ctx.aborted) {
      try {
        res.close();
      } catch {
        // answered, or its client gone
      }
    }
    finish();
  };
  try {
    start(res, ctx, body, finish, fail, () => finished);
  } catch (err) {
    fail(err);
  }
}

function start(
  res: HttpResponse,
  ctx: RequestContext,
  body: FileBody,
  finish: () => void,
  fail: (err: unknown) => void,
  isFinished: () => boolean,
): void {
  if (ctx.aborted || ctx.done) {
    finish();
    return;
  }
  // The request stays counted against its address until the file is out; its address is read
  // now, while the response can still be asked, in case it is counted later (./address-limits.ts).
  ctx.peerAddress();
  ctx.answering(200);
  ctx.onAbort(finish);
  const total = body.size;

  res.cork(() => {
    writeHead(res, ctx, 200, body.contentType, body.headers);
    if (total === 0) res.end();
  });
  if (total === 0) {
    finish();
    return;
  }

  const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, total));
  let position = 0; // bytes of the file read so far

  /** Offers `chunk` (the file's bytes from `position - chunk.length`); true when it all went out. */
  const offer = (chunk: Buffer): void => {
    let ok = false;
    let complete = false;
    const startOffset = res.getWriteOffset();
    res.cork(() => {
      [ok, complete] = res.tryEnd(chunk, total);
    });
    if (complete) {
      finish();
      return;
    }
    if (ok) {
      readNext();
      return;
    }
    // Backpressure: the socket took part of it. Resume from what it took when it can take more.
    res.onWritable((offset) => {
      if (isFinished()) return true;
      try {
        const [ok2, complete2] = res.tryEnd(chunk.subarray(offset - startOffset), total);
        if (complete2) finish();
        else if (ok2) readNext();
        return ok2;
      } catch (err) {
        fail(err);
        return true;
      }
    });
  };

  const readNext = (): void => {
    if (isFinished()) return;
    const want = Math.min(buf.length, total - position);
    body.file
      .read(buf, 0, want, position)
      .then(({ bytesRead }) => {
        if (isFinished()) return;
        if (bytesRead === 0) {
          fail(new Error(`file shorter than its ${total} bytes`));
          return;
        }
        position += bytesRead;
        offer(buf.subarray(0, bytesRead));
      })
      .catch(fail);
  };

  readNext();
}
