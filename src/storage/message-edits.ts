/**
 * SQL for editing and moving messages (PATCH /messages/{id}): content and rendering of one
 * message, moving a set of messages to another channel and/or topic, the edit history kept on
 * each message, the per-user rows that follow a move between channels, and the search index.
 *
 * Edit history lives in `messages.edit_history` (migration 0002): a JSON array of entries, NEWEST
 * FIRST, as the reference keeps Message.edit_history and as the message object's `edit_history`
 * is ordered. A move of many messages prepends one entry to every row in one UPDATE.
 */
import type { DB } from './db.js';
import type { ReceivedMaxima } from './messages.js';
import type { ChannelActivity } from './topics.js';

export type UserMessageFlagsRow = { user_id: number; flags: number };
export type TopicMessageRow = { id: number; date_sent: number; sender_id: number };
export type SearchRow = { id: number; topic: string; rendered_content: string };

export function messageEditStatements(db: DB, maxima: ReceivedMaxima, activity: ChannelActivity) {
  type ContentParams = {
    content: string;
    rendered_content: string;
    has_attachment: number;
    has_image: number;
    has_link: number;
    last_edit_time: number;
    entry: string;
    id: number;
  };
  const updateContent = db.prepare<ContentParams, void>(
    `UPDATE messages SET content = @content, rendered_content = @rendered_content,
       has_attachment = @has_attachment, has_image = @has_image, has_link = @has_link,
       last_edit_time = @last_edit_time,
       edit_history = CASE WHEN edit_history IS NULL THEN '[' || @entry || ']'
                           ELSE '[' || @entry || ',' || substr(edit_history, 2) END
     WHERE id = @id`,
  );
  type MoveParams = {
    stream_id: number;
    topic: string;
    moved: number | null;
    entry: string | null;
    ids: string;
  };
  // `entry` NULL: the history is written by the caller; `moved` NULL keeps last_moved_time.
  const move = db.prepare<MoveParams, void>(
    `UPDATE messages SET stream_id = @stream_id, topic = @topic,
       last_moved_time = COALESCE(@moved, last_moved_time),
       edit_history = CASE WHEN @entry IS NULL THEN edit_history
                           WHEN edit_history IS NULL THEN '[' || @entry || ']'
                           ELSE '[' || @entry || ',' || substr(edit_history, 2) END
     WHERE id IN (SELECT value FROM json_each(@ids))`,
  );
  const topicMessages = db.prepare<[number, string, number], TopicMessageRow>(
    `SELECT id, date_sent, sender_id FROM messages
     WHERE stream_id = ? AND topic = ? COLLATE NOCASE AND id >= ? ORDER BY id`,
  );
  const receivedTopicMessages = db.prepare<[number, number, string, number], TopicMessageRow>(
    `SELECT m.id AS id, m.date_sent AS date_sent, m.sender_id AS sender_id
     FROM messages m JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?
     WHERE m.stream_id = ? AND m.topic = ? COLLATE NOCASE AND m.id >= ? ORDER BY m.id`,
  );
  const topicHasOtherMessages = db
    .prepare<[number, string, string], number>(
      `SELECT EXISTS (SELECT 1 FROM messages WHERE stream_id = ? AND topic = ? COLLATE NOCASE
         AND id NOT IN (SELECT value FROM json_each(?)))`,
    )
    .pluck();
  const lastTopicMessage = db.prepare<[number, string], TopicMessageRow & { type: number }>(
    `SELECT id, date_sent, sender_id, type FROM messages
     WHERE stream_id = ? AND topic = ? COLLATE NOCASE ORDER BY id DESC LIMIT 1`,
  );
  const userMessageFlags = db.prepare<[number], UserMessageFlagsRow>(
    'SELECT user_id, flags FROM user_messages WHERE message_id = ? ORDER BY user_id',
  );
  const setUserFlags = db.prepare<[number, number, number], void>(
    'UPDATE user_messages SET flags = ? WHERE user_id = ? AND message_id = ?',
  );
  const deleteUserMessages = db.prepare<[string, string], void>(
    `DELETE FROM user_messages WHERE user_id IN (SELECT value FROM json_each(?))
       AND message_id IN (SELECT value FROM json_each(?))`,
  );
  const insertUserMessage = db.prepare<[number, number, number], void>(
    'INSERT OR IGNORE INTO user_messages (user_id, message_id, flags) VALUES (?, ?, ?)',
  );
  const searchRows = db.prepare<[string], SearchRow>(
    `SELECT id, topic, rendered_content FROM messages
     WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  const deleteSearch = db.prepare<[number], void>('DELETE FROM messages_fts WHERE rowid = ?');
  const insertSearch = db.prepare<[number, string, string], void>(
    'INSERT INTO messages_fts (rowid, topic, body) VALUES (?, ?, ?)',
  );
  const topicUserPolicies = db.prepare<
    [number, string],
    { user_id: number; topic: string; visibility_policy: number }
  >(
    `SELECT user_id, topic, visibility_policy FROM user_topics
     WHERE stream_id = ? AND topic = ? COLLATE NOCASE ORDER BY user_id`,
  );

  const setRendered = db.prepare<[string, number], void>(
    'UPDATE messages SET rendered_content = ? WHERE id = ?',
  );

  return {
    /** The rendering of a message changed, not its content (a thumbnail became ready). */
    setRenderedContent(id: number, html: string): void {
      setRendered.run(html, id);
    },
    /** New content of one message, with its history entry (JSON) prepended. */
    updateContent(
      id: number,
      m: {
        content: string;
        rendered_content: string;
        has_attachment: boolean;
        has_image: boolean;
        has_link: boolean;
        last_edit_time: number;
        entry: string;
      },
    ): void {
      updateContent.run({
        content: m.content,
        rendered_content: m.rendered_content,
        has_attachment: m.has_attachment ? 1 : 0,
        has_image: m.has_image ? 1 : 0,
        has_link: m.has_link ? 1 : 0,
        last_edit_time: m.last_edit_time,
        entry: m.entry,
        id,
      });
    },
    /**
     * Moves messages to `streamId`/`topic`, prepending the history entry (JSON) to each;
     * `movedTime` null leaves last_moved_time as it was (resolving a topic is not a move).
     */
    move(
      ids: readonly number[],
      streamId: number,
      topic: string,
      movedTime: number | null,
      entry: string | null,
    ): void {
      if (ids.length === 0) return;
      activity.forgetAll();
      move.run({ stream_id: streamId, topic, moved: movedTime, entry, ids: JSON.stringify(ids) });
    },
    /** The topic's messages from `fromId` on, oldest first (topic compared case-insensitively). */
    topicMessages: (streamId: number, topic: string, fromId = 0): TopicMessageRow[] =>
      topicMessages.all(streamId, topic, fromId),
    /** Like topicMessages, only those `userId` received (protected history). */
    receivedTopicMessages: (
      userId: number,
      streamId: number,
      topic: string,
      fromId = 0,
    ): TopicMessageRow[] => receivedTopicMessages.all(userId, streamId, topic, fromId),
    topicHasOtherMessages: (streamId: number, topic: string, except: readonly number[]): boolean =>
      topicHasOtherMessages.get(streamId, topic, JSON.stringify(except)) === 1,
    /** The newest message of a topic (any case spelling), with its type (MessageType). */
    lastTopicMessage: (
      streamId: number,
      topic: string,
    ): (TopicMessageRow & { type: number }) | undefined => lastTopicMessage.get(streamId, topic),
    /** Everyone with a row for the message, with their flags. */
    userMessageFlags: (messageId: number): UserMessageFlagsRow[] => userMessageFlags.all(messageId),
    setUserFlags: (userId: number, messageId: number, flags: number): void =>
      void setUserFlags.run(flags, userId, messageId),
    deleteUserMessages(userIds: readonly number[], messageIds: readonly number[]): void {
      if (userIds.length > 0 && messageIds.length > 0) {
        for (const u of userIds) maxima.forget(u);
        deleteUserMessages.run(JSON.stringify(userIds), JSON.stringify(messageIds));
      }
    },
    /** Rows for each user × message that lacks one, with `flags`. */
    insertMissingUserMessages(
      userIds: readonly number[],
      messageIds: readonly number[],
      flags: number,
    ): void {
      for (const u of userIds) {
        maxima.forget(u);
        for (const m of messageIds) insertUserMessage.run(u, m, flags);
      }
    },
    /** Topic and rendered content of messages, for re-indexing. */
    searchRows: (ids: readonly number[]): SearchRow[] => searchRows.all(JSON.stringify(ids)),
    /** Replaces a message's entry in the full-text index. */
    reindex(id: number, topic: string, body: string): void {
      deleteSearch.run(id);
      insertSearch.run(id, topic, body);
    },
    /** Users' visibility policies for a topic (any case spelling). */
    topicUserPolicies: (streamId: number, topic: string) => topicUserPolicies.all(streamId, topic),
  };
}
export type MessageEditStatements = ReturnType<typeof messageEditStatements>;
