/**
 * Linkifiers: a realm's patterns that turn matching text in messages and topics into links.
 * `sort_order` is the processing order (new ones last; reorderable), ties broken by id.
 * (0003 is the channels migration, built on another branch; the two are independent.)
 */
export const m0004_linkifiers = {
  name: '0004_linkifiers',
  sql: `
CREATE TABLE linkifiers (
  id            INTEGER PRIMARY KEY,
  realm_id      INTEGER NOT NULL REFERENCES realms(id),
  pattern       TEXT    NOT NULL,
  url_template  TEXT    NOT NULL,
  sort_order    INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX linkifiers_realm_pattern ON linkifiers(realm_id, pattern);
CREATE INDEX linkifiers_realm_order ON linkifiers(realm_id, sort_order, id);
`,
};
