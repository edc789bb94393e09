/** SQL for missed-message mail waiting for its batch (migration 0023), and the reads it needs. */
import type { DB } from './db.js';
import type { FetchedMessageRow, MessageRow } from './messages.js';
import type { UnreadStatements } from './unread.js';

export type MissedMessageRow = {
  user_id: number;
  message_id: number;
  realm_id: number;
  trigger: string;
  mentioned_user_group_id: number | null;
  scheduled_at: number;
};

export function missedMessageStatements(db: DB, unreadIndex: UnreadStatements) {
  const insert = db.prepare<MissedMessageRow, void>(
    `INSERT OR IGNORE INTO missed_message_emails
       (user_id, message_id, realm_id, trigger, mentioned_user_group_id, scheduled_at)
     VALUES (@user_id, @message_id, @realm_id, @trigger, @mentioned_user_group_id, @scheduled_at)`,
  );
  const pending = db.prepare<[number], { n: number; due: number | null }>(
    'SELECT count(*) AS n, min(scheduled_at) AS due FROM missed_message_emails WHERE user_id = ?',
  );
  const dueUsers = db.prepare<[number, number], { realm_id: number; user_id: number }>(
    `SELECT realm_id, user_id FROM missed_message_emails WHERE scheduled_at <= ?
     GROUP BY user_id ORDER BY min(scheduled_at), user_id LIMIT ?`,
  );
  const ofUser = db.prepare<[number], MissedMessageRow>(
    'SELECT * FROM missed_message_emails WHERE user_id = ? ORDER BY message_id',
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM missed_message_emails WHERE user_id = ? AND message_id = ?',
  );
  const nextDue = db
    .prepare<[], number | null>('SELECT min(scheduled_at) FROM missed_message_emails')
    .pluck();
  const count = db.prepare<[], number>('SELECT count(*) FROM missed_message_emails').pluck();
  // Unread messages the user got since `date_sent`, not mailed about yet (newest first), in the
  // unread index's two parts (./unread.ts): above the watermark a short range of the user's
  // user_messages rows, at or below it their unread rows in unread_messages, so the user's read
  // rows are never walked (all of them were, before the index left user_messages, when few were
  // unread since the time).
  type Since = { user: number; watermark: number; since: number; limit: number };
  const unreadSinceAbove = db.prepare<[Since], FetchedMessageRow>(
    `SELECT m.*, um.flags AS flags FROM user_messages um JOIN messages m ON m.id = um.message_id
     WHERE um.user_id = @user AND um.message_id > @watermark AND (um.flags & 2049) = 0
       AND m.date_sent >= @since
     ORDER BY um.message_id DESC LIMIT @limit`,
  );
  const unreadSinceBelow = db.prepare<[Since], FetchedMessageRow>(
    `SELECT m.*, um.flags AS flags FROM unread_messages u
     CROSS JOIN user_messages um ON um.user_id = u.user_id AND um.message_id = u.message_id
     CROSS JOIN messages m ON m.id = u.message_id
     WHERE u.user_id = @user AND u.message_id <= @watermark AND (um.flags & 2049) = 0
       AND m.date_sent >= @since
     ORDER BY u.message_id DESC LIMIT @limit`,
  );
  // The messages of a topic the user got just before one (the reference's get_context_for_message).
  const topicContext = db.prepare<[number, number, string, number, number, number], MessageRow>(
    `SELECT m.* FROM messages m JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?
     WHERE m.stream_id = ? AND m.topic = ? COLLATE NOCASE AND m.id < ? AND m.date_sent > ?
     ORDER BY m.id DESC LIMIT ?`,
  );
  // Active human accounts with this address in active realms (the subject names the realm then).
  const accountsOf = db
    .prepare<[string], number>(
      `SELECT count(*) FROM users u JOIN realms r ON r.id = u.realm_id
       WHERE u.delivery_email = ? COLLATE NOCASE AND u.is_active = 1 AND u.is_bot = 0
         AND r.deactivated = 0`,
    )
    .pluck();

  return {
    /** Schedules a message for a user's batch; false when it already was. */
    insert: (row: MissedMessageRow): boolean => insert.run(row).changes > 0,
    /** How many messages wait for the user's batch, and when it is due (null: none waits). */
    pendingOf: (userId: number): { n: number; due: number | null } =>
      pending.get(userId) ?? { n: 0, due: null },
    /** Users with a batch due at `now` (UNIX seconds), the longest waiting first. */
    dueUsers: (now: number, limit: number): { realm_id: number; user_id: number }[] =>
      dueUsers.all(now, limit),
    /** Every message waiting for the user's batch. */
    ofUser: (userId: number): MissedMessageRow[] => ofUser.all(userId),
    /** Takes a message out of the user's batch; false when it was not (or no longer) in it. */
    remove: (userId: number, messageId: number): boolean =>
      remove.run(userId, messageId).changes > 0,
    /** When the next batch falls due (UNIX seconds); null when none waits. */
    nextDue: (): number | null => nextDue.get() ?? null,
    count: (): number => count.get() ?? 0,
    /** The user's unread messages sent at or after `since` (UNIX seconds), not yet mailed. */
    unreadSince(userId: number, since: number, limit: number): FetchedMessageRow[] {
      const watermark = unreadIndex.watermark();
      const above = unreadSinceAbove.all({ user: userId, watermark, since, limit });
      if (above.length >= limit) return above;
      const below = unreadSinceBelow.all({
        user: userId,
        watermark,
        since,
        limit: limit - above.length,
      });
      return below.length === 0 ? above : above.concat(below);
    },
    /** Up to `limit` messages of the topic the user got before `before` and after `after`. */
    topicContext: (
      userId: number,
      streamId: number,
      topic: string,
      before: number,
      after: number,
      limit: number,
    ): MessageRow[] => topicContext.all(userId, streamId, topic, before, after, limit),
    /** How many active human accounts in active realms have this address. */
    accountsOf: (deliveryEmail: string): number => accountsOf.get(deliveryEmail) ?? 0,
  };
}
export type MissedMessageStatements = ReturnType<typeof missedMessageStatements>;
