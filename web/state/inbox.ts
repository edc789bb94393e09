/**
 * The Inbox view's data, as the reference's web app builds it (inbox_ui): every conversation
 * with unread messages, from the unread bookkeeping alone (register's `unread_msgs` and the
 * events after; no fetch). Direct-message conversations first (one group, newest first), then
 * the channels (pinned first, muted ones after the others, then by name), each a group of its
 * topics (newest unread first) with its total. Which topics show (unmuted ones by default, all,
 * or followed ones) and words typed in the filter box narrow the rows; the user's collapsed
 * groups hide their rows but not their headers. Framework-free: no DOM, no fetch.
 */
import type { ChatState } from './chat.js';
import { TOPIC } from './muting.js';
import { NAME_ORDER } from './presence.js';
import { channelNarrow, conversationIds, dmNarrow, topicNarrow, type Narrow } from './narrow.js';
import { hasWords, type RowComposeTo } from './recent.js';
import type { UnreadConversation } from './unread.js';

/** Which topics the view shows, as the reference's filter (and the Recent view's). */
export type InboxTopics = 'unmuted' | 'all' | 'followed';

export type InboxDm = {
  key: string;
  /** The other participants (sorted; [self] for one's own conversation). */
  ids: number[];
  label: string;
  /**
   * Whom the row marks (their presence, or a bot's icon): the other person, or oneself in one's
   * own conversation; null for a group, which shows the group's icon (as the reference's rows:
   * a person's presence circle, a bot, or a group).
   */
  person: number | null;
  count: number;
  mentioned: boolean;
  lastId: number;
};

export type InboxTopic = {
  key: string;
  streamId: number;
  topic: string;
  count: number;
  mentioned: boolean;
  lastId: number;
  /** Muted (itself, or by its channel), shown under "All topics" only. */
  muted: boolean;
};

export type InboxChannel = {
  streamId: number;
  name: string;
  pinned: boolean;
  muted: boolean;
  /** The unread messages of the topics shown. */
  count: number;
  mentioned: boolean;
  topics: InboxTopic[];
};

export type Inbox = { dms: InboxDm[]; channels: InboxChannel[] };

/** What the grouping needs beyond the unread conversations (ChatState's lookups). */
export type InboxContext = {
  selfId: number;
  /** The user's subscription to a channel (not archived), or undefined: not shown. */
  channel: (streamId: number) => { name: string; pinned: boolean; muted: boolean } | undefined;
  /** Whether a topic is muted for the user (itself, or its channel and not unmuted). */
  mutedTopic: (streamId: number, topic: string) => boolean;
  followed: (streamId: number, topic: string) => boolean;
  userMuted: (id: number) => boolean;
  /** A direct-message conversation's name (its people). */
  dmName: (ids: readonly number[]) => string;
};

/** The groups and rows of the view, filtered (`text`: words typed in its filter box). */
export function inboxData(
  convs: readonly UnreadConversation[],
  ctx: InboxContext,
  topics: InboxTopics = 'unmuted',
  text = '',
): Inbox {
  const dms: InboxDm[] = [];
  const channels = new Map<number, InboxChannel>();
  for (const c of convs) {
    if (c.count <= 0) continue;
    if (c.where.kind === 'dm') {
      const ids = c.where.key.split(',').map(Number);
      // A conversation only with people the user muted is not shown (as the Recent view).
      if (ids.every((id) => id !== ctx.selfId && ctx.userMuted(id))) continue;
      const label = ctx.dmName(ids);
      if (text && !hasWords(label, text)) continue;
      dms.push({
        key: c.key,
        ids,
        label,
        person: ids.length === 1 ? ids[0]! : null,
        count: c.count,
        mentioned: c.mentioned,
        lastId: c.lastId,
      });
      continue;
    }
    const { streamId, topic } = c.where;
    const sub = ctx.channel(streamId);
    if (!sub) continue;
    const muted = ctx.mutedTopic(streamId, topic);
    if (topics === 'unmuted' && muted) continue;
    if (topics === 'followed' && !ctx.followed(streamId, topic)) continue;
    if (text && !hasWords(`${sub.name} ${topic}`, text)) continue;
    let ch = channels.get(streamId);
    if (!ch) {
      ch = { streamId, ...sub, count: 0, mentioned: false, topics: [] };
      channels.set(streamId, ch);
    }
    ch.count += c.count;
    if (c.mentioned) ch.mentioned = true;
    ch.topics.push({
      key: c.key,
      streamId,
      topic,
      count: c.count,
      mentioned: c.mentioned,
      lastId: c.lastId,
      muted,
    });
  }
  dms.sort((a, b) => b.lastId - a.lastId);
  const list = [...channels.values()];
  for (const ch of list) ch.topics.sort((a, b) => b.lastId - a.lastId);
  list.sort(
    (a, b) =>
      Number(b.pinned) - Number(a.pinned) ||
      Number(a.muted) - Number(b.muted) ||
      NAME_ORDER.compare(a.name, b.name),
  );
  return { dms, channels: list };
}

/** The context of a ChatState: its subscriptions (archived ones aside), muting, names. */
export function inboxContext(s: ChatState): InboxContext {
  return {
    selfId: s.selfId,
    channel: (id) => {
      const sub = s.subs.get(id);
      if (!sub || sub.is_archived) return undefined;
      return { name: sub.name, pinned: !!sub.pin_to_top, muted: s.channelMuted(id) };
    },
    mutedTopic: (id, topic) => s.mutedTopic(id, topic),
    followed: (id, topic) => s.topicPolicy(id, topic) === TOPIC.FOLLOWED,
    userMuted: (id) => s.mutedUsers.has(id),
    dmName: (ids) => s.dmName(ids),
  };
}

/** The key a group's collapsed state is kept under: `dm`, or `channel:<id>`. */
export function groupKey(streamId?: number): string {
  return streamId === undefined ? 'dm' : `channel:${streamId}`;
}

/** One row the keys move between: a group's header, or a conversation. */
export type InboxRow =
  | { kind: 'dm-header'; key: string }
  | { kind: 'dm'; key: string; dm: InboxDm }
  | { kind: 'channel'; key: string; channel: InboxChannel }
  | { kind: 'topic'; key: string; topic: InboxTopic };

/** The rows shown, top to bottom: each group's header, its rows unless collapsed. */
export function inboxRows(inbox: Inbox, collapsed: ReadonlySet<string>): InboxRow[] {
  const rows: InboxRow[] = [];
  if (inbox.dms.length > 0) {
    rows.push({ kind: 'dm-header', key: groupKey() });
    if (!collapsed.has(groupKey()))
      for (const dm of inbox.dms) rows.push({ kind: 'dm', key: dm.key, dm });
  }
  for (const ch of inbox.channels) {
    const g = groupKey(ch.streamId);
    rows.push({ kind: 'channel', key: g, channel: ch });
    if (!collapsed.has(g))
      for (const t of ch.topics) rows.push({ kind: 'topic', key: t.key, topic: t });
  }
  return rows;
}

/** Collapsed groups read back from storage (anything else dropped). */
export function parseCollapsed(raw: unknown): Set<string> {
  if (!Array.isArray(raw)) return new Set();
  return new Set(
    raw.filter((k): k is string => typeof k === 'string' && /^(dm|channel:\d+)$/.test(k)),
  );
}

/** The topics filter read back from storage (the default, unmuted topics, otherwise). */
export function parseTopics(raw: unknown): InboxTopics {
  return raw === 'all' || raw === 'followed' ? raw : 'unmuted';
}

/** The sidebar's three views (ViewEntry order). */
export type ViewEntry = 'inbox' | 'recent' | 'all';

/**
 * The sidebar's views in order, as the reference's (left_sidebar_navigation_area): the home
 * view (`web_home_view`: the Inbox, Recent conversations, or All messages) first, then the
 * others as Inbox, Recent conversations, All messages. Only the first, the home view, shows
 * the unread count: every unread message but those in muted topics and channels
 * (UnreadCounts.total, the reference's `home_unread_messages`).
 */
export function viewEntries(home: unknown): ViewEntry[] {
  const first: ViewEntry = home === 'inbox' ? 'inbox' : home === 'recent_topics' ? 'recent' : 'all';
  return [first, ...(['inbox', 'recent', 'all'] as const).filter((v) => v !== first)];
}

/**
 * The closed compose box's button for the row focused in the Inbox, as the reference's (inbox_ui
 * update_closed_compose_text): its words name the conversation the compose box would open on,
 * "Message #channel > topic" for a topic, "Message <names>" for direct messages ("Message
 * yourself" for one's own), and a header's are the standard "Compose message"; `narrow` and
 * `to` are where the button opens the compose box (a channel's header: a new topic there; the
 * direct messages' header: the people to choose, over All messages, `narrow` null).
 */
export type RowTarget = { label: string; narrow: Narrow | null; to: RowComposeTo };

export function inboxRowTarget(
  r: InboxRow,
  s: Pick<ChatState, 'selfId' | 'channelName' | 'topicName'>,
): RowTarget {
  switch (r.kind) {
    case 'dm-header':
      return { label: 'Compose message', narrow: null, to: { kind: 'dm', userIds: [] } };
    case 'channel':
      return {
        label: 'Compose message',
        narrow: channelNarrow(r.channel.streamId),
        to: { kind: 'stream', streamId: r.channel.streamId, topic: '' },
      };
    case 'topic': {
      const { streamId, topic } = r.topic;
      return {
        label: `Message #${s.channelName(streamId)} > ${s.topicName(topic)}`,
        narrow: topicNarrow(streamId, topic),
        to: { kind: 'stream', streamId, topic },
      };
    }
    case 'dm': {
      // The others, or [self] for one's own conversation.
      const userIds = conversationIds(r.dm.ids, s.selfId);
      return {
        label: userIds[0] === s.selfId ? 'Message yourself' : `Message ${r.dm.label}`,
        narrow: dmNarrow(r.dm.ids, s.selfId),
        to: { kind: 'dm', userIds },
      };
    }
  }
}
