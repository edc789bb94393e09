/**
 * The project's own API tests for sending, fetching, editing and subscriptions, through the front
 * proxy of a three-node cluster (test/helpers/api-subset.ts; the rest in api-subset-b).
 */
import t from 'tap';
import { runThroughCluster } from '../helpers/api-subset.js';

await runThroughCluster(t, [
  ['messages-send', {}],
  ['messages-fetch', {}],
  ['messages-edit', {}],
  ['subscriptions', {}],
]);
