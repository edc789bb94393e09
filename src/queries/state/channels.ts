/**
 * Register snapshot fields of the channel area: `streams`, `subscriptions` / `unsubscribed` /
 * `never_subscribed`, `realm_default_streams`, `realm_user_groups`, `user_topics`. Reference:
 * lib/events.py fetch_initial_state_data.
 */
import { nowSeconds } from '../../config.js';
import { Role } from '../../lib/roles.js';
import { putPreserialized } from '../../lib/preserialized.js';
import {
  byName,
  channelJson,
  formatChannel,
  formatSubscription,
  gatherSubscriptions,
  visibleSubscribers,
} from '../channels.js';
import type { StateContributor, StateRequest } from '../initial-state.js';
import { mutedTopicsOf, userTopicsOf } from '../topics.js';
import { listUserGroups } from '../user-groups.js';

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
      // Without subscriber lists every entry is the channel alone: its remembered JSON.
      const seen = [...view.all()].filter(
        (ch) =>
          (!ch.deactivated || req.capabilities.archived_channels) &&
          (user === null ? ch.is_web_public === 1 : view.may(user.id, ch, 'metadata')),
      );
      const parts = seen.sort(byName).map((ch) => channelJson(req.realm, ch, now));
      putPreserialized(state, 'streams', [`[${parts.join(',')}]`]);
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
    const lists = gatherSubscriptions(req.realm, req.user.id, {
      includeSubscribers: req.includeSubscribers,
      includeArchived: req.capabilities.archived_channels,
      nowSeconds: now,
      neverSubscribedJson: true,
    });
    state.subscriptions = lists.subscriptions;
    state.unsubscribed = lists.unsubscribed;
    if (lists.neverSubscribedJson === undefined) state.never_subscribed = lists.never_subscribed;
    else putPreserialized(state, 'never_subscribed', [lists.neverSubscribedJson]);
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
    state.realm_user_groups = listUserGroups(
      req.realm,
      req.capabilities.include_deactivated_groups,
    );
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
