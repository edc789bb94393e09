/**
 * The message menu's dialogs (message.tsx `actions`), as the reference's modals: a message's
 * edit history (its versions oldest first, who made each and when, the topic or channel it moved
 * from, the content with what changed highlighted), who has read it, and its Markdown for those
 * who cannot edit it ("View original message"). Modal: the close button has the focus as one
 * opens, Tab stays within it, Esc or a click outside closes it, and the focus goes back to what
 * opened it (focus-back.ts).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  historyVersions,
  receiptRows,
  type HistoryEntry,
  type Version,
} from '../state/message-menu.js';
import { Avatar, CloseButton } from './bits.js';
import type { Controller } from './controller.js';
import { CopyField } from './copy-field.js';
import { useFocusBack, wrapTab } from './focus-back.js';
import { clock, fullTime } from './format.js';
import { decorate } from './message.js';
import { track } from './track.js';

type Loaded<T> = { state: 'loading' } | { state: 'error'; text: string } | { state: 'ok'; data: T };

/**
 * What `load` gives, asked again whenever `deps` change (a newer answer replaces an older; what
 * was shown stays until it comes), and whether an asking is under way.
 */
function useLoaded<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, boolean] {
  const [got, setGot] = useState<Loaded<T>>({ state: 'loading' });
  const [asking, setAsking] = useState(true);
  useEffect(() => {
    let live = true;
    setAsking(true);
    load()
      .then(
        (data) => live && setGot({ state: 'ok', data }),
        (e: unknown) =>
          live && setGot({ state: 'error', text: e instanceof Error ? e.message : String(e) }),
      )
      .finally(() => live && setAsking(false));
    return () => {
      live = false;
    };
  }, deps);
  return [got, asking];
}

export function MessageDialog({
  c,
  id,
  title,
  class: cls,
  children,
  onKey,
}: {
  c: Controller;
  id: string;
  title: ComponentChildren;
  class: string;
  children: ComponentChildren;
  /** A key of its own (the shortcuts panel's `?`), before Esc and Tab: true when it took it. */
  onKey?: (e: KeyboardEvent) => boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const closeBtn = useRef<HTMLButtonElement>(null);
  useFocusBack(
    box,
    () => closeBtn.current,
    (m) => (c.selected.value = m),
  );
  const close = () => (c.dialog.value = null);
  const keys = (e: KeyboardEvent) => {
    // Nothing behind it hears its keys (the app's shortcuts; Esc is its own).
    e.stopPropagation();
    if (onKey?.(e)) return;
    if (e.key === 'Escape') {
      e.preventDefault();
      close();
    } else wrapTab(box.current, e);
  };
  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div
        ref={box}
        class={`dialog message-dialog ${cls}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={id}
        onKeyDown={keys}
      >
        <header>
          <h2 id={id}>{title}</h2>
          <CloseButton buttonRef={closeBtn} onClick={close} />
        </header>
        <div class="body">{children}</div>
      </div>
    </div>
  );
}

function Pending({ got, what }: { got: Loaded<unknown>; what: string }) {
  if (got.state === 'loading')
    return (
      <p class="muted-text" role="status">
        Loading…
      </p>
    );
  if (got.state === 'error')
    return (
      <p class="error-text" role="alert">
        Could not load {what}: {got.text}
      </p>
    );
  return null;
}

/** The server's HTML of a version, drawn as a message's content is (message.tsx decorate). */
function VersionContent({ c, html }: { c: Controller; html: string }) {
  const el = useRef<HTMLDivElement>(null);
  const s = c.state.value!;
  useLayoutEffect(() => {
    if (el.current) decorate(el.current, (id) => s.users.get(id)?.full_name);
  }, [html]);
  return <div ref={el} class="content" dangerouslySetInnerHTML={{ __html: html }} />;
}

export function HistoryDialog({ c, id }: { c: Controller; id: number }) {
  const s = c.state.value!;
  track(s.rev.users, s.rev.channels, s.rev.settings, s.rev.messages);
  const m = s.messages.get(id);
  // Asked again as the message is edited or moved while it is open (`update_message`).
  const [got] = useLoaded<HistoryEntry[]>(
    () => c.messageHistory(id),
    [id, m?.last_edit_timestamp, m?.last_moved_timestamp],
  );
  const twentyFour = s.settings.twenty_four_hour_time === true;
  const versions = got.state === 'ok' ? historyVersions(got.data, (ch) => s.channelName(ch)) : [];
  return (
    <MessageDialog c={c} id="history-title" class="history-dialog" title="Message edit history">
      <Pending got={got} what="the edit history" />
      {got.state === 'ok' && (
        <ol class="versions">
          {versions.map((v: Version, i) => (
            <li key={i} class="version">
              <p class="version-head">
                <strong>{v.kind}</strong>
                {v.userId !== null && <span> by {s.userName(v.userId)}</span>}
                <span class="muted-text">
                  {' · '}
                  <time
                    dateTime={new Date(v.timestamp * 1000).toISOString()}
                    title={fullTime(v.timestamp)}
                  >
                    {new Date(v.timestamp * 1000).toLocaleDateString()}{' '}
                    {clock(v.timestamp, twentyFour)}
                  </time>
                </span>
              </p>
              {v.changes.map((text) => (
                <p key={text} class="version-change">
                  {text}
                </p>
              ))}
              {v.html !== null && <VersionContent c={c} html={v.html} />}
            </li>
          ))}
        </ol>
      )}
    </MessageDialog>
  );
}

export function ReceiptsDialog({ c, id }: { c: Controller; id: number }) {
  const s = c.state.value!;
  track(s.rev.users, s.rev.messages, s.rev.muted);
  // The server tells no one when others read a message (the reference's dialog does not follow
  // them either): asked again on Refresh, and when the user's own read flag on it changes (they
  // are listed once they read it, and no longer after marking it unread).
  const read = s.messages.get(id)?.flags.includes('read');
  const [asked, setAsked] = useState(0);
  const [got, asking] = useLoaded(() => c.readReceipts(id), [id, read, asked]);
  // The server leaves out the muted (both ways); someone muted while the dialog is open goes too.
  const rows =
    got.state === 'ok'
      ? receiptRows(
          got.data,
          (uid) => s.users.get(uid),
          (uid) => s.mutedUsers.has(uid),
        )
      : [];
  return (
    <MessageDialog
      c={c}
      id="receipts-title"
      class="receipts-dialog"
      title={got.state === 'ok' ? `Read receipts (${rows.length})` : 'Read receipts'}
    >
      <Pending got={got} what="who has read it" />
      {got.state === 'ok' &&
        (rows.length === 0 ? (
          <p class="receipts-empty">No one has read this message yet.</p>
        ) : (
          <>
            <p class="muted-text">
              Read by {rows.length === 1 ? '1 person' : `${rows.length} people`}:
            </p>
            <ul class="receipts">
              {rows.map((u) => (
                <li key={u.user_id}>
                  <button
                    class="receipt"
                    type="button"
                    aria-haspopup="dialog"
                    onClick={(e) => c.openCard(u.user_id, e.currentTarget)}
                  >
                    <Avatar small id={u.user_id} name={u.full_name} url={u.avatar_url} />
                    <span class="receipt-name">{u.full_name}</span>
                  </button>
                </li>
              ))}
            </ul>
          </>
        ))}
      <div class="receipts-foot">
        <p class="receipts-note muted-text">
          People who chose not to let others know they read messages, and people you muted, are not
          listed.
        </p>
        {got.state !== 'loading' && (
          <button
            class="btn"
            type="button"
            disabled={asking}
            aria-label="Refresh the read receipts"
            onClick={() => setAsked((n) => n + 1)}
          >
            Refresh
          </button>
        )}
      </div>
    </MessageDialog>
  );
}

export function SourceDialog({ c, id }: { c: Controller; id: number }) {
  const [got] = useLoaded(() => c.rawContent(id), [id]);
  return (
    <MessageDialog c={c} id="source-title" class="source-dialog" title="Original message">
      <Pending got={got} what="the message" />
      {got.state === 'ok' && (
        <CopyField
          c={c}
          value={got.data}
          label="The message's Markdown"
          copied="Message copied."
          multiline={16}
        />
      )}
    </MessageDialog>
  );
}
