/**
 * Subscriptions. Reference: views/streams.py. Listing one's subscriptions, subscribing (oneself
 * or others, creating the channels that do not exist yet), unsubscribing, and the personal
 * settings of a subscription (color, muting, notifications, …).
 */
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { nowSeconds } from '../config.js';
import { TOPICS_POLICIES, normalizeDescription, parseRetentionDays } from '../lib/channel-rules.js';
import { MAX_CHANNEL_DESCRIPTION_LENGTH } from '../lib/limits.js';
import { GuestNotAllowedError, JsonableError } from '../lib/errors.js';
import {
  CHANNEL_GROUP_SETTING_NAMES,
  type ChannelGroupSettingName,
} from '../lib/group-settings.js';
import {
  bool,
  boolValue,
  groupSetting,
  int,
  intValue,
  json,
  jsonOrString,
  oneOf,
  ownNulRule,
  stringList,
} from '../lib/params.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { renderDescription } from '../queries/render-context.js';
import { isHexColor } from '../lib/stream-colors.js';
import { subscribeCommand } from '../lib/subscribe-command.js';
import { Role } from '../lib/roles.js';
import { gatherSubscriptions } from '../queries/channels.js';
import type { SubscriptionPropertyChange } from '../mutations/subscriptions.js';
import type { SubscriptionPropertyColumn } from '../storage/channels.js';

const principalsParam = () =>
  json(z.union([z.array(z.string()), z.array(intValue())], { error: 'Invalid {var}' })).optional();

/**
 * The channels of a subscribe request (`subscriptions`, or PATCH's `add`) as the realm actor
 * takes them: colors checked, names trimmed, descriptions normalized and rendered here, before
 * the actor runs.
 */
function requestedChannels(
  { server, realm, user }: AuthedCtx,
  channels: readonly {
    name: string;
    color?: string | undefined;
    description?: string | undefined;
  }[],
) {
  for (const s of channels) {
    if (s.color !== undefined && !isHexColor(s.color))
      throw new JsonableError('add.color is not a valid hex color code');
  }
  return channels.map((s) => {
    const description = s.description === undefined ? null : normalizeDescription(s.description);
    return {
      name: s.name.trim(),
      description,
      rendered_description:
        description === null
          ? null
          : renderDescription(server.config, server.store, realm.view, description, user.id),
      color: s.color ?? null,
    };
  });
}

/** GET /api/v1/users/me/subscriptions */
export const listSubscriptions = endpoint({
  method: 'GET',
  path: '/api/v1/users/me/subscriptions',
  compressAnswer: true,
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
          name: ownNulRule(z.string({ error: '{var} is not a string' })), // checkChannelName
          description: z
            .string({ error: '{var} is not a string' })
            .max(MAX_CHANNEL_DESCRIPTION_LENGTH, {
              error: `{var} is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`,
            })
            .optional(),
          color: ownNulRule(z.string({ error: '{var} is not a string' })).optional(), // hex check
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
  handle: async (ctx, p) => {
    const { realm, user } = ctx;
    if (user.role === Role.GUEST) throw new GuestNotAllowedError();
    const retention =
      p.message_retention_days === undefined ? null : parseRetentionDays(p.message_retention_days);
    const settings: Partial<Record<ChannelGroupSettingName, GroupSettingValue>> = {};
    for (const n of CHANNEL_GROUP_SETTING_NAMES) if (p[n] !== undefined) settings[n] = p[n];
    return realm.ask('channel.subscribe', {
      acting_user_id: user.id,
      subscriptions: requestedChannels(ctx, p.subscriptions),
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
          name: ownNulRule(z.string({ error: '{var} is not a string' })), // checkChannelName
          color: ownNulRule(z.string({ error: '{var} is not a string' })).optional(), // hex check
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
  handle: (ctx, p) => {
    const { realm, user } = ctx;
    if (p.add.length === 0 && p.delete.length === 0)
      throw new JsonableError('Nothing to do. Specify at least one of "add" or "delete".');
    if (p.add.length > 0 && user.role === Role.GUEST) throw new GuestNotAllowedError();
    return realm.ask('channel.subscriptions.update', {
      add: p.add.length === 0 ? null : subscribeCommand(user.id, requestedChannels(ctx, p.add)),
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
          // Checked below, a NUL answered with the reference's words (an unknown property, a
          // color that is not a hex code; every other property takes a boolean).
          property: ownNulRule(z.string({ error: '{var} is not a string' })),
          value: ownNulRule(z.union([boolValue(), z.string()], { error: 'Invalid {var}' })),
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
