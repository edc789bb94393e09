/**
 * What the reference family's mobile app (zulip-flutter) requires of the server's JSON, written
 * down from its typed models (`lib/api/model/`: initial_snapshot.dart, model.dart, events.dart,
 * reaction.dart and their json_serializable `.g.dart` code; `lib/api/route/` for the results of
 * GET /server_settings, GET /messages and the emoji data file). The app parses the register
 * snapshot, messages and events into these models: a required field that is missing, a value of
 * the wrong type or outside an enum it knows makes the whole snapshot, message list or event batch
 * fail. Each schema mirrors one model: required keys are required, `as T?` keys are nullish, enum
 * fields list exactly the values the app knows (where the app maps others to "unknown" the check
 * is stricter than the app: such a value would lose its meaning). Extra keys are allowed, as the
 * app ignores them. Facts from the app's public source; the code is this project's.
 */
import { z } from 'zod';

/** `(json[k] as num).toInt()`: any JSON number (the reference sends some as floats). */
const int = () => z.number();
const optInt = () => z.number().nullish();
const str = () => z.string();
const optStr = () => z.string().nullish();
const bool = () => z.boolean();
const optBool = () => z.boolean().nullish();
const intList = () => z.array(int());
/** A JSON object keyed by integers written as strings (`int.parse(k)`). */
const byIntKey = <T extends z.ZodType>(value: T) =>
  z.record(z.string().regex(/^[0-9]+$/, 'a key that is not an integer'), value);
const absoluteUrl = () =>
  z.string().refine((s) => URL.canParse(s), { message: 'not an absolute URL' });

// ---- enums the app knows -------------------------------------------------------------------

export const REACTION_TYPES = ['unicode_emoji', 'realm_emoji', 'zulip_extra_emoji'] as const;
export const EMOJISETS = ['google', 'google-blob', 'twitter', 'text'] as const;
const ReactionType = z.enum(REACTION_TYPES);
const Emojiset = z.enum(EMOJISETS);
const UserRole = z.literal([100, 200, 300, 400, 600]);
const CustomProfileFieldType = z.literal([1, 2, 3, 4, 5, 6, 7, 8]);
const ChannelTopicsPolicy = z.enum([
  'inherit',
  'allow_empty_topic',
  'disable_empty_topic',
  'empty_topic_only',
]);
const ChannelPostPolicy = z.literal([1, 2, 3, 4]);
const VisibilityPolicy = z.literal([0, 1, 2, 3]);
const MESSAGE_FLAGS = [
  'read',
  'starred',
  'collapsed',
  'mentioned',
  'topic_wildcard_mentioned',
  'stream_wildcard_mentioned',
  'wildcard_mentioned',
  'has_alert_word',
  'historical',
] as const;
const MessageFlag = z.enum(MESSAGE_FLAGS);
/** `private` is read as `direct` (MessageTypeConverter). */
const MessageType = z.enum(['stream', 'direct', 'private']);
const PropagateMode = z.enum(['change_one', 'change_later', 'change_all']);

const GroupSettingValue = z.union([
  int(),
  z.looseObject({ direct_members: intList(), direct_subgroups: intList() }),
]);

// ---- model.dart ------------------------------------------------------------------------------

const CustomProfileField = z.looseObject({
  id: int(),
  type: CustomProfileFieldType,
  order: int(),
  name: str(),
  hint: str(),
  field_data: str(),
  display_in_profile_summary: optBool(),
});

const RealmEmojiItem = z.looseObject({
  id: str(),
  name: str(),
  source_url: str(),
  still_url: optStr(),
  deactivated: bool(),
  author_id: optInt(),
});

const UserGroup = z.looseObject({
  id: int(),
  members: intList(),
  direct_subgroup_ids: intList(),
  name: str(),
  description: str(),
  is_system_group: bool(),
  deactivated: optBool(),
});

const ProfileFieldUserData = z.looseObject({ value: str(), rendered_value: optStr() });

const userFields = {
  user_id: int(),
  delivery_email: optStr(),
  email: str(),
  full_name: str(),
  date_joined: str(),
  is_active: bool(),
  is_bot: bool(),
  bot_type: optInt(),
  bot_owner_id: optInt(),
  role: UserRole,
  timezone: str(),
  avatar_url: optStr(),
  avatar_version: int(),
  profile_data: byIntKey(ProfileFieldUserData).nullish(),
  is_system_bot: optBool(),
};
export const User = z.looseObject(userFields);
/** In register's user lists the app fills in a missing `is_active`. */
const SnapshotUser = z.looseObject({ ...userFields, is_active: optBool() });

const PerUserPresence = z.looseObject({ active_timestamp: int(), idle_timestamp: int() });

const SavedSnippet = z.looseObject({
  id: int(),
  title: str(),
  content: str(),
  date_created: int(),
});

const channelFields = {
  stream_id: int(),
  name: str(),
  is_archived: optBool(),
  description: str(),
  rendered_description: str(),
  date_created: int(),
  first_message_id: optInt(),
  invite_only: bool(),
  is_web_public: bool(),
  history_public_to_subscribers: bool(),
  message_retention_days: optInt(),
  topics_policy: ChannelTopicsPolicy.nullish(),
  stream_post_policy: ChannelPostPolicy.nullish(),
  folder_id: optInt(),
  can_add_subscribers_group: GroupSettingValue.nullish(),
  can_delete_any_message_group: GroupSettingValue.nullish(),
  can_delete_own_message_group: GroupSettingValue.nullish(),
  can_send_message_group: GroupSettingValue.nullish(),
  can_subscribe_group: GroupSettingValue.nullish(),
  is_recently_active: optBool(),
  stream_weekly_traffic: optInt(),
};
const ZulipStream = z.looseObject(channelFields);

const Color = z.string().regex(/^#[0-9a-f]{6}$/, 'not a #rrggbb colour');
const Subscription = z.looseObject({
  ...channelFields,
  desktop_notifications: optBool(),
  email_notifications: optBool(),
  wildcard_mentions_notify: optBool(),
  push_notifications: optBool(),
  audible_notifications: optBool(),
  pin_to_top: bool(),
  is_muted: bool(),
  color: Color,
});

const ChannelFolder = z.looseObject({
  id: int(),
  name: str(),
  order: optInt(),
  date_created: optInt(),
  creator_id: optInt(),
  description: str(),
  rendered_description: str(),
  is_archived: bool(),
});

/** UserStatusChange: an emoji is read only when name, code and type are all set and not empty. */
const UserStatusChange = z
  .looseObject({
    status_text: optStr(),
    emoji_name: optStr(),
    emoji_code: optStr(),
    reaction_type: optStr(),
  })
  .refine(
    (s) =>
      !s.emoji_name ||
      !s.emoji_code ||
      !s.reaction_type ||
      (REACTION_TYPES as readonly string[]).includes(s.reaction_type),
    { message: 'reaction_type unknown to the app', path: ['reaction_type'] },
  );

export const Reaction = z.looseObject({
  emoji_name: str(),
  emoji_code: str(),
  reaction_type: ReactionType,
  user_id: int(),
});

const EditHistoryEntry = z.looseObject({
  prev_content: optStr(),
  prev_stream: optInt(),
  prev_topic: optStr(),
  topic: optStr(),
});

const messageFields = {
  client: str(),
  content: str(),
  content_type: str(),
  edit_history: z.array(EditHistoryEntry).nullish(),
  last_edit_timestamp: optInt(),
  id: int(),
  is_me_message: bool(),
  reactions: z.array(Reaction),
  sender_email: str(),
  sender_full_name: str(),
  sender_id: int(),
  sender_realm_str: str(),
  timestamp: int(),
  flags: z.array(str()),
  match_content: optStr(),
  match_subject: optStr(),
  submessages: z.array(z.unknown()).nullish(),
};
export const Message = z.discriminatedUnion('type', [
  z.looseObject({
    ...messageFields,
    type: z.literal('stream'),
    stream_id: int(),
    subject: str(),
    display_recipient: str(),
  }),
  z.looseObject({
    ...messageFields,
    type: z.literal('private'),
    display_recipient: z.array(z.looseObject({ id: int() })),
  }),
]);

// ---- initial_snapshot.dart -------------------------------------------------------------------

export const InitialSnapshot = z.looseObject({
  queue_id: optStr(),
  last_event_id: int(),
  zulip_feature_level: int(),
  zulip_version: str(),
  zulip_merge_base: str(),
  alert_words: z.array(str()),
  custom_profile_fields: z.array(CustomProfileField),
  max_stream_name_length: int(),
  max_topic_length: int(),
  server_presence_ping_interval_seconds: int(),
  server_presence_offline_threshold_seconds: int(),
  server_typing_started_expiry_period_milliseconds: optInt(),
  server_typing_stopped_wait_period_milliseconds: optInt(),
  server_typing_started_wait_period_milliseconds: optInt(),
  muted_users: z.array(z.looseObject({ id: int() })),
  presences: byIntKey(PerUserPresence),
  realm_emoji: z.record(z.string(), RealmEmojiItem),
  realm_user_groups: z.array(UserGroup),
  recent_private_conversations: z.array(
    z.looseObject({ max_message_id: int(), user_ids: intList() }),
  ),
  saved_snippets: z.array(SavedSnippet).nullish(),
  subscriptions: z.array(Subscription),
  channel_folders: z.array(ChannelFolder).nullish(),
  unread_msgs: z.looseObject({
    count: int(),
    pms: z.array(z.looseObject({ other_user_id: int(), unread_message_ids: intList() })),
    streams: z.array(
      z.looseObject({ topic: str(), stream_id: int(), unread_message_ids: intList() }),
    ),
    huddles: z.array(z.looseObject({ user_ids_string: str(), unread_message_ids: intList() })),
    mentions: intList(),
    old_unreads_missing: bool(),
  }),
  starred_messages: intList(),
  streams: z.array(ZulipStream),
  user_status: byIntKey(UserStatusChange),
  user_settings: z.looseObject({
    twenty_four_hour_time: optBool(),
    starred_message_counts: bool(),
    display_emoji_reaction_users: bool(),
    emojiset: Emojiset,
    web_inbox_show_channel_folders: optBool(),
    presence_enabled: bool(),
  }),
  user_topics: z.array(
    z.looseObject({
      stream_id: int(),
      topic_name: str(),
      last_updated: int(),
      visibility_policy: VisibilityPolicy,
    }),
  ),
  devices: z.record(z.string(), z.unknown()).nullish(),
  realm_can_delete_any_message_group: GroupSettingValue.nullish(),
  realm_can_delete_own_message_group: GroupSettingValue.nullish(),
  realm_delete_own_message_policy: z.literal([1, 2, 3, 4, 5]).nullish(),
  realm_wildcard_mention_policy: z.literal([1, 2, 3, 5, 6, 7]),
  realm_topics_policy: z.enum(['allow_empty_topic', 'disable_empty_topic']).nullish(),
  realm_mandatory_topics: optBool(),
  realm_name: str(),
  realm_waiting_period_threshold: int(),
  realm_message_content_delete_limit_seconds: optInt(),
  realm_allow_message_editing: bool(),
  realm_message_content_edit_limit_seconds: optInt(),
  realm_enable_read_receipts: bool(),
  realm_icon_url: str(),
  realm_presence_disabled: bool(),
  realm_default_external_accounts: z.record(
    z.string(),
    z.looseObject({ name: str(), text: str(), hint: str(), url_pattern: str() }),
  ),
  max_file_upload_size_mib: int(),
  server_thumbnail_formats: z
    .array(
      z.looseObject({
        name: str(),
        max_width: int(),
        max_height: int(),
        animated: bool(),
        format: str(),
      }),
    )
    .nullish(),
  server_emoji_data_url: absoluteUrl(),
  event_queue_longpoll_timeout_seconds: int(),
  realm_moderation_request_channel_id: optInt(),
  realm_empty_topic_display_name: optStr(),
  realm_users: z.array(SnapshotUser),
  realm_non_active_users: z.array(SnapshotUser),
  cross_realm_bots: z.array(SnapshotUser),
  server_report_message_types: z.array(z.looseObject({ key: str(), name: str() })).nullish(),
});

// ---- lib/api/route ----------------------------------------------------------------------------

export const GetServerSettingsResult = z.looseObject({
  authentication_methods: z.looseObject({ ldap: bool() }),
  external_authentication_methods: z.array(
    z.looseObject({
      name: str(),
      display_name: str(),
      display_icon: optStr(),
      login_url: str(),
      signup_url: str(),
    }),
  ),
  zulip_feature_level: int(),
  zulip_version: str(),
  zulip_merge_base: str(),
  push_notifications_enabled: bool(),
  is_incompatible: bool(),
  email_auth_enabled: bool(),
  require_email_format_usernames: bool(),
  realm_uri: str(),
  realm_name: str(),
  realm_icon: str(),
  realm_description: str(),
  realm_web_public_access_enabled: bool(),
});

export const GetMessagesResult = z.looseObject({
  anchor: int(),
  found_newest: bool(),
  found_oldest: bool(),
  found_anchor: bool(),
  history_limited: bool(),
  messages: z.array(Message),
});

export const ServerEmojiData = z.looseObject({
  code_to_names: z.record(z.string(), z.array(z.string())),
});

// ---- events.dart -----------------------------------------------------------------------------

const ev = <S extends z.core.$ZodLooseShape>(shape: S) => z.looseObject({ id: int(), ...shape });

const USER_SETTING_VALUES: Record<string, z.ZodType> = {
  twenty_four_hour_time: optBool(),
  starred_message_counts: bool(),
  display_emoji_reaction_users: bool(),
  emojiset: Emojiset,
  web_inbox_show_channel_folders: bool(),
  presence_enabled: bool(),
};

const CHANNEL_PROPERTY_VALUES: Record<string, z.ZodType> = {
  name: str(),
  is_archived: bool(),
  description: str(),
  first_message_id: optInt(),
  invite_only: bool(),
  message_retention_days: optInt(),
  topics_policy: str(),
  stream_post_policy: ChannelPostPolicy,
  folder_id: optInt(),
  can_add_subscribers_group: GroupSettingValue,
  can_delete_any_message_group: GroupSettingValue,
  can_delete_own_message_group: GroupSettingValue,
  can_send_message_group: GroupSettingValue,
  can_subscribe_group: GroupSettingValue,
  is_recently_active: bool(),
  stream_weekly_traffic: optInt(),
};

/** `value` checked against the type its `property` implies, for the properties the app knows. */
function propertyValue(table: Record<string, z.ZodType>) {
  return (e: { property?: unknown; value?: unknown }, ctx: z.core.$RefinementCtx) => {
    const schema = typeof e.property === 'string' ? table[e.property] : undefined;
    if (!schema) return;
    const r = schema.safeParse(e.value);
    if (!r.success) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: r.error.issues[0]!.message });
    }
  };
}

const SubscriptionPropertyValue = (
  e: { property?: unknown; value?: unknown },
  ctx: z.core.$RefinementCtx,
) => {
  const ok =
    e.property === 'color'
      ? Color.safeParse(e.value).success
      : [
            'is_muted',
            'pin_to_top',
            'desktop_notifications',
            'audible_notifications',
            'push_notifications',
            'email_notifications',
            'wildcard_mentions_notify',
          ].includes(String(e.property))
        ? typeof e.value === 'boolean'
        : true;
  if (!ok) ctx.addIssue({ code: 'custom', path: ['value'], message: 'wrong type for property' });
};

const UpdateMessageEvent = ev({
  user_id: optInt(),
  rendering_only: bool(),
  message_id: int(),
  message_ids: intList(),
  flags: z.array(MessageFlag),
  edit_timestamp: int(),
  stream_id: optInt(),
  new_stream_id: optInt(),
  orig_subject: optStr(),
  subject: optStr(),
  propagate_mode: PropagateMode.nullish(),
  orig_content: optStr(),
  orig_rendered_content: optStr(),
  content: optStr(),
  rendered_content: optStr(),
  is_me_message: optBool(),
}).superRefine((e, ctx) => {
  // UpdateMessageMoveData.tryParseFromJson: a move has its origin, target and mode, or none.
  const newStream = e.new_stream_id ?? e.stream_id;
  const newTopic = e.subject ?? e.orig_subject;
  const moved = newStream !== e.stream_id || newTopic !== e.orig_subject;
  if (!moved && e.propagate_mode != null) {
    ctx.addIssue({ code: 'custom', message: 'propagate_mode present but no move' });
  }
  if (moved && (e.stream_id == null || e.orig_subject == null || e.propagate_mode == null)) {
    ctx.addIssue({
      code: 'custom',
      message: 'a move without stream_id, orig_subject or propagate_mode',
    });
  }
});

const DeleteMessageEvent = ev({
  message_ids: intList(),
  message_type: MessageType,
  stream_id: optInt(),
  topic: optStr(),
}).refine((e) => e.message_type !== 'stream' || (e.stream_id != null && e.topic != null), {
  message: 'a channel deletion without stream_id and topic',
});

const TypingEvent = ev({
  op: z.enum(['start', 'stop']),
  message_type: MessageType,
  sender: z.looseObject({ user_id: int() }),
  recipients: z.array(z.looseObject({ user_id: int() })).nullish(),
  stream_id: optInt(),
  topic: optStr(),
}).refine(
  (e) =>
    e.message_type === 'stream' ? e.stream_id != null && e.topic != null : e.recipients != null,
  { message: 'typing without its conversation' },
);

/**
 * The schema an event must match, chosen as the app's Event.fromJson chooses its class; null for
 * events the app reads as UnexpectedEvent (ignored).
 */
export function eventSchema(e: { type?: unknown; op?: unknown }): z.ZodType | null {
  const op = e.op;
  switch (e.type) {
    case 'realm_emoji':
      if (op === 'add') return ev({ emoji: RealmEmojiItem });
      if (op === 'update_one')
        return ev({ emoji_id: str(), data: z.looseObject({ deactivated: optBool() }) });
      if (op === 'update') return ev({ realm_emoji: z.record(z.string(), RealmEmojiItem) });
      return null;
    case 'alert_words':
      return ev({ alert_words: z.array(str()) });
    case 'user_settings':
      return op === 'update'
        ? ev({ property: str(), value: z.unknown() }).superRefine(
            propertyValue(USER_SETTING_VALUES),
          )
        : null;
    case 'custom_profile_fields':
      return ev({ fields: z.array(CustomProfileField) });
    case 'user_group':
      switch (op) {
        case 'add':
          return ev({ group: UserGroup });
        case 'update':
          return ev({
            group_id: int(),
            data: z.looseObject({ name: optStr(), description: optStr(), deactivated: optBool() }),
          });
        case 'add_members':
        case 'remove_members':
          return ev({ group_id: int(), user_ids: intList() });
        case 'add_subgroups':
        case 'remove_subgroups':
          return ev({ group_id: int(), direct_subgroup_ids: intList() });
        case 'remove':
          return ev({ group_id: int() });
        default:
          return null;
      }
    case 'realm_user':
      if (op === 'add') return ev({ person: User });
      if (op === 'remove') return ev({ person: z.looseObject({ user_id: int() }) });
      if (op === 'update') {
        return ev({
          person: z.looseObject({
            user_id: int(),
            full_name: optStr(),
            avatar_url: optStr(),
            avatar_version: optInt(),
            timezone: optStr(),
            bot_owner_id: optInt(),
            role: UserRole.nullish(),
            delivery_email: optStr(),
            custom_profile_field: z
              .looseObject({ id: int(), value: optStr(), rendered_value: optStr() })
              .nullish(),
            new_email: optStr(),
            is_active: optBool(),
          }),
        });
      }
      return null;
    case 'saved_snippets':
      if (op === 'add' || op === 'update') return ev({ saved_snippet: SavedSnippet });
      if (op === 'remove') return ev({ saved_snippet_id: int() });
      return null;
    case 'stream':
      if (op === 'create') return ev({ streams: z.array(ZulipStream) });
      if (op === 'delete') {
        return z.union([
          ev({ stream_ids: intList() }),
          ev({ streams: z.array(z.looseObject({ stream_id: int() })) }),
        ]);
      }
      if (op === 'update') {
        return ev({
          stream_id: int(),
          name: str(),
          property: str(),
          value: z.unknown(),
          rendered_description: optStr(),
          history_public_to_subscribers: optBool(),
          is_web_public: optBool(),
        }).superRefine(propertyValue(CHANNEL_PROPERTY_VALUES));
      }
      return null;
    case 'subscription':
      switch (op) {
        case 'add':
          return ev({ subscriptions: z.array(Subscription) });
        case 'remove':
          return ev({ subscriptions: z.array(z.looseObject({ stream_id: int() })) });
        case 'update':
          return ev({ stream_id: int(), property: str(), value: z.unknown() }).superRefine(
            SubscriptionPropertyValue,
          );
        case 'peer_add':
        case 'peer_remove':
          return ev({ stream_ids: intList(), user_ids: intList() });
        default:
          return null;
      }
    case 'channel_folder':
      if (op === 'add') return ev({ channel_folder: ChannelFolder });
      if (op === 'reorder') return ev({ order: intList() });
      if (op === 'update') {
        return ev({
          channel_folder_id: int(),
          data: z.looseObject({
            name: optStr(),
            description: optStr(),
            rendered_description: optStr(),
            is_archived: optBool(),
          }),
        });
      }
      return null;
    case 'user_status':
      return z.intersection(ev({ user_id: int() }), UserStatusChange);
    case 'user_topic':
      return ev({
        stream_id: int(),
        topic_name: str(),
        last_updated: int(),
        visibility_policy: VisibilityPolicy,
      });
    case 'muted_users':
      return ev({ muted_users: z.array(z.looseObject({ id: int() })) });
    case 'message':
      // The app reads the message with the event's `flags` put inside it.
      return z
        .looseObject({
          id: int(),
          message: z.looseObject({}),
          flags: z.array(str()),
          local_message_id: optStr(),
        })
        .superRefine((e, ctx) => {
          const r = Message.safeParse({ ...e.message, flags: e.flags });
          if (!r.success) {
            for (const issue of r.error.issues) {
              ctx.addIssue({
                code: 'custom',
                path: ['message', ...issue.path],
                message: issue.message,
              });
            }
          }
        });
    case 'update_message':
      return UpdateMessageEvent;
    case 'delete_message':
      return DeleteMessageEvent;
    case 'update_message_flags':
      if (op === 'add') return ev({ flag: str(), messages: intList(), all: bool() });
      if (op === 'remove') {
        return ev({
          flag: str(),
          messages: intList(),
          message_details: byIntKey(
            z.looseObject({
              type: MessageType,
              mentioned: optBool(),
              user_ids: intList().nullish(),
              stream_id: optInt(),
              topic: optStr(),
            }),
          ).nullish(),
        });
      }
      return null;
    case 'submessage':
      return ev({
        msg_type: str(),
        content: str(),
        message_id: int(),
        sender_id: int(),
        submessage_id: int(),
      });
    case 'typing':
      return TypingEvent;
    case 'presence':
      return ev({
        user_id: int(),
        server_timestamp: int(),
        presence: z.record(
          z.string(),
          z.looseObject({
            client: str(),
            status: z.enum(['active', 'idle']),
            timestamp: int(),
            pushable: bool(),
          }),
        ),
      });
    case 'reaction':
      return ev({
        op: z.enum(['add', 'remove']),
        emoji_name: str(),
        emoji_code: str(),
        reaction_type: ReactionType,
        user_id: int(),
        message_id: int(),
      });
    case 'heartbeat':
      return ev({});
    default:
      return null;
  }
}

/** The register parameters the app sends (lib/api/route/events.dart registerQueue). */
export const APP_REGISTER_PARAMS = {
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: true,
    stream_typing_notifications: true,
    user_settings_object: true,
    include_deactivated_groups: true,
    empty_topic_name: true,
    individual_emoji_changes: true,
  },
};

/** The app's User-Agent (lib/api/core.dart: `ZulipFlutter/<version> (<OS> <version>)`). */
export const APP_USER_AGENT = 'ZulipFlutter/30.0.274 (Android 14)';

/** Issues of a failed parse, as `path: message` lines (empty when it parses). */
export function problems(schema: z.ZodType, value: unknown): string[] {
  const r = schema.safeParse(value);
  return r.success
    ? []
    : r.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
}
