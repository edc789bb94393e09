/**
 * A read-only value (an invitation link, a key shown once, a message's Markdown) with a button
 * copying it.
 */
import type { ComponentChildren } from 'preact';
import type { Controller } from './controller.js';

export function CopyField({
  c,
  value,
  label,
  copied,
  multiline,
  children,
}: {
  c: Controller;
  value: string;
  /** The field's accessible name. */
  label: string;
  /** The toast once copied. */
  copied: string;
  /** Several lines (a message's Markdown): a text area as tall as `multiline` lines at most. */
  multiline?: number;
  /** More buttons after Copy. */
  children?: ComponentChildren;
}) {
  return (
    <div class={multiline ? 'invite-link multiline' : 'invite-link'}>
      {multiline ? (
        <textarea
          class="field"
          readOnly
          value={value}
          aria-label={label}
          rows={Math.min(multiline, Math.max(2, value.split('\n').length))}
        />
      ) : (
        <input
          class="field"
          readOnly
          value={value}
          aria-label={label}
          onFocus={(e) => e.currentTarget.select()}
        />
      )}
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
