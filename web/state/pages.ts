/**
 * A long list drawn a page at a time (the people column, the Users panel, a channel's members):
 * how many rows, and the "Show more" wording. A module of its own, small, for the people column
 * in the first load (users.ts re-exports it; docs/web.md, "Budgets").
 */

/** Rows drawn at first, and added by each "Show more". */
export const PAGE_SIZE = 100;

/** How many of `total` are drawn, and the "Show more" wording (null: all are). */
export function pageOf<T>(list: readonly T[], shown: number): { rows: T[]; more: string | null } {
  const rows = list.slice(0, shown);
  if (rows.length >= list.length) return { rows, more: null };
  const next = Math.min(PAGE_SIZE, list.length - rows.length);
  return {
    rows,
    more: `Show ${next} more (${rows.length.toLocaleString('en-US')} of ${list.length.toLocaleString('en-US')} shown)`,
  };
}
