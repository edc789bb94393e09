/**
 * The unread index leaves the send's transaction. Until now `user_messages_unread` (a partial index
 * of user_messages) took an entry for every unread row a send wrote: one more b-tree page per
 * recipient in every commit, next to the row's own (~55 of a 50-recipient send's ~129 WAL pages).
 *
 * Now the index is a table, `unread_messages`, that holds the unread rows of the messages up to a
 * watermark (`unread_watermark.message_id`) and no others. The rows above the watermark are read
 * from user_messages itself (a user's newest rows, a short range of its primary key); the
 * watermark is moved up in transactions of their own, a few a second (src/storage/unread.ts), so
 * that a recipient's entries for many messages share one page write. Triggers keep the table
 * exact below the watermark whatever writes user_messages (flag changes, deletes, rows added for
 * old messages, replayed cluster batches): a row at or below the watermark is in the table exactly
 * when it is unread. Existing unread rows are copied with the watermark at the newest message.
 */
export const m0030_unread_settled = {
  name: '0030_unread_settled',
  sql: `
CREATE TABLE unread_watermark (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  message_id  INTEGER NOT NULL
);
INSERT INTO unread_watermark (id, message_id)
  VALUES (1, COALESCE((SELECT MAX(message_id) FROM user_messages), 0));

CREATE TABLE unread_messages (
  user_id     INTEGER NOT NULL,
  message_id  INTEGER NOT NULL,
  PRIMARY KEY (user_id, message_id)
) WITHOUT ROWID;
INSERT INTO unread_messages (user_id, message_id)
  SELECT user_id, message_id FROM user_messages WHERE (flags & 1) = 0;

DROP INDEX user_messages_unread;

CREATE TRIGGER user_messages_unread_insert AFTER INSERT ON user_messages
WHEN (NEW.flags & 1) = 0 AND NEW.message_id <= (SELECT message_id FROM unread_watermark)
BEGIN
  INSERT OR IGNORE INTO unread_messages (user_id, message_id) VALUES (NEW.user_id, NEW.message_id);
END;

CREATE TRIGGER user_messages_unread_update AFTER UPDATE OF user_id, message_id, flags ON user_messages
WHEN (OLD.flags & 1) <> (NEW.flags & 1) OR OLD.user_id <> NEW.user_id
  OR OLD.message_id <> NEW.message_id
BEGIN
  DELETE FROM unread_messages WHERE user_id = OLD.user_id AND message_id = OLD.message_id;
  INSERT OR IGNORE INTO unread_messages (user_id, message_id)
    SELECT NEW.user_id, NEW.message_id
    WHERE (NEW.flags & 1) = 0 AND NEW.message_id <= (SELECT message_id FROM unread_watermark);
END;

CREATE TRIGGER user_messages_unread_delete AFTER DELETE ON user_messages
WHEN (OLD.flags & 1) = 0
BEGIN
  DELETE FROM unread_messages WHERE user_id = OLD.user_id AND message_id = OLD.message_id;
END;
`,
};
