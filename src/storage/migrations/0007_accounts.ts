/**
 * Account-level data of the settings and administration area: pending e-mail address changes
 * (PATCH /settings `email`, completed by opening the confirmation link) and mobile push device
 * tokens (POST /users/me/ios_push_device_token, /users/me/android_gcm_reg_id).
 * (0005 and 0006 are the messages and uploads migrations, built on other branches; they go before
 * this one when the branches meet.)
 */
export const m0007_accounts = {
  name: '0007_accounts',
  sql: `
CREATE TABLE email_change_requests (
  id                INTEGER PRIMARY KEY,
  realm_id          INTEGER NOT NULL REFERENCES realms(id),
  user_id           INTEGER NOT NULL REFERENCES users(id),
  old_email         TEXT    NOT NULL,
  new_email         TEXT    NOT NULL,
  confirmation_key  TEXT    NOT NULL UNIQUE,
  created_at        INTEGER NOT NULL,                 -- UNIX seconds
  status            INTEGER NOT NULL DEFAULT 0         -- 0 pending, 1 used, 2 revoked
);
CREATE INDEX email_change_requests_user ON email_change_requests(user_id, status);

CREATE TABLE push_device_tokens (
  id            INTEGER PRIMARY KEY,
  user_id       INTEGER NOT NULL REFERENCES users(id),
  kind          INTEGER NOT NULL,                     -- 1 APNs (iOS), 2 FCM (Android)
  token         TEXT    NOT NULL,
  ios_app_id    TEXT,                                 -- APNs only
  last_updated  INTEGER NOT NULL                      -- UNIX seconds
);
CREATE UNIQUE INDEX push_device_tokens_user_kind_token ON push_device_tokens(user_id, kind, token);
`,
};
