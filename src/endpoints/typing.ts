/**
 * POST /api/v1/typing — typing notifications for a direct message or a channel topic — and
 * POST /api/v1/messages/{message_id}/typing — typing while editing a message.
 * Reference: views/typing.py send_notification_backend, send_message_edit_notification_backend,
 * actions/typing.py.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { nowSeconds } from '../config.js';
import { JsonableError, MissingTopicError } from '../lib/errors.js';
import { answered, EMPTY_TOPIC_DISPLAY_NAME } from '../lib/events.js';
import { int, intList, oneOf, pathInt, str } from '../lib/params.js';
import { channelTypingEvent, directTypingEvent, editTypingEvent } from '../lib/typing.js';
import { accessMessage, checkMayEditContent, dmGroupMembers } from '../queries/messages.js';
import { channelTypingAudience, typingPerson } from '../queries/typing.js';

/** Topics that mean "the empty topic" when a client sends them. */
const EMPTY_TOPIC_ALIASES = new Set(['(no topic)', EMPTY_TOPIC_DISPLAY_NAME]);

export const setTypingStatus = endpoint({
  method: 'POST',
  path: '/api/v1/typing',
  aliases: { subject: 'topic' },
  params: z.object({
    type: oneOf(['direct', 'stream', 'channel']).default('direct'),
    op: oneOf(['start', 'stop']),
    to: intList().optional(),
    stream_id: int().optional(),
    topic: str({ trim: true }).optional(),
  }),
  handle: ({ server, realm, user }, p) => {
    const view = realm.view;
    const settings = view.userSettings(user.id);
    if (p.type === 'stream' || p.type === 'channel') {
      if (p.stream_id === undefined) throw new JsonableError("Missing 'stream_id' argument");
      if (p.topic === undefined) throw new MissingTopicError();
      if (!settings.send_stream_typing_notifications) {
        throw new JsonableError('User has disabled typing notifications for channel messages');
      }
      const subscribers = channelTypingAudience(view, user.id, p.stream_id);
      const topic = EMPTY_TOPIC_ALIASES.has(p.topic) ? '' : p.topic;
      const ev = channelTypingEvent(
        typingPerson(view, user),
        p.op,
        p.stream_id,
        topic,
        subscribers,
      );
      if (ev) server.publisher.publish(realm.id, [ev]);
      return answered(server.publisher);
    }
    if (p.to === undefined) throw new JsonableError("Missing 'to' argument");
    if (p.to.length === 0) throw new JsonableError("Empty 'to' list");
    if (!settings.send_private_typing_notifications) {
      throw new JsonableError('User has disabled typing notifications for direct messages');
    }
    const ids = [...new Set([...p.to, user.id])];
    const participants = ids.map((id) => {
      const u = view.user(id);
      if (!u) throw new JsonableError(`Invalid user ID ${id}`);
      return typingPerson(view, u);
    });
    server.publisher.publish(realm.id, [
      directTypingEvent(typingPerson(view, user), participants, p.op),
    ]);
    return answered(server.publisher);
  },
});

export const setMessageEditTypingStatus = endpoint({
  method: 'POST',
  path: '/api/v1/messages/:message_id/typing',
  params: z.object({
    message_id: pathInt(),
    op: oneOf(['start', 'stop']),
  }),
  handle: ({ server, realm, user }, p) => {
    const view = realm.view;
    // Only someone who could save an edit of the content now may say they are editing it.
    const { row } = accessMessage(server.store, view, user.id, p.message_id, true);
    checkMayEditContent(view, user.id, row, nowSeconds(server.config), 0);
    const settings = view.userSettings(user.id);
    const person = (id: number) => {
      const u = view.user(id);
      return u ? [typingPerson(view, u)] : [];
    };
    let ev;
    if (row.stream_id !== null) {
      if (!settings.send_stream_typing_notifications) {
        throw new JsonableError('User has disabled typing notifications for channel messages');
      }
      const audience = view.channels.subscriberIds(row.stream_id).flatMap(person);
      ev = editTypingEvent(
        user.id,
        row.id,
        p.op,
        { type: 'channel', channel_id: row.stream_id, topic: row.topic },
        audience,
      );
    } else {
      if (!settings.send_private_typing_notifications) {
        throw new JsonableError('User has disabled typing notifications for direct messages');
      }
      const members = [...dmGroupMembers(server.store, row.dm_group_id!)];
      ev = editTypingEvent(
        user.id,
        row.id,
        p.op,
        { type: 'direct', user_ids: members },
        members.flatMap(person),
      );
    }
    if (ev) server.publisher.publish(realm.id, [ev]);
    return answered(server.publisher);
  },
});
