/** What the app registers for (`POST /register`): its capabilities, and the event types. */
export const REGISTER_PARAMS = {
  apply_markdown: true,
  client_gravatar: true,
  slim_presence: true,
  include_subscribers: false,
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: true,
    stream_typing_notifications: true,
    user_settings_object: true,
    empty_topic_name: true,
    linkifier_url_template: true,
    // Deactivated groups stay in realm_user_groups, marked, and their deactivation comes as an
    // update: a mention of one still opens its card, and the groups settings list them apart.
    include_deactivated_groups: true,
    // Archived channels stay in the snapshot, marked, and archiving comes as an update: their
    // names stay known (web/state/chat.ts keeps them apart from the channels one can use).
    archived_channels: true,
  },
};

/**
 * What the queue receives (`event_types`), and what the first snapshot holds
 * (`fetch_event_types`): the realm's users come afterwards, by `GET /users`, so that the first
 * screen of a large realm does not wait for them (its `realm_user` events are in the queue).
 */
export const EVENT_TYPES = [
  'message',
  'update_message',
  'delete_message',
  'update_message_flags',
  'reaction',
  // Votes, new options, struck tasks on polls and to-do lists (web/state/widgets.ts).
  'submessage',
  'subscription',
  'stream',
  'realm_user',
  'realm_user_settings_defaults',
  'typing',
  'user_topic',
  'user_settings',
  'realm_emoji',
  'realm',
  'user_group',
  'restart',
  'heartbeat',
  'recent_private_conversations',
  // Everyone's presence in the snapshot (modern format: slim_presence), and users coming online.
  'presence',
  // Everyone's status (text and emoji), and its changes.
  'user_status',
  // The realm's custom profile fields (people's values come with the users and realm_user).
  'custom_profile_fields',
  // The settings' extra panels (web/app/settings-more.tsx): the user's alert words (also what the
  // messages highlight) and uploads, the realm's linkifiers, code playgrounds, default channels.
  'alert_words',
  'attachment',
  'realm_linkifiers',
  'realm_playgrounds',
  'default_streams',
  // Who the user muted (their messages collapsed, not notified, not shown typing).
  'muted_users',
  // Invitations the user may manage changed (the Invitations panel fetches them again).
  'invites_changed',
  // The realm's exports changed (administrators: the Data exports panel).
  'realm_export',
  // The user's scheduled messages (the sidebar's count, the Scheduled messages view).
  'scheduled_messages',
  // The user's drafts on the server (enable_drafts_synchronization): another browser's.
  'drafts',
];
export const FETCH_TYPES = EVENT_TYPES.filter(
  (t) => t !== 'realm_user' && t !== 'invites_changed' && t !== 'realm_export',
).concat([
  'realm_user_groups',
  // The sidebar's count of starred messages (kept by update_message_flags and delete_message).
  'starred_messages',
]);
