/**
 * The presence bench's clients, as a separate process: every user POSTs /users/me/presence once
 * (one "minute" of pings compressed into a burst), over `connections` keep-alive connections.
 * Each user remembers the `presence_last_update_id` of its last answer and sends it back
 * (`mode: 'modern'`), or sends `ping_only` (`mode: 'ping_only'`).
 *
 * Input: one JSON argument {port, users, connections, mode, lastIds?}; user i is
 * `user<i>@bench.example` with the bench's API key (see bench/lib/seed.ts).
 * Output: one JSON line {requests, seconds, rps, p50, p99, max, errors, bytes, lastIds}.
 */
import net from 'node:net';
import { summarize } from './stats.js';

type Opts = {
  port: number;
  users: number;
  connections: number;
  mode: 'modern' | 'ping_only';
  lastIds?: number[];
};

const opts = JSON.parse(process.argv[2] ?? '{}') as Opts;
const benchUser = (i: number) => ({
  email: `user${i}@bench.example`,
  api_key: `benchkey${String(i).padStart(24, '0')}`,
});
const lastIds = opts.lastIds ?? Array.from({ length: opts.users }, () => -1);
const auth = Array.from({ length: opts.users }, (_, i) => {
  const u = benchUser(i);
  return 'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64');
});

function requestFor(i: number): Buffer {
  const body =
    opts.mode === 'ping_only'
      ? 'status=active&ping_only=true'
      : `status=active&last_update_id=${lastIds[i]!}`;
  return Buffer.from(
    `POST /api/v1/users/me/presence HTTP/1.1\r\nHost: 127.0.0.1:${opts.port}\r\n` +
      `Authorization: ${auth[i]!}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

let next = 0;
let errors = 0;
let bytes = 0;
const latencies: number[] = [];

function connection(): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect(opts.port, '127.0.0.1');
    sock.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let sentAt = 0;
    let current = -1;
    const send = () => {
      if (next >= opts.users) {
        sock.end();
        return;
      }
      current = next++;
      sentAt = performance.now();
      sock.write(requestFor(current));
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
        latencies.push(performance.now() - sentAt);
        bytes += total;
        if (!head.startsWith('HTTP/1.1 200')) errors++;
        else if (opts.mode === 'modern') {
          const body = buf.subarray(headerEnd + 4, total).toString('utf8');
          const id = /"presence_last_update_id":(-?\d+)/.exec(body);
          if (id) lastIds[current] = Number(id[1]);
        }
        buf = buf.subarray(total);
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

const started = performance.now();
await Promise.all(Array.from({ length: opts.connections }, connection));
const seconds = (performance.now() - started) / 1000;
const s = summarize(latencies);
process.stdout.write(
  JSON.stringify({
    requests: latencies.length,
    seconds,
    rps: latencies.length / seconds,
    p50: s.p50,
    p99: s.p99,
    max: s.max,
    errors,
    bytes,
    lastIds,
  }) + '\n',
);
