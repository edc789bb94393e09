/**
 * The shutdown's last word (src/signals.ts): the real server as a child process, stopped by
 * SIGTERM, ends its log with one line saying how the shutdown ended and how long it took: done
 * (the database closed; exit 0), failed (each failed step logged before it; exit 1), or stuck in a
 * step that never settles (named; exit 1 once SHUTDOWN_LIMIT_MS has passed). Before, a shutdown
 * that went well logged "SIGTERM: shutting down" and then nothing, and one stuck in a step hung
 * with nothing more in the log.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { DIST_SRC } from '../helpers/plain-node.js';
import { startChild, type ChildServer } from '../helpers/child-server.js';

t.setTimeout(120_000);

const TEST_ROUTES_MAIN = path.join(DIST_SRC, '../test/helpers/test-routes-main.js');

type Line = { level: string; msg: string; [k: string]: unknown };

/** The JSON log lines the process wrote, in order. */
function logLines(server: ChildServer): Line[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

/** SIGTERM, then the exit (or null if the process is still running after `limitMs`). */
async function terminate(server: ChildServer, limitMs = 30_000) {
  server.child.kill('SIGTERM');
  const limit = new Promise<null>((resolve) => setTimeout(() => resolve(null), limitMs).unref());
  return Promise.race([server.exited, limit]);
}

t.test('a shutdown that went well says so last, with how long it took', async (t) => {
  const server = await startChild(t.testdir());
  t.teardown(() => void server.kill('SIGKILL'));
  const exit = await terminate(server);
  t.same(exit, { code: 0, signal: null }, 'exit status 0');
  const last = logLines(server).at(-1);
  t.match(
    last,
    { level: 'info', signal: 'SIGTERM', msg: /^shutdown complete in \d+ ms: the database closed/ },
    'the last line: the shutdown complete',
  );
  t.ok(Number.isInteger(last?.ms) && (last?.ms as number) >= 0, `how long: ${String(last?.ms)}`);
});

t.test('a shutdown with a failed step: the step, then the failure, exit 1', async (t) => {
  const dir = t.testdir();
  const server = await startChild(dir);
  t.teardown(() => void server.kill('SIGKILL'));
  // The queues cannot be saved: a directory where the save writes its temporary file (a
  // permission would not stop a test run as root).
  fs.mkdirSync(path.join(dir, 'event-queues.msgpack.tmp'));
  const exit = await terminate(server);
  t.same(exit, { code: 1, signal: null }, 'exit status 1');
  const lines = logLines(server);
  t.ok(
    lines.some((l) => l.level === 'error' && l.msg === 'shutdown: saving the event queues failed'),
    'the failed step logged',
  );
  t.match(
    lines.at(-1),
    { level: 'error', msg: /^shutdown failed after \d+ ms/, ms: Number },
    'the last line: the shutdown failed, and how long it took',
  );
});

t.test('a shutdown stuck in a step: named, exit 1 once the limit has passed', async (t) => {
  const server = await startChild(
    t.testdir(),
    { TEST_SHUTDOWN_STEP_HANGS: '1', TEST_SHUTDOWN_LIMIT_MS: '5000' },
    TEST_ROUTES_MAIN,
  );
  t.teardown(() => void server.kill('SIGKILL'));
  const exit = await terminate(server);
  t.same(exit, { code: 1, signal: null }, 'exit status 1, not a hang');
  t.match(
    logLines(server).at(-1),
    {
      level: 'error',
      stage: 'stopping the thumbnailer',
      msg: /^shutdown stuck: not done after \d+ ms, at "stopping the thumbnailer"/,
    },
    'the last line: stuck, and where',
  );
});
