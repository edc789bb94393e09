/**
 * Streaming a file to a client with uWS backpressure (./respond.ts writeChunks, the pattern of
 * uWS's VideoStreamer example): read a chunk, offer it; what the socket cannot take at once waits
 * for onWritable, and nothing more is read until it has gone out. Memory per download is one chunk.
 */
import { abandonAnswer, writeChunks, writeHead, type FileBody } from './respond.js';
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
  try {
    if (ctx.aborted || ctx.done) {
      finish();
      return;
    }
    // The request stays counted against its address until the file is out; its address is read
    // now, while the response can still be asked, in case it is counted later (./address-limits.ts).
    ctx.peerAddress();
    ctx.answering(200);
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
    const read = async (): Promise<Buffer> => {
      const want = Math.min(buf.length, total - position);
      const { bytesRead } = await body.file.read(buf, 0, want, position);
      if (bytesRead === 0) throw new Error(`file shorter than its ${total} bytes`);
      position += bytesRead;
      return buf.subarray(0, bytesRead);
    };
    writeChunks(res, ctx, total, read, 'stream', finish);
  } catch (err) {
    abandonAnswer(res, ctx, err, 'stream');
    finish();
  }
}
