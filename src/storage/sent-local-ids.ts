/** SQL for the local ids of recent sends (migration 0029; src/mutations/messages.ts). */
import type { DB } from './db.js';

export type SentLocalId = { message_id: number; digest: string };

export function sentLocalIdStatements(db: DB) {
  const find = db.prepare<[number, string, string], SentLocalId>(
    `SELECT message_id, digest FROM sent_local_ids
     WHERE sender_id = ? AND queue_id = ? AND local_id = ?`,
  );
  const record = db.prepare<[number, string, string, number, string, number], void>(
    `INSERT INTO sent_local_ids (sender_id, queue_id, local_id, message_id, digest, sent_at)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (sender_id, queue_id, local_id) DO UPDATE SET
       message_id = excluded.message_id, digest = excluded.digest, sent_at = excluded.sent_at`,
  );
  const prune = db.prepare<[number], void>('DELETE FROM sent_local_ids WHERE sent_at < ?');
  return {
    find: (senderId: number, queueId: string, localId: string): SentLocalId | undefined =>
      find.get(senderId, queueId, localId),
    /** Records a send's local id, forgetting those recorded before `forgetBefore` (seconds). */
    record: (
      senderId: number,
      queueId: string,
      localId: string,
      messageId: number,
      digest: string,
      now: number,
      forgetBefore: number,
    ): void => {
      prune.run(forgetBefore);
      record.run(senderId, queueId, localId, messageId, digest, now);
    },
  };
}
