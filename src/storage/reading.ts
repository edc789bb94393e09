/**
 * SQL for the reading operations: finding a user's unread messages by scope (everything, a
 * channel, a topic, one sender) a batch at a time, newest first; who has read a message (read
 * receipts); and a topic's messages a batch at a time (deleting a topic). Setting the read flag
 * itself is MessageStatements.setFlag.
 */
import type { DB } from './db.js';
import type { UnreadStatements } from './unread.js';

export function readingStatements(db: DB, unread: UnreadStatements) {
  // A user's unread rows in two parts (./unread.ts): above the watermark from user_messages
  // itself (`um`), at or below it from unread_messages (`u`), newest first each; `scope` is the
  // condition on the message `m` (joined only when there is one).
  function parts<P extends unknown[]>(scope: string) {
    const join = scope === '' ? '' : 'CROSS JOIN messages m ON m.id = um.message_id';
    const above = db
      .prepare<[number, number, ...P, number], number>(
        `SELECT um.message_id FROM user_messages um ${join}
         WHERE um.user_id = ? AND um.message_id > ? AND (um.flags & 1) = 0 ${scope}
         ORDER BY um.message_id DESC LIMIT ?`,
      )
      .pluck();
    const below = db
      .prepare<[number, number, ...P, number], number>(
        `SELECT u.message_id FROM unread_messages u ${join.replace('um.', 'u.')}
         WHERE u.user_id = ? AND u.message_id <= ? ${scope}
         ORDER BY u.message_id DESC LIMIT ?`,
      )
      .pluck();
    return (userId: number, limit: number, ...params: P): number[] => {
      const w = unread.watermark();
      const ids = above.all(userId, w, ...params, limit);
      if (ids.length < limit) ids.push(...below.all(userId, w, ...params, limit - ids.length));
      return ids;
    };
  }
  const unreadAll = parts<[]>('');
  const unreadInChannel = parts<[number]>('AND m.stream_id = ?');
  const unreadInTopic = parts<[number, string]>(
    'AND m.stream_id = ? AND m.topic = ? COLLATE NOCASE',
  );
  const unreadFromSender = parts<[number]>('AND m.sender_id = ?');
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
    unreadAll: (userId: number, limit: number): number[] => unreadAll(userId, limit),
    unreadInChannel: (userId: number, streamId: number, limit: number): number[] =>
      unreadInChannel(userId, limit, streamId),
    /** Topic names compare case-insensitively, as everywhere. */
    unreadInTopic: (userId: number, streamId: number, topic: string, limit: number): number[] =>
      unreadInTopic(userId, limit, streamId, topic),
    unreadFromSender: (userId: number, senderId: number, limit: number): number[] =>
      unreadFromSender(userId, limit, senderId),
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
