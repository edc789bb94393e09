/**
 * What the message area adds to the messages of 0002: reactions, the realm's custom emoji, the
 * full-text index behind `search:` narrows, and a partial index for direct messages.
 *
 * - `reactions`: one row per (message, user, emoji). An emoji is identified by `reaction_type`
 *   and `emoji_code` (the name is what the first reactor called it); rows are shown in id order.
 * - `realm_emoji`: custom emoji. Deactivating keeps the row (old messages and reactions still show
 *   the image); only one active emoji per name.
 * - `messages_fts`: FTS5 over each message's topic and the text of its rendered HTML, keyed by
 *   message id (rowid). Contentless (the text lives in `messages`), with `contentless_delete`
 *   so deleting a message deletes its entry.
 * - `user_messages_private`: a user's direct messages (flag is_private, bit 9), newest first, for
 *   `is:dm` and the register's recent conversations.
 */
export const m0005_message_features = {
  name: '0005_message_features',
  sql: `
CREATE TABLE reactions (
  id             INTEGER PRIMARY KEY,
  message_id     INTEGER NOT NULL REFERENCES messages(id),
  user_id        INTEGER NOT NULL REFERENCES users(id),
  emoji_name     TEXT    NOT NULL,
  emoji_code     TEXT    NOT NULL,
  reaction_type  TEXT    NOT NULL   -- unicode_emoji | realm_emoji | service_extra_emoji
);
CREATE UNIQUE INDEX reactions_key ON reactions(message_id, user_id, reaction_type, emoji_code);
CREATE INDEX reactions_user ON reactions(user_id, message_id);

CREATE TABLE realm_emoji (
  id           INTEGER PRIMARY KEY,
  realm_id     INTEGER NOT NULL REFERENCES realms(id),
  name         TEXT    NOT NULL,
  author_id    INTEGER REFERENCES users(id),
  file_name    TEXT    NOT NULL,   -- under DATA_DIR/emoji/<realm_id>/
  is_animated  INTEGER NOT NULL DEFAULT 0,
  deactivated  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX realm_emoji_realm ON realm_emoji(realm_id, id);
CREATE UNIQUE INDEX realm_emoji_active_name ON realm_emoji(realm_id, name) WHERE deactivated = 0;

CREATE VIRTUAL TABLE messages_fts USING fts5(
  topic, body,
  content = '', contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE INDEX user_messages_private ON user_messages(user_id, message_id) WHERE (flags & 512) <> 0;
`,
};
