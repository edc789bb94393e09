/**
 * The audit log (the reference's RealmAuditLog): one row per administrative action, by the API or
 * the admin tool — when (`event_time`, UNIX seconds), what (`event_type`, `extra` as JSON: the
 * action's parameters without secrets), who (`acting_user_id` for an API user; the admin tool's
 * operating-system user in `os_user`), on whom or what (`modified_*`), and from where (`via`:
 * `api`, `admin_tool` or `server`; the client's `address` and `user_agent` for the API). Rows of
 * realm actions are written in the action's own transaction; `realm_id` is null for actions on
 * the whole server (backup, restore). No foreign keys on users or channels: the history outlives
 * them.
 */
export const m0026_audit_log = {
  name: '0026_audit_log',
  sql: `
CREATE TABLE audit_log (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id             INTEGER REFERENCES realms(id),
  event_time           INTEGER NOT NULL,
  event_type           TEXT NOT NULL,
  acting_user_id       INTEGER,
  modified_user_id     INTEGER,
  modified_channel_id  INTEGER,
  modified_group_id    INTEGER,
  via                  TEXT NOT NULL,
  address              TEXT,
  user_agent           TEXT,
  os_user              TEXT,
  extra                TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_by_realm ON audit_log(realm_id, id);
`,
};
