/**
 * Missed-message mail (docs/mail.md "Missed messages"): one row per message a user is to be mailed
 * about, written in the transaction of the send (or edit) that caused it, so that a restart loses
 * nothing scheduled. `scheduled_at` is when the user's batch is due: the first row of a batch is
 * due `email_notifications_batching_period_seconds` after its message, and later rows join it (the
 * reference's ScheduledMessageNotificationEmail). The rows of a user are taken together when the
 * batch is due and become mail in the outbox (mail_outbox) in that same transaction. A deleted
 * message takes its rows with it.
 *
 * `trigger` is the reference's NotificationTriggers value (direct_message, mentioned,
 * topic_wildcard_mentioned, stream_wildcard_mentioned, followed_topic_email_notify,
 * stream_email_notify, and the two wildcard mentions in a followed topic);
 * `mentioned_user_group_id` names the group a mention reached the user through.
 */
export const m0023_missed_message_emails = {
  name: '0023_missed_message_emails',
  sql: `
CREATE TABLE missed_message_emails (
  user_id                  INTEGER NOT NULL REFERENCES users(id),
  message_id               INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  realm_id                 INTEGER NOT NULL REFERENCES realms(id),
  trigger                  TEXT    NOT NULL,
  mentioned_user_group_id  INTEGER,
  scheduled_at             INTEGER NOT NULL,          -- UNIX seconds: the batch is due
  PRIMARY KEY (user_id, message_id)
) WITHOUT ROWID;
CREATE INDEX missed_message_emails_due ON missed_message_emails(scheduled_at, user_id);
CREATE INDEX missed_message_emails_message ON missed_message_emails(message_id);
`,
};
