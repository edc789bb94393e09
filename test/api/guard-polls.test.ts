/**
 * Long-polls held by the HTTP guard itself (src/http/guard-polls.ts), against the real server over
 * raw sockets: a held poll costs the server's process one file descriptor rather than three (the
 * guard's connection to uWS is closed while it waits), answers reach the clients, a connection's
 * next poll is held the same way, what a client pipelines behind its poll is answered after it, in
 * order, and a poll the guard does not take (`Connection: close`) is relayed as before.
 */
import fs from 'node:fs';
import net from 'node:net';
import t from 'tap';
import { basicAuth } from '../helpers/api.js';
import { register, until } from '../helpers/events.js';
import { startServer } from '../helpers/server.js';

type Response = { status: number; headers: string; body: string };

/** A raw keep-alive connection: writes requests, collects Content-Length framed responses. */
class Conn {
  readonly sock: net.Socket;
  private text = '';
  readonly responses: Response[] = [];
  closed = false;

  constructor(port: number) {
    this.sock = net.connect(port, '127.0.0.1');
    this.sock.on('data', (c: Buffer) => {
      this.text += c.toString('utf8');
      for (;;) {
        const end = this.text.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = this.text.slice(0, end);
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (Buffer.byteLength(this.text.slice(end + 4)) < length) return;
        const body = Buffer.from(this.text.slice(end + 4))
          .subarray(0, length)
          .toString('utf8');
        this.responses.push({
          status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0),
          headers: head,
          body,
        });
        this.text = this.text.slice(end + 4 + body.length);
      }
    });
    this.sock.on('close', () => (this.closed = true));
    this.sock.on('error', () => {});
  }

  send(bytes: string): void {
    this.sock.write(bytes);
  }

  async answers(n: number, what: string): Promise<Response[]> {
    await until(() => this.responses.length >= n, what);
    return this.responses.slice(0, n);
  }
}

/** Descriptors this process holds (the server runs in it, with the guard's thread). */
/**
 * This process's socket descriptors (the test's clients, the guard's and uWS's ends): only
 * sockets, as the database files, worker threads' pipes and the like of this and earlier servers
 * in the process open and close on their own schedule (a count of every descriptor failed CI once,
 * files closing meanwhile).
 */
function descriptors(): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed meanwhile (the readdir's own descriptor)
    }
  }
  return n;
}

/** This process's descriptors by kind (socket, pipe, anon_inode:…, file), for failure messages. */
function descriptorKinds(): string {
  const kinds = new Map<string, number>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let link: string;
    try {
      link = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the readdir's own descriptor)
    }
    const kind = /^(socket|pipe|anon_inode:[^\]]*)/.exec(link)?.[1] ?? 'file';
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds].map(([k, n]) => `${k} ${n}`).join(', ');
}

const N = 40;
/** The guard holds every poll it can (by default only once its descriptors run short). */
const ALWAYS = { httpGuardPolls: 'always' } as const;

t.test('held long-polls: one descriptor each, answered, held again, released', async (t) => {
  const ts = await startServer(t, ALWAYS);
  const { fx, api, server } = ts;
  const queues = server.context.queues;
  const hamlet = fx.users.hamlet!;
  const head =
    `Host: testserver.local\r\nAuthorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n` +
    'User-Agent: raw\r\n\r\n';
  const poll = (queue: string, last: number) =>
    `GET /api/v1/events?queue_id=${queue}&last_event_id=${last} HTTP/1.1\r\n${head}`;

  const before = descriptors();
  const conns = Array.from({ length: N }, () => new Conn(server.port));
  // Each registers on its connection, then polls on it (as the Python bindings' session does):
  // the poll is held by the guard once the register is answered.
  for (const c of conns) c.send(`POST /api/v1/register HTTP/1.1\r\nContent-Length: 0\r\n${head}`);
  const ids: string[] = [];
  for (const c of conns) {
    const [r] = await c.answers(1, 'registered');
    ids.push((JSON.parse(r!.body) as { queue_id: string }).queue_id);
  }
  conns.forEach((c, i) => c.send(poll(ids[i]!, -1)));
  await until(() => queues.consumers().waiting === N, 'every poll is held');
  // This process holds each test socket (1) and the guard's end of it (1): 2 per poll. Relayed to
  // uWS a poll would hold two more (the guard's connection to uWS and uWS's end of it).
  await until(
    () => descriptors() - before <= 2 * N + 8,
    `held polls at two descriptors each here (now ${descriptors() - before} for ${N})`,
  );
  t.pass(`${N} held polls: ${descriptors() - before} descriptors (tests' sockets included)`);

  // One event answers every poll through the guard.
  const sent = await api.post('othello', 'messages', {
    type: 'direct',
    to: JSON.stringify([hamlet.id]),
    content: 'through the guard',
  });
  const first = await Promise.all(conns.map((c) => c.answers(2, 'the poll is answered')));
  let delivered = 0;
  for (const [, r] of first) {
    const body = JSON.parse(r!.body) as { result: string; events: { id: number; type: string }[] };
    if (
      r!.status === 200 &&
      body.result === 'success' &&
      body.events.some(
        (e) =>
          e.type === 'message' && (e as { message?: { id: number } }).message?.id === sent.body.id,
      )
    )
      delivered++;
    t.match(r!.headers, /\r\ncontent-type: application\/json/i);
  }
  t.equal(delivered, N, 'every held poll got the message');

  // The next poll on each connection is held by the guard again, read by the guard itself and
  // served with no connection to uWS.
  const askedBefore = server.guardAskedPolls;
  conns.forEach((c, i) => {
    const body = JSON.parse(c.responses[1]!.body) as { events: { id: number }[] };
    c.send(poll(ids[i]!, body.events.at(-1)!.id));
  });
  await until(() => queues.consumers().waiting === N, 'every second poll is held');
  await until(
    () => descriptors() - before <= 2 * N + 8,
    'the second polls at two descriptors each here too',
  );
  t.notOk(
    conns.some((c) => c.closed),
    'the connections stayed open between polls',
  );
  t.equal(server.guardAskedPolls - askedBefore, N, 'every second poll was served without uWS');

  // Clients that leave release their polls (as uWS's aborted requests did).
  for (const c of conns.slice(0, N / 2)) c.sock.destroy();
  await until(() => queues.consumers().waiting === N / 2, 'the abandoned polls are released');
  // The rest are answered by a typing notification, then leave.
  await api.post('othello', 'typing', { op: 'start', to: JSON.stringify([hamlet.id]) });
  for (const c of conns.slice(N / 2)) {
    const [, , second] = await c.answers(3, 'the second poll is answered');
    t.equal(second!.status, 200);
    t.match(JSON.parse(second!.body), { events: [{ type: 'typing' }] });
    c.sock.destroy();
  }
  await until(() => descriptors() - before <= 8, 'every descriptor is given back');
});

t.test('what a client pipelines behind its poll is answered after it, in order', async (t) => {
  const { fx, api, server } = await startServer(t, ALWAYS);
  const hamlet = fx.users.hamlet!;
  const head = `Host: testserver.local\r\nAuthorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n\r\n`;
  const { queue_id } = await register(t, api, 'hamlet');
  const c = new Conn(server.port);
  t.teardown(() => c.sock.destroy());
  c.send(
    `GET /api/v1/events?queue_id=${queue_id}&last_event_id=-1 HTTP/1.1\r\n${head}` +
      `GET /api/v1/users/me HTTP/1.1\r\n${head}`,
  );
  await until(() => server.context.queues.consumers().waiting === 1, 'the poll is held');
  await new Promise((r) => setTimeout(r, 100));
  t.equal(c.responses.length, 0, 'nothing is answered before the poll');
  await api.post('othello', 'typing', { op: 'start', to: JSON.stringify([hamlet.id]) });
  const [events, me] = await c.answers(2, 'both answered');
  t.match(JSON.parse(events!.body), { result: 'success', events: [{ type: 'typing' }] });
  t.match(JSON.parse(me!.body), { result: 'success', email: hamlet.email });
  // And the connection goes on.
  c.send(`GET /api/v1/users/me HTTP/1.1\r\n${head}`);
  const third = await c.answers(3, 'a third request');
  t.equal(third[2]!.status, 200);
});

t.test('polls answered at once, and polls the guard relays as before', async (t) => {
  const { fx, api, server } = await startServer(t, ALWAYS);
  const hamlet = fx.users.hamlet!;
  const auth = `Authorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n`;
  const { queue_id } = await register(t, api, 'hamlet');
  const poll = (extra: string, q = `&last_event_id=-1`) =>
    `GET /api/v1/events?queue_id=${queue_id}${q} HTTP/1.1\r\nHost: testserver.local\r\n${auth}${extra}\r\n`;

  // dont_block: answered at once; the connection goes on to another request and another poll.
  const c = new Conn(server.port);
  t.teardown(() => c.sock.destroy());
  c.send(poll('', '&last_event_id=-1&dont_block=true'));
  const [now] = await c.answers(1, 'dont_block answered');
  t.match(JSON.parse(now!.body), { result: 'success', events: [] });
  c.send(`GET /api/v1/users/me HTTP/1.1\r\nHost: testserver.local\r\n${auth}\r\n`);
  await c.answers(2, 'the next request');
  c.send(poll(''));
  await until(() => server.context.queues.consumers().waiting === 1, 'then a poll is held');
  // An error is answered at once too.
  const bad = new Conn(server.port);
  t.teardown(() => bad.sock.destroy());
  bad.send(
    `GET /api/v1/events?queue_id=nope&last_event_id=-1 HTTP/1.1\r\nHost: testserver.local\r\n${auth}\r\n`,
  );
  const [refused] = await bad.answers(1, 'a bad queue id');
  t.equal(refused!.status, 400);
  t.match(JSON.parse(refused!.body), { code: 'BAD_EVENT_QUEUE_ID' });

  // Relayed as before: a poll with Connection: close is answered, then the connection ends. (On
  // a queue of its own: a new poll on a queue answers the one held there.)
  const other = await register(t, api, 'hamlet');
  const r = new Conn(server.port);
  r.send(
    `GET /api/v1/events?queue_id=${other.queue_id}&last_event_id=-1&dont_block=true HTTP/1.1\r\n` +
      `Host: testserver.local\r\n${auth}Connection: close\r\n\r\n`,
  );
  const [answer] = await r.answers(1, 'Connection: close');
  t.equal(answer!.status, 200, 'Connection: close: answered');
  await until(() => r.closed, 'Connection: close: the connection ends');
  await api.post('othello', 'typing', { op: 'start', to: JSON.stringify([hamlet.id]) });
  const [, , held] = await c.answers(3, 'the held poll is answered');
  t.match(JSON.parse(held!.body), { events: [{ type: 'typing' }] });
});

t.test('a held poll is answered when the server shuts down', async (t) => {
  const { fx, api, server } = await startServer(t, ALWAYS);
  const hamlet = fx.users.hamlet!;
  const { queue_id } = await register(t, api, 'hamlet');
  const c = new Conn(server.port);
  c.send(
    `GET /api/v1/events?queue_id=${queue_id}&last_event_id=-1 HTTP/1.1\r\n` +
      `Host: testserver.local\r\nAuthorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n\r\n`,
  );
  await until(() => server.context.queues.consumers().waiting === 1, 'the poll is held');
  await server.close();
  const [r] = await c.answers(1, 'answered at shutdown');
  t.equal(r!.status, 200);
  t.equal((JSON.parse(r!.body) as { result: string }).result, 'success');
  await until(() => c.closed, 'then the connection ends');
});

t.test('by default the guard holds polls only once its connections run short', async (t) => {
  // At most 24 connections: polls are held once 18 are taken.
  const { fx, server } = await startServer(t, { httpMaxConnections: 24 });
  const queues = server.context.queues;
  const hamlet = fx.users.hamlet!;
  const head =
    `Host: testserver.local\r\nAuthorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n` +
    'Content-Length: 0\r\n\r\n';
  // Every connection registers before any polls: the guard decides when it reads a poll, by the
  // connections it holds then, so all of them are to be in its hands by then (under load, polls
  // sent as each register was answered could reach it before later connections were accepted).
  const pollOn = async (conns: Conn[]) => {
    for (const c of conns) c.send(`POST /api/v1/register HTTP/1.1\r\n${head}`);
    const queueIds: string[] = [];
    for (const c of conns) {
      const [r] = await c.answers(1, 'registered');
      queueIds.push((JSON.parse(r!.body) as { queue_id: string }).queue_id);
    }
    conns.forEach((c, i) =>
      c.send(`GET /api/v1/events?queue_id=${queueIds[i]}&last_event_id=-1 HTTP/1.1\r\n${head}`),
    );
  };
  const before = descriptors();
  const kindsBefore = descriptorKinds();
  const few = Array.from({ length: 4 }, () => new Conn(server.port));
  t.teardown(() => few.forEach((c) => c.sock.destroy()));
  await pollOn(few);
  await until(() => queues.consumers().waiting === 4, 'four polls held');
  await new Promise((r) => setTimeout(r, 200));
  const relayed = descriptors() - before;
  t.ok(
    relayed >= 4 * 4,
    `four polls relayed while connections are plenty (${relayed} descriptors; ` +
      `before: ${kindsBefore}; now: ${descriptorKinds()})`,
  );
  const more = Array.from({ length: 18 }, () => new Conn(server.port));
  t.teardown(() => more.forEach((c) => c.sock.destroy()));
  await pollOn(more);
  await until(() => queues.consumers().waiting === 22, 'every poll held');
  await until(
    () => descriptors() - before <= 4 * 4 + 18 * 2 + 8,
    `the polls past three quarters held by the guard (${descriptors() - before} descriptors; ` +
      `before: ${kindsBefore}; now: ${descriptorKinds()})`,
  );
  t.pass(`22 polls: ${descriptors() - before} descriptors (88 if all were relayed)`);
});
