/**
 * Drafts synchronized between a user's clients (GET/POST /drafts, PATCH/DELETE /drafts/{id}).
 *
 * - `type` is the draft's addressing as the API shows it: '' (unaddressed), 'stream', 'private'.
 * - A channel draft has `stream_id`; a direct-message draft has `user_ids`, the recipients as the
 *   API's `to` lists them (ascending; the other participants, or the owner alone for a note to
 *   self), comma-separated.
 * - `last_edit_time` is UNIX seconds with a fraction (clients may send one), shown truncated.
 * (0005–0007 are the messages, uploads and settings migrations, built on other branches.)
 */
export const m0008_drafts = {
  name: '0008_drafts',
  sql: `
CREATE TABLE drafts (
  id              INTEGER PRIMARY KEY,
  user_id         INTEGER NOT NULL REFERENCES users(id),
  type            TEXT    NOT NULL CHECK (type IN ('', 'stream', 'private')),
  stream_id       INTEGER,
  user_ids        TEXT    NOT NULL DEFAULT '',
  topic           TEXT    NOT NULL DEFAULT '',
  content         TEXT    NOT NULL,
  last_edit_time  REAL    NOT NULL,
  CHECK ((type = 'stream') = (stream_id IS NOT NULL))
);
CREATE INDEX drafts_user_edit ON drafts(user_id, last_edit_time, id);
`,
};
