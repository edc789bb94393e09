/**
 * Code the first screen does not need, fetched when first used (a dynamic import: a chunk of its
 * own, scripts/build-web.mjs), and when the browser is idle after the first screen, so that a
 * later first use finds it loaded. While it loads, its place says so (a dialog's frame, or the
 * view's); a failed fetch (offline, or the server restarted with a new build whose chunks have
 * other names) says so there, with Try again, instead of a blank or a stuck screen.
 */
import type { ComponentChildren, VNode } from 'preact';
import { useEffect } from 'preact/hooks';
import { signal, type ReadonlySignal } from '@preact/signals';

export type Piece<M> = {
  /** The module, fetched once; a failed fetch is tried again on the next call. */
  load(): Promise<M>;
  /** The module if it has loaded, else null. */
  loaded(): M | null;
  /** Where its fetch is (read in a component: drawn again as it changes). */
  readonly state: ReadonlySignal<'idle' | 'loading' | 'loaded' | 'failed'>;
};

export function piece<M>(fetchIt: () => Promise<M>): Piece<M> {
  let mod: M | null = null;
  let loading: Promise<M> | null = null;
  const state = signal<'idle' | 'loading' | 'loaded' | 'failed'>('idle');
  return {
    load() {
      if (!loading) {
        state.value = 'loading';
        loading = fetchIt().then(
          (m) => {
            mod = m;
            state.value = 'loaded';
            return m;
          },
          (e: unknown) => {
            loading = null;
            state.value = 'failed';
            console.warn('Confab: could not load a part of the app', e);
            throw e;
          },
        );
      }
      return loading;
    },
    loaded: () => mod,
    state,
  };
}

/**
 * The pieces fetched once the first screen is drawn and the browser is idle, one after the other
 * (a failure is left for the first use to show). Called again, it does nothing more.
 */
let prefetched = false;
export function prefetchWhenIdle(pieces: readonly Piece<unknown>[]): void {
  if (prefetched) return;
  prefetched = true;
  const idle: (f: () => void) => void =
    typeof requestIdleCallback === 'function'
      ? (f) => requestIdleCallback(f, { timeout: 5000 })
      : (f) => setTimeout(f, 2000);
  const next = (i: number) => {
    if (i >= pieces.length) return;
    idle(() => {
      pieces[i]!.load().then(
        () => next(i + 1),
        () => undefined,
      );
    });
  };
  next(0);
}

/**
 * The module of a piece, its fetch started as the component first draws if it is not loaded or
 * loading (a piece that failed before is tried again as it is opened again; while open, Try again).
 */
function useLoaded<M>(p: Piece<M>, start = true): M | null {
  void p.state.value; // drawn again as it loads or fails
  useEffect(() => {
    const now = p.state.peek();
    if (start && (now === 'idle' || now === 'failed')) p.load().catch(() => undefined);
  }, []);
  return p.loaded();
}

/**
 * What stands in for a piece not loaded: a note that it loads (shown only if it takes a while:
 * app.css, .lazy-wait), or that it failed, with Try again and Reload the page (a server updated
 * since the page loaded has the new build's chunks only: the page's own are gone; drafts are kept
 * across a reload).
 */
function Waiting({ p, what }: { p: Piece<unknown>; what: string }): VNode {
  return p.state.value === 'failed' ? (
    <p class="lazy-loading" role="alert">
      Could not load {what}. Check the connection, or reload the page if the server was updated.{' '}
      <button
        class="btn lazy-retry"
        type="button"
        onClick={() => void p.load().catch(() => undefined)}
      >
        Try again
      </button>{' '}
      <button class="btn" type="button" onClick={() => location.reload()}>
        Reload the page
      </button>
    </p>
  ) : (
    <p class="lazy-loading" role="status">
      Loading {what}…
    </p>
  );
}

/**
 * A dialog whose code is a piece: drawn by `show` once loaded; until then a dialog's frame saying
 * it loads (after a moment: a quick load shows nothing), or that it failed. The focus stays where
 * it is (the dialog, when drawn, takes it and gives it back there as it closes: focus-back.ts);
 * the app's keys wait while a dialog is open, and Esc closes this one as any (shell.tsx).
 */
export function LazyDialog<M>({
  piece: p,
  what,
  label,
  wrap = '',
  onClose,
  show,
  stand,
}: {
  piece: Piece<M>;
  /** "the settings", for "Loading the settings…" */
  what: string;
  label: string;
  /** The dialog's own class (its width), for the frame. */
  wrap?: string;
  onClose: () => void;
  show: (m: M) => ComponentChildren;
  /** Drawn at once while it loads, instead of the note (Jump's field, taking the keys typed). */
  stand?: () => ComponentChildren;
}) {
  const mod = useLoaded(p);
  if (mod) return <>{show(mod)}</>;
  const failed = p.state.value === 'failed';
  return (
    <div
      class={`overlay${failed || stand ? '' : ' lazy-wait'}`}
      onMouseDown={(e) => e.target === e.currentTarget && onClose()}
    >
      <div class={`dialog lazy-dialog ${wrap}`} role="dialog" aria-modal="true" aria-label={label}>
        {stand && !failed ? stand() : <Waiting p={p} what={what} />}
      </div>
    </div>
  );
}

/**
 * A view (or part of one) whose code is a piece: in its place until loaded, the same note.
 * `quiet`: nothing at all until loaded, and no fetch of its own (a part kept hidden until
 * another of the same piece is shown, which fetches it and says how that goes: the compose box).
 */
export function LazyPart<M>({
  piece: p,
  what,
  show,
  quiet = false,
}: {
  piece: Piece<M>;
  what: string;
  show: (m: M) => ComponentChildren;
  quiet?: boolean;
}) {
  const mod = useLoaded(p, !quiet);
  if (mod) return <>{show(mod)}</>;
  if (quiet) return null;
  return (
    <div class={`lazy-part${p.state.value === 'failed' ? '' : ' lazy-wait'}`}>
      <Waiting p={p} what={what} />
    </div>
  );
}
