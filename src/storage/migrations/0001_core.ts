/**
 * Realms, users and user groups: what every other table refers to.
 *
 * Conventions for every migration:
 * - timestamps are INTEGER UNIX seconds unless the column name ends in _ms;
 * - booleans are INTEGER 0/1;
 * - settings that are read as a whole and never queried by value live in a JSON `settings` column
 *   holding only the values that differ from the defaults in code (src/lib/*-settings.ts), so a new
 *   setting needs no migration.
 */
export const m0001_core = {
  name: '0001_core',
  sql: `
CREATE TABLE realms (
  id            INTEGER PRIMARY KEY,
  string_id     TEXT    NOT NULL UNIQUE,          -- subdomain; '' is the root domain's realm
  name          TEXT    NOT NULL,
  description   TEXT    NOT NULL DEFAULT '',
  date_created  INTEGER NOT NULL,
  deactivated   INTEGER NOT NULL DEFAULT 0,
  settings      TEXT    NOT NULL DEFAULT '{}'
);

CREATE TABLE users (
  id                INTEGER PRIMARY KEY,
  realm_id          INTEGER NOT NULL REFERENCES realms(id),
  email             TEXT    NOT NULL,             -- the address other users see
  delivery_email    TEXT    NOT NULL,             -- the real address; unique per realm
  full_name         TEXT    NOT NULL,
  password_hash     TEXT,                         -- NULL: password login disabled for this account
  api_key           TEXT    NOT NULL UNIQUE,
  role              INTEGER NOT NULL DEFAULT 400,
  is_active         INTEGER NOT NULL DEFAULT 1,
  is_bot            INTEGER NOT NULL DEFAULT 0,
  bot_type          INTEGER,
  bot_owner_id      INTEGER REFERENCES users(id),
  is_billing_admin  INTEGER NOT NULL DEFAULT 0,
  can_create_users  INTEGER NOT NULL DEFAULT 0,
  date_joined       INTEGER NOT NULL,
  timezone          TEXT    NOT NULL DEFAULT '',
  avatar_source     TEXT    NOT NULL DEFAULT 'G',  -- 'G' external avatar host, 'U' uploaded
  avatar_version    INTEGER NOT NULL DEFAULT 1,
  settings          TEXT    NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX users_realm_delivery_email ON users(realm_id, delivery_email COLLATE NOCASE);
CREATE INDEX users_realm ON users(realm_id);

-- Named user groups, system groups (role:*) included. Group-setting values that are not a single
-- named group are stored inline as JSON {direct_members, direct_subgroups} where they are used.
CREATE TABLE user_groups (
  id               INTEGER PRIMARY KEY,
  realm_id         INTEGER NOT NULL REFERENCES realms(id),
  name             TEXT    NOT NULL,
  description      TEXT    NOT NULL DEFAULT '',
  is_system_group  INTEGER NOT NULL DEFAULT 0,
  creator_id       INTEGER REFERENCES users(id),
  date_created     INTEGER,
  deactivated      INTEGER NOT NULL DEFAULT 0,
  settings         TEXT    NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX user_groups_realm_name ON user_groups(realm_id, name);

CREATE TABLE user_group_members (
  group_id  INTEGER NOT NULL REFERENCES user_groups(id),
  user_id   INTEGER NOT NULL REFERENCES users(id),
  PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX user_group_members_user ON user_group_members(user_id);

CREATE TABLE user_group_subgroups (
  group_id     INTEGER NOT NULL REFERENCES user_groups(id),
  subgroup_id  INTEGER NOT NULL REFERENCES user_groups(id),
  PRIMARY KEY (group_id, subgroup_id)
) WITHOUT ROWID;
CREATE INDEX user_group_subgroups_sub ON user_group_subgroups(subgroup_id);

CREATE TABLE custom_profile_fields (
  id                          INTEGER PRIMARY KEY,
  realm_id                    INTEGER NOT NULL REFERENCES realms(id),
  name                        TEXT    NOT NULL,
  hint                        TEXT    NOT NULL DEFAULT '',
  type                        INTEGER NOT NULL,   -- 1 short text ... 8 pronouns
  field_data                  TEXT    NOT NULL DEFAULT '',
  sort_order                  INTEGER NOT NULL,
  display_in_profile_summary  INTEGER NOT NULL DEFAULT 0,
  required                    INTEGER NOT NULL DEFAULT 0,
  editable_by_user            INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX custom_profile_fields_realm_name ON custom_profile_fields(realm_id, name);

CREATE TABLE custom_profile_field_values (
  user_id         INTEGER NOT NULL REFERENCES users(id),
  field_id        INTEGER NOT NULL REFERENCES custom_profile_fields(id),
  value           TEXT    NOT NULL,
  rendered_value  TEXT,
  PRIMARY KEY (user_id, field_id)
) WITHOUT ROWID;
`,
};
