/**
 * The sidebar: the views (all messages, mentions, direct messages, starred), the subscribed
 * channels with their colour and unread counts (muted ones dimmed), the open channel's topics
 * with counts, the direct-message conversations (a person's with their presence circle), and, on
 * screens too narrow for the people column (people.tsx), the people. Counts come from the unread bookkeeping
 * (register's `unread_msgs`, kept live by events), the starred messages' from register's
 * `starred_messages` (kept by the star's events). On narrow screens it is a drawer.
 */
import { Component } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Subscription } from '../../src/client/types.js';
import { TOPIC, type ChatState } from '../state/chat.js';
import {
  ALL,
  channelNarrow,
  channelOf,
  dmNarrow,
  isNarrow,
  narrowHash,
  narrowKey,
  sameTopic,
  topicNarrow,
  topicOf,
  type Narrow,
} from '../state/narrow.js';
import { viewEntries } from '../state/inbox.js';
import { listedDms, listedName } from '../state/muted-users.js';
import type { UnreadCounts } from '../state/unread.js';
import { topicKey } from '../state/unread.js';
import { Avatar, Count, Swatch } from './bits.js';
import { channelMenuItems } from './channel-menu.js';
import type { Controller } from './controller.js';
import { Icon, type IconName } from './icons.js';
import { EmojiGlyph } from './emoji-glyph.js';
import { setFocusSuccessor } from './focus-successor.js';
import { Menu } from './menu.js';
import {
  PEOPLE_COLUMN_QUERY,
  PeopleSection,
  StatusWords,
  useMedia,
  usePeopleListed,
} from './people.js';
import { PageEntries } from './page-entries.js';
import { DmMark, dmStatus, InboxEntry } from './inbox.js';
import { RecentEntry } from './recent-entry.js';
import { isDark } from './theme.js';
import { topicMenuItems } from './topic-policy.js';
import { track } from './track.js';

const TOPICS_SHOWN = 8;
const DMS_SHOWN = 8;

function NavLink({
  c,
  narrow,
  current,
  children,
  class: cls,
}: {
  c: Controller;
  narrow: Narrow;
  current: boolean;
  children: preact.ComponentChildren;
  class?: string;
}) {
  const s = c.state.value!;
  return (
    <a
      class={`nav-item ${cls ?? ''}`}
      href={narrowHash(narrow, s.names())}
      aria-current={current && !c.page.value ? 'page' : undefined}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey) return;
        e.preventDefault();
        c.go(narrow);
      }}
    >
      {children}
    </a>
  );
}

const MARK_READ = 'Mark all messages as read';

function View({
  c,
  narrow,
  icon,
  label,
  count,
  mention,
  menu,
}: {
  c: Controller;
  narrow: Narrow;
  icon: IconName;
  label: string;
  count: number;
  mention?: boolean;
  menu?: { label: string; run: () => void }[];
}) {
  const current = narrowKey(c.narrow.value) === narrowKey(narrow);
  return (
    <li class={menu ? 'nav-row' : undefined}>
      <NavLink c={c} narrow={narrow} current={current}>
        <Icon name={icon} />
        <span class="label">{label}</span>
        <Count n={count} mention={mention} />
      </NavLink>
      {menu && <Menu class="row-menu" label={`Menu for ${label}`} items={menu} />}
    </li>
  );
}

/**
 * The Starred view, with the count of starred messages (in grey: they are not unread), unless the
 * user turned such counts off. Drawn again only when the stars or the settings change.
 */
function Starred({ c, s }: { c: Controller; s: ChatState }) {
  track(s.rev.starred, s.rev.settings);
  const n = s.starredCount();
  const narrow = isNarrow('starred');
  return (
    <li>
      <NavLink c={c} narrow={narrow} current={narrowKey(c.narrow.value) === narrowKey(narrow)}>
        <Icon name="star" />
        <span class="label">Starred</span>
        {n !== null && <Count n={n} muted label={`${n} starred message${n === 1 ? '' : 's'}`} />}
      </NavLink>
    </li>
  );
}

/** The topic row that has the focus (in the channel's list), with its place and column. */
type HeldRow = { name: string; index: number; menu: boolean };

function topicRows(streamId: number): { list: HTMLElement | null; rows: HTMLElement[] } {
  const list = document.querySelector<HTMLElement>(`ul[data-topics-of="${streamId}"]`);
  const rows = [...(list?.querySelectorAll<HTMLElement>(':scope > li[data-topic]') ?? [])];
  return { list, rows };
}

/** The channel's topic row holding `el` (the focus), if any. */
function heldRow(streamId: number, el: Element | null): HeldRow | null {
  const row = el?.closest<HTMLElement>('li[data-topic]');
  if (!row || row.parentElement?.dataset.topicsOf !== String(streamId)) return null;
  return {
    name: row.dataset.topic!,
    index: topicRows(streamId).rows.indexOf(row),
    menu: el!.closest('.row-menu') !== null,
  };
}

/**
 * What takes the focus from a topic row that went (its topic renamed, resolved, moved or deleted,
 * the list fetched again): the row of the topic where it went when this list shows it (found by
 * its new name), else the topic row now at its place (or the last), else the channel's row; in
 * the row, the column it was on (the "⋮" after a menu's action, so that the menu is one key
 * away again). Never nothing: the focus fell to the page's body, the first Tab stop.
 */
function rowAfter(s: ChatState, streamId: number, held: HeldRow): HTMLElement | null {
  const { list, rows } = topicRows(streamId);
  if (!list) return null;
  const named = (name: string) => rows.find((r) => sameTopic(r.dataset.topic!, name));
  const went = s.topicWent(streamId, held.name);
  const row =
    named(held.name) ??
    (went?.streamId === streamId ? named(went.topic) : undefined) ??
    rows[held.index] ??
    rows.at(-1);
  if (!row) return list.parentElement?.querySelector<HTMLElement>(':scope > .nav-row > a') ?? null;
  return (
    (held.menu ? row.querySelector<HTMLElement>('.row-menu-btn') : null) ??
    row.querySelector<HTMLElement>('a')
  );
}

/**
 * A list's "Show all N …" (topics, conversations): whether all show, and the button's click,
 * given the key of the first row it brings. The button goes once they show: the focus it had
 * goes on to that row's link (`rowLink`, by its key), not to the page's body.
 */
function useShowAll(
  rowLink: (key: string) => HTMLElement | null,
): [boolean, (firstNew: string | undefined) => void] {
  const [all, setAll] = useState(false);
  const firstNew = useRef<string | null>(null);
  useLayoutEffect(() => {
    const key = firstNew.current;
    if (key === null || !all) return;
    firstNew.current = null;
    // Only if the focus went with the button (not when it moved elsewhere meanwhile).
    if (document.activeElement && document.activeElement !== document.body) return;
    rowLink(key)?.focus();
  });
  const showAll = (key: string | undefined) => {
    firstNew.current = key ?? null;
    setAll(true);
  };
  return [all, showAll];
}

function Topics({
  c,
  s,
  streamId,
  counts,
}: {
  c: Controller;
  s: ChatState;
  streamId: number;
  counts: UnreadCounts;
}) {
  const [all, showAll] = useShowAll(
    (name) =>
      topicRows(streamId)
        .rows.find((r) => r.dataset.topic === name)
        ?.querySelector<HTMLElement>('a') ?? null,
  );
  // The row with the focus as this drawing starts (the page still shows the last one): if the
  // drawing takes it away (its topic renamed: a row of another key), the focus goes on to what
  // stands for it (rowAfter) rather than to the page's body.
  const held = useRef<HeldRow | null>(null);
  held.current = heldRow(streamId, document.activeElement);
  useLayoutEffect(() => {
    const h = held.current;
    const now = document.activeElement;
    if (!h || (now && now !== document.body)) return;
    rowAfter(s, streamId, h)?.focus({ preventScroll: true });
  });
  // Topics come and go (rev.topics); their policies, muted or followed, change with rev.channels;
  // what their menus offer with the realm's permissions (rev.settings) and the user's role and
  // groups (rev.users).
  track(s.rev.topics, s.rev.channels, s.rev.settings, s.rev.users);
  // Held while fetched again (after a move or a deletion): shown as they are until the answer.
  const topics = s.topics.get(streamId);
  const cur = c.narrow.value;
  const curTopic = channelOf(cur) === streamId ? topicOf(cur) : undefined;
  if (!topics) return <li class="nav-item topic muted">Loading topics…</li>;
  const withCount = topics.map((t) => ({
    ...t,
    unread: counts.topics.get(topicKey(streamId, t.name)),
  }));
  const shown = all
    ? withCount
    : withCount.filter(
        (t, i) =>
          i < TOPICS_SHOWN ||
          (t.unread && !t.unread.muted) ||
          (curTopic !== undefined && t.name.toLowerCase() === curTopic.toLowerCase()),
      );
  return (
    <>
      {shown.map((t, i) => (
        <li
          key={t.name}
          class="nav-row"
          data-topic={t.name}
          // Gone while a dialog it opened was open (Move, Rename): the dialog gives the focus
          // back to what stands for it.
          ref={(el) =>
            setFocusSuccessor(el, (gone) =>
              rowAfter(s, streamId, {
                name: t.name,
                index: i,
                menu: gone.closest('.row-menu') !== null,
              }),
            )
          }
        >
          <NavLink
            c={c}
            narrow={topicNarrow(streamId, t.name)}
            current={curTopic !== undefined && curTopic.toLowerCase() === t.name.toLowerCase()}
            class={`topic ${s.mutedTopic(streamId, t.name) ? 'muted' : ''}`}
          >
            <span class="label">{s.topicName(t.name)}</span>
            {s.topicPolicy(streamId, t.name) === TOPIC.FOLLOWED && (
              <span class="followed-mark" title="Followed">
                <Icon name="bell" label="Followed" />
              </span>
            )}
            <Count n={t.unread?.count ?? 0} muted={t.unread?.muted} />
          </NavLink>
          <Menu
            class="row-menu"
            label={`Menu for topic ${s.topicName(t.name)}`}
            items={topicMenuItems(c, s, streamId, t.name)}
          />
        </li>
      ))}
      {topics.length === 0 && <li class="nav-item topic muted">No topics yet</li>}
      {withCount.length > shown.length && (
        <li>
          <button
            class="nav-item more"
            type="button"
            onClick={() => showAll(withCount.find((t) => !shown.includes(t))?.name)}
          >
            Show all {withCount.length} topics
          </button>
        </li>
      )}
    </>
  );
}

type ChannelItemProps = {
  c: Controller;
  s: ChatState;
  sub: Subscription;
  unmuted: number;
  muted: number;
  /** Whether a muted topic's unread message names the user (UnreadCounts.mutedMentions). */
  mutedMention: boolean;
  current: boolean;
  /** The counts, for the open channel's topics (null for a closed channel). */
  counts: UnreadCounts | null;
};

/**
 * A subscribed channel in the sidebar (with its topics when open). Drawn again only when what it
 * shows changed: a message changes one channel's count, not the other 499 rows.
 */
class ChannelItem extends Component<ChannelItemProps> {
  override shouldComponentUpdate(next: ChannelItemProps): boolean {
    const p = this.props;
    return (
      p.sub !== next.sub ||
      p.s !== next.s ||
      p.unmuted !== next.unmuted ||
      p.muted !== next.muted ||
      p.mutedMention !== next.mutedMention ||
      p.current !== next.current ||
      p.counts !== next.counts
    );
  }

  render() {
    const { c, s, sub, unmuted, muted, mutedMention, current, counts } = this.props;
    return (
      <li>
        <div class="nav-row">
          <NavLink
            c={c}
            narrow={channelNarrow(sub.stream_id)}
            current={current}
            class={sub.is_muted ? 'muted' : ''}
          >
            <Swatch color={sub.color} privateChannel={sub.invite_only} />
            <span class="label">{sub.name}</span>
            {unmuted > 0 ? (
              <Count n={unmuted} />
            ) : (
              // Muted topics' unread in grey: in a muted channel, or when one of them names the
              // user; in a channel not muted, none (the user asked not to see them), as the
              // reference's sidebar.
              (sub.is_muted || mutedMention) && <Count n={muted} muted />
            )}
          </NavLink>
          <Menu class="row-menu" label={`Menu for #${sub.name}`} items={channelMenuItems(c, sub)} />
        </div>
        {counts && (
          <ul class="nav-list" aria-label={`Topics in ${sub.name}`} data-topics-of={sub.stream_id}>
            <Topics c={c} s={s} streamId={sub.stream_id} counts={counts} />
          </ul>
        )}
      </li>
    );
  }
}

export function Sidebar({ c }: { c: Controller }) {
  const s = c.state.value!;
  // settings: the realm's name and who may create channels.
  track(s.rev.unread, s.rev.channels, s.rev.dms, s.rev.users, s.rev.presence, s.rev.settings);
  track(s.rev.muted);
  const [allDms, showAllDms] = useShowAll((key) =>
    document.querySelector<HTMLElement>(`.sidebar li[data-dm="${key}"] > a`),
  );
  const wide = useMedia(PEOPLE_COLUMN_QUERY);
  const listed = usePeopleListed(c);
  const counts = s.unreadCounts();
  const cur = c.narrow.value;
  const curChannel = channelOf(cur);
  const curKey = narrowKey(cur);
  // Not those with muted users only (kept while being viewed), as the reference's list.
  const dms = listedDms(
    [...s.dms.entries()].sort((a, b) => b[1] - a[1]),
    s.mutedUsers,
    (key) => curKey === narrowKey(dmNarrow(key.split(',').map(Number), s.selfId)),
  );
  const dmsShown = allDms
    ? dms
    : dms.filter(([key], i) => i < DMS_SHOWN || (counts.dms.get(key) ?? 0) > 0);

  // Pinned channels first, in a group of their own (as the reference's sidebar).
  const groups = s.channelGroups();
  const item = (sub: Subscription) => {
    const n = counts.streams.get(sub.stream_id);
    const open = curChannel === sub.stream_id;
    return (
      <ChannelItem
        key={sub.stream_id}
        c={c}
        s={s}
        sub={sub}
        unmuted={n?.unmuted ?? 0}
        muted={n?.muted ?? 0}
        mutedMention={counts.mutedMentions.has(sub.stream_id)}
        current={open && curKey === narrowKey(channelNarrow(sub.stream_id))}
        counts={open ? counts : null}
      />
    );
  };

  return (
    <nav class="sidebar" aria-label="Channels and conversations">
      <div class="sidebar-head">
        {s.realm.iconSource === 'U' && s.realm.iconUrl ? (
          <img class="avatar small realm-icon" src={s.realm.iconUrl} alt="" />
        ) : (
          <span class="avatar small" aria-hidden="true" style={{ background: '#4f5bd5' }}>
            {(s.realm.name[0] ?? 'C').toUpperCase()}
          </span>
        )}
        <span class="realm-name">{s.realm.name}</span>
        <button
          class="icon-btn"
          type="button"
          aria-label="Jump to… (Ctrl+K)"
          title="Jump to… (Ctrl+K)"
          onClick={() => (c.dialog.value = { kind: 'jump' })}
        >
          <Icon name="search" />
        </button>
      </div>
      <div class="sidebar-scroll">
        <ul class="nav-list">
          {/* The home view first, with the unread count; the others without (as the
              reference's). */}
          {viewEntries(s.settings.web_home_view).map((v, i) => {
            const count = i === 0 ? counts.total : 0;
            if (v === 'inbox') return <InboxEntry key={v} c={c} count={count} />;
            if (v === 'recent') return <RecentEntry key={v} c={c} count={count} />;
            return (
              <View
                key={v}
                c={c}
                narrow={ALL}
                icon="feed"
                label="All messages"
                count={count}
                menu={[{ label: MARK_READ, run: () => void c.markAllAsRead() }]}
              />
            );
          })}
          <View
            c={c}
            narrow={isNarrow('mentioned')}
            icon="at"
            label="Mentions"
            count={counts.mentions}
            mention
          />
          <View
            c={c}
            narrow={isNarrow('dm')}
            icon="dm"
            label="Direct messages"
            count={counts.dmTotal}
          />
          <Starred c={c} s={s} />
          <PageEntries c={c} />
        </ul>

        <section class="nav-section" aria-labelledby="channels-heading">
          <div class="nav-heading">
            <span id="channels-heading">Channels</span>
            <button
              class="icon-btn"
              type="button"
              aria-label="Browse channels"
              title="Browse channels"
              onClick={() => (c.dialog.value = { kind: 'jump' })}
            >
              <Icon name="hash" />
            </button>
            {s.creatableChannels().length > 0 && (
              <button
                class="icon-btn"
                type="button"
                aria-label="Create channel"
                title="Create channel"
                onClick={() => c.openCreateChannel()}
              >
                <Icon name="plus" />
              </button>
            )}
          </div>
          {groups.pinned.length > 0 && (
            <ul class="nav-list pinned-channels" aria-label="Pinned channels">
              {groups.pinned.map(item)}
            </ul>
          )}
          <ul class="nav-list">
            {groups.others.map(item)}
            {s.subs.size === 0 && <li class="nav-item muted">No channels yet</li>}
          </ul>
        </section>

        <section class="nav-section" aria-labelledby="dms-heading">
          <div class="nav-heading">
            <span id="dms-heading">Direct messages</span>
            <button
              class="icon-btn"
              type="button"
              aria-label="New direct message"
              title="New direct message"
              onClick={() => c.startDirectMessage()}
            >
              <Icon name="plus" />
            </button>
          </div>
          <ul class="nav-list">
            {dmsShown.map(([key]) => {
              const ids = key.split(',').map(Number);
              const narrow = dmNarrow(ids, s.selfId);
              const first = ids[0]!;
              const name = (id: number) => listedName(id, s.mutedUsers, (i) => s.userName(i));
              // As the Inbox's rows and the reference's list: the person's presence circle
              // (one's own in one's own conversation), a bot's icon, a group's icon. A muted
              // user (listed while their conversation is viewed): the circle's place left
              // empty, no presence, as the reference hides it.
              const mutedOne = ids.length === 1 && s.mutedUsers.has(first);
              const mark = mutedOne ? undefined : { person: ids.length === 1 ? first : null };
              return (
                <li key={key} data-dm={key}>
                  <NavLink c={c} narrow={narrow} current={curKey === narrowKey(narrow)}>
                    <DmMark s={s} dm={mark} />
                    <span class="label">
                      {ids.length === 1 && ids[0] === s.selfId
                        ? s.dmName(ids)
                        : ids.map(name).join(', ')}
                    </span>
                    <StatusWords status={dmStatus(s, mark)} />
                    <Count n={counts.dms.get(key) ?? 0} />
                  </NavLink>
                </li>
              );
            })}
            {dms.length === 0 && <li class="nav-item muted">No conversations yet</li>}
            {dms.length > dmsShown.length && (
              <li>
                <button
                  class="nav-item more"
                  type="button"
                  onClick={() => showAllDms(dms.find((d) => !dmsShown.includes(d))?.[0])}
                >
                  Show all {dms.length} conversations
                </button>
              </li>
            )}
          </ul>
        </section>
        {!wide && listed && <PeopleSection c={c} />}
      </div>
      <div class="sidebar-foot">
        <button class="me" type="button" onClick={() => c.openSettings('account')}>
          <Avatar small id={s.selfId} name={s.self.full_name} url={s.self.avatar_url} />
          {/* Named by its text (the name shown, in full): an aria-label hid the visible name
              from speech input ("click Hamlet"; axe's label-content-name-mismatch). */}
          <span class="sr-only">Settings for </span>
          <span>{s.self.full_name}</span>
        </button>
        <StatusButton c={c} />
        <ThemeToggle c={c} />
        <button
          class="icon-btn"
          type="button"
          aria-label="Settings"
          title="Settings"
          onClick={() => c.openSettings('account')}
        >
          <Icon name="gear" />
        </button>
      </div>
    </nav>
  );
}

/** One's status emoji (a smiley without one): opens the dialog to set it (status.tsx). */
function StatusButton({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.status);
  const st = s.statuses.get(s.selfId);
  const label = st.text ? `Status: ${st.text}` : st.emoji ? 'Edit status' : 'Set status';
  return (
    <button
      class="icon-btn status-btn"
      type="button"
      aria-label={label}
      title={label}
      onClick={() => (c.dialog.value = { kind: 'status' })}
    >
      {st.emoji ? (
        <EmojiGlyph
          s={s}
          r={{ emoji_name: st.emoji.name, emoji_code: st.emoji.code, reaction_type: st.emoji.type }}
        />
      ) : (
        <Icon name="smile" />
      )}
    </button>
  );
}

export function ThemeToggle({ c }: { c: Controller }) {
  const s = c.state.value!;
  track(s.rev.settings);
  const scheme = s.settings.color_scheme ?? 1;
  const dark = scheme === 2 || (scheme === 1 && isDark());
  return (
    <button
      class="icon-btn"
      type="button"
      aria-label={dark ? 'Use the light theme' : 'Use the dark theme'}
      title={dark ? 'Light theme' : 'Dark theme'}
      onClick={() => {
        // The theme as it is now, not as last drawn: two clicks before a drawing come back.
        const now = c.state.value?.settings.color_scheme ?? 1;
        void c.setTheme(now === 2 || (now === 1 && isDark()) ? 3 : 2);
      }}
    >
      <Icon name={dark ? 'sun' : 'moon'} />
    </button>
  );
}
