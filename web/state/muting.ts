/**
 * Muting, as the reference's web app applies it: a topic's visibility policy (POST
 * /user_topics) and its channel's `is_muted` decide whether the topic is muted. Muted topics
 * are left out of the combined feed (All messages, the `in:home` narrow) and of its unread
 * count. Topics muted as such are also left out of their channel's view (asked of the server
 * without them) and of the views across channels (a sender's messages, unread…: as they are
 * drawn, but the messages that mention the user; narrow.hidesMutedTopicsWhenDrawn); a topic's
 * own view, a search, starred and direct messages show them.
 */

/** Visibility policies of a topic (POST /user_topics). */
export const TOPIC = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

/**
 * Whether a topic is muted, by its visibility policy and whether its channel is muted (the
 * reference's user_topics.is_topic_visible_in_home, negated; the server's in:home leaves out the
 * same): a muted topic is muted anywhere; in a muted channel every topic is, but those the user
 * unmuted or follows.
 */
export function topicMuted(policy: number, channelMuted: boolean): boolean {
  if (policy === TOPIC.MUTED) return true;
  return channelMuted && policy !== TOPIC.UNMUTED && policy !== TOPIC.FOLLOWED;
}

/**
 * What keeps a topic out of the combined feed, for the notice shown when one sends to it (the
 * reference's compose_notifications.get_muted_narrow): its channel, muted (the topic neither
 * unmuted nor followed there), or the topic itself; null when it is not muted.
 */
export function mutedBy(policy: number, channelMuted: boolean): 'channel' | 'topic' | null {
  if (channelMuted && policy !== TOPIC.UNMUTED && policy !== TOPIC.FOLLOWED) return 'channel';
  if (policy === TOPIC.MUTED) return 'topic';
  return null;
}

/**
 * The policy that unmutes a topic, as the reference's "Unmute topic": in a muted channel
 * "unmuted" (it shows while the channel stays muted), elsewhere back to the default.
 */
export function unmutePolicy(channelMuted: boolean): number {
  return channelMuted ? TOPIC.UNMUTED : TOPIC.INHERIT;
}
