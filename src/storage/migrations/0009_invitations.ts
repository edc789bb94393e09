/**
 * Invitations to join a realm: e-mail invitations (one address, used once) and reusable
 * invitation links (`multiuse` = 1). Both kinds share this table (so ids are unique across them,
 * which the API's "unique with is_multiuse" allows).
 *
 * - `confirmation_key` is the secret in the invitation's link (`/join/<key>/` for reusable links,
 *   `/accounts/do_confirm/<key>/` for e-mail invitations).
 * - `status`: 0 pending, 1 used (an e-mail invitation that created an account), 2 revoked.
 *   Revoking an e-mail invitation deletes its row, as the reference does; revoking a reusable
 *   link marks it. `expiry_date` NULL never expires; deactivating the inviter sets it to then.
 * - `stream_ids` / `group_ids`: JSON arrays of the channels and user groups a new account joins;
 *   read whole and checked again (archived channels, deactivated groups) when the link is used.
 * (0005–0007 are the messages, uploads and settings migrations, built on other branches.)
 */
export const m0009_invitations = {
  name: '0009_invitations',
  sql: `
CREATE TABLE invitations (
  id                                   INTEGER PRIMARY KEY,
  realm_id                             INTEGER NOT NULL REFERENCES realms(id),
  multiuse                             INTEGER NOT NULL,
  email                                TEXT,
  referred_by                          INTEGER NOT NULL REFERENCES users(id),
  invited_as                           INTEGER NOT NULL,
  invited_at                           INTEGER NOT NULL,
  expiry_date                          INTEGER,
  confirmation_key                     TEXT    NOT NULL UNIQUE,
  status                               INTEGER NOT NULL DEFAULT 0,
  include_realm_default_subscriptions  INTEGER NOT NULL DEFAULT 0,
  notify_referrer_on_join              INTEGER NOT NULL DEFAULT 1,
  welcome_message_custom_text          TEXT,
  stream_ids                           TEXT    NOT NULL DEFAULT '[]',
  group_ids                            TEXT    NOT NULL DEFAULT '[]',
  created_user_id                      INTEGER REFERENCES users(id),
  CHECK ((multiuse = 1) = (email IS NULL))
);
CREATE INDEX invitations_realm ON invitations(realm_id, status, id);
CREATE INDEX invitations_referrer ON invitations(referred_by, status);
CREATE INDEX invitations_email ON invitations(realm_id, email COLLATE NOCASE) WHERE email IS NOT NULL;
`,
};
