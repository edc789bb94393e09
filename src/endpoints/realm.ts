/**
 * PATCH /realm: the organization's settings, for administrators (owners for some). Reference:
 * views/realm.py update_realm. Values are type-checked here; permissions, group-setting values,
 * channels and authentication methods are checked in the realm actor (src/mutations/realm-admin.ts),
 * which answers with the changed settings (strings as "updated", as the reference).
 *
 * The deprecated integer policies (`create_public_stream_policy`, `wildcard_mention_policy`, ...)
 * are still accepted: each sets the group setting that replaced it to the system group the
 * reference maps the value to.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { longerThan } from '../lib/strings.js';
import {
  JsonableError,
  OrganizationAdministratorRequiredError,
  RequestVariableConversionError,
} from '../lib/errors.js';
import { isAvailableLanguage } from '../lib/languages.js';
import {
  bool,
  groupSettingChange,
  int,
  intValue,
  json,
  jsonOrString,
  nonNegativeInt,
  oneOf,
  ownNulRule,
  str,
} from '../lib/params.js';
import { isValidUrl } from '../lib/profile-fields.js';
import {
  MAX_REALM_DESCRIPTION_LENGTH,
  MAX_REALM_NAME_LENGTH,
  REALM_GROUP_SETTING_DEFAULTS,
  type GroupSettingValue,
  type RealmGroupSettingName,
} from '../lib/realm-settings.js';
import { Role, type SystemGroupName } from '../lib/roles.js';
import { GIPHY_RATING_OPTIONS, VIDEO_CHAT_PROVIDERS } from '../queries/state/realm.js';

const BOOLEAN_SETTINGS = [
  'allow_message_editing',
  'allow_edit_history',
  'avatar_changes_disabled',
  'digest_emails_enabled',
  'disallow_disposable_email_addresses',
  'email_changes_disabled',
  'emails_restricted_to_domains',
  'enable_guest_user_dm_warning',
  'enable_guest_user_indicator',
  'enable_read_receipts',
  'enable_spectator_access',
  'inline_image_preview',
  'inline_url_embed_preview',
  'invite_required',
  'mandatory_topics',
  'message_content_allowed_in_email_notifications',
  'name_changes_disabled',
  'require_unique_names',
  'send_welcome_emails',
  'want_advertise_in_communities_directory',
] as const;

const TIME_LIMIT_SETTINGS = [
  'message_content_delete_limit_seconds',
  'message_content_edit_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
] as const;

const CHANNEL_SETTINGS = [
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
  'zulip_update_announcements_stream_id',
  'moderation_request_channel_id',
] as const;

const ORG_TYPES = [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000];
const JITSI_SERVER_URL_MAX_LENGTH = 200;

const intIn = (allowed: readonly number[]) =>
  json(intValue().refine((v) => allowed.includes(v), { error: 'Invalid {var}' }));

/**
 * The deprecated integer policies: the setting each now stands for, and the system group each
 * value means (the reference's mapping; 1 members, 2 administrators, 3 full members,
 * 4 moderators, 5 everyone, 6 nobody, 7 owners — wildcard mentions number them differently).
 */
const COMMON: Record<number, SystemGroupName> = {
  1: 'role:members',
  2: 'role:administrators',
  3: 'role:fullmembers',
  4: 'role:moderators',
};
const DEPRECATED_POLICIES: Record<
  string,
  { setting: RealmGroupSettingName; groups: Record<number, SystemGroupName> }
> = {
  create_public_stream_policy: { setting: 'can_create_public_channel_group', groups: COMMON },
  create_private_stream_policy: { setting: 'can_create_private_channel_group', groups: COMMON },
  create_web_public_stream_policy: {
    setting: 'can_create_web_public_channel_group',
    groups: { 2: 'role:administrators', 4: 'role:moderators', 6: 'role:nobody', 7: 'role:owners' },
  },
  invite_to_stream_policy: { setting: 'can_add_subscribers_group', groups: COMMON },
  add_custom_emoji_policy: { setting: 'can_add_custom_emoji_group', groups: COMMON },
  delete_own_message_policy: {
    setting: 'can_delete_own_message_group',
    groups: { ...COMMON, 5: 'role:everyone' },
  },
  invite_to_realm_policy: {
    setting: 'can_invite_users_group',
    groups: { ...COMMON, 6: 'role:nobody' },
  },
  move_messages_between_streams_policy: {
    setting: 'can_move_messages_between_channels_group',
    groups: { ...COMMON, 6: 'role:nobody' },
  },
  wildcard_mention_policy: {
    setting: 'can_mention_many_users_group',
    groups: {
      1: 'role:everyone',
      2: 'role:members',
      3: 'role:fullmembers',
      5: 'role:administrators',
      6: 'role:nobody',
      7: 'role:moderators',
    },
  },
};

/** bot_creation_policy: 1 anyone, 2 only incoming-webhook bots, 3 administrators only. */
const BOT_CREATION: Record<number, [SystemGroupName, SystemGroupName]> = {
  1: ['role:members', 'role:members'],
  2: ['role:administrators', 'role:members'],
  3: ['role:administrators', 'role:administrators'],
};

/** "unlimited" (no limit) or a positive number of seconds. */
const timeLimit = (name: string) =>
  jsonOrString(z.union([z.string(), z.number()])).transform((v) => {
    if (v === 'unlimited') return null;
    if (typeof v === 'string' || !Number.isInteger(v) || v <= 0)
      throw new RequestVariableConversionError(name, v);
    return v;
  });

const groupSettingParams = Object.fromEntries(
  Object.keys(REALM_GROUP_SETTING_DEFAULTS).map((k) => [k, groupSettingChange().optional()]),
) as Record<RealmGroupSettingName, z.ZodOptional<ReturnType<typeof groupSettingChange>>>;

const params = z.object({
  name: str({ max: MAX_REALM_NAME_LENGTH }).optional(),
  description: str({ max: MAX_REALM_DESCRIPTION_LENGTH }).optional(),
  ...Object.fromEntries(BOOLEAN_SETTINGS.map((k) => [k, bool().optional()])),
  default_code_block_language: str().optional(),
  default_language: ownNulRule(str()).optional(), // "Invalid language '…'"
  digest_weekday: intIn([0, 1, 2, 3, 4, 5, 6]).optional(),
  giphy_rating: int().optional(),
  video_chat_provider: int().optional(),
  jitsi_server_url: ownNulRule(
    jsonOrString(z.string({ error: '{var} is not an allowed_type' })),
  ).optional(), // the URL's check
  ...Object.fromEntries(TIME_LIMIT_SETTINGS.map((k) => [k, timeLimit(k).optional()])),
  message_edit_history_visibility_policy: oneOf(['all', 'moves', 'none']).optional(),
  message_retention_days: jsonOrString(z.union([z.string(), z.number()])).optional(),
  ...Object.fromEntries(CHANNEL_SETTINGS.map((k) => [k, int().optional()])),
  org_type: intIn(ORG_TYPES).optional(),
  topics_policy: oneOf(['allow_empty_topic', 'disable_empty_topic']).optional(),
  waiting_period_threshold: nonNegativeInt().optional(),
  authentication_methods: json(
    z.record(z.string(), z.boolean({ error: '{var} is not a boolean' }), {
      error: '{var} is not a dict',
    }),
  ).optional(),
  string_id: str({ max: 40 }).optional(),
  ...groupSettingParams,
  ...Object.fromEntries(
    Object.entries(DEPRECATED_POLICIES).map(([k, d]) => [
      k,
      intIn(Object.keys(d.groups).map(Number)).optional(),
    ]),
  ),
  bot_creation_policy: intIn([1, 2, 3]).optional(),
});

/** PATCH /api/v1/realm */
export const updateRealm = endpoint({
  method: 'PATCH',
  path: '/api/v1/realm',
  params,
  handle: ({ realm, user }, raw) => {
    // As the reference: administrators only, before any value is looked at.
    if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
    const p = raw as Record<string, unknown>;
    const settings: Record<string, unknown> = {};
    for (const k of [...BOOLEAN_SETTINGS, ...TIME_LIMIT_SETTINGS, ...CHANNEL_SETTINGS]) {
      if (p[k] !== undefined) settings[k] = p[k];
    }
    for (const k of [
      'default_code_block_language',
      'digest_weekday',
      'message_edit_history_visibility_policy',
      'org_type',
      'topics_policy',
      'waiting_period_threshold',
    ]) {
      if (p[k] !== undefined) settings[k] = p[k];
    }
    if (p.default_language !== undefined) {
      const lang = p.default_language as string;
      if (!isAvailableLanguage(lang)) throw new JsonableError(`Invalid language '${lang}'`);
      settings.default_language = lang;
    }
    if (p.video_chat_provider !== undefined) {
      const id = p.video_chat_provider as number;
      if (!Object.values(VIDEO_CHAT_PROVIDERS).some((v) => v.id === id))
        throw new JsonableError(`Invalid video_chat_provider ${id}`);
      settings.video_chat_provider = id;
    }
    if (p.giphy_rating !== undefined) {
      const id = p.giphy_rating as number;
      if (!Object.values(GIPHY_RATING_OPTIONS).some((v) => v.id === id))
        throw new JsonableError(`Invalid giphy_rating ${id}`);
      settings.giphy_rating = id;
    }
    if (p.jitsi_server_url !== undefined) {
      const url = p.jitsi_server_url as string;
      if (url === 'default') settings.jitsi_server_url = null;
      else if (longerThan(url, JITSI_SERVER_URL_MAX_LENGTH) || !isValidUrl(url))
        throw new JsonableError('jitsi_server_url is not an allowed_type');
      else settings.jitsi_server_url = url;
    }
    if (p.message_retention_days !== undefined) {
      const v = p.message_retention_days;
      if (v === 'unlimited') settings.message_retention_days = -1;
      else if (typeof v === 'number' && Number.isInteger(v) && v > 0)
        settings.message_retention_days = v;
      else throw new RequestVariableConversionError('message_retention_days', v);
    }

    const groupSettings: Partial<
      Record<RealmGroupSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>
    > = {};
    const view = realm.view;
    for (const [k, d] of Object.entries(DEPRECATED_POLICIES)) {
      const v = p[k] as number | undefined;
      if (v !== undefined) groupSettings[d.setting] = { new: view.systemGroupId(d.groups[v]!) };
    }
    if (p.bot_creation_policy !== undefined) {
      const [bots, writeOnly] = BOT_CREATION[p.bot_creation_policy as number]!;
      groupSettings.can_create_bots_group = { new: view.systemGroupId(bots) };
      groupSettings.can_create_write_only_bots_group = { new: view.systemGroupId(writeOnly) };
    }
    for (const k of Object.keys(REALM_GROUP_SETTING_DEFAULTS) as RealmGroupSettingName[]) {
      const change = p[k] as { new: GroupSettingValue; old?: GroupSettingValue } | undefined;
      if (change !== undefined) groupSettings[k] = change;
    }

    return realm.ask('realm.update', {
      acting_user_id: user.id,
      ...(p.name !== undefined ? { name: p.name as string } : {}),
      ...(p.description !== undefined ? { description: p.description as string } : {}),
      settings,
      group_settings: groupSettings,
      ...(p.authentication_methods !== undefined
        ? { authentication_methods: p.authentication_methods as Record<string, boolean> }
        : {}),
      ...(p.string_id !== undefined ? { string_id: p.string_id as string } : {}),
    });
  },
});

/**
 * POST /api/v1/realm/deactivate — deactivates the organization (owners; the permission is checked
 * in the realm actor). Every session ends at once (src/mutations/realm-deactivate.ts). Reference:
 * views/realm.py deactivate_realm; `deletion_delay_days` is not supported (nothing is deleted).
 */
export const deactivateRealm = endpoint({
  method: 'POST',
  path: '/api/v1/realm/deactivate',
  params: z.object({}),
  handle: ({ realm, user }) => realm.ask('realm.deactivate', { acting_user_id: user.id }),
});
