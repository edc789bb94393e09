/** SQL for outgoing-webhook calls waiting to be made (migration 0024). */
import type { DB } from './db.js';

export type OutgoingWebhookCallRow = {
  message_id: number;
  bot_id: number;
  realm_id: number;
  trigger: 'mention' | 'direct_message';
  created_at: number;
};

export function outgoingWebhookStatements(db: DB) {
  const insert = db.prepare<OutgoingWebhookCallRow, void>(
    `INSERT OR IGNORE INTO outgoing_webhook_calls (message_id, bot_id, realm_id, trigger, created_at)
     VALUES (@message_id, @bot_id, @realm_id, @trigger, @created_at)`,
  );
  const oldest = db.prepare<[string, number], OutgoingWebhookCallRow>(
    `SELECT * FROM outgoing_webhook_calls
     WHERE bot_id NOT IN (SELECT value FROM json_each(?))
     ORDER BY created_at, message_id, bot_id LIMIT ?`,
  );
  const remove = db.prepare<[number, number], void>(
    'DELETE FROM outgoing_webhook_calls WHERE message_id = ? AND bot_id = ?',
  );
  const count = db.prepare<[], number>('SELECT count(*) FROM outgoing_webhook_calls').pluck();
  return {
    insert: (row: OutgoingWebhookCallRow): boolean => insert.run(row).changes > 0,
    /** The calls waiting longest first, but none of the bots in `except`. */
    oldest: (limit: number, except: readonly number[] = []): OutgoingWebhookCallRow[] =>
      oldest.all(JSON.stringify(except), limit),
    remove: (messageId: number, botId: number): boolean => remove.run(messageId, botId).changes > 0,
    count: (): number => count.get() ?? 0,
  };
}
