/**
 * User status (as the reference's user_status_ui): the emoji a person set, shown after their name
 * (the people list, their messages, their card) with its text as the tooltip and for screen
 * readers (status-emoji.tsx, part of the first load); and, here, loaded when first opened
 * (lazy-dialogs.ts), the "Set status" dialog for one's own: a text (up to the server's limit), an emoji
 * from the app's picker, the reference's common presets (↓ ↑ go from the text through them),
 * Clear, Save (only when something changed; Enter in the text saves too), Cancel or Esc. The status shows when the server's
 * `user_status` event comes back, as everyone else sees it.
 */
import { useRef, useState } from 'preact/hooks';
import { MAX_STATUS_TEXT, PRESETS, statusRequest, type Status } from '../state/user-status.js';
import type { Controller } from './controller.js';
import { useFocusBack, wrapTab } from './focus-back.js';
import { Icon } from './icons.js';
import { CloseButton } from './bits.js';
import { openPicker } from './message.js';
import { Glyph } from './status-emoji.js';
import { track } from './track.js';

/** The dialog to set one's status (opened by `c.dialog.value = { kind: 'status' }`). */
export function StatusDialog({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.status);
  const now = s.statuses.get(s.selfId);
  const [draft, setDraft] = useState<Status>(now);
  const [saving, setSaving] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  // The text field has the focus as it opens; it goes back where it was as it closes.
  useFocusBack(box, () => input.current);
  const change = statusRequest(now, draft);
  const close = () => {
    if (c.dialog.value?.kind === 'status') c.dialog.value = null;
  };
  const save = async () => {
    const req = statusRequest(s.statuses.get(s.selfId), draft);
    if (!req) return close();
    setSaving(true);
    if (await c.setStatus(req)) close();
    else setSaving(false);
  };
  const keys = (e: KeyboardEvent) => {
    // Nothing behind it hears its keys (the app's shortcuts; Esc is its own).
    e.stopPropagation();
    if (e.key === 'Escape') {
      e.preventDefault();
      close();
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      // As the reference's: the arrows go from the text through the presets, round.
      const stops = [
        ...(box.current?.querySelectorAll<HTMLElement>('.status-text, .status-preset') ?? []),
      ];
      const i = stops.indexOf(document.activeElement as HTMLElement);
      if (i < 0) return;
      e.preventDefault();
      stops[(i + (e.key === 'ArrowDown' ? 1 : -1) + stops.length) % stops.length]?.focus();
    } else {
      wrapTab(box.current, e);
    }
  };
  const chooseEmoji = (button: HTMLElement) =>
    openPicker(c, button, 'Choose a status emoji', (entry) =>
      setDraft((d) => ({
        ...d,
        emoji: {
          name: entry.name,
          code: entry.code,
          type: entry.kind === 'realm' ? 'realm_emoji' : 'unicode_emoji',
        },
      })),
    );
  const preset = (p: (typeof PRESETS)[number]) => {
    const e = c.emoji.value?.byName.get(p.emoji);
    setDraft({
      text: p.text,
      emoji: e
        ? { name: e.name, code: e.code, type: e.kind === 'realm' ? 'realm_emoji' : 'unicode_emoji' }
        : null,
    });
    input.current?.focus();
  };
  // The presets' emoji come with the emoji data (fetched once, for the picker too).
  void c.loadEmoji();
  const left = MAX_STATUS_TEXT - [...draft.text.trim()].length;
  const empty = draft.text === '' && !draft.emoji;

  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div
        ref={box}
        class="dialog status-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="status-title"
        onKeyDown={keys}
      >
        <header>
          <h2 id="status-title">Set status</h2>
          <CloseButton onClick={close} />
        </header>
        <div class="body">
          <div class="status-field">
            <button
              class="icon-btn status-emoji-btn"
              type="button"
              aria-label={
                draft.emoji ? `Emoji: ${draft.emoji.name.replace(/_/g, ' ')}` : 'Choose an emoji'
              }
              title={draft.emoji ? `:${draft.emoji.name}:` : 'Choose an emoji'}
              onClick={(e) => chooseEmoji(e.currentTarget)}
            >
              {draft.emoji ? <Glyph s={s} emoji={draft.emoji} /> : <Icon name="smile" />}
            </button>
            <input
              ref={input}
              class="field status-text"
              type="text"
              aria-label="Status text"
              placeholder="Your status"
              maxLength={MAX_STATUS_TEXT}
              value={draft.text}
              onInput={(e) => {
                const text = e.currentTarget.value;
                setDraft((d) => ({ ...d, text }));
              }}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.isComposing) {
                  e.preventDefault();
                  void save();
                }
              }}
            />
            {!empty && (
              <button
                class="icon-btn status-clear"
                type="button"
                aria-label="Clear status"
                title="Clear status"
                onClick={() => {
                  setDraft({ text: '', emoji: null });
                  input.current?.focus();
                }}
              >
                <Icon name="x" />
              </button>
            )}
          </div>
          <p class="status-left" aria-live="polite">
            {left <= 10 ? `${left} characters left` : ''}
          </p>
          <ul class="status-presets" aria-label="Common statuses">
            {PRESETS.map((p) => {
              const e = c.emoji.value?.byName.get(p.emoji);
              return (
                <li key={p.text}>
                  <button class="status-preset" type="button" onClick={() => preset(p)}>
                    <span class="status-emoji" aria-hidden="true">
                      {e ? (
                        <Glyph
                          s={s}
                          emoji={{
                            name: e.name,
                            code: e.code,
                            type: e.kind === 'realm' ? 'realm_emoji' : 'unicode_emoji',
                          }}
                        />
                      ) : null}
                    </span>
                    {p.text}
                  </button>
                </li>
              );
            })}
          </ul>
          <div class="confirm-actions">
            <button class="btn cancel" type="button" onClick={close}>
              Cancel
            </button>
            <button
              class="btn primary"
              type="button"
              disabled={!change || saving}
              onClick={() => void save()}
            >
              Save
            </button>
          </div>
        </div>
      </div>
    </div>
  );
}
