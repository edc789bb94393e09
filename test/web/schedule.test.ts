/**
 * web/state/schedule.ts with a fake browser: the app draws at the next frame (or after a
 * fallback timeout), at once for the user's own input, and, when the user's input comes while a
 * drawing waits for its frame, that drawing is made at once too, before the input is handled.
 */
import t from 'tap';
import { FALLBACK_MS, makeScheduler, type ScheduleEnv } from '../../web/state/schedule.js';
import { FakeTimers } from '../helpers/fake-timers.js';

function fakeBrowser() {
  const clock = new FakeTimers();
  let frames: (() => void)[] = [];
  let microtasks: (() => void)[] = [];
  const listeners = new Map<string, (() => void)[]>();
  let event: string | undefined;
  const env: ScheduleEnv = {
    requestFrame: (fn) => frames.push(fn),
    setTimeout: clock.timers.setTimeout,
    clearTimeout: clock.timers.clearTimeout,
    queueMicrotask: (fn) => microtasks.push(fn),
    currentEvent: () => event,
    onEvents: (types, fn) => {
      for (const type of types) listeners.set(type, [...(listeners.get(type) ?? []), fn]);
    },
  };
  const runMicrotasks = () => {
    while (microtasks.length) {
      const now = microtasks;
      microtasks = [];
      for (const fn of now) fn();
    }
  };
  return {
    env,
    clock,
    /** A frame comes: its callbacks run, then the microtasks they queued. */
    frame() {
      const now = frames;
      frames = [];
      for (const fn of now) fn();
      runMicrotasks();
    },
    /**
     * An event of the browser's: its listeners (the scheduler's first, as they are on the window
     * in the capture phase), each followed by the microtasks queued (the stack is empty between
     * listeners), then the page's handler.
     */
    dispatch(type: string, handler: () => void = () => {}) {
      event = type;
      for (const fn of listeners.get(type) ?? []) {
        fn();
        runMicrotasks();
      }
      handler();
      runMicrotasks();
      event = undefined;
    },
  };
}

t.test('at the next frame, or after the fallback, once', (t) => {
  const b = fakeBrowser();
  const s = makeScheduler(b.env);
  let drawn = 0;
  s.scheduleRender(() => drawn++);
  t.equal(drawn, 0, 'not at once');
  b.frame();
  t.equal(drawn, 1, 'at the frame');
  b.clock.advance(FALLBACK_MS);
  t.equal(drawn, 1, 'once');
  s.scheduleRender(() => drawn++);
  b.clock.advance(FALLBACK_MS);
  t.equal(drawn, 2, 'after the fallback where no frame comes');
  b.frame();
  t.equal(drawn, 2, 'once');
  t.end();
});

t.test("the user's input: drawn at once", (t) => {
  const b = fakeBrowser();
  const s = makeScheduler(b.env);
  let drawn = 0;
  b.dispatch('keydown', () => s.scheduleRender(() => drawn++));
  t.equal(drawn, 1, 'drawn before the next event');
  t.end();
});

t.test("a drawing waiting for its frame is made at once when the user's input comes", (t) => {
  const b = fakeBrowser();
  const s = makeScheduler(b.env);
  // A message arrives: its drawing waits for the next frame.
  const drawn: string[] = [];
  s.scheduleRender(() => drawn.push('message'));
  // A key comes before that frame: the drawing is made before the key is handled, so that the
  // handler sees what is on the screen (and its own change is drawn at once in turn).
  b.dispatch('keydown', () => drawn.push('key handled'));
  t.same(drawn, ['message', 'key handled'], 'drawn before the key was handled');
  b.frame();
  b.clock.advance(FALLBACK_MS);
  t.same(drawn, ['message', 'key handled'], 'and not again at the frame');
  // A second drawing scheduled meanwhile is not lost either.
  const flush = () => drawn.push('flush');
  s.scheduleRender(flush);
  s.scheduleRender(() => drawn.push('other'));
  b.dispatch('input');
  t.same(drawn.slice(2), ['flush', 'other'], 'each waiting drawing made once');
  b.frame();
  t.equal(drawn.length, 4, 'and not again at the frame');
  t.end();
});
