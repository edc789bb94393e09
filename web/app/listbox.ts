/**
 * The arrow keys of a suggestion list (autocomplete, topics, recipients, jump): ↓ and ↑ move the
 * highlighted option, wrapping around. Returns whether the key was one of them (then handled).
 */
export function moveActive(
  e: KeyboardEvent,
  count: number,
  setActive: (f: (a: number) => number) => void,
): boolean {
  if ((e.key !== 'ArrowDown' && e.key !== 'ArrowUp') || count === 0) return false;
  e.preventDefault();
  const step = e.key === 'ArrowDown' ? 1 : count - 1;
  setActive((a) => (a + step) % count);
  return true;
}
