/**
 * Per-address limits (src/http/address-limits.ts; docs/robustness.md "Per-address limits"), with
 * raw sockets from several loopback addresses: what one address holds (held long-polls, event
 * WebSockets, requests in flight) and its requests without credentials are capped, another
 * address is served meanwhile, a trusted proxy's clients are told apart by X-Forwarded-For, and
 * the exempt address (127.0.0.1 by default) is not counted.
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { basicAuth } from '../helpers/api.js';
import { register, until } from '../helpers/events.js';
import { startServer, type TestServer } from '../helpers/server.js';

type Answer = { status: number | null; head: string; body: string; closed: boolean };

/** A raw connection from `from` that sent `bytes`: its first answer, once there is one. */
class Raw {
  readonly sock: net.Socket;
  private text = '';
  private closed = false;
  private waiters: (() => void)[] = [];

  constructor(port: number, from: string, bytes: string) {
    this.sock = net.connect({ port, host: '127.0.0.1', localAddress: from });
    this.sock.on('connect', () => this.sock.write(bytes));
    this.sock.on('data', (c: Buffer) => {
      this.text += c.toString('latin1');
      this.wake();
    });
    this.sock.on('close', () => {
      this.closed = true;
      this.wake();
    });
    this.sock.on('error', () => {});
  }

  /** Writes more of the request (a body sent late). */
  write(bytes: string): void {
    this.sock.write(bytes);
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private complete(): boolean {
    const end = this.text.indexOf('\r\n\r\n');
    if (end === -1) return false;
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(this.text.slice(0, end))?.[1] ?? 0);
    return this.text.length >= end + 4 + length;
  }

  /** Waits for a whole answer (or the close). */
  async answer(): Promise<Answer> {
    while (!this.complete() && !this.closed)
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    const end = this.text.indexOf('\r\n\r\n');
    return {
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(this.text)?.[1] ?? 0) || null,
      head: end === -1 ? this.text : this.text.slice(0, end),
      body: end === -1 ? '' : this.text.slice(end + 4),
      closed: this.closed,
    };
  }

  /** Waits for the server to close the connection. */
  async ended(): Promise<boolean> {
    while (!this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return true;
  }

  /** Whether anything came back yet. */
  get answered(): boolean {
    return this.text !== '' || this.closed;
  }

  close(): void {
    this.sock.destroy();
  }
}

const HOST = 'Host: testserver.local\r\n';

function pollBytes(ts: TestServer, queueId: string, extra = ''): string {
  const hamlet = ts.fx.users.hamlet!;
  return (
    `GET /api/v1/events?queue_id=${queueId}&last_event_id=-1 HTTP/1.1\r\n${HOST}` +
    `Authorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n${extra}\r\n`
  );
}

/** A WebSocket from `from`: open, or the status it was refused with. */
function socketFrom(
  ts: TestServer,
  from: string,
  queueId: string,
): Promise<{ ws: WebSocket } | { status: number; body: string }> {
  const hamlet = ts.fx.users.hamlet!;
  const url = `ws://127.0.0.1:${ts.server.port}/api/v1/events/socket?queue_id=${queueId}&last_event_id=-1`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [], {
      localAddress: from,
      headers: {
        host: 'testserver.local',
        authorization: basicAuth(hamlet.email, hamlet.api_key),
      },
    });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

function assertRefused(t: Test, a: Answer, what: string): void {
  t.equal(a.status, 429, `${what}: 429`);
  t.match(JSON.parse(a.body), {
    result: 'error',
    code: 'RATE_LIMIT_HIT',
    msg: 'Too many requests at once from this address',
    'retry-after': 5,
  });
  t.match(a.head, /\r\nretry-after: 5/i);
}

t.test('what one address holds is capped; another address is served', async (t) => {
  const ts = await startServer(t, { maxConnectionsPerAddress: 4, maxUnauthenticatedPerAddress: 2 });
  const limits = ts.server.context.addressLimits!;
  const queues: string[] = [];
  for (let i = 0; i < 8; i++) queues.push((await register(t, ts.api, 'hamlet')).queue_id);
  const port = ts.server.port;

  // Four held polls from 127.0.0.2: its whole share.
  const held = queues.slice(0, 4).map((q) => new Raw(port, '127.0.0.2', pollBytes(ts, q)));
  t.teardown(() => held.forEach((r) => r.close()));
  await until(() => limits.heldBy('127.0.0.2') === 4, 'four polls held from 127.0.0.2');
  t.notOk(
    held.some((r) => r.answered),
    'the four are held (no answer yet)',
  );

  const fifth = new Raw(port, '127.0.0.2', pollBytes(ts, queues[4]!));
  const refused = await fifth.answer();
  assertRefused(t, refused, 'a fifth poll from the same address');
  t.ok(await fifth.ended(), 'and its connection is closed');

  const socket = await socketFrom(ts, '127.0.0.2', queues[5]!);
  t.ok('status' in socket && socket.status === 429, 'a WebSocket from the same address: 429');

  // Another address is served meanwhile: a poll held, a socket opened.
  const other = new Raw(port, '127.0.0.3', pollBytes(ts, queues[6]!));
  t.teardown(() => other.close());
  await until(() => limits.heldBy('127.0.0.3') === 1, 'a poll held from 127.0.0.3');
  const otherSocket = await socketFrom(ts, '127.0.0.3', queues[7]!);
  t.ok('ws' in otherSocket, 'a WebSocket from another address opens');
  if ('ws' in otherSocket) t.teardown(() => otherSocket.ws.terminate());
  await until(() => limits.heldBy('127.0.0.3') === 2, 'the socket counts for 127.0.0.3');

  // A poll that ends gives its share back.
  held[0]!.close();
  await until(() => limits.heldBy('127.0.0.2') === 3, 'the closed poll is given back');
  const again = new Raw(port, '127.0.0.2', pollBytes(ts, queues[4]!));
  t.teardown(() => again.close());
  await until(() => limits.heldBy('127.0.0.2') === 4, 'a new poll from 127.0.0.2 is held');
  t.notOk(again.answered, 'and held, not refused');

  // Everything given back once the clients are gone.
  for (const r of [...held, again, other]) r.close();
  if ('ws' in otherSocket) otherSocket.ws.terminate();
  await until(() => limits.addresses === 0, 'every address gave everything back');
  t.equal(limits.refused, 2, 'two refusals');
});

t.test('requests without credentials are capped per address', async (t) => {
  const ts = await startServer(t, { maxConnectionsPerAddress: 4, maxUnauthenticatedPerAddress: 2 });
  const limits = ts.server.context.addressLimits!;
  const port = ts.server.port;
  const slowLogin =
    `POST /api/v1/fetch_api_key HTTP/1.1\r\n${HOST}` +
    'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\nusername=';
  // Two anonymous requests whose bodies trickle in: the address's whole anonymous share.
  const slow = [new Raw(port, '127.0.0.2', slowLogin), new Raw(port, '127.0.0.2', slowLogin)];
  t.teardown(() => slow.forEach((r) => r.close()));
  await until(() => limits.heldBy('127.0.0.2') === 2, 'two slow anonymous requests in flight');

  const third = new Raw(port, '127.0.0.2', `GET /api/v1/server_settings HTTP/1.1\r\n${HOST}\r\n`);
  assertRefused(t, await third.answer(), 'a third anonymous request');

  const hamlet = ts.fx.users.hamlet!;
  const authed = new Raw(
    port,
    '127.0.0.2',
    `GET /api/v1/users/me HTTP/1.1\r\n${HOST}Authorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n\r\n`,
  );
  t.equal((await authed.answer()).status, 200, 'an authenticated request from it is served');
  authed.close();

  const elsewhere = new Raw(
    port,
    '127.0.0.3',
    `GET /api/v1/server_settings HTTP/1.1\r\n${HOST}\r\n`,
  );
  t.equal((await elsewhere.answer()).status, 200, 'an anonymous request from another address');
  elsewhere.close();

  // One slow body completes: answered, and its share is given back.
  slow[0]!.write('nobody%40example.com&password=xxxxxxxxx'.slice(0, 31));
  const done = await slow[0]!.answer();
  t.ok(
    done.status !== null && done.status >= 400 && done.status < 500,
    'the slow login is answered',
  );
  await until(() => limits.heldBy('127.0.0.2') === 1, 'its share is given back');
  const now = new Raw(port, '127.0.0.2', `GET /api/v1/server_settings HTTP/1.1\r\n${HOST}\r\n`);
  t.equal((await now.answer()).status, 200, 'the address may send an anonymous request again');
  now.close();
});

t.test('behind a trusted proxy, clients are told apart by X-Forwarded-For', async (t) => {
  const ts = await startServer(t, {
    maxConnectionsPerAddress: 2,
    trustedProxies: ['127.0.0.4'],
  });
  const limits = ts.server.context.addressLimits!;
  const port = ts.server.port;
  const queues: string[] = [];
  for (let i = 0; i < 6; i++) queues.push((await register(t, ts.api, 'hamlet')).queue_id);
  const via = (q: string, client: string, from = '127.0.0.4') =>
    new Raw(port, from, pollBytes(ts, q, `X-Forwarded-For: ${client}\r\n`));
  const a = [via(queues[0]!, '192.0.2.1'), via(queues[1]!, '192.0.2.1')];
  t.teardown(() => a.forEach((r) => r.close()));
  await until(() => limits.heldBy('192.0.2.1') === 2, "192.0.2.1's two polls held");
  assertRefused(t, await via(queues[2]!, '192.0.2.1').answer(), "192.0.2.1's third poll");
  const b = via(queues[3]!, '192.0.2.2');
  t.teardown(() => b.close());
  await until(() => limits.heldBy('192.0.2.2') === 1, 'another client of the proxy is served');
  t.equal(limits.heldBy('127.0.0.4'), 0, 'the proxy itself holds nothing');
  // An address a client claims through a proxy that is not trusted is not believed.
  const spoof = via(queues[4]!, '192.0.2.3', '127.0.0.5');
  t.teardown(() => spoof.close());
  await until(() => limits.heldBy('127.0.0.5') === 1, 'counted as the peer it is');
  t.equal(limits.heldBy('192.0.2.3'), 0);
});

t.test('the exempt address (127.0.0.1) is not counted', async (t) => {
  const ts = await startServer(t, { maxConnectionsPerAddress: 2 });
  const limits = ts.server.context.addressLimits!;
  const queues: string[] = [];
  for (let i = 0; i < 4; i++) queues.push((await register(t, ts.api, 'hamlet')).queue_id);
  const polls = queues.map((q) => new Raw(ts.server.port, '127.0.0.1', pollBytes(ts, q)));
  t.teardown(() => polls.forEach((r) => r.close()));
  await until(() => ts.server.context.queues.consumers().waiting === 4, 'four polls held');
  t.equal(limits.addresses, 0, 'nothing counted');
  t.notOk(
    polls.some((r) => r.answered),
    'none refused',
  );
});
