/**
 * Channels' settings, without the DOM: what the user may create and change in a channel (as the
 * server decides it: src/lib/channel-permissions.ts, after the reference's lib/streams.py), and
 * the channels' members, fetched when their settings open (register is asked without
 * subscribers) and kept live by the `subscription` events (`peer_add`, `peer_remove`, the user's
 * own `add` and `remove`) and `stream delete`.
 */
import { signal } from '@preact/signals-core';
import type { Channel, ServerEvent } from '../../src/client/types.js';
import type { GroupSetting } from './groups.js';

/** Who may read a channel: the reference's "Who can access the channel" choices. */
export type Privacy = 'public' | 'private-shared' | 'private-protected' | 'web-public';

/** The privacies a channel can be created with (channel-forms.ts, PRIVACY_CHOICES, in order). */
export const CREATABLE: readonly Privacy[] = ['public', 'private-shared', 'private-protected'];

/**
 * The privacy choices the user may create (the realm's `can_create_public_channel_group` and
 * `can_create_private_channel_group`; one the register did not give is not held against them:
 * the server decides).
 */
export function creatableChoices(
  inGroup: (setting: GroupSetting | undefined) => boolean,
  realm: {
    publicGroup: GroupSetting | undefined;
    privateGroup: GroupSetting | undefined;
  },
): Privacy[] {
  const may = (g: GroupSetting | undefined) => g === undefined || inGroup(g);
  return CREATABLE.filter((p) =>
    p === 'public' ? may(realm.publicGroup) : may(realm.privateGroup),
  );
}

/** What the server's rules need to know of the user and the channel. */
export type PermissionFacts = {
  admin: boolean;
  guest: boolean;
  subscribed: boolean;
  /** Whether the user is in a group setting (through subgroups). */
  inGroup: (setting: GroupSetting | undefined) => boolean;
  /** The realm's `can_add_subscribers_group`. */
  realmAddSubscribers: GroupSetting | undefined;
};

export type ChannelPermissions = {
  /** The description and the name (`PATCH /streams/{id}`). */
  administer: boolean;
  /** Subscribing others. */
  addMembers: boolean;
  /** Unsubscribing others (oneself: always, as Leave). */
  removeMembers: boolean;
};

/**
 * What the user may change in a channel, as the server decides (src/lib/channel-permissions.ts):
 * administering is for the organization's administrators and the channel's
 * `can_administer_channel_group`; subscribing others needs access to its content (subscribed,
 * or a public channel) and the realm's or the channel's permission; unsubscribing others is for
 * administrators, the channel's administrators and its `can_remove_subscribers_group`. Guests
 * count in none of the channel's groups but the last.
 */
export function channelPermissions(
  ch: Pick<
    Channel,
    | 'invite_only'
    | 'is_web_public'
    | 'can_add_subscribers_group'
    | 'can_remove_subscribers_group'
    | 'can_administer_channel_group'
    | 'can_subscribe_group'
  >,
  f: PermissionFacts,
): ChannelPermissions {
  const inChannel = (g: GroupSetting | undefined) => !f.guest && f.inGroup(g);
  const administer = f.admin || inChannel(ch.can_administer_channel_group);
  const content =
    ch.is_web_public === true ||
    f.subscribed ||
    (!f.guest &&
      (!ch.invite_only ||
        inChannel(ch.can_subscribe_group) ||
        inChannel(ch.can_add_subscribers_group)));
  const addMembers =
    !f.guest &&
    content &&
    (f.admin ||
      f.inGroup(f.realmAddSubscribers) ||
      administer ||
      inChannel(ch.can_add_subscribers_group));
  const removeMembers =
    f.admin || (!f.guest && administer) || f.inGroup(ch.can_remove_subscribers_group);
  return { administer, addMembers, removeMembers };
}

/**
 * Whether the user may post in a channel, as the server decides before taking a message or a
 * typing notification (src/lib/channel-permissions.ts sendMessageDecision; the reference's
 * stream_data.can_post_messages_in_stream): the channel not archived, the user in its
 * `can_send_message_group` (unknown: not refused here, the server answers), and with access to
 * it: subscribed, a web-public channel, a public one for members, or a private one with shared
 * history that they may join or add others to.
 */
export function canPostIn(
  ch: Pick<
    Channel,
    | 'invite_only'
    | 'is_web_public'
    | 'is_archived'
    | 'history_public_to_subscribers'
    | 'can_send_message_group'
    | 'can_subscribe_group'
    | 'can_add_subscribers_group'
  >,
  f: Pick<PermissionFacts, 'guest' | 'subscribed' | 'inGroup'>,
): boolean {
  if (ch.is_archived === true) return false;
  if (ch.can_send_message_group !== undefined && !f.inGroup(ch.can_send_message_group))
    return false;
  if (f.subscribed || ch.is_web_public === true) return true;
  if (f.guest) return false;
  if (!ch.invite_only) return true;
  return (
    ch.history_public_to_subscribers === true &&
    (f.inGroup(ch.can_subscribe_group) || f.inGroup(ch.can_add_subscribers_group))
  );
}

/** What the compose box says when the user may not post in the channel (the server's words). */
export const NO_POST_PERMISSION = 'You do not have permission to post in this channel.';

type SubscriptionEvent = Extract<ServerEvent, { type: 'subscription' }>;
type StreamEvent = Extract<ServerEvent, { type: 'stream' }>;

/**
 * The members of the channels whose settings were opened: fetched once, then kept by the
 * events. The events that arrive while a fetch is on its way are kept and applied again to its
 * answer, in order: whether the answer was taken before or after them, what it ends with is
 * what the last of them said.
 */
export class ChannelMembers {
  private readonly known = new Map<number, Set<number>>();
  private readonly asking = new Map<number, SubscriptionEvent[]>();
  /** Bumped on every change of a known channel's members (or of what is known). */
  readonly rev = signal(0);

  constructor(private readonly selfId: number) {}

  /** The members (undefined: not fetched yet). */
  get(streamId: number): ReadonlySet<number> | undefined {
    return this.known.get(streamId);
  }

  /** Whether a fetch should start (none known, none on its way): it then counts as started. */
  shouldFetch(streamId: number): boolean {
    if (this.known.has(streamId) || this.asking.has(streamId)) return false;
    this.asking.set(streamId, []);
    return true;
  }

  /** The fetch's answer, with the events that came meanwhile applied to it. */
  fetched(streamId: number, ids: readonly number[]): void {
    const meanwhile = this.asking.get(streamId);
    if (!meanwhile) return; // forgotten meanwhile (the channel went)
    this.asking.delete(streamId);
    this.known.set(streamId, new Set(ids));
    for (const e of meanwhile) this.applyTo(streamId, e);
    this.rev.value++;
  }

  /** The fetch failed: the next opening asks again. */
  failed(streamId: number): void {
    this.asking.delete(streamId);
  }

  forget(streamId: number): void {
    const had = this.known.delete(streamId);
    this.asking.delete(streamId);
    if (had) this.rev.value++;
  }

  apply(e: SubscriptionEvent | StreamEvent): void {
    if (e.type === 'stream') {
      if (e.op === 'delete') for (const ch of e.streams) this.forget(ch.stream_id);
      return;
    }
    const ids =
      e.op === 'peer_add' || e.op === 'peer_remove'
        ? e.stream_ids
        : e.op === 'add' || e.op === 'remove'
          ? e.subscriptions.map((s) => s.stream_id)
          : [];
    let changed = false;
    for (const id of ids) {
      this.asking.get(id)?.push(e);
      if (this.known.has(id)) changed = this.applyTo(id, e) || changed;
    }
    if (changed) this.rev.value++;
  }

  private applyTo(streamId: number, e: SubscriptionEvent): boolean {
    const set = this.known.get(streamId);
    if (!set) return false;
    const before = set.size;
    if (e.op === 'peer_add') for (const u of e.user_ids) set.add(u);
    else if (e.op === 'peer_remove') for (const u of e.user_ids) set.delete(u);
    else if (e.op === 'add') set.add(this.selfId);
    else if (e.op === 'remove') set.delete(this.selfId);
    return set.size !== before;
  }
}
