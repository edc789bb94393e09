/** SQL for emoji reactions to messages. */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type ReactionRow = {
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
};

export function reactionStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<[number | null, number, number, string, string, string], void>(
    `INSERT INTO reactions (id, message_id, user_id, emoji_name, emoji_code, reaction_type)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const remove = db.prepare<[number, number, string, string], void>(
    `DELETE FROM reactions
     WHERE message_id = ? AND user_id = ? AND reaction_type = ? AND emoji_code = ?`,
  );
  const find = db.prepare<[number, number, string, string], ReactionRow>(
    `SELECT message_id, user_id, emoji_name, emoji_code, reaction_type FROM reactions
     WHERE message_id = ? AND user_id = ? AND reaction_type = ? AND emoji_code = ?`,
  );
  const firstForEmoji = db.prepare<[number, string, string], ReactionRow>(
    `SELECT message_id, user_id, emoji_name, emoji_code, reaction_type FROM reactions
     WHERE message_id = ? AND reaction_type = ? AND emoji_code = ? ORDER BY id LIMIT 1`,
  );
  const ofMessages = db.prepare<[string], ReactionRow>(
    `SELECT message_id, user_id, emoji_name, emoji_code, reaction_type FROM reactions
     WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  return {
    add: (r: ReactionRow): void =>
      void insert.run(
        ids.nextId('reactions'),
        r.message_id,
        r.user_id,
        r.emoji_name,
        r.emoji_code,
        r.reaction_type,
      ),
    /** Removes one user's reaction; whether there was one. */
    remove: (messageId: number, userId: number, type: string, code: string): boolean =>
      remove.run(messageId, userId, type, code).changes > 0,
    find: (
      messageId: number,
      userId: number,
      type: string,
      code: string,
    ): ReactionRow | undefined => find.get(messageId, userId, type, code),
    /** The earliest reaction to a message with this emoji (anyone's). */
    firstForEmoji: (messageId: number, type: string, code: string): ReactionRow | undefined =>
      firstForEmoji.get(messageId, type, code),
    /** Every reaction to these messages, oldest first. */
    ofMessages: (ids: readonly number[]): ReactionRow[] =>
      ids.length === 0 ? [] : ofMessages.all(JSON.stringify(ids)),
  };
}
export type ReactionStatements = ReturnType<typeof reactionStatements>;
