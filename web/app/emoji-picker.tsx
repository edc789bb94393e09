/**
 * The emoji picker: the server's emoji (popular ones first) and the realm's custom emoji, with a
 * search box; arrow keys move in the grid, Enter picks, Esc closes.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { EmojiEntry } from '../state/autocomplete.js';
import { emojiText, searchEmoji } from '../state/emoji.js';
import type { Controller } from './controller.js';
import { useFocusBack } from './focus-back.js';
import { useLive } from './live.js';

const COLUMNS = 8;

export function EmojiPicker({ c }: { c: Controller }) {
  const p = c.picker.value!;
  const idx = c.emoji.value;
  // Enter picks from what was typed until now, not from the last drawing's matches.
  const [q, setQ, qNow] = useLive('');
  const [hover, setHover] = useState<EmojiEntry | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const grid = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLDivElement>(null);
  // Before the search field takes the focus: what had it gets it back when the picker closes.
  useFocusBack(box);
  // Focused as the picker is drawn (in the task of the click or key that opened it), not after
  // the next paint: what is typed right after opening it is searched, none of it lands on the
  // page (where r, n, c are shortcuts) or in the compose box.
  useLayoutEffect(() => input.current?.focus(), []);
  const list = idx ? searchEmoji(idx, q, 320) : [];
  const close = () => (c.picker.value = null);
  const pick = (e: EmojiEntry) => {
    close();
    p.onPick(e);
  };
  // Enter pressed while the emoji data is still loading picks the first match once it is here
  // (what the user typed and saw as "Loading…"), instead of nothing.
  const [pickOnLoad, setPickOnLoad] = useState(false);
  useEffect(() => {
    if (!pickOnLoad || !idx) return;
    setPickOnLoad(false);
    if (list[0]) pick(list[0]);
  }, [idx, pickOnLoad]);
  // The footer names the emoji under the pointer (or focused) while it is shown; after a search
  // hid it, the first match, which Enter picks.
  const sameEmoji = (a: EmojiEntry, b: EmojiEntry) => a.kind === b.kind && a.name === b.name;
  const shown = hover && list.some((e) => sameEmoji(e, hover)) ? hover : null;
  const named = shown ?? (q.trim() !== '' ? (list[0] ?? null) : null);
  const width = 340;
  const left = Math.max(8, Math.min(p.x - width, window.innerWidth - width - 8));
  const top = Math.max(8, Math.min(p.y + 4, window.innerHeight - 390));

  const move = (e: KeyboardEvent) => {
    const buttons = [...(grid.current?.querySelectorAll('button') ?? [])];
    const i = buttons.indexOf(document.activeElement as HTMLButtonElement);
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: COLUMNS, ArrowUp: -COLUMNS }[e.key];
    if (step === undefined) return;
    e.preventDefault();
    const next = i < 0 ? 0 : Math.max(0, Math.min(buttons.length - 1, i + step));
    buttons[next]?.focus();
  };

  return (
    <div
      class="overlay"
      style={{ background: 'transparent', padding: 0 }}
      onMouseDown={(e) => e.target === e.currentTarget && close()}
    >
      <div
        ref={box}
        class="popup picker"
        role="dialog"
        aria-label={p.title}
        style={{ position: 'fixed', left: `${left}px`, top: `${top}px` }}
        onKeyDown={move}
      >
        <input
          ref={input}
          class="field"
          aria-label="Search emoji"
          placeholder="Search emoji"
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              const first = idx ? searchEmoji(idx, qNow.current, 320)[0] : undefined;
              if (first) pick(first);
              else if (!idx) setPickOnLoad(true);
            } else if (e.key === 'ArrowDown') {
              e.preventDefault();
              grid.current?.querySelector('button')?.focus();
            }
          }}
        />
        {/* A listbox only with options in it (axe: an empty one, while the emoji load or when
            nothing matches, lacks its required children); the words say why it is empty. */}
        <div
          class="picker-grid"
          ref={grid}
          role={list.length > 0 ? 'listbox' : undefined}
          aria-label={list.length > 0 ? 'Emoji' : undefined}
        >
          {!idx && <span class="muted-text">Loading…</span>}
          {list.map((e) => (
            <button
              key={`${e.kind}:${e.name}`}
              type="button"
              role="option"
              aria-label={e.name.replace(/_/g, ' ')}
              title={`:${e.name}:`}
              onClick={() => pick(e)}
              onMouseEnter={() => setHover(e)}
              onFocus={() => setHover(e)}
            >
              {e.kind === 'unicode' ? emojiText(e.code) : <img src={e.url} alt="" />}
            </button>
          ))}
          {/* Without the server's emoji (their file could not be fetched: the toast says so,
              the next opening tries again), the realm's own only, or these words. */}
          {idx && list.length === 0 && (
            <span class="muted-text">
              {c.emojiPartial ? 'Could not load the emoji list.' : 'No emoji match.'}
            </span>
          )}
        </div>
        <div class="picker-name">{named ? `:${named.name}:` : p.title}</div>
      </div>
    </div>
  );
}
