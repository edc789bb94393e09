/**
 * One message row: the sender (at the start of a group), the server's rendered HTML as the server
 * made it (the CSP and the server's sanitizer are the guard), "(edited)" (opening the edit
 * history), the reactions, the actions (react, reply, star, edit, delete, link; in the "⋮" menu
 * also quote, mark unread from here, the original, the edit history, the read receipts:
 * message-dialogs.tsx) and the local echo's state. Rows re-render
 * only when their message object, or how it is shown, changed.
 */
import { Component, createRef } from 'preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { ApiError } from '../../src/client/api.js';
import type { EmojiEntry } from '../state/autocomplete.js';
import type { ChatState, StoredMessage } from '../state/chat.js';
import { emojiText, reactionChips } from '../state/emoji.js';
import { meAction } from '../state/format.js';
import { historyPolicy, historyShown, markUnreadShown } from '../state/message-menu.js';
import { mentionsMe, mentionTarget } from '../state/profile.js';
import { roveTo } from '../state/roving.js';
import {
  alertWordRanges,
  alertWordsMayMark,
  type Playground,
  playgroundsFor,
  playgroundUrl,
} from '../state/settings-more.js';
import { HIDDEN_NOTE, MUTED_NAME, reactionNames } from '../state/muted-users.js';
import { Avatar } from './bits.js';
import { EmojiGlyph } from './emoji-glyph.js';
import type { Controller } from './controller.js';
import { clock, fullTime } from './format.js';
import { Icon, type IconName } from './icons.js';
import { useLive } from './live.js';
import { Menu } from './menu.js';
import { StatusEmoji } from './status-emoji.js';
import { foldWidget } from '../state/widgets.js';
import { WidgetView } from './widgets.js';

let katexLoaded = false;

/** KaTeX's stylesheet, the first time a message shows TeX (the server rendered it to HTML). */
function needKatex(): void {
  if (katexLoaded) return;
  const href = document.querySelector<HTMLMetaElement>('meta[name="confab-katex-css"]')?.content;
  if (!href) return;
  katexLoaded = true;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  document.head.appendChild(link);
}

/**
 * What the browser adds to the server's HTML: emoji glyphs for the renderer's emoji spans, the
 * mentions' names as they are now and their cards, spoilers' buttons, links' targets. `selected`:
 * the message is the selected one (its mentions are Tab stops). `me`: the user, the message's
 * flags and the groups, to mark the mentions that name the user (none in a preview, as the
 * reference). `alertWords`: the user's alert words, highlighted where they occur (a message the
 * server flagged `has_alert_word`); drawn again with other words (or none), the highlights follow.
 */
export function decorate(
  el: HTMLElement,
  userName?: (id: number) => string | undefined,
  selected = false,
  me?: Parameters<typeof mentionsMe>[2],
  alertWords?: readonly string[],
  playgrounds?: readonly Playground[],
): void {
  markAlertWords(el, alertWords ?? []);
  if (playgrounds) addPlaygroundLinks(el, playgrounds);
  for (const pre of el.querySelectorAll<HTMLElement>('pre')) watchScrollable(pre);
  // The mentions of the user (themselves, a group of theirs, a wildcard that reached them) stand
  // out (`user-mention-me`, app.css), as in the reference's web app; a message edited to no longer
  // mention them loses it.
  if (me) {
    for (const span of el.querySelectorAll<HTMLElement>(
      '.user-mention, .user-group-mention, .topic-mention',
    ))
      span.classList.toggle('user-mention-me', mentionsMe(span.className, span.dataset, me));
  }
  // A mention shows the name the user has now (as the reference's web app: a user renamed since
  // is not shown by the old name); silent mentions without the "@". Search highlights kept.
  if (userName) {
    for (const span of el.querySelectorAll<HTMLElement>('.user-mention[data-user-id]')) {
      const name = userName(Number(span.dataset.userId));
      if (name === undefined || span.querySelector('.highlight')) continue;
      const text = span.classList.contains('silent') ? name : `@${name}`;
      if (span.textContent !== text) span.textContent = text;
    }
  }
  // A mention of a person or a group opens their card (message-pane.tsx), by a click or, from
  // the keyboard, by Enter: a button, focusable, but a Tab stop only in the selected message (as
  // the reference, whose mentions are no Tab stops at all: a long list would otherwise hold one
  // per mention; the selected message's are reached by Shift+Tab from its actions, `i`).
  // Wildcards (@all, @topic) open nothing, and are left as they are.
  if (userName) {
    for (const span of el.querySelectorAll<HTMLElement>('.user-mention, .user-group-mention')) {
      if (!mentionTarget(span.className, span.dataset)) continue;
      if (span.getAttribute('role') !== 'button') {
        span.setAttribute('role', 'button');
        span.setAttribute('aria-haspopup', 'dialog');
      }
      // (A span's tabIndex is -1 without the attribute too: it is the attribute that counts.)
      const tab = selected ? '0' : '-1';
      if (span.getAttribute('tabindex') !== tab) span.setAttribute('tabindex', tab);
    }
  }
  for (const span of el.querySelectorAll<HTMLElement>('span.emoji')) {
    const code = /\bemoji-([0-9a-f-]+)\b/.exec(span.className)?.[1];
    const text = code ? emojiText(code) : '';
    if (text && span.textContent !== text) span.textContent = text;
  }
  if (el.querySelector('.katex')) needKatex();
  // A spoiler's header opens and closes it (message-pane.tsx: toggleSpoiler): a button, from the
  // keyboard too, that says whether it is open.
  for (const h of el.querySelectorAll<HTMLElement>('.spoiler-header')) {
    if (h.getAttribute('role') === 'button') continue;
    h.setAttribute('role', 'button');
    h.tabIndex = 0;
    h.setAttribute('aria-expanded', String(!!h.parentElement?.classList.contains('open')));
  }
  // A link to elsewhere than the app's own views (a file, an image, a site) opens in a new tab,
  // as in the reference's web app: following it does not leave the app. Links to a view
  // (#narrow/…) stay in it.
  for (const a of el.querySelectorAll<HTMLAnchorElement>('a[href]')) {
    const href = a.getAttribute('href')!;
    if (href.startsWith('#')) continue;
    let url: URL;
    try {
      url = new URL(href, location.href);
    } catch {
      continue;
    }
    if (url.origin === location.origin && url.pathname === '/' && url.hash.startsWith('#narrow'))
      continue;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
}

/**
 * A code block in a language the organization has code playgrounds for (Settings → Code
 * playgrounds) gets a link to each, opening its code there in a new tab, as the reference's
 * "View in playground" button. Drawn again with other playgrounds (a `realm_playgrounds`
 * event), the links follow; a block without any has none.
 */
function addPlaygroundLinks(el: HTMLElement, playgrounds: readonly Playground[]): void {
  for (const block of el.querySelectorAll<HTMLElement>('.codehilite[data-code-language]')) {
    const code = (block.querySelector('code')?.textContent ?? '').replace(/\n$/, '');
    const found = playgroundsFor(playgrounds, block.dataset.codeLanguage ?? '').flatMap((p) => {
      const href = playgroundUrl(p.url_template, code);
      return href === null ? [] : [{ name: p.name, href }];
    });
    const key = found.map((p) => `${p.name}\n${p.href}`).join('\n');
    const old = block.querySelector<HTMLElement>(':scope > .code-playgrounds');
    if ((old?.dataset.key ?? '') === key) continue;
    old?.remove();
    if (found.length === 0) continue;
    const bar = document.createElement('div');
    bar.className = 'code-playgrounds';
    bar.dataset.key = key;
    for (const p of found) {
      const a = document.createElement('a');
      a.href = p.href;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      a.textContent = `View in ${p.name}`;
      bar.appendChild(a);
    }
    block.appendChild(bar);
  }
}

/**
 * A code block too wide for its message scrolls sideways; a keyboard reaches what is hidden only
 * if the block takes the focus (axe's "scrollable-region-focusable"), so such a block is a Tab
 * stop (`tabindex="0"`, its arrow keys scroll it) and a block that fits is not: a list of short
 * blocks gains no stops. The reference's blocks take no focus at all. Whether a block is wider
 * than its box changes with the window (390 pixels against 1280) and with the message drawn
 * again: each block is watched by one observer of their sizes, which looks again at each change
 * and lets go of a block taken out of the page.
 */
let scrollables: ResizeObserver | null = null;
const watchedBlocks = new WeakSet<HTMLElement>();

function updateScrollable(pre: HTMLElement): void {
  const wide = pre.scrollWidth > pre.clientWidth;
  if (wide && pre.getAttribute('tabindex') !== '0') pre.setAttribute('tabindex', '0');
  else if (!wide && pre.hasAttribute('tabindex')) pre.removeAttribute('tabindex');
}

/** Watches a block (its first look comes with the observer's first report, after layout). */
function watchScrollable(pre: HTMLElement): void {
  if (watchedBlocks.has(pre)) return;
  watchedBlocks.add(pre);
  scrollables ??= new ResizeObserver((entries) => {
    for (const e of entries) {
      const block = e.target as HTMLElement;
      if (block.isConnected) updateScrollable(block);
      else {
        scrollables!.unobserve(block);
        watchedBlocks.delete(block);
      }
    }
  });
  scrollables.observe(pre);
}

/** The alert words an element's text was last marked with (joined by line breaks). */
const markedWith = new WeakMap<HTMLElement, string>();

/**
 * The user's alert words in a message's text wrapped in `<span class="alert-word">` (styled in
 * settings-more.css), as the reference's web app does: whole words, any case, not in links, code
 * or mentions; a text already marked is left as it is (decorate runs again on each drawing). With
 * other words than the last time (added, removed: an `alert_words` event), the old marks are
 * taken off first.
 */
function markAlertWords(el: HTMLElement, words: readonly string[]): void {
  const key = words.join('\n');
  if ((markedWith.get(el) ?? '') !== key) {
    const marks = el.querySelectorAll('span.alert-word');
    for (const span of marks) span.replaceWith(span.textContent ?? '');
    // The text split by the marks is one again (a word added later may span the seams).
    if (marks.length > 0) el.normalize();
    markedWith.set(el, key);
  }
  if (words.length === 0) return;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  for (const text of texts) {
    const tags: { name: string; classes: string }[] = [];
    for (let p = text.parentElement; p && p !== el; p = p.parentElement)
      tags.push({ name: p.tagName, classes: p.className });
    if (!alertWordsMayMark(tags)) continue;
    const value = text.data;
    const ranges = alertWordRanges(value, words);
    if (ranges.length === 0) continue;
    const parts = document.createDocumentFragment();
    let at = 0;
    for (const [start, end] of ranges) {
      if (start > at) parts.appendChild(document.createTextNode(value.slice(at, start)));
      const span = document.createElement('span');
      span.className = 'alert-word';
      span.textContent = value.slice(start, end);
      parts.appendChild(span);
      at = end;
    }
    if (at < value.length) parts.appendChild(document.createTextNode(value.slice(at)));
    text.replaceWith(parts);
  }
}

export type RowProps = {
  c: Controller;
  s: ChatState;
  m: StoredMessage;
  showSender: boolean;
  selected: boolean;
  unread: boolean;
  editing: boolean;
  /** Search results: the server's highlighted copy of the content. */
  match?: string;
  /** Its sender is muted: collapsed to a notice until "Show" (muted-users.ts). */
  hidden: boolean;
  /** Changes with the muted users (reactions' tooltips name them "Muted user"). */
  mutedMark: number;
  /** Changes with the user's settings (the 24-hour clock draws the time anew). */
  settingsMark: number;
};

type RowState = { hover: boolean; revealed: boolean };

export class MessageRow extends Component<RowProps, RowState> {
  private content = createRef<HTMLDivElement>();
  /** A me-message's action (drawn in place of the content). */
  private action = createRef<HTMLSpanElement>();
  override state = { hover: false, revealed: false };
  /**
   * The toolbar's Tab stop: the action last focused (the first to begin with), its "⋮" last.
   * One stop for the toolbar, the arrows move within it (WAI-ARIA toolbar, roving tabindex); Tab
   * leaves it.
   */
  private actionAt = 0;

  /** The toolbar's focus on `to`, and its Tab stop with it (drawn by the next render too). */
  private rove(bar: HTMLElement, to: HTMLElement): void {
    const buttons = [...bar.querySelectorAll<HTMLElement>(TOOLBAR_STOPS)];
    const i = buttons.indexOf(to);
    if (i < 0) return;
    this.actionAt = i;
    for (const b of buttons) b.tabIndex = b === to ? 0 : -1;
    if (document.activeElement !== to) to.focus();
  }

  private toolbarKeys = (e: KeyboardEvent) => {
    const bar = e.currentTarget as HTMLElement;
    // The "⋮" menu's own keys (its list is inside the toolbar).
    if ((e.target as HTMLElement).closest('[role="menu"]')) return;
    // The buttons shown (on a narrow screen the "⋮" alone).
    const shown = [...bar.querySelectorAll<HTMLElement>(TOOLBAR_STOPS)].filter(
      (b) => b.offsetParent !== null,
    );
    const to = roveTo(e.key, shown.indexOf(e.target as HTMLElement), shown.length);
    if (to === undefined) return;
    e.preventDefault();
    e.stopPropagation();
    this.rove(bar, shown[to]!);
  };

  override shouldComponentUpdate(next: RowProps, nextState: RowState): boolean {
    const p = this.props;
    return (
      this.state.hover !== nextState.hover ||
      this.state.revealed !== nextState.revealed ||
      p.hidden !== next.hidden ||
      p.mutedMark !== next.mutedMark ||
      p.settingsMark !== next.settingsMark ||
      p.m !== next.m ||
      p.showSender !== next.showSender ||
      p.selected !== next.selected ||
      p.unread !== next.unread ||
      p.editing !== next.editing ||
      p.match !== next.match
    );
  }

  override componentDidMount(): void {
    this.decorate();
  }

  override componentDidUpdate(prev: RowProps): void {
    // Muted again after being shown: hidden again.
    if (this.props.hidden && !prev.hidden && this.state.revealed)
      this.setState({ revealed: false });
    this.decorate();
  }

  private decorate(): void {
    const { s, m, selected } = this.props;
    const el = this.content.current ?? this.action.current;
    if (!el) return;
    decorate(
      el,
      this.userName,
      selected,
      { selfId: s.selfId, flags: m.flags, groups: s.groups },
      m.flags.includes('has_alert_word') ? s.alertWords : undefined,
      s.playgrounds,
    );
  }

  private userName = (id: number) => this.props.s.users.get(id)?.full_name;

  render() {
    const { c, s, m, showSender, selected, unread, editing, match } = this.props;
    const twentyFour = s.settings.twenty_four_hour_time === true;
    const mentioned = m.flags.some((f) => f === 'mentioned' || f.endsWith('wildcard_mentioned'));
    const starred = m.flags.includes('starred');
    const now = Date.now() / 1000;
    const local = m.local_id !== undefined;
    const toolbar = !local && !editing && (this.state.hover || selected);
    // A poll or to-do list is drawn as one, in place of its content (rows are drawn again only
    // when their message changed: a submessage makes a new message object).
    const widget = foldWidget(m.submessages, m.sender_id);
    // A me-message ("/me waves"): its action on the name's line, in place of the content, as
    // the reference draws it; its local echo is drawn so too (ChatState.echo).
    const action =
      showSender && !editing && !widget && m.is_me_message === true
        ? meAction(match ?? m.content)
        : null;
    const acts = toolbar ? actions(c, s, m, now) : [];
    // The toolbar's buttons; the menu has those and the rest.
    const bar = acts.filter((a) => a.icon !== undefined);
    // Its Tab stop: a button, or (at bar.length) the "⋮".
    const stop = Math.min(this.actionAt, bar.length);
    const cls = [
      'msg',
      showSender && 'first',
      selected && 'selected',
      mentioned && 'mentioned',
      starred && 'starred',
      unread && 'unread',
      local && !m.local_failed && 'local',
      action !== null && 'me-message',
    ]
      .filter(Boolean)
      .join(' ');
    const edited =
      m.last_edit_timestamp !== undefined
        ? 'edited'
        : m.last_moved_timestamp !== undefined
          ? 'moved'
          : null;
    const time = (
      <time
        class={showSender ? 'msg-time' : 'side-time'}
        dateTime={new Date(m.timestamp * 1000).toISOString()}
        title={fullTime(m.timestamp)}
      >
        {showSender
          ? clock(m.timestamp, twentyFour)
          : clock(m.timestamp, twentyFour).replace(/ [AP]M$/, '')}
      </time>
    );
    if (this.props.hidden && !this.state.revealed) {
      // The reference's hidden message: no name, no avatar, no content, reactions or toolbar.
      return (
        <div
          class={`${cls} hidden-msg`}
          data-id={m.id}
          role="article"
          aria-label={`${MUTED_NAME}, ${clock(m.timestamp, twentyFour)}`}
          onClick={(e) => {
            if ((e.target as HTMLElement).closest('button')) return;
            c.selected.value = m.id;
          }}
        >
          <div class="gutter">{!showSender && time}</div>
          <div class="body">
            {showSender && <div class="msg-head">{time}</div>}
            <p class="hidden-note">
              {HIDDEN_NOTE}{' '}
              <button
                class="link-btn"
                type="button"
                onClick={() => this.setState({ revealed: true })}
              >
                Show
              </button>
            </p>
          </div>
        </div>
      );
    }
    return (
      <div
        class={cls}
        data-id={m.id}
        onMouseEnter={() => this.setState({ hover: true })}
        onMouseLeave={() => this.setState({ hover: false })}
        role="article"
        aria-label={`${m.sender_full_name}, ${clock(m.timestamp, twentyFour)}`}
        onClick={(e) => {
          if ((e.target as HTMLElement).closest('a, button, input, textarea')) return;
          c.selected.value = m.id;
          c.resumeReading();
        }}
      >
        <div class="gutter">
          {showSender ? (
            // The sender's card, for the pointer (the name beside it is the keyboard's way: one
            // stop, not two, for each sender). The focus stays where it was as it is clicked.
            <button
              class="avatar-btn"
              type="button"
              tabIndex={-1}
              aria-hidden="true"
              onMouseDown={(e) => e.preventDefault()}
              onClick={(e) => c.openCard(m.sender_id, e.currentTarget)}
            >
              <Avatar id={m.sender_id} name={m.sender_full_name} url={m.avatar_url} />
            </button>
          ) : (
            time
          )}
        </div>
        <div class="body">
          {showSender && (
            <div class="msg-head">
              <button
                class="sender"
                type="button"
                aria-haspopup="dialog"
                onClick={(e) => c.openCard(m.sender_id, e.currentTarget)}
              >
                {m.sender_full_name}
              </button>
              {action === null ? (
                <StatusEmoji s={s} id={m.sender_id} />
              ) : (
                <span
                  class="content me-action"
                  ref={this.action}
                  dangerouslySetInnerHTML={{ __html: action }}
                />
              )}
              {time}
              {edited && <EditedMark c={c} s={s} m={m} edited={edited} selected={selected} />}
            </div>
          )}
          {action !== null ? null : editing ? (
            <EditBox c={c} s={s} m={m} />
          ) : widget ? (
            <WidgetView c={c} s={s} m={m} w={widget} />
          ) : (
            <div
              class="content"
              ref={this.content}
              dangerouslySetInnerHTML={{ __html: match ?? m.content }}
            />
          )}
          {!showSender && edited && (
            <EditedMark c={c} s={s} m={m} edited={edited} selected={selected} />
          )}
          {local && <SendState c={c} m={m} />}
          <Reactions c={c} s={s} m={m} />
        </div>
        {/* A starred message says so without the pointer on it (the toolbar, when drawn,
            covers this). */}
        {starred && (
          <span class="star-mark" title="Starred">
            <Icon name="star" label="Starred" />
          </span>
        )}
        {/* Drawn only for the message under the pointer or selected: 300 rows of toolbars
            would cost more than the messages. On a narrow screen (app.css) only its "⋮" shows,
            in a column of the row's own, and the actions are in its menu. */}
        {toolbar && (
          <div
            class="msg-actions"
            role="toolbar"
            aria-label="Message actions"
            onKeyDown={this.toolbarKeys}
            onFocusIn={(e) => {
              // A button focused by a click, or by `i`: the toolbar's Tab stop from now on.
              const b = e.target as HTMLElement;
              this.rove(e.currentTarget, b);
            }}
          >
            {/* Keyed by the action (its icon), not its label: Star turning Unstar as it is
                pressed was a new button, and the focus fell to the page's body. */}
            {bar.map((a, i) => (
              <button
                key={a.icon}
                class="icon-btn"
                type="button"
                tabIndex={i === stop ? 0 : -1}
                aria-label={a.label}
                aria-pressed={a.pressed}
                title={a.title}
                onClick={(e) => a.run(e.currentTarget)}
              >
                <Icon name={a.icon!} />
              </button>
            ))}
            <Menu
              class="msg-menu"
              label="Message actions"
              tabIndex={stop === bar.length || narrowScreen() ? 0 : -1}
              items={acts.map((a) => ({
                label: a.menuLabel ?? a.label,
                run: a.run,
                danger: a.danger,
              }))}
            />
          </div>
        )}
      </div>
    );
  }
}

/** The toolbar's buttons and its "⋮", in order: one Tab stop, the arrows between them. */
const TOOLBAR_STOPS = ':scope > button, :scope > .msg-menu > .msg-menu-btn';

/**
 * A phone's width, where the toolbar shows its "⋮" alone (app.css): then the "⋮" is its Tab
 * stop whichever action was focused last.
 */
function narrowScreen(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(max-width: 600px)').matches;
}

type Action = {
  /** None: in the "⋮" menu only, not a button of the toolbar. */
  icon?: IconName;
  label: string;
  title?: string;
  /** In the menu, where it has no icon, if not `label`. */
  menuLabel?: string;
  pressed?: boolean;
  danger?: boolean;
  /** `anchor`: what was clicked (the toolbar's button, or the menu's "⋮"). */
  run: (anchor: HTMLElement) => void;
};

/** What the user may do with a message: its toolbar's buttons, and its menu's items. */
function actions(c: Controller, s: ChatState, m: StoredMessage, now: number): Action[] {
  const starred = m.flags.includes('starred');
  const list: Action[] = [
    {
      icon: 'smile',
      label: 'Add a reaction',
      title: 'Add a reaction',
      run: (anchor) => pickReaction(c, m, anchor),
    },
    { icon: 'reply', label: 'Reply', title: 'Reply (r)', run: () => c.replyTo(m) },
    { label: 'Quote and reply', run: () => void c.quote(m) },
    {
      icon: 'star',
      label: starred ? 'Unstar' : 'Star',
      title: 'Star',
      pressed: starred,
      run: () => void c.toggleStar(m),
    },
  ];
  if (s.canEditContent(m, now) || s.canEditTopic(m, now))
    list.push({
      icon: 'edit',
      label: 'Edit',
      title: 'Edit (e)',
      run: () => (c.editing.value = m.id),
    });
  if (s.canDelete(m, now))
    list.push({
      icon: 'trash',
      label: 'Delete',
      title: 'Delete',
      danger: true,
      run: () => {
        void c
          .ask({
            title: 'Delete this message?',
            text: 'It will be deleted for everyone. This cannot be undone.',
            action: 'Delete',
            danger: true,
          })
          .then((ok) => {
            if (ok) void c.deleteMessage(m.id);
          });
      },
    });
  // The reference's items for reading and following up, on the rules of its message actions
  // popover (message-menu.ts).
  if (markUnreadShown(m, !s.unread.has(m.id), m.stream_id !== undefined && s.subs.has(m.stream_id)))
    list.push({ label: 'Mark as unread from here', run: () => void c.markUnreadFromHere(m) });
  if (!s.canEditContent(m, now))
    list.push({
      label: 'View original message',
      run: () => (c.dialog.value = { kind: 'message-source', id: m.id }),
    });
  if (historyShown(historyPolicy(s.realm.settings), m))
    list.push({
      label: 'View edit history',
      run: () => (c.dialog.value = { kind: 'message-history', id: m.id }),
    });
  if (s.realm.settings.realm_enable_read_receipts === true)
    list.push({
      label: 'View read receipts',
      run: () => (c.dialog.value = { kind: 'read-receipts', id: m.id }),
    });
  list.push({
    icon: 'link',
    label: 'Copy a link to this message',
    title: 'Copy link',
    menuLabel: 'Copy link',
    run: () => c.copyLink(m),
  });
  return list;
}

export function openPicker(
  c: Controller,
  anchor: HTMLElement,
  title: string,
  onPick: (e: EmojiEntry) => void,
): void {
  const r = anchor.getBoundingClientRect();
  c.picker.value = { x: r.right, y: r.bottom, title, onPick };
  void c.loadEmoji();
}

/** The emoji picker, to react to a message with the emoji chosen. */
export function pickReaction(c: Controller, m: StoredMessage, anchor: HTMLElement): void {
  openPicker(c, anchor, 'Add a reaction', (entry) => {
    const reaction_type = entry.kind === 'realm' ? 'realm_emoji' : 'unicode_emoji';
    void c.toggleReaction(m, { emoji_name: entry.name, emoji_code: entry.code, reaction_type });
  });
}

/**
 * "(edited)" or "(moved)": a button opening the message's edit history where the organization
 * lets it be seen (message-menu.ts historyShown), else a mark. A Tab stop only in the selected
 * message, as its mentions (a long list would otherwise hold one for each edited message).
 */
function EditedMark({
  c,
  s,
  m,
  edited,
  selected,
}: {
  c: Controller;
  s: ChatState;
  m: StoredMessage;
  edited: string;
  selected: boolean;
}) {
  if (!historyShown(historyPolicy(s.realm.settings), m))
    return <span class="edited">({edited})</span>;
  return (
    <button
      class="edited"
      type="button"
      aria-haspopup="dialog"
      title="View edit history"
      tabIndex={selected ? 0 : -1}
      onClick={() => (c.dialog.value = { kind: 'message-history', id: m.id })}
    >
      ({edited})
    </button>
  );
}

function SendState({ c, m }: { c: Controller; m: StoredMessage }) {
  if (!m.local_failed) return <div class="send-state">Sending…</div>;
  return (
    <div class="send-state failed" role="alert">
      Not sent.{' '}
      <button type="button" onClick={() => c.retrySend(m.local_id!)}>
        Try again
      </button>{' '}
      ·{' '}
      <button
        type="button"
        onClick={() => {
          const item = c.dropUnsent(m.local_id!);
          if (item) c.requestCompose(item.to, item.content);
        }}
      >
        Edit
      </button>{' '}
      ·{' '}
      <button type="button" onClick={() => c.dropUnsent(m.local_id!)}>
        Discard
      </button>
    </div>
  );
}

function Reactions({ c, s, m }: { c: Controller; s: ChatState; m: StoredMessage }) {
  if (m.reactions.length === 0) return null;
  const chips = reactionChips(m.reactions, s.selfId);
  return (
    <div class="reactions">
      {chips.map((chip) => {
        const names = reactionNames(chip.userIds, s.selfId, s.mutedUsers, (id) => s.userName(id));
        return (
          <button
            key={chip.key}
            type="button"
            class="reaction"
            aria-pressed={chip.mine}
            aria-label={`${chip.emoji_name}: ${chip.count} (${names.join(', ')})${chip.mine ? ', click to remove yours' : ''}`}
            title={`${names.join(', ')} reacted with :${chip.emoji_name}:`}
            onClick={() => void c.toggleReaction(m, chip)}
          >
            <EmojiGlyph r={chip} s={s} />
            {chip.count}
          </button>
        );
      })}
      <button
        type="button"
        class="reaction"
        aria-label="Add a reaction"
        onClick={(e) => pickReaction(c, m, e.currentTarget)}
      >
        <Icon name="plus" />
      </button>
    </div>
  );
}

/**
 * The edit box's topic change (PATCH /messages/{id}, the topic and which messages); true when it
 * is done with. "All messages in the topic" refused for the realm's time limit (some older than
 * the user may move) asks, as the reference's topic edit does, "Move some messages?" (the newer
 * ones, change_later from the first the server names: offerPartialMove, with the Move dialog's
 * code), and the edit ends whatever the answer; another refusal is a toast, the box left open.
 */
async function moveFromEdit(
  c: Controller,
  id: number,
  topic: string,
  mode: string,
): Promise<boolean> {
  const body = { topic, propagate_mode: mode };
  try {
    await c.client.editMessage(id, body);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.code === 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED') {
      // The focus given back after the question goes to the messages (the box ends then; its
      // Save, disabled while it saves, could not take it).
      document.querySelector<HTMLElement>('.messages')?.focus({ preventScroll: true });
      // The question's dialog and its code come with the other dialogs (lazy-dialogs.ts).
      const dialogs = await import('./lazy-dialogs.js').catch(() => null);
      const asked = dialogs?.offerPartialMoveFor(c, body, e);
      if (asked) {
        await asked;
        return true;
      }
    }
    c.toast(e instanceof Error ? e.message : String(e));
    return false;
  }
}

function EditBox({ c, s, m }: { c: Controller; s: ChatState; m: StoredMessage }) {
  const now = Date.now() / 1000;
  const canContent = s.canEditContent(m, now);
  const canTopic = s.canEditTopic(m, now);
  // Saved as typed until now (Enter right after typing, before the redraw).
  const [content, setContent, contentNow] = useLive<string | null>(null);
  const [topic, setTopic, topicNow] = useLive(m.subject);
  // Which messages a move takes: by default as the reference's web app chooses, by where the
  // message is in its topic (asked of the server when the view does not tell; a choice made
  // before the answer stays).
  const [mode, setMode, modeNow] = useLive<string>(() => c.moveDefaultNow(m) ?? 'change_one');
  const modeChosen = useRef(false);
  // Saving: the keys save too (Enter), so the button's being disabled is not enough.
  const [busy, setBusy, busyNow] = useLive(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const topicField = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLDivElement>(null);
  // The topic alone to edit (the content past its time limit, or someone else's message): its
  // field takes the focus as the box opens, as the content's box does once loaded (below); else
  // the keys typed went to the message list behind it.
  useLayoutEffect(() => {
    if (!canContent) topicField.current?.focus();
  }, []);
  const original = useRef('');
  /** The text loaded: the box takes the focus as it is drawn with it (not a frame later). */
  const focusArea = useRef(false);
  useLayoutEffect(() => {
    if (!focusArea.current || !area.current || area.current.disabled) return;
    focusArea.current = false;
    area.current.focus();
  });

  useEffect(() => {
    if (!canTopic || m.type !== 'stream' || c.moveDefaultNow(m)) return;
    let live = true;
    void c.moveDefault(m).then((d) => live && !modeChosen.current && setMode(d));
    return () => {
      live = false;
    };
  }, [m.id]);

  useEffect(() => {
    if (!canContent) return;
    c.rawContent(m.id)
      .then((raw) => {
        original.current = raw;
        focusArea.current = true;
        setContent(raw);
      })
      .catch(() => c.toast('Could not load the message to edit it.'));
  }, [m.id]);

  // Closed (saved or cancelled) with the focus in it: the focus back on the message list, the
  // message still selected there, not lost to the page (the list's keys, Tab from there).
  const cancel = () => {
    const inBox = !!box.current?.contains(document.activeElement);
    c.editing.value = null;
    if (inBox) document.querySelector<HTMLElement>('.messages')?.focus({ preventScroll: true });
  };
  const save = async () => {
    // Once: a second Enter (or click) while the first save is on its way would send the
    // same change again (a topic already moved: "Nothing to change").
    if (busyNow.current) return;
    const content = contentNow.current;
    const topic = topicNow.current;
    const mode = modeNow.current;
    setBusy(true);
    let ok = true;
    if (canContent && content !== null && content !== original.current)
      ok = await c.edit(m.id, { content });
    if (ok && canTopic && topic !== m.subject) ok = await moveFromEdit(c, m.id, topic, mode);
    setBusy(false);
    if (ok) cancel();
  };
  const keys = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      cancel();
    } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      // As in the compose box: Enter saves, Shift+Enter starts a new line (Ctrl+Enter saves too).
      e.preventDefault();
      void save();
    }
  };
  return (
    <div class="edit-box" ref={box} onKeyDown={keys}>
      {canTopic && m.type === 'stream' && (
        <div class="form-row">
          <label class="stack">
            Topic
            <input
              ref={topicField}
              class="field"
              value={topic}
              maxLength={s.realm.maxTopicLength}
              onInput={(e) => setTopic(e.currentTarget.value)}
            />
          </label>
          <label class="stack">
            Move
            <select
              class="field"
              value={mode}
              onChange={(e) => {
                modeChosen.current = true;
                setMode(e.currentTarget.value);
              }}
            >
              <option value="change_one">Only this message</option>
              <option value="change_later">This and later messages</option>
              <option value="change_all">All messages in the topic</option>
            </select>
          </label>
        </div>
      )}
      {canContent && (
        <textarea
          ref={area}
          class="field"
          aria-label="Message content"
          value={content ?? ''}
          disabled={content === null}
          onInput={(e) => setContent(e.currentTarget.value)}
        />
      )}
      <div class="row">
        <span class="hint">
          {canContent
            ? 'Enter to save · Shift+Enter for a new line · Esc to cancel'
            : 'Enter to save · Esc to cancel'}
        </span>
        <button class="btn" type="button" onClick={cancel}>
          Cancel
        </button>
        <button class="btn primary" type="button" disabled={busy} onClick={() => void save()}>
          Save
        </button>
      </div>
    </div>
  );
}
