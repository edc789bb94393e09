/**
 * Scheduled messages (POST/GET /scheduled_messages, PATCH/DELETE /scheduled_messages/{id}) and,
 * on the same rows, reminders.
 *
 * - `type` is the addressing as the API shows it: 'stream' (with `stream_id` and `topic`) or
 *   'private' (with `user_ids`: the recipients as the API's `to` lists them — the other
 *   participants, or the sender alone for a note to self — ascending, comma-separated).
 * - `rendered_content` is the rendering when scheduled or last edited (shown by the API); the
 *   message is rendered again when it is delivered, as the realm is then.
 * - `scheduled_timestamp` is UNIX seconds. A row is due when it is neither delivered nor failed
 *   and its time has come; `scheduled_messages_due` finds the earliest one.
 * - Delivered rows stay (with the sent message's id), as the reference keeps them: an edit of a
 *   delivered message is refused as "already sent" rather than "does not exist".
 * - `delivery_type` 1 = send later (scheduled message), 2 = reminder (reminder_target_message_id
 *   and reminder_note then describe it).
 */
export const m0011_scheduled_messages = {
  name: '0011_scheduled_messages',
  sql: `
CREATE TABLE scheduled_messages (
  id                         INTEGER PRIMARY KEY,
  realm_id                   INTEGER NOT NULL REFERENCES realms(id),
  sender_id                  INTEGER NOT NULL REFERENCES users(id),
  type                       TEXT    NOT NULL CHECK (type IN ('stream', 'private')),
  stream_id                  INTEGER,
  user_ids                   TEXT    NOT NULL DEFAULT '',
  topic                      TEXT    NOT NULL DEFAULT '',
  content                    TEXT    NOT NULL,
  rendered_content           TEXT    NOT NULL,
  scheduled_timestamp        INTEGER NOT NULL,
  read_by_sender             INTEGER NOT NULL DEFAULT 0,
  sending_client             TEXT    NOT NULL DEFAULT '',
  delivery_type              INTEGER NOT NULL DEFAULT 1,
  reminder_target_message_id INTEGER,
  reminder_note              TEXT,
  failed                     INTEGER NOT NULL DEFAULT 0,
  failure_message            TEXT,
  delivered                  INTEGER NOT NULL DEFAULT 0,
  delivered_message_id       INTEGER,
  CHECK ((type = 'stream') = (stream_id IS NOT NULL))
);
CREATE INDEX scheduled_messages_sender ON scheduled_messages(sender_id, delivery_type, scheduled_timestamp, id)
  WHERE delivered = 0;
CREATE INDEX scheduled_messages_due ON scheduled_messages(scheduled_timestamp, id)
  WHERE delivered = 0 AND failed = 0;
`,
};
