/** A read-only value (an invitation link, a key shown once) with a button copying it. */
import type { ComponentChildren } from 'preact';
import type { Controller } from './controller.js';

export function CopyField({
  c,
  value,
  label,
  copied,
  children,
}: {
  c: Controller;
  value: string;
  /** The field's accessible name. */
  label: string;
  /** The toast once copied. */
  copied: string;
  /** More buttons after Copy. */
  children?: ComponentChildren;
}) {
  return (
    <div class="invite-link">
      <input
        class="field"
        readOnly
        value={value}
        aria-label={label}
        onFocus={(e) => e.currentTarget.select()}
      />
      <button
        class="btn"
        type="button"
        onClick={() =>
          void navigator.clipboard?.writeText(value).then(() => c.toast(copied, 'info'))
        }
      >
        Copy
      </button>
      {children}
    </div>
  );
}
