/**
 * Topic lists (GET /users/me/{stream_id}/topics) and personal topic preferences (register
 * `user_topics`). Reference: lib/topic.py get_topic_history_for_stream, lib/user_topics.py.
 */
import { EMPTY_TOPIC_DISPLAY_NAME } from '../lib/channel-rules.js';
import type { ReadStore } from '../storage/store.js';
import type { Channel } from './channels-view.js';
import type { RealmView } from './realm-view.js';

export type TopicEntry = { name: string; max_id: number };

/**
 * The topics a user can see in a channel, newest first. Topics differing only in case are one
 * topic, named as in its newest message. With protected history, only topics of messages the
 * user received.
 */
export function topicHistory(
  store: ReadStore,
  userId: number,
  ch: Channel,
  opts: { allowEmptyTopicName: boolean },
): TopicEntry[] {
  const rows =
    ch.history_public_to_subscribers === 1
      ? store.topics.topicsOfStream(ch.id)
      : store.topics.topicsReceivedByUser(userId, ch.id);
  const seen = new Set<string>();
  const out: TopicEntry[] = [];
  for (const r of rows) {
    const key = r.topic.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    const name = r.topic === '' && !opts.allowEmptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : r.topic;
    out.push({ name, max_id: r.max_id });
  }
  return out;
}

export type ApiUserTopic = {
  stream_id: number;
  topic_name: string;
  last_updated: number;
  visibility_policy: number;
};

export function userTopicsOf(
  store: ReadStore,
  userId: number,
  opts: { emptyTopicName: boolean },
): ApiUserTopic[] {
  return store.topics.userTopicsOfUser(userId).map((r) => ({
    stream_id: r.stream_id,
    topic_name: r.topic === '' && !opts.emptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : r.topic,
    last_updated: r.last_updated,
    visibility_policy: r.visibility_policy,
  }));
}

/** The policy value that mutes a topic. */
const MUTED = 1;

/**
 * The legacy `muted_topics` list (register field and event; the reference's get_topic_mutes):
 * `[channel name, topic, last updated]` for each topic the user muted, in channels that are not
 * archived. Clients that ask for `user_topic` get that instead.
 */
export function mutedTopicsOf(
  store: ReadStore,
  view: RealmView,
  userId: number,
): [string, string, number][] {
  const out: [string, string, number][] = [];
  for (const r of store.topics.userTopicsOfUser(userId)) {
    if (r.visibility_policy !== MUTED) continue;
    const ch = view.channels.byId(r.stream_id);
    if (!ch || ch.deactivated) continue;
    out.push([ch.name, r.topic, r.last_updated]);
  }
  return out;
}
