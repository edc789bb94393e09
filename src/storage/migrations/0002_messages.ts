/**
 * Messages and who received them: the core the channel, message, flag, upload and event areas all
 * build on.
 *
 * - A channel message has `stream_id` (the `streams` table arrives with the channels migration) and
 *   a `topic` ('' is the empty topic). A direct message has `dm_group_id`: every direct conversation,
 *   one-to-one and self included, is a direct_message_groups row identified by its sorted member ids.
 * - `user_messages` has one row per (user, message) the user received, with the per-user flag
 *   bitmask (bit values in src/lib/message-flags.ts). Channels whose history is public to subscribers
 *   also show messages a user has no row for ("historical" access), computed at read time.
 * - Message ids are global across realms, as clients expect.
 */
export const m0002_messages = {
  name: '0002_messages',
  sql: `
CREATE TABLE direct_message_groups (
  id        INTEGER PRIMARY KEY,
  realm_id  INTEGER NOT NULL REFERENCES realms(id),
  user_ids  TEXT    NOT NULL,   -- sorted, comma-separated member ids: the conversation's identity
  size      INTEGER NOT NULL
);
CREATE UNIQUE INDEX direct_message_groups_key ON direct_message_groups(realm_id, user_ids);

CREATE TABLE direct_message_group_members (
  group_id  INTEGER NOT NULL REFERENCES direct_message_groups(id),
  user_id   INTEGER NOT NULL REFERENCES users(id),
  PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX direct_message_group_members_user ON direct_message_group_members(user_id, group_id);

CREATE TABLE messages (
  id                        INTEGER PRIMARY KEY,
  realm_id                  INTEGER NOT NULL REFERENCES realms(id),
  sender_id                 INTEGER NOT NULL REFERENCES users(id),
  stream_id                 INTEGER,            -- channel messages
  dm_group_id               INTEGER REFERENCES direct_message_groups(id), -- direct messages
  topic                     TEXT    NOT NULL DEFAULT '',
  content                   TEXT    NOT NULL,
  rendered_content          TEXT    NOT NULL,
  rendered_content_version  INTEGER NOT NULL DEFAULT 1,
  date_sent                 INTEGER NOT NULL,
  last_edit_time            INTEGER,
  last_moved_time           INTEGER,
  edit_history              TEXT,               -- JSON array of snapshots, oldest first
  has_attachment            INTEGER NOT NULL DEFAULT 0,
  has_image                 INTEGER NOT NULL DEFAULT 0,
  has_link                  INTEGER NOT NULL DEFAULT 0,
  sending_client            TEXT    NOT NULL DEFAULT '',
  CHECK ((stream_id IS NULL) <> (dm_group_id IS NULL))
);
CREATE INDEX messages_stream_topic ON messages(stream_id, topic COLLATE NOCASE, id) WHERE stream_id IS NOT NULL;
CREATE INDEX messages_stream ON messages(stream_id, id) WHERE stream_id IS NOT NULL;
CREATE INDEX messages_dm_group ON messages(dm_group_id, id) WHERE dm_group_id IS NOT NULL;
CREATE INDEX messages_realm ON messages(realm_id, id);
CREATE INDEX messages_sender ON messages(sender_id, id);

CREATE TABLE user_messages (
  user_id     INTEGER NOT NULL REFERENCES users(id),
  message_id  INTEGER NOT NULL REFERENCES messages(id),
  flags       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, message_id)
) WITHOUT ROWID;
CREATE INDEX user_messages_message ON user_messages(message_id);
CREATE INDEX user_messages_unread ON user_messages(user_id, message_id) WHERE (flags & 1) = 0;
CREATE INDEX user_messages_starred ON user_messages(user_id, message_id) WHERE (flags & 2) <> 0;
`,
};
