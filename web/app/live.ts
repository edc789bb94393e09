/**
 * State a component draws from and its handlers read as it is now. `useState`'s value is the one
 * of the last drawing: a handler that runs before the next one (a key pressed right after typing,
 * while a drawing waits for the next frame; two events in one task) would act on what was there
 * before. The setter here updates `live.current` at once, then schedules the drawing as
 * `useState`'s does; handlers read `live.current`, the drawing reads the value.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Controller } from './controller.js';

export type Live<T> = { readonly current: T };
export type SetLive<T> = (next: T | ((now: T) => T)) => void;

export function useLive<T>(initial: T | (() => T)): [T, SetLive<T>, Live<T>] {
  const [value, setValue] = useState(initial);
  const live = useRef(value);
  const set = useRef<SetLive<T>>((next) => {
    const v = typeof next === 'function' ? (next as (now: T) => T)(live.current) : next;
    live.current = v;
    setValue(() => v);
  }).current;
  return [value, set, live];
}

/** Re-renders the component on each change of a state object with `subscribe`. */
export function useChanges(st: { subscribe(fn: () => void): () => void }): void {
  const [, setTick] = useState(0);
  useEffect(() => st.subscribe(() => setTick((n) => n + 1)), [st]);
}

/** The app's API calls, as the settings panels' framework-free state modules take them. */
export function requestOf(
  c: Controller,
): <T = Record<string, unknown>>(
  method: string,
  path: string,
  params?: Record<string, unknown>,
) => Promise<T> {
  return (method, path, params) => c.client.request(method, path, params ?? {});
}
