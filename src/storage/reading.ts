/**
 * SQL for the reading operations: finding a user's unread messages by scope (everything, a
 * channel, a topic, one sender) a batch at a time, newest first; who has read a message (read
 * receipts); and a topic's messages a batch at a time (deleting a topic). Setting the read flag
 * itself is MessageStatements.setFlag.
 */
import type { DB } from './db.js';

export function readingStatements(db: DB) {
  const unreadAll = db
    .prepare<[number, number], number>(
      `SELECT message_id FROM user_messages INDEXED BY user_messages_unread
       WHERE user_id = ? AND (flags & 1) = 0 ORDER BY message_id DESC LIMIT ?`,
    )
    .pluck();
  const unreadInChannel = db
    .prepare<[number, number, number], number>(
      `SELECT um.message_id FROM user_messages um INDEXED BY user_messages_unread
       JOIN messages m ON m.id = um.message_id
       WHERE um.user_id = ? AND (um.flags & 1) = 0 AND m.stream_id = ?
       ORDER BY um.message_id DESC LIMIT ?`,
    )
    .pluck();
  const unreadInTopic = db
    .prepare<[number, number, string, number], number>(
      `SELECT um.message_id FROM user_messages um INDEXED BY user_messages_unread
       JOIN messages m ON m.id = um.message_id
       WHERE um.user_id = ? AND (um.flags & 1) = 0 AND m.stream_id = ?
         AND m.topic = ? COLLATE NOCASE
       ORDER BY um.message_id DESC LIMIT ?`,
    )
    .pluck();
  const unreadFromSender = db
    .prepare<[number, number, number], number>(
      `SELECT um.message_id FROM user_messages um INDEXED BY user_messages_unread
       JOIN messages m ON m.id = um.message_id
       WHERE um.user_id = ? AND (um.flags & 1) = 0 AND m.sender_id = ?
       ORDER BY um.message_id DESC LIMIT ?`,
    )
    .pluck();
  const hasTopicRow = db
    .prepare<[number, number, string], number>(
      `SELECT EXISTS (SELECT 1 FROM messages m
         JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?
         WHERE m.stream_id = ? AND m.topic = ? COLLATE NOCASE)`,
    )
    .pluck();
  const readers = db
    .prepare<[number], number>(
      `SELECT user_id FROM user_messages WHERE message_id = ? AND (flags & 1) <> 0
       ORDER BY user_id`,
    )
    .pluck();
  const topicIds = db
    .prepare<[number, string, number], number>(
      `SELECT id FROM messages WHERE stream_id = ? AND topic = ? COLLATE NOCASE
       ORDER BY id DESC LIMIT ?`,
    )
    .pluck();
  const topicIdsReceived = db
    .prepare<[number, number, string, number], number>(
      `SELECT m.id FROM messages m
       JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?
       WHERE m.stream_id = ? AND m.topic = ? COLLATE NOCASE
       ORDER BY m.id DESC LIMIT ?`,
    )
    .pluck();
  const userTopicHolders = db.prepare<[number, string], { user_id: number; topic: string }>(
    `SELECT user_id, topic FROM user_topics WHERE stream_id = ? AND topic = ? COLLATE NOCASE
     ORDER BY user_id`,
  );

  return {
    /** The user's newest `limit` unread messages (ids, newest first). */
    unreadAll: (userId: number, limit: number): number[] => unreadAll.all(userId, limit),
    unreadInChannel: (userId: number, streamId: number, limit: number): number[] =>
      unreadInChannel.all(userId, streamId, limit),
    /** Topic names compare case-insensitively, as everywhere. */
    unreadInTopic: (userId: number, streamId: number, topic: string, limit: number): number[] =>
      unreadInTopic.all(userId, streamId, topic, limit),
    unreadFromSender: (userId: number, senderId: number, limit: number): number[] =>
      unreadFromSender.all(userId, senderId, limit),
    /** Whether the user received (or has a row for) some message of the topic. */
    userHasMessageInTopic: (userId: number, streamId: number, topic: string): boolean =>
      hasTopicRow.get(userId, streamId, topic) === 1,
    /** Users whose row for the message has the read flag, ascending. */
    readers: (messageId: number): number[] => readers.all(messageId),
    /** The topic's newest `limit` message ids, newest first. */
    topicMessageIds: (streamId: number, topic: string, limit: number): number[] =>
      topicIds.all(streamId, topic, limit),
    /** Like topicMessageIds, only messages the user has a row for (protected history). */
    topicMessageIdsReceived: (
      userId: number,
      streamId: number,
      topic: string,
      limit: number,
    ): number[] => topicIdsReceived.all(userId, streamId, topic, limit),
    /** Users with a visibility policy for the topic (and the topic as they stored it). */
    userTopicHolders: (streamId: number, topic: string): { user_id: number; topic: string }[] =>
      userTopicHolders.all(streamId, topic),
  };
}
export type ReadingStatements = ReturnType<typeof readingStatements>;
