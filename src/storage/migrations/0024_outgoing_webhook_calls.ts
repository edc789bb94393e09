/**
 * Outgoing-webhook calls waiting to be made (docs/integrations.md "Outgoing webhooks"): one row per
 * message and outgoing-webhook bot it triggers, written in the send's own transaction, removed
 * (through the realm actor) once the call is done — answered, replied to, or given up with a
 * notice to the bot's owner. A restart loses nothing: what is left is called after the next start,
 * unless it has grown too old. A deleted message takes its calls with it.
 */
export const m0024_outgoing_webhook_calls = {
  name: '0024_outgoing_webhook_calls',
  sql: `
CREATE TABLE outgoing_webhook_calls (
  message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  bot_id      INTEGER NOT NULL REFERENCES users(id),
  realm_id    INTEGER NOT NULL REFERENCES realms(id),
  trigger     TEXT    NOT NULL,              -- mention | direct_message
  created_at  INTEGER NOT NULL,              -- UNIX seconds
  PRIMARY KEY (message_id, bot_id)
) WITHOUT ROWID;
CREATE INDEX outgoing_webhook_calls_age ON outgoing_webhook_calls(created_at, message_id);
`,
};
