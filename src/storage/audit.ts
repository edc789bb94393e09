/** SQL for the audit log (migration 0026; src/lib/audit.ts says what goes in it). */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type AuditRow = {
  id: number;
  realm_id: number | null;
  event_time: number;
  event_type: string;
  acting_user_id: number | null;
  modified_user_id: number | null;
  modified_channel_id: number | null;
  modified_group_id: number | null;
  via: string;
  address: string | null;
  user_agent: string | null;
  os_user: string | null;
  /** JSON object. */
  extra: string;
};

export type NewAuditRow = Omit<AuditRow, 'id'>;

/** Which rows to list: a realm's (or the server's, realm_id null), newest first. */
export type AuditQuery = {
  realmId: number | null;
  /** Rows with an id below this one (the next page). */
  before?: number;
  eventType?: string;
  /** Rows acted by or on this user. */
  userId?: number;
  limit: number;
};

export function auditStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<[NewAuditRow & { id: number | null }], void>(
    `INSERT INTO audit_log (id, realm_id, event_time, event_type, acting_user_id, modified_user_id,
       modified_channel_id, modified_group_id, via, address, user_agent, os_user, extra)
     VALUES (@id, @realm_id, @event_time, @event_type, @acting_user_id, @modified_user_id,
       @modified_channel_id, @modified_group_id, @via, @address, @user_agent, @os_user, @extra)`,
  );
  const list = db.prepare<
    {
      realm_id: number | null;
      before: number;
      event_type: string | null;
      user_id: number | null;
      limit: number;
    },
    AuditRow
  >(
    `SELECT * FROM audit_log
     WHERE realm_id IS @realm_id AND id < @before
       AND (@event_type IS NULL OR event_type = @event_type)
       AND (@user_id IS NULL OR acting_user_id = @user_id OR modified_user_id = @user_id)
     ORDER BY id DESC LIMIT @limit`,
  );
  return {
    insert: (row: NewAuditRow): number =>
      Number(insert.run({ ...row, id: ids.nextId('audit_log') }).lastInsertRowid),
    list: (q: AuditQuery): AuditRow[] =>
      list.all({
        realm_id: q.realmId,
        before: q.before ?? Number.MAX_SAFE_INTEGER,
        event_type: q.eventType ?? null,
        user_id: q.userId ?? null,
        limit: q.limit,
      }),
  };
}

export type AuditStatements = ReturnType<typeof auditStatements>;
