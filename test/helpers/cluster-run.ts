/**
 * How a cluster test file runs its body: only where nats-server and nginx are (else it plans no
 * test and says why), and a failure fails the test (its teardown stops the cluster) rather than
 * the process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import {
  down,
  killProcessesUsing,
  missingEngines,
  reapOnExit,
  startNodeAgain,
  up,
  type ClusterRecord,
} from '../../src/cluster/local.js';

export { reapOnExit };

export async function runWithEngines(run: () => Promise<void>): Promise<void> {
  const missing = missingEngines();
  if (missing) {
    t.plan(
      0,
      `${missing} is not installed (npm run fetch-nats-server; apt-get install -y nginx): ` +
        'cluster tests skipped',
    );
    return;
  }
  await run().catch((err: unknown) => t.error(err));
}

/**
 * How long a forwarded write waits for the owner to say it received it on the tests' clusters
 * (CLUSTER_FORWARD_ACK_MS, 1 s by default): a write forwarded to an owner that is then killed is
 * answered 503 only after it, and sent again by its client.
 */
export const TEST_FORWARD_ACK_MS = 30_000;

/**
 * A three-node local cluster (src/cluster/local.ts `up`) in a new directory named after `name`,
 * its nodes started with `env` (rate limits off, and a read barrier of 30 s instead of 5 and a
 * forwarded write's wait to be received of 30 s instead of 1: the machine running the suite is
 * loaded), stopped and removed at the test's teardown. Its reaper and its teardown are there
 * before `up` starts anything: a file ended inside `up` (CI's time limit SIGTERMing the tap run)
 * left the NATS servers, supervisors and nodes started so far running. The teardown fails the file
 * when a process of the cluster (processesUsing) is still running after `down`, and kills it.
 */
export async function upForTest(
  name: string,
  env: Record<string, string>,
  opts: { supervise?: boolean } = {},
): Promise<{ dir: string; rec: ClusterRecord }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  const stopReaper = reapOnExit(dir);
  t.teardown(async () => {
    // Whatever `down` did, what is left is looked for and killed.
    const failed = await down(dir).then(
      () => null,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
    await stopReaper();
    const left = await killProcessesUsing(dir);
    // The nodes' and NATS servers' logs say what went wrong: kept when something did.
    if (t.passing() && left.length === 0 && failed === null && !process.env.KEEP_CLUSTER_DIR)
      fs.rmSync(dir, { recursive: true, force: true });
    else console.error(`# the cluster's files and logs are kept in ${dir}`);
    if (left.length > 0)
      throw new Error(
        `the cluster's teardown left ${left.length} of its processes running (killed now): ` +
          left.map((p) => `${p.pid} ${p.command}`).join('; '),
      );
    if (failed !== null) throw failed;
  });
  const rec = await up({
    dir,
    nodes: 3,
    supervise: opts.supervise ?? false,
    env: {
      RATE_LIMITING: 'off',
      CLUSTER_READ_BARRIER_MS: '30000',
      CLUSTER_FORWARD_ACK_MS: String(TEST_FORWARD_ACK_MS),
      ...env,
    },
  });
  return { dir, rec };
}

/**
 * Starts node `n` of the cluster in `dir` again (src/cluster/local.ts `startNodeAgain`) and
 * returns what it logged in this start, up to its readiness: a node's log file holds all its
 * starts, and an earlier one may have said the same (rebuilt, started from a snapshot).
 */
export async function startAgainLogged(dir: string, n: number, empty = false): Promise<string> {
  const file = path.join(dir, 'logs', `n${n}.log`);
  const before = fs.existsSync(file) ? fs.statSync(file).size : 0;
  await startNodeAgain(dir, n, empty);
  return fs.readFileSync(file).subarray(before).toString('utf8');
}
