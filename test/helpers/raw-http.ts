/**
 * HTTP/1.1 by hand over a socket, for requests no client library sends: a body cut short of its
 * encoding (declared at the cut length, or framed chunked), a body the client stops sending midway
 * (then closes, half-closes or resets), chunk sizes of its choosing. Each exchange has a
 * connection of its own.
 */
import net from 'node:net';

export type RawAnswer = {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Parsed when the answer is JSON. */
  json: Record<string, unknown> | null;
  ms: number;
};

/** How the client ends what it sends. */
export type Ending =
  /** Everything is sent and the connection kept open until the answer is read. */
  | 'complete'
  /** The client half-closes after what it sent (a FIN): for uWS, a client that has gone. */
  | 'fin'
  /** The client resets the connection after what it sent. */
  | 'reset';

/** `body` framed as chunked transfer coding, in chunks of the given sizes (the rest in one). */
export function chunked(body: Buffer, sizes: readonly number[] = []): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (const n of [...sizes, body.length]) {
    if (at >= body.length) break;
    const part = body.subarray(at, Math.min(body.length, at + Math.max(1, n)));
    at += part.length;
    out.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
  }
  out.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(out);
}

/** A request head: `headers` as given, plus Host. */
export function head(method: string, target: string, headers: Record<string, string>): string {
  let h = `${method} ${target} HTTP/1.1\r\nHost: testserver.local\r\n`;
  for (const [k, v] of Object.entries(headers)) h += `${k}: ${v}\r\n`;
  return h + '\r\n';
}

/** A chunked body's bytes, or null until its last (zero-size) chunk has arrived. */
function dechunk(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(buf.subarray(at, eol).toString('latin1').split(';')[0]!, 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < eol + 2 + size + 2) return null;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** The first complete answer in `buf`, or null while it is incomplete. */
function parseAnswer(buf: Buffer): Omit<RawAnswer, 'ms'> | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body: Buffer;
  if ((headers['transfer-encoding'] ?? '').toLowerCase() === 'chunked') {
    // An early refusal is written chunked (src/http/linger.ts): complete at its last chunk.
    const whole = dechunk(buf.subarray(end + 4));
    if (whole === null) return null;
    body = whole;
  } else {
    const length = Number(headers['content-length'] ?? 0);
    if (buf.length < end + 4 + length) return null;
    body = buf.subarray(end + 4, end + 4 + length);
  }
  let json: Record<string, unknown> | null = null;
  if ((headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      const v = JSON.parse(body.toString('utf8')) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        json = v as Record<string, unknown>;
      }
    } catch {
      json = null;
    }
  }
  return { status, headers, body, json };
}

/**
 * Sends `headText` then `payload` on a fresh connection and ends as `ending` says. Resolves with
 * the answer once it is complete, or null if the connection closed (or `timeoutMs` passed)
 * without one; the connection is then closed.
 */
export function exchange(
  url: string,
  headText: string,
  payload: Buffer,
  ending: Ending,
  timeoutMs = 10_000,
): Promise<{ answer: RawAnswer | null; closed: boolean; timedOut: boolean }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let settled = false;
    const s = net.connect(Number(port), hostname);
    const finish = (answer: RawAnswer | null, closed: boolean, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ answer, closed, timedOut });
    };
    const timer = setTimeout(() => finish(null, false, true), timeoutMs);
    s.on('connect', () => {
      s.write(Buffer.concat([Buffer.from(headText, 'latin1'), payload]));
      if (ending === 'fin') s.end();
      else if (ending === 'reset') setImmediate(() => s.resetAndDestroy());
    });
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const a = parseAnswer(buf);
      if (a) finish({ ...a, ms: performance.now() - started }, false, false);
    });
    s.on('error', () => finish(null, true, false));
    s.on('close', () => finish(null, true, false));
  });
}
