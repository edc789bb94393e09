/**
 * The nats-server versions a cluster node refuses to start on unless CLUSTER_ALLOW_UNSAFE_NATS=1
 * (src/cluster/jetstream.ts natsVersionIsSafe; test/cluster/unsafe-nats.test.ts, for real):
 * before 2.9.21, two racing writes could both pass one expected-sequence check (docs/cluster.md
 * "NATS version").
 */
import t from 'tap';
import { natsVersionIsSafe } from '../../src/cluster/jetstream.js';

t.test('versions from 2.9.21 on are safe, older ones and unknown ones are not', (t) => {
  for (const v of ['2.9.21', '2.9.22', '2.10.0', '2.10.27', 'v2.10.27', '2.11.0-RC.1', '3.0.0'])
    t.ok(natsVersionIsSafe(v), v);
  for (const v of ['2.9.10', '2.9.20', '2.8.4', '1.4.1', '', 'unknown', '2.9'])
    t.notOk(natsVersionIsSafe(v), v || '(empty)');
  t.end();
});
