/**
 * The unread index (migration 0030): `unread_messages` holds the unread user_messages rows of the
 * messages up to a watermark, kept exact there by triggers; rows above it are found in
 * user_messages itself. A send's transaction so writes no index entry per recipient; `settle`
 * moves the watermark up in a transaction of its own, so a recipient's entries for all the
 * messages since the last one share a page (./unread-settler.ts runs it).
 *
 * Readers take a user's unread messages in two parts, both in message id order: those above the
 * watermark (a range of the user's primary key in user_messages, as long as the messages sent
 * since the last settle) and those at or below it (unread_messages). Every id of the first part is
 * larger than every id of the second, so "newest first, at most N" is the first part then the
 * second, the second only for what the first left of N.
 */
import type { DB } from './db.js';

export function unreadStatements(db: DB) {
  const watermark = db
    .prepare<[], number>('SELECT message_id FROM unread_watermark WHERE id = 1')
    .pluck();
  const boundary = db
    .prepare<[number, number], number>(
      `SELECT message_id FROM user_messages INDEXED BY user_messages_message
       WHERE message_id > ? ORDER BY message_id LIMIT 1 OFFSET ?`,
    )
    .pluck();
  const newest = db.prepare<[], number | null>('SELECT MAX(message_id) FROM user_messages').pluck();
  const settleRows = db.prepare<[number, number], void>(
    `INSERT OR IGNORE INTO unread_messages (user_id, message_id)
     SELECT user_id, message_id FROM user_messages INDEXED BY user_messages_message
     WHERE message_id > ? AND message_id <= ? AND (flags & 1) = 0`,
  );
  const setWatermark = db.prepare<[number], void>(
    'UPDATE unread_watermark SET message_id = ? WHERE id = 1',
  );

  return {
    /** The newest message id whose unread rows are all in unread_messages. */
    watermark: (): number => watermark.get() ?? 0,
    /** The newest message id with user_messages rows (null: none). */
    newest: (): number | null => newest.get() ?? null,
    /** Whether at least `rows` user_messages rows (at least 1) are above the watermark. */
    waiting: (rows: number): boolean =>
      boundary.get(watermark.get() ?? 0, Math.max(0, rows - 1)) !== undefined,
    /**
     * Moves the watermark up over at most about `maxRows` user_messages rows (all the rows of a
     * message, even when one message has more). Call inside a transaction. Returns whether
     * rows are left above the new watermark.
     */
    moveWatermark(maxRows: number): boolean {
      const from = watermark.get() ?? 0;
      let to = boundary.get(from, maxRows);
      const more = to !== undefined;
      if (to === undefined) to = newest.get() ?? from;
      else if (to - 1 > from) to -= 1; // the messages below the boundary's: at most maxRows rows
      if (to <= from) return false;
      settleRows.run(from, to);
      setWatermark.run(to);
      return more;
    },
  };
}
export type UnreadStatements = ReturnType<typeof unreadStatements>;
