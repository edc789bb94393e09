/*
 * The keyboard focus of a view made of rows (the Inbox, Recent conversations): the rows are one
 * Tab stop, `at` the one that has it (tabIndex 0). The focus stays on its row, by key, when rows
 * come and go (a new message, a read), moves with the arrow keys, j/k, Home and End (roveRows),
 * comes from the filter box with ↓ or Esc, ← → move between a row's links and buttons (wrapping
 * round, as the reference's columns), and goes to the first row when the view is shown with
 * nothing focused (on load or from a key), as the reference's views do, so that ↓ and Enter open
 * a conversation.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { roveRows, roveTo } from '../state/roving.js';

/** `selector`: the focusable element of each row, in row order. */
export function useRowFocus(rows: readonly { key: string }[], selector: string) {
  const [focusKey, setFocusKey] = useState<string | null>(null);
  const list = useRef<HTMLUListElement>(null);
  /** Focus to move on the next drawing: by a key, or on the view's showing ('auto'). */
  const moveFocus = useRef<false | 'key' | 'auto'>(false);
  const at = Math.max(
    0,
    rows.findIndex((r) => r.key === focusKey),
  );
  const focusRow = (key: string, why: 'key' | 'auto' = 'key') => {
    moveFocus.current = why;
    setFocusKey(key);
  };

  useLayoutEffect(() => {
    const el = list.current;
    if (!el) return;
    const active = document.activeElement;
    const inside = el.contains(active);
    const why = moveFocus.current;
    moveFocus.current = false;
    if (!inside && !why) return;
    // The view's showing found nothing focused, but the user has focused something since (the
    // filter box): that stays.
    if (!inside && why === 'auto' && active && active !== document.body) return;
    const target = el.querySelectorAll<HTMLElement>(selector)[at];
    // Already in that row (on its ✓ or menu, from Tab or ← →): it stays where it is.
    if (!target || (active && target.closest('li')?.contains(active))) return;
    target.focus({ preventScroll: false });
  });

  const started = useRef(false);
  useEffect(() => {
    if (started.current || rows.length === 0) return;
    started.current = true;
    const active = document.activeElement;
    if (!active || active === document.body) focusRow(rows[0]!.key, 'auto');
  }, [rows.length > 0]);

  /** The list's keys. */
  const onKey = (e: KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && moveColumn(e.key)) {
      e.preventDefault();
      e.stopPropagation();
      return;
    }
    const next = roveRows(e.key, at, rows.length);
    if (next === undefined) return;
    e.preventDefault();
    e.stopPropagation();
    focusRow(rows[next]!.key);
  };

  /**
   * ← → in a row: between its links and buttons (a topic, its ✓, its menu; a channel, its
   * topic), wrapping round, as the reference's columns. Not in an open menu (its own keys).
   */
  const moveColumn = (key: string): boolean => {
    const from = document.activeElement;
    const row = from instanceof HTMLElement ? from.closest('li') : null;
    if (!row || !list.current?.contains(row) || from!.closest('[role="menu"]')) return false;
    const cols = [...row.querySelectorAll<HTMLElement>('a[href], button')].filter(
      (c) => c.getClientRects().length > 0 && !c.closest('[role="menu"]'),
    );
    const next = roveTo(key, cols.indexOf(from as HTMLElement), cols.length);
    if (next === undefined) return false;
    cols[next]!.focus();
    return true;
  };

  /** The filter box's keys: ↓ or Esc go to the first row. */
  const onFilterKey = (e: KeyboardEvent) => {
    if ((e.key === 'ArrowDown' || e.key === 'Escape') && rows.length > 0) {
      e.preventDefault();
      focusRow(rows[0]!.key);
      // Drawn already when the key does not change: focus now.
      list.current?.querySelector<HTMLElement>(selector)?.focus();
    }
  };

  return { list, at, setFocusKey, onKey, onFilterKey };
}
