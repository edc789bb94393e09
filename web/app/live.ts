/**
 * State a component draws from and its handlers read as it is now. `useState`'s value is the one
 * of the last drawing: a handler that runs before the next one (a key pressed right after typing,
 * while a drawing waits for the next frame; two events in one task) would act on what was there
 * before. The setter here updates `live.current` at once, then schedules the drawing as
 * `useState`'s does; handlers read `live.current`, the drawing reads the value.
 */
import { useRef, useState } from 'preact/hooks';

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
