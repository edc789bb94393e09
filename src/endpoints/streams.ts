/**
 * Channels and subscriptions. Reference: views/streams.py. Reads answer from the realm's read
 * model (realm.view.channels); writes render descriptions first, then ask the realm actor.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { nowSeconds } from '../config.js';
import {
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  TOPICS_POLICIES,
  normalizeDescription,
  parseRetentionDays,
} from '../lib/channel-rules.js';
import {
  GuestNotAllowedError,
  InsufficientPermissionError,
  InvalidChannelIdError,
  JsonableError,
  UserNotAuthorizedForQueryError,
} from '../lib/errors.js';
import {
  CHANNEL_GROUP_SETTING_NAMES,
  type ChannelGroupSettingName,
} from '../lib/group-settings.js';
import {
  bool,
  boolValue,
  groupSetting,
  groupSettingChange,
  int,
  intValue,
  json,
  jsonOrString,
  nonNegativeInt,
  oneOf,
  pathInt,
  str,
  stringList,
} from '../lib/params.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { renderDescription } from '../queries/render-context.js';
import { isHexColor } from '../lib/stream-colors.js';
import { Role } from '../lib/roles.js';
import type { Channel } from '../queries/channels-view.js';
import type { RealmView } from '../queries/realm-view.js';
import { byName, formatChannel, gatherSubscriptions } from '../queries/channels.js';
import type { GroupSettingChange } from '../mutations/channels.js';
import type { SubscriptionPropertyChange } from '../mutations/subscriptions.js';
import type { SubscriptionPropertyColumn } from '../storage/channels.js';

const principalsParam = () =>
  json(z.union([z.array(z.string()), z.array(intValue())], { error: 'Invalid {var}' })).optional();

/** GET /api/v1/users/me/subscriptions */
export const listSubscriptions = endpoint({
  method: 'GET',
  path: '/api/v1/users/me/subscriptions',
  params: z.object({ include_subscribers: bool().default(false) }),
  handle: ({ server, realm, user }, p) => {
    const lists = gatherSubscriptions(realm.view, user.id, {
      includeSubscribers: p.include_subscribers,
      includeArchived: false,
      nowSeconds: nowSeconds(server.config),
      subscribedOnly: true,
    });
    return { subscriptions: lists.subscriptions };
  },
});

const subscribeSettings = Object.fromEntries(
  CHANNEL_GROUP_SETTING_NAMES.map((n) => [n, groupSetting().optional()]),
) as Record<ChannelGroupSettingName, z.ZodOptional<ReturnType<typeof groupSetting>>>;

/** POST /api/v1/users/me/subscriptions — subscribe self or others, creating missing channels. */
export const subscribe = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/subscriptions',
  params: z.object({
    subscriptions: json(
      z.array(
        z.object({
          name: z.string({ error: '{var} is not a string' }),
          description: z
            .string({ error: '{var} is not a string' })
            .max(MAX_CHANNEL_DESCRIPTION_LENGTH, {
              error: `{var} is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`,
            })
            .optional(),
          color: z.string({ error: '{var} is not a string' }).optional(),
        }),
        { error: '{var} is not a list' },
      ),
    ),
    principals: principalsParam(),
    authorization_errors_fatal: bool().default(true),
    announce: bool().default(false),
    invite_only: bool().default(false),
    is_web_public: bool().default(false),
    is_default_stream: bool().default(false),
    history_public_to_subscribers: bool().optional(),
    message_retention_days: jsonOrString(z.union([z.string(), intValue()])).optional(),
    topics_policy: jsonOrString(oneOf(TOPICS_POLICIES)).optional(),
    folder_id: int().optional(),
    ...subscribeSettings,
  }),
  handle: async ({ server, realm, user }, p) => {
    if (user.role === Role.GUEST) throw new GuestNotAllowedError();
    const retention =
      p.message_retention_days === undefined ? null : parseRetentionDays(p.message_retention_days);
    for (const s of p.subscriptions) {
      if (s.color !== undefined && !isHexColor(s.color))
        throw new JsonableError('add.color is not a valid hex color code');
    }
    const settings: Partial<Record<ChannelGroupSettingName, GroupSettingValue>> = {};
    for (const n of CHANNEL_GROUP_SETTING_NAMES) if (p[n] !== undefined) settings[n] = p[n];
    return realm.ask('channel.subscribe', {
      acting_user_id: user.id,
      subscriptions: p.subscriptions.map((s) => {
        const description =
          s.description === undefined ? null : normalizeDescription(s.description);
        return {
          name: s.name.trim(),
          description,
          rendered_description:
            description === null
              ? null
              : renderDescription(server.config, server.store, realm.view, description, user.id),
          color: s.color ?? null,
        };
      }),
      principals: p.principals ?? null,
      authorization_errors_fatal: p.authorization_errors_fatal,
      invite_only: p.invite_only,
      is_web_public: p.is_web_public,
      is_default_stream: p.is_default_stream,
      history_public_to_subscribers: p.history_public_to_subscribers ?? null,
      message_retention_days: retention,
      retention_given:
        p.message_retention_days !== undefined && p.message_retention_days !== 'realm_default',
      topics_policy: p.topics_policy ?? null,
      folder_id: p.folder_id ?? null,
      settings,
    });
  },
});

/** PATCH /api/v1/users/me/subscriptions — `add` and `delete` for oneself, in one transaction. */
export const updateSubscriptions = endpoint({
  method: 'PATCH',
  path: '/api/v1/users/me/subscriptions',
  params: z.object({
    add: json(
      z.array(
        z.object({
          name: z.string({ error: '{var} is not a string' }),
          color: z.string({ error: '{var} is not a string' }).optional(),
          description: z
            .string({ error: '{var} is not a string' })
            .max(MAX_CHANNEL_DESCRIPTION_LENGTH, {
              error: `{var} is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`,
            })
            .optional(),
        }),
        { error: '{var} is not a list' },
      ),
    ).default([]),
    delete: stringList().default([]),
  }),
  handle: ({ server, realm, user }, p) => {
    if (p.add.length === 0 && p.delete.length === 0)
      throw new JsonableError('Nothing to do. Specify at least one of "add" or "delete".');
    if (p.add.length > 0 && user.role === Role.GUEST) throw new GuestNotAllowedError();
    for (const s of p.add) {
      if (s.color !== undefined && !isHexColor(s.color))
        throw new JsonableError('add.color is not a valid hex color code');
    }
    return realm.ask('channel.subscriptions.update', {
      add:
        p.add.length === 0
          ? null
          : {
              acting_user_id: user.id,
              subscriptions: p.add.map((s) => {
                const description =
                  s.description === undefined ? null : normalizeDescription(s.description);
                return {
                  name: s.name.trim(),
                  description,
                  rendered_description:
                    description === null
                      ? null
                      : renderDescription(
                          server.config,
                          server.store,
                          realm.view,
                          description,
                          user.id,
                        ),
                  color: s.color ?? null,
                };
              }),
              principals: null,
              authorization_errors_fatal: true,
              invite_only: false,
              is_web_public: false,
              is_default_stream: false,
              history_public_to_subscribers: null,
              message_retention_days: null,
              retention_given: false,
              topics_policy: null,
              folder_id: null,
              settings: {},
            },
      delete:
        p.delete.length === 0
          ? null
          : { acting_user_id: user.id, subscriptions: p.delete, principals: null },
    });
  },
});

/** DELETE /api/v1/users/me/subscriptions — unsubscribe self, own bots, or (with permission) others. */
export const unsubscribe = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/me/subscriptions',
  params: z.object({
    subscriptions: stringList(),
    principals: principalsParam(),
  }),
  handle: ({ realm, user }, p) =>
    realm.ask('channel.unsubscribe', {
      acting_user_id: user.id,
      subscriptions: p.subscriptions,
      principals: p.principals ?? null,
    }),
});

const BOOLEAN_SUB_PROPERTIES = new Set([
  'in_home_view',
  'is_muted',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'pin_to_top',
  'wildcard_mentions_notify',
]);

/** POST /api/v1/users/me/subscriptions/properties — personal settings of subscriptions. */
export const updateSubscriptionProperties = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/subscriptions/properties',
  params: z.object({
    subscription_data: json(
      z.array(
        z.object({
          stream_id: intValue(),
          property: z.string({ error: '{var} is not a string' }),
          value: z.union([boolValue(), z.string()], { error: 'Invalid {var}' }),
        }),
        { error: '{var} is not a list' },
      ),
    ),
  }),
  handle: ({ realm, user }, p) => {
    const changes: SubscriptionPropertyChange[] = [];
    for (const c of p.subscription_data) {
      if (c.property === 'color') {
        if (typeof c.value !== 'string' || !isHexColor(c.value))
          throw new JsonableError('color is not a valid hex color code');
      } else if (BOOLEAN_SUB_PROPERTIES.has(c.property)) {
        if (typeof c.value !== 'boolean') throw new JsonableError(`${c.property} is not a boolean`);
      } else {
        throw new JsonableError(`Unknown subscription property: ${c.property}`);
      }
      changes.push({
        stream_id: c.stream_id,
        property: c.property as 'in_home_view' | SubscriptionPropertyColumn,
        value: c.value,
      });
    }
    return realm.ask('subscription.properties', { acting_user_id: user.id, changes });
  },
});

/** GET /api/v1/streams — the channels the user may know, by the flags of the spec's table. */
export const listStreams = endpoint({
  method: 'GET',
  path: '/api/v1/streams',
  params: z.object({
    include_public: bool().default(true),
    include_web_public: bool().default(false),
    include_subscribed: bool().default(true),
    exclude_archived: bool().default(true),
    include_all: bool().default(false),
    include_all_active: bool().default(false),
    include_default: bool().default(false),
    include_owner_subscribed: bool().default(false),
    include_can_access_content: bool().default(false),
  }),
  handle: ({ server, realm, user }, p) => {
    const view = realm.view.channels;
    // The deprecated alias is for administrators only (spec/API.md).
    if (p.include_all_active && user.role > Role.ADMINISTRATOR)
      throw new UserNotAuthorizedForQueryError();
    const includeAll = p.include_all || p.include_all_active;
    const includePublic = p.include_public && user.role !== Role.GUEST;
    const owner =
      p.include_owner_subscribed && user.is_bot && user.bot_owner_id !== null
        ? user.bot_owner_id
        : null;
    const picked: Channel[] = [];
    for (const ch of view.all()) {
      if (p.exclude_archived && ch.deactivated) continue;
      let take: boolean;
      if (includeAll) {
        take = view.may(user.id, ch, 'metadata');
      } else if (p.include_can_access_content) {
        take =
          view.may(user.id, ch, 'content') || (owner !== null && view.isSubscribed(owner, ch.id));
      } else {
        take =
          (p.include_subscribed && view.isSubscribed(user.id, ch.id)) ||
          (includePublic && ch.invite_only === 0) ||
          (p.include_web_public && ch.is_web_public === 1 && !ch.deactivated) ||
          (owner !== null && view.isSubscribed(owner, ch.id));
      }
      if (take) picked.push(ch);
    }
    const now = nowSeconds(server.config);
    const streams = picked.map((ch) => {
      const o = formatChannel(realm.view, ch, now);
      if (p.include_default) o.is_default = view.isDefault(ch.id);
      return o;
    });
    return { streams: streams.sort(byName) };
  },
});

/** A channel the user may know (archived ones are invalid here, as in the reference). */
function accessChannelMetadata(view: RealmView, userId: number, channelId: number): Channel {
  const ch = view.channels.byId(channelId);
  if (!ch || ch.deactivated || !view.channels.may(userId, ch, 'metadata'))
    throw new InvalidChannelIdError();
  return ch;
}

/** GET /api/v1/streams/{stream_id} */
export const getStream = endpoint({
  method: 'GET',
  path: '/api/v1/streams/:stream_id',
  params: z.object({ stream_id: pathInt() }),
  handle: ({ server, realm, user }, p) => {
    const ch = accessChannelMetadata(realm.view, user.id, p.stream_id);
    return { stream: formatChannel(realm.view, ch, nowSeconds(server.config)) };
  },
});

/** GET /api/v1/streams/{stream_id}/members */
export const getSubscribers = endpoint({
  method: 'GET',
  path: '/api/v1/streams/:stream_id/members',
  params: z.object({ stream_id: pathInt() }),
  handle: ({ realm, user }, p) => {
    const ch = accessChannelMetadata(realm.view, user.id, p.stream_id);
    return { subscribers: realm.view.channels.subscriberIds(ch.id) };
  },
});

/**
 * GET /api/v1/streams/{stream_id}/email_address: the address that posts to the channel by e-mail.
 * Confab runs no e-mail gateway, so the address is empty, as the reference answers when its
 * gateway is not configured; access to the channel and to the sender are checked all the same.
 */
export const getStreamEmailAddress = endpoint({
  method: 'GET',
  path: '/api/v1/streams/:stream_id/email_address',
  params: z.object({ stream_id: pathInt(), sender_id: nonNegativeInt().optional() }),
  handle: ({ realm, user }, p) => {
    const view = realm.view;
    const ch = view.channels.byId(p.stream_id);
    if (!ch || ch.deactivated || !view.channels.may(user.id, ch, 'content')) {
      throw new InvalidChannelIdError();
    }
    if (p.sender_id !== undefined && p.sender_id !== user.id) {
      // Another sender must be a bot the requester may administer.
      const bot = view.user(p.sender_id);
      if (!bot || !bot.is_bot) throw new JsonableError('No such bot');
      if (bot.bot_owner_id !== user.id && user.role > Role.ADMINISTRATOR) {
        throw new InsufficientPermissionError();
      }
    }
    return { email: '' };
  },
});

/** GET /api/v1/get_stream_id?stream=<name> */
export const getStreamId = endpoint({
  method: 'GET',
  path: '/api/v1/get_stream_id',
  params: z.object({ stream: str() }),
  handle: ({ realm, user }, p) => {
    const view = realm.view.channels;
    const ch = view.byName(p.stream);
    if (!ch || ch.deactivated || !view.may(user.id, ch, 'content'))
      throw new JsonableError(`Invalid channel name '${p.stream}'`);
    return { stream_id: ch.id };
  },
});

const updateSettings = Object.fromEntries(
  CHANNEL_GROUP_SETTING_NAMES.map((n) => [n, groupSettingChange().optional()]),
) as Record<ChannelGroupSettingName, z.ZodOptional<ReturnType<typeof groupSettingChange>>>;

/** PATCH /api/v1/streams/{stream_id} */
export const updateStream = endpoint({
  method: 'PATCH',
  path: '/api/v1/streams/:stream_id',
  params: z.object({
    stream_id: pathInt(),
    description: str({ max: MAX_CHANNEL_DESCRIPTION_LENGTH }).optional(),
    new_name: str().optional(),
    is_private: bool().optional(),
    is_web_public: bool().optional(),
    history_public_to_subscribers: bool().optional(),
    is_default_stream: bool().optional(),
    message_retention_days: jsonOrString(z.union([z.string(), intValue()])).optional(),
    is_archived: bool().optional(),
    folder_id: json(
      z.union([intValue(), z.null()], { error: '{var} is not an integer' }),
    ).optional(),
    topics_policy: jsonOrString(oneOf(TOPICS_POLICIES)).optional(),
    ...updateSettings,
  }),
  handle: ({ server, realm, user }, p) => {
    const settings: Partial<Record<ChannelGroupSettingName, GroupSettingChange>> = {};
    for (const n of CHANNEL_GROUP_SETTING_NAMES) {
      const c = p[n];
      if (c !== undefined)
        settings[n] = c.old === undefined ? { new: c.new } : { new: c.new, old: c.old };
    }
    let description: { text: string; rendered: string } | undefined;
    if (p.description !== undefined) {
      const text = normalizeDescription(p.description);
      description = {
        text,
        rendered: renderDescription(server.config, server.store, realm.view, text, user.id),
      };
    }
    return realm.ask('channel.update', {
      acting_user_id: user.id,
      stream_id: p.stream_id,
      ...(description ? { description } : {}),
      ...(p.new_name !== undefined ? { new_name: p.new_name } : {}),
      ...(p.is_private !== undefined ? { is_private: p.is_private } : {}),
      ...(p.is_web_public !== undefined ? { is_web_public: p.is_web_public } : {}),
      ...(p.history_public_to_subscribers !== undefined
        ? { history_public_to_subscribers: p.history_public_to_subscribers }
        : {}),
      ...(p.is_default_stream !== undefined ? { is_default_stream: p.is_default_stream } : {}),
      ...(p.message_retention_days !== undefined
        ? { message_retention_days: parseRetentionDays(p.message_retention_days) }
        : {}),
      ...(p.is_archived !== undefined ? { is_archived: p.is_archived } : {}),
      ...(p.folder_id !== undefined ? { folder_id: p.folder_id } : {}),
      ...(p.topics_policy !== undefined ? { topics_policy: p.topics_policy } : {}),
      settings,
    });
  },
});

/** DELETE /api/v1/streams/{stream_id} — archive. */
export const archiveStream = endpoint({
  method: 'DELETE',
  path: '/api/v1/streams/:stream_id',
  params: z.object({ stream_id: pathInt() }),
  handle: ({ realm, user }, p) =>
    realm.ask('channel.archive', { acting_user_id: user.id, stream_id: p.stream_id }),
});

/** POST /api/v1/default_streams */
export const addDefaultStream = endpoint({
  method: 'POST',
  path: '/api/v1/default_streams',
  params: z.object({ stream_id: int() }),
  handle: ({ realm, user }, p) =>
    realm.ask('channel.default', { acting_user_id: user.id, stream_id: p.stream_id, add: true }),
});

/** DELETE /api/v1/default_streams */
export const removeDefaultStream = endpoint({
  method: 'DELETE',
  path: '/api/v1/default_streams',
  params: z.object({ stream_id: int() }),
  handle: ({ realm, user }, p) =>
    realm.ask('channel.default', { acting_user_id: user.id, stream_id: p.stream_id, add: false }),
});

/** POST /api/v1/channel_folders/create (administrators) */
export const createChannelFolder = endpoint({
  method: 'POST',
  path: '/api/v1/channel_folders/create',
  params: z.object({
    name: str({ max: 60 }),
    description: str({ max: MAX_CHANNEL_DESCRIPTION_LENGTH }).default(''),
  }),
  handle: ({ server, realm, user }, p) => {
    const description = normalizeDescription(p.description);
    return realm.ask('channel_folder.create', {
      acting_user_id: user.id,
      name: p.name,
      description,
      rendered_description: renderDescription(
        server.config,
        server.store,
        realm.view,
        description,
        user.id,
      ),
    });
  },
});

/** GET /api/v1/channel_folders */
export const listChannelFolders = endpoint({
  method: 'GET',
  path: '/api/v1/channel_folders',
  params: z.object({ include_archived: bool().default(false) }),
  handle: ({ realm }, p) => ({
    channel_folders: realm.view.channels
      .allFolders()
      .filter((f) => p.include_archived || !f.is_archived)
      .map((f) => ({
        id: f.id,
        name: f.name,
        description: f.description,
        rendered_description: f.rendered_description,
        creator_id: f.creator_id,
        date_created: f.date_created,
        is_archived: f.is_archived === 1,
      })),
  }),
});
