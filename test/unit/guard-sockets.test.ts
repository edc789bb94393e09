/**
 * The event WebSockets the HTTP guard holds (src/http/guard-sockets.ts): the batches the two
 * threads exchange, the frames the guard writes, the idle sweep, and the scanner's part (an
 * upgrade asked about as a plain request, uWS's verdict read back).
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { CLOSE } from '../../actors/event-queue.machine.js';
import { CLOSE_BACKPRESSURE, GuardSockets } from '../../src/http/guard-sockets.js';
import { RequestScanner, socketVerdict } from '../../src/http/guard.js';
import {
  SOCKET_OP,
  SocketBatchBuilder,
  batchTransfer,
  readBatch,
  type SocketBatch,
} from '../../src/http/socket-batch.js';

type Op = { id: number; op: number; payload: string; code: number };
const ops = (batch: SocketBatch): Op[] => {
  const out: Op[] = [];
  readBatch(batch, (id, op, payload, code) =>
    out.push({ id, op, payload: Buffer.from(payload).toString('utf8'), code }),
  );
  return out;
};

t.test('a batch carries its operations in order, a shared payload stored once', (t) => {
  const b = new SocketBatchBuilder();
  t.ok(b.empty);
  const event = '{"result":"success","events":[{"type":"heartbeat","id":7}]}';
  for (let id = 1; id <= 100; id++) b.add(id, SOCKET_OP.TEXT, event);
  b.add(3, SOCKET_OP.BINARY, Buffer.from([1, 2, 3]));
  b.add(4, SOCKET_OP.CLOSE, 'queue deleted — gone', CLOSE.QUEUE_GONE);
  b.add(5, SOCKET_OP.OPEN);
  t.equal(b.count, 103);
  const batch = b.take();
  t.ok(b.empty, 'a fresh start after take');
  t.equal(
    batch.bytes.byteLength,
    Buffer.byteLength(event) + 3 + Buffer.byteLength('queue deleted — gone'),
    'the fanned-out frame is stored once',
  );
  const got = ops(batch);
  t.equal(got.length, 103);
  t.same(got[0], { id: 1, op: SOCKET_OP.TEXT, payload: event, code: 0 });
  t.same(got[99], { id: 100, op: SOCKET_OP.TEXT, payload: event, code: 0 });
  t.same(got[101], {
    id: 4,
    op: SOCKET_OP.CLOSE,
    payload: 'queue deleted — gone',
    code: CLOSE.QUEUE_GONE,
  });
  t.same(got[102], { id: 5, op: SOCKET_OP.OPEN, payload: '', code: 0 });
  t.same(
    [...batch.bytes.subarray(Buffer.byteLength(event), Buffer.byteLength(event) + 3)],
    [1, 2, 3],
  );
  // The areas change hands between threads: each is whole, not a view into a shared pool.
  const [opsArea, bytesArea] = batchTransfer(batch);
  t.equal(opsArea!.byteLength, batch.ops.byteLength);
  t.equal(bytesArea!.byteLength, batch.bytes.byteLength);
  t.end();
});

t.test('the guard closes slow readers with the queues’ backpressure code', (t) => {
  t.equal(CLOSE_BACKPRESSURE, CLOSE.BACKPRESSURE);
  t.end();
});

const ROUTES = { prefix: '/.guard-x', socket: '/api/v1/events/socket' };
const UPGRADE =
  'GET /api/v1/events/socket?queue_id=q1&last_event_id=-1 HTTP/1.1\r\n' +
  'Host: chat.example\r\nAuthorization: Basic eDp5\r\nUpgrade: websocket\r\n' +
  'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
  'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: msgpack\r\n\r\n';

t.test('an event-socket upgrade is asked about as a plain request', (t) => {
  const s = new RequestScanner(ROUTES);
  const out = Buffer.concat(s.feed(Buffer.from(UPGRADE + 'early'))).toString('latin1');
  t.equal(
    out,
    'GET /.guard-x/socket?queue_id=q1&last_event_id=-1 HTTP/1.1\r\n' +
      'Host: chat.example\r\nAuthorization: Basic eDp5\r\nSec-WebSocket-Protocol: msgpack\r\n\r\n',
    'the handshake headers are the guard’s; the rest reach uWS',
  );
  t.same(s.socketRequest, {
    url: '/api/v1/events/socket?queue_id=q1&last_event_id=-1',
    headers: {
      host: 'chat.example',
      authorization: 'Basic eDp5',
      upgrade: 'websocket',
      connection: 'Upgrade',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'sec-websocket-version': '13',
      'sec-websocket-protocol': 'msgpack',
    },
  });
  t.same(s.feed(Buffer.from(' more')), [], 'what follows is held');
  t.equal(s.takeSocket()!.toString(), 'early more', 'and handed to the socket');
  t.end();
});

t.test('more than a waiting client sends is not a socket', (t) => {
  const s = new RequestScanner(ROUTES);
  s.feed(Buffer.from(UPGRADE));
  s.feed(Buffer.alloc(70 * 1024, 'x'));
  t.equal(s.takeSocket(), null);
  const r = new RequestScanner(ROUTES);
  r.feed(Buffer.from(UPGRADE));
  r.feed(Buffer.alloc(70 * 1024, 'x'));
  t.same(r.socketRefused(), [], 'nor read as requests once refused');
  t.ok(r.refused);
  t.end();
});

t.test('handshakes the guard would not take itself are relayed to uWS', (t) => {
  const odd = [
    UPGRADE.replace('Version: 13', 'Version: 8'),
    UPGRADE.replace('dGhlIHNhbXBsZSBub25jZQ==', 'short'),
    UPGRADE.replace('Protocol: msgpack', 'Protocol: json,'),
    UPGRADE.replace('Protocol: msgpack', 'Protocol: json, json'),
    UPGRADE.replace('Upgrade: websocket', 'Upgrade: h2c'),
    UPGRADE.replace('\r\n\r\n', '\r\nContent-Length: 5\r\n\r\n'),
  ];
  for (const head of odd) {
    const s = new RequestScanner(ROUTES);
    t.equal(Buffer.concat(s.feed(Buffer.from(head))).toString(), head);
    t.equal(s.socketRequest, null);
  }
  const s = new RequestScanner(ROUTES);
  s.feed(Buffer.from(UPGRADE.replace('\r\n\r\n', '\r\nContent-Length: 0\r\n\r\n')));
  t.not(s.socketRequest, null, 'an empty body is none');
  t.end();
});

t.test('a refused upgrade leaves the connection reading requests', (t) => {
  const s = new RequestScanner(ROUTES);
  s.feed(Buffer.from(UPGRADE));
  s.feed(Buffer.from('GET /api/v1/server_settings HTTP/1.1\r\nHost: a\r\n\r\n'));
  const released = Buffer.concat(s.socketRefused()).toString('latin1');
  t.equal(released, 'GET /api/v1/server_settings HTTP/1.1\r\nHost: a\r\n\r\n');
  t.equal(s.socketRequest, null);
  t.ok(s.idle);
  t.end();
});

t.test('an event-socket upgrade after other requests on its connection is relayed', (t) => {
  const s = new RequestScanner(ROUTES);
  const first = 'GET /api/v1/server_settings HTTP/1.1\r\nHost: a\r\n\r\n';
  t.equal(Buffer.concat(s.feed(Buffer.from(first + UPGRADE))).toString(), first + UPGRADE);
  t.equal(s.socketRequest, null);
  t.end();
});

t.test('other upgrades, and no socket path, pass as they are', (t) => {
  const other = UPGRADE.replace('/api/v1/events/socket', '/elsewhere');
  t.equal(Buffer.concat(new RequestScanner(ROUTES).feed(Buffer.from(other))).toString(), other);
  const plain = new RequestScanner({ prefix: '/.guard-x' });
  t.equal(Buffer.concat(plain.feed(Buffer.from(UPGRADE))).toString(), UPGRADE);
  t.equal(plain.socketRequest, null);
  t.end();
});

t.test("uWS's verdict on an asked-about upgrade or poll", (t) => {
  const accepted =
    'HTTP/1.1 200 OK\r\nX-Guard-Socket: 42\r\nX-Guard-Protocol: msgpack\r\nContent-Length: 0\r\n\r\n';
  t.same(socketVerdict(Buffer.from(accepted)), {
    socket: 42,
    protocol: 'msgpack',
    poll: null,
    whole: true,
  });
  t.equal(socketVerdict(Buffer.from(accepted.slice(0, 30))), null, 'incomplete: wait');
  const body = '{"result":"error","msg":"Invalid API key","code":"INVALID_API_KEY"}';
  const refused = `HTTP/1.1 401 Unauthorized\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  t.equal(socketVerdict(Buffer.from(refused.slice(0, -5))), null, 'body incomplete: wait');
  t.same(socketVerdict(Buffer.from(refused)), {
    socket: null,
    protocol: '',
    poll: null,
    whole: true,
  });
  t.same(
    socketVerdict(Buffer.from('HTTP/1.1 500 Internal\r\nX-Guard-Socket: 1\r\n\r\n')),
    { socket: null, protocol: '', poll: null, whole: false },
    'no length: passed on',
  );
  const held = 'HTTP/1.1 200 OK\r\nX-Guard-Poll: 7\r\nContent-Length: 0\r\n\r\n';
  t.same(socketVerdict(Buffer.from(held)), { socket: null, protocol: '', poll: 7, whole: true });
  t.equal(
    socketVerdict(Buffer.from(held.replace('200 OK', '500 Internal')))?.poll,
    null,
    'a poll id only on a 200',
  );
  t.equal(
    socketVerdict(Buffer.from(held.replace('Content-Length: 0', 'Content-Length: 2') + '{}'))?.poll,
    null,
    'a poll id only without a body',
  );
  const closing = `HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  t.equal(socketVerdict(Buffer.from(closing))?.whole, false, 'an answer that closes: not whole');
  t.equal(
    socketVerdict(Buffer.from(refused + 'HTTP/1.1'))?.whole,
    false,
    'more than the answer: not whole',
  );
  t.end();
});

/** A server whose connections the guard's socket code takes as accepted upgrades. */
async function socketServer(t: Test, sockets: GuardSockets): Promise<number> {
  let next = 0;
  const server = net.createServer((c) => {
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      c.off('data', onData);
      c.pause();
      const lines = head.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      sockets.accept(++next, '', c, { url: lines[0]!.split(' ')[1]!, headers }, Buffer.alloc(0));
    };
    c.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

t.test('frames both ways; a silent client is closed after an idle period', async (t) => {
  const posted: Op[] = [];
  const sockets = new GuardSockets((b) => posted.push(...ops(b)), 1 << 20, 200);
  t.teardown(() => sockets.endAll());
  const port = await socketServer(t, sockets);

  // A live client (ws answers pings): frames reach it, its frames reach the main thread.
  const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/events/socket`);
  await new Promise((r) => ws.once('open', r));
  const got = new Promise<string>((r) => ws.once('message', (d: Buffer) => r(d.toString())));
  const b = new SocketBatchBuilder();
  b.add(1, SOCKET_OP.TEXT, '{"result":"success","events":[]}');
  sockets.apply(b.take());
  t.equal(await got, '{"result":"success","events":[]}');
  ws.send('{"last_event_id":3}');
  await waitFor(() => posted.some((o) => o.op === SOCKET_OP.TEXT));
  t.same(
    posted.filter((o) => o.id === 1).map((o) => [o.op, o.payload]),
    [
      [SOCKET_OP.OPEN, ''],
      [SOCKET_OP.TEXT, '{"last_event_id":3}'],
    ],
  );

  // A client that completes the handshake and then never answers a ping.
  const raw = net.connect(port, '127.0.0.1');
  raw.write(
    'GET /api/v1/events/socket HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  raw.on('data', () => {}); // reads, never answers
  await new Promise((r) => raw.once('close', r));
  await waitFor(() => posted.some((o) => o.id === 2 && o.op === SOCKET_OP.CLOSED));
  t.ok(
    posted.some((o) => o.id === 2 && o.op === SOCKET_OP.CLOSED),
    'the silent socket is reported closed',
  );
  t.equal(ws.readyState, WebSocket.OPEN, 'the live one stays');
  ws.terminate();
});

t.test('frames of every length class reach a client whole', async (t) => {
  const sockets = new GuardSockets(() => {}, 1 << 30);
  t.teardown(() => sockets.endAll());
  const port = await socketServer(t, sockets);
  const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/events/socket`);
  await new Promise((r) => ws.once('open', r));
  const received: { data: Buffer; binary: boolean }[] = [];
  ws.on('message', (data: Buffer, binary: boolean) => received.push({ data, binary }));
  const sizes = [0, 1, 125, 126, 65535, 65536, 70000];
  const b = new SocketBatchBuilder();
  for (const n of sizes)
    b.add(1, n % 2 === 0 ? SOCKET_OP.BINARY : SOCKET_OP.TEXT, Buffer.alloc(n, 0x61 + (n % 26)));
  sockets.apply(b.take());
  await waitFor(() => received.length === sizes.length);
  t.same(
    received.map((r) => [
      r.data.length,
      r.binary,
      r.data.every((x) => x === 0x61 + (r.data.length % 26)),
    ]),
    sizes.map((n) => [n, n % 2 === 0, true]),
  );
  ws.terminate();
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
}
