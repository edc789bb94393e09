/**
 * Register snapshot fields of the channel area: `streams`, `subscriptions` / `unsubscribed` /
 * `never_subscribed`, `realm_default_streams`, `realm_user_groups`, `user_topics`. Reference:
 * lib/events.py fetch_initial_state_data.
 */
import { nowSeconds } from '../../config.js';
import { Role } from '../../lib/roles.js';
import { putPreserialized } from '../../lib/preserialized.js';
import { spliceList, type ListEntry } from '../../lib/spliced-list.js';
import {
  byName,
  channelJson,
  formatChannel,
  formatSubscription,
  gatherSubscriptions,
  isOpenToMembers,
  openChannelsList,
  visibleSubscribers,
} from '../channels.js';
import type { Channel } from '../channels-view.js';
import type { StateContributor, StateRequest } from '../initial-state.js';
import type { RealmView } from '../realm-view.js';
import { mutedTopicsOf, userTopicsOf } from '../topics.js';
import { userGroupsJson } from '../user-groups.js';

/**
 * The id of the user when their channel lists can start from the shared list of open channels
 * (openChannelsList): an active non-guest, who may know every open channel whatever their groups
 * (channel-permissions.ts hasMetadataAccess), so only the other channels need asking. Else null:
 * guests and spectators, whom each channel is asked for.
 */
function openListUser(req: StateRequest): number | null {
  const u = req.user === null ? undefined : req.realm.user(req.user.id);
  return u && u.is_active && u.role !== Role.GUEST ? u.id : null;
}

/** visibleClosed's answer for a register (asked by both `streams` and `never_subscribed`). */
const closedSeen = new WeakMap<StateRequest, Channel[]>();

/** The channels outside the open list that the user may know exist. */
function visibleClosed(req: StateRequest, userId: number): Channel[] {
  let seen = closedSeen.get(req);
  if (seen === undefined) {
    const view = req.realm.channels;
    seen = [];
    for (const ch of view.all()) {
      if (isOpenToMembers(ch) || (ch.deactivated && !req.capabilities.archived_channels)) continue;
      if (view.may(userId, ch, 'metadata')) seen.push(ch);
    }
    closedSeen.set(req, seen);
  }
  return seen;
}

function entry(realm: RealmView, ch: Channel, now: number): ListEntry {
  return { id: ch.id, key: ch.name, json: channelJson(realm, ch, now) };
}

/**
 * `streams` without subscribers, each channel's access asked: for guests and spectators, and what
 * the shared list's splice must equal (test/api/register-shared-lists.test.ts).
 */
export function streamsJsonByChannel(req: StateRequest, now: number): string {
  const view = req.realm.channels;
  const user = req.user;
  const seen = [...view.all()].filter(
    (ch) =>
      (!ch.deactivated || req.capabilities.archived_channels) &&
      (user === null ? ch.is_web_public === 1 : view.may(user.id, ch, 'metadata')),
  );
  return `[${seen
    .sort(byName)
    .map((ch) => channelJson(req.realm, ch, now))
    .join(',')}]`;
}

/**
 * `streams`: every channel the user may know exists (metadata access: public ones for non-guests,
 * subscribed and web-public ones, every channel for administrators, private ones a permission
 * group lets them subscribe to, add subscribers to or administer; spectators: the web-public
 * ones). Archived channels only for clients declaring `archived_channels`.
 */
export const streamsState: StateContributor = {
  types: ['stream'],
  fill(req: StateRequest, state) {
    const view = req.realm.channels;
    const user = req.user;
    const now = nowSeconds(req.config);
    if (!req.includeSubscribers) {
      // Without subscriber lists every entry is the channel alone: its remembered JSON. A member's
      // list is the shared one of open channels with the others they may know put in.
      const member = openListUser(req);
      if (member === null) {
        putPreserialized(state, 'streams', [streamsJsonByChannel(req, now)]);
        return;
      }
      const open = openChannelsList(req.realm, req.capabilities.archived_channels, now);
      const closed = visibleClosed(req, member).map((ch) => entry(req.realm, ch, now));
      putPreserialized(state, 'streams', spliceList(open, [], closed));
      return;
    }
    const out = [];
    for (const ch of view.all()) {
      if (ch.deactivated && !req.capabilities.archived_channels) continue;
      // Every channel the user may know exists, as the reference's do_get_streams with
      // include_all: the same rule that decides who receives a channel's events.
      const visible = user === null ? ch.is_web_public === 1 : view.may(user.id, ch, 'metadata');
      if (!visible) continue;
      const o = formatChannel(req.realm, ch, now);
      if (req.includeSubscribers)
        o.subscribers = user === null ? [] : visibleSubscribers(req.realm, user.id, ch);
      out.push(o);
    }
    state.streams = out.sort(byName);
  },
};

/** `subscriptions`, `unsubscribed`, `never_subscribed`. */
export const subscriptionsState: StateContributor = {
  types: ['subscription'],
  fill(req: StateRequest, state) {
    const now = nowSeconds(req.config);
    if (req.user === null) {
      // Spectators: the web-public channels, as a new user's subscriptions would look.
      const view = req.realm.channels;
      const subs = [];
      let i = 0;
      for (const ch of view.all()) {
        if (ch.is_web_public !== 1 || ch.deactivated) continue;
        subs.push(
          formatSubscription(
            req.realm,
            ch,
            {
              user_id: 0,
              stream_id: ch.id,
              active: 1,
              color: WEB_PUBLIC_COLORS[i++ % WEB_PUBLIC_COLORS.length]!,
              is_muted: 0,
              pin_to_top: 0,
              desktop_notifications: null,
              audible_notifications: null,
              push_notifications: null,
              email_notifications: null,
              wildcard_mentions_notify: null,
            },
            now,
          ),
        );
      }
      state.subscriptions = subs.sort(byName);
      state.unsubscribed = [];
      state.never_subscribed = [];
      return;
    }
    // A member's never_subscribed is the shared list of open channels without those they have a
    // subscription row for, with the other never-subscribed channels they may know put in.
    const member = req.includeSubscribers ? null : openListUser(req);
    const lists = gatherSubscriptions(req.realm, req.user.id, {
      includeSubscribers: req.includeSubscribers,
      includeArchived: req.capabilities.archived_channels,
      nowSeconds: now,
      withoutNeverSubscribed: member !== null,
      neverSubscribedJson: member === null,
    });
    state.subscriptions = lists.subscriptions;
    state.unsubscribed = lists.unsubscribed;
    if (member !== null) {
      const mine = req.realm.channels.subscriptionsOf(member);
      const open = openChannelsList(req.realm, req.capabilities.archived_channels, now);
      const closed = visibleClosed(req, member)
        .filter((ch) => !mine.has(ch.id))
        .map((ch) => entry(req.realm, ch, now));
      putPreserialized(state, 'never_subscribed', spliceList(open, mine.keys(), closed));
    } else if (lists.neverSubscribedJson === undefined) {
      state.never_subscribed = lists.never_subscribed;
    } else putPreserialized(state, 'never_subscribed', [lists.neverSubscribedJson]);
  },
};

const WEB_PUBLIC_COLORS = ['#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55'];

/** `realm_default_streams`: ids of the default channels (guests and spectators: none). */
export const defaultStreamsState: StateContributor = {
  types: ['default_streams'],
  fill(req: StateRequest, state) {
    state.realm_default_streams =
      req.user === null || req.user.role === Role.GUEST
        ? []
        : req.realm.channels.defaultChannelIds();
  },
};

/** `realm_user_groups` (deactivated groups only with `include_deactivated_groups`). */
export const userGroupsState: StateContributor = {
  types: ['realm_user_groups'],
  fill(req: StateRequest, state) {
    // The same for every caller: one shared serialized list.
    putPreserialized(state, 'realm_user_groups', [
      userGroupsJson(req.realm, req.capabilities.include_deactivated_groups),
    ]);
  },
};

/** `user_topics`: the user's topic visibility policies. */
export const userTopicsState: StateContributor = {
  types: ['user_topic'],
  fill(req: StateRequest, state) {
    state.user_topics =
      req.user === null
        ? []
        : userTopicsOf(req.store, req.user.id, {
            emptyTopicName: req.capabilities.empty_topic_name,
          });
  },
};

/**
 * The legacy `muted_topics` (deprecated): only when the client did not name `user_topic` among
 * the event types it fetches (asking for everything includes it), as the reference.
 */
export const mutedTopicsState: StateContributor = {
  types: ['muted_topics'],
  fill(req: StateRequest, state) {
    if (req.fetchEventTypes?.has('user_topic')) return;
    state.muted_topics = req.user === null ? [] : mutedTopicsOf(req.store, req.realm, req.user.id);
  },
};

export const CHANNEL_STATE_CONTRIBUTORS: readonly StateContributor[] = [
  streamsState,
  subscriptionsState,
  defaultStreamsState,
  userGroupsState,
  userTopicsState,
  mutedTopicsState,
];
