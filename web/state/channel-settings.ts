/**
 * Creating a channel and its settings, without the DOM: the privacy choices and the parameters
 * they are sent as, the new channel's checks, what the user may change in a channel (as the
 * server decides it: src/lib/channel-permissions.ts, after the reference's lib/streams.py), and
 * the channels' members, fetched when their settings open (register is asked without
 * subscribers) and kept live by the `subscription` events (`peer_add`, `peer_remove`, the user's
 * own `add` and `remove`) and `stream delete`.
 */
import { signal } from '@preact/signals-core';
import type { Channel, ServerEvent, User } from '../../src/client/types.js';
import type { GroupSetting } from './groups.js';
import { NAME_ORDER, personMatcher, type Person } from './presence.js';

/** Who may read a channel: the reference's "Who can access the channel" choices. */
export type Privacy = 'public' | 'private-shared' | 'private-protected' | 'web-public';

/** The choices a new channel offers (web-public needs settings this app does not expose). */
export const PRIVACY_CHOICES: readonly { value: Privacy; label: string; help: string }[] = [
  {
    value: 'public',
    label: 'Public',
    help: 'Members of the organization can join; they see all of its messages.',
  },
  {
    value: 'private-shared',
    label: 'Private, shared history',
    help: 'Only people subscribed can see it; new subscribers see its whole history.',
  },
  {
    value: 'private-protected',
    label: 'Private, protected history',
    help: 'Only people subscribed can see it; they see messages sent after they joined.',
  },
];

/** The privacy of a channel, from its fields. */
export function privacyOf(
  ch: Pick<Channel, 'invite_only' | 'is_web_public' | 'history_public_to_subscribers'>,
): Privacy {
  if (ch.is_web_public) return 'web-public';
  if (!ch.invite_only) return 'public';
  return ch.history_public_to_subscribers === false ? 'private-protected' : 'private-shared';
}

export function privacyLabel(p: Privacy): string {
  if (p === 'web-public') return 'Web-public';
  return PRIVACY_CHOICES.find((c) => c.value === p)!.label;
}

/** The API's parameters for a privacy (`invite_only`, `history_public_to_subscribers`). */
export function privacyParams(p: Privacy): {
  invite_only: boolean;
  history_public_to_subscribers: boolean;
} {
  return {
    invite_only: p === 'private-shared' || p === 'private-protected',
    history_public_to_subscribers: p !== 'private-protected',
  };
}

/**
 * What a change of a channel's privacy does, for its confirmation (null: no change). Making it
 * private drops those not subscribed; public opens it and its whole history to the organization;
 * the history's visibility concerns those who join later.
 */
export function privacyChangeText(from: Privacy, to: Privacy): string | null {
  if (from === to) return null;
  if (to === 'public')
    return 'Everyone in the organization will be able to see it, join it and read all of its messages, earlier ones included.';
  const history =
    to === 'private-protected'
      ? 'People added later will see only the messages sent after they joined.'
      : 'People added later will see all of its messages, earlier ones included.';
  if (from === 'public' || from === 'web-public')
    return `Only its members will see it from then on: others lose access to it and its messages. ${history}`;
  return history;
}

/**
 * The privacy choices offered for an existing channel: those the user may create (the server
 * asks the same to change to one), and the one it has.
 */
export function privacyChoicesFor(current: Privacy, allowed: readonly Privacy[]): Privacy[] {
  return PRIVACY_CHOICES.map((c) => c.value).filter((p) => p === current || allowed.includes(p));
}

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
  return PRIVACY_CHOICES.map((c) => c.value).filter((p) =>
    p === 'public' ? may(realm.publicGroup) : may(realm.privateGroup),
  );
}

export type NewChannel = {
  name: string;
  description: string;
  privacy: Privacy;
  /** The people to subscribe (the user among them unless taken out). */
  members: readonly number[];
};

/** The register's limits (`max_stream_name_length`, `max_stream_description_length`). */
export type ChannelLimits = { maxName: number; maxDescription: number };
export const DEFAULT_LIMITS: ChannelLimits = { maxName: 60, maxDescription: 1024 };

/**
 * What is wrong with the form before it is sent (null: nothing the app can tell; the server
 * has the last word: permissions, a name taken meanwhile).
 */
export function checkNewChannel(
  f: NewChannel,
  taken: (name: string) => boolean,
  limits: ChannelLimits = DEFAULT_LIMITS,
): string | null {
  const name = f.name.trim();
  if (name === '') return 'Choose a name for the new channel.';
  if (name.length > limits.maxName)
    return `The name is too long: at most ${limits.maxName} characters.`;
  if (taken(name)) return 'A channel with this name already exists.';
  if (f.description.length > limits.maxDescription)
    return `The description is too long: at most ${limits.maxDescription} characters.`;
  if (f.members.length === 0) return 'Choose at least one person to subscribe.';
  return null;
}

/** The parameters of `POST /users/me/subscriptions` that create it. */
export function createParams(f: NewChannel): {
  name: string;
  description: string;
  invite_only: boolean;
  history_public_to_subscribers: boolean;
  principals: number[];
} {
  return {
    name: f.name.trim(),
    description: f.description.trim(),
    ...privacyParams(f.privacy),
    principals: [...new Set(f.members)],
  };
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

/**
 * Members sorted for a list: by name (case and accents aside), unknown people last. One collator
 * for all the comparisons: a channel of thousands sorts in milliseconds (localeCompare with
 * options builds one per comparison).
 */
export function sortMembers(
  ids: Iterable<number>,
  users: ReadonlyMap<number, Pick<User, 'full_name'>>,
): number[] {
  const name = (id: number) => users.get(id)?.full_name;
  return [...ids].sort((a, b) => {
    const x = name(a);
    const y = name(b);
    if (x === undefined || y === undefined) return x === y ? a - b : x === undefined ? 1 : -1;
    return NAME_ORDER.compare(x, y) || a - b;
  });
}

/**
 * The members a channel's settings list: those matching the filter (as the people list's: words
 * beginning the name's, or the start of the e-mail address), in `sorted`'s order. Drawn a page
 * at a time (users.ts's pageOf), as the reference's subscriber list: a channel of thousands stays
 * quick to open.
 */
export function membersMatching(
  sorted: readonly number[],
  users: ReadonlyMap<number, Person>,
  filter: string,
): readonly number[] {
  if (filter.trim() === '') return sorted;
  const matches = personMatcher(filter);
  return sorted.filter((id) => {
    const u = users.get(id);
    return u !== undefined && matches(u);
  });
}

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
