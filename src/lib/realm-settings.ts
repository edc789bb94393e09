/**
 * Realm (organization) settings and their defaults, as the reference server creates a new
 * organization. The `realms.settings` column stores only values that differ from these, so adding
 * a setting here needs no migration. Register snapshots prefix each key with `realm_`.
 */
import type { SystemGroupName } from './roles.js';
import { longerThan } from './strings.js';

/** The reference's Realm.MAX_REALM_NAME_LENGTH, in code points. */
export const MAX_REALM_NAME_LENGTH = 40;

export type RealmNameProblem = 'blank' | 'too long';

/**
 * A realm's name as stored: trimmed, then 1 to MAX_REALM_NAME_LENGTH characters (code points).
 * The first start, the admin tool's create-realm and rename-realm, and PATCH /realm (the
 * realm.update_settings mutation) check it here. A name out of bounds goes to `refuse`, which
 * throws the caller's kind of error: with the problem (the API tells a blank name from a long one)
 * and this bound's one message, "must be 1 to 40 characters", for callers that name the setting
 * themselves.
 */
export function checkRealmName(
  raw: string,
  refuse: (problem: RealmNameProblem, message: string) => never,
): string {
  const name = raw.trim();
  const message = `must be 1 to ${MAX_REALM_NAME_LENGTH} characters`;
  if (name === '') refuse('blank', message);
  if (longerThan(name, MAX_REALM_NAME_LENGTH)) refuse('too long', message);
  return name;
}
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** A group-setting value: a user group id, or an anonymous group of members and subgroups. */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

export const REALM_SETTING_DEFAULTS = {
  allow_message_editing: true,
  allow_edit_history: true,
  message_edit_history_visibility_policy: 'all' as 'all' | 'moves' | 'none',
  message_content_edit_limit_seconds: 600 as number | null,
  message_content_delete_limit_seconds: null as number | null,
  move_messages_within_stream_limit_seconds: 604800 as number | null,
  move_messages_between_streams_limit_seconds: 604800 as number | null,
  mandatory_topics: false,
  topics_policy: 'allow_empty_topic' as 'allow_empty_topic' | 'disable_empty_topic',
  waiting_period_threshold: 0,
  message_retention_days: -1,
  default_language: 'en',
  invite_required: true,
  emails_restricted_to_domains: false,
  disallow_disposable_email_addresses: true,
  digest_emails_enabled: false,
  digest_weekday: 1,
  send_welcome_emails: true,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  enable_spectator_access: false,
  email_changes_disabled: false,
  name_changes_disabled: false,
  avatar_changes_disabled: false,
  require_unique_names: false,
  video_chat_provider: 1,
  jitsi_server_url: null as string | null,
  giphy_rating: 2,
  enable_read_receipts: false,
  org_type: 0,
  plan_type: 1,
  default_code_block_language: '',
  message_content_allowed_in_email_notifications: true,
  presence_disabled: false,
  want_advertise_in_communities_directory: false,
  enable_guest_user_indicator: true,
  enable_guest_user_dm_warning: true,
  new_stream_announcements_stream_id: -1,
  signup_announcements_stream_id: -1,
  zulip_update_announcements_stream_id: -1,
  moderation_request_channel_id: -1,
  email_address_visibility: 1,
  icon_source: 'G' as 'G' | 'U',
  /**
   * Confab's: the file name of the uploaded icon (DATA_DIR/realm-icons/<realm id>/, served at
   * /user_avatars/<realm id>/realm/<name>), a fresh one at each upload; '' before any. Not in
   * register: clients get `realm_icon_url`.
   */
  icon_file: '',
  logo_source: 'D' as 'D' | 'U',
  night_logo_source: 'D' as 'D' | 'U',
  upload_quota_mib: null as number | null,
  push_notifications_enabled: false,
  push_notifications_enabled_end_timestamp: null as number | null,
  /** Password login for this realm (the realm_authentication_methods `password` entry). */
  password_auth_enabled: true,
  /**
   * Confab's: users without an uploaded avatar (and the realm without an icon) are shown with the
   * external avatar host's images, as the reference's default; off, the server's own default
   * image (src/lib/avatars.ts). Set by the operator (`manage realm-external-avatars`).
   */
  external_avatars: false,
};
export type RealmSettings = typeof REALM_SETTING_DEFAULTS;
export type RealmSettingName = keyof RealmSettings;

/**
 * Realm-level permission settings that take a group-setting value, with the system group each
 * defaults to in a new organization.
 */
export const REALM_GROUP_SETTING_DEFAULTS = {
  can_access_all_users_group: 'role:everyone',
  can_add_custom_emoji_group: 'role:members',
  can_add_subscribers_group: 'role:members',
  can_create_bots_group: 'role:members',
  can_create_groups: 'role:members',
  can_create_private_channel_group: 'role:members',
  can_create_public_channel_group: 'role:members',
  can_create_web_public_channel_group: 'role:owners',
  can_create_write_only_bots_group: 'role:members',
  can_delete_any_message_group: 'role:administrators',
  can_delete_own_message_group: 'role:everyone',
  can_invite_users_group: 'role:members',
  can_manage_all_groups: 'role:owners',
  can_manage_billing_group: 'role:administrators',
  can_mention_many_users_group: 'role:administrators',
  can_move_messages_between_channels_group: 'role:members',
  can_move_messages_between_topics_group: 'role:everyone',
  can_resolve_topics_group: 'role:everyone',
  can_set_delete_message_policy_group: 'role:moderators',
  can_set_topics_policy_group: 'role:moderators',
  can_summarize_topics_group: 'role:everyone',
  create_multiuse_invite_group: 'role:administrators',
  direct_message_initiator_group: 'role:everyone',
  direct_message_permission_group: 'role:everyone',
} as const satisfies Record<string, SystemGroupName>;
export type RealmGroupSettingName = keyof typeof REALM_GROUP_SETTING_DEFAULTS;

/** What is stored in `realms.settings`: overrides of either table above. */
export type StoredRealmSettings = Partial<RealmSettings> &
  Partial<Record<RealmGroupSettingName, GroupSettingValue>>;

export function isRealmGroupSettingName(name: string): name is RealmGroupSettingName {
  return Object.hasOwn(REALM_GROUP_SETTING_DEFAULTS, name);
}
