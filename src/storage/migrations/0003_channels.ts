/**
 * Channels (`streams`, the name messages.stream_id refers to), who is subscribed, the realm's
 * default channels, channel folders, and each user's per-topic preferences.
 *
 * - A channel's permission settings are group-setting values, stored as JSON text: either a user
 *   group id (`12`) or an anonymous group (`{"direct_members":[..],"direct_subgroups":[..]}`).
 * - A subscription row is never deleted: unsubscribing sets `active = 0`, so personal settings
 *   (color, muting, notifications) survive a later resubscription, and "unsubscribed" channels
 *   can be listed. Notification settings are NULL when they inherit the user's default.
 * - Channel names are unique per realm ignoring case; the index covers ASCII case, the channel
 *   mutations check full Unicode case before writing.
 */
export const m0003_channels = {
  name: '0003_channels',
  sql: `
CREATE TABLE channel_folders (
  id                    INTEGER PRIMARY KEY,
  realm_id              INTEGER NOT NULL REFERENCES realms(id),
  name                  TEXT    NOT NULL,
  description           TEXT    NOT NULL DEFAULT '',
  rendered_description  TEXT    NOT NULL DEFAULT '',
  creator_id            INTEGER REFERENCES users(id),
  date_created          INTEGER NOT NULL,
  is_archived           INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX channel_folders_realm_name ON channel_folders(realm_id, name COLLATE NOCASE);

CREATE TABLE streams (
  id                             INTEGER PRIMARY KEY,
  realm_id                       INTEGER NOT NULL REFERENCES realms(id),
  name                           TEXT    NOT NULL,
  description                    TEXT    NOT NULL DEFAULT '',
  rendered_description           TEXT    NOT NULL DEFAULT '',
  date_created                   INTEGER NOT NULL,
  creator_id                     INTEGER REFERENCES users(id),
  deactivated                    INTEGER NOT NULL DEFAULT 0,
  invite_only                    INTEGER NOT NULL DEFAULT 0,
  history_public_to_subscribers  INTEGER NOT NULL DEFAULT 1,
  is_web_public                  INTEGER NOT NULL DEFAULT 0,
  message_retention_days         INTEGER,            -- NULL: the realm's setting; -1: forever
  topics_policy                  TEXT    NOT NULL DEFAULT 'inherit',
  folder_id                      INTEGER REFERENCES channel_folders(id),
  can_add_subscribers_group      TEXT    NOT NULL,
  can_remove_subscribers_group   TEXT    NOT NULL,
  can_administer_channel_group   TEXT    NOT NULL,
  can_send_message_group         TEXT    NOT NULL,
  can_subscribe_group            TEXT    NOT NULL,
  can_delete_any_message_group   TEXT    NOT NULL,
  can_delete_own_message_group   TEXT    NOT NULL
);
CREATE UNIQUE INDEX streams_realm_name ON streams(realm_id, name COLLATE NOCASE);

CREATE TABLE subscriptions (
  user_id                   INTEGER NOT NULL REFERENCES users(id),
  stream_id                 INTEGER NOT NULL REFERENCES streams(id),
  active                    INTEGER NOT NULL DEFAULT 1,
  color                     TEXT    NOT NULL,
  is_muted                  INTEGER NOT NULL DEFAULT 0,
  pin_to_top                INTEGER NOT NULL DEFAULT 0,
  desktop_notifications     INTEGER,
  audible_notifications     INTEGER,
  push_notifications        INTEGER,
  email_notifications       INTEGER,
  wildcard_mentions_notify  INTEGER,
  PRIMARY KEY (user_id, stream_id)
) WITHOUT ROWID;
CREATE INDEX subscriptions_stream ON subscriptions(stream_id, user_id);

CREATE TABLE default_streams (
  realm_id   INTEGER NOT NULL REFERENCES realms(id),
  stream_id  INTEGER NOT NULL REFERENCES streams(id),
  PRIMARY KEY (realm_id, stream_id)
) WITHOUT ROWID;

-- One row per (user, channel, topic) with a visibility policy other than 0 (none).
CREATE TABLE user_topics (
  user_id            INTEGER NOT NULL REFERENCES users(id),
  stream_id          INTEGER NOT NULL REFERENCES streams(id),
  topic              TEXT    NOT NULL COLLATE NOCASE,
  visibility_policy  INTEGER NOT NULL,              -- 1 muted, 2 unmuted, 3 followed
  last_updated       INTEGER NOT NULL,
  PRIMARY KEY (user_id, stream_id, topic)
) WITHOUT ROWID;
CREATE INDEX user_topics_stream_topic ON user_topics(stream_id, topic);
`,
};
