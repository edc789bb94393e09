/**
 * The back-off of a cluster node's supervisor (src/cluster/supervise.ts `restartDelay`): 1 s
 * first, doubling to 30 s while the node keeps exiting within a minute of its start, 1 s again
 * after a node that ran a minute. (The supervisor itself: test/cluster/faults-node.test.ts, whose
 * killed owner its supervisor starts again.)
 */
import t from 'tap';
import {
  FIRST_RESTART_MS,
  LONGEST_RESTART_MS,
  restartDelay,
  STEADY_RUN_MS,
} from '../../src/cluster/supervise.js';

t.test('restart delays', (t) => {
  t.equal(restartDelay(0, 10), FIRST_RESTART_MS, 'the first restart after 1 s');
  const delays: number[] = [];
  let d = 0;
  for (let i = 0; i < 8; i++) delays.push((d = restartDelay(d, 500)));
  t.same(delays, [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000], 'doubling to 30 s');
  t.equal(LONGEST_RESTART_MS, 30_000);
  t.equal(restartDelay(30_000, STEADY_RUN_MS), FIRST_RESTART_MS, 'back to 1 s after a steady run');
  t.equal(restartDelay(4000, STEADY_RUN_MS - 1), 8000, 'not before a whole minute');
  t.end();
});
