/**
 * How a cluster test file runs its body: only where nats-server and nginx are (else it plans no
 * test and says why), and a failure fails the test (its teardown stops the cluster) rather than
 * the process.
 */
import t from 'tap';
import { missingEngines } from '../../src/cluster/local.js';

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
