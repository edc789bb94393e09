/**
 * Unread bookkeeping, as the reference's web app keeps it: every unread message id with where it
 * is (a channel's topic, or a direct-message conversation) and whether it mentions the user,
 * started from register's `unread_msgs` and kept live by `message`, `update_message_flags`
 * (`read` added or removed, or everything read), `update_message` (moves) and `delete_message`.
 * Counts are derived from that on demand: per topic, per channel, per conversation, mentions and
 * the total. Muting is applied by the caller (unreadTotals takes the muted predicates).
 */
import type { Message, UnreadMsgs } from '../../src/client/types.js';
import { hidesMutedTopics, messageDmIds, sameTopic, type Narrow } from './narrow.js';

export type UnreadWhere =
  { kind: 'stream'; streamId: number; topic: string } | { kind: 'dm'; key: string };

/**
 * How a message mentions the user: `direct` names them (or a group of theirs: the `mentioned`
 * flag) and counts even in a muted channel or topic; `wildcard` (@all, @topic) counts only
 * where nothing is muted (the reference's unread.update_message_for_mention).
 */
export type Mention = 'none' | 'wildcard' | 'direct';

/** `key`: the topic's key (topicKey) or the conversation's, made once (counts run often). */
type Entry = { where: UnreadWhere; key: string; mention: Mention };

function entry(where: UnreadWhere, mention: Mention): Entry {
  return {
    where,
    key: where.kind === 'stream' ? topicKey(where.streamId, where.topic) : where.key,
    mention,
  };
}

const MENTION_FLAGS = new Set([
  'mentioned',
  'stream_wildcard_mentioned',
  'topic_wildcard_mentioned',
  'wildcard_mentioned',
]);

export function isMention(flags: readonly string[]): boolean {
  return flags.some((f) => MENTION_FLAGS.has(f));
}

export function mentionOf(flags: readonly string[]): Mention {
  if (flags.includes('mentioned')) return 'direct';
  return isMention(flags) ? 'wildcard' : 'none';
}

export class Unread {
  private readonly entries = new Map<number, Entry>();
  /** Whether register said it left out older unreads (over its 50,000 limit). */
  oldUnreadsMissing = false;

  constructor(private readonly selfId: number) {}

  static fromRegister(selfId: number, u: UnreadMsgs | undefined): Unread {
    const unread = new Unread(selfId);
    if (!u) return unread;
    // Register's `mentions` leaves out wildcard mentions in muted conversations (the reference's
    // get_raw_unread_data): what it lists counts wherever it is, as a direct mention.
    const mentions = new Set(u.mentions);
    for (const s of u.streams) {
      for (const id of s.unread_message_ids) {
        unread.entries.set(
          id,
          entry(
            { kind: 'stream', streamId: s.stream_id, topic: s.topic },
            mentions.has(id) ? 'direct' : 'none',
          ),
        );
      }
    }
    for (const p of u.pms) {
      const key = String(p.other_user_id);
      for (const id of p.unread_message_ids) {
        unread.entries.set(id, entry({ kind: 'dm', key }, mentions.has(id) ? 'direct' : 'none'));
      }
    }
    for (const h of u.huddles) {
      const ids = h.user_ids_string.split(',').map(Number);
      const others = ids.filter((id) => id !== selfId).sort((a, b) => a - b);
      const key = (others.length ? others : [selfId]).join(',');
      for (const id of h.unread_message_ids) {
        unread.entries.set(id, entry({ kind: 'dm', key }, mentions.has(id) ? 'direct' : 'none'));
      }
    }
    unread.oldUnreadsMissing = u.old_unreads_missing;
    return unread;
  }

  get size(): number {
    return this.entries.size;
  }

  has(id: number): boolean {
    return this.entries.has(id);
  }

  where(id: number): UnreadWhere | undefined {
    return this.entries.get(id)?.where;
  }

  /** A message arrived (or was fetched) with its flags: unread unless flagged read. */
  addMessage(m: Message, flags: readonly string[]): boolean {
    if (flags.includes('read')) return this.entries.delete(m.id);
    const where: UnreadWhere =
      m.type === 'stream'
        ? { kind: 'stream', streamId: m.stream_id!, topic: m.subject }
        : { kind: 'dm', key: messageDmIds(m, this.selfId).join(',') };
    this.entries.set(m.id, entry(where, mentionOf(flags)));
    return true;
  }

  /** Marked read (returns the ids that were unread). */
  markRead(ids: readonly number[]): number[] {
    return ids.filter((id) => this.entries.delete(id));
  }

  markAllRead(): void {
    this.entries.clear();
  }

  /**
   * Marked unread again, with where each message is (the event's `message_details`, whose
   * `mentioned` the reference takes as a direct mention).
   */
  markUnread(id: number, where: UnreadWhere, mentioned: boolean): void {
    this.entries.set(id, entry(where, mentioned ? 'direct' : 'none'));
  }

  remove(ids: readonly number[]): void {
    for (const id of ids) this.entries.delete(id);
  }

  /** Messages moved to another channel and/or topic. */
  move(ids: readonly number[], streamId: number | undefined, topic: string | undefined): void {
    for (const id of ids) {
      const e = this.entries.get(id);
      if (!e || e.where.kind !== 'stream') continue;
      const moved = entry(
        { kind: 'stream', streamId: streamId ?? e.where.streamId, topic: topic ?? e.where.topic },
        e.mention,
      );
      e.where = moved.where;
      e.key = moved.key;
    }
  }

  /** The mention flags changed on an edit (a mention added or removed): the message's flags. */
  setMentioned(id: number, flags: readonly string[]): void {
    const e = this.entries.get(id);
    if (e) e.mention = mentionOf(flags);
  }

  /**
   * Each conversation's unread messages and whether one mentions the user, by the Recent
   * conversations view's keys (recent.ts conversationKey: a topic's key, or `dm:<ids>`).
   */
  byConversation(): Map<string, { count: number; mentioned: boolean }> {
    return new Map(this.conversations().map((c) => [c.key, c]));
  }

  /**
   * Each conversation with unread messages (the Inbox view, inbox.ts): where it is (a topic as
   * its newest unread message names it), how many, whether one mentions the user, and the
   * newest unread id. Keyed as byConversation.
   */
  conversations(): UnreadConversation[] {
    const out = new Map<string, UnreadConversation>();
    for (const [id, e] of this.entries) {
      const key = e.where.kind === 'stream' ? e.key : `dm:${e.key}`;
      const mentioned = e.mention !== 'none';
      const c = out.get(key);
      if (!c) out.set(key, { key, where: e.where, count: 1, mentioned, lastId: id });
      else {
        c.count++;
        if (mentioned) c.mentioned = true;
        if (id > c.lastId) {
          c.lastId = id;
          c.where = e.where;
        }
      }
    }
    return [...out.values()];
  }

  /** Unread ids matching a predicate, ascending. */
  ids(pred: (where: UnreadWhere, mentioned: boolean) => boolean = () => true): number[] {
    const out: number[] = [];
    for (const [id, e] of this.entries) if (pred(e.where, e.mention !== 'none')) out.push(id);
    return out.sort((a, b) => a - b);
  }

  /**
   * Every count the sidebar and the title show, in one pass. `mutedTopic` says whether a topic
   * is muted (a muted channel's topic unless unmuted or followed); muted topics count in their
   * channel's `muted` figure but not in the total, as the reference shows them, and their
   * mentions in `mentions` only when they name the user (Mention). `subscribed` says whether the
   * user is in a channel (and it is not archived): the unread messages of the others are kept
   * (one may join again) but counted nowhere but in `mentions`, as the reference's counts leave
   * them out (the mentions view lists them); every channel, when not given.
   */
  counts(opts: {
    mutedTopic: (streamId: number, topic: string, key: string) => boolean;
    subscribed?: (streamId: number) => boolean;
  }): UnreadCounts {
    const c: UnreadCounts = {
      total: 0,
      dmTotal: 0,
      mentions: 0,
      streams: new Map(),
      topics: new Map(),
      dms: new Map(),
      mutedMentions: new Set(),
    };
    const subscribedMemo = new Map<number, boolean>();
    for (const [id, e] of this.entries) {
      const w = e.where;
      if (w.kind === 'dm') {
        c.dms.set(w.key, (c.dms.get(w.key) ?? 0) + 1);
        c.dmTotal++;
        c.total++;
        if (e.mention !== 'none') c.mentions++;
        continue;
      }
      // Whether the channel is subscribed is asked once per channel, not once per message.
      let isIn = subscribedMemo.get(w.streamId);
      if (isIn === undefined) {
        isIn = opts.subscribed?.(w.streamId) ?? true;
        subscribedMemo.set(w.streamId, isIn);
      }
      if (!isIn) {
        if (
          e.mention === 'direct' ||
          (e.mention === 'wildcard' && !opts.mutedTopic(w.streamId, w.topic, e.key))
        )
          c.mentions++;
        continue;
      }
      // Whether the topic is muted is asked once per topic, not once per message.
      let t = c.topics.get(e.key);
      if (t) {
        t.count++;
        if (id > t.latest) t.latest = id;
      } else {
        t = { streamId: w.streamId, topic: w.topic, count: 1, muted: false, latest: id };
        t.muted = opts.mutedTopic(w.streamId, w.topic, e.key);
        c.topics.set(e.key, t);
      }
      const muted = t.muted;
      let s = c.streams.get(w.streamId);
      if (!s) c.streams.set(w.streamId, (s = { unmuted: 0, muted: 0 }));
      if (muted) s.muted++;
      else s.unmuted++;
      if (!muted) c.total++;
      if (e.mention === 'direct' || (e.mention === 'wildcard' && !muted)) c.mentions++;
      if (muted && e.mention === 'direct') c.mutedMentions.add(w.streamId);
    }
    return c;
  }
}

/** One conversation's unread messages (Unread.conversations). */
export type UnreadConversation = {
  key: string;
  where: UnreadWhere;
  count: number;
  mentioned: boolean;
  lastId: number;
};

export type UnreadCounts = {
  total: number;
  dmTotal: number;
  mentions: number;
  streams: Map<number, { unmuted: number; muted: number }>;
  /** Each topic's count, whether it is muted, and its newest unread message's id. */
  topics: Map<
    string,
    { streamId: number; topic: string; count: number; muted: boolean; latest: number }
  >;
  dms: Map<string, number>;
  /** The channels with an unread message that names the user in a muted topic. */
  mutedMentions: Set<number>;
};

export function topicKey(streamId: number, topic: string): string {
  return `${streamId}\u0000${topic.toLowerCase()}`;
}

/**
 * Which unread messages belong to a narrow, for the narrows the bookkeeping can tell (all
 * messages, unread, a channel, a topic, direct messages, one conversation, mentions, and these
 * together); null for the others (a search, starred, a negated term: only a fetch tells). The
 * message list counts with it the unread messages past what it has fetched ("N new messages
 * below"). All messages (and `in:home`) leave out muted topics, as the feed does (`mutedTopic`:
 * ChatState.mutedTopic); a channel's view, the topics muted as such, as it does
 * (`topicMutedItself`: ChatState.topicMutedItself; narrow.hidesMutedTopics).
 */
export function unreadIn(
  n: Narrow,
  mutedTopic: (streamId: number, topic: string) => boolean,
  topicMutedItself: (streamId: number, topic: string) => boolean = () => false,
): ((where: UnreadWhere, mentioned: boolean) => boolean) | null {
  const tests: ((where: UnreadWhere, mentioned: boolean) => boolean)[] = [];
  const home = (w: UnreadWhere) => w.kind === 'dm' || !mutedTopic(w.streamId, w.topic);
  if (n.terms.length === 0) tests.push(home);
  if (hidesMutedTopics(n))
    tests.push((w) => w.kind === 'stream' && !topicMutedItself(w.streamId, w.topic));
  for (const t of n.terms) {
    if (t.negated) return null;
    const operand = t.operand;
    if (t.operator === 'channel' || t.operator === 'stream') {
      const id = Number(operand);
      tests.push((w) => w.kind === 'stream' && w.streamId === id);
    } else if (t.operator === 'topic') {
      tests.push((w) => w.kind === 'stream' && sameTopic(w.topic, operand));
    } else if (t.operator === 'dm') {
      tests.push((w) => w.kind === 'dm' && w.key === operand);
    } else if (t.operator === 'is' && operand === 'dm') {
      tests.push((w) => w.kind === 'dm');
    } else if (t.operator === 'is' && operand === 'mentioned') {
      tests.push((_w, mentioned) => mentioned);
    } else if (t.operator === 'in' && operand === 'home') {
      tests.push(home);
    } else if (!(t.operator === 'is' && operand === 'unread')) {
      return null;
    }
  }
  return (w, mentioned) => tests.every((f) => f(w, mentioned));
}

/**
 * Where `n` goes from `at` (the channel and topic being read, or the conversation), as the
 * reference's next-unread-topic: the next topic with unread messages in the sidebar's order
 * (`channels`: the subscribed channels, in that order; in each, the topics newest first, by
 * `latest`, the id of a topic's newest message where known, else of its newest unread one), then
 * the conversations;
 * after the last, round again from the first. Muted topics are passed over: those muted as such,
 * and in a muted channel every topic but those the user unmuted or follows — except while the
 * user reads a muted topic of a muted channel, when `n` goes on through that channel's topics
 * not muted as such (one reads a muted channel with `n` that way). The topic or conversation
 * being read is never the answer; null when nothing else is unread.
 */
export function nextUnread(
  counts: UnreadCounts,
  opts: {
    channels: readonly number[];
    channelMuted: (streamId: number) => boolean;
    mutedTopic: (streamId: number, topic: string) => boolean;
    topicMutedItself: (streamId: number, topic: string) => boolean;
    latest?: (streamId: number, topic: string) => number | undefined;
    at: { streamId: number; topic: string | undefined } | { dm: string } | null;
  },
): UnreadWhere | null {
  const rank = new Map(opts.channels.map((id, i) => [id, i]));
  const at = opts.at;
  const here = at && 'streamId' in at ? at : null;
  const reading =
    here?.topic !== undefined &&
    opts.channelMuted(here.streamId) &&
    opts.mutedTopic(here.streamId, here.topic)
      ? here.streamId
      : null;
  const topics = [...counts.topics.values()]
    .filter(
      (t) =>
        rank.has(t.streamId) &&
        (!t.muted || (t.streamId === reading && !opts.topicMutedItself(t.streamId, t.topic))) &&
        !(
          here?.topic !== undefined &&
          t.streamId === here.streamId &&
          sameTopic(t.topic, here.topic)
        ),
    )
    .map((t) => ({ ...t, newest: opts.latest?.(t.streamId, t.topic) ?? t.latest }))
    .sort(
      (a, b) =>
        rank.get(a.streamId)! - rank.get(b.streamId)! ||
        b.newest - a.newest ||
        a.topic.localeCompare(b.topic),
    );
  const dms = [...counts.dms.keys()].filter((key) => !(at && 'dm' in at && at.dm === key));
  const list: UnreadWhere[] = [
    ...topics.map((t): UnreadWhere => ({ kind: 'stream', streamId: t.streamId, topic: t.topic })),
    ...dms.map((key): UnreadWhere => ({ kind: 'dm', key })),
  ];
  if (!list.length) return null;
  let start = 0;
  const r = here ? rank.get(here.streamId) : undefined;
  if (here && r !== undefined) {
    // The first topic past the one being read (past none, in a channel's own view, or when where
    // the topic read stands is not known).
    const topic = here.topic;
    const newest =
      topic === undefined
        ? undefined
        : (opts.latest?.(here.streamId, topic) ??
          counts.topics.get(topicKey(here.streamId, topic))?.latest);
    const past = topics.findIndex((t) => {
      const tr = rank.get(t.streamId)!;
      if (tr !== r) return tr > r;
      if (topic === undefined || newest === undefined) return true;
      return t.newest < newest || (t.newest === newest && t.topic.localeCompare(topic) > 0);
    });
    start = past === -1 ? topics.length : past;
  } else if (at && 'dm' in at) {
    const i = [...counts.dms.keys()].indexOf(at.dm);
    // The conversation after this one (it is left out of dms, so at the same index).
    if (i !== -1) start = topics.length + i;
  }
  return list[start % list.length]!;
}
