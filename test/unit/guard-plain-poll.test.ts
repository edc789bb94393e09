/**
 * Polls the HTTP guard has served without a connection to uWS (src/http/guard.ts `plainPoll`,
 * src/http/guard-polls.ts `ask`, src/http/poll-answer.ts PollRequest): which requests are taken
 * (a plain HTTP/1.1 GET of the poll path, nothing that needs uWS's own handling), the fields read
 * from them as uWS shows them, and the guard's side over real loopback sockets.
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { plainPoll } from '../../src/http/guard.js';
import { GuardPolls } from '../../src/http/guard-polls.js';
import { PollAnswer, PollRequest, type PollFields } from '../../src/http/poll-answer.js';
import { RequestContext } from '../../src/http/request.js';

const POLL = '/api/v1/events';
const head = (lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

t.test('plainPoll: a plain poll is taken, with its fields and what follows it', (t) => {
  const bytes = Buffer.concat([
    head([
      'GET /api/v1/events?queue_id=q1&last_event_id=7 HTTP/1.1',
      'Host: chat.example',
      'Authorization: Basic abc',
      'authorization: Basic second',
      'Accept-Encoding: gzip, deflate',
      'User-Agent: ZulipPython/0.9.1',
      'X-Forwarded-For:  203.0.113.9 ',
      'Connection: keep-alive',
      'Content-Length: 0',
    ]),
    Buffer.from('GET /api/v1/users/me HTTP/1.1\r\n'),
  ]);
  const got = plainPoll(bytes, POLL, '198.51.100.4');
  t.ok(got, 'taken');
  t.same(got!.fields, {
    target: '/api/v1/events?queue_id=q1&last_event_id=7',
    authorization: 'Basic abc',
    host: 'chat.example',
    acceptEncoding: 'gzip, deflate',
    userAgent: 'ZulipPython/0.9.1',
    forwardedFor: '203.0.113.9',
    peer: '198.51.100.4',
  });
  t.equal(got!.rest.toString(), 'GET /api/v1/users/me HTTP/1.1\r\n', 'the next bytes are kept');
  t.end();
});

t.test('plainPoll: anything uWS or the relay must see is left to the relay', (t) => {
  const base = 'GET /api/v1/events?queue_id=q1&last_event_id=7 HTTP/1.1';
  const cases: [string, Buffer][] = [
    ['an incomplete head', Buffer.from(`${base}\r\nHost: x\r\n`)],
    ['another path', head(['GET /api/v1/events/ HTTP/1.1', 'Host: x'])],
    ['another route', head(['GET /api/v1/users/me HTTP/1.1', 'Host: x'])],
    ['another method', head([base.replace('GET', 'POST'), 'Host: x'])],
    ['HTTP/1.0', head([base.replace('1.1', '1.0'), 'Host: x'])],
    ['Connection: close', head([base, 'Host: x', 'Connection: keep-alive, close'])],
    ['Expect', head([base, 'Host: x', 'Expect: 100-continue'])],
    ['an upgrade', head([base, 'Host: x', 'Upgrade: websocket'])],
    ['a body', head([base, 'Host: x', 'Content-Length: 3'])],
    ['chunked', head([base, 'Host: x', 'Transfer-Encoding: chunked'])],
    ['a header uWS drops', head([base, 'Host: x', 'X_Custom: 1'])],
    ['a line without a colon', head([base, 'Host: x', 'garbage'])],
    ['folding', head([base, 'Host: x', ' folded'])],
  ];
  for (const [what, bytes] of cases) t.equal(plainPoll(bytes, POLL, ''), null, what);
  t.end();
});

t.test('PollRequest: read by the router as a request from uWS', (t) => {
  const fields: PollFields = {
    target: '/api/v1/events?queue_id=q1&last_event_id=7',
    authorization: 'Basic abc',
    host: 'chat.example',
    acceptEncoding: 'gzip',
    userAgent: 'ua',
    forwardedFor: '',
    peer: '::1',
  };
  const ctx = new RequestContext(new PollRequest(fields).asRequest(), 0, 'GET');
  t.equal(ctx.method, 'GET');
  t.equal(ctx.path, '/api/v1/events');
  t.equal(ctx.query, 'queue_id=q1&last_event_id=7');
  t.equal(ctx.authorization, 'Basic abc');
  t.equal(ctx.host, 'chat.example');
  t.equal(ctx.acceptEncoding, 'gzip');
  t.equal(ctx.userAgent, 'ua');
  const bare = new RequestContext(
    new PollRequest({ ...fields, target: '/api/v1/events' }).asRequest(),
    0,
    'GET',
  );
  t.equal(bare.query, '', 'no query');

  // The answer carries the client's address and tells the request when its client leaves.
  const written: string[] = [];
  const answer = new PollAnswer((b) => written.push(b.toString()), '::1');
  const res = answer.asResponse();
  ctx.bindPeer(res, true);
  t.equal(ctx.peerAddress(), '::1');
  let aborted = 0;
  res.onAborted(() => aborted++);
  answer.abort();
  answer.abort();
  t.equal(aborted, 1, 'onAborted runs once');
  res.end('late');
  t.same(written, [], 'nothing is written after the client left');

  // An answered poll's onAborted never runs.
  const done = new PollAnswer((b) => written.push(b.toString()));
  let late = 0;
  done.asResponse().onAborted(() => late++);
  done.asResponse().end('{}');
  done.abort();
  t.equal(late, 0);
  t.equal(written.length, 1);
  t.end();
});

/** A connected loopback pair: `client` is the test's, `server` the guard's side. */
async function pair(t: Test): Promise<{ client: net.Socket; server: net.Socket }> {
  const listener = net.createServer({ allowHalfOpen: true });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const accepted = new Promise<net.Socket>((r) => listener.once('connection', r));
  const client = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  const server = await accepted;
  listener.close();
  t.teardown(() => {
    client.destroy();
    server.destroy();
  });
  return { client, server };
}

const settle = () => new Promise((r) => setTimeout(r, 30));

/** A poll's fields with nothing but its target. */
const pollFields = (target: string): PollFields => ({
  target,
  authorization: '',
  host: '',
  acceptEncoding: '',
  userAgent: '',
  forwardedFor: '',
  peer: '',
});

t.test('GuardPolls.ask: held under ids of its own until answered, then parked', async (t) => {
  const closed: number[] = [];
  const next: string[] = [];
  const polls = new GuardPolls(
    (id) => closed.push(id),
    (_socket, first) => next.push(first.toString()),
  );
  t.teardown(() => polls.endAll());
  const asked: { id: number; fields: PollFields }[] = [];
  polls.onAsk = (id, fields) => asked.push({ id, fields });
  const fields = (n: number) => pollFields(`/api/v1/events?n=${n}`);

  const a = await pair(t);
  let readA = '';
  a.client.on('data', (c: Buffer) => (readA += c.toString()));
  polls.ask(a.server, fields(1), Buffer.from('PIPELINED;'));
  const b = await pair(t);
  polls.ask(b.server, fields(2), Buffer.alloc(0));
  t.same(
    asked.map((x) => x.id),
    [-1, -2],
    'negative ids, apart from the main thread’s',
  );
  t.equal(asked[0]!.fields.target, '/api/v1/events?n=1');
  t.equal(polls.waiting, 2);

  // Answered: written, and what the client pipelined goes on as its next request.
  polls.answer(-1, Buffer.from('ANSWER'), false);
  await settle();
  t.equal(readA, 'ANSWER');
  t.same(next, ['PIPELINED;']);

  // A client that leaves is reported; its late answer is dropped, not kept for a verdict.
  b.client.destroy();
  await settle();
  t.same(closed, [-2]);
  polls.answer(-2, Buffer.from('LATE'), false);
  t.equal(polls.size, 0, 'nothing held');

  // A client that already left when its poll is read is never asked about.
  const c = await pair(t);
  c.server.destroy();
  polls.ask(c.server, fields(3), Buffer.alloc(0));
  t.equal(asked.length, 2);
});

t.test(
  'GuardPolls.ask: a connection polling again and again keeps its listeners few',
  async (t) => {
    const fields = pollFields('/api/v1/events');
    // As HttpGuard.relay does with a plain poll: the next request is asked about again.
    const polls: GuardPolls = new GuardPolls(
      () => {},
      (socket) => polls.ask(socket, fields, Buffer.alloc(0)),
    );
    t.teardown(() => polls.endAll());
    const ids: number[] = [];
    polls.onAsk = (id) => ids.push(id);
    const a = await pair(t);
    polls.ask(a.server, fields, Buffer.alloc(0));
    for (let i = 0; i < 30; i++) {
      polls.answer(ids.at(-1)!, Buffer.from('A'), false);
      a.client.write('NEXT');
      await settle();
    }
    t.equal(ids.length, 31, 'every poll asked');
    for (const e of ['error', 'data', 'end', 'close'] as const) {
      t.ok(
        a.server.listenerCount(e) <= 2,
        `${e}: ${a.server.listenerCount(e)} listeners after 31 polls`,
      );
    }
  },
);
