/**
 * Odd but legal HTTP against the server alone, no proxy in front (docs/robustness.md "Odd but
 * legal HTTP"), over raw sockets: what the uWS build that runs answers, and that what it cannot
 * answer is closed without holding or slowing any other client. (The nginx recipe's answers:
 * test/deploy/nginx.test.ts.)
 */
import net from 'node:net';
import t from 'tap';
import { basicAuth, rawRequest } from '../helpers/api.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { uwsBuildName } from '../../src/http/uws.js';

/**
 * A bound for a connection that is never answered to be closed: uWS's idle timeout is 10 s (its
 * timer ticks every 4 s), so this is a hang detector with room for a loaded machine, not a
 * measure of time.
 */
const CLOSED_WITHIN_MS = 45_000;

type Outcome = { status: number | null; body: string; closed: boolean };

/** Sends `bytes` on a new connection; the first answer, or what came before the server closed. */
function send(port: number, bytes: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(bytes));
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const end = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({
        status: status === undefined ? null : Number(status),
        body: end === -1 ? '' : text.slice(end + 4),
        closed,
      });
    };
    const timer = setTimeout(() => finish(false), CLOSED_WITHIN_MS);
    sock.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
      if (end !== -1 && length !== undefined && text.length >= end + 4 + Number(length))
        finish(false);
    });
    sock.on('close', () => finish(true));
    sock.on('error', () => finish(true));
  });
}

async function served(ts: TestServer): Promise<boolean> {
  const hamlet = ts.fx.users.hamlet!;
  const res = await rawRequest(ts.url, {
    method: 'GET',
    path: '/api/v1/users/me',
    headers: { host: 'testserver.local', authorization: basicAuth(hamlet.email, hamlet.api_key) },
  });
  return res.status === 200;
}

t.test(`what the ${uwsBuildName} uWS build does with odd but legal requests`, async (t) => {
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!;
  const auth = `Authorization: ${basicAuth(hamlet.email, hamlet.api_key)}\r\n`;
  const host = 'Host: testserver.local\r\n';
  const get = (extra: string) => `GET /api/v1/users/me HTTP/1.1\r\n${host}${auth}${extra}\r\n`;
  const cases = {
    underscore: get('X_Custom: 1\r\n'),
    dot: get('X.Id: 2\r\n'),
    unknownMethod: `QUERY /api/v1/users/me HTTP/1.1\r\n${host}${auth}\r\n`,
    lowercase: `get /api/v1/users/me HTTP/1.1\r\n${host}${auth}\r\n`,
    absolute: `GET http://testserver.local/api/v1/users/me HTTP/1.1\r\n${host}${auth}\r\n`,
    star: `OPTIONS * HTTP/1.1\r\n${host}\r\n`,
    http10: `GET /api/v1/users/me HTTP/1.0\r\n${host}${auth}\r\n`,
  };
  // All at once, each on its connection; the server is used meanwhile.
  const pending = Object.fromEntries(
    Object.entries(cases).map(([name, bytes]) => [name, send(ts.server.port, bytes)]),
  ) as Record<keyof typeof cases, Promise<Outcome>>;
  let servedMeanwhile = 0;
  for (let i = 0; i < 10; i++) if (await served(ts)) servedMeanwhile++;
  t.equal(servedMeanwhile, 10, 'every other request is served while they wait');

  const o = Object.fromEntries(
    await Promise.all(Object.entries(pending).map(async ([k, p]) => [k, await p] as const)),
  ) as Record<keyof typeof cases, Outcome>;
  if (uwsBuildName === 'modern') {
    t.equal(o.underscore.status, 200, 'a header name with _ is served');
    t.equal(o.dot.status, 200, 'a header name with . is served');
    t.equal(o.unknownMethod.status, 501, 'an unknown method: 501');
    t.same(JSON.parse(o.unknownMethod.body), {
      result: 'error',
      msg: 'Method not implemented: QUERY',
      code: 'BAD_REQUEST',
    });
    t.equal(o.lowercase.status, 501, 'methods are case-sensitive: 501');
    for (const k of ['absolute', 'star', 'http10'] as const)
      t.equal(o[k].status, 505, `${k}: answered 505 by uWS (the recipe serves it)`);
  } else {
    for (const [k, out] of Object.entries(o)) {
      t.equal(out.status, null, `${k}: not answered`);
      t.ok(out.closed, `${k}: closed, not held`);
    }
  }
  t.ok(await served(ts), 'and the server still serves');
});
