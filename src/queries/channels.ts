/**
 * Channels and subscriptions as the API shows them (GET /streams, GET /users/me/subscriptions,
 * `stream` and `subscription` events, the register snapshot). Reference: lib/streams.py
 * stream_to_dict, lib/subscription_info.py build_stream_dict_for_sub.
 */
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { sharedList, type SharedList } from '../lib/spliced-list.js';
import type { SubscriptionRow } from '../storage/channels.js';
import type { Channel } from './channels-view.js';
import { cacheSlot } from './realm-caches.js';
import type { RealmView } from './realm-view.js';

export type ApiGroupSetting = number | { direct_members: number[]; direct_subgroups: number[] };

/** A stored group-setting value as clients see it: anonymous groups list active members only. */
export function groupSettingForApi(realm: RealmView, value: GroupSettingValue): ApiGroupSetting {
  if (typeof value === 'number') return value;
  return {
    direct_members: value.direct_members
      .filter((id) => realm.user(id)?.is_active)
      .sort((a, b) => a - b),
    direct_subgroups: [...value.direct_subgroups].sort((a, b) => a - b),
  };
}

/** The deprecated stream_post_policy, derived from can_send_message_group. */
export function streamPostPolicy(realm: RealmView, value: GroupSettingValue): number {
  if (typeof value !== 'number') return 1;
  const g = realm.group(value);
  if (!g?.is_system_group) return 1;
  switch (g.name) {
    case 'role:administrators':
      return 2;
    case 'role:fullmembers':
      return 3;
    case 'role:moderators':
      return 4;
    default:
      return 1;
  }
}

export type ApiChannel = Record<string, unknown> & { stream_id: number; name: string };

export function formatChannel(realm: RealmView, ch: Channel, nowSeconds: number): ApiChannel {
  const activity = realm.channels.activity(ch, nowSeconds);
  const g = ch.settings;
  const postPolicy = streamPostPolicy(realm, g.can_send_message_group);
  // One literal with every field (no keys added later): a stable object shape is several times
  // cheaper to build and to serialize than one extended key by key.
  return {
    stream_id: ch.id,
    name: ch.name,
    is_archived: ch.deactivated === 1,
    description: ch.description,
    rendered_description: ch.rendered_description,
    date_created: ch.date_created,
    creator_id: ch.creator_id,
    invite_only: ch.invite_only === 1,
    is_web_public: ch.is_web_public === 1,
    stream_post_policy: postPolicy,
    is_announcement_only: postPolicy === 2,
    message_retention_days: ch.message_retention_days,
    history_public_to_subscribers: ch.history_public_to_subscribers === 1,
    topics_policy: ch.topics_policy,
    first_message_id: activity.first_message_id,
    folder_id: ch.folder_id,
    is_recently_active: activity.is_recently_active,
    stream_weekly_traffic: null,
    can_add_subscribers_group: groupSettingForApi(realm, g.can_add_subscribers_group),
    can_remove_subscribers_group: groupSettingForApi(realm, g.can_remove_subscribers_group),
    can_administer_channel_group: groupSettingForApi(realm, g.can_administer_channel_group),
    can_send_message_group: groupSettingForApi(realm, g.can_send_message_group),
    can_subscribe_group: groupSettingForApi(realm, g.can_subscribe_group),
    can_delete_any_message_group: groupSettingForApi(realm, g.can_delete_any_message_group),
    can_delete_own_message_group: groupSettingForApi(realm, g.can_delete_own_message_group),
  };
}

/** A channel's serialized form and what it was made from (channelJson). */
type ChannelJson = { version: number; first: number | null; recent: boolean; json: string };
const channelJsonCache = new WeakMap<Channel, ChannelJson>();

/**
 * formatChannel as JSON, remembered while the channel's row (a new object on every change), the
 * realm's users and groups (RealmView.version) and the channel's activity stay the same. The
 * register snapshot lists every channel a user may see, twice for most (`streams` and
 * `never_subscribed`): a realm of thousands of channels is then serialized once, not per register.
 */
export function channelJson(realm: RealmView, ch: Channel, nowSeconds: number): string {
  const a = realm.channels.activity(ch, nowSeconds);
  const c = channelJsonCache.get(ch);
  if (
    c !== undefined &&
    c.version === realm.version &&
    c.first === a.first_message_id &&
    c.recent === a.is_recently_active
  ) {
    return c.json;
  }
  const json = JSON.stringify(formatChannel(realm, ch, nowSeconds));
  channelJsonCache.set(ch, {
    version: realm.version,
    first: a.first_message_id,
    recent: a.is_recently_active,
    json,
  });
  return json;
}

/**
 * Whether every active non-guest may know the channel exists, whatever their groups: a public or
 * web-public one (channel-permissions.ts hasMetadataAccess decides so before any group).
 */
export function isOpenToMembers(ch: Channel): boolean {
  return ch.invite_only !== 1 || ch.is_web_public === 1;
}

/**
 * How old, in seconds, the shared list of open channels may get. Its entries' is_recently_active
 * is computed when it is built, so it may lag this long behind a message to a channel silent for
 * 180 days, or the 180 days running out (the reference updates the field in a periodic job).
 */
export const OPEN_CHANNELS_MAX_AGE = 60;

/** The shared list of open channels and what it was made from. */
type OpenChannels = {
  list: SharedList;
  channels: number;
  realm: number;
  firstMessages: number;
  builtAt: number;
};
const OPEN_CHANNELS = cacheSlot<Map<boolean, OpenChannels>>('open channels JSON');

/**
 * The realm's open channels (isOpenToMembers; archived ones with `includeArchived`) as channelJson
 * entries by name: what every member's register `streams` and `never_subscribed` start from. Kept
 * until a channel, a user or a group changes (the versions channelJson compares), a channel's first
 * message id may have changed, or OPEN_CHANNELS_MAX_AGE passes.
 */
export function openChannelsList(
  realm: RealmView,
  includeArchived: boolean,
  nowSeconds: number,
): SharedList {
  let lists = realm.caches.get(OPEN_CHANNELS);
  if (!lists) realm.caches.set(OPEN_CHANNELS, (lists = new Map()));
  const c = lists.get(includeArchived);
  const firstMessages = realm.channels.firstMessageVersion();
  if (
    c &&
    c.channels === realm.channels.version &&
    c.realm === realm.version &&
    c.firstMessages === firstMessages &&
    nowSeconds >= c.builtAt &&
    nowSeconds - c.builtAt < OPEN_CHANNELS_MAX_AGE
  ) {
    return c.list;
  }
  const entries = [];
  for (const ch of realm.channels.all()) {
    if (!isOpenToMembers(ch) || (ch.deactivated && !includeArchived)) continue;
    entries.push({ id: ch.id, key: ch.name, json: channelJson(realm, ch, nowSeconds) });
  }
  let list = sharedList(entries);
  // Often nothing shown changed (a user's change, the age limit): the old Buffer stays, and with it
  // its compressed segments.
  if (c && c.list.buf.equals(list.buf)) list = c.list;
  lists.set(includeArchived, {
    list,
    channels: realm.channels.version,
    realm: realm.version,
    firstMessages,
    builtAt: nowSeconds,
  });
  return list;
}

const nullableBool = (v: number | null) => (v === null ? null : v === 1);

/** A subscription: the channel's fields plus the user's personal settings for it. */
export function formatSubscription(
  realm: RealmView,
  ch: Channel,
  sub: SubscriptionRow,
  nowSeconds: number,
): ApiChannel {
  const out = formatChannel(realm, ch, nowSeconds);
  out.color = sub.color;
  out.is_muted = sub.is_muted === 1;
  out.in_home_view = sub.is_muted !== 1;
  out.pin_to_top = sub.pin_to_top === 1;
  out.desktop_notifications = nullableBool(sub.desktop_notifications);
  out.audible_notifications = nullableBool(sub.audible_notifications);
  out.push_notifications = nullableBool(sub.push_notifications);
  out.email_notifications = nullableBool(sub.email_notifications);
  out.wildcard_mentions_notify = nullableBool(sub.wildcard_mentions_notify);
  return out;
}

/** The subscriber list a viewer may see for a channel (empty when they may not know it). */
export function visibleSubscribers(realm: RealmView, viewerId: number, ch: Channel): number[] {
  return realm.channels.may(viewerId, ch, 'metadata') ? realm.channels.subscriberIds(ch.id) : [];
}

/** Sorted by name, as the reference lists channels. */
export function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export type SubscriptionLists = {
  subscriptions: ApiChannel[];
  unsubscribed: ApiChannel[];
  never_subscribed: ApiChannel[];
  /** With `neverSubscribedJson`: never_subscribed as JSON (and never_subscribed left empty). */
  neverSubscribedJson?: string;
};

/**
 * A user's subscribed, previously subscribed (still visible to them) and never subscribed
 * (visible) channels. Archived channels only when `includeArchived`.
 */
export function gatherSubscriptions(
  realm: RealmView,
  userId: number,
  opts: {
    includeSubscribers: boolean;
    includeArchived: boolean;
    nowSeconds: number;
    /** Only the subscribed list (GET /users/me/subscriptions); the others stay empty. */
    subscribedOnly?: boolean;
    /** never_subscribed left empty: the caller makes it (the register, from a shared list). */
    withoutNeverSubscribed?: boolean;
    /** never_subscribed as JSON text (channelJson), without subscribers (the register snapshot). */
    neverSubscribedJson?: boolean;
  },
): SubscriptionLists {
  const view = realm.channels;
  const mine = view.subscriptionsOf(userId);
  const out: SubscriptionLists = { subscriptions: [], unsubscribed: [], never_subscribed: [] };
  const asJson = opts.neverSubscribedJson === true && !opts.includeSubscribers;
  const never: Channel[] = [];
  const withSubscribers = (o: ApiChannel, ch: Channel) => {
    if (opts.includeSubscribers) o.subscribers = visibleSubscribers(realm, userId, ch);
    return o;
  };
  // Without never_subscribed, only the channels the user has a row for matter.
  const withRows = opts.subscribedOnly === true || opts.withoutNeverSubscribed === true;
  const channels = withRows
    ? [...mine.keys()].map((id) => view.byId(id)).filter((ch) => ch !== undefined)
    : view.all();
  for (const ch of channels) {
    if (ch.deactivated && !opts.includeArchived) continue;
    const sub = mine.get(ch.id);
    if (sub?.active) {
      out.subscriptions.push(
        withSubscribers(formatSubscription(realm, ch, sub, opts.nowSeconds), ch),
      );
    } else if (opts.subscribedOnly || !view.may(userId, ch, 'metadata')) {
      continue;
    } else if (sub) {
      out.unsubscribed.push(
        withSubscribers(formatSubscription(realm, ch, sub, opts.nowSeconds), ch),
      );
    } else if (asJson) {
      never.push(ch);
    } else {
      out.never_subscribed.push(withSubscribers(formatChannel(realm, ch, opts.nowSeconds), ch));
    }
  }
  out.subscriptions.sort(byName);
  out.unsubscribed.sort(byName);
  out.never_subscribed.sort(byName);
  if (asJson) {
    const parts = never.sort(byName).map((ch) => channelJson(realm, ch, opts.nowSeconds));
    out.neverSubscribedJson = `[${parts.join(',')}]`;
  }
  return out;
}
