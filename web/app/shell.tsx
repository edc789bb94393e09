/**
 * The app's frame: sidebar (a drawer on narrow screens), the top bar with the view's title and
 * search, the message pane and the compose box, the people (a column on wide screens); the
 * reconnecting banner, messages to the user, and the dialogs (jump, settings, emoji picker, a
 * profile card, a confirmation). Global keys: Ctrl+K (or ⌘K) jump, `/` search,
 * `n` next unread topic, `r` reply, `c` new topic, `x` new direct message, `t` Recent
 * conversations, `I` (Shift+I) the Inbox, `a` All messages, `*` Starred, `d` Drafts, `P`
 * (Shift+P) all direct messages, `p` the next unread direct message conversation, `w` the
 * people's filter, `?` the keyboard shortcuts, Esc closes what is open.
 */
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { channelNarrow, channelOf, isNarrow, searchNarrow, topicOf, ALL } from '../state/narrow.js';
import { Swatch } from './bits.js';
import { HOME_VIEW_STORE, type Controller } from './controller.js';
import { track } from './track.js';
import { Icon } from './icons.js';
import { useLive } from './live.js';
import { LazyDialog, LazyPart, piece, prefetchWhenIdle } from './lazy.js';
import { PEOPLE_COLUMN_QUERY, PeopleColumn, useMedia, usePeopleListed } from './people.js';
import { InboxView } from './inbox.js';
import { Sidebar } from './sidebar.js';

function typingInField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
}

/** The message list's own keys (message-pane.tsx): letters, and those a link or button takes. */
const LIST_LETTERS = new Set([
  ...['j', 'k', 'r', 'R', 's', 'u', 'e', 'i', '>', 'U', '=', '+', ':'],
  ...['m', 'M', 'V'],
]);
const LIST_KEYS = new Set([
  ...LIST_LETTERS,
  'ArrowDown',
  'ArrowUp',
  'ArrowLeft',
  'Home',
  'End',
  'Enter',
]);

/**
 * Hands a key pressed outside the message list to it when the reference's would act on the list
 * from there: with nothing focused (the page's body, after `n`, a view opened by a link, a
 * dialog closed) every list key; on a link or button of the sidebar or the top bar (the focus a
 * click on a channel leaves) its letters (j, k, r, …), not the keys those act on themselves
 * (Enter, Space, the arrows). The list takes the focus, the key acts there. True when handed.
 */
function toList(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  const fromBody = !t || t === document.body || t === document.documentElement;
  const fromNav =
    !!t && !fromBody && !!t.closest('.sidebar, .topbar') && !t.closest('[role="menu"]');
  if (!(fromBody ? LIST_KEYS.has(e.key) : fromNav && LIST_LETTERS.has(e.key))) return false;
  const list = document.querySelector<HTMLElement>('.messages');
  if (!list) return false;
  list.focus({ preventScroll: true });
  list.dispatchEvent(
    new KeyboardEvent('keydown', {
      key: e.key,
      code: e.code,
      shiftKey: e.shiftKey,
      bubbles: true,
      cancelable: true,
    }),
  );
  e.preventDefault();
  return true;
}

/**
 * `w`, as the reference's: the focus in the people's filter; where the people are in the sidebar
 * (a narrow screen, or presence shown without the column), the drawer opened and their section
 * unfolded first, the focus given once the filter can take it (the drawer slides in). False where
 * no list of people is shown (presence off).
 */
function focusPeopleFilter(c: Controller): boolean {
  const shown = () =>
    [...document.querySelectorAll<HTMLElement>('.people-filter')].find(
      (f) => f.offsetParent !== null,
    );
  const now = shown();
  if (now) {
    now.focus();
    return true;
  }
  if (!document.querySelector('.app[data-people="sidebar"]')) return false;
  c.drawer.value = true;
  const fold = document.querySelector<HTMLElement>('#people-heading[aria-expanded="false"]');
  fold?.click();
  let frames = 60;
  const tryFocus = () => {
    const f = shown();
    f?.focus();
    if (document.activeElement !== f && --frames > 0) requestAnimationFrame(tryFocus);
  };
  requestAnimationFrame(tryFocus);
  return true;
}

function Title({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.channels, s.rev.users, s.rev.muted);
  const n = c.narrow.value;
  if (c.page.value) {
    return (
      <h1 class="title">
        <span class="crumb">{c.viewName()}</span>
      </h1>
    );
  }
  const ch = channelOf(n);
  const topic = topicOf(n);
  const search = n.terms.find((t) => t.operator === 'search');
  if (ch !== undefined && !search && s.channels.has(ch)) {
    const sub = s.subs.get(ch);
    return (
      <h1 class="title">
        <Swatch color={sub?.color ?? '#9aa0ad'} privateChannel={sub?.invite_only} />
        {topic !== undefined ? (
          <>
            <a
              class="crumb"
              href={`#narrow/channel/${ch}-${encodeURIComponent(s.channelName(ch).replace(/ /g, '-'))}`}
              onClick={(e) => {
                e.preventDefault();
                c.go(channelNarrow(ch));
              }}
            >
              {s.channelName(ch)}
            </a>
            <span class="sep" aria-hidden="true">
              ›
            </span>
            <span class="crumb topic-crumb">{s.topicName(topic)}</span>
          </>
        ) : (
          <span class="crumb">{s.channelName(ch)}</span>
        )}
      </h1>
    );
  }
  return (
    <h1 class="title">
      <span class="crumb">{c.viewName(n)}</span>
    </h1>
  );
}

/**
 * The channel's description, as the server rendered it, after its name (in its topics' views
 * too), as the reference's navbar: on one line, cut short with an ellipsis (all of it on hover);
 * not on a narrow screen (app.css), where the name needs the room.
 */
function ChannelDescription({ c }: { c: Controller }) {
  const s = c.state.value!;
  if (c.page.value) return null;
  track(s.rev.channels);
  const n = c.narrow.value;
  const ch = channelOf(n);
  const channel = ch === undefined ? undefined : s.channels.get(ch);
  if (!channel || n.terms.some((t) => t.operator === 'search')) return null;
  if (channel.description.trim() === '') return null;
  return channel.rendered_description !== undefined ? (
    <div
      class="narrow-description"
      title={channel.description}
      dangerouslySetInnerHTML={{ __html: channel.rendered_description }}
    />
  ) : (
    <div class="narrow-description" title={channel.description}>
      {channel.description}
    </div>
  );
}

/** The settings of the channel shown (its description, members, privacy). */
function ChannelSettingsButton({ c }: { c: Controller }) {
  const s = c.state.value!;
  // Not over a view of its own (the drafts, the scheduled messages): they are no channel's.
  if (c.page.value) return null;
  track(s.rev.channels);
  const n = c.narrow.value;
  const ch = channelOf(n);
  if (ch === undefined || !s.channels.has(ch) || n.terms.some((t) => t.operator === 'search'))
    return null;
  return (
    <button
      class="icon-btn channel-settings-btn"
      type="button"
      aria-label={`Settings of #${s.channelName(ch)}`}
      title="Channel settings"
      onClick={() => c.openChannelSettings(ch)}
    >
      <Icon name="gear" />
    </button>
  );
}

/** Join or leave the channel shown (a public channel one left can still be read). */
function Membership({ c }: { c: Controller }) {
  const s = c.state.value!;
  if (c.page.value) return null;
  track(s.rev.channels);
  const n = c.narrow.value;
  const ch = channelOf(n);
  const channel = ch === undefined ? undefined : s.channels.get(ch);
  if (!channel || n.terms.some((t) => t.operator === 'search')) return null;
  const subscribed = s.subs.has(channel.stream_id);
  // In a topic's view (a narrow title on a phone) only the join: leaving is the channel's.
  if (subscribed && topicOf(n) !== undefined) return null;
  return (
    <button
      class="btn membership"
      type="button"
      onClick={() => {
        if (subscribed) void c.leaveChannel(channel.stream_id);
        else void c.joinChannel(channel.name);
      }}
    >
      {subscribed ? 'Leave' : 'Join'}
    </button>
  );
}

/**
 * Under the Inbox and Recent conversations, which have no compose box: the reference's closed
 * compose box. Its first button, as the reference's reply button, names the conversation of the
 * Inbox's focused row ("Message #channel > topic", "Message Othello") and opens the compose box
 * there; elsewhere, and on a header, it says "Compose message" (a new topic: in that channel on a
 * channel's header). Then the buttons to start a conversation (keys `c` and `x`), which open the
 * box over All messages. The message views have the box itself; the drafts and the scheduled
 * messages (the reference's overlays) neither.
 */
function ComposeClosed({ c }: { c: Controller }) {
  // The Inbox's focused row: its conversation, as the reference's reply button follows it.
  const target = c.rowTarget.value;
  return (
    <div class="compose-closed" role="group" aria-label="Start a conversation">
      <button
        class="btn compose-reply"
        type="button"
        onClick={() => {
          if (!target) c.startConversation();
          else if (target.narrow === null) c.startDirectMessage();
          else c.goAndCompose(target.narrow, target.to);
        }}
      >
        {target?.label ?? 'Compose message'}
      </button>
      <button
        class="btn"
        type="button"
        title="Start new conversation (c)"
        onClick={() => c.startConversation()}
      >
        <Icon name="plus" />
        Start new conversation
      </button>
      <button
        class="btn"
        type="button"
        title="New direct message (x)"
        onClick={() => c.startDirectMessage()}
      >
        <Icon name="dm" />
        New direct message
      </button>
    </div>
  );
}

function Search({ c }: { c: Controller }) {
  const n = c.narrow.value;
  const current = n.terms.find((t) => t.operator === 'search')?.operand ?? '';
  // Sent as typed until now, not as the last drawing showed it (Enter right after typing).
  const [q, setQ, qNow] = useLive(current);
  useEffect(() => setQ(current), [current]);
  return (
    <form
      class="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        const query = qNow.current.trim();
        if (query === '') c.go(ALL);
        else c.go(searchNarrow(ALL, query));
        (document.activeElement as HTMLElement | null)?.blur();
      }}
    >
      <Icon name="search" />
      <input
        id="search"
        class="field"
        type="search"
        aria-label="Search messages"
        placeholder="Search messages"
        value={q}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
    </form>
  );
}

// Loaded when first used, or when the browser is idle after the first screen (lazy.tsx): Jump
// (Ctrl+K), the message list and compose box with the Drafts and Scheduled views (the Inbox, the
// default home view, shows none of them), the dialogs, cards and pickers, and the settings with
// their panels.
// Their code is in chunks of its own (scripts/build-web.mjs); see docs/web.md, "Budgets".
const jumpPiece = piece(() => import('./jump.js'));
const messagesPiece = piece(() => import('./lazy-messages.js'));
const dialogsPiece = piece(() => import('./lazy-dialogs.js'));
const settingsPiece = piece(() => import('./settings-panels.js'));
const recentPiece = piece(() => import('./lazy-recent.js'));

/**
 * Ctrl+K's dialog. Before its code has come (the first Ctrl+K within a moment of the first
 * screen), a field that looks as its own takes the focus in the same task as the key and the
 * keys typed next, handed to it as it is drawn: none is lost, none reaches the page behind.
 */
function LazyJump({ c }: { c: Controller }) {
  const typed = useRef('');
  const field = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => field.current?.focus(), []);
  return (
    <LazyDialog
      piece={jumpPiece}
      what="Jump"
      label="Jump to"
      wrap="jump"
      onClose={() => (c.dialog.value = null)}
      show={(m) => <m.Jump c={c} initial={typed.current} />}
      stand={() => (
        <input
          ref={field}
          class="field"
          aria-label="Jump to a channel, topic, person or search"
          placeholder="Jump to a channel, topic or person…"
          onInput={(e) => (typed.current = e.currentTarget.value)}
        />
      )}
    />
  );
}

/**
 * Starts fetching the message list's code now: for a page opened on a narrow (its address, or a
 * home view of messages), in step with the data the first screen waits for (main.tsx).
 */
/**
 * At boot, beside the data (main.tsx): the code of the view the page opens on, if it is loaded
 * when first used: the message list for a narrow, the drafts, the scheduled messages or the
 * settings (drawn over All messages); Recent conversations' view. With no view named, the user's
 * home view as this browser last saw it (controller.ts, HOME_VIEW_STORE; the Inbox, the default,
 * is in the first load). Otherwise each would be fetched once the data came and named the view:
 * one more round trip.
 */
export function loadViewSoon(hash: string): void {
  let view = hash.replace(/^#/, '');
  if (view === '') {
    try {
      view = localStorage.getItem(HOME_VIEW_STORE) ?? 'inbox';
    } catch {
      view = 'inbox';
    }
  }
  const p = /^inbox\/?$/.test(view)
    ? null
    : /^recent(_topics)?\/?$/.test(view)
      ? recentPiece
      : messagesPiece;
  p?.load().catch(() => undefined);
}

export function Shell({ c }: { c: Controller }) {
  const s = c.state.value;
  const list = c.list.value;
  const dialog = c.dialog.value;
  const main = useRef<HTMLElement>(null);
  const toasts = useRef<HTMLDivElement>(null);
  const drawn = !!(s && list);
  // The people: a column of their own on a wide screen, else in the sidebar (sidebar.tsx); none
  // where the organization turned presence off, the messages taking the column's room.
  const listed = usePeopleListed(c);
  const column = useMedia(PEOPLE_COLUMN_QUERY) && listed;

  // The toasts' height, for the layout (app.css): an open dialog sits below them, so that no
  // toast covers its header (its title and close button) or its actions.
  useLayoutEffect(() => {
    const el = toasts.current;
    const app = el?.parentElement;
    if (!el || !app || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() =>
      app.style.setProperty('--toasts-height', `${el.offsetHeight}px`),
    );
    ro.observe(el);
    return () => ro.disconnect();
  }, [drawn]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // A question waits for its answer: nothing behind it acts on a key (its dialog has them;
      // these come from outside it, the focus moved there by a click).
      if (c.question.value) {
        if (e.key === 'Escape') c.answer(false);
        if (e.key === 'Escape' || e.key === 'Enter' || e.key === ' ') e.preventDefault();
        return;
      }
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        c.dialog.value = c.dialog.value?.kind === 'jump' ? null : { kind: 'jump' };
        return;
      }
      if (e.key === 'Escape') {
        if (c.picker.value) c.picker.value = null;
        else if (c.card.value) c.card.value = null;
        else if (c.dialog.value?.kind === 'settings') c.closeSettings();
        else if (c.dialog.value) c.dialog.value = null;
        else if (c.drawer.value) c.drawer.value = false;
        else if (c.editing.value !== null) c.editing.value = null;
        // A view of its own (drafts, scheduled messages) closes to the messages behind it;
        // Recent conversations and the Inbox, home views, stay (their filter fields give the
        // focus to their rows: recent.tsx, inbox.tsx).
        else if (c.page.value === 'recent' || c.page.value === 'inbox') return;
        else if (c.page.value) c.go(c.narrow.value);
        else if (typingInField(e)) {
          // Out of the field and into the message list, where the arrows and j/k select.
          const messages = document.querySelector<HTMLElement>('.messages');
          if (messages) messages.focus({ preventScroll: true });
          else (e.target as HTMLElement).blur();
        } else if (!e.defaultPrevented && c.goHomeOnEscape()) {
          // Nothing left to close: the home view, as the reference's Esc (its setting
          // web_escape_navigates_to_home_view, on unless turned off).
        } else return;
        e.preventDefault();
        return;
      }
      if (typingInField(e) || e.ctrlKey || e.metaKey || e.altKey || c.dialog.value) return;
      const st = c.state.value;
      if (!st) return;
      // The list's keys pressed with the focus outside it (on nothing, on the sidebar): to the
      // list, which handles them (the copy handed to it comes back here, its target the list).
      if (!c.page.value && !c.picker.value && !c.card.value && toList(e)) return;
      // No compose box under a view of its own: nothing to reply to. `c` in Recent conversations
      // and the Inbox is the reference's compose key there too (anywhere in the view but a
      // field): All messages with the box addressed.
      const composeKeyView = c.page.value === 'recent' || c.page.value === 'inbox';
      if (c.page.value && (e.key === 'r' || ((e.key === 'c' || e.key === 'x') && !composeKeyView)))
        return;
      if (e.key === 'n') {
        const next = c.nextUnread();
        if (next) c.go(next);
        else c.toast('No unread messages left.', 'info');
      } else if (e.key === 'r') {
        const id =
          c.selected.value ??
          (c.list.value ? st.drawnIds(c.list.value) : undefined)
            ?.filter((x) => Number.isInteger(x))
            .at(-1);
        const m = id !== undefined ? st.messages.get(id) : undefined;
        if (m) c.replyTo(m);
        else {
          const to = c.composeToFor(c.narrow.value);
          if (to) c.requestCompose(to);
        }
      } else if (e.key === 'c') {
        // A new channel message (the reference's compose_hotkey): the channel shown, or the
        // user's only one, else the channel to choose.
        c.startConversation();
      } else if (e.key === 'x') {
        // A new direct message, as the reference's key.
        c.startDirectMessage();
      } else if (e.key === 't') {
        // Recent conversations, as the reference's key.
        location.hash = '#recent';
      } else if (e.key === 'I') {
        // The Inbox, as the reference's key (Shift+I).
        location.hash = '#inbox';
      } else if (e.key === '/') {
        document.getElementById('search')?.focus();
      } else if (e.key === 'a') {
        // All messages, the reference's combined feed.
        c.go(ALL);
      } else if (e.key === '*') {
        c.go(isNarrow('starred'));
      } else if (e.key === 'd') {
        location.hash = '#drafts';
      } else if (e.key === 'P') {
        // All direct messages (Shift+P).
        c.go(isNarrow('dm'));
      } else if (e.key === 'p') {
        // The next direct message conversation with unread messages.
        const next = c.nextUnread(true);
        if (next) c.go(next);
        else c.toast('No unread direct messages.', 'info');
      } else if (e.key === 'w') {
        if (!focusPeopleFilter(c)) return;
      } else if (e.key === '?') {
        c.dialog.value = { kind: 'shortcuts' };
      } else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [c]);

  // The first screen is drawn: the pieces most sessions use, fetched when the browser is idle
  // (not the settings, 48 KB, opened in few sessions: they load when opened, as before).
  useEffect(() => {
    if (drawn) prefetchWhenIdle([jumpPiece, messagesPiece, dialogsPiece, recentPiece]);
  }, [drawn]);

  if (!s || !list) {
    return (
      <div class="login" aria-busy="true">
        <p>{c.status.value === 'reconnecting' ? 'Connecting to the server…' : 'Loading…'}</p>
      </div>
    );
  }

  const status = c.status.value;
  const page = c.page.value;
  return (
    <div
      class="app"
      data-drawer={c.drawer.value ? 'open' : 'closed'}
      data-status={status}
      data-transport={c.transport.value ?? ''}
      data-people={column ? 'column' : listed ? 'sidebar' : 'none'}
    >
      {/* The first Tab stop: past the sidebar and the top bar (some fifteen stops) to the
          messages, where the arrows and j/k move. Hidden until focused. A button, not a link to
          an anchor: the address's fragment is the view (#narrow/…), and a link would change it. */}
      <button
        class="skip-link"
        type="button"
        onClick={() =>
          // In Recent conversations and the Inbox, their rows' Tab stop (no message list there).
          document
            .querySelector<HTMLElement>(
              '.messages, .recent-open[tabindex="0"], .recent-search, .inbox-focus[tabindex="0"], .inbox-search',
            )
            ?.focus({ preventScroll: true })
        }
      >
        Skip to messages
      </button>
      {status === 'reconnecting' && (
        <div class="banner" role="status">
          <span class="dot" aria-hidden="true" />
          <span>Can’t reach the server. Trying again…</span>
          <button type="button" onClick={() => c.stream?.reconnectNow()}>
            Try now
          </button>
        </div>
      )}
      <Sidebar c={c} />
      <div class="scrim" onClick={() => (c.drawer.value = false)} aria-hidden="true" />
      <main
        class="main"
        ref={main}
        onDragOver={(e) => {
          if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
        }}
        onDrop={(e) => {
          const files = [...(e.dataTransfer?.files ?? [])];
          if (files.length && c.dropFiles) {
            e.preventDefault();
            c.dropFiles(files);
          }
        }}
      >
        <header class="topbar">
          <button
            class="icon-btn menu-btn"
            type="button"
            aria-label="Open the sidebar"
            aria-expanded={c.drawer.value}
            onClick={() => (c.drawer.value = true)}
          >
            <Icon name="menu" />
          </button>
          <Title c={c} />
          <ChannelDescription c={c} />
          <ChannelSettingsButton c={c} />
          <Membership c={c} />
          <Search c={c} />
        </header>
        {page === 'inbox' ? (
          <InboxView c={c} />
        ) : page === 'recent' ? (
          <LazyPart
            piece={recentPiece}
            what="Recent conversations"
            show={(m) => <m.RecentView c={c} />}
          />
        ) : page === 'scheduled' ? (
          <LazyPart
            piece={messagesPiece}
            what="the scheduled messages"
            show={(m) => <m.ScheduledView c={c} />}
          />
        ) : page === 'drafts' ? (
          <LazyPart piece={messagesPiece} what="the drafts" show={(m) => <m.DraftsView c={c} />} />
        ) : (
          <LazyPart
            piece={messagesPiece}
            what="the messages"
            show={(m) => <m.MessagePane c={c} list={list} />}
          />
        )}
        {(page === 'inbox' || page === 'recent') && <ComposeClosed c={c} />}
        {/* Kept (hidden) while a view of its own is shown: what it holds, and the requests it
            takes (Edit, Restore), stay. */}
        <div class="compose-area" hidden={page !== null}>
          <LazyPart
            piece={messagesPiece}
            what="the compose box"
            quiet
            show={(m) => <m.Compose c={c} />}
          />
        </div>
      </main>
      {column && <PeopleColumn c={c} />}
      {dialog?.kind === 'jump' && <LazyJump c={c} />}
      {dialog?.kind === 'settings' && (
        <LazyDialog
          piece={settingsPiece}
          what="the settings"
          label="Settings"
          wrap="settings-wrap"
          onClose={() => c.closeSettings()}
          show={(m) => <m.Settings c={c} panel={dialog.panel} />}
        />
      )}
      {dialog && dialog.kind !== 'jump' && dialog.kind !== 'settings' && (
        <LazyDialog
          piece={dialogsPiece}
          what="this dialog"
          label="Dialog"
          onClose={() => (c.dialog.value = null)}
          show={(m) =>
            dialog.kind === 'create-channel' ? (
              <m.CreateChannel c={c} name={dialog.name} />
            ) : dialog.kind === 'channel-settings' ? (
              <m.ChannelSettings key={dialog.streamId} c={c} streamId={dialog.streamId} />
            ) : dialog.kind === 'status' ? (
              <m.StatusDialog c={c} />
            ) : dialog.kind === 'message-history' ? (
              <m.HistoryDialog key={dialog.id} c={c} id={dialog.id} />
            ) : dialog.kind === 'shortcuts' ? (
              <m.ShortcutsDialog c={c} />
            ) : dialog.kind === 'read-receipts' ? (
              <m.ReceiptsDialog key={dialog.id} c={c} id={dialog.id} />
            ) : dialog.kind === 'move-topic' ? (
              <m.MoveTopic
                key={`${dialog.streamId}:${dialog.topic}`}
                c={c}
                streamId={dialog.streamId}
                topic={dialog.topic}
                rename={dialog.rename}
              />
            ) : (
              <m.SourceDialog key={dialog.id} c={c} id={dialog.id} />
            )
          }
        />
      )}
      {c.picker.value && (
        <LazyDialog
          piece={messagesPiece}
          what="the emoji picker"
          label="Emoji"
          onClose={() => (c.picker.value = null)}
          show={(m) => <m.EmojiPicker c={c} />}
        />
      )}
      {c.card.value && (
        <LazyDialog
          piece={dialogsPiece}
          what="the card"
          label="Card"
          onClose={() => (c.card.value = null)}
          show={(m) => <m.ProfileCard c={c} />}
        />
      )}
      {c.question.value && (
        // The confirmation dialog comes with the dialogs' piece (in the first load it cost 0.5 KB):
        // loaded, it is drawn in the same render as the question and takes the focus at once; the
        // keys wait meanwhile (onKey above), Esc answers "no".
        <LazyDialog
          piece={dialogsPiece}
          what="the question"
          label={c.question.value.title}
          onClose={() => c.answer(false)}
          show={(m) => <m.ConfirmDialog c={c} />}
        />
      )}
      <div class="toasts" ref={toasts} aria-live="polite">
        {c.toasts.value.map((t) => (
          <div key={t.id} class={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
            <p>{t.text}</p>
            <button
              class="icon-btn"
              type="button"
              aria-label="Dismiss"
              onClick={() => c.dismiss(t.id)}
            >
              <Icon name="x" />
            </button>
          </div>
        ))}
      </div>
    </div>
  );
}
