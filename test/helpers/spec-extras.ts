/**
 * Fields spec/API.md (or a newer API level than openapi.yaml describes) adds beyond the OpenAPI
 * description, removed before schema validation (assertMatchesOpenApi's `allowExtra`). Every name
 * here is a deliberate, documented difference, not a way to silence a failing check.
 */

/** The user object: the spec lists `is_billing_admin` among a user's fields. */
export const USER_SPEC_EXTRAS = ['is_billing_admin'] as const;

/**
 * Channel objects: the spec's channel table has the two delete-permission groups, `topics_policy`
 * and `folder_id`; and register `streams` carry `subscribers` with include_subscribers.
 */
export const CHANNEL_SPEC_EXTRAS = [
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'topics_policy',
  'folder_id',
  'subscribers',
] as const;

/**
 * The register snapshot: the deprecated realm policies the spec's register table lists, realm
 * settings newer than the description, and newer personal settings.
 */
export const REGISTER_SPEC_EXTRAS = [
  ...USER_SPEC_EXTRAS,
  'realm_add_custom_emoji_policy',
  'realm_delete_own_message_policy',
  'realm_bot_creation_policy',
  'realm_invite_to_stream_policy',
  'realm_invite_to_realm_policy',
  'realm_move_messages_between_streams_policy',
  'realm_can_set_delete_message_policy_group',
  'realm_can_set_topics_policy_group',
  'realm_topics_policy',
  'web_left_sidebar_show_channel_folders',
  'web_left_sidebar_unreads_count_summary',
  'web_inbox_show_channel_folders',
  'resolved_topic_notice_auto_read_policy',
] as const;

/**
 * The version fields under the names existing clients read (`zulip_*`), served beside the spec's
 * `service_*` ones everywhere (docs/api.md "Wire names").
 */
export const WIRE_NAME_EXTRAS = [
  'zulip_feature_level',
  'zulip_version',
  'zulip_merge_base',
] as const;

/** GET /server_settings: whether the server sends mail (docs/mail.md; the web app's cue). */
export const SERVER_SETTINGS_EXTRAS = ['outgoing_mail_enabled'] as const;
