/** SQL for submessages: the events of a widget message (see migrations/0031_submessages.ts). */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type SubmessageRow = {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
};

const COLUMNS = 'id, message_id, sender_id, msg_type, content';

export function submessageStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<[number | null, number, number, string, string], void>(
    `INSERT INTO submessages (id, message_id, sender_id, msg_type, content) VALUES (?, ?, ?, ?, ?)`,
  );
  const ofMessages = db.prepare<[string], SubmessageRow>(
    `SELECT ${COLUMNS} FROM submessages
     WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  const firstWidget = db.prepare<[number], SubmessageRow>(
    `SELECT ${COLUMNS} FROM submessages WHERE message_id = ? AND msg_type = 'widget'
     ORDER BY id LIMIT 1`,
  );
  const count = db.prepare<[number], { n: number }>(
    'SELECT COUNT(*) AS n FROM submessages WHERE message_id = ?',
  );
  return {
    /** Adds a submessage; its id. */
    add(r: Omit<SubmessageRow, 'id'>): number {
      const info = insert.run(
        ids.nextId('submessages'),
        r.message_id,
        r.sender_id,
        r.msg_type,
        r.content,
      );
      return Number(info.lastInsertRowid);
    },
    /** Every submessage of these messages, oldest first. */
    ofMessages: (messageIds: readonly number[]): SubmessageRow[] =>
      messageIds.length === 0 ? [] : ofMessages.all(JSON.stringify(messageIds)),
    /** The message's first submessage of msg_type `widget` (what the widget is). */
    widget: (messageId: number): SubmessageRow | undefined => firstWidget.get(messageId),
    /** How many submessages the message has. */
    count: (messageId: number): number => count.get(messageId)!.n,
  };
}
export type SubmessageStatements = ReturnType<typeof submessageStatements>;
