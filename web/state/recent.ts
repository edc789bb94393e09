/**
 * The Recent conversations view's data, as the reference's web app keeps it (recent_view_data):
 * one entry per conversation (a channel's topic, or a direct-message conversation) from every
 * message the app has seen (the view's own fetch of the newest messages, the other views'
 * fetches, and `message` events), with its newest message, who took part (newest sender first)
 * and whether the user did. Deletions and moves change the entries of the messages they name
 * (each message's place is kept by its id). The rows (recentRows) are built from it with the
 * unread bookkeeping, the user's muting and the view's filters, newest activity first.
 * Framework-free: no DOM, no fetch.
 */
import { signal } from '@preact/signals-core';
import type { Message } from '../../src/client/types.js';
import { conversationIds, dmNarrow, messageDmIds, topicNarrow, type Narrow } from './narrow.js';
import { topicKey } from './unread.js';

/** What the view keeps of one message: where it is, who sent it, when. */
type Seen = { key: string; senderId: number; timestamp: number };

export type Conversation =
  | {
      kind: 'stream';
      key: string;
      streamId: number;
      topic: string;
      lastId: number;
      timestamp: number;
      /** The senders, the one of the newest message first. */
      senders: number[];
      participated: boolean;
    }
  | {
      kind: 'dm';
      key: string;
      /** The other participants (sorted; [self] for one's own conversation). */
      ids: number[];
      lastId: number;
      timestamp: number;
      senders: number[];
      participated: boolean;
    };

type Place = { kind: 'stream'; streamId: number; topic: string } | { kind: 'dm'; ids: number[] };

/** A conversation's key: a topic's as the unread bookkeeping has it (topicKey), or `dm:<ids>`. */
export function conversationKey(p: Place): string {
  return p.kind === 'stream' ? topicKey(p.streamId, p.topic) : `dm:${p.ids.join(',')}`;
}

export class RecentConversations {
  /** Bumped on every change of the conversations. */
  readonly rev = signal(0);
  private readonly seen = new Map<number, Seen>();
  /** Each conversation's place and messages (id → sender, timestamp). */
  private readonly convs = new Map<string, { place: Place; msgs: Map<number, Seen> }>();
  private cache: { rev: number; list: Conversation[] } | null = null;
  /**
   * Messages deleted: a fetch answered after their deletion (its copy older than the event) does
   * not bring them back.
   */
  private readonly deleted = new Set<number>();
  /** The oldest message the view's own fetches reached, and whether they reached the first. */
  oldestFetched: { id: number; timestamp: number } | null = null;
  foundOldest = false;

  constructor(private readonly selfId: number) {}

  get size(): number {
    return this.convs.size;
  }

  /** Messages seen (fetched, or arrived): each joins its conversation. */
  add(messages: readonly Message[]): void {
    let changed = false;
    for (const m of messages) {
      if (!Number.isInteger(m.id) || this.seen.has(m.id) || this.deleted.has(m.id)) continue;
      const place: Place =
        m.type === 'stream'
          ? { kind: 'stream', streamId: m.stream_id!, topic: m.subject }
          : { kind: 'dm', ids: messageDmIds(m, this.selfId) };
      this.put(m.id, place, m.sender_id, m.timestamp);
      changed = true;
    }
    if (changed) this.rev.value++;
  }

  /** The view's own fetch of older messages reached this far (`found`: the first message). */
  fetched(messages: readonly Message[], found: boolean): void {
    for (const m of messages) {
      if (this.oldestFetched === null || m.id < this.oldestFetched.id)
        this.oldestFetched = { id: m.id, timestamp: m.timestamp };
    }
    if (found) this.foundOldest = true;
    this.add(messages);
    this.rev.value++;
  }

  private put(id: number, place: Place, senderId: number, timestamp: number): void {
    const key = conversationKey(place);
    let c = this.convs.get(key);
    if (!c) this.convs.set(key, (c = { place, msgs: new Map() }));
    const s = { key, senderId, timestamp };
    c.msgs.set(id, s);
    this.seen.set(id, s);
  }

  private drop(id: number): Seen | undefined {
    const s = this.seen.get(id);
    if (!s) return undefined;
    this.seen.delete(id);
    const c = this.convs.get(s.key);
    if (c) {
      c.msgs.delete(id);
      if (c.msgs.size === 0) this.convs.delete(s.key);
    }
    return s;
  }

  /** Messages deleted: a conversation left with none goes. */
  remove(ids: readonly number[]): void {
    let changed = false;
    for (const id of ids) {
      this.deleted.add(id);
      if (this.drop(id)) changed = true;
    }
    if (changed) this.rev.value++;
  }

  /** Messages moved to another channel and/or topic (those of direct messages never move). */
  move(ids: readonly number[], streamId: number | undefined, topic: string | undefined): void {
    let changed = false;
    for (const id of ids) {
      const s = this.seen.get(id);
      const from = s && this.convs.get(s.key)?.place;
      if (!s || !from || from.kind !== 'stream') continue;
      this.drop(id);
      this.put(
        id,
        { kind: 'stream', streamId: streamId ?? from.streamId, topic: topic ?? from.topic },
        s.senderId,
        s.timestamp,
      );
      changed = true;
    }
    if (changed) this.rev.value++;
  }

  /** Every conversation, newest activity first (computed once per change). */
  list(): Conversation[] {
    const rev = this.rev.peek();
    if (this.cache?.rev === rev) return this.cache.list;
    const list: Conversation[] = [];
    for (const [key, c] of this.convs) {
      const ids = [...c.msgs.keys()].sort((a, b) => b - a);
      const senders: number[] = [];
      for (const id of ids) {
        const who = c.msgs.get(id)!.senderId;
        if (!senders.includes(who)) senders.push(who);
      }
      const lastId = ids[0]!;
      const base = {
        key,
        lastId,
        timestamp: c.msgs.get(lastId)!.timestamp,
        senders,
        participated: senders.includes(this.selfId),
      };
      list.push(
        c.place.kind === 'stream'
          ? { kind: 'stream', streamId: c.place.streamId, topic: c.place.topic, ...base }
          : { kind: 'dm', ids: c.place.ids, ...base },
      );
    }
    list.sort((a, b) => b.lastId - a.lastId);
    this.cache = { rev, list };
    return list;
  }
}

/** The view's filters, as the reference's: toggles, the topics shown, and the words typed. */
export type RecentFilters = {
  /** Direct-message conversations shown ("Include DMs"). */
  dms: boolean;
  /** Only conversations with unread messages. */
  unread: boolean;
  /** Only conversations the user sent a message to. */
  participated: boolean;
  /** Which topics: all (muted too), unmuted ones (the default), or only followed ones. */
  topics: 'all' | 'unmuted' | 'followed';
  /** Words a channel's name and topic (or a conversation's people) must hold. */
  text: string;
};

export const DEFAULT_FILTERS: RecentFilters = {
  dms: true,
  unread: false,
  participated: false,
  topics: 'unmuted',
  text: '',
};

/** Filters read back from storage (anything unknown falls back to the default). */
export function parseFilters(raw: unknown): RecentFilters {
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const bool = (k: 'dms' | 'unread' | 'participated') => {
    const v = o[k];
    return typeof v === 'boolean' ? v : DEFAULT_FILTERS[k];
  };
  const topics = o.topics;
  return {
    dms: bool('dms'),
    unread: bool('unread'),
    participated: bool('participated'),
    topics: topics === 'all' || topics === 'followed' ? topics : 'unmuted',
    text: '',
  };
}

/** What the rows need beyond the conversations (ChatState's lookups). */
export type RowContext = {
  selfId: number;
  /** Whether the user is subscribed to the channel (and it is not archived). */
  subscribed: (streamId: number) => boolean;
  channelName: (streamId: number) => string;
  /** Whether the topic is muted for the user (itself, or its channel and not unmuted). */
  mutedTopic: (streamId: number, topic: string) => boolean;
  followed: (streamId: number, topic: string) => boolean;
  userName: (id: number) => string;
  userMuted: (id: number) => boolean;
  /** The unread messages of a conversation by its key (conversationKey), and mentions among them. */
  unread: (key: string) => { count: number; mentioned: boolean } | undefined;
};

export type RecentRow = Conversation & {
  unread: number;
  mentioned: boolean;
  muted: boolean;
  /** What the row is called: `channel > topic`, or the people. */
  label: string;
};

/** Whether every word of `text` is in `hay` (both without case): the views' filter boxes. */
export function hasWords(hay: string, text: string): boolean {
  const h = hay.toLowerCase();
  return text
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => h.includes(w));
}

/**
 * The view's rows: the conversations the user can see (a channel they are in; a direct-message
 * conversation not only with people they muted) that pass the filters, newest activity first.
 */
export function recentRows(
  convs: readonly Conversation[],
  ctx: RowContext,
  f: RecentFilters,
): RecentRow[] {
  const rows: RecentRow[] = [];
  for (const c of convs) {
    const u = ctx.unread(c.key);
    const unread = u?.count ?? 0;
    if (f.unread && unread === 0) continue;
    if (f.participated && !c.participated) continue;
    let muted = false;
    let label: string;
    if (c.kind === 'stream') {
      if (!ctx.subscribed(c.streamId)) continue;
      muted = ctx.mutedTopic(c.streamId, c.topic);
      if (f.topics === 'unmuted' && muted) continue;
      if (f.topics === 'followed' && !ctx.followed(c.streamId, c.topic)) continue;
      const channel = ctx.channelName(c.streamId);
      if (f.text && !hasWords(`${channel} ${c.topic}`, f.text)) continue;
      label = `${channel} > ${c.topic}`;
    } else {
      if (!f.dms) continue;
      if (c.ids.every((id) => id !== ctx.selfId && ctx.userMuted(id))) continue;
      const names = c.ids.map((id) => ctx.userName(id)).join(', ');
      if (f.text && !hasWords(names, f.text)) continue;
      label = names;
    }
    rows.push({ ...c, unread, mentioned: u?.mentioned ?? false, muted, label });
  }
  return rows;
}

/** The participants a row shows: up to `max` (newest sender first), and how many more. */
export function shownParticipants(
  senders: readonly number[],
  max: number,
): { shown: number[]; more: number } {
  return { shown: senders.slice(0, max), more: Math.max(0, senders.length - max) };
}

/** "just now", "5 min ago", "3 h ago", "Yesterday", or a day, as a row's time. */
export function relativeTime(ts: number, nowMs: number, day: (ts: number) => string): string {
  const s = Math.max(0, Math.floor(nowMs / 1000) - ts);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return day(ts);
}

/** Messages the view asks for at first, and for each "Load older". */
export const RECENT_BATCH = 400;

/**
 * The columns the rows sort by, as the reference's table: Channel, Topic, Unread and Time (the
 * default, newest first); not Participants.
 */
export type RecentSortBy = 'channel' | 'topic' | 'unread' | 'time';
export type RecentSort = { by: RecentSortBy; desc: boolean };
export const DEFAULT_SORT: RecentSort = { by: 'time', desc: true };

/** A column's header chosen: the same column turns its order round; another sorts up. */
export function nextSort(cur: RecentSort, by: RecentSortBy): RecentSort {
  return cur.by === by ? { by, desc: !cur.desc } : { by, desc: false };
}

const BY_NAME = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });

/**
 * The rows in a column's order, as the reference's: by channel name (direct-message
 * conversations, by their people, before the channels), by topic (a conversation's people for
 * its topic), by the unread count (then the newest), or by the newest message. Rows that tie keep
 * their order (newest first). `channelName`: ChatState.channelName.
 */
export function sortRows(
  rows: readonly RecentRow[],
  sort: RecentSort,
  channelName: (streamId: number) => string,
): RecentRow[] {
  const dir = sort.desc ? -1 : 1;
  const name = (r: RecentRow, col: 'channel' | 'topic'): string =>
    r.kind === 'dm' ? r.label : col === 'channel' ? channelName(r.streamId) : r.topic;
  const cmp = (a: RecentRow, b: RecentRow): number => {
    switch (sort.by) {
      case 'time':
        return a.lastId - b.lastId;
      case 'unread':
        return a.unread - b.unread || a.lastId - b.lastId;
      case 'channel':
        if (a.kind !== b.kind) return a.kind === 'dm' ? -1 : 1;
        return BY_NAME.compare(name(a, 'channel'), name(b, 'channel'));
      case 'topic':
        return BY_NAME.compare(name(a, 'topic'), name(b, 'topic'));
    }
  };
  return [...rows].sort((a, b) => dir * cmp(a, b));
}

/** Where the compose box is addressed (the controller's ComposeTo). */
export type RowComposeTo =
  { kind: 'stream'; streamId: number | null; topic: string } | { kind: 'dm'; userIds: number[] };

/**
 * `r` on a row, as the reference's: a reply to the row's conversation, which opens with the
 * compose box addressed (the reference opens its compose box under the table; this view has
 * none). `c` is the compose key of the whole view (shell.tsx, narrow.ts composeKeyChannel): no
 * row addresses it.
 */
export function rowCompose(r: RecentRow, selfId: number): { narrow: Narrow; to: RowComposeTo } {
  if (r.kind === 'stream')
    return {
      narrow: topicNarrow(r.streamId, r.topic),
      to: { kind: 'stream', streamId: r.streamId, topic: r.topic },
    };
  // One's own conversation is addressed to oneself (conversationIds), as the Inbox's.
  return {
    narrow: dmNarrow(r.ids, selfId),
    to: { kind: 'dm', userIds: conversationIds(r.ids, selfId) },
  };
}
