/**
 * When the app draws: web/state/schedule.ts (at the next frame; at once for the user's own
 * input, and for a drawing still waiting for its frame when that input comes), on the browser.
 */
import { makeScheduler } from '../state/schedule.js';

const scheduler = makeScheduler({
  requestFrame: (fn) => requestAnimationFrame(fn),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as number),
  queueMicrotask: (fn) => queueMicrotask(fn),
  currentEvent: () => (window as { event?: Event }).event?.type,
  // On the window in the capture phase: before any of the page's own handlers.
  onEvents: (types, fn) => {
    for (const type of types) window.addEventListener(type, fn, { capture: true, passive: true });
  },
});

/** Runs `fn` once, at the next frame or after a short timeout, whichever comes first. */
export const nextFrame = scheduler.nextFrame;

/** Preact's render scheduling (options.debounceRendering). */
export const scheduleRender = scheduler.scheduleRender;
