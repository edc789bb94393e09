/**
 * Personal settings (PATCH /settings, the register `user_settings` object) and their defaults.
 * The `users.settings` column stores only values that differ from these. `timezone` lives in its
 * own column because other users see it.
 */
import { JsonableError } from './errors.js';
import { isAvailableLanguage } from './languages.js';

export const USER_SETTING_DEFAULTS = {
  // Display
  twenty_four_hour_time: false,
  dense_mode: true,
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  starred_message_counts: true,
  receives_typing_notifications: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  web_font_size_px: 16,
  web_line_height_percent: 140,
  color_scheme: 1,
  enable_drafts_synchronization: true,
  translate_emoticons: false,
  display_emoji_reaction_users: true,
  default_language: 'en',
  web_home_view: 'inbox' as 'recent_topics' | 'inbox' | 'all_messages',
  web_escape_navigates_to_home_view: true,
  left_side_userlist: false,
  emojiset: 'vendora' as 'vendora' | 'vendora-blob' | 'vendorb' | 'text',
  demote_inactive_streams: 1,
  user_list_style: 2,
  web_animate_image_previews: 'on_hover' as 'always' | 'on_hover' | 'never',
  web_stream_unreads_count_display_policy: 2,
  hide_ai_features: false,
  web_left_sidebar_show_channel_folders: true,
  web_left_sidebar_unreads_count_summary: true,
  web_inbox_show_channel_folders: true,
  web_suggest_update_timezone: true,
  web_navigate_to_sent_message: true,
  // Notifications
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  notification_sound: 'chime',
  enable_desktop_notifications: true,
  enable_sounds: true,
  email_notifications_batching_period_seconds: 120,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  enable_digest_emails: true,
  enable_login_emails: true,
  enable_marketing_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  desktop_icon_count_display: 1,
  realm_name_in_email_notifications_policy: 1,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 2,
  automatically_follow_topics_where_mentioned: true,
  resolved_topic_notice_auto_read_policy: 'except_followed' as
    'always' | 'except_followed' | 'never',
  // Privacy
  presence_enabled: true,
  enter_sends: false,
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
  allow_private_data_export: false,
  email_address_visibility: 1,
};
export type UserSettings = typeof USER_SETTING_DEFAULTS;
export type UserSettingName = keyof UserSettings;

export function resolveUserSettings(stored: Partial<UserSettings>): UserSettings {
  return { ...USER_SETTING_DEFAULTS, ...stored };
}

/** The emoji sets a user may pick (`emojiset_choices` in register). */
export const EMOJISET_CHOICES: readonly { key: UserSettings['emojiset']; text: string }[] = [
  { key: 'vendora', text: 'Vendor A' },
  { key: 'vendora-blob', text: 'Vendor A (blobs)' },
  { key: 'vendorb', text: 'Vendor B' },
  { key: 'text', text: 'Plain text' },
];

/** Notification sounds clients may play (`available_notification_sounds`); `none` plays nothing. */
export const AVAILABLE_NOTIFICATION_SOUNDS: readonly string[] = ['chime', 'ding', 'none'];

/** Settings that are no longer part of the API (removed at feature level 364). */
export const RETIRED_USER_SETTINGS: ReadonlySet<string> = new Set(['dense_mode']);

/**
 * Settings that clients without the `user_settings_object` capability read as top-level register
 * fields and receive through the legacy `update_display_settings` event (`setting_name`/`setting`)
 * — emit it next to `user_settings` when one of these changes (see src/lib/events.ts).
 */
export const DISPLAY_SETTINGS_LEGACY: readonly UserSettingName[] = [
  'color_scheme',
  'default_language',
  'demote_inactive_streams',
  'emojiset',
  'enable_drafts_synchronization',
  'enter_sends',
  'fluid_layout_width',
  'high_contrast_mode',
  'left_side_userlist',
  'receives_typing_notifications',
  'starred_message_counts',
  'translate_emoticons',
  'twenty_four_hour_time',
  'web_home_view',
];

/** Likewise, through the legacy `update_global_notifications` event (`notification_name`/`setting`). */
export const NOTIFICATION_SETTINGS_LEGACY: readonly UserSettingName[] = [
  'desktop_icon_count_display',
  'email_notifications_batching_period_seconds',
  'enable_desktop_notifications',
  'enable_digest_emails',
  'enable_login_emails',
  'enable_marketing_emails',
  'enable_offline_email_notifications',
  'enable_offline_push_notifications',
  'enable_online_push_notifications',
  'enable_sounds',
  'enable_stream_audible_notifications',
  'enable_stream_desktop_notifications',
  'enable_stream_email_notifications',
  'enable_stream_push_notifications',
  'message_content_in_email_notifications',
  'notification_sound',
  'pm_content_in_desktop_notifications',
  'presence_enabled',
  'realm_name_in_email_notifications_policy',
  'wildcard_mentions_notify',
];

/**
 * The values PATCH /settings accepts for settings that take one of a few values (the reference's
 * *_CHOICES); any other value is refused as "Invalid <setting>". Booleans take booleans; the
 * integers and strings not listed here are checked by checkSettingsValues or take any value.
 */
export const USER_SETTING_CHOICES: Partial<Record<UserSettingName, readonly (number | string)[]>> =
  {
    web_mark_read_on_scroll_policy: [1, 2, 3],
    web_channel_default_view: [1, 2],
    color_scheme: [1, 2, 3],
    web_home_view: ['recent_topics', 'inbox', 'all_messages'],
    emojiset: EMOJISET_CHOICES.map((c) => c.key),
    demote_inactive_streams: [1, 2, 3],
    user_list_style: [1, 2, 3],
    web_animate_image_previews: ['always', 'on_hover', 'never'],
    web_stream_unreads_count_display_policy: [1, 2, 3],
    desktop_icon_count_display: [1, 2, 3, 4],
    realm_name_in_email_notifications_policy: [1, 2, 3],
    automatically_follow_topics_policy: [1, 2, 3, 4],
    automatically_unmute_topics_in_muted_streams_policy: [1, 2, 3, 4],
    resolved_topic_notice_auto_read_policy: ['always', 'except_followed', 'never'],
    email_address_visibility: [1, 2, 3, 4, 5],
  };

/** email_address_visibility values (who may see a user's real e-mail address). */
export const EmailVisibility = {
  EVERYONE: 1,
  MEMBERS: 2,
  ADMINS: 3,
  NOBODY: 4,
  MODERATORS: 5,
} as const;

/** Longest e-mail batching period a user may choose: one week. */
export const MAX_EMAIL_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;

/** The checks the reference makes beyond each value's type (its check_settings_values). */
export function checkSettingsValues(v: {
  default_language?: string | undefined;
  notification_sound?: string | undefined;
  email_notifications_batching_period_seconds?: number | undefined;
}): void {
  if (v.default_language !== undefined && !isAvailableLanguage(v.default_language)) {
    throw new JsonableError('Invalid default_language');
  }
  if (
    v.notification_sound !== undefined &&
    !AVAILABLE_NOTIFICATION_SOUNDS.includes(v.notification_sound)
  ) {
    throw new JsonableError(`Invalid notification sound '${v.notification_sound}'`);
  }
  const period = v.email_notifications_batching_period_seconds;
  if (period !== undefined && (period <= 0 || period > MAX_EMAIL_BATCHING_PERIOD_SECONDS)) {
    throw new JsonableError(`Invalid email batching period: ${period} seconds`);
  }
}

/**
 * Whether a user of role `viewerRole` may see the real e-mail address of another user whose
 * email_address_visibility is `visibility` (the reference's
 * ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS). Everyone always sees their own.
 */
export function canAccessDeliveryEmail(viewerRole: number, visibility: number): boolean {
  switch (visibility) {
    case EmailVisibility.EVERYONE:
      return true;
    case EmailVisibility.MEMBERS:
      return viewerRole <= 400;
    case EmailVisibility.MODERATORS:
      return viewerRole <= 300;
    case EmailVisibility.ADMINS:
      return viewerRole <= 200;
    default:
      return false;
  }
}
