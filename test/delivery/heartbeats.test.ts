/**
 * The consumers' heartbeat deadlines (src/delivery/heartbeats.ts) on xstate's SimulatedClock:
 * each fires once its delay has passed and not before, in order of time; a disarmed one never
 * fires and stops holding its callback; all of them share one timer.
 */
import t from 'tap';
import { SimulatedClock } from 'xstate';
import { Heartbeats, type Timers } from '../../src/delivery/heartbeats.js';

function setup() {
  const clock = new SimulatedClock();
  let timersSet = 0;
  const counting: Timers = {
    setTimeout: (fn: () => void, ms: number) => {
      timersSet++;
      return clock.setTimeout(fn, ms);
    },
    clearTimeout: (id: unknown) => clock.clearTimeout(id as never),
  };
  const beats = new Heartbeats(counting, () => clock.now());
  return { clock, beats, timersSet: () => timersSet };
}

t.test('a deadline fires once its delay has passed, not before, and once', (t) => {
  const { clock, beats } = setup();
  const fired: string[] = [];
  beats.arm(1000, () => fired.push('a'));
  t.equal(beats.size, 1);
  clock.increment(999);
  t.same(fired, [], 'not yet');
  clock.increment(1);
  t.same(fired, ['a'], 'at its time');
  clock.increment(10_000);
  t.same(fired, ['a'], 'once');
  t.equal(beats.size, 0);
  t.end();
});

t.test('deadlines of different delays fire in order of time', (t) => {
  const { clock, beats } = setup();
  const fired: number[] = [];
  for (const d of [50, 10, 40, 20, 30, 10]) beats.arm(d, () => fired.push(d));
  clock.increment(25);
  t.same(fired, [10, 10, 20], 'the earlier ones, a later deadline arming no later timer');
  clock.increment(25);
  t.same(fired, [10, 10, 20, 30, 40, 50]);
  t.end();
});

t.test('a disarmed deadline never fires; disarming twice is harmless', (t) => {
  const { clock, beats } = setup();
  const fired: string[] = [];
  const disarmA = beats.arm(100, () => fired.push('a'));
  beats.arm(200, () => fired.push('b'));
  disarmA();
  disarmA();
  t.equal(beats.size, 1);
  clock.increment(150);
  t.same(fired, [], 'the disarmed first deadline: nothing');
  clock.increment(50);
  t.same(fired, ['b'], 'the next one still fires');
  t.end();
});

t.test('many deadlines share one timer; mostly disarmed, the rest still fire', (t) => {
  const { clock, beats, timersSet } = setup();
  let fired = 0;
  const disarms = [];
  for (let i = 0; i < 1000; i++) disarms.push(beats.arm(60_000, () => fired++));
  t.equal(timersSet(), 1, 'one timer for a thousand deadlines of the same delay');
  // Polls answered by events long before their heartbeat: their deadlines go.
  for (let i = 0; i < 900; i++) disarms[i]!();
  t.equal(beats.size, 100, 'the live deadlines are counted');
  clock.increment(60_000);
  t.equal(fired, 100, 'the hundred live ones fire');
  t.equal(beats.size, 0);
  t.end();
});

t.test('a callback may arm again; clear() drops every deadline', (t) => {
  const { clock, beats } = setup();
  const fired: string[] = [];
  beats.arm(100, () => {
    fired.push('first');
    beats.arm(100, () => fired.push('again'));
  });
  clock.increment(100);
  t.same(fired, ['first']);
  clock.increment(100);
  t.same(fired, ['first', 'again'], 'armed from inside a callback');
  beats.arm(100, () => fired.push('cleared'));
  beats.clear();
  t.equal(beats.size, 0);
  clock.increment(1000);
  t.same(fired, ['first', 'again'], 'nothing fires after clear()');
  t.end();
});
