/**
 * A closed-loop HTTP/1.1 load generator, run as its own process so it does not share an event
 * loop with the server under test. Each connection sends one request, waits for the whole response
 * (Content-Length framing), records the latency, and sends the next. Raw sockets keep the
 * generator's own cost low (node:http would be the bottleneck long before uWS is).
 *
 * Input: one JSON argument {port, path, headers, connections, durationMs, warmupMs}.
 * Output: one JSON line {requests, seconds, rps, p50, p90, p99, max, errors, answered}: `requests`
 * and the figures over the measured window, `answered` the responses over the whole run (warm-up
 * and the last ones included).
 */
import net from 'node:net';
import { summarize } from './stats.js';

type Opts = {
  port: number;
  path: string;
  headers: Record<string, string>;
  connections: number;
  durationMs: number;
  warmupMs: number;
};

const opts = JSON.parse(process.argv[2] ?? '{}') as Opts;
const request = Buffer.from(
  `GET ${opts.path} HTTP/1.1\r\nHost: 127.0.0.1:${opts.port}\r\n` +
    Object.entries(opts.headers)
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
let answered = 0;

function connection(): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect(opts.port, '127.0.0.1');
    sock.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let sentAt = 0;
    const send = () => {
      if (stopped) {
        sock.end();
        return;
      }
      sentAt = performance.now();
      sock.write(request);
    };
    sock.on('connect', send);
    sock.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        const headerEnd = buf.indexOf('\r\n\r\n');
        if (headerEnd === -1) return;
        const head = buf.subarray(0, headerEnd).toString('latin1');
        const m = /\r\ncontent-length: *(\d+)/i.exec(head);
        const bodyLen = m ? Number(m[1]) : 0;
        const total = headerEnd + 4 + bodyLen;
        if (buf.length < total) return;
        if (!head.startsWith('HTTP/1.1 200')) errors++;
        buf = buf.subarray(total);
        answered++;
        if (measuring) {
          latencies.push(performance.now() - sentAt);
          completed++;
        }
        send();
      }
    });
    sock.on('error', () => {
      errors++;
      resolve();
    });
    sock.on('close', () => resolve());
  });
}

const all = Array.from({ length: opts.connections }, connection);
setTimeout(() => {
  measuring = true;
  measuredStart = performance.now();
  setTimeout(() => {
    measuring = false;
    measuredEnd = performance.now();
    stopped = true;
  }, opts.durationMs);
}, opts.warmupMs);

await Promise.all(all);
const seconds = (measuredEnd - measuredStart) / 1000;
const s = summarize(latencies);
process.stdout.write(
  JSON.stringify({
    requests: completed,
    seconds,
    rps: completed / seconds,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    max: s.max,
    errors,
    answered,
  }) + '\n',
);
