/**
 * Browser login sessions (POST /json/login; src/http/sessions.ts): one row per session, keyed by
 * the SHA-256 of its random token (the cookie holds the token; the database never does). A session
 * ends at `expires_at` (UNIX seconds), on logout, and when its user's password or API key changes
 * or the user or realm is deactivated (the mutations delete the rows).
 */
export const m0019_sessions = {
  name: '0019_sessions',
  sql: `
CREATE TABLE sessions (
  token_hash  TEXT PRIMARY KEY,
  realm_id    INTEGER NOT NULL REFERENCES realms(id),
  user_id     INTEGER NOT NULL REFERENCES users(id),
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id, created_at);
CREATE INDEX sessions_realm ON sessions(realm_id);
`,
};
