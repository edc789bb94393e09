/**
 * Submessages: what hangs off a message that is a widget (a poll, a to-do list, a bot's form).
 * The first, of msg_type `widget`, is written with the message and describes the widget
 * (`{"widget_type": …, "extra_data": …}`); each later one is an event of the widget (a vote, a new
 * option, a struck task), sent by whoever acted. `content` is the JSON text as sent; clients fold
 * the rows of a message in id order. Deleted with their message (src/storage/messages.ts).
 */
export const m0031_submessages = {
  name: '0031_submessages',
  sql: `
CREATE TABLE submessages (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id  INTEGER NOT NULL REFERENCES messages(id),
  sender_id   INTEGER NOT NULL REFERENCES users(id),
  msg_type    TEXT    NOT NULL,
  content     TEXT    NOT NULL
);
CREATE INDEX submessages_message ON submessages(message_id, id);
`,
};
