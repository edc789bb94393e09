/**
 * The notification bot in every realm, and message types.
 *
 * - Every realm has its notification bot from creation (src/mutations/realms.ts); realms created
 *   before that get it here (those whose bot an earlier version created on first use keep theirs):
 *   a default bot (bot_type 1), member role, direct member of role:members and role:fullmembers,
 *   with the realm's defaults for new users and a fresh API key nobody is told.
 * - `messages.type` is the reference's Message.MessageType: 1 a normal message, 2 a notice that a
 *   topic was (un)resolved (undoing within the grace period deletes it instead of adding another;
 *   src/lib/notices.ts).
 */
export const m0015_notification_bot = {
  name: '0015_notification_bot',
  sql: `
ALTER TABLE messages ADD COLUMN type INTEGER NOT NULL DEFAULT 1;

INSERT INTO users (realm_id, email, delivery_email, full_name, password_hash, api_key, role,
                   is_active, is_bot, bot_type, date_joined, settings)
SELECT r.id, 'notification-bot@zulip.com', 'notification-bot@zulip.com', 'Notification Bot', NULL,
       lower(hex(randomblob(16))), 400, 1, 1, 1, CAST(strftime('%s', 'now') AS INTEGER),
       COALESCE((SELECT settings FROM realm_user_defaults d WHERE d.realm_id = r.id), '{}')
FROM realms r
WHERE NOT EXISTS (
  SELECT 1 FROM users u
  WHERE u.realm_id = r.id AND u.delivery_email = 'notification-bot@zulip.com' COLLATE NOCASE);

INSERT OR IGNORE INTO user_group_members (group_id, user_id)
SELECT g.id, u.id
FROM users u JOIN user_groups g ON g.realm_id = u.realm_id AND g.is_system_group = 1
  AND g.name IN ('role:members', 'role:fullmembers')
WHERE u.delivery_email = 'notification-bot@zulip.com' AND u.is_bot = 1;
`,
};
