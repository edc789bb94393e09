/**
 * Early refusals with a lingering close (src/http/linger.ts, docs/robustness.md "Early
 * refusals"), on raw connections: the answer arrives whole while the body is still being sent, the
 * rest of the body is read and dropped, and the connection then ends without a reset; a client that
 * goes on sending past the bounds (8 MiB, 10 s) is cut off rather than read forever.
 */
import net from 'node:net';
import t from 'tap';
import { LINGER_BYTES } from '../../src/http/linger.js';
import { basicAuth } from '../helpers/api.js';
import { startServer } from '../helpers/server.js';

type Outcome = {
  /** Everything read from the server. */
  text: string;
  /** Body bytes the client got to write. */
  sent: number;
  /** The error the connection ended with, if any (ECONNRESET, EPIPE). */
  error: string | null;
};

/**
 * Sends `head`, then `total` body bytes as fast as the connection takes them (`stopAtAnswer`:
 * stops writing once the first bytes of an answer arrive, leaving the connection open), closes its
 * side once the answer is complete, and resolves once the connection is closed.
 */
function send(url: string, head: string, total: number, stopAtAnswer: boolean): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let sent = 0;
    let answered = false;
    let error: string | null = null;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const s = net.connect(Number(port), hostname, () => {
      s.write(head + PART_HEAD);
      sent = PART_HEAD.length;
      pump();
    });
    const pump = () => {
      while (sent < total && !(stopAtAnswer && answered) && !s.destroyed) {
        const c = chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += c.length;
        if (!s.write(c)) {
          s.once('drain', pump);
          return;
        }
      }
    };
    s.on('data', (d: Buffer) => {
      answered = true;
      chunks.push(d);
      // The answer complete: this side closes, as `Connection: close` asks.
      if (Buffer.concat(chunks).includes('\r\n0\r\n\r\n')) s.end();
    });
    s.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    s.on('close', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), sent, error }));
  });
}

/** The JSON body of a chunked answer (one chunk and the terminating one). */
function chunkedJson(text: string): unknown {
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  const m = /^([0-9a-f]+)\r\n/i.exec(body);
  if (!m) throw new Error(`not a chunked body: ${JSON.stringify(text)}`);
  const size = parseInt(m[1]!, 16);
  const json = body.slice(m[0].length, m[0].length + size);
  if (!body.slice(m[0].length + size).startsWith('\r\n0\r\n\r\n'))
    throw new Error(`no terminating chunk: ${JSON.stringify(text)}`);
  return JSON.parse(json);
}

/** The body starts as a file part; the rest of it is the file's bytes. */
const PART_HEAD =
  '--x\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n' +
  'Content-Type: application/octet-stream\r\n\r\n';

const LIMIT = 1024 * 1024;
const TOO_LARGE = "File is larger than this server's configured maximum upload size (1 MiB).";

t.test(
  'early refusals: the answer whole, the rest of the body dropped, then the end',
  async (t) => {
    const ts = await startServer(t, { maxFileUploadBytes: LIMIT });
    const hamlet = ts.fx.users.hamlet!;
    const head = (length: number, auth = basicAuth(hamlet.email, hamlet.api_key)) =>
      `POST /api/v1/user_uploads HTTP/1.1\r\nHost: testserver.local\r\nAuthorization: ${auth}\r\n` +
      `Content-Type: multipart/form-data; boundary=x\r\nContent-Length: ${length}\r\n\r\n`;

    // 2 MiB declared against 1 MiB: refused as the byte over the limit arrives, the rest read.
    const over = await send(ts.url, head(2 * LIMIT), 2 * LIMIT, false);
    t.match(over.text, /^HTTP\/1\.1 413 /, '413');
    t.match(over.text, /\r\nConnection: close\r\n/i, 'Connection: close');
    t.match(chunkedJson(over.text), { result: 'error', code: 'REQUEST_TOO_LARGE', msg: TOO_LARGE });
    t.equal(over.sent, 2 * LIMIT, 'the whole body was taken');
    t.equal(over.error, null, 'the connection ended without a reset');

    // Refused from its headers (no credentials on an upload): the body is still read, then the end.
    const anonymous = await send(ts.url, head(LIMIT, 'Basic eDp5'), LIMIT, false);
    t.match(anonymous.text, /^HTTP\/1\.1 401 /, '401 before the body');
    t.match(chunkedJson(anonymous.text), { result: 'error', code: 'UNAUTHORIZED' });
    t.equal(anonymous.error, null, 'the connection ended without a reset');

    // A client that stops sending once answered gets the answer completed.
    const stopped = await send(ts.url, head(64 * LIMIT), 64 * LIMIT, true);
    t.match(
      chunkedJson(stopped.text),
      { code: 'REQUEST_TOO_LARGE' },
      'completed for a stopped client',
    );
    t.ok(stopped.sent < 32 * LIMIT, `it stopped after ${stopped.sent} bytes`);

    // One that goes on sending is cut off past the bound, not read to its declared end.
    const endless = await send(ts.url, head(512 * LIMIT), 512 * LIMIT, false);
    // (Its answer went out first; the close past the bound may reset the connection before the
    // client read it: that client had the time.)
    t.ok(
      endless.sent < 512 * LIMIT,
      `cut off after ${endless.sent} of ${512 * LIMIT} bytes (bound: ${LINGER_BYTES} after the answer)`,
    );

    const me = await ts.api.get('hamlet', 'users/me');
    t.equal(me.status, 200, 'the server keeps serving');
  },
);
