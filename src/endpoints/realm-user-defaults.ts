/**
 * PATCH /realm/user_settings_defaults (administrators): the personal settings new users start
 * with. Reference: views/realm.py update_realm_user_settings_defaults. Each value is checked as
 * PATCH /settings checks it (same parameter schemas, same extra checks); the settings accepted
 * are the ones the API description lists for this endpoint.
 */
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { OrganizationAdministratorRequiredError } from '../lib/errors.js';
import { Role } from '../lib/roles.js';
import {
  checkSettingsValues,
  type UserSettingName,
  type UserSettings,
} from '../lib/user-settings.js';
import { settingParam } from './settings.js';

/** The settings a realm may choose defaults for (not the language, not e-mail consents). */
export const REALM_DEFAULT_SETTINGS: readonly UserSettingName[] = [
  'starred_message_counts',
  'receives_typing_notifications',
  'web_suggest_update_timezone',
  'fluid_layout_width',
  'high_contrast_mode',
  'web_mark_read_on_scroll_policy',
  'web_channel_default_view',
  'web_font_size_px',
  'web_line_height_percent',
  'color_scheme',
  'enable_drafts_synchronization',
  'translate_emoticons',
  'display_emoji_reaction_users',
  'web_home_view',
  'web_escape_navigates_to_home_view',
  'left_side_userlist',
  'emojiset',
  'demote_inactive_streams',
  'user_list_style',
  'web_animate_image_previews',
  'web_stream_unreads_count_display_policy',
  'hide_ai_features',
  'enable_stream_desktop_notifications',
  'enable_stream_email_notifications',
  'enable_stream_push_notifications',
  'enable_stream_audible_notifications',
  'notification_sound',
  'enable_desktop_notifications',
  'enable_sounds',
  'enable_followed_topic_desktop_notifications',
  'enable_followed_topic_email_notifications',
  'enable_followed_topic_push_notifications',
  'enable_followed_topic_audible_notifications',
  'email_notifications_batching_period_seconds',
  'enable_offline_email_notifications',
  'enable_offline_push_notifications',
  'enable_online_push_notifications',
  'enable_digest_emails',
  'message_content_in_email_notifications',
  'pm_content_in_desktop_notifications',
  'wildcard_mentions_notify',
  'enable_followed_topic_wildcard_mentions_notify',
  'desktop_icon_count_display',
  'realm_name_in_email_notifications_policy',
  'automatically_follow_topics_policy',
  'automatically_unmute_topics_in_muted_streams_policy',
  'automatically_follow_topics_where_mentioned',
  'presence_enabled',
  'enter_sends',
  'twenty_four_hour_time',
  'send_private_typing_notifications',
  'send_stream_typing_notifications',
  'send_read_receipts',
  'email_address_visibility',
  'web_navigate_to_sent_message',
];

const params = z.object(
  Object.fromEntries(REALM_DEFAULT_SETTINGS.map((name) => [name, settingParam(name)])),
);

/** PATCH /api/v1/realm/user_settings_defaults */
export const updateRealmUserDefaults = endpoint({
  method: 'PATCH',
  path: '/api/v1/realm/user_settings_defaults',
  params,
  handle: async ({ realm, user }: AuthedCtx, raw) => {
    if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
    const p = raw as Partial<UserSettings>;
    checkSettingsValues(p);
    const settings: Partial<Record<UserSettingName, unknown>> = {};
    for (const name of REALM_DEFAULT_SETTINGS) if (p[name] !== undefined) settings[name] = p[name];
    return realm.ask('realm.user_settings_defaults.update', {
      acting_user_id: user.id,
      settings: settings as Partial<UserSettings>,
    });
  },
});
