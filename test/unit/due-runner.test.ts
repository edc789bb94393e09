/**
 * src/mail/due-runner.ts: a run at the time the store says work is due; wakes coalesce into one
 * run behind the current one; work left due after a run (another node's) is looked at again
 * later, not in a spinning loop; nothing after stop.
 */
import t from 'tap';
import { DueRunner } from '../../src/mail/due-runner.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > 20_000) throw new Error(`gave up waiting for: ${what}`);
    await sleep(10);
  }
}

t.test('runs when due, coalesces wakes, never spins on work left due', async (t) => {
  let due: number | null = null;
  let runs = 0;
  const runner = new DueRunner({
    clock: () => Date.now(),
    nextDue: () => due,
    run: () => {
      runs++;
      return Promise.resolve();
    },
    name: 'test',
  });
  t.teardown(() => runner.stop());

  // Three wakes while nothing runs yet: one run, and at most one more queued behind it.
  runner.wake();
  runner.wake();
  runner.wake();
  await runner.runDue();
  t.ok(runs >= 1 && runs <= 3, `wakes coalesce (${runs} runs)`);
  const before = runs;

  // Due in the past and still there after the run (another node's work): no immediate rerun.
  due = Math.floor(Date.now() / 1000) - 10;
  await runner.runDue();
  t.equal(runs, before + 1);
  await sleep(300);
  t.equal(runs, before + 1, 'left-over work waits for the recheck, it does not spin');

  // Due a moment from now: the timer runs it.
  due = Math.floor(Date.now() / 1000) + 1;
  await runner.runDue();
  const armed = runs;
  await until(() => runs > armed, 'the timer’s run');
  t.pass('the timer ran the work when it fell due');

  runner.stop();
  due = Math.floor(Date.now() / 1000) + 1;
  const stopped = runs;
  runner.wake();
  await runner.drained();
  t.equal(runs, stopped, 'nothing runs after stop');
});
