/**
 * Topics followed (or unmuted, in a muted channel) because the user took part in them, as the
 * user's settings ask (the reference's visibility_policy_for_send_message and its neighbours in
 * lib/message.py, called from do_send_messages, do_add_reaction and do_add_submessage):
 *
 * - `automatically_follow_topics_policy`: 1 topics the user takes part in (sends to, reacts in,
 *   votes in a poll or to-do list of), 2 topics the user sends to, 3 topics the user starts
 *   (the default), 4 never: the topic becomes followed.
 * - `automatically_unmute_topics_in_muted_streams_policy`, the same choices, in a channel the
 *   user muted: the topic becomes unmuted.
 * - `automatically_follow_topics_where_mentioned` (default on): a user mentioned by name in a
 *   channel message follows its topic, unless they muted or already follow it.
 *
 * These only make a topic more visible: a followed topic stays followed, and only a message
 * sent to a topic with no preference can start it. Bots are left alone.
 */
import { VisibilityPolicy } from '../lib/missed-messages.js';
import type { Channel } from '../queries/channels-view.js';
import type { MessageRow } from '../storage/messages.js';
import type { MutationContext } from './context.js';
import { doSetUserTopic } from './user-topics.js';

/** The values of the two policies (1 participation, 2 send, 3 initiation, 4 never). */
export const AutoPolicy = { ON_PARTICIPATION: 1, ON_SEND: 2, ON_INITIATION: 3, NEVER: 4 } as const;

/** What the user did in the topic: took part (a reaction, a vote), sent, or started it. */
export type TopicAct = 'participated' | 'sent' | 'started';

/** Whether `act` is one the policy value asks to act on. */
function triggers(policy: number, act: TopicAct): boolean {
  if (policy === AutoPolicy.ON_PARTICIPATION) return true;
  if (policy === AutoPolicy.ON_SEND) return act !== 'participated';
  if (policy === AutoPolicy.ON_INITIATION) return act === 'started';
  return false;
}

/**
 * The policy the user's settings give a topic after `act`, or null to leave it: followed wins
 * over unmuted, a followed topic is left as it is, and so is a topic already at the result.
 */
export function autoVisibility(
  settings: { follow: number; unmute: number },
  act: TopicAct,
  channelMuted: boolean,
  current: number,
): number | null {
  if (current === VisibilityPolicy.FOLLOWED) return null;
  let next: number | null = null;
  if (triggers(settings.follow, act)) next = VisibilityPolicy.FOLLOWED;
  else if (channelMuted && triggers(settings.unmute, act)) next = VisibilityPolicy.UNMUTED;
  return next === current ? null : next;
}

/**
 * Applies the sender's or participant's settings after `act` in `topic` of `ch` (the stored
 * topic name). `messageId`: the message sent, for a send (whether it starts the topic, as far
 * as the user can see the topic's history). Participation (a reaction, a vote) counts only for a
 * subscriber, as the reference's.
 */
export function followOnAct(
  ctx: MutationContext,
  userId: number,
  ch: Channel,
  topic: string,
  messageId: number | null,
): void {
  const { realm, store } = ctx;
  const user = realm.user(userId);
  if (!user || user.is_bot === 1) return;
  const settings = realm.userSettings(userId);
  const follow = settings.automatically_follow_topics_policy;
  const unmute = settings.automatically_unmute_topics_in_muted_streams_policy;
  if (follow === AutoPolicy.NEVER && unmute === AutoPolicy.NEVER) return;
  const sub = realm.channels.subscription(userId, ch.id);
  if (messageId === null && !sub) return;
  const current = store.topics.userTopic(userId, ch.id, topic)?.visibility_policy ?? 0;
  let act: TopicAct = messageId === null ? 'participated' : 'sent';
  // Whether the send starts the topic matters only to a policy that acts on starting one.
  const onStart =
    follow === AutoPolicy.ON_INITIATION ||
    (sub?.is_muted === 1 && unmute === AutoPolicy.ON_INITIATION);
  if (act === 'sent' && current === VisibilityPolicy.INHERIT && onStart) {
    const first = store.messages.firstInTopic(
      ch.id,
      topic,
      realm.channels.historyPublic(ch) ? null : userId,
    );
    if (first === messageId) act = 'started';
  }
  const next = autoVisibility({ follow, unmute }, act, sub?.is_muted === 1, current);
  if (next === null) return;
  doSetUserTopic(ctx, {
    user_id: userId,
    stream_id: ch.id,
    topic,
    visibility_policy: next as 2 | 3,
  });
}

/**
 * The users a channel message mentions by name (`mentioned`: the rendering's user ids) who
 * received it, are not bots, and asked to follow such topics: they follow it, unless they muted
 * or already follow it.
 */
export function followWhereMentioned(
  ctx: MutationContext,
  ch: Channel,
  topic: string,
  mentioned: readonly number[],
  recipients: readonly number[],
): void {
  // Most messages mention no one: the recipients (a channel's subscribers) are looked through
  // only when one is named.
  if (mentioned.length === 0) return;
  const received = new Set(recipients);
  const { realm, store } = ctx;
  for (const id of new Set(mentioned)) {
    if (!received.has(id)) continue;
    const user = realm.user(id);
    if (!user || user.is_bot === 1 || user.is_active !== 1) continue;
    if (!realm.userSettings(id).automatically_follow_topics_where_mentioned) continue;
    const current = store.topics.userTopic(id, ch.id, topic)?.visibility_policy ?? 0;
    if (current === VisibilityPolicy.MUTED || current === VisibilityPolicy.FOLLOWED) continue;
    doSetUserTopic(ctx, {
      user_id: id,
      stream_id: ch.id,
      topic,
      visibility_policy: VisibilityPolicy.FOLLOWED,
    });
  }
}

/** A reaction or a vote (any submessage) on a channel message: taking part in its topic. */
export function followOnParticipation(
  ctx: MutationContext,
  userId: number,
  message: MessageRow,
): void {
  if (message.stream_id === null) return;
  const ch = ctx.realm.channels.byId(message.stream_id);
  if (ch) followOnAct(ctx, userId, ch, message.topic, null);
}
