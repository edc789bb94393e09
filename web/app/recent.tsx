/**
 * The Recent conversations view (`#recent`), as the reference's: one row per conversation the
 * user can see (a channel's topic, or a direct-message conversation), newest activity first,
 * with its channel and topic (or its people), its unread count (a mention marked), who took part
 * and when it last moved; filters (Include DMs, Unread, Participated, which topics, and words in
 * the names) kept in this browser. The headers Channel, Topic, Unread and Time sort the rows
 * (Time, newest first, by default), kept while the page lives but not stored, as the reference's
 * (its recent_view_ui keeps its filters in localStorage, and its table's sort in memory). Rows
 * are links (a click opens the conversation); ↑ ↓ (j k), Home and End move between them, Enter
 * opens, `r` replies to the conversation; `c`, anywhere in the view but a field, writes a new
 * channel message (shell.tsx: All messages with the compose box, as the reference's `c`). The
 * data is state/recent.ts's, from the view's own fetch of the newest messages and everything the
 * app sees after.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ChatState } from '../state/chat.js';
import { TOPIC } from '../state/chat.js';
import { channelNarrow, dmNarrow, narrowHash, topicNarrow, type Narrow } from '../state/narrow.js';
import {
  DEFAULT_SORT,
  nextSort,
  parseFilters,
  recentRows,
  relativeTime,
  rowCompose,
  shownParticipants,
  sortRows,
  type RecentFilters,
  type RecentRow,
  type RecentSort,
  type RecentSortBy,
} from '../state/recent.js';
import { useRowFocus } from './row-focus.js';
import { Avatar, Count, Swatch } from './bits.js';
import type { Controller } from './controller.js';
import { dayLabel, fullTime } from './format.js';
import { Icon } from './icons.js';
import { track } from './track.js';

const STORE = 'confab.recent-filters';
/** Where an earlier version stored the sort: taken out (the sort is the page's only). */
const OLD_SORT_STORE = 'confab.recent-sort';
/** The table's columns, and what each sorts by (Participants, nothing). */
const COLUMNS: [RecentSortBy | null, string][] = [
  ['channel', 'Channel'],
  ['topic', 'Topic'],
  ['unread', 'Unread'],
  [null, 'Participants'],
  ['time', 'Time'],
];
/** The participants a row shows before "+N". */
const MAX_AVATARS = 4;

function loadFilters(): RecentFilters {
  try {
    return parseFilters(JSON.parse(localStorage.getItem(STORE) ?? 'null'));
  } catch {
    return parseFilters(null);
  }
}

/** The sort chosen, for the page's life: the view shown again keeps it, a reload does not. */
let pageSort: RecentSort = DEFAULT_SORT;
try {
  localStorage.removeItem(OLD_SORT_STORE);
} catch {
  // no storage: nothing kept there
}

function saveFilters(f: RecentFilters): void {
  try {
    const { text: _t, ...kept } = f;
    localStorage.setItem(STORE, JSON.stringify(kept));
  } catch {
    // no storage: the filters last as long as the page
  }
}

function rowNarrow(s: ChatState, r: RecentRow): Narrow {
  return r.kind === 'stream' ? topicNarrow(r.streamId, r.topic) : dmNarrow(r.ids, s.selfId);
}

function Toggle({ on, label, set }: { on: boolean; label: string; set: (on: boolean) => void }) {
  return (
    <button class="btn recent-toggle" type="button" aria-pressed={on} onClick={() => set(!on)}>
      {on && <span aria-hidden="true">✓ </span>}
      {label}
    </button>
  );
}

function Participants({ s, ids }: { s: ChatState; ids: readonly number[] }) {
  const { shown, more } = shownParticipants(ids, MAX_AVATARS);
  const names = ids.map((id) => s.userName(id));
  return (
    <span class="recent-people" title={names.join(', ')}>
      <span class="sr-only">Participants: {names.join(', ')}</span>
      {shown.map((id) => (
        <Avatar key={id} small id={id} name={s.userName(id)} url={s.users.get(id)?.avatar_url} />
      ))}
      {more > 0 && (
        <span class="recent-more" aria-hidden="true">
          +{more}
        </span>
      )}
    </span>
  );
}

export function RecentView({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.recent.rev, s.rev.unread, s.rev.channels, s.rev.users, s.rev.muted);
  const status = c.recentFetch.value;
  const [filters, setFiltersState] = useState<RecentFilters>(loadFilters);
  const [sort, setSortState] = useState<RecentSort>(pageSort);
  const [now, setNow] = useState(() => Date.now());

  // The times ("5 min ago") follow the clock.
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);

  const setFilters = (f: RecentFilters) => {
    setFiltersState(f);
    saveFilters(f);
  };

  const unread = s.unread.byConversation();
  const rows = sortRows(
    recentRows(
      s.recent.list(),
      {
        selfId: s.selfId,
        subscribed: (id) => s.subs.has(id),
        channelName: (id) => s.channelName(id),
        mutedTopic: (id, topic) => s.mutedTopic(id, topic),
        followed: (id, topic) => s.topicPolicy(id, topic) === TOPIC.FOLLOWED,
        userName: (id) => s.userName(id),
        userMuted: (id) => s.mutedUsers.has(id),
        unread: (key) => unread.get(key),
      },
      filters,
    ),
    sort,
    (id) => s.channelName(id),
  );
  const { list, at, setFocusKey, onKey, onFilterKey } = useRowFocus(rows, '.recent-open');

  const setSort = (by: RecentSortBy) => {
    const next = nextSort(sort, by);
    pageSort = next;
    setSortState(next);
  };

  // `r` on a row (rowCompose): its conversation opens with the compose box addressed (`c`, the
  // view's compose key, goes on to shell.tsx); the other keys move between rows.
  const onListKey = (e: KeyboardEvent) => {
    const r = rows[at];
    if (e.key === 'r' && r && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      e.stopPropagation();
      const { narrow, to } = rowCompose(r, s.selfId);
      setFocusKey(r.key);
      c.goAndCompose(narrow, to);
      return;
    }
    onKey(e);
  };

  const open = (r: RecentRow) => (e: MouseEvent) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    setFocusKey(r.key);
    c.go(rowNarrow(s, r));
  };

  const oldest = s.recent.oldestFetched;
  return (
    <section class="page-view recent-view" aria-label="Recent conversations">
      <div class="recent-filters">
        <input
          class="field recent-search"
          type="search"
          aria-label="Filter conversations"
          placeholder="Filter conversations"
          value={filters.text}
          onInput={(e) => setFilters({ ...filters, text: e.currentTarget.value })}
          onKeyDown={onFilterKey}
        />
        <div class="recent-toggles" role="group" aria-label="Filters">
          <Toggle
            on={filters.dms}
            label="Include DMs"
            set={(dms) => setFilters({ ...filters, dms })}
          />
          <Toggle
            on={filters.unread}
            label="Unread"
            set={(unread) => setFilters({ ...filters, unread })}
          />
          <Toggle
            on={filters.participated}
            label="Participated"
            set={(participated) => setFilters({ ...filters, participated })}
          />
          <select
            class="field recent-topics"
            aria-label="Topics shown"
            value={filters.topics}
            onChange={(e) =>
              setFilters({
                ...filters,
                topics: e.currentTarget.value as RecentFilters['topics'],
              })
            }
          >
            <option value="unmuted">Unmuted topics</option>
            <option value="all">All topics</option>
            <option value="followed">Followed topics</option>
          </select>
        </div>
      </div>
      {rows.length === 0 ? (
        <p class="page-empty" role="status">
          {status === 'loading' || status === 'none'
            ? 'Loading conversations…'
            : s.recent.size === 0
              ? 'No conversations yet.'
              : 'No conversations match your filters.'}
        </p>
      ) : (
        <>
          {/* The columns' headers sort the rows, as the reference's (Time, newest first, by
              default; the same header again turns the order round). */}
          <div class="recent-head" role="group" aria-label="Sort conversations">
            {COLUMNS.map(([by, label]) => {
              if (!by)
                return (
                  <span key={label} class="recent-head-people" aria-hidden="true">
                    {label}
                  </span>
                );
              const on = sort.by === by;
              return (
                <button
                  key={by}
                  class={`recent-sort${on ? ' active' : ''}`}
                  type="button"
                  aria-pressed={on}
                  title={`Sort by ${label.toLowerCase()}`}
                  onClick={() => setSort(by)}
                >
                  {label}
                  {on && <span aria-hidden="true">{sort.desc ? ' ↓' : ' ↑'}</span>}
                  {on && <span class="sr-only">, {sort.desc ? 'descending' : 'ascending'}</span>}
                </button>
              );
            })}
          </div>
          <ul class="recent-list" ref={list} aria-label="Conversations" onKeyDown={onListKey}>
            {rows.map((r, i) => {
              const narrow = rowNarrow(s, r);
              const sub = r.kind === 'stream' ? s.subs.get(r.streamId) : undefined;
              const people = r.kind === 'dm' ? [...new Set([...r.senders, ...r.ids])] : r.senders;
              return (
                <li
                  key={r.key}
                  class={`recent-row${r.unread > 0 ? ' unread' : ''}${r.muted ? ' muted' : ''}`}
                  data-key={r.key}
                >
                  <span class="recent-channel">
                    {r.kind === 'stream' ? (
                      <a
                        href={narrowHash(channelNarrow(r.streamId), s.names())}
                        tabIndex={-1}
                        onClick={(e) => {
                          if (e.ctrlKey || e.metaKey || e.shiftKey) return;
                          e.preventDefault();
                          c.go(channelNarrow(r.streamId));
                        }}
                      >
                        <Swatch color={sub?.color ?? '#9aa0ad'} privateChannel={sub?.invite_only} />
                        <span class="recent-name">{s.channelName(r.streamId)}</span>
                      </a>
                    ) : (
                      <span class="recent-dm-mark">
                        <Icon name="dm" />
                        <span class="recent-name">Direct message</span>
                      </span>
                    )}
                  </span>
                  <a
                    class="recent-open"
                    href={narrowHash(narrow, s.names())}
                    tabIndex={i === at ? 0 : -1}
                    onClick={open(r)}
                  >
                    {r.kind === 'stream' ? s.topicName(r.topic) : s.dmName(r.ids)}
                    {r.muted && (
                      <span class="recent-muted-mark">
                        <Icon name="bell-off" label="muted" />
                      </span>
                    )}
                  </a>
                  <span class="recent-unread">
                    <Count
                      n={r.unread}
                      mention={r.mentioned}
                      label={`${r.unread} unread${r.mentioned ? ', mentions you' : ''}`}
                    />
                  </span>
                  <Participants s={s} ids={people} />
                  <span class="recent-time" title={fullTime(r.timestamp)}>
                    {relativeTime(r.timestamp, now, (ts) => dayLabel(ts, now))}
                  </span>
                </li>
              );
            })}
          </ul>
        </>
      )}
      {status === 'failed' ? (
        <p class="recent-more-row" role="alert">
          Could not load the recent messages.{' '}
          <button
            class="btn"
            type="button"
            onClick={() => void c.loadRecent(s.recent.oldestFetched !== null)}
          >
            Try again
          </button>
        </p>
      ) : (
        oldest &&
        !s.recent.foundOldest && (
          <p class="recent-more-row">
            Showing messages since {dayLabel(oldest.timestamp, now)}.{' '}
            <button
              class="btn"
              type="button"
              disabled={status === 'loading'}
              onClick={() => void c.loadRecent(true)}
            >
              Load older
            </button>
          </p>
        )
      )}
    </section>
  );
}
