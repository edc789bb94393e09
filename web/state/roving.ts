/**
 * A toolbar's arrow keys (WAI-ARIA toolbar, roving tabindex): where the focus goes from control
 * `at` of `count` for `key`. → and ← move to the next and the previous, wrapping around; Home and
 * End to the first and the last. Undefined for any other key, or nothing to move between.
 */
export function roveTo(key: string, at: number, count: number): number | undefined {
  if (count === 0 || at < 0 || at >= count) return undefined;
  switch (key) {
    case 'ArrowRight':
      return (at + 1) % count;
    case 'ArrowLeft':
      return (at - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return undefined;
  }
}

/**
 * A list's rows (the Recent conversations view): where the focus goes from row `at` of `count`
 * for `key`. ↓ and `j` to the next, ↑ and `k` to the previous (no wrapping: the list's ends
 * stop, as the reference's table does), Home and End to the first and the last. Undefined for
 * any other key, or nothing to move between.
 */
export function roveRows(key: string, at: number, count: number): number | undefined {
  if (count === 0) return undefined;
  const from = Math.min(Math.max(at, 0), count - 1);
  switch (key) {
    case 'ArrowDown':
    case 'j':
      return Math.min(from + 1, count - 1);
    case 'ArrowUp':
    case 'k':
      return Math.max(from - 1, 0);
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return undefined;
  }
}
