/** SQL for uploaded files (attachments) and the messages that reference them. */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type AttachmentRow = {
  id: number;
  realm_id: number;
  owner_id: number;
  path_id: string;
  file_name: string;
  content_type: string;
  size: number;
  /** UNIX seconds. */
  create_time: number;
};

/** A message referencing an attachment, with what access checks and the API need. */
export type AttachmentMessageRow = {
  attachment_id: number;
  id: number;
  /** UNIX seconds. */
  date_sent: number;
  stream_id: number | null;
};

export function attachmentStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<Omit<AttachmentRow, 'id'> & WithId, void>(
    `INSERT INTO attachments (id, realm_id, owner_id, path_id, file_name, content_type, size, create_time)
     VALUES (@id, @realm_id, @owner_id, @path_id, @file_name, @content_type, @size, @create_time)`,
  );
  const byId = db.prepare<[number], AttachmentRow>('SELECT * FROM attachments WHERE id = ?');
  const byPathId = db.prepare<[string], AttachmentRow>(
    'SELECT * FROM attachments WHERE path_id = ?',
  );
  const byOwner = db.prepare<[number], AttachmentRow>(
    'SELECT * FROM attachments WHERE owner_id = ? ORDER BY id',
  );
  const messagesOfOwner = db.prepare<[number], AttachmentMessageRow>(
    `SELECT am.attachment_id, m.id, m.date_sent, m.stream_id
     FROM attachments a
     JOIN attachment_messages am ON am.attachment_id = a.id
     JOIN messages m ON m.id = am.message_id
     WHERE a.owner_id = ? ORDER BY am.attachment_id, m.id`,
  );
  const messagesOf = db.prepare<[number], AttachmentMessageRow>(
    `SELECT am.attachment_id, m.id, m.date_sent, m.stream_id
     FROM attachment_messages am JOIN messages m ON m.id = am.message_id
     WHERE am.attachment_id = ? ORDER BY m.id`,
  );
  const receivedAny = db
    .prepare<[number, number], number>(
      `SELECT EXISTS (
         SELECT 1 FROM attachment_messages am
         JOIN user_messages um ON um.message_id = am.message_id AND um.user_id = ?
         WHERE am.attachment_id = ?)`,
    )
    .pluck();
  const referencingStreams = db
    .prepare<[number], number>(
      `SELECT DISTINCT m.stream_id FROM attachment_messages am JOIN messages m ON m.id = am.message_id
       WHERE am.attachment_id = ? AND m.stream_id IS NOT NULL`,
    )
    .pluck();
  const spaceUsed = db
    .prepare<[number], number>('SELECT COALESCE(SUM(size), 0) FROM attachments WHERE realm_id = ?')
    .pluck();
  const remove = db.prepare<[number], void>('DELETE FROM attachments WHERE id = ?');
  const link = db.prepare<[number, number], void>(
    'INSERT OR IGNORE INTO attachment_messages (attachment_id, message_id) VALUES (?, ?)',
  );
  const unlink = db.prepare<[number, number], void>(
    'DELETE FROM attachment_messages WHERE attachment_id = ? AND message_id = ?',
  );
  const ofMessage = db.prepare<[number], AttachmentRow>(
    `SELECT a.* FROM attachment_messages am JOIN attachments a ON a.id = am.attachment_id
     WHERE am.message_id = ? ORDER BY a.id`,
  );
  const messageRealm = db
    .prepare<[number], number>('SELECT realm_id FROM messages WHERE id = ?')
    .pluck();
  const isClaimed = db
    .prepare<[number], number>(
      'SELECT EXISTS (SELECT 1 FROM attachment_messages WHERE attachment_id = ?)',
    )
    .pluck();

  return {
    /** Inserts a new attachment; returns its id. */
    insert: (row: Omit<AttachmentRow, 'id'>): number =>
      Number(insert.run({ ...row, id: ids.nextId('attachments') }).lastInsertRowid),
    byId: (id: number): AttachmentRow | undefined => byId.get(id),
    byPathId: (pathId: string): AttachmentRow | undefined => byPathId.get(pathId),
    /** A user's uploads, oldest first. */
    byOwner: (ownerId: number): AttachmentRow[] => byOwner.all(ownerId),
    /** The messages referencing each of a user's uploads (by attachment, then message id). */
    messagesOfOwner: (ownerId: number): AttachmentMessageRow[] => messagesOfOwner.all(ownerId),
    /** The messages referencing one attachment, oldest first. */
    messagesOf: (attachmentId: number): AttachmentMessageRow[] => messagesOf.all(attachmentId),
    /** Whether the user received (has a user_messages row for) a message referencing it. */
    receivedByUser: (attachmentId: number, userId: number): boolean =>
      receivedAny.get(userId, attachmentId) === 1,
    /** The channels of the channel messages referencing it. */
    referencingStreamIds: (attachmentId: number): number[] => referencingStreams.all(attachmentId),
    /** Bytes of every upload of a realm. */
    spaceUsed: (realmId: number): number => spaceUsed.get(realmId) ?? 0,
    /** Deletes an attachment (its message links go with it). */
    remove: (id: number): void => void remove.run(id),
    link: (attachmentId: number, messageId: number): boolean =>
      link.run(attachmentId, messageId).changes > 0,
    unlink: (attachmentId: number, messageId: number): boolean =>
      unlink.run(attachmentId, messageId).changes > 0,
    /** The attachments a message references. */
    ofMessage: (messageId: number): AttachmentRow[] => ofMessage.all(messageId),
    /** The realm of a message (undefined: no such message). */
    messageRealm: (messageId: number): number | undefined => messageRealm.get(messageId),
    /** Whether any message references it. */
    isClaimed: (attachmentId: number): boolean => isClaimed.get(attachmentId) === 1,
  };
}
export type AttachmentStatements = ReturnType<typeof attachmentStatements>;
