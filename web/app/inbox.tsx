/**
 * The Inbox view (`#inbox`), as the reference's: every conversation with unread messages, from
 * the unread bookkeeping alone (no fetch). Direct messages first, then each channel a group
 * with its total and its topics under it (newest first), counts with mentions marked, a filter
 * box and which topics show (unmuted ones by default), kept in this browser but the words. A
 * group's header collapses and expands it (kept in this browser too); rows are links (a click or
 * Enter opens the conversation); ↑ ↓ (j k), Home and End move between rows and headers; each
 * row and channel has "Mark as read", a topic's row a "⋮" menu (the sidebar topic menu's: mark
 * as read, follow, mute, copy link, move, resolve, delete) and a channel's header one (the
 * sidebar channel menu's: channel-menu.ts), as the reference's. The data is state/inbox.ts's.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ChatState } from '../state/chat.js';
import type { PresenceStatus } from '../state/presence.js';
import {
  inboxContext,
  inboxData,
  inboxRows,
  parseCollapsed,
  parseTopics,
  type InboxDm,
  type InboxRow,
  type InboxTopics,
  type RowTarget,
  inboxRowTarget,
} from '../state/inbox.js';
import { dmNarrow, narrowHash, topicNarrow, type Narrow } from '../state/narrow.js';
import { useRowFocus } from './row-focus.js';
import { Count, Swatch } from './bits.js';
import { channelMenuItems } from './channel-menu.js';
import type { Controller } from './controller.js';
import { Icon } from './icons.js';
import { Menu } from './menu.js';
import { PresenceDot, StatusWords } from './people.js';
import { topicMenuItems } from './topic-policy.js';
import { track } from './track.js';

const COLLAPSED = 'confab.inbox-collapsed';
const TOPICS = 'confab.inbox-topics';

function load<T>(key: string, parse: (raw: unknown) => T): T {
  try {
    return parse(JSON.parse(localStorage.getItem(key) ?? 'null'));
  } catch {
    return parse(null);
  }
}

function save(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // no storage: kept as long as the page
  }
}

/**
 * The sidebar's entry, with the unread count when the Inbox is the home view (sidebar.tsx,
 * viewEntries).
 */
export function InboxEntry({ c, count = 0 }: { c: Controller; count?: number }) {
  return (
    <li>
      <a
        class="nav-item"
        href="#inbox"
        aria-current={c.page.value === 'inbox' ? 'page' : undefined}
      >
        <Icon name="inbox" />
        <span class="label">Inbox</span>
        <Count n={count} />
      </a>
    </li>
  );
}

/**
 * What comes before a direct-message row's name, as the reference's: the other person's presence
 * as a circle (one's own in one's own conversation; its words for screen readers after the
 * name; offline for everyone else when the organization turned presence off, as the
 * reference's), a bot's icon, a group's icon. Its width kept empty in a topic's row (`dm`
 * undefined), so the names line up.
 */
export function DmMark({ s, dm }: { s: ChatState; dm?: Pick<InboxDm, 'person'> }) {
  const user = dm && dm.person !== null ? s.users.get(dm.person) : undefined;
  const icon = dm && (dm.person === null ? 'group' : user?.is_bot ? 'bot' : null);
  if (icon)
    return (
      <span class={`inbox-mark inbox-${icon}`}>
        <Icon name={icon} />
      </span>
    );
  const status = dmStatus(s, dm);
  return <span class="inbox-mark">{status && <PresenceDot status={status} />}</span>;
}

/** The presence a direct-message row shows: a person's, not a bot's. */
export function dmStatus(s: ChatState, dm?: Pick<InboxDm, 'person'>): PresenceStatus | null {
  if (!dm || dm.person === null) return null;
  return s.users.get(dm.person)?.is_bot ? null : s.presenceOf(dm.person);
}

function rowNarrow(s: ChatState, r: InboxRow): Narrow | null {
  if (r.kind === 'dm') return dmNarrow(r.dm.ids, s.selfId);
  if (r.kind === 'topic') return topicNarrow(r.topic.streamId, r.topic.topic);
  return null;
}

export function InboxView({ c }: { c: Controller }) {
  const s = c.state.value!;
  // settings: the realm's permissions, which the topics' menus follow.
  track(s.rev.unread, s.rev.channels, s.rev.users, s.rev.muted, s.rev.presence, s.rev.settings);
  const [text, setText] = useState('');
  const [topics, setTopicsState] = useState<InboxTopics>(() => load(TOPICS, parseTopics));
  const [collapsed, setCollapsedState] = useState<Set<string>>(() =>
    load(COLLAPSED, parseCollapsed),
  );

  const inbox = inboxData(s.unread.conversations(), inboxContext(s), topics, text);
  const rows = inboxRows(inbox, collapsed);
  const { list, at, setFocusKey, onKey, onFilterKey } = useRowFocus(rows, '.inbox-focus');
  // The closed compose box's first button names the focused row's conversation (the first row
  // before any is focused, as the focus goes there when the view shows), as the reference's.
  const focused = rows[at];
  const target = focused ? inboxRowTarget(focused, s) : null;
  useEffect(() => {
    const was = c.rowTarget.peek();
    const same = (a: RowTarget | null) => JSON.stringify(a && [a.label, a.to]);
    if (same(was) !== same(target)) c.rowTarget.value = target;
  });
  useEffect(() => () => void (c.rowTarget.value = null), []);

  const toggle = (key: string) => {
    const next = new Set(collapsed);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    setCollapsedState(next);
    setFocusKey(key);
    save(COLLAPSED, [...next]);
  };

  const open = (r: InboxRow, n: Narrow) => (e: MouseEvent) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    setFocusKey(r.key);
    c.go(n);
  };

  const markRead = (r: InboxRow) => {
    if (r.kind === 'topic')
      void c.markAllAsRead({ streamId: r.topic.streamId, topic: r.topic.topic });
    else if (r.kind === 'channel') void c.markAllAsRead({ streamId: r.channel.streamId });
    else if (r.kind === 'dm') void c.markDmRead(r.dm.ids.join(','));
  };

  const markButton = (r: InboxRow, i: number, what: string) => (
    <button
      class="icon-btn inbox-mark-read"
      type="button"
      tabIndex={i === at ? 0 : -1}
      title="Mark as read"
      aria-label={`Mark ${what} as read`}
      onClick={() => markRead(r)}
    >
      <Icon name="check" />
    </button>
  );

  const dmCount = inbox.dms.reduce((n, d) => n + d.count, 0);
  const dmMentioned = inbox.dms.some((d) => d.mentioned);

  return (
    <section class="page-view inbox-view" aria-label="Inbox">
      <div class="inbox-filters">
        <input
          class="field inbox-search"
          type="search"
          aria-label="Filter conversations"
          placeholder="Filter conversations"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={onFilterKey}
        />
        <select
          class="field inbox-topics"
          aria-label="Topics shown"
          value={topics}
          onChange={(e) => {
            const v = parseTopics(e.currentTarget.value);
            setTopicsState(v);
            save(TOPICS, v);
          }}
        >
          <option value="unmuted">Unmuted topics</option>
          <option value="all">All topics</option>
          <option value="followed">Followed topics</option>
        </select>
      </div>
      {rows.length === 0 ? (
        <p class="page-empty" role="status">
          {/* As the reference's: words typed that match nothing, or no unread shown at all
              (the muted ones aside, under the default filter). */}
          {text
            ? 'No conversations match your filters.'
            : 'There are no unread messages in your inbox.'}
        </p>
      ) : (
        <ul class="inbox-list" ref={list} aria-label="Unread conversations" onKeyDown={onKey}>
          {rows.map((r, i) => {
            const tab = i === at ? 0 : -1;
            if (r.kind === 'dm-header' || r.kind === 'channel') {
              const isDm = r.kind === 'dm-header';
              const open = !collapsed.has(r.key);
              const sub = isDm ? undefined : s.subs.get(r.channel.streamId);
              const name = isDm ? 'Direct messages' : r.channel.name;
              const count = isDm ? dmCount : r.channel.count;
              const mentioned = isDm ? dmMentioned : r.channel.mentioned;
              return (
                <li
                  key={r.key}
                  class={`inbox-header${isDm ? ' inbox-dm-header' : ''}${!isDm && r.channel.muted ? ' muted' : ''}`}
                  data-key={r.key}
                >
                  <button
                    class="inbox-focus inbox-toggle"
                    type="button"
                    tabIndex={tab}
                    aria-expanded={open}
                    onClick={() => toggle(r.key)}
                  >
                    <span class={`inbox-chevron${open ? '' : ' collapsed'}`}>
                      <Icon name="chevron" />
                    </span>
                    {isDm ? (
                      <Icon name="dm" />
                    ) : (
                      <Swatch color={sub?.color ?? '#9aa0ad'} privateChannel={sub?.invite_only} />
                    )}
                    <span class="inbox-name">{name}</span>
                  </button>
                  <Count
                    n={count}
                    mention={mentioned}
                    label={`${count} unread${mentioned ? ', mentions you' : ''}`}
                  />
                  {isDm ? <span class="inbox-mark-space" /> : markButton(r, i, name)}
                  {sub ? (
                    <Menu
                      class="inbox-menu"
                      label={`Menu for #${sub.name}`}
                      tabIndex={tab}
                      items={channelMenuItems(c, sub)}
                    />
                  ) : (
                    <span class="inbox-menu-space" />
                  )}
                </li>
              );
            }
            const narrow = rowNarrow(s, r)!;
            const label = r.kind === 'dm' ? r.dm.label : s.topicName(r.topic.topic);
            const count = r.kind === 'dm' ? r.dm.count : r.topic.count;
            const mentioned = r.kind === 'dm' ? r.dm.mentioned : r.topic.mentioned;
            const muted = r.kind === 'topic' && r.topic.muted;
            return (
              <li
                key={r.key}
                class={`inbox-row${r.kind === 'dm' ? ' inbox-dm' : ''}${muted ? ' muted' : ''}`}
                data-key={r.key}
              >
                <a
                  class="inbox-focus inbox-open"
                  href={narrowHash(narrow, s.names())}
                  tabIndex={tab}
                  onClick={open(r, narrow)}
                >
                  <DmMark s={s} dm={r.kind === 'dm' ? r.dm : undefined} />
                  <span class="inbox-name">{label}</span>
                  {r.kind === 'dm' && <StatusWords status={dmStatus(s, r.dm)} />}
                  {muted && <Icon name="bell-off" label="muted" />}
                </a>
                <Count
                  n={count}
                  mention={mentioned}
                  label={`${count} unread${mentioned ? ', mentions you' : ''}`}
                />
                {markButton(r, i, label)}
                {r.kind === 'topic' ? (
                  <Menu
                    class="inbox-menu"
                    label={`Menu for topic ${label}`}
                    tabIndex={tab}
                    items={topicMenuItems(c, s, r.topic.streamId, r.topic.topic)}
                  />
                ) : (
                  <span class="inbox-menu-space" />
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
