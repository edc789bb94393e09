/**
 * Register snapshot, `realm` type: every realm setting (`realm_<name>`), permission group settings
 * and the deprecated integer policies derived from them, the organization's identity, and the
 * server's limits and protocol constants. Reference: lib/events.py fetch_initial_state_data,
 * `if want("realm")`.
 */
import { emojiDataPath } from '../../lib/emoji/index.js';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../lib/events.js';
import {
  EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
  MAX_MESSAGE_LENGTH,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_CHANNEL_NAME_LENGTH,
  MAX_TOPIC_LENGTH,
  PRESENCE_OFFLINE_THRESHOLD_SECONDS,
  PRESENCE_PING_INTERVAL_SECONDS,
  TYPING_STARTED_EXPIRY_PERIOD_MILLISECONDS,
  TYPING_STARTED_WAIT_PERIOD_MILLISECONDS,
  TYPING_STOPPED_WAIT_PERIOD_MILLISECONDS,
} from '../../lib/limits.js';
import {
  REALM_GROUP_SETTING_DEFAULTS,
  REALM_SETTING_DEFAULTS,
  type GroupSettingValue,
  type RealmGroupSettingName,
  type RealmSettings,
} from '../../lib/realm-settings.js';
import type { SystemGroupName } from '../../lib/roles.js';
import { realmHost, realmIconUrl, realmUrl } from '../../lib/urls.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../lib/password.js';
import type { StateContributor, StateRequest } from '../initial-state.js';
import type { RealmView } from '../realm-view.js';

/** Realm settings that are not register fields (email_address_visibility moved to users). */
const NOT_IN_REGISTER: ReadonlySet<string> = new Set([
  'email_address_visibility',
  'external_avatars',
  'icon_file',
]);

/** Default Jitsi server the server points video calls at. */
export const SERVER_JITSI_SERVER_URL = 'https://meet.jit.si';

export const VIDEO_CHAT_PROVIDERS = {
  disabled: { name: 'None', id: 0 },
  jitsi_meet: { name: 'Jitsi Meet', id: 1 },
} as const;

export const GIPHY_RATING_OPTIONS = {
  disabled: { name: 'GIPHY integration disabled', id: 0 },
  y: { name: 'Allow GIFs rated Y (Very young audience)', id: 1 },
  g: { name: 'Allow GIFs rated G (General audience)', id: 2 },
  pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 3 },
  'pg-13': { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 4 },
  r: { name: 'Allow GIFs rated R (Restricted)', id: 5 },
} as const;

/** External account types a custom profile field of type 7 can point at. */
export const DEFAULT_EXTERNAL_ACCOUNTS = {
  github: {
    text: 'GitHub',
    url_pattern: 'https://github.com/%(username)s',
    name: 'GitHub',
    hint: 'Enter your GitHub username',
  },
  twitter: {
    text: 'X (Twitter)',
    url_pattern: 'https://x.com/%(username)s',
    name: 'X',
    hint: 'Enter your X (Twitter) username',
  },
} as const;

/** `realm_authentication_methods` / the `authentication_methods` of realm update_dict events. */
export function authenticationMethods(
  settings: RealmSettings,
): Record<string, { enabled: boolean; available: boolean }> {
  return { Email: { enabled: settings.password_auth_enabled, available: true } };
}

/** The system group a group-setting value names, if it names one. */
function systemGroupOf(view: RealmView, value: GroupSettingValue): SystemGroupName | null {
  if (typeof value !== 'number') return null;
  const g = view.groupsById.get(value);
  return g && g.is_system_group ? (g.name as SystemGroupName) : null;
}

// The deprecated integer policies: 1 members, 2 administrators, 3 full members, 4 moderators,
// 5 everyone, 6 nobody, 7 owners (the reference's SYSTEM_GROUPS_ENUM_MAP), each policy allowing a
// subset; a value outside it (a custom group) reports the policy of the widest allowed group.
export const POLICY_OF_GROUP: Readonly<Partial<Record<SystemGroupName, number>>> = {
  'role:owners': 7,
  'role:administrators': 2,
  'role:moderators': 4,
  'role:fullmembers': 3,
  'role:members': 1,
  'role:everyone': 5,
  'role:nobody': 6,
};
export const WILDCARD_POLICY_OF_GROUP: Readonly<Partial<Record<SystemGroupName, number>>> = {
  'role:everyone': 1,
  'role:members': 2,
  'role:fullmembers': 3,
  'role:administrators': 5,
  'role:nobody': 6,
  'role:moderators': 7,
};

const COMMON = [1, 2, 3, 4];

/**
 * The deprecated `realm_*_policy` fields, derived from the group settings. `groupSetting` gives
 * each setting's value (the view's by default; a mutation passes the values it is about to
 * commit, to announce the policies that change with them).
 */
export function deprecatedPolicies(
  view: RealmView,
  groupSetting: (name: RealmGroupSettingName) => GroupSettingValue = (name) =>
    view.groupSetting(name),
): Record<string, number> {
  const groupOf = (setting: RealmGroupSettingName) => systemGroupOf(view, groupSetting(setting));
  const policy = (setting: RealmGroupSettingName, allowed: readonly number[], fallback: number) => {
    const name = groupOf(setting);
    const value = name === null ? undefined : POLICY_OF_GROUP[name];
    return value !== undefined && allowed.includes(value) ? value : fallback;
  };
  const wildcardGroup = groupOf('can_mention_many_users_group');
  const botsGroup = groupOf('can_create_bots_group');
  const writeOnlyBotsGroup = groupOf('can_create_write_only_bots_group');
  const wide = (g: SystemGroupName | null) => g === 'role:members' || g === 'role:everyone';
  return {
    realm_create_public_stream_policy: policy('can_create_public_channel_group', COMMON, 1),
    realm_create_private_stream_policy: policy('can_create_private_channel_group', COMMON, 1),
    realm_create_web_public_stream_policy: policy(
      'can_create_web_public_channel_group',
      [2, 4, 6, 7],
      4,
    ),
    realm_wildcard_mention_policy:
      (wildcardGroup === null ? undefined : WILDCARD_POLICY_OF_GROUP[wildcardGroup]) ?? 1,
    realm_add_custom_emoji_policy: policy('can_add_custom_emoji_group', COMMON, 1),
    realm_delete_own_message_policy: policy('can_delete_own_message_group', [1, 2, 3, 4, 5], 5),
    realm_invite_to_stream_policy: policy('can_add_subscribers_group', COMMON, 1),
    realm_invite_to_realm_policy: policy('can_invite_users_group', [1, 2, 3, 4, 6], 1),
    realm_move_messages_between_streams_policy: policy(
      'can_move_messages_between_channels_group',
      [1, 2, 3, 4, 6],
      1,
    ),
    // 1 everyone may create any bot, 2 only incoming-webhook bots, 3 administrators only.
    realm_bot_creation_policy: wide(botsGroup) ? 1 : wide(writeOnlyBotsGroup) ? 2 : 3,
  };
}

function fillRealm(req: StateRequest, state: Record<string, unknown>): void {
  const view = req.realm;
  const s = view.settings;
  const spectator = req.user === null;

  for (const key of Object.keys(REALM_SETTING_DEFAULTS) as (keyof RealmSettings)[]) {
    if (!NOT_IN_REGISTER.has(key)) state[`realm_${key}`] = s[key];
  }
  for (const key of Object.keys(REALM_GROUP_SETTING_DEFAULTS) as RealmGroupSettingName[]) {
    state[`realm_${key}`] = view.groupSetting(key);
  }
  Object.assign(state, deprecatedPolicies(view));

  // Derived from the settings they summarize, as the reference.
  state.realm_allow_edit_history = s.message_edit_history_visibility_policy !== 'none';
  state.realm_mandatory_topics = s.topics_policy === 'disable_empty_topic';
  // Spectators cannot edit, and see no presence.
  if (spectator) {
    state.realm_allow_message_editing = false;
    state.realm_presence_disabled = true;
  }
  // This server sends no digest e-mails (the realm's setting is shown as stored, as its
  // `realm` events report it).
  state.settings_send_digest_emails = false;

  const row = view.row;
  const url = realmUrl(req.config, row.string_id);
  state.realm_name = row.name;
  state.realm_description = row.description;
  state.realm_date_created = row.date_created;
  state.realm_url = url;
  state.realm_uri = url;
  state.realm_icon_url = realmIconUrl(row, s);
  state.realm_bot_domain = realmHost(req.config, row.string_id).replace(/:\d+$/, '');
  state.realm_authentication_methods = authenticationMethods(s);
  state.realm_email_auth_enabled = s.password_auth_enabled;
  state.realm_is_zephyr_mirror_realm = false;
  state.realm_available_video_chat_providers = VIDEO_CHAT_PROVIDERS;
  state.realm_default_external_accounts = DEFAULT_EXTERNAL_ACCOUNTS;
  state.realm_empty_topic_display_name = EMPTY_TOPIC_DISPLAY_NAME;
  state.zulip_plan_is_not_limited = s.plan_type !== 2;
  state.jitsi_server_url = s.jitsi_server_url ?? SERVER_JITSI_SERVER_URL;
  state.giphy_rating_options = GIPHY_RATING_OPTIONS;

  // The server.
  state.server_generation = req.serverGeneration;
  state.development_environment = false;
  state.server_jitsi_server_url = SERVER_JITSI_SERVER_URL;
  state.server_emoji_data_url = url + emojiDataPath();
  state.server_inline_image_preview = true;
  state.server_inline_url_embed_preview = false;
  state.server_thumbnail_formats = [];
  state.server_avatar_changes_disabled = false;
  state.server_name_changes_disabled = false;
  state.server_needs_upgrade = false;
  state.server_web_public_streams_enabled = true;
  state.server_can_summarize_topics = false;
  state.password_min_length = MIN_PASSWORD_LENGTH;
  state.password_max_length = MAX_PASSWORD_LENGTH;
  state.password_min_guesses = 0;
  state.max_file_upload_size_mib = Math.floor(req.config.maxFileUploadBytes / (1024 * 1024));

  // Limits and protocol constants.
  state.max_message_length = MAX_MESSAGE_LENGTH;
  state.max_topic_length = MAX_TOPIC_LENGTH;
  state.max_stream_name_length = MAX_CHANNEL_NAME_LENGTH;
  state.max_stream_description_length = MAX_CHANNEL_DESCRIPTION_LENGTH;
  // A live client hears from its queue (an event, else a heartbeat) within the longest heartbeat
  // interval; this is how long it may wait before taking the connection for lost: the reference's
  // 90 s, or twice the interval where the server is set to beat faster (tests do).
  state.event_queue_longpoll_timeout_seconds = Math.min(
    EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
    Math.ceil((2 * (req.config.heartbeatMs + req.config.heartbeatJitterMs)) / 1000),
  );
  state.server_typing_started_expiry_period_milliseconds =
    TYPING_STARTED_EXPIRY_PERIOD_MILLISECONDS;
  state.server_typing_stopped_wait_period_milliseconds = TYPING_STOPPED_WAIT_PERIOD_MILLISECONDS;
  state.server_typing_started_wait_period_milliseconds = TYPING_STARTED_WAIT_PERIOD_MILLISECONDS;
  state.server_presence_ping_interval_seconds = PRESENCE_PING_INTERVAL_SECONDS;
  state.server_presence_offline_threshold_seconds = PRESENCE_OFFLINE_THRESHOLD_SECONDS;
}

export const realmState: StateContributor = { types: ['realm'], fill: fillRealm };
