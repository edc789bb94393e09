/**
 * The HTTP guard's request scanner and PROXY header (src/http/guard.ts), fed bytes directly: what
 * it passes, cleans or replaces, however the bytes are split.
 */
import type net from 'node:net';
import t from 'tap';
import { configFromEnv } from '../../src/config.js';
import {
  FD_RESERVE,
  FDS_PER_RELAY,
  ipv6Bytes,
  openFilesLimit,
  proxyHeader,
  relayCapacity,
  descriptorBudget,
  ResponseCounter,
  roomForOneMore,
  RequestScanner,
} from '../../src/http/guard.js';

const routes = { prefix: '/.guard-test' };

/** Feeds `input` split at `cuts` and returns everything passed on. */
function scan(input: string, cuts: number[] = []): string {
  const s = new RequestScanner(routes);
  const out: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, input.length]) {
    out.push(...s.feed(Buffer.from(input.slice(from, at), 'latin1')));
    from = at;
  }
  return Buffer.concat(out).toString('latin1');
}

const get = (extra = '') => `GET /a HTTP/1.1\r\nHost: h\r\n${extra}\r\n`;

t.test('well-formed requests pass unchanged, however split', (t) => {
  const body = 'x=1\r\n\r\nQUERY / HTTP/1.1\r\nX_Y: 1\r\n\r\n';
  const input =
    get() +
    `POST /b HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
    `POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nQUERY\r\n3;ext=1\r\n_:_\r\n0\r\nX-T: 1\r\n\r\n` +
    get();
  for (let cut = 0; cut <= input.length; cut++) {
    const out = scan(input, [cut]);
    if (out !== input) {
      t.equal(out, input, `split at ${cut}`);
      break;
    }
  }
  t.equal(scan(input), input, 'every split passes the same bytes');
  t.end();
});

t.test('header names uWS does not parse are dropped, the rest kept in order', (t) => {
  t.equal(scan(get('X_A: 1\r\nX-B: 2\r\nX.C: 3\r\n')), get('X-B: 2\r\n'));
  t.end();
});

t.test('HTTP/1.0 requests pass as HTTP/1.1, closing unless kept alive', (t) => {
  const v10 = (extra = '') => `GET /a HTTP/1.0\r\nHost: h\r\n${extra}\r\n`;
  t.equal(scan(v10()), 'GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
  t.equal(
    scan(v10('Connection: Keep-Alive\r\n') + get()),
    'GET /a HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive\r\n\r\n' + get(),
    'kept alive as asked; the next request unchanged',
  );
  t.equal(
    scan(v10('Connection: TE\r\nX-A: 1\r\n')),
    'GET /a HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nConnection: close\r\n\r\n',
    'any other Connection header gives way to close',
  );
  const post = `POST /b HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc`;
  t.equal(
    scan(post),
    'POST /b HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc',
    'its body follows',
  );
  t.end();
});

t.test('what uWS would hold or drop is replaced by the guard route, and nothing after', (t) => {
  const route = (status: number, what: string) =>
    `GET /.guard-test/${status}/${what} HTTP/1.1\r\nHost: guard\r\nConnection: close\r\n\r\n`;
  t.equal(scan(get() + 'PROPFIND / HTTP/1.1\r\n\r\n' + get()), get() + route(501, 'PROPFIND'));
  t.equal(scan(get('NoColon\r\n')), route(400, 'header'));
  t.equal(scan(get(' folded\r\n')), route(400, 'header'));
  t.equal(scan(get(`X-Big: ${'a'.repeat(600_000)}\r\n`)), route(431, 'head'));
  t.equal(scan(`GET /a HTTP/1.1\r\nX: ${'a'.repeat(600_000)}`), route(431, 'head'), 'unfinished');
  t.end();
});

t.test('what is not HTTP/1.x, upgrades and bad framing pass raw (uWS decides)', (t) => {
  const proxy = '\r\n\r\n\0\r\nQUIT\n!\x11\0\x0c' + 'abcdefghijkl';
  t.equal(
    scan(proxy + get('X_A: 1\r\n')),
    proxy + get('X_A: 1\r\n'),
    'a PROXY header from a client',
  );
  t.equal(scan('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
  const upgrade = get('Upgrade: websocket\r\n') + '\x81\x05QUERY\r\n\r\nX_A: 1\r\n\r\n';
  t.equal(scan(upgrade), upgrade, 'after an upgrade, frames pass as they are');
  const bad =
    'POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nQUERY / HTTP/1.1\r\n\r\n';
  t.equal(scan(bad), bad);
  t.end();
});

t.test("uWS's answers are counted, however split", (t) => {
  const answer = (status: string, body: string, extra = '') =>
    `HTTP/1.1 ${status}\r\nDate: x\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const three =
    answer('200 OK', '{"a":"\r\n\r\nHTTP/1.1 200 OK"}') +
    'HTTP/1.1 100 Continue\r\n\r\n' +
    answer('404 Not Found', '') +
    answer('413 Payload Too Large', 'x'.repeat(70_000), 'Connection: close\r\n');
  const count = (input: string, cuts: number[]) => {
    const c = new ResponseCounter();
    let from = 0;
    for (const at of [...cuts, input.length]) {
      c.feed(Buffer.from(input.slice(from, at), 'latin1'));
      from = at;
    }
    return c;
  };
  for (let cut = 0; cut <= 200; cut++) {
    const c = count(three, [cut, cut + 37]);
    if (c.done !== 3 || c.lost) {
      t.fail(`split at ${cut}: ${c.done} counted`);
      break;
    }
  }
  t.equal(count(three, []).done, 3, 'a body that looks like an answer is a body');
  t.equal(count(three.slice(0, -1), []).done, 2, 'not the last one until it is whole');
  const noLength = count('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', []);
  t.ok(noLength.lost, 'an answer without a length: counting ends');
  t.ok(count('HTTP/1.1 101 Switching Protocols\r\n\r\n', []).lost, 'an upgrade: counting ends');
  t.end();
});

t.test('a poll is asked about only once every request before it is answered', (t) => {
  const routes = { prefix: '/.guard-test', socket: '/s', poll: '/api/v1/events' };
  const poll = 'GET /api/v1/events?queue_id=q&last_event_id=1 HTTP/1.1\r\nHost: h\r\n\r\n';
  const asked = 'GET /.guard-test/poll?queue_id=q&last_event_id=1 HTTP/1.1\r\nHost: h\r\n\r\n';
  let answered: number | null = 0;
  const s = new RequestScanner(routes, () => answered);
  t.equal(Buffer.concat(s.feed(Buffer.from(poll))).toString(), asked, 'the first request');
  t.ok(s.pollAsked);

  const after = (done: number | null, before: string) => {
    answered = done;
    const sc = new RequestScanner(routes, () => answered);
    sc.feed(Buffer.from(before));
    return Buffer.concat(sc.feed(Buffer.from(poll))).toString();
  };
  t.equal(after(1, get()), asked, 'after an answered request');
  t.equal(after(0, get()), poll, 'after one not yet answered: relayed');
  t.equal(after(null, get()), poll, 'answers not counted: relayed');
  t.equal(after(1, 'HEAD /a HTTP/1.1\r\n\r\n'), poll, 'after a HEAD: relayed');
  t.equal(after(0, ''), asked);
  const closing = poll.replace('Host: h', 'Host: h\r\nConnection: close');
  answered = 0;
  t.equal(
    Buffer.concat(new RequestScanner(routes, () => 0).feed(Buffer.from(closing))).toString(),
    closing,
    'Connection: close: relayed',
  );
  t.end();
});

t.test('PROXY v2 headers carry the client address', (t) => {
  const sock = (remoteAddress: string, localAddress: string) =>
    ({ remoteAddress, localAddress, remotePort: 40000, localPort: 9991 }) as net.Socket;
  const v4 = proxyHeader(sock('::ffff:10.1.2.3', '::ffff:127.0.0.1'));
  t.same([...v4.subarray(12, 16)], [0x21, 0x11, 0, 12], 'PROXY, TCP over IPv4, 12 bytes');
  t.same([...v4.subarray(16, 24)], [10, 1, 2, 3, 127, 0, 0, 1]);
  t.equal(v4.readUInt16BE(24), 40000);
  t.equal(v4.readUInt16BE(26), 9991);
  const v6 = proxyHeader(sock('2001:db8::1', '::1'));
  t.same([...v6.subarray(12, 16)], [0x21, 0x21, 0, 36], 'PROXY, TCP over IPv6, 36 bytes');
  t.equal(v6.subarray(16, 32).toString('hex'), '20010db8000000000000000000000001');
  t.equal(v6.subarray(32, 48).toString('hex'), '00000000000000000000000000000001');
  t.same([...proxyHeader(sock('', '')).subarray(12, 16)], [0x20, 0, 0, 0], 'LOCAL when unknown');
  t.equal(ipv6Bytes('::ffff:1.2.3.4').toString('hex'), '00000000000000000000ffff01020304');
  t.end();
});

t.test('the connection limit follows the open-files limit', (t) => {
  const limit = openFilesLimit();
  if (process.platform === 'linux') t.ok(limit !== null && limit > 0, `read: ${limit}`);
  t.equal(relayCapacity(20_000), Math.floor((20_000 - FD_RESERVE) / FDS_PER_RELAY));
  t.equal(relayCapacity(1024), Math.floor((1024 - FD_RESERVE) / FDS_PER_RELAY));
  t.equal(relayCapacity(100), 16, 'never below a floor');
  t.equal(relayCapacity(null), Number.MAX_SAFE_INTEGER, 'unknown: no bound of its own');
  t.equal(descriptorBudget(20_000), 20_000 - FD_RESERVE, 'event WebSockets: one descriptor each');
  t.equal(descriptorBudget(100), 16 * FDS_PER_RELAY, 'never below a floor');
  t.equal(descriptorBudget(null), Number.MAX_SAFE_INTEGER);
  const limits = { maxRelays: Number.MAX_SAFE_INTEGER, maxDescriptors: 30 };
  t.ok(roomForOneMore(9, 0, limits), 'a tenth relayed connection fits 30 descriptors');
  t.notOk(roomForOneMore(10, 0, limits), 'an eleventh does not');
  t.ok(roomForOneMore(0, 27, limits), '27 event sockets leave room for one relay');
  t.notOk(roomForOneMore(1, 25, limits), 'one relay and 25 sockets do not');
  t.notOk(roomForOneMore(1, 2, { maxRelays: 3, maxDescriptors: 1000 }), 'connections counted');
  t.equal(configFromEnv({}).httpMaxConnections, null, 'from the limit by default');
  t.equal(configFromEnv({ HTTP_MAX_CONNECTIONS: '5000' }).httpMaxConnections, 5000);
  for (const bad of ['0', '-1', 'many', '1e9'])
    t.throws(() => configFromEnv({ HTTP_MAX_CONNECTIONS: bad }), /bad environment: HTTP_MAX/);
  t.end();
});
