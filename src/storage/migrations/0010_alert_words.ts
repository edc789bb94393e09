/**
 * Alert words: words or phrases a user wants to be alerted about (matched case-insensitively in
 * messages they receive). Kept in the order added; a user has each word once, compared
 * case-insensitively (by the mutation: SQLite's NOCASE folds only ASCII).
 * (0005–0007 are the messages, uploads and settings migrations, built on other branches.)
 */
export const m0010_alert_words = {
  name: '0010_alert_words',
  sql: `
CREATE TABLE alert_words (
  id        INTEGER PRIMARY KEY,
  realm_id  INTEGER NOT NULL REFERENCES realms(id),
  user_id   INTEGER NOT NULL REFERENCES users(id),
  word      TEXT    NOT NULL
);
CREATE INDEX alert_words_user ON alert_words(user_id, id);
CREATE INDEX alert_words_realm ON alert_words(realm_id);
`,
};
