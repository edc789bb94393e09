/**
 * A "⋮" menu (as the reference's popovers): a button, and a list of actions under it (over it
 * where there is no room below). The focus goes to the first action as the list is drawn, so that
 * keys pressed right after opening act in it, and back to the button after; ↑ ↓ Home End move
 * between the actions, Escape or a focus elsewhere closes it. The sidebar's rows and, on narrow
 * screens, the messages have one; a channel message's recipient bar has one of choices (its
 * topic's visibility, topic-policy.tsx), the current one checked.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Icon, type IconName } from './icons.js';

export type MenuItem = {
  label: string;
  /** Runs after the menu closed; `button` is the menu's (to anchor what the action opens). */
  run: (button: HTMLElement) => void;
  /** An action that cannot be undone (drawn red). */
  danger?: boolean;
  /**
   * A choice of one among the menu's (a menuitemradio): true for the one that applies now
   * (marked), false for the others; undefined for a plain action.
   */
  checked?: boolean;
};

const ITEMS = '[role="menuitem"], [role="menuitemradio"]';

/** The nearest ancestor of `el` that scrolls (and so cuts what overflows it), if any. */
function scrollerOf(el: HTMLElement): HTMLElement | null {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const y = getComputedStyle(p).overflowY;
    if (y === 'auto' || y === 'scroll' || y === 'hidden') return p;
  }
  return null;
}

export function Menu({
  label,
  menuLabel,
  icon = 'more',
  items,
  class: cls,
  tabIndex,
}: {
  /** The button's accessible name (and tooltip), and the list's unless `menuLabel` is given. */
  label: string;
  /** The list's accessible name, where the button's says something else (a state). */
  menuLabel?: string;
  /** The button's icon: "⋮" unless said. */
  icon?: IconName;
  items: MenuItem[];
  /** The button's, where it is one of a toolbar's buttons (roving tabindex). */
  tabIndex?: number;
  /** The class of the wrapper; its button is `<class>-btn`, its list `<class>-list`. */
  class: string;
}) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  // As the list is drawn, in the same task as the click or key that opened it (web/state/
  // schedule.ts draws the user's input at once), not after the next paint (useEffect): an Enter
  // pressed right after opening acts on the first action, not on the button again.
  useLayoutEffect(() => {
    const list = menu.current;
    if (!open || !list) return;
    list.querySelector<HTMLElement>(ITEMS)?.focus({ preventScroll: true });
    // Over the button where the list would run past the bottom of what scrolls around it (the
    // message list, the sidebar) or of the window, and there is more room above. An attribute
    // Preact does not draw, so that the list's redraws keep it.
    list.removeAttribute('data-up');
    list.removeAttribute('data-end');
    const r = list.getBoundingClientRect();
    const b = button.current!.getBoundingClientRect();
    const area = scrollerOf(list)?.getBoundingClientRect();
    const bottom = Math.min(area?.bottom ?? Infinity, window.innerHeight);
    const top = Math.max(area?.top ?? 0, 0);
    if (r.bottom > bottom && b.top - top > bottom - b.bottom) list.setAttribute('data-up', '');
    // A list drawn from its button's start (the recipient bar's) that would run past the
    // window's right edge ends at its button's end instead (app.css).
    if (r.right > document.documentElement.clientWidth) list.setAttribute('data-end', '');
  }, [open]);
  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };
  const move = (e: KeyboardEvent) => {
    const all = [...(menu.current?.querySelectorAll<HTMLElement>(ITEMS) ?? [])];
    const i = all.indexOf(document.activeElement as HTMLElement);
    const n = all.length;
    const to = {
      ArrowDown: (i + 1) % n,
      ArrowUp: (i - 1 + n) % n,
      Home: 0,
      End: n - 1,
    }[e.key];
    if (to === undefined || n === 0) return false;
    all[to]?.focus();
    return true;
  };
  return (
    <span
      class={cls}
      onFocusOut={(e) => {
        const to = e.relatedTarget as Node | null;
        if (open && !(to && e.currentTarget.contains(to))) close(false);
      }}
      onKeyDown={(e) => {
        if (!open) return;
        if (e.key === 'Escape') close(true);
        else if (!move(e)) return;
        e.preventDefault();
        e.stopPropagation();
      }}
    >
      <button
        ref={button}
        class={`icon-btn ${cls}-btn`}
        type="button"
        aria-label={label}
        title={label}
        aria-haspopup="menu"
        aria-expanded={open}
        tabIndex={tabIndex}
        onClick={() => setOpen(!open)}
      >
        <Icon name={icon} />
      </button>
      {open && (
        <div ref={menu} class={`menu ${cls}-list`} role="menu" aria-label={menuLabel ?? label}>
          {items.map((it) => (
            <button
              key={it.label}
              class={it.danger ? 'menu-item danger' : 'menu-item'}
              type="button"
              role={it.checked === undefined ? 'menuitem' : 'menuitemradio'}
              aria-checked={it.checked}
              onClick={() => {
                const b = button.current!;
                close(true);
                it.run(b);
              }}
            >
              {it.checked !== undefined && (
                <span class="menu-check">{it.checked && <Icon name="check" />}</span>
              )}
              {it.label}
            </button>
          ))}
        </div>
      )}
    </span>
  );
}
