/**
 * Raw-socket fuzzing of the HTTP layer (docs/robustness.md): truncated requests, broken chunked
 * encoding, bad Content-Length, huge and malformed headers and request lines, garbage bytes (from
 * the fuzz seed, CONFAB_FUZZ_SEED), slow clients and idle connections. Whatever arrives, the server
 * answers a 4xx or closes the connection — never a 5xx, never a hang — and keeps serving: a valid
 * request on a new connection succeeds after each case.
 */
import net from 'node:net';
import t from 'tap';
import { basicAuth, rawRequest } from '../helpers/api.js';
import { fuzzSeed, rng } from '../helpers/fuzz.js';
import { until } from '../helpers/events.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { uwsBuildName } from '../../src/http/uws.js';

type Outcome = { response: string; closed: boolean };

/** How long a connection may stay open after the client is done before the test calls it a hang. */
const HANG_MS = 8_000;

/**
 * Writes `chunks` on a new connection (each in its own write, a turn of the event loop apart),
 * then half-closes it unless `keepOpen`, and collects what comes back until the server closes the
 * connection or a complete response has arrived.
 */
function exchange(
  port: number,
  chunks: readonly (string | Buffer)[],
  opts: { keepOpen?: boolean } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ response: Buffer.concat(received).toString('latin1'), closed });
    };
    const timer = setTimeout(() => finish(false), HANG_MS);
    sock.on('data', (c: Buffer) => {
      received.push(c);
      if (completeResponse(Buffer.concat(received).toString('latin1'))) finish(true);
    });
    sock.on('close', () => finish(true));
    sock.on('error', () => finish(true));
    sock.on('connect', () => {
      let i = 0;
      const next = () => {
        if (settled) return;
        if (i < chunks.length) {
          sock.write(chunks[i++]!);
          setImmediate(next);
        } else if (!opts.keepOpen) {
          sock.end();
        }
      };
      next();
    });
  });
}

/** Whether `text` holds a whole HTTP response (head, and a body of its Content-Length). */
function completeResponse(whole: string): boolean {
  // Interim answers (100 Continue) come before the final one.
  const text = whole.replace(/^(?:HTTP\/1\.[01] 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
  if (!length) return true;
  return text.length - end - 4 >= Number(length[1]);
}

/** The final answer's status (after any interim 1xx, e.g. 100 Continue), or null. */
function statusOf(o: Outcome): number | null {
  const m = /^(?:HTTP\/1\.[01] 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)*HTTP\/1\.[01] (\d{3})/.exec(
    o.response,
  );
  return m ? Number(m[1]) : null;
}

/**
 * The modern uWS build's parser answers a request line it cannot read `505 HTTP Version Not
 * Supported` itself, before any JavaScript (docs/robustness.md "Odd but legal HTTP"): a clear
 * answer, if not the 400 it should be; the legacy build closes instead.
 */
const PARSER_ANSWERS: readonly number[] = uwsBuildName === 'modern' ? [505] : [];

async function serves(ts: TestServer): Promise<boolean> {
  const res = await rawRequest(ts.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: {
      host: 'testserver.local',
      authorization: basicAuth(ts.fx.users.hamlet!.email, ts.fx.users.hamlet!.api_key),
    },
  });
  return res.status === 200;
}

type Case = {
  name: string;
  chunks: (string | Buffer)[];
  /** Statuses outside 4xx that are right here. */
  ok?: readonly number[];
  /** Keep the connection open (a complete request whose answer must come, not a close). */
  answer?: boolean;
};

function cases(auth: string, seed: number): Case[] {
  const host = 'Host: testserver.local\r\n';
  const post = (extra: string) =>
    `POST /api/v1/messages HTTP/1.1\r\n${host}Authorization: ${auth}\r\n${extra}`;
  const out: Case[] = [
    { name: 'truncated request line', chunks: ['GET /api/v1/server'] },
    { name: 'truncated head', chunks: [`GET /api/v1/server_settings HTTP/1.1\r\n${host}X-A: b`] },
    {
      name: 'truncated body',
      chunks: [
        post(
          'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ntype=str',
        ),
      ],
    },
    {
      name: 'body shorter than Content-Length, then more requests',
      chunks: [post('Content-Length: 5\r\n\r\nab'), 'GET / HTTP/1.1\r\n\r\n'],
    },
    {
      name: 'bad chunk size',
      chunks: [post('Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n')],
    },
    {
      name: 'huge chunk size',
      chunks: [post('Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n')],
    },
    {
      name: 'chunk without its CRLF',
      chunks: [post('Transfer-Encoding: chunked\r\n\r\n5\r\nhelloXX3\r\nabc\r\n0\r\n\r\n')],
    },
    {
      name: 'chunked, truncated',
      chunks: [post('Transfer-Encoding: chunked\r\n\r\n10\r\nshort')],
    },
    {
      name: 'chunked and Content-Length',
      chunks: [
        post('Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n'),
      ],
    },
    { name: 'negative Content-Length', chunks: [post('Content-Length: -1\r\n\r\nabc')] },
    { name: 'non-numeric Content-Length', chunks: [post('Content-Length: abc\r\n\r\nabc')] },
    {
      name: 'two different Content-Lengths',
      chunks: [post('Content-Length: 3\r\nContent-Length: 5\r\n\r\nabcde')],
    },
    {
      name: 'Content-Length beyond any integer',
      chunks: [post('Content-Length: 99999999999999999999999\r\n\r\nabc')],
    },
    {
      name: 'Content-Length over the body limit',
      chunks: [post('Content-Length: 1000000000\r\n\r\nabc')],
    },
    {
      // (uWS itself closes the connection on a Content-Length of ten digits or more.)
      name: 'Content-Length over the body limit, connection kept open',
      chunks: [post('Content-Length: 500000000\r\n\r\nabc')],
      answer: true,
    },
    {
      name: 'malformed JSON body, connection kept open',
      chunks: [post('Content-Type: application/json\r\nContent-Length: 9\r\n\r\n{"a":[1,}')],
      answer: true,
    },
    {
      name: 'chunked body with a malformed form, connection kept open',
      chunks: [
        post('Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n'),
        '5\r\n--b\r\n\r\n',
        '0\r\n\r\n',
      ],
      answer: true,
    },
    {
      // Well-formed, within uWS's bound on a head (about 500 KiB; closed beyond it).
      name: 'one huge header',
      ok: [200],
      chunks: [
        `GET /api/v1/server_settings HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(100_000)}\r\n\r\n`,
      ],
    },
    {
      name: 'thousands of headers',
      chunks: [
        `GET /api/v1/server_settings HTTP/1.1\r\n${host}` +
          Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('') +
          '\r\n',
      ],
    },
    {
      // Well-formed and within uWS's bound on a head: served.
      name: 'a huge URL',
      ok: [200],
      chunks: [`GET /api/v1/server_settings?a=${'x'.repeat(200_000)} HTTP/1.1\r\n${host}\r\n`],
    },
    {
      name: 'a null byte in the path',
      chunks: [`GET /api/v1/\0server_settings HTTP/1.1\r\n${host}\r\n`],
    },
    {
      name: 'a null byte in a header',
      chunks: [`GET /api/v1/users/me HTTP/1.1\r\n${host}Authorization: Basic \0\0\r\n\r\n`],
    },
    {
      name: 'binary credentials',
      chunks: [
        Buffer.concat([
          Buffer.from(`GET /api/v1/users/me HTTP/1.1\r\n${host}Authorization: Basic `),
          Buffer.from([0xff, 0xfe, 0x80, 0x00, 0xc3]),
          Buffer.from('\r\n\r\n'),
        ]),
      ],
    },
    // RFC 9110 §9.1: a method the server does not know is answered 501 (by the nginx recipe, or
    // a uWS build that routes it: docs/robustness.md); the build that loads here closes it.
    {
      name: 'unknown method',
      ok: [501],
      chunks: [`BREW /api/v1/server_settings HTTP/1.1\r\n${host}\r\n`],
    },
    {
      name: 'lowercase method',
      ok: [501],
      chunks: [`get /api/v1/server_settings HTTP/1.1\r\n${host}\r\n`],
    },
    { name: 'HTTP/0.9', chunks: ['GET /api/v1/server_settings\r\n\r\n'] },
    { name: 'HTTP/2 preface', chunks: ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'] },
    { name: 'unknown version', chunks: [`GET / HTTP/7.3\r\n${host}\r\n`] },
    { name: 'header without a colon', chunks: [`GET / HTTP/1.1\r\n${host}NoColonHere\r\n\r\n`] },
    { name: 'space before the colon', chunks: [`GET / HTTP/1.1\r\n${host}X-A : b\r\n\r\n`] },
    {
      name: 'obsolete line folding',
      chunks: [`GET /api/v1/server_settings HTTP/1.1\r\n${host}X-A: b\r\n  c\r\n\r\n`],
    },
    { name: 'bare LF line ends', chunks: ['GET /api/v1/server_settings HTTP/1.1\nHost: x\n\n'] },
    { name: 'absolute-form target', chunks: [`GET http://evil.example/ HTTP/1.1\r\n${host}\r\n`] },
    { name: 'asterisk target', chunks: [`OPTIONS * HTTP/1.1\r\n${host}\r\n`] },
    {
      name: 'Expect: 100-continue on a refused body',
      chunks: [post('Expect: 100-continue\r\nContent-Length: 1000000000\r\n\r\n')],
    },
    {
      name: 'a valid request, then garbage on the same connection',
      chunks: [`GET /api/v1/server_settings HTTP/1.1\r\n${host}\r\n\u0001\u0002garbage\r\n\r\n`],
      ok: [200],
    },
  ];
  const r = rng(seed);
  for (const size of [1, 2, 16, 100, 1000, 5000, 20_000, 70_000]) {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = r.int(256);
    out.push({ name: `${size} random bytes`, chunks: [bytes] });
    // Random bytes after a plausible start.
    out.push({
      name: `a request line, then ${size} random bytes`,
      chunks: [`POST /api/v1/messages HTTP/1.1\r\n`, bytes],
    });
  }
  return out;
}

t.test(
  'every malformed request is answered 4xx or closed, and the server keeps serving',
  async (t) => {
    const ts = await startServer(t);
    const seed = fuzzSeed();
    t.comment(`fuzz seed ${seed} (CONFAB_FUZZ_SEED)`);
    const hamlet = ts.fx.users.hamlet!;
    for (const c of cases(basicAuth(hamlet.email, hamlet.api_key), seed)) {
      const o = await exchange(ts.server.port, c.chunks, { keepOpen: c.answer === true });
      const status = statusOf(o);
      if (c.answer && status === null) {
        t.fail(`${c.name}: no answer (${o.closed ? 'closed' : 'hung'})`);
      } else if (!o.closed) {
        t.fail(`${c.name}: neither answered nor closed within ${HANG_MS} ms`);
      } else if (o.response !== '' && status === null) {
        t.fail(`${c.name}: not an HTTP response: ${JSON.stringify(o.response.slice(0, 100))}`);
      } else if (
        status !== null &&
        !(c.ok ?? []).includes(status) &&
        !PARSER_ANSWERS.includes(status) &&
        (status < 400 || status >= 500)
      ) {
        t.fail(`${c.name}: answered ${status}: ${o.response.slice(0, 300)}`);
      } else {
        t.pass(`${c.name}: ${status === null ? 'closed' : String(status)}`);
      }
      if (!(await serves(ts))) {
        t.fail(`after "${c.name}" a valid request failed`);
        return;
      }
    }
  },
);

t.test(
  'a Content-Length that is not digits: uWS ends the connection, the request leaves',
  async (t) => {
    // Both uWS builds run the route's callback, then close the connection before any body: the
    // legacy one without an answer, the modern one after its own 400 (never the router's answer).
    const ts = await startServer(t);
    const hamlet = ts.fx.users.hamlet!;
    const auth = basicAuth(hamlet.email, hamlet.api_key);
    for (const path of ['/api/v1/messages', '/api/v1/user_uploads']) {
      for (const length of ['abc', '-1', '1e3', '5,5']) {
        const head = `POST ${path} HTTP/1.1\r\nHost: testserver.local\r\nAuthorization: ${auth}\r\n`;
        const o = await exchange(ts.server.port, [`${head}Content-Length: ${length}\r\n\r\nabc`], {
          keepOpen: true,
        });
        t.ok(o.closed, `${path}, ${length}: closed`);
        t.ok(!o.response.includes('"result"'), `${path}, ${length}: no answer of the router's`);
      }
    }
    await until(() => ts.server.inflight === 0, 'every request has left');
    t.ok(await serves(ts), 'the server serves on');
  },
);

t.test('a slow client gets its answer, and does not hold up others', async (t) => {
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!;
  const request =
    `GET /api/v1/users/me HTTP/1.1\r\nHost: testserver.local\r\n` +
    `Authorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\nConnection: close\r\n\r\n`;
  // One byte per write, each a turn of the event loop apart; others are served meanwhile.
  const bytes = [...Buffer.from(request)].map((b) => Buffer.from([b]));
  const slow = exchange(ts.server.port, bytes, { keepOpen: true });
  let servedMeanwhile = 0;
  for (let i = 0; i < 5; i++) if (await serves(ts)) servedMeanwhile++;
  const o = await slow;
  t.equal(statusOf(o), 200, 'the slow request is answered 200');
  t.equal(servedMeanwhile, 5, 'other requests were served while it dribbled in');
});

t.test('idle and half-sent connections do not stop the server', async (t) => {
  const ts = await startServer(t);
  const sockets: net.Socket[] = [];
  const opened: Promise<void>[] = [];
  for (let i = 0; i < 200; i++) {
    const s = net.connect(ts.server.port, '127.0.0.1');
    s.on('error', () => {});
    sockets.push(s);
    opened.push(new Promise((resolve) => s.on('connect', () => resolve())));
    // Half of them start a request and stop in the middle of its head.
    if (i % 2 === 0)
      s.write('POST /api/v1/messages HTTP/1.1\r\nHost: testserver.local\r\nContent-Le');
  }
  await Promise.all(opened);
  t.ok(await serves(ts), 'a valid request is served with 200 idle connections open');
  for (const s of sockets) s.destroy();
  t.ok(await serves(ts), 'and after they are gone');
});
