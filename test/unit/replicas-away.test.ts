/**
 * `replicasAway` (src/cluster/log-applier.ts), the count behind /metrics'
 * `confab_cluster_log_replicas_away`: the replicas of the log stream its leader has not heard from
 * for REPLICA_AWAY_MS or marks offline, from the `cluster` part of a stream info as nats-server
 * 2.10 answers it (`active` in nanoseconds since the leader last heard from that replica).
 */
import t from 'tap';
import type { ClusterInfo } from 'nats';
import { REPLICA_AWAY_MS, replicasAway } from '../../src/cluster/log-applier.js';

const ms = 1e6;
const replica = (name: string, activeMs: number, extra: object = {}) => ({
  name,
  current: activeMs < 2000,
  active: activeMs * ms,
  ...extra,
});
const info = (replicas: ReturnType<typeof replica>[], leader = 'nats1'): ClusterInfo =>
  ({ name: 'c', leader, replicas }) as ClusterInfo;

t.test('replicas heard from within the limit are not away', (t) => {
  t.equal(replicasAway(info([replica('nats2', 800), replica('nats3', 40)])), 0);
  t.equal(replicasAway(info([replica('nats2', REPLICA_AWAY_MS), replica('nats3', 0)])), 0);
  t.end();
});

t.test('a replica silent past the limit, or offline, is away', (t) => {
  // What a leader reported for a server back from a SIGKILL without its copy of the stream.
  t.equal(replicasAway(info([replica('nats2', 132_384), replica('nats3', 806)])), 1);
  t.equal(replicasAway(info([replica('nats2', REPLICA_AWAY_MS + 1), replica('nats3', 5)])), 1);
  t.equal(replicasAway(info([replica('nats2', 0, { offline: true }), replica('nats3', 5)])), 1);
  t.equal(replicasAway(info([replica('nats2', 60_000), replica('nats3', 60_000)])), 2);
  t.end();
});

t.test('no leader to ask is unknown; no replicas is none away', (t) => {
  t.ok(Number.isNaN(replicasAway(info([replica('nats2', 5)], ''))));
  t.equal(replicasAway(info([])), 0);
  t.equal(replicasAway(undefined), 0);
  t.end();
});
