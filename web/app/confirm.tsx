/**
 * The app's confirmation dialog, in place of the browser's `confirm()` box (as the reference's
 * web app asks in its own modals): a title, what will happen, Cancel and the action (styled as
 * destructive when it deletes or cannot be taken back), and the asker's own choices between them
 * when it has some (`extra`). The action's button has the focus when it opens, Enter confirms
 * (except in a text area, where it starts a line), Esc (or a click outside) cancels, Tab stays
 * within it; the focus goes back where it was afterwards (Controller.answer). Asked with
 * `await c.ask({...})`.
 */
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Controller, Question } from './controller.js';

export function ConfirmDialog({ c }: { c: Controller }) {
  const q = c.question.value;
  // Keyed: a new question is a new dialog (its focus set again).
  return q ? <Confirm key={q.id} c={c} q={q} /> : null;
}

function Confirm({ c, q }: { c: Controller; q: Question }) {
  const box = useRef<HTMLDivElement>(null);
  const action = useRef<HTMLButtonElement>(null);
  // Before it is painted: a key pressed as soon as it shows goes to it, not to what is behind.
  useLayoutEffect(() => action.current?.focus(), []);
  const keys = (e: KeyboardEvent) => {
    // Nothing behind it hears its keys (the app's shortcuts, Esc closing the settings).
    e.stopPropagation();
    if (e.key === 'Escape') {
      e.preventDefault();
      c.answer(false);
    } else if (e.key === 'Enter' && !e.isComposing && !(e.target instanceof HTMLTextAreaElement)) {
      // Enter confirms, but on Cancel (reached with Tab) it cancels, as a button does.
      e.preventDefault();
      c.answer(!(e.target as HTMLElement).classList.contains('cancel'));
    } else if (e.key === 'Tab') {
      const buttons = [
        ...(box.current?.querySelectorAll<HTMLElement>('button, input, textarea, select') ?? []),
      ];
      const at = buttons.indexOf(document.activeElement as HTMLElement);
      const next = (at + (e.shiftKey ? -1 : 1) + buttons.length) % buttons.length;
      e.preventDefault();
      buttons[next]?.focus();
    }
  };
  return (
    <div
      class="overlay confirm-overlay"
      onMouseDown={(e) => e.target === e.currentTarget && c.answer(false)}
    >
      <div
        ref={box}
        class="dialog confirm"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="confirm-title"
        aria-describedby="confirm-text"
        onKeyDown={keys}
      >
        <h2 id="confirm-title">{q.title}</h2>
        <p id="confirm-text">{q.text}</p>
        {q.extra && <div class="confirm-extra">{q.extra}</div>}
        <div class="confirm-actions">
          <button class="btn cancel" type="button" onClick={() => c.answer(false)}>
            Cancel
          </button>
          <button
            ref={action}
            class={q.danger ? 'btn destructive' : 'btn primary'}
            type="button"
            onClick={() => c.answer(true)}
          >
            {q.action}
          </button>
        </div>
      </div>
    </div>
  );
}
