/**
 * Unread messages as the register snapshot (`unread_msgs`) and `update_message_flags` events
 * (`message_details`) describe them. Reference: lib/message.py get_raw_unread_data,
 * extract_unread_data_from_um_rows, aggregate_unread_data, format_unread_message_details.
 */
import { EMPTY_TOPIC_DISPLAY_NAME } from '../lib/channel-rules.js';
import { MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import type { UnreadRow } from '../storage/messages.js';
import type { ReadStore } from '../storage/store.js';
import { dmGroupMembers } from './messages.js';
import type { RealmView } from './realm-view.js';

/** How many unread messages the register snapshot considers (the newest ones). */
export const MAX_UNREAD_MESSAGES = 50_000;

const VISIBILITY = { MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

/** Whether a channel message counts as muted for the user (muted topic, or muted channel). */
export function mutedForUser(
  store: ReadStore,
  view: RealmView,
  userId: number,
  streamId: number,
  topic: string,
): boolean {
  const policy = store.topics.userTopic(userId, streamId, topic)?.visibility_policy ?? 0;
  const channelMuted = view.channels.subscription(userId, streamId)?.is_muted === 1;
  if (channelMuted) return policy !== VISIBILITY.UNMUTED && policy !== VISIBILITY.FOLLOWED;
  return policy === VISIBILITY.MUTED;
}

type Classified =
  | { kind: 'stream'; id: number; stream_id: number; topic: string; unmuted: boolean }
  | { kind: 'pm'; id: number; other_user_id: number }
  | { kind: 'huddle'; id: number; user_ids_string: string };

type MutedCheck = (streamId: number, topic: string) => boolean;

/** mutedForUser, remembered per (channel, topic) for one pass over many messages. */
function mutedMemo(store: ReadStore, view: RealmView, userId: number): MutedCheck {
  const memo = new Map<string, boolean>();
  return (streamId, topic) => {
    const key = `${streamId}\0${topic.toLowerCase()}`;
    let muted = memo.get(key);
    if (muted === undefined) {
      muted = mutedForUser(store, view, userId, streamId, topic);
      memo.set(key, muted);
    }
    return muted;
  };
}

function classify(store: ReadStore, userId: number, r: UnreadRow, muted: MutedCheck): Classified {
  if (r.stream_id !== null) {
    return {
      kind: 'stream',
      id: r.message_id,
      stream_id: r.stream_id,
      topic: r.topic,
      unmuted: !muted(r.stream_id, r.topic),
    };
  }
  const members = dmGroupMembers(store, r.dm_group_id!);
  if (members.length <= 2) {
    const other = members.find((id) => id !== userId) ?? userId;
    return { kind: 'pm', id: r.message_id, other_user_id: other };
  }
  return { kind: 'huddle', id: r.message_id, user_ids_string: members.join(',') };
}

function isMention(flags: number, c: Classified): boolean {
  if (flags & MESSAGE_FLAG_BITS.mentioned) return true;
  const wildcard =
    flags &
    (MESSAGE_FLAG_BITS.stream_wildcard_mentioned | MESSAGE_FLAG_BITS.topic_wildcard_mentioned);
  return wildcard !== 0 && (c.kind !== 'stream' || c.unmuted);
}

export type UnreadMsgs = {
  count: number;
  pms: { other_user_id: number; sender_id: number; unread_message_ids: number[] }[];
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
  huddles: { user_ids_string: string; unread_message_ids: number[] }[];
  mentions: number[];
  old_unreads_missing: boolean;
};

/** The register's `unread_msgs` for a user: their newest MAX_UNREAD_MESSAGES unread messages. */
export function unreadMsgs(
  store: ReadStore,
  view: RealmView,
  userId: number,
  opts: { allowEmptyTopicName: boolean; limit?: number },
): UnreadMsgs {
  const limit = opts.limit ?? MAX_UNREAD_MESSAGES;
  const rows = store.messages.unread(userId, limit);
  const pms = new Map<number, number[]>();
  const streams = new Map<string, { stream_id: number; topic: string; ids: number[] }>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  const muted = mutedMemo(store, view, userId);
  for (const r of rows) {
    const c = classify(store, userId, r, muted);
    if (c.kind === 'stream') {
      const topic =
        c.topic === '' && !opts.allowEmptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : c.topic;
      const key = `${c.stream_id}\0${topic.toLowerCase()}`;
      let s = streams.get(key);
      if (!s) streams.set(key, (s = { stream_id: c.stream_id, topic, ids: [] }));
      s.ids.push(c.id);
      if (c.unmuted) count++;
    } else if (c.kind === 'pm') {
      let list = pms.get(c.other_user_id);
      if (!list) pms.set(c.other_user_id, (list = []));
      list.push(c.id);
      count++;
    } else {
      let list = huddles.get(c.user_ids_string);
      if (!list) huddles.set(c.user_ids_string, (list = []));
      list.push(c.id);
      count++;
    }
    if (isMention(r.flags, c)) mentions.push(c.id);
  }
  return {
    count,
    pms: [...pms.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.entries()]
      .sort((a, b) => {
        const [sa, ta] = splitKey(a[0]);
        const [sb, tb] = splitKey(b[0]);
        return sa - sb || (ta < tb ? -1 : ta > tb ? 1 : 0);
      })
      .map(([, s]) => ({ stream_id: s.stream_id, topic: s.topic, unread_message_ids: s.ids })),
    huddles: [...huddles.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: rows.length === limit,
  };
}

function splitKey(key: string): [number, string] {
  const i = key.indexOf('\0');
  return [Number(key.slice(0, i)), key.slice(i + 1)];
}

export type MessageDetails = {
  type: 'stream' | 'private';
  mentioned?: true;
  user_ids?: number[];
  stream_id?: number;
  topic?: string;
  unmuted_stream_msg?: boolean;
};

/**
 * What clients need to put messages marked unread back into their unread state
 * (`update_message_flags` op `remove` flag `read`): per message id.
 */
export function unreadMessageDetails(
  store: ReadStore,
  view: RealmView,
  userId: number,
  ids: readonly number[],
): Record<string, MessageDetails> {
  const out: Record<string, MessageDetails> = {};
  const muted = mutedMemo(store, view, userId);
  for (const r of store.messages.unreadDetailsOf(userId, ids)) {
    const c = classify(store, userId, r, muted);
    let d: MessageDetails;
    if (c.kind === 'stream') {
      d = { type: 'stream', stream_id: c.stream_id, topic: c.topic, unmuted_stream_msg: c.unmuted };
    } else if (c.kind === 'pm') {
      d = { type: 'private', user_ids: c.other_user_id === userId ? [] : [c.other_user_id] };
    } else {
      d = {
        type: 'private',
        user_ids: c.user_ids_string
          .split(',')
          .map(Number)
          .filter((id) => id !== userId),
      };
    }
    if (isMention(r.flags, c)) d.mentioned = true;
    out[String(r.message_id)] = d;
  }
  return out;
}
