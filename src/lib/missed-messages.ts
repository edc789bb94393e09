/**
 * Which messages a user is mailed about while away (docs/mail.md "Missed messages"). Pure: the
 * realm actor's send and edit gather the facts (src/mutations/missed-messages.ts). Reference:
 * lib/notification_data.py (UserMessageNotificationsData, get_email_notification_trigger,
 * user_allows_notifications_in_StreamTopic), actions/message_send.py (get_recipient_info,
 * get_active_presence_idle_user_ids), tornado/event_queue.py (receiver_is_off_zulip,
 * missedmessage_hook).
 */

/** Why a message is mailed, most salient first (the reference's NotificationTriggers). */
export const EmailTrigger = {
  DIRECT_MESSAGE: 'direct_message',
  MENTION: 'mentioned',
  TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC: 'topic_wildcard_mentioned_in_followed_topic',
  STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC: 'stream_wildcard_mentioned_in_followed_topic',
  TOPIC_WILDCARD_MENTION: 'topic_wildcard_mentioned',
  STREAM_WILDCARD_MENTION: 'stream_wildcard_mentioned',
  FOLLOWED_TOPIC_EMAIL: 'followed_topic_email_notify',
  STREAM_EMAIL: 'stream_email_notify',
} as const;
export type EmailTrigger = (typeof EmailTrigger)[keyof typeof EmailTrigger];

/** The triggers that are mentions of some kind (the mail says "you were mentioned"). */
export const MENTION_TRIGGERS: ReadonlySet<string> = new Set([
  EmailTrigger.MENTION,
  EmailTrigger.TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC,
  EmailTrigger.STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC,
  EmailTrigger.TOPIC_WILDCARD_MENTION,
  EmailTrigger.STREAM_WILDCARD_MENTION,
]);

/** Visibility policies of user_topics. */
export const VisibilityPolicy = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

/** A user is present when active this recently (and a client of theirs holds an event queue). */
export { PRESENCE_OFFLINE_THRESHOLD_SECONDS as IDLE_AFTER_SECONDS } from './limits.js';

/** Messages waiting for one user's batch at most; later ones are not mailed (docs/mail.md). */
export const MAX_PENDING_PER_USER = 500;

/** The user's settings that decide it (UserSettings' fields). */
export type EmailNotificationSettings = {
  enable_offline_email_notifications: boolean;
  enable_stream_email_notifications: boolean;
  enable_followed_topic_email_notifications: boolean;
  enable_followed_topic_wildcard_mentions_notify: boolean;
  wildcard_mentions_notify: boolean;
};

/** What one recipient's mail for one message depends on (idle or not). */
export type EmailTriggerFacts = {
  settings: EmailNotificationSettings;
  /** A direct message (one-to-one or group). */
  direct: boolean;
  /** Flags of the recipient's copy: mentioned personally or through a group, wildcard mentions. */
  mentioned: boolean;
  streamWildcardMentioned: boolean;
  topicWildcardMentioned: boolean;
  /** Channel messages: the subscription's own settings (null: the user's default) and mute. */
  subscription: {
    is_muted: boolean;
    email_notifications: boolean | null;
    wildcard_mentions_notify: boolean | null;
  } | null;
  /** The recipient's visibility policy for the topic (VisibilityPolicy). */
  visibilityPolicy: number;
};

/**
 * Whether a channel's notifications reach the user in this topic: the topic's visibility policy
 * first, then the subscription's setting, then the user's default
 * (user_allows_notifications_in_StreamTopic).
 */
export function allowsInTopic(
  channelMuted: boolean,
  visibilityPolicy: number,
  channelSetting: boolean | null,
  userSetting: boolean,
): boolean {
  if (channelMuted && visibilityPolicy !== VisibilityPolicy.UNMUTED) return false;
  if (visibilityPolicy === VisibilityPolicy.MUTED) return false;
  return channelSetting ?? userSetting;
}

/**
 * Why the recipient would be mailed about the message if they were away, or null: never for the
 * sender, a bot, or a recipient who muted the sender (the caller leaves those out). Direct
 * messages and mentions follow `enable_offline_email_notifications`; wildcard mentions also
 * `wildcard_mentions_notify` (per channel, or in followed topics
 * `enable_followed_topic_wildcard_mentions_notify`); other channel messages the channel's
 * `email_notifications` or the followed topic's `enable_followed_topic_email_notifications`.
 */
export function emailTrigger(f: EmailTriggerFacts): EmailTrigger | null {
  const s = f.settings;
  const offline = s.enable_offline_email_notifications;
  if (f.direct) return offline ? EmailTrigger.DIRECT_MESSAGE : null;
  if (offline && f.mentioned) return EmailTrigger.MENTION;
  const sub = f.subscription;
  const followed = f.visibilityPolicy === VisibilityPolicy.FOLLOWED;
  const wildcardsNotify =
    sub !== null &&
    allowsInTopic(
      sub.is_muted,
      f.visibilityPolicy,
      sub.wildcard_mentions_notify,
      s.wildcard_mentions_notify,
    );
  const followedWildcards = followed && s.enable_followed_topic_wildcard_mentions_notify;
  if (offline && f.topicWildcardMentioned && followedWildcards)
    return EmailTrigger.TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC;
  if (offline && f.streamWildcardMentioned && followedWildcards)
    return EmailTrigger.STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC;
  if (offline && f.topicWildcardMentioned && wildcardsNotify)
    return EmailTrigger.TOPIC_WILDCARD_MENTION;
  if (offline && f.streamWildcardMentioned && wildcardsNotify)
    return EmailTrigger.STREAM_WILDCARD_MENTION;
  if (followed && s.enable_followed_topic_email_notifications)
    return EmailTrigger.FOLLOWED_TOPIC_EMAIL;
  if (
    sub !== null &&
    allowsInTopic(
      sub.is_muted,
      f.visibilityPolicy,
      sub.email_notifications,
      s.enable_stream_email_notifications,
    )
  )
    return EmailTrigger.STREAM_EMAIL;
  return null;
}

/**
 * Whether a user counts as away: no client of theirs holds an event queue that takes messages,
 * or (unless the realm disabled presence) they have not been active for IDLE_AFTER_SECONDS —
 * the reference's `receiver_is_off_zulip or presence idle`.
 */
export function isIdle(args: {
  hasMessageQueue: boolean;
  presenceDisabled: boolean;
  lastActiveTime: number | null;
  now: number;
  idleAfterSeconds: number;
}): boolean {
  if (!args.hasMessageQueue) return true;
  if (args.presenceDisabled) return false;
  return args.lastActiveTime === null || args.lastActiveTime < args.now - args.idleAfterSeconds;
}
