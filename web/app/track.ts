import type { ReadonlySignal } from '@preact/signals';

/**
 * Subscribes the running component (or effect) to revision signals it does not otherwise read:
 * the state modules bump them when what they guard changed.
 */
export function track(...revs: ReadonlySignal<number>[]): number {
  let sum = 0;
  for (const r of revs) sum += r.value;
  return sum;
}
