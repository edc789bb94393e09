/**
 * When the app draws (Preact's `options.debounceRendering`, wired to the browser in
 * web/app/frame.ts): at the next frame, so that events arriving in separate socket frames or
 * polls within one frame are drawn once; at once (the next microtask) for the user's own input,
 * so that a key pressed right after typing sees what the typing drew; and, where frames do not
 * come (a tab hidden or covered), after a short timeout instead, so that the state, the title and
 * the notifications still follow. Nothing is scheduled while nothing changes.
 *
 * And when the user's input comes while a drawing waits for its frame (Preact schedules once
 * for all that changes until it draws, so the input's own change would wait for that frame too),
 * that drawing is made at once, before the input is handled: its handlers see what the screen
 * shows, and what they change is drawn at once in turn.
 */

/** The events that are the user's own input. */
export const USER_EVENTS: readonly string[] = [
  'keydown',
  'keyup',
  'keypress',
  'input',
  'beforeinput',
  'change',
  'compositionend',
  'click',
  'mousedown',
  'mouseup',
  'pointerdown',
  'pointerup',
  'focus',
  'blur',
  'focusin',
  'focusout',
  'paste',
  'drop',
  'submit',
  'mouseenter',
  'mouseleave',
  'mouseover',
  'mouseout',
];

/** A frame's fallback, where frames do not come. */
export const FALLBACK_MS = 100;

/** What the scheduler needs of the browser (a fake in tests). */
export type ScheduleEnv = {
  requestFrame(fn: () => void): void;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(h: unknown): void;
  queueMicrotask(fn: () => void): void;
  /** The type of the event being handled now (`window.event`), if any. */
  currentEvent(): string | undefined;
  /** Calls `fn` as each event of these types begins (before the page's own handlers). */
  onEvents(types: readonly string[], fn: () => void): void;
};

export type Scheduler = {
  /** Runs `fn` once, at the next frame or after FALLBACK_MS, whichever comes first. */
  nextFrame: (fn: () => void) => void;
  /** Preact's render scheduling. */
  scheduleRender: (flush: () => void) => void;
};

export function makeScheduler(env: ScheduleEnv): Scheduler {
  const users = new Set(USER_EVENTS);
  /** Drawings waiting for their frame. */
  const waiting = new Set<() => void>();
  let listening = false;
  const drawNow = () => {
    if (!waiting.size) return;
    const now = [...waiting];
    waiting.clear();
    for (const flush of now) env.queueMicrotask(flush);
  };

  const nextFrame = (fn: () => void) => {
    let done = false;
    const run = () => {
      if (done) return;
      done = true;
      env.clearTimeout(timer);
      fn();
    };
    const timer = env.setTimeout(run, FALLBACK_MS);
    env.requestFrame(run);
  };

  const scheduleRender = (flush: () => void) => {
    const e = env.currentEvent();
    if (e !== undefined && users.has(e)) {
      env.queueMicrotask(flush);
      return;
    }
    if (!listening) {
      listening = true;
      env.onEvents(USER_EVENTS, drawNow);
    }
    waiting.add(flush);
    nextFrame(() => {
      // Made already if the user's input came first.
      if (waiting.delete(flush)) flush();
    });
  };

  return { nextFrame, scheduleRender };
}
