/**
 * What the settings panels share to act on their rows: one request at a time for a panel
 * (`useAction`: busy while it runs, the server's refusal kept until the next one, what it did
 * said once it succeeded; `Outcome` shows both), and a row's button (`RowAction`: Delete, Remove,
 * Unmute, Revoke, Deactivate…) that asks first in the app's confirmation dialog when the action
 * cannot be taken back, then acts, disabled while the panel's request runs.
 */
import { useState } from 'preact/hooks';
import { FormError } from './bits.js';
import type { Controller } from './controller.js';
import { errorText } from './settings.js';

/**
 * One request at a time for a panel: busy while it runs, its failure (the server's words) kept
 * until the next one, and what it did said once it succeeded (when there is something to say).
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = async (fn: () => Promise<unknown>, said?: string): Promise<boolean> => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      await fn();
      setDone(said ?? null);
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  /**
   * One request for each item, sent together (the API takes one at a time): busy until all are
   * answered, then what those that succeeded did (`said`, given them) and each refusal with its
   * item (`refused`, given the item and the server's words), one a line. Gives the items refused.
   */
  const runEach = async <T,>(
    items: readonly T[],
    fn: (item: T) => Promise<unknown>,
    said: (done: T[]) => string,
    refused: (item: T, why: string) => string,
  ): Promise<T[]> => {
    setBusy(true);
    setError(null);
    setDone(null);
    const results = await Promise.allSettled(items.map((item) => fn(item)));
    const ok = items.filter((_, i) => results[i]!.status === 'fulfilled');
    const failed = items.filter((_, i) => results[i]!.status === 'rejected');
    const whys = results.flatMap((r, i) =>
      r.status === 'rejected' ? [refused(items[i]!, errorText(r.reason))] : [],
    );
    setDone(ok.length > 0 ? said(ok) : null);
    setError(whys.length > 0 ? whys.join('\n') : null);
    setBusy(false);
    return failed;
  };
  const fail = (why: string) => {
    setDone(null);
    setError(why);
  };
  return { busy, error, done, run, runEach, fail };
}

export type Action = ReturnType<typeof useAction>;

/** What the last action did or why it failed. */
export function Outcome({ error, done }: { error: string | null; done: string | null }) {
  return (
    <>
      <FormError error={error} />
      {done && (
        <p class="muted-text" role="status">
          {done}
        </p>
      )}
    </>
  );
}

/** How a row's button acts once confirmed. */
type Acts =
  /** Through the panel's `useAction`: the request, and what it did once it succeeded. */
  | { act: Action; request: () => Promise<unknown>; said?: string }
  /** A state object's own method, which keeps its own busy state and outcome (bots, invitations). */
  | { busy: boolean; run: () => Promise<unknown> };

export type RowActionProps = Acts & {
  /** The button's text. */
  label: string;
  /** Its accessible name, naming the row ("Delete notes.txt"); the label alone without it. */
  name?: string;
  /** Styled as destructive (and so is the confirmation's button). */
  danger?: boolean;
  /** Asked first, with the label as the confirming button; Cancel does nothing. */
  confirm?: { c: Controller; title: string; text: string };
};

export function RowAction(p: RowActionProps) {
  const busy = 'act' in p ? p.act.busy : p.busy;
  const press = async () => {
    const q = p.confirm;
    if (q && !(await q.c.ask({ title: q.title, text: q.text, action: p.label, danger: p.danger })))
      return;
    if ('act' in p) await p.act.run(p.request, p.said);
    else await p.run();
  };
  return (
    <button
      class={p.danger ? 'btn danger' : 'btn'}
      type="button"
      disabled={busy}
      aria-label={p.name}
      onClick={() => void press()}
    >
      {p.label}
    </button>
  );
}
