/**
 * The local ids of recent sends (a client's `queue_id` and `local_id` pair for a message): a send
 * asked again with the same pair and the same message — a client's retry after an unclear failure,
 * the first attempt having been stored after all — is answered with the first's id instead of
 * storing the message twice (src/mutations/messages.ts `sendMessageOnce`). `digest` is the first
 * send's destination and content; rows older than an hour go as new ones come.
 */
export const m0029_sent_local_ids = {
  name: '0029_sent_local_ids',
  sql: `
CREATE TABLE sent_local_ids (
  sender_id   INTEGER NOT NULL,
  queue_id    TEXT NOT NULL,
  local_id    TEXT NOT NULL,
  message_id  INTEGER NOT NULL,
  digest      TEXT NOT NULL,
  sent_at     INTEGER NOT NULL,
  PRIMARY KEY (sender_id, queue_id, local_id)
) WITHOUT ROWID;
CREATE INDEX sent_local_ids_sent_at ON sent_local_ids(sent_at);
`,
};
