/**
 * The logs' second fence (src/observability/log.ts): secret-looking fields are censored at the
 * top level and one level down, the caller's objects are left as they were, and a line of plain
 * values (every request line) goes out as it is.
 */
import { Writable } from 'node:stream';
import t from 'tap';
import { censorNested, createLogger } from '../../src/observability/log.js';

function collect(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { lines, stream };
}

t.test('secret fields are censored at the top level and one level down', async (t) => {
  const { lines, stream } = collect();
  const log = createLogger({ destination: stream, level: 'info' });
  const user = { email: 'a@example.com', password: 'hunter2', api_key: 'k3y' };
  const line = { password: 'p', content: 'secret text', user, note: 'kept' };
  log.info(line, 'one');
  log.info({ req: { headers: { authorization: 'Basic xyz', host: 'h' } } }, 'two');
  log.info({ nested: { authorization: 'Bearer x', content: 'c', fine: 1 } }, 'three');
  await new Promise((r) => setImmediate(r));
  t.same(lines[0], {
    ...lines[0],
    password: '[redacted]',
    content: '[redacted]',
    user: { email: 'a@example.com', password: '[redacted]', api_key: '[redacted]' },
    note: 'kept',
  });
  t.equal(
    (lines[1]!.req as { headers: Record<string, string> }).headers.authorization,
    '[redacted]',
  );
  t.same(lines[2]!.nested, { authorization: '[redacted]', content: '[redacted]', fine: 1 });
  t.equal(user.password, 'hunter2', "the caller's object is not changed");
  t.equal(line.password, 'p');
  t.notMatch(JSON.stringify(lines), /hunter2|k3y|secret text|Basic xyz|Bearer x/);
});

t.test('a line of plain values is passed through as the same object', (t) => {
  const line = { reqId: 'r1', method: 'GET', url: '/api/v1/users/me', status: 200, ms: 0.2 };
  t.equal(censorNested(line), line);
  const err = Object.assign(new Error('boom'), { password: 'x' });
  const withErr = { err };
  t.equal(censorNested(withErr), withErr, 'errors go to their own serializer');
  t.end();
});
