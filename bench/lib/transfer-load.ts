/**
 * A closed-loop load generator for large bodies (uploads and downloads), run as its own process.
 * Each connection sends one request, reads the whole response (Content-Length framing, bytes
 * counted, never concatenated), records the latency, and sends the next — until the time is up or
 * `maxRequests` were measured.
 *
 * Input: one JSON argument {port, method, path, headers, connections, durationMs, warmupMs,
 * maxRequests, uploadBytes?}. With `uploadBytes`, each request is a multipart POST carrying one file
 * of that many bytes.
 * Output: one JSON line {requests, seconds, rps, responseBytes, requestBytes, p50, p99, max, errors}.
 */
import net from 'node:net';
import { summarize } from './stats.js';

type Opts = {
  port: number;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  connections: number;
  durationMs: number;
  warmupMs: number;
  maxRequests: number;
  uploadBytes?: number;
};

const opts = JSON.parse(process.argv[2] ?? '{}') as Opts;

let body: Buffer | null = null;
const extraHeaders: Record<string, string> = {};
if (opts.uploadBytes !== undefined) {
  const boundary = 'benchboundary0123456789';
  body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    Buffer.alloc(opts.uploadBytes, 0x5a),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  extraHeaders['Content-Type'] = `multipart/form-data; boundary=${boundary}`;
  extraHeaders['Content-Length'] = String(body.length);
}
const head = Buffer.from(
  `${opts.method} ${opts.path} HTTP/1.1\r\nHost: 127.0.0.1:${opts.port}\r\n` +
    Object.entries({ ...opts.headers, ...extraHeaders })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n',
);

const latencies: number[] = [];
let errors = 0;
let measuring = false;
let stopped = false;
let measuredStart = 0;
let measuredEnd = 0;
let completed = 0;
let responseBytes = 0;

function stop(): void {
  if (stopped) return;
  stopped = true;
  measuring = false;
  measuredEnd = performance.now();
}

function connection(): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect(opts.port, '127.0.0.1');
    sock.setNoDelay(true);
    let pending: Buffer = Buffer.alloc(0); // unparsed header bytes
    let bodyLeft = -1; // bytes of the current body still to come; -1: reading a header
    let status = '';
    let sentAt = 0;
    const send = () => {
      if (stopped) {
        sock.end();
        return;
      }
      sentAt = performance.now();
      sock.write(head);
      if (body) sock.write(body);
    };
    const done = () => {
      if (!status.startsWith('HTTP/1.1 200')) {
        errors++;
        if (errors <= 3) process.stderr.write(`transfer-load: ${status}\n`);
      }
      if (measuring) {
        latencies.push(performance.now() - sentAt);
        completed++;
        if (completed >= opts.maxRequests) stop();
      }
      send();
    };
    sock.on('connect', send);
    sock.on('data', (chunk: Buffer) => {
      let rest = chunk;
      while (rest.length > 0) {
        if (bodyLeft >= 0) {
          const n = Math.min(bodyLeft, rest.length);
          bodyLeft -= n;
          if (measuring) responseBytes += n;
          rest = rest.subarray(n);
          if (bodyLeft === 0) {
            bodyLeft = -1;
            done();
          }
          continue;
        }
        pending = pending.length === 0 ? rest : Buffer.concat([pending, rest]);
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) return; // the rest of the header comes with the next chunk
        const text = pending.subarray(0, end).toString('latin1');
        status = text.slice(0, text.indexOf('\r\n'));
        const m = /\r\ncontent-length: *(\d+)/i.exec(text);
        bodyLeft = m ? Number(m[1]) : 0;
        rest = pending.subarray(end + 4);
        pending = Buffer.alloc(0);
        if (bodyLeft === 0) {
          bodyLeft = -1;
          done();
        }
      }
    });
    sock.on('error', (err) => {
      errors++;
      if (errors <= 3) process.stderr.write(`transfer-load: ${err.message}\n`);
      resolve();
    });
    sock.on('close', () => resolve());
  });
}

const all = Array.from({ length: opts.connections }, connection);
setTimeout(() => {
  measuring = true;
  measuredStart = performance.now();
  setTimeout(stop, opts.durationMs);
}, opts.warmupMs);

await Promise.all(all);
const seconds = (measuredEnd - measuredStart) / 1000;
const s = summarize(latencies);
process.stdout.write(
  JSON.stringify({
    requests: completed,
    seconds,
    rps: completed / seconds,
    responseBytes,
    requestBytes: body ? completed * body.length : 0,
    p50: s.p50,
    p99: s.p99,
    max: s.max,
    errors,
  }) + '\n',
);
