/**
 * Uploaded files ("attachments") and the messages that link to them.
 *
 * - `path_id` is where the file lives under DATA_DIR/uploads (`<realm id>/<xx>/<random>/<name>`),
 *   unique across realms; `file_name` is the name the client gave (before sanitizing);
 *   `content_type` the type it is served with; `size` in bytes; `create_time` UNIX seconds.
 * - `attachment_messages` says which messages reference a file: set when a message that links the
 *   file is sent (claiming), changed by edits, removed with the message. Rows go with either side.
 * (0005 is the messages migration, built on another branch.)
 */
export const m0006_attachments = {
  name: '0006_attachments',
  sql: `
CREATE TABLE attachments (
  id            INTEGER PRIMARY KEY,
  realm_id      INTEGER NOT NULL REFERENCES realms(id),
  owner_id      INTEGER NOT NULL REFERENCES users(id),
  path_id       TEXT    NOT NULL UNIQUE,
  file_name     TEXT    NOT NULL,
  content_type  TEXT    NOT NULL,
  size          INTEGER NOT NULL,
  create_time   INTEGER NOT NULL
);
CREATE INDEX attachments_owner ON attachments(owner_id, id);
CREATE INDEX attachments_realm ON attachments(realm_id);

CREATE TABLE attachment_messages (
  attachment_id  INTEGER NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
  message_id     INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  PRIMARY KEY (attachment_id, message_id)
) WITHOUT ROWID;
CREATE INDEX attachment_messages_message ON attachment_messages(message_id, attachment_id);
`,
};
