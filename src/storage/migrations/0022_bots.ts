/**
 * Bots (POST /bots; docs/integrations.md). A bot is a `users` row (is_bot, bot_type,
 * bot_owner_id); these tables hold what only bots have:
 * - `bot_profiles`: the defaults a client of the bot may use (default_sending_stream,
 *   default_events_register_stream, default_all_public_streams), one row per bot created through
 *   the API (the system bots have none: every default is empty);
 * - `bot_services`: an outgoing-webhook bot's endpoint (the reference's Service): the URL, the
 *   token sent with each request, and the interface (1 Confab's format, 2 Slack's);
 * - `bot_config`: an incoming-webhook bot's configuration (key/value pairs, as the reference's
 *   BotConfigData), e.g. the integration it was made for.
 */
export const m0022_bots = {
  name: '0022_bots',
  sql: `
CREATE TABLE bot_profiles (
  user_id                            INTEGER PRIMARY KEY REFERENCES users(id),
  default_sending_stream_id          INTEGER REFERENCES streams(id),
  default_events_register_stream_id  INTEGER REFERENCES streams(id),
  default_all_public_streams         INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE bot_services (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id    INTEGER NOT NULL REFERENCES users(id),
  name       TEXT    NOT NULL,
  base_url   TEXT    NOT NULL,
  token      TEXT    NOT NULL,
  interface  INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX bot_services_user ON bot_services(user_id);

CREATE TABLE bot_config (
  user_id  INTEGER NOT NULL REFERENCES users(id),
  key      TEXT    NOT NULL,
  value    TEXT    NOT NULL,
  PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
`,
};
