/** SQL for presence, user status, saved snippets, code playgrounds and new-user defaults. */
import type { DB } from './db.js';

export type PresenceRow = {
  user_id: number;
  realm_id: number;
  last_active_time: number | null;
  last_connected_time: number;
  last_update_id: number;
};

export function presenceStatements(db: DB) {
  const byRealm = db.prepare<[number], PresenceRow>(
    'SELECT * FROM user_presence WHERE realm_id = ?',
  );
  const upsert = db.prepare<[number, number, number | null, number, number], void>(
    `INSERT INTO user_presence (user_id, realm_id, last_active_time, last_connected_time, last_update_id)
     VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET last_active_time = excluded.last_active_time,
       last_connected_time = excluded.last_connected_time, last_update_id = excluded.last_update_id`,
  );
  return {
    /** Every stored presence of a realm (read once, when the realm's presence is first used). */
    byRealm: (realmId: number): PresenceRow[] => byRealm.all(realmId),
    /** Writes rows (caller holds the transaction). */
    upsertMany(rows: readonly PresenceRow[]): void {
      for (const r of rows)
        upsert.run(
          r.user_id,
          r.realm_id,
          r.last_active_time,
          r.last_connected_time,
          r.last_update_id,
        );
    },
  };
}

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

export type SavedSnippetRow = {
  id: number;
  user_id: number;
  title: string;
  content: string;
  date_created: number;
};

export function savedSnippetStatements(db: DB) {
  const byUser = db.prepare<[number], SavedSnippetRow>(
    'SELECT id, user_id, title, content, date_created FROM saved_snippets WHERE user_id = ? ORDER BY id',
  );
  const byId = db.prepare<[number, number], SavedSnippetRow>(
    'SELECT id, user_id, title, content, date_created FROM saved_snippets WHERE user_id = ? AND id = ?',
  );
  const insert = db.prepare<[number, number, string, string, number], void>(
    'INSERT INTO saved_snippets (realm_id, user_id, title, content, date_created) VALUES (?, ?, ?, ?, ?)',
  );
  const update = db.prepare<[string, string, number], void>(
    'UPDATE saved_snippets SET title = ?, content = ? WHERE id = ?',
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM saved_snippets WHERE user_id = ? AND id = ?',
  );
  return {
    /** A user's snippets, oldest first. */
    byUser: (userId: number): SavedSnippetRow[] => byUser.all(userId),
    byId: (userId: number, id: number): SavedSnippetRow | undefined => byId.get(userId, id),
    insert: (realmId: number, userId: number, title: string, content: string, now: number) =>
      Number(insert.run(realmId, userId, title, content, now).lastInsertRowid),
    update: (id: number, title: string, content: string): void =>
      void update.run(title, content, id),
    remove: (userId: number, id: number): boolean => remove.run(userId, id).changes > 0,
  };
}

export type PlaygroundRow = {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
};

export function playgroundStatements(db: DB) {
  const byRealm = db.prepare<[number], PlaygroundRow>(
    'SELECT id, name, pygments_language, url_template FROM realm_playgrounds WHERE realm_id = ? ORDER BY id',
  );
  const exists = db
    .prepare<[number, string, string], number>(
      'SELECT 1 FROM realm_playgrounds WHERE realm_id = ? AND pygments_language = ? AND name = ?',
    )
    .pluck();
  const insert = db.prepare<[number, string, string, string], void>(
    'INSERT INTO realm_playgrounds (realm_id, name, pygments_language, url_template) VALUES (?, ?, ?, ?)',
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM realm_playgrounds WHERE realm_id = ? AND id = ?',
  );
  return {
    byRealm: (realmId: number): PlaygroundRow[] => byRealm.all(realmId),
    exists: (realmId: number, language: string, name: string): boolean =>
      exists.get(realmId, language, name) !== undefined,
    insert: (realmId: number, p: Omit<PlaygroundRow, 'id'>): number =>
      Number(insert.run(realmId, p.name, p.pygments_language, p.url_template).lastInsertRowid),
    remove: (realmId: number, id: number): boolean => remove.run(realmId, id).changes > 0,
  };
}

export function realmUserDefaultsStatements(db: DB) {
  const get = db
    .prepare<[number], string>('SELECT settings FROM realm_user_defaults WHERE realm_id = ?')
    .pluck();
  const put = db.prepare<[number, string], void>(
    `INSERT INTO realm_user_defaults (realm_id, settings) VALUES (?, ?)
     ON CONFLICT (realm_id) DO UPDATE SET settings = excluded.settings`,
  );
  return {
    /** The realm's stored defaults (only those that differ from the server's), as JSON text. */
    get: (realmId: number): string => get.get(realmId) ?? '{}',
    put: (realmId: number, settingsJson: string): void => void put.run(realmId, settingsJson),
  };
}
