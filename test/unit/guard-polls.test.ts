/**
 * The pieces of the long-polls the HTTP guard holds (src/http/guard-polls.ts): the answer as the
 * main thread writes it into bytes (PollAnswer), and the guard's side over real loopback sockets:
 * an answer that arrives before its poll's verdict, what a client sends while its poll is held, a
 * client that leaves, a poll the main thread never answers (closed after the limit, and reported),
 * a connection that sends nothing after its answer (ended after the parked limit).
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { GuardPolls } from '../../src/http/guard-polls.js';
import { PollAnswer } from '../../src/http/poll-answer.js';
import { send } from '../../src/http/respond.js';
import type { RequestContext } from '../../src/http/request.js';

function answerOf(write: (a: PollAnswer) => void): { bytes: string; close: boolean }[] {
  const out: { bytes: string; close: boolean }[] = [];
  write(new PollAnswer((b, close) => out.push({ bytes: b.toString('utf8'), close })));
  return out;
}

/** What `send` reads of a request. */
const request = (aborted = false) =>
  ({
    aborted,
    done: false,
    rate: null,
    acceptEncoding: '',
    onAbort: () => {},
  }) as unknown as RequestContext;

t.test('PollAnswer: the response uWS would have written, as bytes', (t) => {
  const ctx = request();
  const [small] = answerOf((a) => send(a.asResponse(), ctx, 200, '{"result":"success"}'));
  t.equal(
    small!.bytes,
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"result":"success"}',
  );
  t.equal(small!.close, false);
  t.ok(ctx.done, 'the request is answered');

  // A large body (sent in slices by `send`) comes out as one response, its length in bytes.
  const big = `{"x":"${'é'.repeat(50_000)}"}`;
  const ctx2 = request();
  const [large] = answerOf((a) => send(a.asResponse(), ctx2, 200, big));
  const length = Number(/Content-Length: (\d+)/.exec(large!.bytes)?.[1]);
  t.equal(length, Buffer.byteLength(big), 'Content-Length counts bytes');
  t.equal(large!.bytes.slice(large!.bytes.indexOf('\r\n\r\n') + 4), big, 'the body whole');

  const ctx3 = request();
  const [closing] = answerOf((a) =>
    send(a.asResponse(), ctx3, 400, '{}', 'application/json', { 'X-A': 'b' }, true),
  );
  t.match(closing!.bytes, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.match(closing!.bytes, /\r\nX-A: b\r\nConnection: close\r\nContent-Length: 2\r\n\r\n\{\}$/);
  t.equal(closing!.close, true);

  // Nothing is written for a client that left.
  const gone = request(true);
  t.same(
    answerOf((a) => send(a.asResponse(), gone, 200, '{}')),
    [],
  );
  t.end();
});

/** A connected pair on loopback: the guard's end (`server`) and the client's. */
async function pair(t: Test): Promise<{ server: net.Socket; client: net.Socket }> {
  const listener = net.createServer({ allowHalfOpen: true });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const accepted = new Promise<net.Socket>((r) => listener.once('connection', r));
  const client = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  const server = await accepted;
  server.pause(); // as the relay hands it over
  listener.close();
  t.teardown(() => {
    client.destroy();
    server.destroy();
  });
  return { server, client };
}

function collect(socket: net.Socket): () => string {
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString()));
  return () => text;
}

const settle = () => new Promise((r) => setTimeout(r, 50));

t.test('GuardPolls: answers, early answers, what comes meanwhile, departures', async (t) => {
  const closed: number[] = [];
  const next: { socket: net.Socket; first: string }[] = [];
  const polls = new GuardPolls(
    (id) => closed.push(id),
    (socket, first) => next.push({ socket, first: first.toString() }),
  );
  t.teardown(() => polls.endAll());

  // Held, then answered: the client reads the answer; its next request goes to `next`.
  const a = await pair(t);
  const readA = collect(a.client);
  polls.hold(1, a.server, Buffer.alloc(0));
  t.equal(polls.size, 1);
  t.equal(polls.waiting, 1);
  polls.answer(1, Buffer.from('ANSWER-1'), false);
  await settle();
  t.equal(readA(), 'ANSWER-1');
  t.equal(polls.waiting, 0);
  t.equal(polls.size, 1, 'parked until its next request');
  a.client.write('NEXT');
  await settle();
  t.same(
    next.map((n) => n.first),
    ['NEXT'],
  );
  t.equal(next[0]!.socket, a.server);
  t.equal(polls.size, 0, 'handed back');

  // The answer arrives before the verdict: delivered once the poll is held.
  const b = await pair(t);
  const readB = collect(b.client);
  polls.answer(2, Buffer.from('EARLY'), false);
  polls.hold(2, b.server, Buffer.alloc(0));
  await settle();
  t.equal(readB(), 'EARLY');

  // What the client sends while held (and what it sent with the poll) goes on after the answer.
  const c = await pair(t);
  const readC = collect(c.client);
  polls.hold(3, c.server, Buffer.from('PIPE1;'));
  c.client.write('PIPE2;');
  await settle();
  t.equal(next.length, 1, 'nothing relayed while the poll is held');
  polls.answer(3, Buffer.from('ANSWER-3'), false);
  await settle();
  t.equal(readC(), 'ANSWER-3');
  t.equal(next.at(-1)!.first, 'PIPE1;PIPE2;', 'then the rest, in order');

  // A client that leaves while held is reported once; a late answer goes nowhere.
  const d = await pair(t);
  polls.hold(4, d.server, Buffer.alloc(0));
  d.client.destroy();
  await settle();
  t.same(closed, [4]);
  polls.answer(4, Buffer.from('LATE'), false);
  t.equal(polls.size, 1, 'only the parked client of b is held');

  // A FIN while held counts as leaving (as uWS takes it).
  const e = await pair(t);
  polls.hold(5, e.server, Buffer.alloc(0));
  e.client.end();
  await settle();
  t.same(closed, [4, 5]);

  // An answer that closes: written, then the connection ends.
  const f = await pair(t);
  const readF = collect(f.client);
  let ended = false;
  f.client.on('end', () => (ended = true));
  polls.hold(6, f.server, Buffer.alloc(0));
  polls.answer(6, Buffer.from('BYE'), true);
  await settle();
  t.equal(readF(), 'BYE');
  t.ok(ended, 'the connection ends');
});

/**
 * GuardPolls whose sweep runs every 10 ms and whose clock the test moves (`clock.now`), with the
 * polls it reports closed and the next requests it relays.
 */
function sweptPolls(t: Test, limits: { heldLimitMs?: number; parkedIdleMs?: number }) {
  const clock = { now: 1_000_000 };
  const closed: number[] = [];
  const next: string[] = [];
  const polls = new GuardPolls(
    (id) => closed.push(id),
    (_socket, first) => next.push(first.toString()),
    () => clock.now,
    { ...limits, sweepMs: 10 },
  );
  t.teardown(() => polls.endAll());
  const sweeps = () => new Promise((r) => setTimeout(r, 60));
  return { polls, closed, next, clock, sweeps };
}

t.test('GuardPolls: a poll never answered is closed after the limit, and reported', async (t) => {
  // The sweep runs every 10 ms here; the polls' ages are read from a clock the test moves.
  for (const [what, heldLimitMs, limit] of [
    ['by default', undefined, 5 * 60_000],
    ['with a limit given', 2_000, 2_000],
  ] as const) {
    // (Answered polls' connections are kept here: their own limit is the next test's.)
    const { polls, closed, next, clock, sweeps } = sweptPolls(t, {
      ...(heldLimitMs === undefined ? {} : { heldLimitMs }),
      parkedIdleMs: 1e9,
    });

    // Poll 1 is held and never answered; poll 2 is answered before the limit.
    const forgotten = await pair(t);
    const answered = await pair(t);
    const readAnswered = collect(answered.client);
    let clientClosed = false;
    forgotten.client.on('close', () => (clientClosed = true));
    forgotten.client.on('error', () => {});
    polls.hold(1, forgotten.server, Buffer.alloc(0));
    polls.hold(2, answered.server, Buffer.alloc(0));
    clock.now += limit / 2;
    polls.answer(2, Buffer.from('ANSWER-2'), false);

    clock.now += limit / 2; // poll 1 is exactly at the limit
    await sweeps();
    t.notOk(forgotten.server.destroyed, `${what}: not closed at the limit`);
    t.same(closed, [], `${what}: nothing reported`);
    t.equal(polls.waiting, 1, `${what}: poll 1 still held`);

    clock.now += 1; // past it
    await sweeps();
    for (let i = 0; i < 100 && !(clientClosed && closed.length > 0); i++) await settle();
    t.ok(forgotten.server.destroyed, `${what}: the guard destroyed the held socket`);
    t.ok(clientClosed, `${what}: the client saw its connection closed`);
    t.same(closed, [1], `${what}: the main thread is told the poll is closed, once`);
    t.equal(polls.waiting, 0, `${what}: no poll held`);

    // The answered poll's connection is parked, not swept: open past its own limit too, and its
    // next request goes on.
    clock.now += limit;
    await sweeps();
    t.equal(readAnswered(), 'ANSWER-2');
    t.notOk(answered.server.destroyed, `${what}: the answered poll's connection is not closed`);
    t.equal(polls.size, 1, `${what}: it is parked`);
    t.same(closed, [1], `${what}: and not reported closed`);
    answered.client.write('NEXT');
    for (let i = 0; i < 100 && next.length === 0; i++) await settle();
    t.same(next, ['NEXT'], `${what}: its next request is relayed`);
  }
});

t.test(
  'GuardPolls: a connection silent after its answer is ended past the parked limit',
  async (t) => {
    for (const [what, parkedIdleMs, limit] of [
      ['by default', undefined, 10_000],
      ['with a limit given', 500, 500],
    ] as const) {
      const { polls, closed, next, clock, sweeps } = sweptPolls(
        t,
        parkedIdleMs === undefined ? {} : { parkedIdleMs },
      );
      const silent = await pair(t);
      const busy = await pair(t);
      const readSilent = collect(silent.client);
      let silentEnded = false;
      silent.client.on('end', () => (silentEnded = true));
      silent.client.on('error', () => {});
      polls.hold(1, silent.server, Buffer.alloc(0));
      polls.hold(2, busy.server, Buffer.alloc(0));
      clock.now += 60_000; // held a minute: a held poll's age does not count once it is answered
      polls.answer(1, Buffer.from('ANSWER-1'), false);
      polls.answer(2, Buffer.from('ANSWER-2'), false);

      clock.now += limit; // exactly at the limit
      await sweeps();
      t.equal(polls.size, 2, `${what}: both parked at the limit`);
      t.notOk(silentEnded, `${what}: not ended at the limit`);
      busy.client.write('NEXT');
      for (let i = 0; i < 100 && next.length === 0; i++) await settle();
      t.same(next, ['NEXT'], `${what}: a client that goes on is relayed`);

      clock.now += 1; // past it
      await sweeps();
      for (let i = 0; i < 100 && !silentEnded; i++) await settle();
      t.equal(readSilent(), 'ANSWER-1', `${what}: its answer came first`);
      t.ok(silentEnded, `${what}: then its connection ended`);
      t.equal(polls.size, 0, `${what}: no descriptor held`);
      t.same(closed, [], `${what}: no poll reported closed (none was held)`);
    }
  },
);
