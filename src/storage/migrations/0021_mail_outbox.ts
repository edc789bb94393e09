/**
 * Outgoing mail (docs/mail.md): the outbox, and password reset requests.
 *
 * - `mail_outbox`: one row per message waiting to be handed to the SMTP server. A row is written
 *   in the same transaction as the change that causes the mail (an invitation, a reset request),
 *   so a committed change never loses its mail and a refused one never sends any. The sender
 *   (src/mail/sender.ts) deletes a row once the SMTP server accepted it, or after it kept failing
 *   (with a log line); until then `attempts`, `next_attempt_at` and `last_error` say how it goes.
 * - `password_reset_requests`: a reset link's key, valid once, for a day (status as
 *   email_change_requests: 0 pending, 1 used, 2 revoked).
 */
export const m0021_mail_outbox = {
  name: '0021_mail_outbox',
  sql: `
CREATE TABLE mail_outbox (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id         INTEGER NOT NULL REFERENCES realms(id),
  kind             TEXT    NOT NULL,                  -- invitation, password_reset, ...
  recipient        TEXT    NOT NULL,
  subject          TEXT    NOT NULL,
  text_body        TEXT    NOT NULL,
  html_body        TEXT    NOT NULL,
  created_at       INTEGER NOT NULL,                  -- UNIX seconds
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,                  -- UNIX seconds
  last_error       TEXT
);
CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, id);
CREATE INDEX mail_outbox_realm ON mail_outbox(realm_id);

CREATE TABLE password_reset_requests (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id          INTEGER NOT NULL REFERENCES realms(id),
  user_id           INTEGER NOT NULL REFERENCES users(id),
  confirmation_key  TEXT    NOT NULL UNIQUE,
  created_at        INTEGER NOT NULL,                 -- UNIX seconds
  status            INTEGER NOT NULL DEFAULT 0        -- 0 pending, 1 used, 2 revoked
);
CREATE INDEX password_reset_requests_user ON password_reset_requests(user_id, status);
`,
};
