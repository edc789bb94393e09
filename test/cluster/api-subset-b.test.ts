/**
 * The project's own API tests for events (long-poll and WebSocket) and uploads, through the front
 * proxy of a three-node cluster (test/helpers/api-subset.ts; the rest in api-subset-a).
 */
import t from 'tap';
import { runThroughCluster } from '../helpers/api-subset.js';

await runThroughCluster(t, [
  // These look into the queues of the test's own node (n1): new queues are placed there.
  ['events', { CONFAB_TEST_CLUSTER_QUEUES: 'n1' }],
  ['websocket', { CONFAB_TEST_CLUSTER_QUEUES: 'n1' }],
  // Its looks into n1's data directory, and the statuses of paths nginx refuses itself, are
  // skipped in cluster mode (their reasons are in the file).
  ['upload', {}],
]);
