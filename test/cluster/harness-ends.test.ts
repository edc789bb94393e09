/**
 * A cluster test file ended while its cluster starts leaves none of its processes running. After
 * CI at 4493876 (its suite job ended by its 40-minute limit: `timeout` SIGTERMs the whole tap run),
 * faults-stall's three NATS servers, three supervisors and three nodes ran for two hours: the file
 * was ended inside `up`, before its teardown was registered and before its reaper was started
 * (test/helpers/cluster-run.ts upForTest). Here a child runs a test file's set-up (upForTest, with
 * supervised nodes) and is sent SIGTERM once its nodes are started, before its cluster serves:
 * within a bound, no process has a file of its cluster open or names it (processesUsing).
 * Skipped without nats-server or nginx.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { killProcessesUsing, processesUsing, waitFor } from '../../src/cluster/local.js';
import { runWithEngines } from '../helpers/cluster-run.js';

const CHILD = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'helpers',
  'cluster-up-child.js',
);

/** How long the reaper may take to stop what the ended file left (it looks once a second). */
const GONE_WITHIN_MS = 30_000;

t.setTimeout(300_000);
await runWithEngines(async () => {
  await t.test('SIGTERM while the cluster starts: none of its processes is left', async (t) => {
    const name = `harness-ends-${process.pid}`;
    const child = spawn(process.execPath, [CHILD, name], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let dir = '';
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (dir === '') return;
      await killProcessesUsing(dir);
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await waitFor('the cluster directory', () => {
      const found = fs.readdirSync(os.tmpdir()).find((e) => e.startsWith(`${name}-`));
      dir = found === undefined ? '' : path.join(os.tmpdir(), found);
      return dir !== '';
    });
    // Each supervisor writes its node's pid file as it starts the node.
    await waitFor(
      'the nodes to be started',
      () => [1, 2, 3].every((n) => fs.existsSync(path.join(dir, 'logs', `n${n}.pid`))),
      120_000,
    );
    t.comment(out.includes('up') ? 'ended once its cluster served' : 'ended inside up');
    child.kill('SIGTERM');
    await exited;
    let left = processesUsing(dir);
    await waitFor(
      'no process of the cluster',
      () => (left = processesUsing(dir)).length === 0,
      GONE_WITHIN_MS,
    ).catch(() => undefined);
    t.same(
      left.map((p) => `${p.pid} ${p.command}`),
      [],
      `no process of the cluster runs ${GONE_WITHIN_MS / 1000} s after the file ended`,
    );
  });
});
