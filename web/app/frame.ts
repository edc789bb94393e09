/**
 * When the app draws: at the next frame, so that events arriving in separate socket frames or
 * polls within one frame are drawn once; at once (the next microtask) for the user's own input,
 * so that a key pressed right after typing sees what the typing drew; and, where frames do not
 * come (a tab hidden or covered), after a short timeout instead, so that the state, the title and
 * the notifications still follow. Nothing is scheduled while nothing changes.
 */
const USER_EVENTS = new Set([
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
]);

const FALLBACK_MS = 100;

/** Runs `fn` once, at the next frame or after FALLBACK_MS, whichever comes first. */
export function nextFrame(fn: () => void): void {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    fn();
  };
  const timer = setTimeout(run, FALLBACK_MS);
  requestAnimationFrame(run);
}

/** Whether the code running now handles the user's own input. */
function inUserEvent(): boolean {
  const e = (window as { event?: Event }).event;
  return e !== undefined && USER_EVENTS.has(e.type);
}

/** Preact's render scheduling (options.debounceRendering). */
export function scheduleRender(flush: () => void): void {
  if (inUserEvent()) queueMicrotask(flush);
  else nextFrame(flush);
}
