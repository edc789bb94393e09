/**
 * Where the focus goes in place of an element that went: a list's row drawn again as another (a
 * topic renamed or resolved is a new row of the sidebar, by its new name) registers what stands
 * for it, and what gives the focus back after a dialog (focus-back.ts, Controller.answer) asks
 * here when the element it would give it to is gone, before falling back to the messages.
 */

const successors = new WeakMap<Element, (gone: Element) => HTMLElement | null | undefined>();

/** `el` (a row; null when Preact lets go of it) stands for what `to` gives once it went. */
export function setFocusSuccessor(
  el: Element | null,
  to: (gone: Element) => HTMLElement | null | undefined,
): void {
  if (el) successors.set(el, to);
}

/**
 * What takes the focus in place of `el`: itself while in the page, else what stands for it or
 * for the nearest of its (removed) ancestors that registered, if that is in the page.
 */
export function focusSuccessor(el: Element): HTMLElement | null {
  if (el.isConnected) return el instanceof HTMLElement ? el : null;
  for (let p: Element | null = el; p; p = p.parentElement) {
    const to = successors.get(p)?.(el);
    if (to) return to.isConnected ? to : null;
  }
  return null;
}
