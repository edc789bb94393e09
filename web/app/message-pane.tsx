/**
 * The message list of the current narrow: the list's window (never more than WINDOW_MAX rows in
 * the DOM) rendered as date dividers, recipient bars and messages; paged both ways with an
 * IntersectionObserver on a sentinel at each end; opened at the first unread message (or the
 * linked one); kept in place while rows come and go above (the row at the top of the view is the
 * anchor); following the newest while at the bottom. Messages shown while the window has focus
 * are marked read (the user's setting permitting), in batches. Keyboard: arrows or j/k move the
 * selection, r or Enter replies, e edits, s goes to its conversation (from one, to its channel),
 * Shift+R replies directly to the sender, = + : react, Ctrl+S stars, ← edits your latest message,
 * Esc clears.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ChatState, StoredMessage } from '../state/chat.js';
import type { MessageList } from '../state/message-list.js';
import { markUnreadShown } from '../state/message-menu.js';
import { mentionTarget } from '../state/profile.js';
import {
  channelNarrow,
  channelOf,
  dmNarrow,
  find,
  isConversation,
  isNarrow,
  narrowHash,
  senderOf,
  topicNarrow,
  type Narrow,
} from '../state/narrow.js';
import { hiddenMessage, listedNames } from '../state/muted-users.js';
import { muteChoice } from '../state/muting.js';
import { topicActions, topicPowers } from '../state/topic-actions.js';
import { buildRows } from '../state/rows.js';
import { unreadIn } from '../state/unread.js';
import { Swatch } from './bits.js';
import type { Controller } from './controller.js';
import { TopicPolicyMenu } from './topic-policy.js';
import { track } from './track.js';
import { dayKey, dayLabel } from './format.js';
import { Icon } from './icons.js';
import { MessageRow, pickReaction } from './message.js';

const EDGE_MARGIN = '600px 0px';
/** Keys that scroll the list or move its selection. */
const SCROLL_KEYS = new Set([
  'ArrowDown',
  'ArrowUp',
  'j',
  'k',
  'PageDown',
  'PageUp',
  'Home',
  'End',
  ' ',
]);
const BOTTOM_SLACK = 40;

type Anchor = { id: string; top: number };

function rowAt(scroller: HTMLElement): Anchor | null {
  const top = scroller.getBoundingClientRect().top;
  for (const el of scroller.querySelectorAll<HTMLElement>('[data-row]')) {
    const r = el.getBoundingClientRect();
    if (r.bottom > top + 1) return { id: el.dataset.row!, top: r.top };
  }
  return null;
}

/** Whether the last message of the list is wholly in view. */
function newestShown(el: HTMLElement): boolean {
  const rows = el.querySelectorAll('.msg');
  const last = rows[rows.length - 1];
  return (
    last !== undefined &&
    last.getBoundingClientRect().bottom <= el.getBoundingClientRect().bottom + 1
  );
}

function atBottom(el: HTMLElement): boolean {
  return el.scrollHeight - el.scrollTop - el.clientHeight < BOTTOM_SLACK;
}

function atBottomExactly(el: HTMLElement): boolean {
  return el.scrollHeight - el.scrollTop - el.clientHeight < 1;
}

function RecipientBar({
  c,
  s,
  m,
  topicHtml,
}: {
  c: Controller;
  s: ChatState;
  m: StoredMessage;
  /** A search's highlighted topic (the server's HTML, escaped, with its highlight spans). */
  topicHtml?: string;
}) {
  const when = dayLabel(m.timestamp);
  if (m.type === 'stream') {
    const sub = s.subs.get(m.stream_id!);
    const topicN = topicNarrow(m.stream_id!, m.subject);
    const chanN = {
      terms: [{ operator: 'channel', operand: String(m.stream_id), negated: false }],
      near: null,
    };
    // The topic the message is in now, not as last drawn (moved since).
    const topicNow = () => {
      const now = s.messages.get(m.id) ?? m;
      return now.type === 'stream' ? topicNarrow(now.stream_id!, now.subject) : topicN;
    };
    return (
      <div
        class="recipient"
        onClick={(e) => !(e.target as HTMLElement).closest('a') && c.go(topicNow())}
      >
        <Swatch color={sub?.color ?? '#9aa0ad'} privateChannel={sub?.invite_only} />
        <a href={narrowHash(chanN, s.names())}>
          {/* A channel the app no longer knows (removed from it): the name the message came with. */}
          {!s.channels.has(m.stream_id!) && typeof m.display_recipient === 'string'
            ? m.display_recipient
            : s.channelName(m.stream_id!)}
        </a>
        <span aria-hidden="true">›</span>
        {topicHtml ? (
          <a
            class="topic-name"
            href={narrowHash(topicN, s.names())}
            dangerouslySetInnerHTML={{ __html: topicHtml }}
          />
        ) : (
          <a class="topic-name" href={narrowHash(topicN, s.names())}>
            {s.topicName(m.subject)}
          </a>
        )}
        {sub && !sub.is_archived && (
          <TopicPolicyMenu c={c} s={s} streamId={m.stream_id!} topic={m.subject} />
        )}
        <span class="when">{when}</span>
      </div>
    );
  }
  const c2 = s.conversationOf(m);
  const ids = c2.kind === 'dm' ? c2.ids : [];
  const n = dmNarrow(ids, s.selfId);
  return (
    <div class="recipient" onClick={(e) => !(e.target as HTMLElement).closest('a') && c.go(n)}>
      <Icon name="dm" />
      <a href={narrowHash(n, s.names())}>
        {ids.length === 1 && ids[0] === s.selfId
          ? 'You'
          : `You and ${listedNames(ids, s.mutedUsers, (id) => s.userName(id))}`}
      </a>
      <span class="when">{when}</span>
    </div>
  );
}

/**
 * `data-pointer="still"` on the message list (app.css) while the pointer has not moved since a
 * click or tap (elsewhere than in a message: a dialog's button, a menu's item, the emoji picker)
 * or since the selection moved (keys, a click): the message under the pointer is then not taken
 * as hovered, and the toolbar shown is the selected message's. The hover a tap leaves behind,
 * or that a dialog or menu closing uncovers, is not the user's. A move of the mouse (or of a pen
 * over the screen) makes hovering count again; touches never do.
 */
function usePointerStill(list: { current: HTMLElement | null }, c: Controller): void {
  useEffect(() => {
    /** Where the mouse was last seen, and where it was when it came to rest. */
    let at: { x: number; y: number } | null = null;
    let restAt: { x: number; y: number } | null = null;
    let still = false;
    const mark = (on: boolean) => {
      still = on;
      if (on) list.current?.setAttribute('data-pointer', 'still');
      else list.current?.removeAttribute('data-pointer');
    };
    const rest = () => {
      restAt = at;
      mark(true);
    };
    const onMove = (e: PointerEvent) => {
      if (e.pointerType === 'touch') return;
      at = { x: e.clientX, y: e.clientY };
      if (still && (!restAt || restAt.x !== at.x || restAt.y !== at.y)) mark(false);
    };
    const onClick = (e: MouseEvent) => {
      if ((e as Partial<PointerEvent>).pointerType !== 'touch') at = { x: e.clientX, y: e.clientY };
      // In a message (not in its menu, which lies over others): the pointer is on that message.
      const target = e.target instanceof Element ? e.target : null;
      if (target?.closest('.msg') && !target.closest('[role="menu"]')) return;
      rest();
    };
    window.addEventListener('pointermove', onMove, { capture: true, passive: true });
    window.addEventListener('click', onClick, { capture: true, passive: true });
    const stop = c.selected.subscribe(rest);
    return () => {
      window.removeEventListener('pointermove', onMove, { capture: true });
      window.removeEventListener('click', onClick, { capture: true });
      stop();
    };
  }, [c]);
}

/** Opens or closes the spoiler whose header this is (the server's HTML; message.tsx decorate). */
function toggleSpoiler(header: Element): void {
  const open = header.parentElement?.classList.toggle('open') ?? false;
  header.setAttribute('aria-expanded', String(open));
}

/**
 * The card of the mention `target` is (or is in), in a message's content, beside it: a person's
 * or a group's, as the reference; false where it is no such mention (a wildcard opens nothing).
 */
function openMention(c: Controller, target: HTMLElement): boolean {
  const span = target.closest?.<HTMLElement>(
    '.msg .content .user-mention, .msg .content .user-group-mention',
  );
  const to = span ? mentionTarget(span.className, span.dataset) : null;
  if (!span || !to) return false;
  // A group the app does not know (deactivated: register leaves those out) has a card that
  // says so, where the reference opens nothing.
  if ('userId' in to) c.openCard(to.userId, span);
  else c.openGroupCard(to.groupId, span);
  return true;
}

export function MessagePane({ c, list }: { c: Controller; list: MessageList }) {
  const s = c.state.value!;
  track(list.rev, s.rev.unread, s.rev.users, s.rev.channels, s.rev.muted);
  const selected = c.selected.value;
  const editing = c.editing.value;
  const scroller = useRef<HTMLDivElement>(null);
  usePointerStill(scroller, c);
  const top = useRef<HTMLDivElement>(null);
  const bottom = useRef<HTMLDivElement>(null);
  const view = useRef({
    list: null as MessageList | null,
    positioned: false,
    anchor: null as Anchor | null,
    bottom: true,
    /**
     * The row the view was opened at, kept in its place while the rows around it take their
     * real sizes (rows out of view are sized by an estimate until shown: content-visibility),
     * until the user scrolls.
     */
    pin: null as Anchor | null,
    /** Positioned afresh at the newest message ("Jump to the newest"), not the first unread. */
    newest: false,
  });
  const [below, setBelow] = useState({ show: false, unread: 0 });

  // A new list: position it afresh once loaded.
  if (view.current.list !== list) {
    view.current = {
      list,
      positioned: false,
      anchor: null,
      bottom: true,
      pin: null,
      newest: false,
    };
  }
  // Before the DOM changes: what is at the top of the view, to keep it there. At the bottom (the
  // usual case while chatting, kept by the scroll handler) nothing is measured: the view follows.
  const el = scroller.current;
  if (el && view.current.positioned) {
    view.current.anchor = view.current.bottom ? null : rowAt(el);
  }

  const messages = s
    .drawnIds(list)
    .map((id) => s.messages.get(id))
    .filter((m): m is StoredMessage => m !== undefined);
  const rows = buildRows(messages, {
    selfId: s.selfId,
    dayOf: dayKey,
    hidden: (m) => hiddenMessage(m.sender_id, s.selfId, s.mutedUsers),
  });

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !list.loaded) return;
    const v = view.current;
    if (!v.positioned) {
      // A first fetch on its way (the newest, asked for by "Jump to the newest"): placed on its
      // answer, not on the messages it replaces.
      if (list.loading) return;
      v.positioned = true;
      const near = c.near;
      const firstUnread = messages.find((m) => s.unread.has(m.id))?.id;
      const target = v.newest ? undefined : (near ?? firstUnread);
      v.newest = false;
      const row =
        target !== undefined ? el.querySelector<HTMLElement>(`[data-id="${target}"]`) : null;
      if (row) {
        el.scrollTop +=
          row.getBoundingClientRect().top -
          el.getBoundingClientRect().top -
          (near !== null ? el.clientHeight / 3 : 48);
        if (near !== null) c.selected.value = near;
        v.pin = rowAt(el);
      } else {
        el.scrollTop = el.scrollHeight;
      }
      v.bottom = atBottom(el);
      return;
    }
    if (v.anchor) {
      const row = el.querySelector<HTMLElement>(`[data-row="${v.anchor.id}"]`);
      if (row) el.scrollTop += row.getBoundingClientRect().top - v.anchor.top;
      v.anchor = null;
    } else if (v.bottom && list.atNewest()) {
      el.scrollTop = el.scrollHeight;
    }
  });

  // The selected message wholly in view, with its toolbar (drawn under it on a phone).
  useLayoutEffect(() => {
    if (selected === null || !view.current.positioned) return;
    scroller.current
      ?.querySelector(`.msg[data-id="${selected}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  // Paging: a sentinel at each end, watched with a margin of a screen or so, by one observer for
  // the list's life. An observer speaks only when an end comes near or goes: after the window
  // moved with an end still near, that end is watched afresh (the observer then says whether it
  // is still near, from the new layout) so that paging goes on.
  const edges = useRef({ top: false, bottom: false, io: null as IntersectionObserver | null });
  useEffect(() => {
    const el = scroller.current;
    if (!el || !top.current || !bottom.current) return;
    const io = new IntersectionObserver(
      (entries) => {
        const e2 = edges.current;
        for (const e of entries) {
          if (e.target === top.current) e2.top = e.isIntersecting;
          else if (e.target === bottom.current) e2.bottom = e.isIntersecting;
        }
        if (!view.current.positioned) return;
        if (e2.top) {
          if (list.canShowOlder()) list.showOlder();
          else if (!list.foundOldest) void c.loader!.older(list).then(() => list.showOlder());
        }
        if (e2.bottom) {
          if (list.canShowNewer()) list.showNewer();
          else if (!list.foundNewest) void c.loader!.newer(list).then(() => list.showNewer());
        }
      },
      { root: el, rootMargin: EDGE_MARGIN },
    );
    edges.current = { top: false, bottom: false, io };
    io.observe(top.current);
    io.observe(bottom.current);
    return () => {
      io.disconnect();
      edges.current.io = null;
    };
  }, [list]);
  const rev = list.rev.value;
  useEffect(() => {
    const { io, top: nearTop, bottom: nearBottom } = edges.current;
    if (!io || !top.current || !bottom.current) return;
    const again = (target: Element) => {
      io.unobserve(target);
      io.observe(target);
    };
    if (nearTop) again(top.current);
    // Following the newest, the bottom is always near and there is nothing below it.
    if (nearBottom && !list.atNewest()) again(bottom.current);
  }, [list, rev, list.loaded]);

  // Read tracking: unread rows at least mostly in view, while the window has focus. One observer
  // for the list's life, told of each unread row once (rows read or gone are let go). A row drawn
  // read that turns unread (marked unread on another device, or here) is held: drawn unread, not
  // read again until the user scrolls, moves the selection or comes back to the window, as the
  // reference's (its process_unread_messages_event redraws; reading waits for process_visible).
  const focused = c.focused.value;
  const reads = useRef<{
    io: IntersectionObserver;
    watched: Set<Element>;
    visible: Set<number>;
    /** Rows drawn read (since the list was opened): one of these turning unread is held. */
    seenRead: WeakSet<Element>;
    held: Set<number>;
    flush: () => void;
  } | null>(null);
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const visible = new Set<number>();
    const held = new Set<number>();
    const flush = () => {
      if (!c.focused.value || document.visibilityState !== 'visible' || !c.readsOnView()) return;
      const ids = [...visible].filter((id) => !held.has(id));
      if (ids.length) c.markRead(ids);
    };
    const io = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          const id = Number((e.target as HTMLElement).dataset.id);
          const root = e.rootBounds?.height ?? 0;
          const seen =
            e.isIntersecting &&
            (e.intersectionRatio > 0.8 || e.intersectionRect.height > root * 0.5);
          if (seen) visible.add(id);
          else visible.delete(id);
        }
        flush();
      },
      { root: el, threshold: [0, 0.5, 0.85, 1] },
    );
    reads.current = { io, watched: new Set(), visible, seenRead: new WeakSet(), held, flush };
    return () => {
      io.disconnect();
      reads.current = null;
    };
  }, [list]);
  useEffect(() => {
    const el = scroller.current;
    const r = reads.current;
    if (!el || !r || !list.loaded) return;
    for (const row of r.watched) {
      if (!row.isConnected || !row.classList.contains('unread')) {
        const id = Number((row as HTMLElement).dataset.id);
        r.io.unobserve(row);
        r.watched.delete(row);
        r.visible.delete(id);
        r.held.delete(id);
      }
    }
    for (const row of el.querySelectorAll('.msg.unread')) {
      if (!r.watched.has(row)) {
        if (r.seenRead.has(row)) r.held.add(Number((row as HTMLElement).dataset.id));
        r.watched.add(row);
        r.io.observe(row);
      }
    }
    for (const row of el.querySelectorAll('.msg:not(.unread)')) r.seenRead.add(row);
    r.flush();
  }, [list, rev, s.rev.unread.value, focused, list.loaded, c.readsPaused.value]);
  /** The user scrolled, moved the selection or came back: held rows in view are read. */
  const readHeld = () => {
    const r = reads.current;
    if (!r?.held.size) return;
    r.held.clear();
    r.flush();
  };
  useEffect(() => {
    if (focused) readHeld();
  }, [focused]);
  useEffect(() => readHeld(), [selected]);

  // The pinned row back in its place, after the rows around it changed size.
  const keepPin = () => {
    const el = scroller.current;
    const pin = view.current.pin;
    if (!el || !pin) return;
    const row = el.querySelector<HTMLElement>(`[data-row="${pin.id}"]`);
    if (!row) {
      view.current.pin = null;
      return;
    }
    const shift = row.getBoundingClientRect().top - pin.top;
    if (Math.abs(shift) > 0.5) el.scrollTop += shift;
  };
  const unpin = () => (view.current.pin = null);
  useEffect(() => {
    const el = scroller.current;
    if (!el || !view.current.pin) return;
    const ro = new ResizeObserver(() => {
      if (view.current.pin) keepPin();
      else ro.disconnect();
    });
    for (const row of el.querySelectorAll('[data-row]')) ro.observe(row);
    return () => ro.disconnect();
  }, [list, list.rev.value, list.loaded]);

  // At the bottom, the view stays there while what it shows grows or it shrinks: a message's
  // images and previews loading, the server's copy of a sent message replacing its echo, the
  // compose box growing under it. One observer for the pane's life; each row watched once.
  const stick = useRef<{ ro: ResizeObserver | null; watched: WeakSet<Element> }>({
    ro: null,
    watched: new WeakSet(),
  });
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      const v = view.current;
      if (v.positioned && v.bottom && !v.pin && v.list?.atNewest() && !atBottomExactly(el))
        el.scrollTop = el.scrollHeight;
    });
    ro.observe(el);
    stick.current = { ro, watched: new WeakSet() };
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    const { ro, watched } = stick.current;
    if (!ro || !scroller.current) return;
    for (const row of scroller.current.querySelectorAll('[data-row]')) {
      if (watched.has(row)) continue;
      watched.add(row);
      ro.observe(row);
    }
  });

  // The "new messages below" button.
  const updateBelow = (measure: boolean) => {
    const el = scroller.current;
    if (!el) return;
    keepPin();
    if (measure && view.current.positioned) view.current.bottom = atBottom(el);
    // At the newest: scrolled to the end, or with the newest message wholly in view.
    const bottomNow = list.atNewest() && (view.current.bottom || newestShown(el));
    let unread = 0;
    if (!bottomNow) {
      const limit = el.getBoundingClientRect().bottom;
      const rowsEls = el.querySelectorAll<HTMLElement>('.msg.unread');
      for (const r of rowsEls) if (r.getBoundingClientRect().top > limit) unread++;
      // And those of the narrow past the window (not fetched yet, or out of the window).
      const lastShown = list.windowIds().at(-1) ?? 0;
      const inNarrow = unreadIn(
        list.narrow,
        (id, topic) => s.mutedTopic(id, topic),
        (id, topic) => s.topicMutedItself(id, topic),
      );
      if (inNarrow) unread += s.unread.ids(inNarrow).filter((id) => id > lastShown).length;
    }
    // Compared with the state as it is now, not as last drawn: two scrolls before a drawing
    // (away and back) must leave the button as the second one found it.
    setBelow((now) =>
      now.show === !bottomNow && now.unread === unread ? now : { show: !bottomNow, unread },
    );
  };
  useEffect(() => updateBelow(false));

  const jumpToNewest = () => {
    unpin();
    if (list.foundNewest) {
      list.showNewest();
      view.current.anchor = null;
      view.current.bottom = true;
      requestAnimationFrame(() => {
        const el = scroller.current;
        if (el) el.scrollTop = el.scrollHeight;
      });
    } else {
      view.current.positioned = false;
      view.current.newest = true;
      c.near = null;
      void c.loader!.open(list, 'newest');
    }
  };

  /**
   * With nothing selected, where ↓ (j) and ↑ (k) start: the first or the last message wholly in
   * view (one partly in view if none is whole), not the view's last message, which was out of
   * sight when the view opened at its first unread message (`n`, a channel's unread topic).
   */
  const inView = (ids: readonly number[], which: 'first' | 'last'): number | undefined => {
    const el = scroller.current!;
    const box = el.getBoundingClientRect();
    const whole: number[] = [];
    const part: number[] = [];
    for (const row of el.querySelectorAll<HTMLElement>('.msg[data-id]')) {
      const id = Number(row.dataset.id);
      if (!ids.includes(id)) continue;
      const r = row.getBoundingClientRect();
      if (r.bottom <= box.top || r.top >= box.bottom) continue;
      (r.top >= box.top - 1 && r.bottom <= box.bottom + 1 ? whole : part).push(id);
    }
    const shown = whole.length ? whole : part;
    return which === 'first' ? shown[0] : shown.at(-1);
  };

  /** The selected message's row, or null. */
  const rowOf = (id: number) =>
    scroller.current!.querySelector<HTMLElement>(`.msg[data-id="${id}"]`);

  const onKey = (e: KeyboardEvent) => {
    if (e.target !== scroller.current) return;
    // The selection as it is now, not as it was at the last render: keys pressed faster than
    // the list redraws each move on from the one before.
    const selected = c.selected.value;
    const mod = e.ctrlKey || e.metaKey;
    if (mod && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 's') {
      // Star or unstar the selected message (the reference's Ctrl+S), not the browser's "Save
      // page as".
      e.preventDefault();
      const m = selected !== null ? s.messages.get(selected) : undefined;
      if (m) void c.toggleStar(m);
      return;
    }
    if (mod || e.altKey) return;
    // Likewise the list as it is now: a message shown since (one just sent) counts.
    const ids = s.drawnIds(list).filter((id) => s.messages.has(id));
    const i = selected === null ? -1 : ids.indexOf(selected);
    let next: number | undefined;
    if (e.key === 'ArrowDown' || e.key === 'j')
      next = i < 0 ? (inView(ids, 'first') ?? ids.at(-1)) : ids[Math.min(ids.length - 1, i + 1)];
    else if (e.key === 'ArrowUp' || e.key === 'k')
      next = i < 0 ? (inView(ids, 'last') ?? ids.at(-1)) : ids[Math.max(0, i - 1)];
    else if (e.key === 'End') {
      next = ids.at(-1);
      // As the reference's End: the messages passed over are read too (those the view holds),
      // not left unread above the last one (the view's reading rules permitting).
      if (c.readsOnView()) c.markRead(ids.filter((id) => s.unread.has(id)));
    } else if (e.key === 'Home') next = ids[0];
    else if ((e.key === 'Enter' || e.key === 'r') && selected !== null) {
      const m = s.messages.get(selected);
      if (m) {
        e.preventDefault();
        c.replyTo(m);
      }
      return;
    } else if (e.key === 'u' && selected !== null) {
      // The sender's profile card, as the reference's `u`: beside the sender's name (the
      // message's row, in a group's later messages), the focus back to the list after.
      const m = s.messages.get(selected);
      const row = scroller.current!.querySelector(`.msg[data-id="${selected}"]`);
      if (m) {
        e.preventDefault();
        c.openCard(m.sender_id, row?.querySelector('.sender') ?? row);
      }
      return;
    } else if (e.key === 'e' && selected !== null) {
      e.preventDefault();
      c.editing.value = selected;
      return;
    } else if ((e.key === '>' || e.key === 'U') && selected !== null) {
      // As the reference's: `>` quotes the selected message in a reply, Shift+U marks it and
      // those after it unread.
      const m = s.messages.get(selected);
      if (m) {
        e.preventDefault();
        if (e.key === '>') void c.quote(m);
        else if (
          markUnreadShown(
            m,
            !s.unread.has(m.id),
            m.stream_id !== undefined && s.subs.has(m.stream_id),
          )
        )
          void c.markUnreadFromHere(m);
      }
      return;
    } else if (e.key === 'i' && selected !== null) {
      // Into the selected message's actions (its toolbar; on a phone its "⋮"), as the
      // reference's `i`: by Tab, every link and button of the messages before it came first.
      // At the toolbar's Tab stop (the action last focused in it: message.tsx), where it is.
      const shown = [
        ...scroller.current!.querySelectorAll<HTMLElement>('.msg.selected .msg-actions button'),
      ].filter((b) => b.offsetParent !== null);
      const stop = shown.find((b) => b.tabIndex === 0) ?? shown[0];
      e.preventDefault();
      stop?.focus();
      return;
    } else if (e.key === 's') {
      // The reference's `s`: from one conversation to its channel (or to all direct messages),
      // else to the selected message's conversation; the selected message stays selected there.
      const m = selected !== null ? s.messages.get(selected) : undefined;
      const near = selected;
      let to: Narrow | null = null;
      if (isConversation(list.narrow)) {
        const ch = channelOf(list.narrow);
        to = ch !== undefined ? channelNarrow(ch) : isNarrow('dm');
      } else if (m) {
        const conv = s.conversationOf(m);
        to =
          conv.kind === 'stream'
            ? topicNarrow(conv.streamId, conv.topic)
            : dmNarrow(conv.ids, s.selfId);
      }
      if (to) {
        e.preventDefault();
        c.go({ ...to, near });
      }
      return;
    } else if (e.key === 'R' && selected !== null) {
      // A direct message to the selected message's sender (the reference's Shift+R).
      const m = s.messages.get(selected);
      if (m) {
        e.preventDefault();
        c.requestCompose({
          kind: 'dm',
          userIds: m.sender_id === s.selfId ? [s.selfId] : [m.sender_id],
        });
      }
      return;
    } else if (e.key === 'M' && selected !== null) {
      // The reference's Shift+M: the selected message's topic muted, or unmuted if it is (by
      // itself or by its channel), as its topic menu's Mute item.
      const m = s.messages.get(selected);
      if (m?.stream_id === undefined) return;
      e.preventDefault();
      const ch = muteChoice(s.topicPolicy(m.stream_id, m.subject), s.channelMuted(m.stream_id));
      void c.setTopicPolicy(m.stream_id, m.subject, ch.policy);
      return;
    } else if (e.key === 'm' && selected !== null) {
      // The reference's `m`: the Move dialog (or Rename, for one who may move messages between
      // topics only) of the selected message's topic, where the user may move it.
      const m = s.messages.get(selected);
      if (m?.stream_id === undefined) return;
      const can = topicActions(m.subject, topicPowers(s, m.stream_id));
      const rename = !can.includes('move');
      if (rename && !can.includes('rename')) return;
      e.preventDefault();
      c.dialog.value = { kind: 'move-topic', streamId: m.stream_id, topic: m.subject, rename };
      return;
    } else if (e.key === 'V' && selected !== null) {
      // The reference's Shift+V: who has read the selected message, where the organization
      // shows it (as the message menu's item).
      if (s.realm.settings.realm_enable_read_receipts !== true) return;
      e.preventDefault();
      c.dialog.value = { kind: 'read-receipts', id: selected };
      return;
    } else if ((e.key === '=' || e.key === '+' || e.key === ':') && selected !== null) {
      // The reference's reaction keys: `=` the message's first reaction (added, or taken back),
      // `+` 👍, `:` the emoji picker beside the message.
      const m = s.messages.get(selected);
      if (!m) return;
      e.preventDefault();
      if (e.key === ':') {
        const row = rowOf(selected);
        const button = row?.querySelector<HTMLElement>(
          '.msg-actions button[aria-label="Add a reaction"]',
        );
        if (row) pickReaction(c, m, button && button.offsetParent !== null ? button : row);
        return;
      }
      const first = m.reactions[0];
      const r =
        e.key === '+'
          ? { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }
          : first
            ? {
                emoji_name: first.emoji_name,
                emoji_code: first.emoji_code,
                reaction_type: first.reaction_type,
              }
            : null;
      if (r) void c.toggleReaction(m, r);
      return;
    } else if (e.key === 'ArrowLeft') {
      // The reference's ←: the latest message of yours in the view whose content you may still
      // edit (as its edit_last_sent_message: not one past the time limit, whose topic alone
      // could change), selected and opened for editing; nothing if there is none.
      const now = Date.now() / 1000;
      const mine = ids.findLast((id) => {
        const m = s.messages.get(id);
        return !!m && m.sender_id === s.selfId && s.canEditContent(m, now);
      });
      if (mine !== undefined) {
        e.preventDefault();
        c.selected.value = mine;
        c.editing.value = mine;
      }
      return;
    } else if (e.key === 'Escape' && selected !== null) {
      c.selected.value = null;
      e.stopPropagation();
      return;
    } else return;
    e.preventDefault();
    if (next === undefined) return;
    c.selected.value = next;
  };

  // Empty too when it holds only what it does not draw (all of it in muted topics: drawnIds).
  const empty =
    list.loaded &&
    (list.size === 0 || (messages.length === 0 && list.atOldest() && list.atNewest()));
  const search = list.narrow.terms.some((t) => t.operator === 'search');
  const shownChannel = channelOf(list.narrow);
  const unknownChannel = shownChannel !== undefined && !s.channels.has(shownChannel);
  const is = list.narrow.terms.length === 1 ? find(list.narrow, 'is') : undefined;
  // What an empty view says: "Start the conversation below" only where one can.
  const emptyText = unknownChannel
    ? [
        'This channel does not exist or is private',
        "A private channel's members can add you to it.",
      ]
    : search
      ? ['No messages match your search', 'Try other words.']
      : is === 'starred'
        ? ['No starred messages', 'Star a message to keep it here.']
        : is === 'mentioned'
          ? ['No mentions', 'Messages that mention you or a group of yours show here.']
          : senderOf(list.narrow) !== undefined
            ? ['No messages', 'None of the messages you can see were sent by them.']
            : ['No messages here yet', 'Start the conversation below.'];
  return (
    <div class="pane">
      {/* A labelled region, not a feed: a feed may hold only articles, and the list holds
          recipient bars (links), date dividers and its edges between the messages (axe's
          aria-required-children). The messages are articles; j/k and the arrows move. */}
      <div
        class="messages"
        ref={scroller}
        tabIndex={0}
        role="region"
        aria-label={`Messages: ${c.viewName(list.narrow)}`}
        aria-busy={!list.loaded || list.loadingOlder || list.loadingNewer}
        onKeyDown={(e) => {
          unpin();
          // Esc in a message's actions (an open menu keeps its own): back to the list.
          if (e.key === 'Escape' && (e.target as HTMLElement).closest('.msg-actions')) {
            e.preventDefault();
            e.stopPropagation();
            scroller.current?.focus({ preventScroll: true });
            return;
          }
          if ((e.key === 'Enter' || e.key === ' ') && openMention(c, e.target as HTMLElement)) {
            // A mention's card, not the list's Enter (reply).
            e.preventDefault();
            return;
          }
          const header = (e.target as HTMLElement).closest?.('.spoiler-header');
          if (header && (e.key === 'Enter' || e.key === ' ')) {
            // The spoiler's button, not the list's Enter (reply).
            e.preventDefault();
            return toggleSpoiler(header);
          }
          // Scrolling or moving the selection by key: seeing messages reads them again (after
          // "Mark as unread from here").
          if (e.target === scroller.current && SCROLL_KEYS.has(e.key)) {
            c.resumeReading();
            readHeld();
          }
          onKey(e);
        }}
        onWheel={() => {
          unpin();
          c.resumeReading();
          readHeld();
        }}
        onTouchMove={() => {
          c.resumeReading();
          readHeld();
        }}
        onTouchStart={unpin}
        onPointerDown={() => {
          // A click (the selection) or the scrollbar taken (a scroll).
          unpin();
          readHeld();
        }}
        onScroll={() => updateBelow(true)}
        onClick={(e) => {
          if (openMention(c, e.target as HTMLElement)) return;
          const header = (e.target as HTMLElement).closest('.spoiler-header');
          if (header) toggleSpoiler(header);
        }}
      >
        <div ref={top} class="list-edge" aria-hidden={!list.atOldest()}>
          {!list.loaded
            ? list.error
              ? ''
              : 'Loading…'
            : list.atOldest() && !empty
              ? 'This is the beginning of the conversation.'
              : list.loadingOlder
                ? 'Loading…'
                : '\u00a0'}
        </div>
        {list.error && (
          <div class="empty" role="alert">
            <strong>Could not load messages</strong>
            <span>{list.error}</span>
            <button
              class="btn"
              type="button"
              onClick={() => void c.loader!.open(list, c.near ?? 'first_unread')}
            >
              Try again
            </button>
          </div>
        )}
        {empty && (
          <div class="empty">
            <strong>{emptyText[0]}</strong>
            <span>{emptyText[1]}</span>
          </div>
        )}
        {rows.map((r) => {
          if (r.kind === 'date') {
            return (
              <div key={r.key} data-row={r.key} class="date-divider" role="separator">
                {dayLabel(r.timestamp)}
              </div>
            );
          }
          if (r.kind === 'recipient') {
            return (
              <div key={r.key} data-row={r.key}>
                <RecipientBar
                  c={c}
                  s={s}
                  m={r.message as StoredMessage}
                  topicHtml={search ? list.highlighted(r.message).subject : undefined}
                />
              </div>
            );
          }
          const m = r.message as StoredMessage;
          return (
            <div key={r.key} data-row={r.key}>
              <MessageRow
                c={c}
                s={s}
                m={m}
                showSender={r.showSender}
                selected={selected === m.id}
                unread={s.unread.has(m.id)}
                editing={editing === m.id}
                match={search ? list.highlighted(m).content : undefined}
                hidden={hiddenMessage(m.sender_id, s.selfId, s.mutedUsers)}
                mutedMark={s.rev.muted.value}
                settingsMark={s.rev.settings.value}
              />
            </div>
          );
        })}
        <div ref={bottom} class="list-edge" aria-hidden="true">
          {list.loadingNewer ? 'Loading…' : '\u00a0'}
        </div>
      </div>
      {below.show && list.loaded && !empty && (
        <button class="new-below" type="button" onClick={jumpToNewest}>
          ↓{' '}
          {below.unread > 0
            ? `${below.unread} new message${below.unread === 1 ? '' : 's'} below`
            : 'Jump to the newest'}
        </button>
      )}
    </div>
  );
}
