/**
 * Events that follow changes of who may know a channel. Every change that can grant or take away
 * metadata access (subscribing to a private channel, a privacy change, a group membership change)
 * computes the audience before and after and calls `announceAccessChange`: those who gain access
 * get `stream create` (and the subscribers they may now see), those who lose it get
 * `stream delete`; nothing about the channel reaches anyone else.
 */
import type { Channel } from '../queries/channels-view.js';
import { formatChannel } from '../queries/channels.js';
import type { MutationContext } from './context.js';

export function difference(a: readonly number[], b: readonly number[]): number[] {
  const sb = new Set(b);
  return a.filter((x) => !sb.has(x));
}

export function intersection(a: readonly number[], b: readonly number[]): number[] {
  const sb = new Set(b);
  return a.filter((x) => sb.has(x));
}

export function streamDeleteEvent(channelIds: number[], forArchiving = false) {
  return {
    type: 'stream',
    op: 'delete',
    streams: channelIds.map((id) => ({ stream_id: id })),
    stream_ids: channelIds,
    ...(forArchiving ? { for_archiving: true } : {}),
  };
}

/**
 * `ch` is the channel as it will be after the mutation; `subscribersAfter` its subscribers then.
 * `exceptPeerAdd` are users who learn the subscriber list another way (their subscription event).
 */
export function announceAccessChange(
  ctx: MutationContext,
  ch: Channel,
  before: readonly number[],
  after: readonly number[],
  subscribersAfter: readonly number[],
  opts: {
    exceptPeerAdd?: ReadonlySet<number>;
    /** Queue the `peer_add` and `stream delete` events here instead of emitting them now. */
    defer?: (() => void)[];
  } = {},
): { gained: number[]; lost: number[]; kept: number[] } {
  const later = (fn: () => void) => (opts.defer ? opts.defer.push(fn) : fn());
  // Most changes leave the audience as it was: skip the set arithmetic then.
  const same = before.length === after.length && before.every((u, i) => u === after[i]);
  const gained = same ? [] : difference(after, before);
  const lost = same ? [] : difference(before, after);
  const kept = same ? [...after] : intersection(after, before);
  if (gained.length > 0) {
    ctx.emit(
      { type: 'stream', op: 'create', streams: [formatChannel(ctx.realm, ch, ctx.now)] },
      gained,
    );
    const peers = gained.filter((u) => !opts.exceptPeerAdd?.has(u));
    if (subscribersAfter.length > 0 && peers.length > 0) {
      const userIds = [...subscribersAfter];
      later(() =>
        ctx.emit(
          { type: 'subscription', op: 'peer_add', stream_ids: [ch.id], user_ids: userIds },
          peers,
        ),
      );
    }
  }
  if (lost.length > 0) later(() => ctx.emit(streamDeleteEvent([ch.id]), lost));
  return { gained, lost, kept };
}

/** A `stream update` event for one property, to the users who may know the channel. */
export function streamUpdateEvent(
  ch: { id: number; name: string },
  property: string,
  value: unknown,
  extra: Record<string, unknown> = {},
) {
  return {
    type: 'stream',
    op: 'update',
    stream_id: ch.id,
    name: ch.name,
    property,
    value,
    ...extra,
  };
}
