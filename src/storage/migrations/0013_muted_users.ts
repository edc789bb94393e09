/**
 * Muted users: one row per (user, the user they muted), with when. Muting is personal: nobody
 * else learns of it. The index by muted user answers "who muted this sender" when a message is
 * sent (those recipients get it already read).
 */
export const m0013_muted_users = {
  name: '0013_muted_users',
  sql: `
CREATE TABLE muted_users (
  user_id        INTEGER NOT NULL REFERENCES users(id),
  muted_user_id  INTEGER NOT NULL REFERENCES users(id),
  date_muted     INTEGER NOT NULL,
  PRIMARY KEY (user_id, muted_user_id)
) WITHOUT ROWID;
CREATE INDEX muted_users_muted ON muted_users(muted_user_id, user_id);
`,
};
