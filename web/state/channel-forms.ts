/**
 * The channel dialogs' forms, without the DOM (channel-dialogs.tsx; loaded with the dialogs, not
 * with the first screen): the privacy choices and the parameters they are sent as, what a change
 * of privacy does, the new channel's checks, and the members list's order and filter. What the
 * chat state needs of channels' settings (permissions, members) is in channel-settings.ts.
 */
import type { Channel, User } from '../../src/client/types.js';
import type { Privacy } from './channel-settings.js';
import { NAME_ORDER, personMatcher, type Person } from './presence.js';

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
