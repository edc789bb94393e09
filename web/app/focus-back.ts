/**
 * The focus of a dialog or popup (Settings, the emoji picker): taken as it opens, given back as
 * it closes to what had it before (the button that opened it), or, where that is gone (a menu's
 * item, closed since), to the message list. Without it the focus fell to the page's body when
 * the dialog went: a keyboard user was back at the first Tab stop, and j/k, Esc and the arrows
 * did nothing until they found the list again.
 */
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { focusSuccessor } from './focus-successor.js';

export function useFocusBack(
  box: { readonly current: HTMLElement | null },
  /** What gets the focus as it opens (none: the component gives it, as the picker its field). */
  first?: () => HTMLElement | null | undefined,
  /** Selects a message in the list (giveFocusBack). */
  select?: (id: number) => void,
): () => void {
  const giveBack = useRef<() => void>(() => undefined);
  useLayoutEffect(() => {
    const el = box.current;
    const before = document.activeElement as HTMLElement | null;
    if (el && !el.contains(document.activeElement)) first?.()?.focus({ preventScroll: true });
    // What had it, or what stands for it now that it went (a sidebar topic renamed while its
    // Move dialog was open: the row of its new name), else the message list.
    giveBack.current = () => giveFocusBack(before, select);
    return () => {
      // Only if the focus is still inside (about to go with it) or already gone: not when a
      // pick moved it on (the compose box's emoji goes into its text, which takes the focus).
      const now = document.activeElement;
      if (now && now !== document.body && !el?.contains(now)) return;
      giveBack.current();
    };
  }, []);
  // Given back before the dialog goes, for one that hands over to another (the Move dialog to
  // its "Move some messages?"): that one then gives it back to the same place.
  return () => giveBack.current();
}

/**
 * The focus given back to `before` (what had it as a dialog opened), or what stands for it now,
 * else to the message list. From a message's toolbar or its "⋮" menu (a dialog one of its items
 * opened), to the message list with that message selected, as the reference's: on the "⋮" the
 * list's keys (j, k, the arrows) did nothing until a second Esc.
 */
export function giveFocusBack(before: Element | null, select?: (id: number) => void): void {
  const list = document.querySelector<HTMLElement>('.messages');
  const row = before?.isConnected ? before.closest<HTMLElement>('.msg[data-id]') : null;
  if (list && row && list.contains(row) && before!.closest('.msg-actions') && select) {
    select(Number(row.dataset.id));
    list.focus({ preventScroll: true });
    return;
  }
  const to = (before && before !== document.body ? focusSuccessor(before) : null) ?? list;
  to?.focus({ preventScroll: true });
}

/** A modal dialog's Tab: round within it, not on to the page behind. */
export function wrapTab(box: HTMLElement | null, e: KeyboardEvent): void {
  if (e.key !== 'Tab' || !box) return;
  const all = [
    ...box.querySelectorAll<HTMLElement>(
      'a[href], button:not(:disabled), input:not(:disabled), select, textarea, [tabindex="0"]',
    ),
  ].filter((el) => el.offsetParent !== null);
  // Radio buttons are one Tab stop: only the checked one of each group counts.
  const stops = all.filter(
    (el) => !(el instanceof HTMLInputElement && el.type === 'radio') || el.checked,
  );
  const edge = e.shiftKey ? stops[0] : stops.at(-1);
  if (edge !== document.activeElement) return;
  e.preventDefault();
  (e.shiftKey ? stops.at(-1) : stops[0])?.focus();
}

/**
 * A list drawn a page at a time ("Show 100 more"): once the last page is drawn its button is
 * gone, and the focus that went with it goes on to what `target` gives for the first row that
 * page added. Returns what the button calls with that row's index before asking for the page.
 */
export function useLastPageFocus(
  more: boolean,
  target: (at: number) => HTMLElement | null | undefined,
): (at: number) => void {
  const firstNew = useRef<number | null>(null);
  useEffect(() => {
    const at = firstNew.current;
    if (at === null || more) return;
    firstNew.current = null;
    // Only if the focus went with the button (not when it moved elsewhere meanwhile).
    if (document.activeElement && document.activeElement !== document.body) return;
    target(at)?.focus();
  });
  return (at) => (firstNew.current = at);
}
