/**
 * Bot storage (GET/PUT/DELETE /bot_storage): string values under string keys that a bot keeps
 * between runs, as the reference's BotStorageData (the Python bot framework's `bot_handler.storage`:
 * a game's state, a counter). Any user may keep some (the reference does not check that the caller
 * is a bot); each user's keys and values together hold at most USER_STATE_SIZE_LIMIT characters
 * (src/mutations/bot-storage.ts).
 */
export const m0032_bot_storage = {
  name: '0032_bot_storage',
  sql: `
CREATE TABLE bot_storage (
  user_id  INTEGER NOT NULL REFERENCES users(id),
  key      TEXT    NOT NULL,
  value    TEXT    NOT NULL,
  PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
`,
};
