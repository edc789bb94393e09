/**
 * A cluster node's read barrier (src/cluster/read-barrier.ts, ClusterNode.readBarrier), with the
 * log's position and the node's progress played by hand: a failed question for the position (as
 * JetStream answers while its cluster elects a leader) is asked again within the budget instead
 * of answering 503 at once; a question that keeps failing or never returns, and a node that lags,
 * are answered 503 when the budget runs out; a stopping node does not ask again.
 */
import t from 'tap';
import {
  CatchingUpError,
  passReadBarrier,
  type BarrierSide,
} from '../../src/cluster/read-barrier.js';

/** What nats.js rejects with while JetStream has no meta leader (err_code 10008). */
const unavailable = () =>
  Object.assign(new Error('JetStream system temporarily unavailable'), {
    api_error: {
      code: 503,
      err_code: 10008,
      description: 'JetStream system temporarily unavailable',
    },
  });

/** A log whose position questions fail `failures` times, then answer `last`. */
function log(opts: { failures?: number; last?: number; never?: boolean; stopped?: boolean }) {
  const asked: number[] = [];
  const applying: number[] = [];
  const since = Date.now();
  let failures = opts.failures ?? 0;
  const side: BarrierSide = {
    position: () => {
      asked.push(Date.now() - since);
      if (opts.never) return new Promise<number>(() => undefined);
      if (failures-- > 0) return Promise.reject(unavailable());
      return Promise.resolve(opts.last ?? 0);
    },
    applied: (seq) => {
      applying.push(seq);
      return Promise.resolve();
    },
    stopped: () => opts.stopped ?? false,
  };
  return { side, asked, applying };
}

/** How the barrier ended, and after how long. */
async function outcome(p: Promise<void>): Promise<{ passed: boolean; err: unknown; ms: number }> {
  const since = Date.now();
  try {
    await p;
    return { passed: true, err: null, ms: Date.now() - since };
  } catch (err) {
    return { passed: false, err, ms: Date.now() - since };
  }
}

t.test('a failed question for the position is asked again: the request passes', async (t) => {
  const { side, asked, applying } = log({ failures: 3, last: 42 });
  const r = await outcome(passReadBarrier(side, 5000, 10));
  t.ok(r.passed, 'no 503');
  t.equal(asked.length, 4, 'asked again after each of three failures');
  t.same(applying, [42], 'then waited for the position answered');
  t.ok(asked[1]! >= 9 && asked[2]! - asked[1]! >= 19, 'after a pause, doubling');
});

t.test('a question that keeps failing: 503 when the budget runs out, not at once', async (t) => {
  const { side, asked, applying } = log({ failures: Infinity });
  // A budget of a second: about seven questions fit (pauses of 10, 20, 40 ... ms), and at least
  // three still do when a loaded machine runs the timers late (with 300 ms, two could).
  const r = await outcome(passReadBarrier(side, 1000, 10));
  t.notOk(r.passed);
  t.ok(r.err instanceof CatchingUpError, 'catching up');
  t.match(r.err, {
    httpStatus: 503,
    message: 'This server is catching up with the cluster; try again',
  });
  t.ok(r.ms >= 990, `after the budget (${r.ms} ms)`);
  t.ok(asked.length >= 3, `asked ${asked.length} times meanwhile`);
  t.same(applying, []);
  const before = asked.length;
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(asked.length, before, 'and not asked again once answered');
});

t.test('a question never answered: 503 when the budget runs out', async (t) => {
  const { side, asked } = log({ never: true });
  const r = await outcome(passReadBarrier(side, 200, 10));
  t.ok(r.err instanceof CatchingUpError, '503');
  t.ok(r.ms >= 190, `after the budget (${r.ms} ms)`);
  t.equal(asked.length, 1, 'one question');
});

t.test('a node that lags behind the position: 503 at the budget, or passes in time', async (t) => {
  const lagging: BarrierSide = {
    position: () => Promise.resolve(9),
    applied: () => new Promise<void>(() => undefined),
    stopped: () => false,
  };
  const late = await outcome(passReadBarrier(lagging, 200, 10));
  t.ok(late.err instanceof CatchingUpError, 'never applied: 503');
  t.ok(late.ms >= 190, `after the budget (${late.ms} ms)`);

  const catching: BarrierSide = {
    ...lagging,
    applied: () => new Promise<void>((resolve) => setTimeout(resolve, 50)),
  };
  t.ok((await outcome(passReadBarrier(catching, 5000, 10))).passed, 'applied in time: passes');
});

t.test('a stopping node answers 503 at the first failure, without asking again', async (t) => {
  const { side, asked } = log({ failures: Infinity, stopped: true });
  const r = await outcome(passReadBarrier(side, 5000, 10));
  t.ok(r.err instanceof CatchingUpError, '503');
  t.ok(r.ms < 5000, 'before the budget');
  t.equal(asked.length, 1);
});
