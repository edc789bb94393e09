/**
 * Fan-out bench clients, run as a child process (forked with an IPC channel) so they do not share
 * an event loop with the server. Each child holds one connection per simulated user:
 *
 *   poll  raw keep-alive HTTP/1.1: (Confab) POST /register, then GET /events in a loop,
 *         acknowledging as it goes; (bare) GET /poll in a loop
 *   ws    a WebSocket per user (the `ws` package): (Confab) /api/v1/events/socket with acks;
 *         (bare) /ws
 *
 * Acknowledgements on the sockets are sent once this child's users have all received the round,
 * not while frames are still arriving: Confab's own client coalesces them over a second
 * (src/client/events.ts, ackDelayMs), so a real client's acks never compete with a burst's
 * frames. Sent in the next turn of the loop, as this client did until 2026-12-04, up to 5,000
 * ack frames were written by this process while it was still reading the round (about 10 ms of
 * its CPU per round at 5,000 users), a cost the bare server's clients, which do not acknowledge,
 * never had.
 *
 * Every event carries its round as `data.default_code_block_language` ("r<round>"). When all of
 * this child's users have received round r, it reports their arrival times (epoch ms, microsecond
 * precision: performance.timeOrigin + performance.now(), comparable across processes on one host).
 *
 * Parent → child: {type: 'start', opts}, {type: 'stop'}. Child → parent: {type: 'ready'}, {type: 'round', round,
 * arrivals}, {type: 'error', msg}.
 */
import net from 'node:net';
import WebSocket from 'ws';

type Opts = {
  mode: 'poll' | 'ws';
  target: 'confab' | 'bare';
  port: number;
  users: { email: string; api_key: string }[];
};

// Options arrive as the first IPC message (a user list is too long for argv).
let opts: Opts = { mode: 'poll', target: 'bare', port: 0, users: [] };
const now = () => performance.timeOrigin + performance.now();
const send = (m: unknown) => process.send?.(m);

// round → arrival times collected so far
const arrivals = new Map<number, number[]>();
let stopping = false;

function arrived(round: number): void {
  let list = arrivals.get(round);
  if (!list) arrivals.set(round, (list = []));
  list.push(now());
  if (list.length === opts.users.length) {
    arrivals.delete(round);
    // The last frame's handler noted its ack before calling this (see the module comment). The
    // acks go, then this process collects its garbage and only then reports: the bench starts
    // the next round once every child has reported, so none of the instrument's own collections
    // falls inside a round (gc() exists when forked with --expose-gc, as ../fanout.bench.ts does).
    setImmediate(() => {
      if (pendingAcks.size > 0) sendAcks();
      (globalThis as { gc?: () => void }).gc?.();
      send({ type: 'round', round, arrivals: list });
    });
  }
}

type Event = { id: number; type: string; data?: { default_code_block_language?: string } };

function roundsOf(body: string): { rounds: number[]; lastId: number } {
  const parsed = JSON.parse(body) as { events?: Event[] };
  const rounds: number[] = [];
  let lastId = -1;
  for (const e of parsed.events ?? []) {
    lastId = Math.max(lastId, e.id);
    const marker = e.data?.default_code_block_language;
    if (marker?.startsWith('r')) rounds.push(Number(marker.slice(1)));
  }
  return { rounds, lastId };
}

function auth(u: { email: string; api_key: string }): string {
  return 'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64');
}

/** One keep-alive HTTP/1.1 connection that sends a request and resolves with the body. */
class HttpConn {
  private sock: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  private pending: ((r: { status: number; body: string }) => void) | null = null;

  constructor(port: number) {
    this.sock = net.connect(port, '127.0.0.1');
    this.sock.setNoDelay(true);
    this.sock.on('data', (chunk: Buffer) => this.onData(chunk));
    this.sock.on('error', (err) => {
      if (!stopping) send({ type: 'error', msg: String(err) });
    });
  }

  connected(): Promise<void> {
    return new Promise((resolve) => this.sock.once('connect', () => resolve()));
  }

  request(head: string, body = ''): Promise<{ status: number; body: string }> {
    return new Promise((resolve) => {
      this.pending = resolve;
      this.sock.write(head + body);
    });
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      const headerEnd = this.buf.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const head = this.buf.subarray(0, headerEnd).toString('latin1');
      const m = /\r\ncontent-length: *(\d+)/i.exec(head);
      const len = m ? Number(m[1]) : 0;
      const total = headerEnd + 4 + len;
      if (this.buf.length < total) return;
      const status = Number(head.slice(9, 12));
      const body = this.buf.subarray(headerEnd + 4, total).toString('utf8');
      this.buf = this.buf.subarray(total);
      const p = this.pending;
      this.pending = null;
      p?.({ status, body });
    }
  }

  close(): void {
    this.sock.destroy();
  }
}

const closers: (() => void)[] = [];

async function pollUser(u: { email: string; api_key: string }): Promise<void> {
  const conn = new HttpConn(opts.port);
  closers.push(() => conn.close());
  await conn.connected();
  const host = `Host: 127.0.0.1\r\n`;
  let path: string;
  let lastId = -1;
  if (opts.target === 'confab') {
    const body = 'event_types=' + encodeURIComponent('["realm"]');
    const res = await conn.request(
      `POST /api/v1/register HTTP/1.1\r\n${host}Authorization: ${auth(u)}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    if (res.status !== 200) throw new Error(`register ${res.status}: ${res.body.slice(0, 200)}`);
    const reg = JSON.parse(res.body) as { queue_id: string; last_event_id: number };
    lastId = reg.last_event_id;
    path = `/api/v1/events?queue_id=${reg.queue_id}&last_event_id=`;
  } else {
    path = '/poll?';
  }
  const loop = async () => {
    while (!stopping) {
      const target = opts.target === 'confab' ? path + lastId : path;
      const res = await conn.request(
        `GET ${target} HTTP/1.1\r\n${host}Authorization: ${auth(u)}\r\n\r\n`,
      );
      if (stopping) return;
      if (res.status !== 200) throw new Error(`poll ${res.status}: ${res.body.slice(0, 200)}`);
      const r = roundsOf(res.body);
      if (r.lastId > lastId) lastId = r.lastId;
      for (const round of r.rounds) arrived(round);
    }
  };
  loop().catch((err: unknown) => send({ type: 'error', msg: String(err) }));
}

async function wsUser(u: { email: string; api_key: string }): Promise<void> {
  let url: string;
  if (opts.target === 'confab') {
    const conn = new HttpConn(opts.port);
    await conn.connected();
    const body = 'event_types=' + encodeURIComponent('["realm"]');
    const res = await conn.request(
      `POST /api/v1/register HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth(u)}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    conn.close();
    if (res.status !== 200) throw new Error(`register ${res.status}: ${res.body.slice(0, 200)}`);
    const reg = JSON.parse(res.body) as { queue_id: string; last_event_id: number };
    url = `ws://127.0.0.1:${opts.port}/api/v1/events/socket?queue_id=${reg.queue_id}&last_event_id=${reg.last_event_id}`;
  } else {
    url = `ws://127.0.0.1:${opts.port}/ws`;
  }
  const ws = new WebSocket(url, { headers: { authorization: auth(u) }, perMessageDeflate: false });
  closers.push(() => ws.terminate());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let ackTo = -1;
  ws.on('message', (data: Buffer) => {
    const r = roundsOf(data.toString('utf8'));
    // Acknowledged once the round has reached every user of this child (the module comment):
    // noted before `arrived`, which sends the pending acks when this frame completes the round
    // (a child of one user, or one whose other users' acks already went, has only this one).
    if (opts.target === 'confab' && r.lastId > ackTo) {
      pendingAcks.set(ws, r.lastId);
      ackTo = r.lastId;
      if (r.rounds.length === 0) setImmediate(sendAcks); // not a round's event: nothing waits
    }
    for (const round of r.rounds) arrived(round);
  });
}

/** Each socket's newest id not yet acknowledged. */
const pendingAcks = new Map<WebSocket, number>();
function sendAcks(): void {
  for (const [ws, id] of pendingAcks) ws.send(`{"last_event_id":${id}}`);
  pendingAcks.clear();
}

async function main(): Promise<void> {
  const start = opts.mode === 'poll' ? pollUser : wsUser;
  // Connect in batches: the listen backlog is finite.
  const BATCH = 100;
  for (let i = 0; i < opts.users.length; i += BATCH) {
    await Promise.all(opts.users.slice(i, i + BATCH).map((u) => start(u)));
  }
  send({ type: 'ready' });
}

process.on('message', (m: { type: string; opts?: Opts }) => {
  if (m.type === 'start' && m.opts) {
    opts = m.opts;
    main().catch((err: unknown) => {
      send({ type: 'error', msg: String(err) });
      process.exit(1);
    });
  } else if (m.type === 'stop') {
    stopping = true;
    for (const c of closers) c();
    process.exit(0);
  }
});
