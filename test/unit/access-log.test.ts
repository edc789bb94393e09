/**
 * The access log's line (src/observability/access-line.ts) and its batched output (LogOutput in
 * src/observability/log.ts): the same JSON as the logger's own line, client strings escaped so
 * that a line stays one line, nothing but its fields; held lines written in order, before any
 * other line, at the batch size, after the flush delay and at exit.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { accessLine, isoTime, type AccessFields } from '../../src/observability/access-line.js';
import {
  createLogger,
  LogOutput,
  logAccess,
  setLogger,
  type Logger,
} from '../../src/observability/log.js';

const here = path.dirname(fileURLToPath(import.meta.url));

const fields: AccessFields = {
  reqId: 'm1abc-2s',
  method: 'GET',
  url: '/api/v1/messages/:message_id/history',
  status: 200,
  ms: 3.1,
  userId: 8,
  realmId: 2,
  address: '198.51.100.7',
  userAgent: 'ZulipMobile/27.1 (Android 14)',
};

/** A logger of the process's options whose lines are collected. */
function collecting(level: 'info' | 'warn' = 'info'): { logger: Logger; writes: string[] } {
  const writes: string[] = [];
  return { logger: createLogger({ level, destination: { write: (s) => writes.push(s) } }), writes };
}

t.test("the line is the logger's own line for the same fields, key for key", (t) => {
  const { logger, writes } = collecting();
  const weird: AccessFields = {
    ...fields,
    userId: null,
    realmId: null,
    address: '',
    userAgent: 'a"b\\c\n{"level":"fatal"}\r\t\u0001\u007fé☃\ud800 end',
  };
  for (const f of [fields, weird]) {
    writes.length = 0;
    logger.info(f, 'request');
    const fromPino = writes.join('');
    const ours = accessLine(f, Date.parse(JSON.parse(fromPino).time as string));
    t.equal(ours, fromPino, 'byte for byte');
  }
  t.end();
});

t.test('client strings are escaped: one line, the value round-trips', (t) => {
  const userAgent = 'x"\\\n\r\u2028\u0000<script>\ud83d\ude00\udc00';
  const line = accessLine({ ...fields, userAgent, method: 'GET"\n' });
  t.equal(line.indexOf('\n'), line.length - 1, 'a newline only at the end');
  const o = JSON.parse(line) as Record<string, unknown>;
  t.equal(o.userAgent, userAgent);
  t.equal(o.method, 'GET"\n');
  t.match(line, /\\ud800|\\udc00/, 'a lone surrogate is escaped, not replaced');
  t.end();
});

t.test('the fields, their order, and nothing else', (t) => {
  const line = accessLine(fields, Date.UTC(2026, 11, 3, 23, 50, 1, 7));
  t.equal(
    line,
    '{"level":"info","time":"2026-12-03T23:50:01.007Z","reqId":"m1abc-2s","method":"GET",' +
      '"url":"/api/v1/messages/:message_id/history","status":200,"ms":3.1,"userId":8,"realmId":2,' +
      '"address":"198.51.100.7","userAgent":"ZulipMobile/27.1 (Android 14)","msg":"request"}\n',
  );
  const odd = JSON.parse(accessLine({ ...fields, ms: NaN, status: 499 })) as { ms: unknown };
  t.equal(odd.ms, null, 'a number JSON cannot hold is null, and the line still parses');
  // The builder takes its fields by name: a secret in a field it does not have goes nowhere.
  const withSecrets = {
    ...fields,
    path: '/api/v1/users/me?api_key=k3y-in-query',
    password: 'hunter2',
    authorization: 'Basic c2VjcmV0',
  } as AccessFields;
  t.notMatch(accessLine(withSecrets), /k3y|hunter2|c2VjcmV0|api_key|password/);
  t.end();
});

t.test('the line is JSON.stringify of its fields for any values (the fast paths agree)', (t) => {
  const strings = [
    '',
    'GET',
    '/api/v1/users/me',
    'm1abc-2s',
    '198.51.100.7',
    '2001:db8::1',
    'a"b',
    'back\\slash',
    'tab\there',
    'new\nline',
    '\u007f\u0000\u001f',
    'é☃',
    '\ud83d\ude00',
    '\ud800 lone',
    'x'.repeat(300),
    'y'.repeat(300) + '"',
  ];
  const numbers = [
    0,
    -0,
    1,
    499,
    3.1,
    0.05,
    3.14,
    12,
    12.5,
    -2.5,
    1e21,
    2 ** 53 + 2,
    NaN,
    Infinity,
  ];
  let n = 0;
  // More distinct strings than the cache holds, twice over: a refilled cache still agrees.
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 1200; i++) {
      const s = (k: number) =>
        strings[(i * 7 + k) % strings.length]! + (i % 3 === 0 ? String(i) : '');
      const x = (k: number) => numbers[(i * 5 + k) % numbers.length]!;
      const f: AccessFields = {
        reqId: s(0),
        method: s(1),
        url: s(2),
        status: x(0),
        ms: i % 4 === 0 ? Math.round(i * 1.37) / 10 : x(1),
        userId: i % 5 === 0 ? null : x(2),
        realmId: i % 6 === 0 ? null : x(3),
        address: s(3),
        userAgent: s(4) + String(i % 700),
      };
      const at = Date.UTC(2026, 11, 4, 4, 0, 0, i);
      const { reqId, method, url, status, ms, userId, realmId, address, userAgent } = f;
      const expected =
        JSON.stringify({
          level: 'info',
          time: new Date(at).toISOString(),
          reqId,
          method,
          url,
          status,
          ms,
          userId,
          realmId,
          address,
          userAgent,
          msg: 'request',
        }) + '\n';
      if (accessLine(f, at) !== expected) {
        t.equal(accessLine(f, at), expected, `fields ${JSON.stringify(f)}`);
        n++;
        if (n > 5) break;
      }
    }
  }
  t.equal(n, 0, 'every line agrees');
  t.end();
});

t.test('time: ISO 8601, the same text within a millisecond, a new one after', (t) => {
  const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  t.equal(isoTime(ms), '2026-01-02T03:04:05.678Z');
  t.equal(isoTime(ms), '2026-01-02T03:04:05.678Z');
  t.equal(isoTime(ms + 1), '2026-01-02T03:04:05.679Z');
  t.end();
});

t.test('logAccess: written only when the logger logs at info', (t) => {
  const info = collecting('info');
  const warn = collecting('warn');
  t.teardown(() => setLogger(createLogger()));
  setLogger(info.logger);
  logAccess(fields);
  setLogger(warn.logger);
  logAccess(fields);
  t.equal(info.writes.length, 1);
  const written = JSON.parse(info.writes[0]!) as { time: string };
  t.equal(info.writes[0], accessLine(fields, Date.parse(written.time)));
  t.equal(warn.writes.length, 0, 'LOG_LEVEL=warn has no access lines');
  t.end();
});

t.test('LogOutput: access lines held and written together, in order', async (t) => {
  const file = path.join(t.testdir(), 'log');
  const fd = fs.openSync(file, 'w');
  t.teardown(() => fs.closeSync(fd));
  const written = () => fs.readFileSync(file, 'utf8');
  const out = new LogOutput(fd);
  out.writeAccess('a1\n');
  out.writeAccess('a2 é☃\n');
  t.equal(written(), '', 'held');
  out.write('{"msg":"other"}\n');
  t.equal(written(), 'a1\na2 é☃\n{"msg":"other"}\n', 'the held lines first, then the next line');
  out.write('b\n');
  t.match(written(), /other"\}\nb\n$/, "the logger's lines are written at once");
  let before = written().length;
  const line = 'x'.repeat(99) + '\n';
  let n = 0;
  while (written().length === before) {
    out.writeAccess(line);
    n++;
  }
  t.ok(n > 1 && n < 1000, `a batch is written when it is full (${n} lines)`);
  t.equal(written().slice(before), line.repeat(n));
  before = written().length;
  const long = 'y'.repeat(50_000) + '\n';
  out.writeAccess('c\n');
  out.writeAccess(long);
  t.equal(written().slice(before), 'c\n' + long, 'a line longer than the buffer, after those held');
  before = written().length;
  out.writeAccess('late\n');
  // Held until the flush delay: wait for the state, not for a time.
  while (written().length === before) await new Promise((r) => setTimeout(r, 20));
  t.equal(written().slice(before), 'late\n', 'written by the timer');
  before = written().length;
  out.writeAccess('d\n');
  out.flush();
  t.equal(written().slice(before), 'd\n', 'flush writes what is held');
  out.flush();
  t.equal(written().length, before + 2, 'nothing held, nothing written');
});

t.test('a descriptor that fails loses its lines, not the server', (t) => {
  // Every write to /dev/full fails with ENOSPC, as on a full disk.
  const fd = fs.openSync('/dev/full', 'w');
  t.teardown(() => fs.closeSync(fd));
  const out = new LogOutput(fd);
  out.writeAccess('lost\n');
  t.doesNotThrow(() => out.flush());
  out.writeAccess('lost again\n');
  t.doesNotThrow(() => out.flush());
  t.end();
});

t.test('held access lines are written when the process exits', (t) => {
  // A child that logs to its stdout as `npm start` does, then exits at once (no timer ran).
  const logModule = path.resolve(here, '../../src/observability/log.js');
  const program = `
    import { configureLogging, log, logAccess } from ${JSON.stringify(logModule)};
    configureLogging({ destination: 1 });
    for (let i = 0; i < 3; i++) logAccess({ ...${JSON.stringify(fields)}, reqId: 'r' + i });
    if (process.argv[1] === 'fatal') { log.fatal('stopping'); }
    process.exit(process.argv[1] === 'fatal' ? 70 : 0);
  `;
  for (const how of ['exit', 'fatal']) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', program, how], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    t.equal(r.status, how === 'fatal' ? 70 : 0, r.stderr);
    const lines = r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { msg: string; reqId?: string });
    t.same(
      lines.map((l) => l.reqId ?? l.msg),
      how === 'fatal' ? ['r0', 'r1', 'r2', 'stopping'] : ['r0', 'r1', 'r2'],
      `${how}: every line, in order`,
    );
  }
  t.end();
});
