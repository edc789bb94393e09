/**
 * Presence, user status, saved snippets, code playgrounds and the realm's defaults for new users'
 * settings.
 *
 * - `user_presence`: one row per user who ever reported presence. Written in batches from the
 *   realm's in-memory presence (src/queries/presence.ts), not on every ping. `last_update_id` is
 *   the realm's presence sequence number of the row's last change (the realm's sequence is the
 *   largest of them).
 * - `user_status`: a user's status text and emoji ('' when unset).
 * - `saved_snippets`: a user's reusable message texts.
 * - `realm_playgrounds`: code playgrounds, unique per (realm, language, name) as the reference's.
 * - `realm_user_defaults`: the realm's settings for new users that differ from the server's
 *   defaults (JSON object, like `users.settings`).
 */
export const m0012_presence_status_snippets = {
  name: '0012_presence_status_snippets',
  sql: `
CREATE TABLE user_presence (
  user_id              INTEGER PRIMARY KEY REFERENCES users(id),
  realm_id             INTEGER NOT NULL REFERENCES realms(id),
  last_active_time     INTEGER,            -- NULL: connected but never active
  last_connected_time  INTEGER NOT NULL,
  last_update_id       INTEGER NOT NULL
);
CREATE INDEX user_presence_realm ON user_presence(realm_id);

CREATE TABLE user_status (
  user_id        INTEGER PRIMARY KEY REFERENCES users(id),
  realm_id       INTEGER NOT NULL REFERENCES realms(id),
  status_text    TEXT    NOT NULL DEFAULT '',
  emoji_name     TEXT    NOT NULL DEFAULT '',
  emoji_code     TEXT    NOT NULL DEFAULT '',
  reaction_type  TEXT    NOT NULL DEFAULT 'unicode_emoji',
  timestamp      INTEGER NOT NULL
);
CREATE INDEX user_status_realm ON user_status(realm_id);

CREATE TABLE saved_snippets (
  id            INTEGER PRIMARY KEY,
  realm_id      INTEGER NOT NULL REFERENCES realms(id),
  user_id       INTEGER NOT NULL REFERENCES users(id),
  title         TEXT    NOT NULL,
  content       TEXT    NOT NULL,
  date_created  INTEGER NOT NULL
);
CREATE INDEX saved_snippets_user ON saved_snippets(user_id, id);

CREATE TABLE realm_playgrounds (
  id                 INTEGER PRIMARY KEY,
  realm_id           INTEGER NOT NULL REFERENCES realms(id),
  name               TEXT    NOT NULL,
  pygments_language  TEXT    NOT NULL,
  url_template       TEXT    NOT NULL,
  UNIQUE (realm_id, pygments_language, name)
);

CREATE TABLE realm_user_defaults (
  realm_id  INTEGER PRIMARY KEY REFERENCES realms(id),
  settings  TEXT    NOT NULL DEFAULT '{}'
);
`,
};
