/** SQL for scheduled messages (and reminders, which share the table). */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type ScheduledMessageType = 'stream' | 'private';

/** `delivery_type`: SEND_LATER or REMIND (src/lib/scheduled-messages.ts). */

export type ScheduledMessageRow = {
  id: number;
  realm_id: number;
  sender_id: number;
  type: ScheduledMessageType;
  stream_id: number | null;
  /** Direct-message recipients as `to` lists them, comma-separated ('' for channel messages). */
  user_ids: string;
  topic: string;
  content: string;
  rendered_content: string;
  scheduled_timestamp: number;
  read_by_sender: number;
  sending_client: string;
  delivery_type: number;
  reminder_target_message_id: number | null;
  reminder_note: string | null;
  failed: number;
  failure_message: string | null;
  delivered: number;
  delivered_message_id: number | null;
};

/** What a schedule or an edit sets (everything but the identity and the delivery outcome). */
export type ScheduledMessageValues = Pick<
  ScheduledMessageRow,
  | 'type'
  | 'stream_id'
  | 'user_ids'
  | 'topic'
  | 'content'
  | 'rendered_content'
  | 'scheduled_timestamp'
  | 'read_by_sender'
  | 'sending_client'
>;

export function scheduledMessageStatements(db: DB, ids: IdSource) {
  const byId = db.prepare<[number], ScheduledMessageRow>(
    'SELECT * FROM scheduled_messages WHERE id = ?',
  );
  const pendingBySender = db.prepare<[number, number], ScheduledMessageRow>(
    `SELECT * FROM scheduled_messages
     WHERE sender_id = ? AND delivery_type = ? AND delivered = 0
     ORDER BY scheduled_timestamp, id`,
  );
  const insert = db.prepare<
    [
      number | null,
      number,
      number,
      string,
      number | null,
      string,
      string,
      string,
      string,
      number,
      number,
      string,
      number,
      number | null,
      string | null,
    ],
    void
  >(
    `INSERT INTO scheduled_messages (id, realm_id, sender_id, type, stream_id, user_ids, topic,
       content, rendered_content, scheduled_timestamp, read_by_sender, sending_client,
       delivery_type, reminder_target_message_id, reminder_note)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare<
    [string, number | null, string, string, string, string, number, number, string, number],
    void
  >(
    `UPDATE scheduled_messages SET type = ?, stream_id = ?, user_ids = ?, topic = ?, content = ?,
       rendered_content = ?, scheduled_timestamp = ?, read_by_sender = ?, sending_client = ?,
       failed = 0, failure_message = NULL
     WHERE id = ?`,
  );
  const remove = db.prepare<[number], void>('DELETE FROM scheduled_messages WHERE id = ?');
  const markFailed = db.prepare<[string, number], void>(
    'UPDATE scheduled_messages SET failed = 1, failure_message = ? WHERE id = ?',
  );
  const markDelivered = db.prepare<[number, number], void>(
    'UPDATE scheduled_messages SET delivered = 1, delivered_message_id = ? WHERE id = ?',
  );
  const due = db.prepare<[number, number], ScheduledMessageRow>(
    `SELECT * FROM scheduled_messages INDEXED BY scheduled_messages_due
     WHERE delivered = 0 AND failed = 0 AND scheduled_timestamp <= ?
     ORDER BY scheduled_timestamp, id LIMIT ?`,
  );
  const earliest = db.prepare<[], { t: number | null }>(
    `SELECT MIN(scheduled_timestamp) AS t FROM scheduled_messages INDEXED BY scheduled_messages_due
     WHERE delivered = 0 AND failed = 0`,
  );
  return {
    byId: (id: number): ScheduledMessageRow | undefined => byId.get(id),
    /** A user's undelivered rows of one delivery type (failed ones included), soonest first. */
    pendingBySender: (senderId: number, deliveryType: number): ScheduledMessageRow[] =>
      pendingBySender.all(senderId, deliveryType),
    insert: (
      realmId: number,
      senderId: number,
      deliveryType: number,
      v: ScheduledMessageValues,
      reminder: { target_message_id: number; note: string | null } | null = null,
    ): number =>
      Number(
        insert.run(
          ids.nextId('scheduled_messages'),
          realmId,
          senderId,
          v.type,
          v.stream_id,
          v.user_ids,
          v.topic,
          v.content,
          v.rendered_content,
          v.scheduled_timestamp,
          v.read_by_sender,
          v.sending_client,
          deliveryType,
          reminder?.target_message_id ?? null,
          reminder?.note ?? null,
        ).lastInsertRowid,
      ),
    /** Replaces what an edit may change; clears `failed` (an edited message is tried again). */
    update: (id: number, v: ScheduledMessageValues): void =>
      void update.run(
        v.type,
        v.stream_id,
        v.user_ids,
        v.topic,
        v.content,
        v.rendered_content,
        v.scheduled_timestamp,
        v.read_by_sender,
        v.sending_client,
        id,
      ),
    remove: (id: number): boolean => remove.run(id).changes > 0,
    markFailed: (id: number, message: string): void => void markFailed.run(message, id),
    markDelivered: (id: number, messageId: number): void => void markDelivered.run(messageId, id),
    /** Rows due at `now` (UNIX seconds), every realm, in delivery order. */
    due: (now: number, limit: number): ScheduledMessageRow[] => due.all(now, limit),
    /** The earliest time any row is due, if any is waiting. */
    earliestDue: (): number | null => earliest.get()?.t ?? null,
  };
}
export type ScheduledMessageStatements = ReturnType<typeof scheduledMessageStatements>;
