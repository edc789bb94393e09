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

/** One of a topic's visibility choices: the policy it sets and its words. */
export type PolicyChoice = { policy: number; label: string };

/**
 * The choices of a topic's visibility menu (the recipient bar's), as the reference's
 * change_visibility_policy popover: Mute, Default, Follow, and Unmute between the last two where
 * it means something (the channel is muted, or the topic already is unmuted: a choice one has
 * made stays on the list, and Default then undoes it); `checked` marks the one that applies now.
 */
export function policyChoices(
  policy: number,
  channelMuted: boolean,
): (PolicyChoice & { checked: boolean })[] {
  const choices: PolicyChoice[] = [
    { policy: TOPIC.MUTED, label: 'Mute' },
    { policy: TOPIC.INHERIT, label: 'Default' },
  ];
  if (channelMuted || policy === TOPIC.UNMUTED)
    choices.push({ policy: TOPIC.UNMUTED, label: 'Unmute' });
  choices.push({ policy: TOPIC.FOLLOWED, label: 'Follow' });
  return choices.map((c) => ({ ...c, checked: c.policy === policy }));
}

/**
 * What the recipient bar says of a topic's policy (the reference's recipient_row words): its
 * kind (the icon) and a sentence for its button; `always` whether the button shows without a
 * hover or the focus (followed, muted or unmuted: a choice the user made; the default only on
 * hover, as the reference's).
 */
export function policyShown(policy: number): {
  kind: 'followed' | 'muted' | 'unmuted' | 'inherit';
  label: string;
  always: boolean;
} {
  if (policy === TOPIC.FOLLOWED)
    return { kind: 'followed', label: 'You follow this topic.', always: true };
  if (policy === TOPIC.MUTED)
    return { kind: 'muted', label: 'You have muted this topic.', always: true };
  if (policy === TOPIC.UNMUTED)
    return { kind: 'unmuted', label: 'You have unmuted this topic.', always: true };
  return {
    kind: 'inherit',
    label: 'Notifications are based on your configuration for this channel.',
    always: false,
  };
}

/**
 * The sidebar topic menu's Follow item, as the reference's: following sets "followed";
 * unfollowing goes back to the channel's default, or to "unmuted" in a muted channel (so the
 * topic does not go silent), as unmuting does.
 */
export function followChoice(policy: number, channelMuted: boolean): PolicyChoice {
  return policy === TOPIC.FOLLOWED
    ? { policy: unmutePolicy(channelMuted), label: 'Unfollow topic' }
    : { policy: TOPIC.FOLLOWED, label: 'Follow topic' };
}

/**
 * The sidebar topic menu's Mute item: a muted topic (by itself or by its channel, topicMuted)
 * is unmuted (unmutePolicy); another is muted.
 */
export function muteChoice(policy: number, channelMuted: boolean): PolicyChoice {
  return topicMuted(policy, channelMuted)
    ? { policy: unmutePolicy(channelMuted), label: 'Unmute topic' }
    : { policy: TOPIC.MUTED, label: 'Mute topic' };
}
