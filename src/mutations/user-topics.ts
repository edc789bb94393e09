/**
 * Personal topic preferences (POST /user_topics). Reference: views/user_topics.py
 * update_user_topic, actions/user_topics.py. Succeeds for topics without messages. Setting a
 * policy needs access to the channel's content; clearing one (0) also works for a preference the
 * user set while they had access. Anything else about a channel the user may not know is
 * "Invalid channel ID", as for a channel that does not exist.
 */
import { canonicalTopic } from '../lib/channel-rules.js';
import { InvalidChannelIdError } from '../lib/errors.js';
import { actingUser } from './context.js';
import type { MutationContext } from './context.js';
import { mutedTopicsOf } from '../queries/topics.js';

export type SetUserTopicCommand = {
  acting_user_id: number;
  stream_id: number;
  topic: string;
  visibility_policy: 0 | 1 | 2 | 3;
};

type UserTopicChange = {
  user_id: number;
  stream_id: number;
  topic: string;
  visibility_policy: SetUserTopicCommand['visibility_policy'];
};

/** The change, for a channel the user may set a policy in (or clear one they still hold). */
export function checkSetUserTopic(ctx: MutationContext, cmd: SetUserTopicCommand): UserTopicChange {
  const { realm, store } = ctx;
  const user = actingUser(realm, cmd.acting_user_id);
  const ch = realm.channels.byId(cmd.stream_id);
  if (!ch) throw new InvalidChannelIdError();
  const topic = canonicalTopic(cmd.topic);
  const accessible = !ch.deactivated && realm.channels.may(user.id, ch, 'content');
  if (cmd.visibility_policy !== 0 && !accessible) throw new InvalidChannelIdError();
  if (
    cmd.visibility_policy === 0 &&
    !realm.channels.may(user.id, ch, 'metadata') &&
    !store.topics.userTopic(user.id, ch.id, topic)
  )
    throw new InvalidChannelIdError();
  return { user_id: user.id, stream_id: ch.id, topic, visibility_policy: cmd.visibility_policy };
}

export function doSetUserTopic(ctx: MutationContext, cmd: UserTopicChange): Record<string, never> {
  const { user_id, stream_id, topic, visibility_policy } = cmd;
  if (visibility_policy === 0) {
    ctx.store.topics.clearUserTopic(user_id, stream_id, topic);
  } else {
    ctx.store.topics.setUserTopic({
      user_id,
      stream_id,
      topic,
      visibility_policy,
      last_updated: ctx.now,
    });
  }
  emitMutedTopics(ctx, user_id);
  ctx.emit(
    { type: 'user_topic', stream_id, topic_name: topic, last_updated: ctx.now, visibility_policy },
    [user_id],
  );
  return {};
}

/**
 * Before each `user_topic` event: the legacy `muted_topics` event with the user's whole list of
 * muted topics, as the reference sends it (queues that asked for `user_topic` do not get it).
 */
export function emitMutedTopics(ctx: MutationContext, userId: number): void {
  ctx.emit({ type: 'muted_topics', muted_topics: mutedTopicsOf(ctx.store, ctx.realm, userId) }, [
    userId,
  ]);
}
