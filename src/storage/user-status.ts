/** SQL for user status (user_status). */
import type { DB } from './db.js';

export type UserStatusRow = {
  user_id: number;
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
};

export function userStatusStatements(db: DB) {
  const byUser = db.prepare<[number], UserStatusRow>(
    `SELECT user_id, status_text, emoji_name, emoji_code, reaction_type FROM user_status
     WHERE user_id = ?`,
  );
  const byRealm = db.prepare<[number], UserStatusRow>(
    `SELECT user_id, status_text, emoji_name, emoji_code, reaction_type FROM user_status
     WHERE realm_id = ? AND (status_text != '' OR emoji_name != '')`,
  );
  const upsert = db.prepare<[number, number, string, string, string, string, number], void>(
    `INSERT INTO user_status (user_id, realm_id, status_text, emoji_name, emoji_code, reaction_type, timestamp)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET status_text = excluded.status_text,
       emoji_name = excluded.emoji_name, emoji_code = excluded.emoji_code,
       reaction_type = excluded.reaction_type, timestamp = excluded.timestamp`,
  );
  return {
    byUser: (userId: number): UserStatusRow | undefined => byUser.get(userId),
    /** Statuses with text or an emoji set. */
    byRealm: (realmId: number): UserStatusRow[] => byRealm.all(realmId),
    put: (realmId: number, s: UserStatusRow, now: number): void =>
      void upsert.run(
        s.user_id,
        realmId,
        s.status_text,
        s.emoji_name,
        s.emoji_code,
        s.reaction_type,
        now,
      ),
  };
}
