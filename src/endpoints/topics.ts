/**
 * Topics of a channel and personal topic preferences. Reference: views/streams.py
 * get_topics_backend, views/user_topics.py update_user_topic.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { MAX_TOPIC_LENGTH } from '../lib/limits.js';
import { InvalidChannelIdError } from '../lib/errors.js';
import { bool, int, intValue, json, pathInt, str } from '../lib/params.js';
import { topicHistory } from '../queries/topics.js';

/** GET /api/v1/users/me/{stream_id}/topics */
export const getTopics = endpoint({
  method: 'GET',
  path: '/api/v1/users/me/:stream_id/topics',
  compressAnswer: true,
  params: z.object({ stream_id: pathInt(), allow_empty_topic_name: bool().default(false) }),
  handle: ({ server, realm, user }, p) => {
    const view = realm.view.channels;
    const ch = view.byId(p.stream_id);
    if (!ch || ch.deactivated || !view.may(user.id, ch, 'content'))
      throw new InvalidChannelIdError();
    return {
      topics: topicHistory(server.store, user.id, ch, {
        allowEmptyTopicName: p.allow_empty_topic_name,
      }),
    };
  },
});

/** POST /api/v1/user_topics */
export const updateUserTopic = endpoint({
  method: 'POST',
  path: '/api/v1/user_topics',
  params: z.object({
    stream_id: int(),
    topic: str({ max: MAX_TOPIC_LENGTH }),
    visibility_policy: json(intValue().refine((v) => v >= 0 && v <= 3, { error: 'Invalid {var}' })),
  }),
  handle: ({ realm, user }, p) =>
    realm.ask('user_topic.set', {
      acting_user_id: user.id,
      stream_id: p.stream_id,
      topic: p.topic,
      visibility_policy: p.visibility_policy as 0 | 1 | 2 | 3,
    }),
});
