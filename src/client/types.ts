/**
 * The wire shapes the client module and the web app use: the fields of the API's objects and
 * events that Confab's own client reads (../shared/reference/openapi.yaml describes each in full;
 * fields not named here may be present). Types only: this file compiles to nothing.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type Reaction = {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
};

export type DisplayRecipient = { id: number; email: string; full_name: string };

/** One event of a widget message (its first, msg_type `widget`, describes the widget). */
export type Submessage = {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  /** JSON text. */
  content: string;
};

export type Message = {
  id: number;
  sender_id: number;
  sender_full_name: string;
  sender_email: string;
  avatar_url?: string | null;
  timestamp: number;
  content: string;
  content_type?: string;
  type: 'stream' | 'private';
  stream_id?: number;
  subject: string;
  display_recipient: string | DisplayRecipient[];
  reactions: Reaction[];
  /** A widget's (poll, to-do list) submessages, oldest first; absent on a local echo. */
  submessages?: Submessage[];
  flags?: string[];
  last_edit_timestamp?: number;
  last_moved_timestamp?: number;
  is_me_message?: boolean;
  client?: string;
  /** Set by the app on a message it echoed locally before the server answered. */
  local_id?: string;
};

export type Subscription = {
  stream_id: number;
  name: string;
  description: string;
  rendered_description?: string;
  color: string;
  invite_only: boolean;
  is_web_public?: boolean;
  is_muted: boolean;
  in_home_view?: boolean;
  pin_to_top: boolean;
  is_archived?: boolean;
  desktop_notifications: boolean | null;
  audible_notifications?: boolean | null;
  push_notifications?: boolean | null;
  email_notifications?: boolean | null;
  wildcard_mentions_notify?: boolean | null;
  first_message_id?: number | null;
  topics_policy?: string;
  history_public_to_subscribers?: boolean;
  creator_id?: number | null;
  date_created?: number;
  /** Group-setting values (a group's id, or `{direct_members, direct_subgroups}`). */
  can_add_subscribers_group?: GroupSettingValue;
  can_remove_subscribers_group?: GroupSettingValue;
  can_administer_channel_group?: GroupSettingValue;
  can_subscribe_group?: GroupSettingValue;
  can_send_message_group?: GroupSettingValue;
};

export type Channel = {
  stream_id: number;
  name: string;
  description: string;
  rendered_description?: string;
  invite_only: boolean;
  is_web_public?: boolean;
  is_archived?: boolean;
  history_public_to_subscribers?: boolean;
  creator_id?: number | null;
  date_created?: number;
  /** Group-setting values (a group's id, or `{direct_members, direct_subgroups}`). */
  can_add_subscribers_group?: GroupSettingValue;
  can_remove_subscribers_group?: GroupSettingValue;
  can_administer_channel_group?: GroupSettingValue;
  can_subscribe_group?: GroupSettingValue;
  can_send_message_group?: GroupSettingValue;
};

/** A group-setting value: a user group's id, or an anonymous group of members and subgroups. */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

export type User = {
  user_id: number;
  email: string;
  full_name: string;
  avatar_url?: string | null;
  avatar_version?: number;
  is_bot: boolean;
  is_active?: boolean;
  role?: number;
  is_admin?: boolean;
  is_owner?: boolean;
  is_guest?: boolean;
  timezone?: string;
  delivery_email?: string | null;
  /** A bot's owner (bots only; null for one without, as the realm's system bots). */
  bot_owner_id?: number | null;
  /** A bot's type (1 generic, 2 incoming webhook, 3 outgoing webhook…); null for a person. */
  bot_type?: number | null;
  /** When the account was made (ISO 8601). */
  date_joined?: string;
  /** The person's custom profile field values, by field id (GET /users with the fields asked). */
  profile_data?: ProfileData;
  /** Set (true) on the entries of `cross_realm_bots`: Notification Bot, Welcome Bot. */
  is_system_bot?: boolean;
};

/** A user's custom profile field values, by field id (a person field's value: ids as JSON). */
export type ProfileData = Record<string, { value: string; rendered_value?: string | null }>;

/** A custom profile field of the realm (register's `custom_profile_fields`). */
export type CustomProfileField = {
  id: number;
  name: string;
  type: number;
  hint: string;
  /** JSON: a choice field's options, an external account's subtype and URL pattern; else ''. */
  field_data: string;
  order: number;
  required?: boolean;
  editable_by_user?: boolean;
  display_in_profile_summary?: boolean;
};

export type UserGroup = {
  id: number;
  name: string;
  description: string;
  members: number[];
  is_system_group?: boolean;
  deactivated?: boolean;
};

export type UnreadMsgs = {
  count: number;
  pms: { other_user_id: number; unread_message_ids: number[] }[];
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
  huddles: { user_ids_string: string; unread_message_ids: number[] }[];
  mentions: number[];
  old_unreads_missing: boolean;
};

export type UserTopic = {
  stream_id: number;
  topic_name: string;
  last_updated: number;
  visibility_policy: number;
};

export type RealmEmoji = {
  id: string;
  name: string;
  source_url: string;
  still_url?: string | null;
  deactivated: boolean;
  author_id?: number | null;
};

export type UserSettings = {
  twenty_four_hour_time: boolean;
  color_scheme: number;
  enter_sends?: boolean;
  enable_desktop_notifications: boolean;
  enable_sounds?: boolean;
  enable_stream_desktop_notifications: boolean;
  wildcard_mentions_notify?: boolean;
  send_private_typing_notifications?: boolean;
  send_stream_typing_notifications?: boolean;
  receives_typing_notifications?: boolean;
  web_mark_read_on_scroll_policy?: number;
  presence_enabled?: boolean;
  [key: string]: Json | undefined;
};

/** The parts of `POST /register`'s answer the app reads (many more fields are sent). */
export type RegisterResponse = {
  queue_id: string;
  last_event_id: number;
  service_feature_level?: number;
  zulip_feature_level?: number;
  service_version?: string;
  event_queue_longpoll_timeout_seconds?: number;
  user_id: number;
  email: string;
  full_name: string;
  is_admin?: boolean;
  is_owner?: boolean;
  is_moderator?: boolean;
  is_guest?: boolean;
  can_invite_others_to_realm?: boolean;
  can_create_multiuse_invite?: boolean;
  realm_name?: string;
  realm_url?: string;
  realm_icon_url?: string;
  realm_empty_topic_display_name?: string;
  realm_allow_message_editing?: boolean;
  realm_message_content_edit_limit_seconds?: number | null;
  realm_message_content_delete_limit_seconds?: number | null;
  realm_move_messages_within_stream_limit_seconds?: number | null;
  realm_mandatory_topics?: boolean;
  realm_can_delete_own_message_group?:
    number | { direct_members: number[]; direct_subgroups: number[] };
  realm_create_multiuse_invite_group?: number;
  realm_invite_required?: boolean;
  realm_emoji?: Record<string, RealmEmoji>;
  realm_users?: User[];
  custom_profile_fields?: CustomProfileField[];
  realm_non_active_users?: User[];
  realm_user_groups?: UserGroup[];
  cross_realm_bots?: User[];
  subscriptions?: Subscription[];
  unsubscribed?: Subscription[];
  never_subscribed?: Channel[];
  unread_msgs?: UnreadMsgs;
  /** The ids of the user's starred messages (`starred_messages`). */
  starred_messages?: number[];
  user_topics?: UserTopic[];
  user_settings?: UserSettings;
  recent_private_conversations?: { user_ids: number[]; max_message_id: number }[];
  max_message_id?: number;
  server_typing_started_expiry_period_milliseconds?: number;
  server_typing_stopped_wait_period_milliseconds?: number;
  server_typing_started_wait_period_milliseconds?: number;
  server_presence_ping_interval_seconds?: number;
  server_presence_offline_threshold_seconds?: number;
  server_emoji_data_url?: string;
  max_file_upload_size_mib?: number;
  max_message_length?: number;
  max_topic_length?: number;
  presences?: Record<string, { active_timestamp?: number; idle_timestamp?: number }>;
  presence_last_update_id?: number;
  realm_presence_disabled?: boolean;
  server_timestamp?: number;
  /** Users' statuses, by user id (only those who set one, or are away). */
  user_status?: Record<string, UserStatus>;
  /** Who the user muted, and when (UNIX seconds). */
  muted_users?: { id: number; timestamp: number }[];
  [key: string]: unknown;
};

/** A user's status as the API gives it: only the keys that are set. */
export type UserStatus = {
  away?: boolean;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
};

export type MessagesResponse = {
  messages: Message[];
  anchor: number;
  found_anchor: boolean;
  found_oldest: boolean;
  found_newest: boolean;
  history_limited: boolean;
};

export type NarrowTerm = {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
};

/**
 * A server event, as `GET /events` and the event WebSocket deliver it. The union names the
 * events the app reduces; any other type arrives as `OtherEvent` and is ignored.
 */
export type ServerEvent =
  | HeartbeatEvent
  | MessageEvent
  | UpdateMessageEvent
  | DeleteMessageEvent
  | FlagsEvent
  | ReactionEvent
  | SubmessageEvent
  | SubscriptionEvent
  | StreamEvent
  | RealmUserEvent
  | TypingEvent
  | UserTopicEvent
  | UserSettingsEvent
  | RealmEmojiEvent
  | RealmEvent
  | RealmUserSettingsDefaultsEvent
  | UserGroupEvent
  | PresenceEvent
  | UserStatusEvent
  | CustomProfileFieldsEvent
  | AlertWordsEvent
  | MutedUsersEvent
  | InvitesChangedEvent
  | RealmExportEvent
  | AttachmentEvent
  | DefaultStreamsEvent
  | RealmLinkifiersEvent
  | RealmPlaygroundsEvent
  | RestartEvent
  | OtherEvent;

type Base = { id: number };

export type HeartbeatEvent = Base & { type: 'heartbeat' };
export type RestartEvent = Base & { type: 'restart'; server_generation?: number };

export type MessageEvent = Base & {
  type: 'message';
  message: Message;
  flags: string[];
  local_message_id?: string;
};

export type UpdateMessageEvent = Base & {
  type: 'update_message';
  user_id: number | null;
  message_id: number;
  message_ids: number[];
  flags?: string[];
  edit_timestamp: number;
  rendering_only?: boolean;
  stream_id?: number;
  new_stream_id?: number;
  orig_subject?: string;
  subject?: string;
  topic?: string;
  propagate_mode?: string;
  content?: string;
  rendered_content?: string;
  is_me_message?: boolean;
};

export type DeleteMessageEvent = Base & {
  type: 'delete_message';
  message_type: 'stream' | 'private';
  message_ids?: number[];
  message_id?: number;
  stream_id?: number;
  topic?: string;
};

export type FlagsEvent = Base & {
  type: 'update_message_flags';
  op: 'add' | 'remove';
  operation?: 'add' | 'remove';
  flag: string;
  messages: number[];
  all: boolean;
  message_details?: Record<
    string,
    {
      type: 'stream' | 'private';
      mentioned?: boolean;
      user_ids?: number[];
      stream_id?: number;
      topic?: string;
      unmuted_stream_msg?: boolean;
    }
  >;
};

export type ReactionEvent = Base & {
  type: 'reaction';
  op: 'add' | 'remove';
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
};

export type SubmessageEvent = Base & {
  type: 'submessage';
  message_id: number;
  submessage_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
};

export type SubscriptionEvent = Base &
  (
    | { type: 'subscription'; op: 'add'; subscriptions: Subscription[] }
    | { type: 'subscription'; op: 'remove'; subscriptions: { stream_id: number; name: string }[] }
    | { type: 'subscription'; op: 'update'; stream_id: number; property: string; value: Json }
    | {
        type: 'subscription';
        op: 'peer_add' | 'peer_remove';
        stream_ids: number[];
        user_ids: number[];
      }
  );

export type StreamEvent = Base &
  (
    | { type: 'stream'; op: 'create' | 'delete'; streams: Channel[]; stream_ids?: number[] }
    | {
        type: 'stream';
        op: 'update';
        stream_id: number;
        name: string;
        property: string;
        value: Json;
        /** With `description`: the description as HTML. */
        rendered_description?: string;
      }
  );

export type RealmUserEvent = Base &
  (
    | { type: 'realm_user'; op: 'add'; person: User }
    | { type: 'realm_user'; op: 'remove'; person: { user_id: number; full_name?: string } }
    | {
        type: 'realm_user';
        op: 'update';
        person: Partial<User> & {
          user_id: number;
          /** A changed custom profile field value (null: removed). */
          custom_profile_field?: { id: number; value: string | null; rendered_value?: string };
        };
      }
  );

/** The realm's custom profile fields changed: the whole list, in order. */
export type CustomProfileFieldsEvent = Base & {
  type: 'custom_profile_fields';
  fields: CustomProfileField[];
};

export type TypingEvent = Base & {
  type: 'typing';
  op: 'start' | 'stop';
  message_type: 'direct' | 'private' | 'stream';
  sender: { user_id: number; email: string };
  recipients?: { user_id: number; email: string }[];
  stream_id?: number;
  topic?: string;
};

export type UserTopicEvent = Base & { type: 'user_topic' } & UserTopic;

export type UserSettingsEvent = Base & {
  type: 'user_settings';
  op: 'update';
  property: string;
  value: Json;
};

/** A change of the personal settings new users start with (register's `realm_user_settings_defaults`). */
export type RealmUserSettingsDefaultsEvent = Base & {
  type: 'realm_user_settings_defaults';
  op: 'update';
  property: string;
  value: Json;
};

export type RealmEmojiEvent = Base & {
  type: 'realm_emoji';
  op: 'update';
  realm_emoji: Record<string, RealmEmoji>;
};

export type RealmEvent = Base &
  (
    | { type: 'realm'; op: 'update'; property: string; value: Json }
    | { type: 'realm'; op: 'update_dict'; property: string; data: Record<string, Json> }
    | { type: 'realm'; op: 'deactivated' }
  );

export type UserGroupEvent = Base &
  (
    | { type: 'user_group'; op: 'add'; group: UserGroup }
    | { type: 'user_group'; op: 'update'; group_id: number; data: Partial<UserGroup> }
    | {
        type: 'user_group';
        op: 'add_members' | 'remove_members';
        group_id: number;
        user_ids: number[];
      }
    | { type: 'user_group'; op: 'remove'; group_id: number }
    | {
        type: 'user_group';
        op: 'add_subgroups' | 'remove_subgroups';
        group_id: number;
        direct_subgroup_ids: number[];
      }
  );

/** The answer to `POST /users/me/presence` (nothing of it for a `ping_only` report). */
export type PresenceAnswer = {
  presences?: Record<string, { active_timestamp?: number; idle_timestamp?: number }>;
  presence_last_update_id?: number;
  server_timestamp?: number;
};

export type PresenceEvent = Base & {
  type: 'presence';
  user_id: number;
  presences?: Record<string, { active_timestamp?: number; idle_timestamp?: number }>;
  presence?: Record<string, { status: string; timestamp: number }>;
  /** The server's time when it was sent (UNIX seconds, with a fraction). */
  server_timestamp?: number;
};

/** A user's status changed: only what changed is in it (`''` clears the text or the emoji). */
export type UserStatusEvent = Base & { type: 'user_status'; user_id: number } & UserStatus;

/** The user's alert words changed: the whole list. */
export type AlertWordsEvent = Base & { type: 'alert_words'; alert_words: string[] };

/** The user muted or unmuted someone: the whole list. */
export type MutedUsersEvent = Base & {
  type: 'muted_users';
  muted_users: { id: number; timestamp: number }[];
};

/** The realm's exports changed (administrators): the whole list, as GET /export/realm. */
export type RealmExportEvent = Base & {
  type: 'realm_export';
  exports: {
    id: number;
    export_time: number;
    acting_user_id: number | null;
    export_url: string | null;
    deleted_timestamp: number | null;
    failed_timestamp: number | null;
    pending: boolean;
    export_type: number;
  }[];
};

/** Invitations the user may manage changed (no details: GET /invites again). */
export type InvitesChangedEvent = Base & { type: 'invites_changed' };

/** One of the user's uploads was added, changed (its messages) or removed. */
export type AttachmentEvent = Base & {
  type: 'attachment';
  op: 'add' | 'update' | 'remove';
  /** `remove`: only the id. Times in milliseconds. */
  attachment:
    | {
        id: number;
        name: string;
        path_id: string;
        size: number;
        create_time: number;
        messages: { id: number; date_sent: number }[];
      }
    | { id: number };
  /** The realm's uploads' bytes after the change. */
  upload_space_used?: number;
};

/** The realm's default channels changed: their ids. */
export type DefaultStreamsEvent = Base & { type: 'default_streams'; default_streams: number[] };

/** The realm's linkifiers changed: the whole list, in processing order. */
export type RealmLinkifiersEvent = Base & {
  type: 'realm_linkifiers';
  realm_linkifiers: { id: number; pattern: string; url_template: string }[];
};

/** The realm's code playgrounds changed: the whole list. */
export type RealmPlaygroundsEvent = Base & {
  type: 'realm_playgrounds';
  realm_playgrounds: {
    id: number;
    name: string;
    pygments_language: string;
    url_template: string;
  }[];
};

/** Every event type the app does not reduce. */
export type OtherEvent = Base & {
  type:
    | 'default_stream_groups'
    | 'drafts'
    | 'has_zoom_token'
    | 'muted_topics'
    | 'onboarding_steps'
    | 'realm_bot'
    | 'realm_domains'
    | 'saved_snippets'
    | 'scheduled_messages'
    | 'starred_messages'
    | 'update_display_settings'
    | 'update_global_notifications'
    | 'web_reload_client';
};
