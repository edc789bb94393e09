/**
 * Personal settings (PATCH /settings, the register `user_settings` object) and their defaults.
 * The `users.settings` column stores only values that differ from these. `timezone` lives in its
 * own column because other users see it.
 */

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
