/**
 * Realm exports requested through the API (POST /export/realm): one row per export, as the
 * reference's RealmExport. `status`: 1 requested, 2 started, 3 succeeded, 4 failed, 5 deleted.
 * Times are UNIX seconds with a fraction (the API reports them so). `export_path` is the
 * archive's place under DATA_DIR/exports (`<realm id>/<secret>/<file name>`), set on success.
 * (Numbered 0017 on its branch; migrations of other branches may come before it.)
 */
export const m0017_realm_exports = {
  name: '0017_realm_exports',
  sql: `
CREATE TABLE realm_exports (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id        INTEGER NOT NULL REFERENCES realms(id),
  acting_user_id  INTEGER REFERENCES users(id),
  export_type     INTEGER NOT NULL,
  status          INTEGER NOT NULL DEFAULT 1,
  date_requested  REAL    NOT NULL,
  date_started    REAL,
  date_succeeded  REAL,
  date_failed     REAL,
  date_deleted    REAL,
  export_path     TEXT,
  size            INTEGER
);
CREATE INDEX realm_exports_realm ON realm_exports(realm_id, id);
`,
};
