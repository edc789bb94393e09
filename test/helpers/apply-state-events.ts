/**
 * A client's channels, subscriptions and messages kept current by events, as the API description
 * of each event tells a client to apply it (the reference's "hybrid state" test: register, act,
 * apply the queue's events to the first snapshot, compare with a fresh snapshot). The settings
 * area's events are in ./apply-events.ts.
 *
 * Channels: `streams`, `subscriptions`, `unsubscribed`, `never_subscribed` of a register snapshot
 * (a client without the `archived_channels` capability: archiving is `stream delete`).
 * Messages: the list GET /messages returns, and the snapshot's `unread_msgs`.
 */
import type { Ev } from './events.js';

type Obj = Record<string, unknown>;
type Channel = Obj & { stream_id: number; name: string; subscribers?: number[] };
type State = Obj;

const CHANNEL_LISTS = ['subscriptions', 'unsubscribed', 'never_subscribed'] as const;

function list(state: State, key: string): Channel[] {
  return (state[key] ??= []) as Channel[];
}

function take(state: State, key: string, id: number): Channel | undefined {
  const l = list(state, key);
  const i = l.findIndex((c) => c.stream_id === id);
  return i < 0 ? undefined : l.splice(i, 1)[0];
}

/** Every copy of a channel the client holds (its `streams` entry and its subscription entry). */
function copies(state: State, id: number): Channel[] {
  return ['streams', ...CHANNEL_LISTS].flatMap((k) =>
    list(state, k).filter((c) => c.stream_id === id),
  );
}

/** The stream fields a `stream update` event carries beside `property`/`value`. */
const STREAM_UPDATE_EXTRAS = [
  'rendered_description',
  'history_public_to_subscribers',
  'is_web_public',
];

function setSubscribers(c: Channel, ids: Iterable<number>): void {
  c.subscribers = [...new Set(ids)].sort((a, b) => a - b);
}

/**
 * Applies `stream` and `subscription` events to a register snapshot, in place. With
 * `include_subscribers`, every copy of a channel carries its `subscribers`, kept by peer events
 * and by the client's own subscription changes.
 */
export function applyChannelEvents(
  state: State,
  events: readonly Ev[],
  opts: { includeSubscribers: boolean },
): void {
  const me = state.user_id as number;
  const withSubscribers = opts.includeSubscribers;
  for (const e of events) {
    if (e.type === 'stream') {
      if (e.op === 'create') {
        for (const s of e.streams as Channel[]) {
          if (copies(state, s.stream_id).length > 0) continue;
          const { subscribers, ...stream } = structuredClone(s);
          const peers = withSubscribers ? { subscribers: subscribers ?? [] } : {};
          list(state, 'streams').push({ ...(stream as Channel), ...peers });
          // Known, not subscribed: until a `subscription add` says otherwise.
          list(state, 'never_subscribed').push({ ...(stream as Channel), ...peers });
        }
      } else if (e.op === 'update') {
        for (const c of copies(state, e.stream_id as number)) {
          c[e.property as string] = e.value;
          for (const k of STREAM_UPDATE_EXTRAS) if (k in e) c[k] = e[k];
        }
      } else if (e.op === 'delete') {
        const ids =
          (e.stream_ids as number[] | undefined) ??
          (e.streams as Channel[]).map((s) => s.stream_id);
        for (const id of ids) for (const k of ['streams', ...CHANNEL_LISTS]) take(state, k, id);
      }
    } else if (e.type === 'subscription') {
      if (e.op === 'add') {
        for (const sub of e.subscriptions as Channel[]) {
          take(state, 'unsubscribed', sub.stream_id);
          take(state, 'never_subscribed', sub.stream_id);
          take(state, 'subscriptions', sub.stream_id);
          list(state, 'subscriptions').push(structuredClone(sub));
          for (const c of list(state, 'streams').filter((x) => x.stream_id === sub.stream_id))
            if (sub.subscribers) setSubscribers(c, sub.subscribers);
        }
      } else if (e.op === 'remove') {
        for (const s of e.subscriptions as { stream_id: number }[]) {
          const sub = take(state, 'subscriptions', s.stream_id);
          if (sub) list(state, 'unsubscribed').push(sub);
          for (const c of copies(state, s.stream_id))
            if (c.subscribers)
              setSubscribers(
                c,
                c.subscribers.filter((id) => id !== me),
              );
        }
      } else if (e.op === 'update') {
        const sub = list(state, 'subscriptions').find((c) => c.stream_id === e.stream_id);
        if (!sub) continue;
        if (e.property === 'in_home_view') sub.is_muted = !e.value;
        else sub[e.property as string] = e.value;
        if (e.property === 'is_muted') sub.in_home_view = !e.value;
      } else if (e.op === 'peer_add' || e.op === 'peer_remove') {
        const users = e.user_ids as number[];
        for (const id of e.stream_ids as number[]) {
          for (const c of copies(state, id)) {
            if (c.subscribers === undefined) continue;
            if (e.op === 'peer_add') setSubscribers(c, [...c.subscribers, ...users]);
            else
              setSubscribers(
                c,
                c.subscribers.filter((u) => !users.includes(u)),
              );
          }
          for (const c of list(state, 'streams').filter((x) => x.stream_id === id)) {
            if (typeof c.subscriber_count === 'number')
              c.subscriber_count += (e.op === 'peer_add' ? 1 : -1) * users.length;
          }
        }
      }
    }
  }
}

/** A snapshot's channel lists in a comparable order (clients keep them as maps by id). */
export function channelLists(state: State): Record<string, Channel[]> {
  const out: Record<string, Channel[]> = {};
  for (const k of ['streams', ...CHANNEL_LISTS]) {
    out[k] = [...list(state, k)]
      .map((c) =>
        c.subscribers ? { ...c, subscribers: [...c.subscribers].sort((a, b) => a - b) } : c,
      )
      .sort((a, b) => a.stream_id - b.stream_id);
  }
  return out;
}

export type Message = Obj & {
  id: number;
  flags: string[];
  reactions: Obj[];
  stream_id?: number;
};

/** A channel's name by id, for `display_recipient` after a move (clients keep a channel map). */
export type ChannelNames = (streamId: number) => string;

function setFlag(m: Message, flag: string, on: boolean): void {
  const has = m.flags.includes(flag);
  if (on && !has) m.flags = [...m.flags, flag];
  if (!on && has) m.flags = m.flags.filter((f) => f !== flag);
}

/**
 * Applies message events (`message`, `update_message`, `delete_message`, `reaction`,
 * `update_message_flags`) to the messages a client holds (as GET /messages returns them, with
 * apply_markdown: content is HTML), in place; returns the list, ids ascending.
 */
export function applyMessageEvents(
  messages: Message[],
  events: readonly Ev[],
  channelName: ChannelNames,
): Message[] {
  const byId = new Map(messages.map((m) => [m.id, m]));
  for (const e of events) {
    if (e.type === 'message') {
      const m = structuredClone(e.message as Message);
      m.flags = [...(e.flags as string[])];
      byId.set(m.id, m);
    } else if (e.type === 'update_message') {
      const ids = (e.message_ids as number[] | undefined) ?? [e.message_id as number];
      for (const id of ids) {
        const m = byId.get(id);
        if (!m) continue;
        if (id === e.message_id && e.rendered_content !== undefined) {
          m.content = e.rendered_content;
          if (e.is_me_message !== undefined) m.is_me_message = e.is_me_message;
        }
        if (e.subject !== undefined) m.subject = e.subject;
        if (e.topic_links !== undefined) m.topic_links = e.topic_links;
        if (e.new_stream_id !== undefined) {
          m.stream_id = e.new_stream_id as number;
          m.display_recipient = channelName(e.new_stream_id as number);
        }
        if (e.rendering_only === true) continue;
        const moved = e.subject !== undefined || e.new_stream_id !== undefined;
        const edited = id === e.message_id && e.rendered_content !== undefined;
        if (edited) m.last_edit_timestamp = e.edit_timestamp;
        if (moved) m.last_moved_timestamp = e.edit_timestamp;
      }
    } else if (e.type === 'delete_message') {
      const ids = (e.message_ids as number[] | undefined) ?? [e.message_id as number];
      for (const id of ids) byId.delete(id);
    } else if (e.type === 'reaction') {
      const m = byId.get(e.message_id as number);
      if (!m) continue;
      if (e.op === 'add') {
        m.reactions = [
          ...m.reactions,
          {
            emoji_name: e.emoji_name,
            emoji_code: e.emoji_code,
            reaction_type: e.reaction_type,
            user_id: e.user_id,
          },
        ];
      } else {
        m.reactions = m.reactions.filter(
          (r) =>
            !(
              r.user_id === e.user_id &&
              r.emoji_code === e.emoji_code &&
              r.reaction_type === e.reaction_type
            ),
        );
      }
    } else if (e.type === 'update_message_flags') {
      const on = e.op === 'add';
      const ids = e.all === true ? [...byId.keys()] : (e.messages as number[]);
      for (const id of ids) {
        const m = byId.get(id);
        if (m) setFlag(m, e.flag as string, on);
      }
    }
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

type Unreads = {
  count: number;
  pms: { other_user_id: number; sender_id: number; unread_message_ids: number[] }[];
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
  huddles: { user_ids_string: string; unread_message_ids: number[] }[];
  mentions: number[];
  [k: string]: unknown;
};

/**
 * The snapshot's `unread_msgs` as a client derives it from the messages it holds (after the
 * events): every message without `read`, grouped by conversation, the way the register snapshot
 * groups them. `me` is the client's user id.
 */
export function unreadsOf(messages: readonly Message[], me: number, base: Unreads): Unreads {
  const unread = messages.filter((m) => !m.flags.includes('read'));
  const streams = new Map<string, Unreads['streams'][number]>();
  const pms = new Map<number, Unreads['pms'][number]>();
  const huddles = new Map<string, Unreads['huddles'][number]>();
  for (const m of unread) {
    if (m.type === 'stream') {
      const key = `${m.stream_id}\u0000${m.subject as string}`;
      let s = streams.get(key);
      if (!s) {
        s = { stream_id: m.stream_id!, topic: m.subject as string, unread_message_ids: [] };
        streams.set(key, s);
      }
      s.unread_message_ids.push(m.id);
    } else {
      const ids = (m.display_recipient as { id: number }[]).map((u) => u.id);
      const others = ids.filter((id) => id !== me);
      if (others.length <= 1) {
        const other = others[0] ?? me;
        let p = pms.get(other);
        // sender_id: the deprecated name of other_user_id, still sent.
        if (!p)
          pms.set(other, (p = { other_user_id: other, sender_id: other, unread_message_ids: [] }));
        p.unread_message_ids.push(m.id);
      } else {
        const key = [...ids].sort((a, b) => a - b).join(',');
        let h = huddles.get(key);
        if (!h) huddles.set(key, (h = { user_ids_string: key, unread_message_ids: [] }));
        h.unread_message_ids.push(m.id);
      }
    }
  }
  const mentionFlags = ['mentioned', 'wildcard_mentioned', 'stream_wildcard_mentioned'];
  return {
    ...base,
    count: unread.length,
    pms: [...pms.values()],
    streams: [...streams.values()],
    huddles: [...huddles.values()],
    mentions: unread.filter((m) => m.flags.some((f) => mentionFlags.includes(f))).map((m) => m.id),
  };
}

/** `unread_msgs` in a comparable order (clients keep them as maps). */
export function sortedUnreads(u: Unreads): Unreads {
  const byKey =
    <T>(key: (x: T) => string) =>
    (a: T, b: T) =>
      key(a).localeCompare(key(b));
  return {
    ...u,
    pms: [...u.pms].sort((a, b) => a.other_user_id - b.other_user_id),
    streams: [...u.streams].sort(byKey((s) => `${s.stream_id}\u0000${s.topic}`)),
    huddles: [...u.huddles].sort(byKey((h) => h.user_ids_string)),
    mentions: [...u.mentions].sort((a, b) => a - b),
  };
}
